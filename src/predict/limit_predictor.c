/* limit_predictor.c: a runtime predictor with the trace's time limits applied (deepshare/limits.h), its
 * learned state per calling thread as the learned models' is (cli/model_predictors.c). */
#include "deepshare/limits.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct ds_limits_wrap {
    ds_runtime_predictor_t base;
    int min_history;
    pthread_mutex_t mu;
    ds_limits_t **inst;
    int32_t ninst, cap;
};

static _Thread_local const ds_limits_wrap_t *tl_owner;
static _Thread_local ds_limits_t *tl_lim;

static ds_limits_t *mine(ds_limits_wrap_t *w)
{
    if (tl_owner == w && tl_lim) return tl_lim;
    ds_limits_t *l = ds_xcalloc(1, sizeof *l);
    ds_limits_init(l, w->min_history);
    pthread_mutex_lock(&w->mu);
    if (w->ninst == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 4;
        w->inst = ds_xrealloc(w->inst, (size_t)w->cap * sizeof *w->inst);
    }
    w->inst[w->ninst++] = l;
    pthread_mutex_unlock(&w->mu);
    tl_owner = w;
    tl_lim = l;
    return l;
}

/* a replay starts at its trace's first submit: time going back is the next replay on this thread */
static ds_limits_t *at(ds_limits_wrap_t *w, int64_t now)
{
    ds_limits_t *l = mine(w);
    if (now < l->last_now) ds_limits_reset(l);
    l->last_now = now;
    return l;
}

static const char *user_of(const ds_trace_t *t, const ds_job_t *j)
{
    return j->user >= 0 && j->user < t->users.n ? t->users.s[j->user] : NULL;
}

static double predict_cb(void *ctx, const ds_trace_t *t, int32_t job, int64_t now)
{
    ds_limits_wrap_t *w = ctx;
    double b = w->base.predict(w->base.ctx, t, job, now);
    const ds_job_t *j = &t->jobs[job];
    if (j->limit <= 0) return b;
    return ds_limits_predict(at(w, now), t->tenants[j->tenant].name, user_of(t, j), (double)j->limit, b);
}

static void observe_cb(void *ctx, const ds_trace_t *t, int32_t job, int64_t now)
{
    ds_limits_wrap_t *w = ctx;
    const ds_job_t *j = &t->jobs[job];
    if (j->limit > 0) {
        /* the base's error as it stood before it learns this job (as its own residuals are taken) */
        double b = w->base.predict(w->base.ctx, t, job, now);
        ds_limits_learn(at(w, now), t->tenants[j->tenant].name, user_of(t, j), (double)j->duration, (double)j->limit,
                        b);
    }
    if (w->base.observe_finish) w->base.observe_finish(w->base.ctx, t, job, now);
}

static double remaining_cb(void *ctx, const ds_trace_t *t, int32_t job, double pred, int64_t elapsed)
{
    ds_limits_wrap_t *w = ctx;
    double r = w->base.remaining(w->base.ctx, t, job, pred, elapsed);
    int32_t lim = t->jobs[job].limit;
    /* Slurm ends the job at its limit; past it (a trace whose runs overstep their limits) the base decides */
    if (lim > 0 && elapsed < lim && r > (double)(lim - elapsed)) r = (double)(lim - elapsed);
    return r;
}

static double beyond_cb(void *ctx, double pred, int64_t elapsed)
{
    ds_limits_wrap_t *w = ctx;
    return w->base.beyond(w->base.ctx, pred, elapsed);
}

static double batch_total_cb(void *ctx, const ds_trace_t *t, int32_t job, int64_t elapsed)
{
    ds_limits_wrap_t *w = ctx;
    double r = w->base.batch_total(w->base.ctx, t, job, elapsed);
    int32_t lim = t->jobs[job].limit;
    /* Slurm ends the job at its limit, whatever its siblings ran */
    if (r >= 0 && lim > 0 && elapsed < lim && r > (double)lim) r = (double)lim;
    return r;
}

static const int32_t *batch_revised_cb(void *ctx, const ds_trace_t *t, int32_t job, int32_t *n)
{
    ds_limits_wrap_t *w = ctx;
    return w->base.batch_revised(w->base.ctx, t, job, n);
}

ds_limits_wrap_t *ds_limits_wrap(ds_runtime_predictor_t *out, const ds_runtime_predictor_t *base, int min_history)
{
    ds_limits_wrap_t *w = ds_xcalloc(1, sizeof *w);
    w->base = *base;
    w->min_history = min_history;
    pthread_mutex_init(&w->mu, NULL);
    memset(out, 0, sizeof *out);
    out->name = base->name;
    out->ctx = w;
    out->predict = predict_cb;
    out->observe_finish = observe_cb;
    out->remaining = base->remaining ? remaining_cb : NULL;
    out->beyond = base->beyond ? beyond_cb : NULL;
    out->batch_total = base->batch_total ? batch_total_cb : NULL;
    out->batch_revised = base->batch_revised ? batch_revised_cb : NULL;
    return w;
}

void ds_limits_wrap_free(ds_limits_wrap_t *w)
{
    if (!w) return;
    for (int32_t i = 0; i < w->ninst; i++) {
        ds_limits_free(w->inst[i]);
        free(w->inst[i]);
    }
    free(w->inst);
    pthread_mutex_destroy(&w->mu);
    free(w);
}
