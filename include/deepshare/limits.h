/* limits.h: a job's time limit (the wall time its owner asked for; Slurm ends the job there) as runtime
 * information beside any runtime predictor: the limit caps the prediction, and where a user's limits have
 * said more about their run times than the base predictor has, the prediction is the limit scaled by the
 * user's learned ratio of run time to limit (docs/predictors.md, "Time limits"). No I/O. */
#ifndef DS_LIMITS_H
#define DS_LIMITS_H

#include <stdint.h>

#include "deepshare/predictor.h"
#include "deepshare/trace.h"

/* What one user (or one tenant) taught: ln(run / limit) of its finished jobs that had a limit, and the
 * squared log errors the base predictor (capped at the limit) made on the same jobs. */
typedef struct ds_limit_stat {
    int64_t n;
    double sum, sumsq;  /* of ln(run / limit) */
    double base_sse;    /* of ln(run) - ln(min(base, limit)) */
} ds_limit_stat_t;

typedef struct ds_limits {
    ds_strtab_t keys;   /* "tenant/user" and "tenant" */
    ds_limit_stat_t *st;
    int32_t cap;
    int min_history;    /* finished jobs with a limit a key needs before its ratio is trusted (at least 2) */
    int64_t last_now;   /* a replay that starts over (time going back) forgets what the last one taught */
} ds_limits_t;

void ds_limits_init(ds_limits_t *l, int min_history);
void ds_limits_free(ds_limits_t *l);
/* Forgets everything learned (a new replay). */
void ds_limits_reset(ds_limits_t *l);
/* Learns one finished job of tenant and user (user NULL or "": the tenant only) that ran seconds under a
 * limit of limit seconds (<= 0: none, nothing to learn), which the base predictor had put at base seconds. */
void ds_limits_learn(ds_limits_t *l, const char *tenant, const char *user, double seconds, double limit,
                     double base);
/* The prediction for a job with this limit (<= 0: none: base unchanged): the ratio's when the user's (else
 * the tenant's) ratio had the smaller mean squared log error over at least min_history jobs, else the base's;
 * never above the limit. */
double ds_limits_predict(const ds_limits_t *l, const char *tenant, const char *user, double limit, double base);

/* A runtime predictor that is base with the trace's time limits (ds_job_t.limit) applied as above; base's
 * remaining and beyond pass through, capped by what the limit leaves. The state lives per calling thread
 * (as the learned models' does), so concurrent replays never share it; w must outlive every replay. */
typedef struct ds_limits_wrap ds_limits_wrap_t;
ds_limits_wrap_t *ds_limits_wrap(ds_runtime_predictor_t *out, const ds_runtime_predictor_t *base, int min_history);
void ds_limits_wrap_free(ds_limits_wrap_t *w);

#endif
