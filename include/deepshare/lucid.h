/* lucid.h: the Lucid baseline (ASPLOS'23): its parameter object, the two input tables it needs beyond
 * the trace (sharing scores, cluster throughput prediction), and its profiler, which is a pure
 * function of the trace so that tests and the policy share one implementation. */
#ifndef DS_LUCID_H
#define DS_LUCID_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deepshare/common.h"
#include "deepshare/trace.h"

/* Sharing score (Lucid's packing-analysis label, 0..2) of one workload: single_data.csv. */
typedef struct ds_lucid_label {
    char model[32], dataset[32];
    int32_t batch, amp;
    int32_t label;
} ds_lucid_label_t;

/* All the sharing scores of a file. */
typedef struct ds_lucid_labels {
    ds_lucid_label_t *v;
    int32_t n;
} ds_lucid_labels_t;

/* Predicted cluster throughput per time bin (Venus_throughput_pred.csv). Times are Unix seconds when
 * the file holds date-times (is_datetime), otherwise already in the trace clock. */
typedef struct ds_lucid_series {
    int64_t *time;
    double *pred_jobs;  /* pred_gpu_job: predicted GPU-job submissions per bin (the sharing switch) */
    double *pred_gpus;  /* pred_gpu_num: predicted GPUs requested per bin (the profiler's scale-down) */
    int32_t n;
    int is_datetime;
} ds_lucid_series_t;

/* Frees a series' arrays and empties it. */
static inline void ds_lucid_series_free(ds_lucid_series_t *s)
{
    free(s->time);
    free(s->pred_jobs);
    free(s->pred_gpus);
    memset(s, 0, sizeof *s);
}

typedef struct ds_lucid_config {
    /* inputs (the policy's inputs "lucid-single" and "lucid-throughput", read by the driver through
     * ds_input_set, deepshare/inputs.h); n == 0: absent */
    ds_lucid_label_t *labels;
    int32_t nlabels;
    ds_lucid_series_t series;
    int64_t clock_origin;     /* Unix time of trace clock 0 (Venus: 2020-04-01 00:00:00 UTC) */
    /* packing */
    int32_t default_score;    /* score of a workload absent from the labels (or of all, without them) */
    int32_t score_limit;      /* a pair's scores must sum to at most this: 2 */
    double prio_factor;       /* the job's priority may be at most this times its partner's: 2 */
    int reference_pairing;    /* 1: as the reference simulator, a guest whose host finishes first keeps
                                 its packed speed and never hosts (0: it is restored) */
    int reference_timing;     /* 1: as the reference, a job in a tenant partition completes one second
                                 after its work is done (the reference steps work, then checks ends) */
    int reference_queue;      /* 1: as the reference, a profiled job's wait for the profiler counts in its
                                 queueing delay although it queues in its tenant's partition meanwhile */
    /* adaptive sharing switch */
    int64_t pas_period;       /* seconds between checks: 100 */
    int32_t pas_bins;         /* bins averaged after the check time: 5 (50 minutes of 10-minute bins) */
    double pas_threshold;     /* sharing off when the average is at most this: 2 */
    /* profiler */
    int profiler;             /* 1: profile small jobs first */
    int32_t prof_nodes;       /* nodes lent to the profiler: 2 */
    int64_t prof_time;        /* seconds a job is profiled: 200 */
    int32_t prof_gpu_limit;   /* largest job profiled, in GPUs: 8 */
    char prof_lenders[256];   /* comma-separated tenants lending one node each ("vc8Gr,vcefl") */
    char prof_scale_tenant[64]; /* tenant whose node the profiler borrows when it scales up ("vcYVn"),
                                   "none" disables scaling */
    int32_t prof_scale_queue;   /* scale up when more jobs than this wait (checked every 10 s): 10 */
    int32_t prof_scale_down_queue; /* scale down when fewer than this wait (checked every 100 s): 5 */
    double prof_scale_down_factor; /* ... and predicted GPUs per bin <= factor x gpu limit: 5 */
} ds_lucid_config_t;

/* Parameter object (the policy's config_new/config_free/config_set/config_help, src/policy/lucid_config.c).
 * The two tables arrive parsed through config_input (the policy's inputs, ds_input_set reads them);
 * config_set refuses their keys. */
void *ds_lucid_config_new(void);
void ds_lucid_config_free(void *config);
int ds_lucid_config_set(void *config, const char *key, const char *value, ds_error_t *err);
/* Takes a ds_lucid_labels_t for "lucid-single" or a ds_lucid_series_t for "lucid-throughput" (malloc'd;
 * it replaces the config's table, and is freed here whatever the outcome). */
int ds_lucid_config_input(void *config, const char *key, void *table, ds_error_t *err);
void ds_lucid_config_help(FILE *f);

/* Readers of the io layer (src/trace/lucid_inputs.c): fill *out (freed again on error). */
int ds_lucid_read_labels(const char *path, ds_lucid_labels_t *out, ds_error_t *err);
int ds_lucid_read_series(const char *path, ds_lucid_series_t *out, ds_error_t *err);

/* Trace-clock time of series bin i. */
int64_t ds_lucid_series_time(const ds_lucid_config_t *c, int32_t i);
/* Mean of pred_jobs (which = 0) or pred_gpus (which = 1) over the first c->pas_bins bins strictly
 * after t; fallback when no bin lies after t (or there is no series). */
double ds_lucid_future_mean(const ds_lucid_config_t *c, int64_t t, int which, double fallback);

/* The profiler's outcome for one trace (pure, deterministic). */
typedef struct ds_lucid_prof {
    int64_t *start;      /* per job: profiling start, -1 when not profiled */
    int64_t *queue;      /* per job: seconds waited for the profiler (0 when not profiled) */
    uint8_t *done;       /* per job: 1 when it finished inside the profiler (duration <= prof_time) */
    int8_t *slot;        /* per job: profiler node slot it ran on (0..prof_nodes), -1 when none */
    int64_t *scale_time; /* profiler scaling events, ascending */
    int8_t *scale_delta; /* +1: the profiler borrowed a node; -1: it gave it back */
    int32_t nscale;
    int64_t profiled, finished, scale_up_seconds;
} ds_lucid_prof_t;

/* Runs the profiler over the whole trace: least-GPU-first with head-of-line blocking on prof_nodes
 * nodes of gpus_per_node GPUs, each job of at most prof_gpu_limit GPUs for min(duration, prof_time)
 * seconds; with scaling it adds one node while more than prof_scale_queue jobs wait and gives it back
 * when the queue is short and the predicted load low. wall (NULL: each job's duration) gives each job's run time
 * on the profiler's nodes, -1 for a job that may not run there (typed clusters). */
void ds_lucid_profile(ds_lucid_prof_t *out, const ds_trace_t *t, const ds_lucid_config_t *c, int32_t gpus_per_node,
                      int scaling, const int64_t *wall);
void ds_lucid_prof_free(ds_lucid_prof_t *p);

/* Sharing score of each job of the trace (labels looked up by model, dataset, batch size, amp). */
void ds_lucid_scores(const ds_lucid_config_t *c, const ds_trace_t *t, int8_t *out);

#endif
