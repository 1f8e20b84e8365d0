/* observed.h: scoring an observed schedule (what a live cluster did with a trace, written by
 * 'deepshare replay-live' as observed.csv) with the simulator's own metric code: the jobs are replayed
 * through the engine by the 'replay' policy exactly as they ran, so queueing delay, JCT, GPU allocation,
 * QAD compliance and preemptions mean for a live run what they mean for a simulated one. */
#ifndef DS_CLI_OBSERVED_H
#define DS_CLI_OBSERVED_H

#include "deepshare/replay.h"
#include "deepshare/sim.h"
#include "deepshare/trace.h"

/* observed.csv: one row per run of a job, times in trace seconds (the replay's wall clock times the
 * compression, from the trace's first submit). Columns: job_id (the trace's), submit, start, end, node
 * (0-based, -1 unknown), class (G or BE), last (1 for the run that completed the job); others are
 * ignored. A job of the trace with no row, or whose rows have no last run, did not complete and is left
 * out of the score (counted in dropped). */
typedef struct ds_observed {
    ds_trace_t trace;   /* the trace as run: observed submits, durations = the work of the observed runs */
    ds_spell_t *spells;
    int64_t *first;
    ds_script_t script;
    int32_t *orig;      /* per job of .trace: its index in the trace given to ds_observed_read */
    int32_t dropped;    /* jobs of that trace left out (no completed run) */
    int64_t runs, requeues;
} ds_observed_t;

/* Reads path against the trace it replayed. Returns DS_OK or an error naming file, line and column. */
int ds_observed_read(ds_observed_t *o, const ds_trace_t *t, const char *path, ds_error_t *err);
/* Scores the observed schedule: base's cluster and metric settings (gpus_per_node, pool_nodes, cycle,
 * window, QAD settings) in pooled mode; the result's policy name becomes label. */
int ds_observed_score(const ds_observed_t *o, const ds_sim_config_t *base, const char *label, ds_sim_result_t *res,
                      ds_error_t *err);
void ds_observed_free(ds_observed_t *o);

#endif
