/* rtmodel.h: deepshared's runtime predictor when runtime_model = boosted (the default): the simulator's
 * online gradient-boosted model (deepshare/models.h, docs/predictors.md) learning from the journal and the
 * jobs that finish, with the jobs' time limits applied as the simulator applies them (deepshare/limits.h),
 * so that the policy sees in Slurm what it sees in a replay. The model keeps its own table of the jobs it
 * has predicted and learned, keyed by Slurm job id (the engine's slots are renumbered at each rebuild),
 * bounded by dropping all but the latest finished jobs (and those of a waiting job's batch) when it grows
 * past four training windows. Batch
 * evidence (docs/predictors.md, "Batch evidence") as in the simulator: a user's jobs of one GPU count
 * submitted within batch_gap s of each other are one batch, and its finished runs revise the others. */
#ifndef DS_RTMODEL_H
#define DS_RTMODEL_H

#include "deepshare/idmap.h"
#include "deepshare/limits.h"
#include "deepshare/models.h"
#include "deepshare/predictor.h"
#include "deepshare/trace.h"

typedef struct rtmodel {
    ds_trace_t t;                /* the jobs predicted (pending and running) and learned (finished) */
    ds_idmap_t byid;             /* Slurm job id -> row of t, for rows not finished when last compacted */
    uint8_t *fin;                /* per row: learned (its duration is the run time) */
    int64_t *end;                /* per row: when it finished */
    int32_t rcap;
    ds_runtime_model_t *m;
    ds_runtime_model_config_t mc;
    ds_limits_t lim;
    double default_runtime;      /* before anything has finished */
    int64_t now;                 /* latest time seen: the model's clock never goes back */
    int64_t learned;             /* finished jobs learned, over the daemon's life */
    int64_t compactions;
    int32_t max_rows;            /* compaction threshold */
    int32_t rev_row;             /* the row learned last, whose siblings batch_revised names (-1: none) */
    int32_t *rev, rcap_rev;      /* batch_revised's answer: engine slots */
} rtmodel_t;

/* min_history: finished jobs a user's limits need before their ratio is trusted; batch_gap: seconds between
 * submissions of one batch (0: no batch evidence); log: where the model's one-time notes go (may be NULL). */
void rtmodel_init(rtmodel_t *r, int min_history, double default_runtime, int64_t batch_gap,
                  void (*log)(void *ctx, const char *msg), void *log_ctx);
void rtmodel_free(rtmodel_t *r);
/* A finished job: its run time (seconds) joins the history; end is its end (Unix seconds); submit 0 when
 * not known; limit 0 when none. Safe to call for a job the model has never predicted (a journal record). */
void rtmodel_learn(rtmodel_t *r, uint32_t slurm_id, const char *tenant, const char *user, int gpus, double seconds,
                   int64_t end, int64_t submit, double limit);
/* Predicted run time (seconds, >= 1) of job j of trace t (a daemon trace: ds_job_t.id is the Slurm id),
 * features taken at its first prediction. */
double rtmodel_predict(rtmodel_t *r, const ds_trace_t *t, int32_t j, int64_t now);
/* The row of job j of trace t, added (as at its first prediction) when the table has none: a compaction drops
 * the oldest waiting rows. */
int32_t rtmodel_row(rtmodel_t *r, const ds_trace_t *t, int32_t j);
/* Batch evidence on engine slots (rtmodel_engine.c): the estimate of job j's total run time from its finished
 * siblings given it has run elapsed s (< 0: none yet, or not in use), capped at its time limit; and after the
 * finish of j was learned (rtmodel_learn, then the engine's finish), the slots of t holding its unfinished
 * siblings (*n; valid until the next call). */
double rtmodel_batch_total(rtmodel_t *r, const ds_trace_t *t, int32_t j, int64_t elapsed);
const int32_t *rtmodel_batch_revised(rtmodel_t *r, const ds_trace_t *t, int32_t j, int32_t *n);
/* The engine-facing predictor (name "boosted"): predict, the model's error-conditional remaining time, and
 * batch evidence when batch_gap > 0. */
void rtmodel_predictor(ds_runtime_predictor_t *p, rtmodel_t *r);

#endif
