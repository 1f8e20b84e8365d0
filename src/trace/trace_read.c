/* trace_read.c: reads job rows (Venus or generic column names) and duration-estimate files. */
#include "deepshare/csv.h"
#include "deepshare/idmap.h"
#include "deepshare/trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Column names accepted for each field: generic name first, then the Venus/Lucid alias. */
enum { C_ID, C_TENANT, C_USER, C_GPUS, C_CPUS, C_MEM, C_SUBMIT, C_DURATION, C_CLASS,
       C_MODEL, C_DATASET, C_BATCH, C_AMP, C_GUTIL, C_GMUTIL, C_GMEM, C_GTYPE, C_REFTYPE, C_CKPT, C_LIMIT, C_N };
static const char *const col_names[C_N][3] = {
    [C_ID] = {"job_id", "id", NULL},         [C_TENANT] = {"tenant", "vc", NULL},
    [C_USER] = {"user", NULL, NULL},         [C_GPUS] = {"gpus", "gpu_num", NULL},
    [C_CPUS] = {"cpus", "cpu_num", NULL},    [C_MEM] = {"mem_mib", NULL, NULL},
    [C_SUBMIT] = {"submit", "submit_time", NULL}, [C_DURATION] = {"duration", NULL, NULL},
    [C_CLASS] = {"class", NULL, NULL},       [C_MODEL] = {"model", NULL, NULL},
    [C_DATASET] = {"dataset", NULL, NULL},   [C_BATCH] = {"batchsize", "batch_size", NULL},
    [C_AMP] = {"amp", NULL, NULL},           [C_GUTIL] = {"gpu_util", NULL, NULL},
    [C_GMUTIL] = {"gmem_util", NULL, NULL},  [C_GMEM] = {"gmem", "gmem_mib", NULL},
    [C_GTYPE] = {"gpu_type", NULL, NULL},    [C_REFTYPE] = {"ref_gpu_type", NULL, NULL},
    [C_CKPT] = {"ckpt", "checkpoint_interval", NULL},
    [C_LIMIT] = {"time_limit", "timelimit", NULL},
};

/* A GPU type column: empty or "any" is no particular type (-1, mask 0); else one type of the cluster, or
 * several separated by '|' (Alibaba's gpu_spec "V100M16|V100M32": any of them). *one is the type when there is
 * exactly one, else -1. */
static int read_gtype(const ds_trace_t *t, const ds_csv_t *c, int col, const char *name, int8_t *one, uint8_t *mask,
                      ds_error_t *err)
{
    const char *v = c->fields[col];
    *one = -1;
    if (mask) *mask = 0;
    if (!*v || !strcasecmp(v, "any")) return DS_OK;
    uint32_t m = 0;
    for (const char *p = v;;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        char nm[DS_GTYPE_NAME];
        int32_t k = -1;
        if (len > 0 && len < sizeof nm) {
            memcpy(nm, p, len);
            nm[len] = '\0';
            k = ds_trace_find_gtype(t, nm);
        }
        if (k < 0) {
            if (!t->ngtypes) {
                ds_error_set(err, c->path, c->line, name, "GPU type '%.*s' but the cluster has no node types (give them with "
                             "--cluster FILE or quota_<type> columns in the tenant file)", (int)DS_MIN(len, 64), p);
                return DS_EPARSE;
            }
            char known[DS_MAX_GPU_TYPES * (DS_GTYPE_NAME + 2)] = "";
            for (int32_t i = 0; i < t->ngtypes; i++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "", t->gtypes[i].name);
            ds_error_set(err, c->path, c->line, name, "unknown GPU type '%.*s' (the cluster's types: %s, or any)",
                         (int)DS_MIN(len, 64), p, known);
            return DS_EPARSE;
        }
        m |= 1u << k;
        if (!bar) break;
        p = bar + 1;
    }
    if (!mask && (m & (m - 1))) {
        ds_error_set(err, c->path, c->line, name, "one GPU type expected, found several ('%.64s')", v);
        return DS_EPARSE;
    }
    if (mask) *mask = (uint8_t)m;
    if (!(m & (m - 1))) *one = (int8_t)__builtin_ctz(m);
    return DS_OK;
}

static const int col_required[C_N] = {[C_ID] = 1, [C_TENANT] = 1, [C_GPUS] = 1, [C_SUBMIT] = 1, [C_DURATION] = 1};

static int cmp_submit(const void *a, const void *b)
{
    const ds_job_t *x = a, *y = b;
    if (x->submit != y->submit) return x->submit < y->submit ? -1 : 1;
    /* line keeps the file's order among ties: FIFO depends on it */
    return (x->line > y->line) - (x->line < y->line);
}

int ds_trace_read_jobs(ds_trace_t *t, const char *path, ds_error_t *err)
{
    ds_csv_t c;
    int rc = ds_csv_open_header(&c, path, "expected a header line with job_id, tenant, gpus, submit, duration", err);
    if (rc) return rc;
    int col[C_N];
    const char *cname[C_N];
    for (int k = 0; k < C_N; k++) {
        col[k] = -1;
        cname[k] = col_names[k][0];
        for (int a = 0; a < 3 && col_names[k][a]; a++)
            if ((col[k] = ds_csv_col(&c, col_names[k][a])) >= 0) { cname[k] = col_names[k][a]; break; }
        if (col[k] < 0 && col_required[k]) {
            ds_error_set(err, path, c.line, col_names[k][0], "missing required column%s%s%s",
                         col_names[k][1] ? " (or '" : "", col_names[k][1] ? col_names[k][1] : "",
                         col_names[k][1] ? "')" : "");
            ds_csv_close(&c);
            return DS_EPARSE;
        }
    }
    /* cname[] points into the csv buffer's header only for generic names; keep our own copies. */
    int ncols = c.nfields;
    ds_idmap_t ids;
    ds_idmap_init(&ids);
    int32_t first = t->njobs;
    int sorted = 1;
    int64_t min_submit = 0, max_submit = 0;
    while ((rc = ds_csv_row(&c, ncols, err)) > 0) {
        if (t->njobs - first >= DS_MAX_JOBS) {
            ds_error_set(err, path, c.line, NULL, "more than %d jobs", DS_MAX_JOBS);
            rc = DS_EPARSE;
            break;
        }
        ds_job_t *j = ds_trace_add_job(t);
        j->line = c.line;
        int64_t v;
        double d;
        if ((rc = ds_csv_i64(&c, col[C_ID], cname[C_ID], INT64_MIN, &j->id, err))) break;
        int32_t prev = ds_idmap_put(&ids, j->id, t->njobs - 1);
        if (prev >= 0) {
            ds_error_set(err, path, c.line, cname[C_ID], "duplicate job id %lld (first on line %ld)",
                         (long long)j->id, t->jobs[prev].line);
            rc = DS_EPARSE;
            break;
        }
        const char *tn = c.fields[col[C_TENANT]];
        j->tenant = ds_trace_find_tenant(t, tn);
        if (j->tenant < 0) {
            ds_error_set(err, path, c.line, cname[C_TENANT], "unknown tenant '%s' (not in the tenant/vc config)", tn);
            rc = DS_EPARSE;
            break;
        }
        /* No user given (no column, an empty field, or the importers' "-"): the tenant is the finest identity
         * known, so each tenant gets its own anonymous user "-@tenant". One "-" for the whole trace would let
         * the runtime model's user histories and the batch rule join different tenants' jobs. */
        const char *un = col[C_USER] >= 0 ? c.fields[col[C_USER]] : "";
        if (un[0] && strcmp(un, "-") != 0) j->user = ds_strtab_intern(&t->users, un);
        else {
            char anon[sizeof t->tenants[0].name + 2];
            snprintf(anon, sizeof anon, "-@%s", t->tenants[j->tenant].name);
            j->user = ds_strtab_intern(&t->users, anon);
        }
        if ((rc = ds_csv_int(&c, col[C_GPUS], cname[C_GPUS], 1, DS_MAX_JOB_GPUS, &v, err))) break;
        j->gpus = (int32_t)v;
        if (col[C_CPUS] >= 0) {
            if ((rc = ds_csv_int(&c, col[C_CPUS], cname[C_CPUS], 0, DS_MAX_JOB_CPUS, &v, err))) break;
            j->cpus = (int32_t)v;
        }
        if (col[C_MEM] >= 0) {
            /* MiB; the bound keeps per-node shares (mem x GPUs on the node) far from overflow */
            if ((rc = ds_csv_int(&c, col[C_MEM], cname[C_MEM], 0, (int64_t)1 << 40, &j->mem_mib, err))) break;
        }
        /* Bounded so that the simulated span, and with it the per-cycle series, stays finite and small:
         * a submit span or a duration of 2^31 s already costs gigabytes of samples. */
        if ((rc = ds_csv_int(&c, col[C_SUBMIT], cname[C_SUBMIT], 0, DS_MAX_SUBMIT, &j->submit, err))) break;
        if ((rc = ds_csv_int(&c, col[C_DURATION], cname[C_DURATION], 0, DS_MAX_DURATION, &j->duration, err))) break;
        if (t->njobs - 1 == first) min_submit = max_submit = j->submit;
        min_submit = DS_MIN(min_submit, j->submit);
        max_submit = DS_MAX(max_submit, j->submit);
        if (max_submit - min_submit > DS_MAX_SPAN) {
            ds_error_set(err, path, c.line, cname[C_SUBMIT], "submit times span more than %lld s (%lld days): split the trace",
                         (long long)DS_MAX_SPAN, (long long)(DS_MAX_SPAN / 86400));
            rc = DS_EPARSE;
            break;
        }
        if (col[C_CLASS] >= 0) {
            const char *k = c.fields[col[C_CLASS]];
            if (!*k || !strcasecmp(k, "auto")) j->klass = DS_CLASS_AUTO;
            else if (!strcasecmp(k, "G") || !strcasecmp(k, "guaranteed")) j->klass = DS_CLASS_G;
            else if (!strcasecmp(k, "BE") || !strcasecmp(k, "best-effort") || !strcasecmp(k, "besteffort")) j->klass = DS_CLASS_BE;
            else { ds_error_set(err, path, c.line, cname[C_CLASS], "'%s' is not G, BE or auto", k); rc = DS_EPARSE; break; }
        }
        if (col[C_MODEL] >= 0 && c.fields[col[C_MODEL]][0]) j->model = ds_strtab_intern(&t->models, c.fields[col[C_MODEL]]);
        if (col[C_DATASET] >= 0 && c.fields[col[C_DATASET]][0]) j->dataset = ds_strtab_intern(&t->datasets, c.fields[col[C_DATASET]]);
        if (col[C_BATCH] >= 0) {
            if ((rc = ds_csv_int(&c, col[C_BATCH], cname[C_BATCH], 0, 1 << 30, &v, err))) break;
            j->batch = (int32_t)v;
        }
        if (col[C_AMP] >= 0) {
            if ((rc = ds_csv_i64(&c, col[C_AMP], cname[C_AMP], 0, &v, err))) break;
            if (v > 1) { ds_error_set(err, path, c.line, cname[C_AMP], "expected 0 or 1, found %lld", (long long)v); rc = DS_EPARSE; break; }
            j->amp = (int32_t)v;
        }
        if (col[C_GUTIL] >= 0) {
            if ((rc = ds_csv_f64(&c, col[C_GUTIL], cname[C_GUTIL], 0, &d, err))) break;
            j->gpu_util = (float)DS_MIN(d, 100.0);
        }
        if (col[C_GMUTIL] >= 0) {
            if ((rc = ds_csv_f64(&c, col[C_GMUTIL], cname[C_GMUTIL], 0, &d, err))) break;
            j->gmem_util = (float)DS_MIN(d, 100.0);
        }
        if (col[C_GMEM] >= 0) {
            if ((rc = ds_csv_num(&c, col[C_GMEM], cname[C_GMEM], 0, 1e9, &d, err))) break;
            j->gmem_mib = (int32_t)d;
        } else {
            j->gmem_mib = 24576; /* unknown footprint: assume the whole device, so no sharing is attempted */
        }
        if (col[C_GTYPE] >= 0 && (rc = read_gtype(t, &c, col[C_GTYPE], cname[C_GTYPE], &j->gtype, &j->gmask, err))) break;
        if (col[C_REFTYPE] >= 0 && (rc = read_gtype(t, &c, col[C_REFTYPE], cname[C_REFTYPE], &j->ref_gtype, NULL, err))) break;
        /* a job that could only run on one type was timed there */
        if (j->ref_gtype < 0) j->ref_gtype = j->gtype;
        if (col[C_CKPT] >= 0 && c.fields[col[C_CKPT]][0]) {
            /* seconds between the job's checkpoints; empty or 0: it declares none */
            if ((rc = ds_csv_int(&c, col[C_CKPT], cname[C_CKPT], 0, DS_MAX_DURATION, &v, err))) break;
            j->ckpt = (int32_t)v;
        }
        if (col[C_LIMIT] >= 0 && c.fields[col[C_LIMIT]][0]) {
            /* seconds its owner asked for (sbatch --time); empty or 0: none given */
            if ((rc = ds_csv_int(&c, col[C_LIMIT], cname[C_LIMIT], 0, DS_MAX_DURATION, &v, err))) break;
            j->limit = (int32_t)v;
        }
        if (t->njobs - 1 > first && j->submit < t->jobs[t->njobs - 2].submit) sorted = 0;
    }
    ds_csv_close(&c);
    ds_idmap_free(&ids);
    if (rc < 0) {
        t->njobs = first;
        return rc;
    }
    if (t->njobs == first) {
        ds_error_set(err, path, 0, NULL, "no jobs in file (only a header)");
        return DS_EPARSE;
    }
    if (!sorted) qsort(t->jobs + first, (size_t)(t->njobs - first), sizeof *t->jobs, cmp_submit);
    snprintf(t->source, sizeof t->source, "%s", path);
    return DS_OK;
}

int ds_trace_read_estimates(ds_trace_t *t, const char *path, double neg_floor, int32_t *matched, ds_error_t *err)
{
    ds_csv_t c;
    int rc = ds_csv_open_header(&c, path, "expected a header 'job_id,estimate'", err);
    if (rc) return rc;
    int idc = ds_csv_col(&c, "job_id");
    if (idc < 0 || c.nfields < 2) {
        ds_error_set(err, path, c.line, "job_id", "expected a header 'job_id,<estimate column>'");
        ds_csv_close(&c);
        return DS_EPARSE;
    }
    int vc = idc == 0 ? 1 : 0;
    char vname[64];
    snprintf(vname, sizeof vname, "%s", c.fields[vc]);
    int ncols = c.nfields;
    ds_idmap_t ids;
    ds_idmap_init(&ids);
    for (int32_t i = 0; i < t->njobs; i++) ds_idmap_put(&ids, t->jobs[i].id, i);
    uint8_t *seen = ds_xcalloc((size_t)t->njobs, 1);
    int32_t n = 0;
    while ((rc = ds_csv_row(&c, ncols, err)) > 0) {
        int64_t id;
        double v;
        if ((rc = ds_csv_i64(&c, idc, "job_id", INT64_MIN, &id, err))) break;
        /* |estimate| bounded: policies turn estimates into integer times */
        if ((rc = ds_csv_num(&c, vc, vname, -DS_MAX_ESTIMATE, DS_MAX_ESTIMATE, &v, err))) break;
        int32_t j = ds_idmap_get(&ids, id);
        if (j < 0 || seen[j]) continue; /* first row for a job wins, as in the reference */
        seen[j] = 1;
        if (v < 0 && neg_floor > 0) v = neg_floor;
        t->jobs[j].estimate = v;
        n++;
    }
    ds_csv_close(&c);
    ds_idmap_free(&ids);
    free(seen);
    if (rc < 0) return rc;
    if (matched) *matched = n;
    return DS_OK;
}
