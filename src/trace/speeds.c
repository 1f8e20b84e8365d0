/* speeds.c: reads the speed table and answers "how fast does job j run on type t" per job. */
#include "deepshare/speeds.h"
#include "deepshare/csv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int same_workload(const ds_speed_row_t *a, const ds_speed_row_t *b)
{
    return a->batch == b->batch && a->amp == b->amp && !strcmp(a->model, b->model) && !strcmp(a->dataset, b->dataset);
}

/* FNV-1a over a row's key (workload, GPU count, type name case-folded): duplicates in linear time. */
static uint32_t row_hash(const ds_speed_row_t *r)
{
    uint32_t h = 2166136261u;
    const char *parts[3] = {r->model, r->dataset, r->gtype};
    for (int k = 0; k < 3; k++) {
        for (const char *c = parts[k]; *c; c++) h = (h ^ (uint8_t)(k == 2 && *c >= 'A' && *c <= 'Z' ? *c + 32 : *c)) * 16777619u;
        h = (h ^ 0xff) * 16777619u;
    }
    int32_t nums[3] = {r->batch, r->amp, r->gpus};
    for (int k = 0; k < 3; k++) h = (h ^ (uint32_t)nums[k]) * 16777619u;
    return h;
}

int ds_speeds_read(ds_speeds_t *s, const char *path, ds_error_t *err)
{
    memset(s, 0, sizeof *s);
    ds_csv_t f;
    int rc = ds_csv_open_header(&f, path, "expected a header 'model,dataset,batchsize,amp,gpus,gpu_type,throughput'", err);
    if (rc) return rc;
    static const char *const req[] = {"model", "batchsize", "gpu_type", "throughput"};
    int col[4];
    if ((rc = ds_csv_require(&f, req, 4, col, err))) return rc;
    int dcol = ds_csv_col(&f, "dataset"), acol = ds_csv_col(&f, "amp"), gcol = ds_csv_col(&f, "gpus");
    int ncols = f.nfields, cap = 0;
    uint32_t hcap = 1u << 15; /* twice DS_SPEEDS_MAX_ROWS, rounded up to a power of two */
    int32_t *hash = ds_xmalloc(hcap * sizeof *hash);
    for (uint32_t i = 0; i < hcap; i++) hash[i] = -1;
    while ((rc = ds_csv_row(&f, ncols, err)) > 0) {
        if (s->nrows == DS_SPEEDS_MAX_ROWS) {
            ds_error_set(err, path, f.line, NULL, "more than %d rows", DS_SPEEDS_MAX_ROWS);
            rc = DS_EPARSE;
            break;
        }
        if (s->nrows == cap) {
            cap = cap ? 2 * cap : 256;
            s->rows = ds_xrealloc(s->rows, (size_t)cap * sizeof *s->rows);
        }
        ds_speed_row_t *r = &s->rows[s->nrows];
        memset(r, 0, sizeof *r);
        int64_t v;
        r->gpus = 1;
        if ((rc = ds_csv_str(&f, col[0], req[0], r->model, sizeof r->model, err)) ||
            (dcol >= 0 && (rc = ds_csv_str(&f, dcol, "dataset", r->dataset, sizeof r->dataset, err))) ||
            (rc = ds_csv_str(&f, col[2], req[2], r->gtype, sizeof r->gtype, err)))
            break;
        if (!r->model[0] || !r->gtype[0]) {
            ds_error_set(err, path, f.line, r->model[0] ? req[2] : req[0], "empty");
            rc = DS_EPARSE;
            break;
        }
        if ((rc = ds_csv_int(&f, col[1], req[1], 0, 1 << 30, &v, err))) break;
        r->batch = (int32_t)v;
        if (acol >= 0) {
            if ((rc = ds_csv_int(&f, acol, "amp", 0, 1, &v, err))) break;
            r->amp = (int32_t)v;
        }
        if (gcol >= 0) {
            if ((rc = ds_csv_int(&f, gcol, "gpus", 1, DS_MAX_JOB_GPUS, &v, err))) break;
            r->gpus = (int32_t)v;
        }
        /* steps per second: a zero would be a job that never ends, so an unmeasured entry is left out instead */
        if ((rc = ds_csv_num(&f, col[3], req[3], 1e-9, 1e9, &r->thr, err))) break;
        uint32_t h = row_hash(r) & (hcap - 1);
        for (; hash[h] >= 0; h = (h + 1) & (hcap - 1)) {
            const ds_speed_row_t *o = &s->rows[hash[h]];
            if (o->gpus == r->gpus && !strcasecmp(o->gtype, r->gtype) && same_workload(o, r)) {
                ds_error_set(err, path, f.line, NULL, "a second throughput for %s on %d %s GPU(s) (the first is data row "
                             "%d)", r->model, r->gpus, r->gtype, hash[h] + 1);
                rc = DS_EPARSE;
                break;
            }
        }
        if (rc) break;
        hash[h] = s->nrows++;
    }
    free(hash);
    ds_csv_close(&f);
    if (rc < 0) {
        ds_speeds_free(s);
        return rc;
    }
    if (!s->nrows) {
        ds_error_set(err, path, 0, NULL, "no throughputs in file (only a header)");
        return DS_EPARSE;
    }
    return DS_OK;
}

static void unbind(ds_speeds_t *s)
{
    free(s->thr);
    free(s->key_of_job);
    free(s->cfg_row);
    free(s->cfg_dataset);
    free(s->head);
    free(s->next);
    s->thr = NULL;
    s->key_of_job = NULL;
    s->cfg_row = s->cfg_dataset = s->head = s->next = NULL;
    s->ncfg = s->nsf = s->nty = s->njobs = s->nmodels = 0;
}

/* The key of a job's workload at the table's GPU count for it: the largest measured count up to the job's
 * (the smallest when all are larger); -1 when the table lacks its workload. */
static int32_t key_of(const ds_speeds_t *s, const ds_job_t *job)
{
    if (job->model < 0 || job->model >= s->nmodels) return -1;
    int32_t k;
    for (k = s->head[job->model]; k >= 0; k = s->next[k])
        if ((s->cfg_dataset[k] < 0 || s->cfg_dataset[k] == job->dataset) && s->rows[s->cfg_row[k]].batch == job->batch &&
            s->rows[s->cfg_row[k]].amp == job->amp)
            break;
    if (k < 0) return -1;
    int32_t best = -1;
    for (int32_t q = 0; q < s->nsf; q++) {
        int any = 0;
        for (int32_t ty = 0; ty < s->nty; ty++) any |= s->thr[((size_t)k * (size_t)s->nsf + (size_t)q) * (size_t)s->nty + (size_t)ty] > 0;
        if (!any) continue;
        if (s->sf[q] <= job->gpus || best < 0) best = q;
        if (s->sf[q] >= job->gpus) break;
    }
    return best >= 0 ? k * s->nsf + best : -1;
}

void ds_speeds_bind(ds_speeds_t *s, const ds_trace_t *t)
{
    unbind(s);
    /* GPU counts of the table */
    for (int32_t i = 0; i < s->nrows; i++) {
        int32_t g = s->rows[i].gpus, k = 0;
        while (k < s->nsf && s->sf[k] < g) k++;
        if (k < s->nsf && s->sf[k] == g) continue;
        if (s->nsf == DS_SPEEDS_MAX_SF) continue; /* more counts than slots: the rest are not used */
        memmove(&s->sf[k + 1], &s->sf[k], (size_t)(s->nsf - k) * sizeof *s->sf);
        s->sf[k] = g;
        s->nsf++;
    }
    /* workloads of the table that the trace's jobs can carry: their model and dataset names are interned */
    int32_t *cfg_row = ds_xmalloc((size_t)(s->nrows + 1) * sizeof *cfg_row), *cfg_of_row = ds_xmalloc((size_t)(s->nrows + 1) * sizeof *cfg_of_row);
    int32_t *cm = ds_xmalloc((size_t)(s->nrows + 1) * sizeof *cm), *cd = ds_xmalloc((size_t)(s->nrows + 1) * sizeof *cd);
    for (int32_t i = 0; i < s->nrows; i++) {
        const ds_speed_row_t *r = &s->rows[i];
        cfg_of_row[i] = -1;
        int32_t m = ds_strtab_find(&t->models, r->model);
        int32_t d = r->dataset[0] ? ds_strtab_find(&t->datasets, r->dataset) : -1;
        if (m < 0 || (r->dataset[0] && d < 0)) continue;
        int32_t k;
        for (k = 0; k < s->ncfg; k++)
            if (same_workload(&s->rows[cfg_row[k]], r)) break;
        if (k == s->ncfg) cfg_row[k] = i, cm[k] = m, cd[k] = d, s->ncfg++;
        cfg_of_row[i] = k;
    }
    s->nty = t->ngtypes > 0 ? t->ngtypes : 1;
    size_t ncell = (size_t)(s->ncfg ? s->ncfg : 1) * (size_t)(s->nsf ? s->nsf : 1) * (size_t)s->nty;
    s->thr = ds_xcalloc(ncell, sizeof *s->thr);
    for (int32_t i = 0; i < s->nrows; i++) {
        if (cfg_of_row[i] < 0) continue;
        int32_t ty = ds_trace_find_gtype(t, s->rows[i].gtype), k = 0;
        if (ty < 0) continue; /* a type this cluster does not have */
        while (k < s->nsf && s->sf[k] != s->rows[i].gpus) k++;
        if (k == s->nsf) continue;
        s->thr[((size_t)cfg_of_row[i] * (size_t)s->nsf + (size_t)k) * (size_t)s->nty + (size_t)ty] = s->rows[i].thr;
    }
    /* configs chained by model, so that a job is matched against its model's few configs only; kept for
     * ds_speeds_bind_job (a driver fills jobs after the bind) */
    s->nmodels = t->models.n;
    s->head = ds_xmalloc((size_t)(t->models.n + 1) * sizeof *s->head);
    s->next = ds_xmalloc((size_t)(s->ncfg + 1) * sizeof *s->next);
    for (int32_t m = 0; m <= t->models.n; m++) s->head[m] = -1;
    for (int32_t k = s->ncfg - 1; k >= 0; k--) s->next[k] = s->head[cm[k]], s->head[cm[k]] = k;
    s->cfg_row = cfg_row;
    s->cfg_dataset = cd;
    s->njobs = t->njobs;
    s->key_of_job = ds_xmalloc((size_t)(t->njobs ? t->njobs : 1) * sizeof *s->key_of_job);
    for (int32_t j = 0; j < t->njobs; j++) s->key_of_job[j] = key_of(s, &t->jobs[j]);
    free(cfg_of_row);
    free(cm);
}

void ds_speeds_bind_job(ds_speeds_t *s, const ds_trace_t *t, int32_t j)
{
    if (s->key_of_job && j >= 0 && j < s->njobs && j < t->njobs) s->key_of_job[j] = key_of(s, &t->jobs[j]);
}

void ds_speeds_intern(const ds_speeds_t *s, ds_trace_t *t)
{
    for (int32_t i = 0; i < s->nrows; i++) {
        ds_strtab_intern(&t->models, s->rows[i].model);
        if (s->rows[i].dataset[0]) ds_strtab_intern(&t->datasets, s->rows[i].dataset);
    }
}

static double thr_of(const ds_speeds_t *s, int32_t key, int32_t ty)
{
    return s->thr[(size_t)key * (size_t)s->nty + (size_t)ty];
}

double ds_speeds_rate(const ds_speeds_t *s, const ds_trace_t *t, int32_t j, int32_t gtype)
{
    if (!s || !s->key_of_job || j >= s->njobs || gtype < 0 || gtype >= s->nty) return 1.0;
    int32_t key = s->key_of_job[j], ref = ds_job_ref_gtype(t, &t->jobs[j]);
    if (key < 0 || ref < 0 || ref >= s->nty || ref == gtype) return 1.0;
    double a = thr_of(s, key, gtype), b = thr_of(s, key, ref);
    return a > 0 && b > 0 ? a / b : 1.0;
}

int ds_speeds_known(const ds_speeds_t *s, int32_t j, int32_t gtype)
{
    if (!s || !s->key_of_job || j >= s->njobs || gtype < 0 || gtype >= s->nty || s->key_of_job[j] < 0) return 0;
    return thr_of(s, s->key_of_job[j], gtype) > 0;
}

double ds_speeds_type_weight(const ds_speeds_t *s, const ds_trace_t *t, int32_t gtype)
{
    if (!s || !s->thr || gtype < 0 || gtype >= s->nty || t->ref_gtype >= s->nty || s->nsf == 0 || s->sf[0] != 1) return 1.0;
    double sum = 0;
    int32_t n = 0;
    for (int32_t k = 0; k < s->ncfg; k++) {
        double a = thr_of(s, k * s->nsf, gtype), b = thr_of(s, k * s->nsf, t->ref_gtype);
        if (a > 0 && b > 0) sum += b / a, n++;
    }
    /* the harmonic mean: a GPU given equal work of each workload delivers it at this rate */
    return n && sum > 0 ? n / sum : 1.0;
}

int32_t ds_speeds_workloads(const ds_speeds_t *s, const ds_trace_t *t, int32_t *rows, int32_t max)
{
    int32_t n = 0;
    int32_t nty = t->ngtypes > 0 ? t->ngtypes : 1;
    for (int32_t i = 0; i < s->nrows && n < max; i++) {
        const ds_speed_row_t *r = &s->rows[i];
        if (r->gpus != 1) continue;
        int dup = 0;
        for (int32_t q = 0; q < n && !dup; q++) dup = same_workload(&s->rows[rows[q]], r);
        if (dup) continue;
        int all = 1;
        for (int32_t ty = 0; ty < nty && all; ty++) {
            int have = 0;
            for (int32_t q = 0; q < s->nrows && !have; q++)
                have = s->rows[q].gpus == 1 && same_workload(&s->rows[q], r) &&
                       (t->ngtypes ? !strcasecmp(s->rows[q].gtype, t->gtypes[ty].name) : 1);
            all = have;
        }
        if (all) rows[n++] = i;
    }
    return n;
}

void ds_speeds_free(ds_speeds_t *s)
{
    unbind(s);
    free(s->rows);
    memset(s, 0, sizeof *s);
}
