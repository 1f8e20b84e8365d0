/* speeds.h: the speed table of a heterogeneous cluster: each workload's measured throughput on each GPU
 * type (converted from Gavel's tables, data/gavel/), and a job's progress rate on a type relative to the
 * type its duration was measured on (docs/heterogeneous.md). The simulator's ground truth for typed nodes. */
#ifndef DS_SPEEDS_H
#define DS_SPEEDS_H
/* layering (CMakeLists.txt): the io layer's header, out of reach of the layers below it */
#if defined(DS_LAYER_BASE) || defined(DS_LAYER_ENGINE)
#error "deepshare/speeds.h belongs to the io layer: this layer may not include it (see CMakeLists.txt)"
#endif

#include "deepshare/trace.h"

#define DS_SPEEDS_MAX_ROWS 16000  /* Gavel's tables have 26 workloads x 4 GPU counts x 6 types */
#define DS_SPEEDS_MAX_SF 16       /* distinct GPU counts ("scale factors") in one table */

/* One measurement: a workload on n GPUs of one type runs at thr steps (iterations) per second. */
typedef struct ds_speed_row {
    char model[32], dataset[32];
    int32_t batch, amp, gpus;
    char gtype[DS_GTYPE_NAME];
    double thr;
} ds_speed_row_t;

typedef struct ds_speeds {
    ds_speed_row_t *rows;
    int32_t nrows;
    /* bound to one trace by ds_speeds_bind */
    int32_t ncfg, nsf, nty;
    int32_t sf[DS_SPEEDS_MAX_SF];  /* the table's GPU counts, ascending */
    double *thr;                   /* ncfg x nsf x nty: throughput (0: not measured) */
    int32_t *key_of_job;           /* per job: cfg x nsf + sf slot, -1 when the table lacks its workload */
    int32_t njobs;
    /* the bind's lookup of a job's workload: per config its first row and dataset id (-1: any), configs
     * chained by model id (head per model id below nmodels, next per config) */
    int32_t *cfg_row, *cfg_dataset, *head, *next;
    int32_t nmodels;
} ds_speeds_t;

/* Reads "model,dataset,batchsize,amp,gpus,gpu_type,throughput" (dataset, amp, gpus optional: '', 0, 1). */
int ds_speeds_read(ds_speeds_t *s, const char *path, ds_error_t *err);
/* Prepares the per-job lookups for a trace and its node types (call again for another trace). */
void ds_speeds_bind(ds_speeds_t *s, const ds_trace_t *t);
/* A driver that fills a bound trace's jobs later (deepshared's job slots): looks job j's workload up again.
 * Its model and dataset match only names the trace had at the bind: call ds_speeds_intern first. */
void ds_speeds_bind_job(ds_speeds_t *s, const ds_trace_t *t, int32_t j);
/* Interns every model and dataset name of the table in the trace (before ds_speeds_bind), so that jobs
 * named after the bind find their workload. */
void ds_speeds_intern(const ds_speeds_t *s, ds_trace_t *t);
/* Job j's rate on type gtype: its throughput there over its throughput on its reference type (its
 * duration's), both at the table's GPU count nearest below its own; 1 when either is not measured. */
double ds_speeds_rate(const ds_speeds_t *s, const ds_trace_t *t, int32_t job, int32_t gtype);
/* Whether the table has job j's workload on gtype. */
int ds_speeds_known(const ds_speeds_t *s, int32_t job, int32_t gtype);
/* Effective GPUs of one GPU of gtype: the harmonic mean, over the table's workloads measured on both at one
 * GPU, of their throughput there over the trace's reference type's (the rate at which it delivers equal work
 * of each); 1 when none is (docs/heterogeneous.md). */
double ds_speeds_type_weight(const ds_speeds_t *s, const ds_trace_t *t, int32_t gtype);
/* Distinct workloads (model, dataset, batch, amp) measured at one GPU on every type of the trace, in table
 * order: what a synthetic workload over these types may draw from. Writes up to max row indices. */
int32_t ds_speeds_workloads(const ds_speeds_t *s, const ds_trace_t *t, int32_t *rows, int32_t max);
void ds_speeds_free(ds_speeds_t *s);

#endif
