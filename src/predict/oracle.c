/* oracle.c: predictors that read the truth (true durations, measured pair retention) or the shipped
 * estimate files; they stand in until the models run and bound what a perfect model would achieve. */
#include "deepshare/coloc.h"
#include "deepshare/predictor.h"
#include "deepshare/speeds.h"

#include <math.h>

static double oracle_runtime(void *ctx, const ds_trace_t *t, int32_t job, int64_t now)
{
    (void)ctx;
    (void)now;
    return (double)t->jobs[job].duration;
}

void ds_runtime_oracle(ds_runtime_predictor_t *p)
{
    p->name = "oracle";
    p->ctx = NULL;
    p->predict = oracle_runtime;
    p->observe_finish = NULL;
    p->remaining = NULL;
    p->beyond = NULL;
    p->batch_total = NULL;
    p->batch_revised = NULL;
}

static double estimate_runtime(void *ctx, const ds_trace_t *t, int32_t job, int64_t now)
{
    (void)ctx;
    (void)now;
    double e = t->jobs[job].estimate;
    return isnan(e) ? (double)t->jobs[job].duration : e;
}

void ds_runtime_from_estimates(ds_runtime_predictor_t *p)
{
    p->name = "file";
    p->ctx = NULL;
    p->predict = estimate_runtime;
    p->observe_finish = NULL;
    p->remaining = NULL;
    p->beyond = NULL;
    p->batch_total = NULL;
    p->batch_revised = NULL;
}

static double oracle_interference(void *ctx, const ds_trace_t *t, int32_t a, int32_t b)
{
    (void)t;
    const ds_coloc_t *c = ctx;
    return c ? ds_coloc_rho(c, a, b) : 1.0;
}

static double oracle_interference_on(void *ctx, const ds_trace_t *t, int32_t a, int32_t b, int32_t gtype)
{
    (void)t;
    const ds_coloc_t *c = ctx;
    return c ? ds_coloc_rho_on(c, a, b, gtype) : 1.0;
}

void ds_interference_oracle(ds_interference_predictor_t *p, const ds_coloc_t *coloc)
{
    p->name = "oracle";
    p->ctx = (void *)coloc;
    p->predict = oracle_interference;
    p->uncertainty = NULL;
    /* a typed profile answers per GPU type; an untyped one the same on every type */
    p->predict_on = coloc && coloc->typed ? oracle_interference_on : NULL;
    p->uncertainty_on = NULL;
}

static double table_rate(void *ctx, const ds_trace_t *t, int32_t job, int32_t gtype)
{
    return ds_speeds_rate(ctx, t, job, gtype);
}

void ds_speed_from_table(ds_speed_predictor_t *p, const ds_speeds_t *s)
{
    p->name = "table";
    p->ctx = (void *)s;
    p->rate = table_rate;
}
