/* sim.h: the event-driven trace simulator (a driver of the engine) and the metrics of one run. */
#ifndef DS_SIM_H
#define DS_SIM_H
/* layering (CMakeLists.txt): the sim layer's header, out of reach of the layers below it */
#if defined(DS_LAYER_BASE) || defined(DS_LAYER_ENGINE) || defined(DS_LAYER_IO)
#error "deepshare/sim.h belongs to the sim layer: this layer may not include it (see CMakeLists.txt)"
#endif

#include "deepshare/coloc.h"
#include "deepshare/engine.h"
#include "deepshare/policy.h"
#include "deepshare/speeds.h"

typedef struct ds_sim_config {
    ds_engine_config_t engine;
    const ds_policy_ops_t *policy;
    const void *policy_config;
    const ds_coloc_t *coloc;     /* ground-truth retention for shared GPUs; NULL: every pair keeps rate 1 */
    const ds_speeds_t *speeds;   /* ground-truth speed of a job per GPU type (typed clusters); NULL: rate 1 on every type */
    int64_t window_start;        /* utilization window; -1: first submit's day start */
    int64_t window_end;          /* -1: last submit rounded up to a day */
    int64_t cycle;               /* metrics sampling and QAD cycle, seconds (60) */
    double qad_lambda;           /* smoothing of the reported QAD (0.3) */
    double qad_theta;            /* compliance threshold (0.95) */
    double noise_sigma;          /* lognormal noise of observed retention (0.05) */
    uint64_t seed;
    /* Graceful preemption (deepshared's `grace`): a preempted job runs on for this many seconds on its GPUs,
     * signalled, before it leaves them; no other job starts there and it cannot restart before. It resumes
     * from its last checkpoint as of its end. 0: it leaves at once. */
    int64_t grace;
    /* With a grace: every victim writes a checkpoint on the signal, taking this many s (its progress as of
     * the signal: nothing is rolled back; the save's GPU-time is lost), then leaves its GPUs. -1 (default):
     * it does not, and resumes from its last periodic checkpoint; a save longer than the grace does not
     * finish (the same). */
    int64_t grace_save;
    int check_invariants;        /* run ds_engine_check after every scheduling pass */
    int keep_series;             /* record the per-cycle time series */
    int keep_events;             /* record every decision (ds_sim_event_t; --out's events.csv) */
    /* The restart rules of the live Slurm cluster deepshared drives (src/sim/restarts.h; 0: off, as the
     * reference simulators): a requeued job restarts only on the GPU indices of its first start, of any
     * node (1: every job; 2: one-GPU jobs only, deepshared's shard jobs, which Slurm 22.05 starts only on
     * the index of their first shard), and not within requeue_settle seconds of its requeue (slurmd
     * refuses a start that soon). */
    int restart_pinned;
    int64_t requeue_settle;
    /* Called after every scheduling pass once its decisions are applied (NULL: none), read-only: the CLI's
     * --explain JOB asks the policy about one job there (ops->explain). */
    void (*after_pass)(void *ctx, const ds_engine_t *e, int64_t now);
    void *after_pass_ctx;
} ds_sim_config_t;

void ds_sim_config_default(ds_sim_config_t *c);

typedef struct ds_dist {
    double avg, p50, p95, p99, p999;
} ds_dist_t;

typedef struct ds_tenant_result {
    char name[64];
    int32_t quota_gpus;
    int64_t jobs;
    ds_dist_t jct, queue;
    double qad_mean;         /* mean smoothed reported QAD (all GPUs held) over cycles with demand */
    double qad_compliance;   /* share of those cycles with smoothed reported QAD >= theta */
    double qad_compliance_g; /* the same with G GPUs only (DeepShare's internal signal) */
    int64_t preemptions;
} ds_tenant_result_t;

/* One row per cycle. */
typedef struct ds_sample {
    int64_t time;
    int32_t busy_gpus, idle_gpus, running_jobs, pending_jobs;
    int64_t pending_gpus;
    float sm_util, gmem_util;     /* [0,1] over all GPUs */
    int64_t preemptions, colocations; /* cumulative */
} ds_sample_t;

/* One decision as the simulator applied it, with the job's class right after it; a finish is logged as
 * DS_SIM_EV_FINISH, with the class the job ended in. */
#define DS_SIM_EV_FINISH 0
typedef struct ds_sim_event {
    int64_t time;
    int32_t type;     /* ds_dec_type_t */
    int32_t job, other; /* trace indices; other: the partner of a shared start, the kept job of a revocation, or -1 */
    int32_t reason;   /* the policy's code (DeepShare: 1 reclaim, 2 revocation) */
    uint8_t klass;    /* DS_CLASS_G / DS_CLASS_BE, 0 for classless policies */
} ds_sim_event_t;

typedef struct ds_sim_result {
    char policy[32];
    ds_mode_t mode;
    int64_t jobs;
    ds_dist_t jct, queue;
    int64_t makespan;           /* last end - window start */
    double gpu_alloc, sm_util, gmem_util;
    int64_t preemptions, colocated_jobs, colocations, revocations;
    int64_t starts_taken_back;  /* starts the restart rules could not carry out (restart_pinned, requeue_settle) */
    /* GPU-hours preemptions cost: work done again since the victims' last checkpoints plus restart
     * overheads (lost), and the first part alone (rollback); x GPUs of the victim */
    double lost_gpu_hours, rollback_gpu_hours;
    double qad_mean, qad_compliance, qad_compliance_all, qad_compliance_g;
    int64_t total_gpus;
    int64_t window_start, window_end;
    double wall_seconds;        /* filled by the caller if it times the run */
    /* per tenant */
    ds_tenant_result_t *tenants;
    int32_t ntenants;
    /* per job (trace order) */
    int64_t *submit, *start, *end, *queued, *queued_g, *queued_be;
    int32_t *preempts;
    uint8_t *colocated;
    int8_t *gtype;              /* typed clusters: the GPU type of its last run (NULL on a cluster of one type) */
    /* decisions, when keep_events */
    ds_sim_event_t *events;
    int64_t nevents;
    /* time series */
    ds_sample_t *series;
    int64_t nseries;
    float *qad, *qad_smooth;    /* nseries x ntenants */
    int32_t *tusage;            /* nseries x ntenants x 3: GPUs held as G, held as BE, pending (the usage report) */
    /* the policy's own counters (ops->stats) at the end of the run */
    ds_policy_stat_t pstats[48];
    int32_t npstats;
    /* invariant failure, empty when none */
    char invariant_error[320];
} ds_sim_result_t;

/* Runs the whole trace. Returns 0, or an error (err filled) when the configuration is unusable or an
 * invariant broke (check_invariants). */
int ds_sim_run(const ds_trace_t *trace, const ds_sim_config_t *cfg, ds_sim_result_t *res, ds_error_t *err);
void ds_sim_result_free(ds_sim_result_t *r);

/* Distribution of n values (copied and sorted internally). */
ds_dist_t ds_dist_of(const double *v, int64_t n);

#endif
