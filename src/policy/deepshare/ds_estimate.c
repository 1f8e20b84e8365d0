/* ds_estimate.c: what DeepShare expects of a job (docs/predictors.md): its remaining run time, from the
 * runtime predictor and what it has run, and the retention of a pair, from the monitor's measurements
 * (ds_observed.c) first and the interference predictor's estimate, with its uncertainty, otherwise. Read
 * by the order, the reservations, the stages and explain; calls nothing of theirs. */
#include "ds_internal.h"

double dsp_batch_total(const ds_engine_t *e, const dsp_t *s, int32_t j, double el)
{
    const ds_runtime_predictor_t *rp = e->predictors ? e->predictors->runtime : NULL;
    if (!s->cfg.batch_evidence || !s->cfg.prediction || !rp || !rp->batch_total) return -1;
    return rp->batch_total(rp->ctx, e->trace, j, (int64_t)el);
}

double dsp_remaining(const ds_engine_t *e, const dsp_t *s, int32_t j, int64_t now)
{
    /* Its own batch's finished runs know more of it than the submit-time model or the rules below, which
     * stand in for a prediction that has failed (docs/predictors.md, "Batch evidence"). */
    {
        double el = dsp_elapsed(e, s, j, now);
        double bt = dsp_batch_total(e, s, j, el);
        if (bt >= 0) return bt - el > 1.0 ? bt - el : 1.0;
    }
    /* Several GPU types: a prediction is seconds of work on the job's reference type, and so is what it has
     * done (its runs at their types' speeds, dsp_work_done) and what remains. */
    if (e->ntypes > 1) {
        double el = dsp_work_done(e, s, j, now);
        if (s->yielded[j]) {
            double r = s->pred[j] - el;
            return r > el ? r : el > 1.0 ? el : 1.0;
        }
        const ds_runtime_predictor_t *rp = e->predictors ? e->predictors->runtime : NULL;
        if (rp && rp->remaining) return rp->remaining(rp->ctx, e->trace, j, s->pred[j], (int64_t)el);
        double r = s->pred[j] - el;
        return r > 1.0 ? r : 1.0;
    }
    /* A job that yielded (outlived its prediction, §2) is expected to run about as long again as it
     * has: its prediction no longer says anything, and ranking it as almost done would put it back at
     * the head of its tenant's order. */
    if (s->yielded[j]) {
        double el = (double)ds_engine_elapsed(e, j, now), r = s->pred[j] - el;
        return r > el ? r : el > 1.0 ? el : 1.0;
    }
    /* The predictor's estimate given the elapsed time when it has one (learned models: conditional on
     * having run that long), else max(predicted total - elapsed wall time, 1), docs/predictors.md. */
    const ds_runtime_predictor_t *rp = e->predictors ? e->predictors->runtime : NULL;
    if (rp && rp->remaining) return rp->remaining(rp->ctx, e->trace, j, s->pred[j], ds_engine_elapsed(e, j, now));
    double r = s->pred[j] - (double)ds_engine_elapsed(e, j, now);
    return r > 1.0 ? r : 1.0;
}

double dsp_remaining_for(const ds_engine_t *e, const dsp_t *s, int32_t j, int64_t now, int use)
{
    const ds_runtime_predictor_t *rp = e->predictors ? e->predictors->runtime : NULL;
    /* a yielded run keeps its own rule (as long again as it has run) */
    if ((s->cfg.cond_remaining & use) && rp && rp->beyond && !s->yielded[j] &&
        dsp_batch_total(e, s, j, dsp_elapsed(e, s, j, now)) < 0) {
        double r = rp->beyond(rp->ctx, s->pred[j], (int64_t)dsp_elapsed(e, s, j, now));
        if (r >= 0) return r;
    }
    return dsp_remaining(e, s, j, now);
}

double dsp_retention(const ds_engine_t *e, const dsp_t *s, int32_t a, int32_t b, int32_t gtype)
{
    double seen;
    if (s->cfg.learn_retention && dsp_observed_get(s, e->trace, a, b, gtype, &seen)) return seen;
    const ds_interference_predictor_t *p = e->predictors ? e->predictors->interference : NULL;
    if (p && gtype >= 0 && p->predict_on) return p->predict_on(p->ctx, e->trace, a, b, gtype);
    return p ? p->predict(p->ctx, e->trace, a, b) : 1.0;
}

double dsp_retention_admit(const ds_engine_t *e, const dsp_t *s, int32_t a, int32_t b, int32_t gtype, double *bound,
                           int *probe)
{
    double r = dsp_retention(e, s, a, b, gtype);
    const ds_interference_predictor_t *p = e->predictors ? e->predictors->interference : NULL;
    /* Optimism under uncertainty: a model's guess about a pair nobody has measured is only a prior, and
     * a pair never admitted is never measured, so a pessimistic guess would stand for good. How far to
     * trust it is the model's own doubt (the forest's trees agree within ~0.03 on pairs like those it
     * learned from, and spread ~0.1 on others). A probe is cheap to take back: the monitor samples it
     * every cycle, revokes it if it falls short, and admission then reads the measurement. */
    *probe = 0;
    *bound = r;
    if (s->cfg.learn_retention && s->cfg.probe_z > 0 && p && p->uncertainty && dsp_observed_probe_ok(s, e->trace, a, b, gtype)) {
        double u = gtype >= 0 && p->uncertainty_on ? p->uncertainty_on(p->ctx, e->trace, a, b, gtype)
                                                   : p->uncertainty(p->ctx, e->trace, a, b);
        if (u > 0) *bound = r + s->cfg.probe_z * u, *probe = 1;
    }
    return r;
}
