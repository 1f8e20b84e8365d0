/* rtmodel.c: deepshared's boosted runtime predictor (rtmodel.h): the simulator's online model over a table
 * of the jobs deepshared has predicted and learned, the time limits applied on top as in a replay (the
 * engine-facing predictor: rtmodel_engine.c). */
#include "daemon/rtmodel.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void rtmodel_init(rtmodel_t *r, int min_history, double default_runtime, int64_t batch_gap,
                  void (*log)(void *ctx, const char *msg), void *log_ctx)
{
    memset(r, 0, sizeof *r);
    ds_trace_init(&r->t);
    ds_idmap_init(&r->byid);
    /* the simulator's defaults (cli/model_predictors.c): what the suite measured is what runs here */
    ds_runtime_model_config_default(&r->mc);
    r->mc.log = log;
    r->mc.log_ctx = log_ctx;
    /* batches follow the rows through a compaction (compact()); the record of the evidence is carried */
    r->mc.batch_gap = batch_gap > 0 ? batch_gap : 0;
    r->rev_row = -1;
    r->m = ds_runtime_model_create(&r->t, &r->mc);
    ds_limits_init(&r->lim, min_history);
    r->default_runtime = default_runtime;
    r->now = INT64_MIN;
    /* four training windows of rows, then all but the latest window of finished jobs (and those of a waiting
     * job's batch) are dropped */
    r->max_rows = 4 * (r->mc.window > 0 ? (int32_t)r->mc.window : 12000);
}

void rtmodel_free(rtmodel_t *r)
{
    ds_runtime_model_destroy(r->m);
    ds_trace_free(&r->t);
    ds_idmap_free(&r->byid);
    ds_limits_free(&r->lim);
    free(r->fin);
    free(r->end);
    free(r->rev);
    memset(r, 0, sizeof *r);
}

/* The model retrains when time crosses its boundaries and starts over when time goes back (a new replay,
 * in the simulator): a daemon's clock stepping back must not make it forget. */
static int64_t tick(rtmodel_t *r, int64_t now)
{
    if (now > r->now) r->now = now;
    return r->now;
}

static int32_t tenant_of(rtmodel_t *r, const char *name)
{
    int32_t i = ds_trace_find_tenant(&r->t, name);
    return i >= 0 ? i : ds_trace_add_tenant(&r->t, name, 0);
}

static int32_t new_row(rtmodel_t *r)
{
    ds_trace_add_job(&r->t);
    int32_t row = r->t.njobs - 1;
    if (row >= r->rcap) {
        int32_t cap = r->rcap ? 2 * r->rcap : 1024;
        while (cap <= row) cap *= 2;
        r->fin = ds_xrealloc(r->fin, (size_t)cap);
        r->end = ds_xrealloc(r->end, (size_t)cap * sizeof *r->end);
        r->rcap = cap;
    }
    r->fin[row] = 0;
    r->end[row] = 0;
    return row;
}

/* A new row holding job o of trace src, its names interned in the model's own table. */
static int32_t copy_row(rtmodel_t *r, const ds_trace_t *src, const ds_job_t *o)
{
    int32_t row = new_row(r);
    ds_job_t *j = &r->t.jobs[row];
    *j = *o;
    j->tenant = tenant_of(r, src->tenants[o->tenant].name);
    j->user = o->user >= 0 && o->user < src->users.n ? ds_strtab_intern(&r->t.users, src->users.s[o->user])
                                                       : ds_strtab_intern(&r->t.users, "");
    j->model = o->model >= 0 ? ds_strtab_intern(&r->t.models, ds_trace_model_name(src, o)) : -1;
    j->dataset = o->dataset >= 0 ? ds_strtab_intern(&r->t.datasets, ds_trace_dataset_name(src, o)) : -1;
    return row;
}

/* A row and the time it is ordered by (its end, or its submission). */
typedef struct timed {
    int64_t at;
    int32_t row;
} timed_t;

static int cmp_timed(const void *a, const void *b)
{
    const timed_t *x = a, *y = b;
    if (x->at != y->at) return x->at < y->at ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

/* Which rows a compaction keeps (keep[row] = 1): the latest training window (at most half the rows) of finished
 * jobs and the latest unfinished rows (a job cancelled before it ran is never learned, so unfinished rows are
 * kept by recency too; one dropped while still waiting is added again when next asked about), and, so that a
 * waiting job keeps its batch's evidence, older finished rows of the kept unfinished rows' batches (newest
 * first, at most an eighth of the rows: a table kept at 7/8 of max_rows or less leaves room before the next
 * compaction). f: the finished rows in order of end; u: the unfinished in row order. */
static void choose(rtmodel_t *r, const timed_t *f, int32_t nf, const int32_t *u, int32_t nu, uint8_t *keep)
{
    int32_t keep_f = DS_MIN(DS_MIN(nf, r->max_rows / 2), (int32_t)(r->mc.window > 0 ? r->mc.window : nf));
    int32_t keep_u = DS_MIN(nu, r->max_rows / 4);
    for (int32_t k = nf - keep_f; k < nf; k++) keep[f[k].row] = 1;
    ds_idmap_t open;
    ds_idmap_init(&open);
    for (int32_t k = nu - keep_u; k < nu; k++) {
        keep[u[k]] = 1;
        int32_t b = ds_runtime_model_batch_of(r->m, u[k]);
        if (b >= 0) ds_idmap_put(&open, b, 1);
    }
    for (int32_t k = nf - keep_f - 1, extra = 0; open.n && k >= 0 && extra < r->max_rows / 8; k--) {
        if (ds_idmap_get(&open, ds_runtime_model_batch_of(r->m, f[k].row)) < 0) continue;
        keep[f[k].row] = 1;
        extra++;
    }
    ds_idmap_free(&open);
}

/* A fresh table of the rows choose() keeps, in order of submission (the order in which the simulator's trace
 * forms batches and the submission features), the finished ones learned again in the order they ended, and
 * the batches' record carried: what the evidence earned is the workload's, not the dropped rows'. */
static void compact(rtmodel_t *r)
{
    int32_t n = r->t.njobs, nf = 0, nu = 0, nk = 0;
    timed_t *f = ds_xmalloc((size_t)(n ? n : 1) * sizeof *f);
    int32_t *u = ds_xmalloc((size_t)(n ? n : 1) * sizeof *u), *to = ds_xmalloc((size_t)(n ? n : 1) * sizeof *to);
    timed_t *k = ds_xmalloc((size_t)(n ? n : 1) * sizeof *k);
    uint8_t *keep = ds_xcalloc((size_t)(n ? n : 1), 1);
    for (int32_t i = 0; i < n; i++) {
        if (r->fin[i]) f[nf++] = (timed_t){r->end[i], i};
        else u[nu++] = i;
    }
    qsort(f, (size_t)nf, sizeof *f, cmp_timed);
    choose(r, f, nf, u, nu, keep);
    for (int32_t i = 0; i < n; i++)
        if (keep[i]) k[nk++] = (timed_t){r->t.jobs[i].submit, i};
    qsort(k, (size_t)nk, sizeof *k, cmp_timed);
    rtmodel_t old = *r;
    ds_trace_init(&r->t);
    ds_idmap_init(&r->byid);
    r->fin = NULL, r->end = NULL, r->rcap = 0;
    r->m = ds_runtime_model_create(&r->t, &r->mc);
    for (int32_t x = 0; x < nk; x++) {
        int32_t i = k[x].row, row = copy_row(r, &old.t, &old.t.jobs[i]);
        to[i] = row;
        if (!old.fin[i]) ds_idmap_put(&r->byid, r->t.jobs[row].id, row);
    }
    for (int32_t x = 0; x < nf; x++) {
        int32_t i = f[x].row;
        if (!keep[i]) continue;
        r->fin[to[i]] = 1;
        r->end[to[i]] = old.end[i];
        ds_runtime_model_observe(r->m, to[i], old.end[i]);
    }
    ds_runtime_model_batch_carry(r->m, old.m);
    free(f), free(u), free(to), free(k), free(keep);
    ds_runtime_model_destroy(old.m);
    ds_trace_free(&old.t);
    ds_idmap_free(&old.byid);
    free(old.fin);
    free(old.end);
    r->rev_row = -1; /* rows renumbered: the latest finish's siblings are no longer at hand */
    r->compactions++;
}

/* Before a row is added: the table never reaches max_rows, and a compaction never falls between a finish
 * learned and the engine's finish of that job, which asks for its siblings (rtmodel_batch_revised). */
static void maybe_compact(rtmodel_t *r)
{
    if (r->t.njobs + 1 >= r->max_rows) compact(r);
}

void rtmodel_learn(rtmodel_t *r, uint32_t id, const char *tenant, const char *user, int gpus, double seconds,
                   int64_t end, int64_t submit, double limit)
{
    int64_t now = tick(r, end);
    int32_t row = ds_idmap_get(&r->byid, id);
    if (row >= 0 && r->fin[row]) row = -1; /* learned already: a reused id's second job */
    if (row < 0) {
        maybe_compact(r);
        row = new_row(r);
        ds_job_t *j = &r->t.jobs[row];
        j->id = id;
        /* a record without its submit time: it was submitted by its start at the latest */
        j->submit = submit > 0 ? submit : end - (int64_t)seconds;
        j->tenant = tenant_of(r, tenant);
        j->user = ds_strtab_intern(&r->t.users, user);
        j->gpus = gpus > 0 ? gpus : 1;
        j->cpus = 1;
        j->limit = limit > 0 && limit <= DS_MAX_DURATION ? (int32_t)limit : 0;
        ds_idmap_put(&r->byid, id, row);
    }
    ds_job_t *j = &r->t.jobs[row];
    /* what the model would have said of it (its features fixed now, if it never was predicted): the residual
     * the error-conditional estimates learn from, and the base the limits are compared with */
    double base = r->learned ? ds_runtime_model_predict(r->m, row, now) : r->default_runtime;
    if (limit > 0) ds_limits_learn(&r->lim, tenant, user, seconds, limit, base);
    j->duration = (int64_t)llround(seconds < 1 ? 1 : seconds);
    ds_runtime_model_observe(r->m, row, now);
    r->fin[row] = 1;
    r->end[row] = now;
    r->learned++;
    r->rev_row = row;
}

int32_t rtmodel_row(rtmodel_t *r, const ds_trace_t *t, int32_t jx)
{
    const ds_job_t *job = &t->jobs[jx];
    int32_t row = ds_idmap_get(&r->byid, job->id);
    if (row >= 0 && r->fin[row] && r->t.jobs[row].submit != job->submit) {
        /* a reused Slurm id: the learned job keeps its place in the history, not its id */
        compact(r);
        row = ds_idmap_get(&r->byid, job->id);
    }
    if (row < 0) {
        maybe_compact(r);
        row = copy_row(r, t, job);
        r->t.jobs[row].duration = 0; /* not known until it has finished */
        ds_idmap_put(&r->byid, job->id, row);
    }
    return row;
}

double rtmodel_predict(rtmodel_t *r, const ds_trace_t *t, int32_t jx, int64_t now)
{
    const ds_job_t *job = &t->jobs[jx];
    now = tick(r, now);
    int32_t row = rtmodel_row(r, t, jx);
    const char *tenant = t->tenants[job->tenant].name;
    const char *user = job->user >= 0 && job->user < t->users.n ? t->users.s[job->user] : "";
    /* predicted even before anything has finished, so that its features are those of its submit time */
    double base = ds_runtime_model_predict(r->m, row, now);
    if (!r->learned) base = r->default_runtime;
    if (job->limit <= 0) return base;
    return ds_limits_predict(&r->lim, tenant, user, (double)job->limit, base);
}
