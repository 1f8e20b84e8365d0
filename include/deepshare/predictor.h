/* predictor.h: the two prediction interfaces the policies call (job runtime, colocation retention),
 * and their oracle implementations. Models (src/predict/) implement the same interfaces. */
#ifndef DS_PREDICTOR_H
#define DS_PREDICTOR_H

#include "deepshare/trace.h"

struct ds_coloc; /* the measured profile (deepshare/coloc.h, io layer): only the oracle takes one */

/* Predicted total exclusive run time of a job, in seconds, from what is known at its submit time.
 * observe_finish is called when a job finishes (online learning); a model must never use a job
 * whose finish it has not been told about. */
typedef struct ds_runtime_predictor {
    const char *name;  /* "oracle", "model", "file" */
    void *ctx;
    double (*predict)(void *ctx, const ds_trace_t *t, int32_t job, int64_t now);
    void (*observe_finish)(void *ctx, const ds_trace_t *t, int32_t job, int64_t now); /* optional */
    /* Optional: remaining run time of a running job predicted at pred seconds that has run elapsed
     * seconds; absent: max(pred - elapsed, 1). */
    double (*remaining)(void *ctx, const ds_trace_t *t, int32_t job, double pred, int64_t elapsed);
    /* Optional: what the predictor's own recent errors say remains of a job predicted at pred seconds
     * that has run elapsed seconds (the median over recent jobs' durations, scaled to pred, that
     * exceeded elapsed, less elapsed); < 0 while it has too few errors to say. */
    double (*beyond)(void *ctx, double pred, int64_t elapsed);
    /* Optional, batch evidence (docs/predictors.md): jobs one owner submits in one burst with one GPU count
     * (a sweep, an array) run about as long as each other. batch_total: the estimate of a job's total run
     * time from its finished siblings, given it has run elapsed s; < 0 while none has finished (or it has
     * outrun them so far that they say nothing). batch_revised: after observe_finish(job), the unfinished
     * siblings whose batch_total that finish changed (*n of them; valid until the next observe_finish). */
    double (*batch_total)(void *ctx, const ds_trace_t *t, int32_t job, int64_t elapsed);
    const int32_t *(*batch_revised)(void *ctx, const ds_trace_t *t, int32_t job, int32_t *n);
} ds_runtime_predictor_t;

/* Predicted retention (colocated / exclusive throughput) of job a when it shares a GPU with job b. */
typedef struct ds_interference_predictor {
    const char *name;  /* "oracle", "model" */
    void *ctx;
    double (*predict)(void *ctx, const ds_trace_t *t, int32_t a, int32_t b);
    /* Optional: how uncertain predict is about a beside b, in retention units (the forest: the standard
     * deviation of its trees' predictions, ~0.03 on pairs like those it learned from, ~0.1 on others);
     * NULL when predict reads measurements. DeepShare probes a pair nobody has measured yet on
     * predict + probe_z x this (docs/policy.md §5). */
    double (*uncertainty)(void *ctx, const ds_trace_t *t, int32_t a, int32_t b);
    /* Optional (heterogeneous clusters): predict and uncertainty on a GPU of type gtype; NULL: the
     * type-blind ones above. */
    double (*predict_on)(void *ctx, const ds_trace_t *t, int32_t a, int32_t b, int32_t gtype);
    double (*uncertainty_on)(void *ctx, const ds_trace_t *t, int32_t a, int32_t b, int32_t gtype);
} ds_interference_predictor_t;

/* Predicted progress rate of a job on a GPU type relative to the type its duration was measured on
 * (heterogeneous clusters; docs/heterogeneous.md): how much faster (> 1) or slower it runs there. */
typedef struct ds_speed_predictor {
    const char *name;  /* "table" */
    void *ctx;
    double (*rate)(void *ctx, const ds_trace_t *t, int32_t job, int32_t gtype);
} ds_speed_predictor_t;

typedef struct ds_predictors {
    const ds_runtime_predictor_t *runtime;            /* NULL: the policy uses the oracle */
    const ds_interference_predictor_t *interference;  /* NULL: the policy uses the oracle */
    const ds_speed_predictor_t *speed;                /* NULL: every type runs every job at rate 1 */
} ds_predictors_t;

/* Oracle runtime: the job's true duration (simulation only, for upper bounds and until models exist). */
void ds_runtime_oracle(ds_runtime_predictor_t *p);
/* Estimate-file runtime: the job's estimate from --estimates (falls back to the oracle when absent). */
void ds_runtime_from_estimates(ds_runtime_predictor_t *p);
/* Oracle interference: the measured profile (ground truth), coloc->missing_rho for unprofiled pairs; per GPU
 * type (predict_on) when the profile is typed. */
void ds_interference_oracle(ds_interference_predictor_t *p, const struct ds_coloc *coloc);
/* Speeds from the measured table (data/gavel/speeds.csv): what every policy knows of GPU types, as Gavel's
 * throughput matrix is profiled (docs/heterogeneous.md). */
struct ds_speeds;
void ds_speed_from_table(ds_speed_predictor_t *p, const struct ds_speeds *s);

#endif
