/* rtmodel_engine.c: deepshared's runtime model (rtmodel.h) as the engine's runtime predictor, and its batch
 * evidence (docs/predictors.md, "Batch evidence") between the engine's job slots and the model's rows. The
 * model's batches are over its own rows, keyed by Slurm job id; the engine's slots are renumbered at each
 * rebuild, so every answer goes through the id. */
#include "daemon/rtmodel.h"

#include <string.h>

double rtmodel_batch_total(rtmodel_t *r, const ds_trace_t *t, int32_t j, int64_t elapsed)
{
    if (r->mc.batch_gap <= 0) return -1;
    double v = ds_runtime_model_batch_total(r->m, rtmodel_row(r, t, j), elapsed);
    /* Slurm ends the job at its limit, whatever its siblings ran (the simulator's limits wrapper does the same) */
    int32_t lim = t->jobs[j].limit;
    if (v >= 0 && lim > 0 && elapsed < lim && v > (double)lim) v = (double)lim;
    return v;
}

const int32_t *rtmodel_batch_revised(rtmodel_t *r, const ds_trace_t *t, int32_t j, int32_t *n)
{
    *n = 0;
    if (r->mc.batch_gap <= 0 || r->rev_row < 0) return r->rev;
    /* only the finish learned last has its siblings at hand (a job that ended without being learned, failed
     * or cancelled, says nothing of them, as in the simulator where only observe_finish does) */
    int32_t row = ds_idmap_get(&r->byid, t->jobs[j].id);
    if (row != r->rev_row || r->t.jobs[row].submit != t->jobs[j].submit) return r->rev;
    int32_t nr;
    const int32_t *rows = ds_runtime_model_batch_revised(r->m, row, &nr);
    if (nr == 0) return r->rev;
    /* rows -> Slurm ids -> the slots of t holding them: one pass over the slots, as a finish has few siblings
     * and the engine's slots have no map of their own here */
    ds_idmap_t want;
    ds_idmap_init(&want);
    for (int32_t k = 0; k < nr; k++) ds_idmap_put(&want, r->t.jobs[rows[k]].id, rows[k]);
    for (int32_t s = 0; s < t->njobs; s++) {
        const ds_job_t *job = &t->jobs[s];
        int32_t sib = job->id > 0 ? ds_idmap_get(&want, job->id) : -1;
        if (sib < 0 || r->t.jobs[sib].submit != job->submit) continue; /* a reused id is another job */
        if (*n == r->rcap_rev) {
            r->rcap_rev = r->rcap_rev ? 2 * r->rcap_rev : 16;
            r->rev = ds_xrealloc(r->rev, (size_t)r->rcap_rev * sizeof *r->rev);
        }
        r->rev[(*n)++] = s;
    }
    ds_idmap_free(&want);
    return r->rev;
}

static double predict_cb(void *ctx, const ds_trace_t *t, int32_t j, int64_t now)
{
    return rtmodel_predict(ctx, t, j, now);
}

static double beyond_cb(void *ctx, double pred, int64_t elapsed)
{
    return ds_runtime_model_beyond(((rtmodel_t *)ctx)->m, pred, elapsed);
}

static double batch_total_cb(void *ctx, const ds_trace_t *t, int32_t j, int64_t elapsed)
{
    return rtmodel_batch_total(ctx, t, j, elapsed);
}

static const int32_t *batch_revised_cb(void *ctx, const ds_trace_t *t, int32_t j, int32_t *n)
{
    return rtmodel_batch_revised(ctx, t, j, n);
}

void rtmodel_predictor(ds_runtime_predictor_t *p, rtmodel_t *r)
{
    memset(p, 0, sizeof *p);
    p->name = "boosted";
    p->ctx = r;
    p->predict = predict_cb;
    p->beyond = beyond_cb;
    if (r->mc.batch_gap > 0) p->batch_total = batch_total_cb, p->batch_revised = batch_revised_cb;
}
