/* model_predictors.c: the learned predictors as the CLI hands them to policies: the runtime model
 * learns online in each replay, so every thread that replays gets its own instance (created on its
 * first call); the forest is trained once and each thread gets its own copy of it (XGBoost's
 * one-row prediction buffer and the pair cache are per instance). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/model_predictors.h"
#include "deepshare/models.h"

typedef struct inst {
    ds_runtime_model_t *rm;
    ds_runtime_predictor_t rp;        /* rm as a predictor (ds_runtime_model_as_predictor) */
    ds_interference_model_t *im;
    ds_interference_predictor_t ip;
} inst_t;

struct ds_model_predictors {
    const ds_trace_t *t;
    ds_runtime_model_config_t rc;
    char *rf;            /* serialized forest, NULL without a profile */
    size_t rf_len;
    pthread_mutex_t mu;
    inst_t **inst;
    int ninst, cap;
    char **said;         /* log lines already printed (each once per process) */
    int nsaid;
};

static _Thread_local ds_model_predictors_t *tl_owner;
static _Thread_local inst_t *tl_inst;

/* Every replay has its own model instance, so the same fallback would be logged once per replay:
 * print each distinct line once. */
static void log_once(void *ctx, const char *msg)
{
    ds_model_predictors_t *s = ctx;
    pthread_mutex_lock(&s->mu);
    int seen = 0;
    for (int i = 0; i < s->nsaid && !seen; i++) seen = !strcmp(s->said[i], msg);
    if (!seen) {
        s->said = ds_xrealloc(s->said, (size_t)(s->nsaid + 1) * sizeof *s->said);
        s->said[s->nsaid++] = strdup(msg);
        fprintf(stderr, "deepshare: %s\n", msg);
    }
    pthread_mutex_unlock(&s->mu);
}

static inst_t *mine(ds_model_predictors_t *s)
{
    if (tl_owner == s && tl_inst) return tl_inst;
    inst_t *in = ds_xcalloc(1, sizeof *in);
    in->rm = ds_runtime_model_create(s->t, &s->rc);
    ds_runtime_model_as_predictor(in->rm, &in->rp);
    if (s->rf) {
        ds_error_t err;
        /* the bytes were produced by this process a moment ago: failing here is a bug */
        DS_ASSERT(ds_interference_model_load_buf(&in->im, s->rf, s->rf_len, "forest", &err) == DS_OK);
        ds_interference_model_as_predictor(in->im, s->t, &in->ip);
    }
    pthread_mutex_lock(&s->mu);
    if (s->ninst == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 4;
        s->inst = ds_xrealloc(s->inst, (size_t)s->cap * sizeof *s->inst);
    }
    s->inst[s->ninst++] = in;
    pthread_mutex_unlock(&s->mu);
    tl_owner = s;
    tl_inst = in;
    return in;
}

/* The hooks policies call: each forwards to the calling thread's own instance. */
static double rt_predict(void *ctx, const ds_trace_t *t, int32_t job, int64_t now)
{
    const ds_runtime_predictor_t *p = &mine(ctx)->rp;
    return p->predict(p->ctx, t, job, now);
}

static void rt_observe(void *ctx, const ds_trace_t *t, int32_t job, int64_t now)
{
    const ds_runtime_predictor_t *p = &mine(ctx)->rp;
    p->observe_finish(p->ctx, t, job, now);
}

static double rt_remaining(void *ctx, const ds_trace_t *t, int32_t job, double pred, int64_t elapsed)
{
    const ds_runtime_predictor_t *p = &mine(ctx)->rp;
    return p->remaining(p->ctx, t, job, pred, elapsed);
}

static double rt_beyond(void *ctx, double pred, int64_t elapsed)
{
    const ds_runtime_predictor_t *p = &mine(ctx)->rp;
    return p->beyond(p->ctx, pred, elapsed);
}

static double rt_batch_total(void *ctx, const ds_trace_t *t, int32_t job, int64_t elapsed)
{
    const ds_runtime_predictor_t *p = &mine(ctx)->rp;
    return p->batch_total ? p->batch_total(p->ctx, t, job, elapsed) : -1;
}

static const int32_t *rt_batch_revised(void *ctx, const ds_trace_t *t, int32_t job, int32_t *n)
{
    const ds_runtime_predictor_t *p = &mine(ctx)->rp;
    if (p->batch_revised) return p->batch_revised(p->ctx, t, job, n);
    *n = 0;
    return NULL;
}

static double if_predict(void *ctx, const ds_trace_t *t, int32_t a, int32_t b)
{
    inst_t *in = mine(ctx);
    return in->ip.predict(in->ip.ctx, t, a, b);
}

static double if_uncertainty(void *ctx, const ds_trace_t *t, int32_t a, int32_t b)
{
    inst_t *in = mine(ctx);
    return in->ip.uncertainty(in->ip.ctx, t, a, b);
}

ds_model_predictors_t *ds_model_predictors_create(const ds_trace_t *t, const ds_coloc_t *coloc, const char *single,
                                                  int64_t batch_gap,
                                                  ds_runtime_predictor_t *rt, ds_interference_predictor_t *ip,
                                                  ds_error_t *err)
{
    ds_model_predictors_t *s = ds_xcalloc(1, sizeof *s);
    s->t = t;
    pthread_mutex_init(&s->mu, NULL);
    ds_runtime_model_config_default(&s->rc);
    s->rc.log = log_once;
    s->rc.conditional = 1; /* used only when the CLI hands rt->remaining on (--remaining conditional) */
    s->rc.log_ctx = s;
    if (batch_gap >= 0) s->rc.batch_gap = batch_gap;
    rt->name = "model";
    rt->ctx = s;
    rt->predict = rt_predict;
    rt->observe_finish = rt_observe;
    rt->remaining = rt_remaining;
    rt->beyond = rt_beyond;
    rt->batch_total = s->rc.batch_gap > 0 ? rt_batch_total : NULL;
    rt->batch_revised = s->rc.batch_gap > 0 ? rt_batch_revised : NULL;
    if (!coloc) {
        fprintf(stderr, "deepshare: --predictor model: no --coloc profile to train the interference model on: "
                        "using the measured retention (1 everywhere without a profile)\n");
        ds_interference_oracle(ip, NULL);
        return s;
    }
    ds_single_profile_t prof;
    if (single) {
        if (ds_single_read(&prof, single, err)) goto fail;
    } else if (ds_single_from_trace(&prof, t) == 0) {
        ds_error_set(err, NULL, 0, "single", "--predictor model: the trace's jobs carry no workload profiles "
                     "(model, gpu_util, gmem): give --single single_data.csv for the interference model");
        goto fail;
    }
    ds_interference_config_t ic;
    ds_interference_config_default(&ic);
    ds_interference_model_t *im;
    int rc = ds_interference_model_train(&im, coloc, &prof, &ic, NULL, err);
    ds_single_free(&prof);
    if (rc) goto fail;
    rc = ds_interference_model_save_buf(im, &s->rf, &s->rf_len, err);
    ds_interference_model_destroy(im);
    if (rc) goto fail;
    ip->name = "model";
    ip->ctx = s;
    ip->predict = if_predict;
    ip->uncertainty = if_uncertainty;
    return s;
fail:
    ds_model_predictors_free(s);
    return NULL;
}

void ds_model_predictors_free(ds_model_predictors_t *s)
{
    if (!s) return;
    for (int i = 0; i < s->ninst; i++) {
        ds_runtime_model_destroy(s->inst[i]->rm);
        ds_interference_model_destroy(s->inst[i]->im);
        free(s->inst[i]);
    }
    free(s->inst);
    for (int i = 0; i < s->nsaid; i++) free(s->said[i]);
    free(s->said);
    free(s->rf);
    pthread_mutex_destroy(&s->mu);
    if (tl_owner == s) tl_owner = NULL, tl_inst = NULL;
    free(s);
}
