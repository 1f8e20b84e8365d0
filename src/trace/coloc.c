/* coloc.c: reads colocate_info.csv and answers "how fast does job a run beside job b" per job pair. */
#include "deepshare/coloc.h"
#include "deepshare/csv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int ds_coloc_read(ds_coloc_t *c, const char *path, ds_error_t *err)
{
    memset(c, 0, sizeof *c);
    c->missing_rho = 1.0;
    ds_csv_t f;
    int rc = ds_csv_open_header(&f, path, NULL, err);
    if (rc) return rc;
    static const char *const names[] = {"model1", "dataset1", "batchsize1", "amp1", "speed1", "model2", "dataset2",
                                        "batchsize2", "amp2", "speed2", "gpu_util", "gmem_util", "gmem"};
    int col[13];
    if ((rc = ds_csv_require(&f, names, 13, col, err))) return rc;
    int ncols = f.nfields, cap = 0, tcol = ds_csv_col(&f, "gpu_type");
    while ((rc = ds_csv_row(&f, ncols, err)) > 0) {
        if (c->npairs == 100000) { /* the lookup is quadratic in workloads: bound the pairs */
            ds_error_set(err, path, f.line, NULL, "more than 100000 profiled pairs");
            rc = DS_EPARSE;
            break;
        }
        if (c->npairs == cap) {
            cap = cap ? cap * 2 : 256;
            c->pairs = ds_xrealloc(c->pairs, (size_t)cap * sizeof *c->pairs);
        }
        ds_coloc_pair_t *p = &c->pairs[c->npairs];
        int64_t v;
        if ((rc = ds_csv_str(&f, col[0], names[0], p->model1, sizeof p->model1, err)) ||
            (rc = ds_csv_str(&f, col[1], names[1], p->dataset1, sizeof p->dataset1, err)) ||
            (rc = ds_csv_str(&f, col[5], names[5], p->model2, sizeof p->model2, err)) ||
            (rc = ds_csv_str(&f, col[6], names[6], p->dataset2, sizeof p->dataset2, err)))
            break;
        if ((rc = ds_csv_int(&f, col[2], names[2], 0, 1 << 30, &v, err))) break;
        p->batch1 = (int32_t)v;
        if ((rc = ds_csv_int(&f, col[3], names[3], 0, 1, &v, err))) break;
        p->amp1 = (int32_t)v;
        if ((rc = ds_csv_int(&f, col[7], names[7], 0, 1 << 30, &v, err))) break;
        p->batch2 = (int32_t)v;
        if ((rc = ds_csv_int(&f, col[8], names[8], 0, 1, &v, err))) break;
        p->amp2 = (int32_t)v;
        /* retention is a speed ratio: above 100 it is a unit mistake, and it is stored as a float */
        if ((rc = ds_csv_num(&f, col[4], names[4], 0, 100, &p->speed1, err)) ||
            (rc = ds_csv_num(&f, col[9], names[9], 0, 100, &p->speed2, err)) ||
            (rc = ds_csv_num(&f, col[10], names[10], 0, 1e4, &p->gpu_util, err)) ||
            (rc = ds_csv_num(&f, col[11], names[11], 0, 1e4, &p->gmem_util, err)) ||
            (rc = ds_csv_num(&f, col[12], names[12], 0, 1e9, &p->gmem, err)))
            break;
        p->gtype[0] = '\0';
        if (tcol >= 0 && (rc = ds_csv_str(&f, tcol, "gpu_type", p->gtype, sizeof p->gtype, err))) break;
        if (!strcasecmp(p->gtype, "any")) p->gtype[0] = '\0';
        c->typed |= p->gtype[0] != '\0';
        c->npairs++;
    }
    ds_csv_close(&f);
    if (rc < 0) {
        ds_coloc_free(c);
        return rc;
    }
    return DS_OK;
}

/* Config index of a workload within the trace's interned names; configs are numbered densely. */
static int32_t cfg_index(const ds_trace_t *t, const char *model, const char *dataset,
                         int32_t batch, int32_t amp, int32_t *keys, int32_t *nkeys)
{
    int32_t m = ds_strtab_find(&t->models, model), d = ds_strtab_find(&t->datasets, dataset);
    if (m < 0 || d < 0) return -1;
    for (int32_t i = 0; i < *nkeys; i++)
        if (keys[4 * i] == m && keys[4 * i + 1] == d && keys[4 * i + 2] == batch && keys[4 * i + 3] == amp) return i;
    keys[4 * *nkeys] = m;
    keys[4 * *nkeys + 1] = d;
    keys[4 * *nkeys + 2] = batch;
    keys[4 * *nkeys + 3] = amp;
    return (*nkeys)++;
}

/* The slot a pair's values go to for a trace: 0 untyped, 1 + k on type k, -1 on a type the trace lacks. */
static int32_t slot_of(const ds_coloc_pair_t *p, const ds_trace_t *t)
{
    if (!p->gtype[0]) return 0;
    int32_t k = ds_trace_find_gtype(t, p->gtype);
    return k < 0 ? -1 : 1 + k;
}

void ds_coloc_bind(ds_coloc_t *c, const ds_trace_t *t)
{
    free(c->cfg_of_job);
    free(c->rho);
    c->nslot = c->typed ? 1 + t->ngtypes : 1;
    int32_t maxk = 2 * c->npairs + 1;
    int32_t *keys = ds_xmalloc((size_t)maxk * 4 * sizeof *keys);
    int32_t nkeys = 0;
    int32_t *a = ds_xmalloc((size_t)(c->npairs + 1) * sizeof *a), *b = ds_xmalloc((size_t)(c->npairs + 1) * sizeof *b);
    for (int32_t i = 0; i < c->npairs; i++) {
        const ds_coloc_pair_t *p = &c->pairs[i];
        a[i] = cfg_index(t, p->model1, p->dataset1, p->batch1, p->amp1, keys, &nkeys);
        b[i] = cfg_index(t, p->model2, p->dataset2, p->batch2, p->amp2, keys, &nkeys);
    }
    c->ncfg = nkeys;
    size_t cells = (size_t)c->nslot * (size_t)nkeys * (size_t)nkeys;
    c->rho = ds_xmalloc((cells ? cells : 1) * sizeof *c->rho);
    for (size_t i = 0; i < cells; i++) c->rho[i] = NAN;
    for (int32_t i = 0; i < c->npairs; i++) {
        int32_t sl = slot_of(&c->pairs[i], t);
        if (a[i] < 0 || b[i] < 0 || sl < 0) continue;
        float *r = c->rho + (size_t)sl * (size_t)nkeys * (size_t)nkeys;
        r[a[i] * nkeys + b[i]] = (float)c->pairs[i].speed1;
        r[b[i] * nkeys + a[i]] = (float)c->pairs[i].speed2;
    }
    c->cfg_of_job = ds_xmalloc((size_t)(t->njobs ? t->njobs : 1) * sizeof *c->cfg_of_job);
    for (int32_t j = 0; j < t->njobs; j++) {
        const ds_job_t *job = &t->jobs[j];
        c->cfg_of_job[j] = -1;
        for (int32_t k = 0; k < nkeys; k++)
            if (keys[4 * k] == job->model && keys[4 * k + 1] == job->dataset && keys[4 * k + 2] == job->batch &&
                keys[4 * k + 3] == job->amp) { c->cfg_of_job[j] = k; break; }
    }
    free(keys);
    free(a);
    free(b);
}

int ds_coloc_known(const ds_coloc_t *c, int32_t a, int32_t b)
{
    if (!c || !c->cfg_of_job) return 0;
    int32_t x = c->cfg_of_job[a], y = c->cfg_of_job[b];
    return x >= 0 && y >= 0 && !isnan(c->rho[x * c->ncfg + y]);
}

double ds_coloc_rho(const ds_coloc_t *c, int32_t a, int32_t b)
{
    if (!ds_coloc_known(c, a, b)) {
        if (!c) return 1.0;
        if (c->miss) return c->miss[(size_t)c->class_of_job[a] * (size_t)c->nclass + (size_t)c->class_of_job[b]];
        return c->missing_rho;
    }
    return c->rho[c->cfg_of_job[a] * c->ncfg + c->cfg_of_job[b]];
}

static float rho_at(const ds_coloc_t *c, int32_t slot, int32_t a, int32_t b)
{
    return c->rho[((size_t)slot * (size_t)c->ncfg + (size_t)c->cfg_of_job[a]) * (size_t)c->ncfg + (size_t)c->cfg_of_job[b]];
}

int ds_coloc_known_on(const ds_coloc_t *c, int32_t a, int32_t b, int32_t gtype)
{
    if (!c || !c->cfg_of_job || c->cfg_of_job[a] < 0 || c->cfg_of_job[b] < 0) return 0;
    if (gtype >= 0 && 1 + gtype < c->nslot && !isnan(rho_at(c, 1 + gtype, a, b))) return 1;
    return !isnan(rho_at(c, 0, a, b));
}

double ds_coloc_rho_on(const ds_coloc_t *c, int32_t a, int32_t b, int32_t gtype)
{
    /* unknown on every slot: the truth of unprofiled pairs (missing_rho, or the fixed model) */
    if (!ds_coloc_known_on(c, a, b, gtype)) return ds_coloc_rho(c, a, b);
    if (gtype >= 0 && 1 + gtype < c->nslot) {
        float r = rho_at(c, 1 + gtype, a, b);
        if (!isnan(r)) return r;
    }
    return rho_at(c, 0, a, b);
}

void ds_coloc_empty(ds_coloc_t *c, const ds_trace_t *t)
{
    memset(c, 0, sizeof *c);
    c->missing_rho = 1.0;
    c->no_profile = 1;
    ds_coloc_bind(c, t);
}

void ds_coloc_free(ds_coloc_t *c)
{
    free(c->pairs);
    free(c->cfg_of_job);
    free(c->rho);
    free(c->class_of_job);
    free(c->miss);
    memset(c, 0, sizeof *c);
}
