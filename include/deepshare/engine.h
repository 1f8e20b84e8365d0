/* engine.h: the pure scheduling engine: cluster state, job run state, partitions, placement and the
 * decisions a policy makes. No I/O and no clock: drivers (simulator, Slurm daemon) feed it events
 * and the current time, and read back its decisions. */
#ifndef DS_ENGINE_H
#define DS_ENGINE_H
/* layering (CMakeLists.txt): the engine layer's header, out of reach of the layers below it */
#if defined(DS_LAYER_BASE)
#error "deepshare/engine.h belongs to the engine layer: this layer may not include it (see CMakeLists.txt)"
#endif

#include "deepshare/common.h"
#include "deepshare/trace.h"

#define DS_MAX_K 4            /* hard upper bound on residents per GPU */
#define DS_MAX_GPUS_PER_NODE DS_MAX_NODE_GPUS

typedef enum { DS_MODE_PARTITIONED = 0, DS_MODE_POOLED = 1 } ds_mode_t;

/* How ds_engine_find_free chooses among a heterogeneous cluster's GPU types for a job that may run on
 * several (docs/heterogeneous.md). */
typedef enum {
    DS_TYPES_BLIND = 0,   /* type-blind, as the research baselines are published: the fullest node that fits
                             on any type, ties lowest index (so the cluster's type order) */
    DS_TYPES_FASTEST = 1  /* type-aware first fit: the job's fastest type by the speed predictor first */
} ds_type_order_t;

struct ds_predictors;

typedef struct ds_engine_config {
    ds_mode_t mode;
    int32_t gpus_per_node;  /* 8 */
    int32_t cpus_per_node;  /* 96 */
    int64_t mem_per_node;   /* MiB, 0 = unlimited */
    int32_t gmem_per_gpu;   /* MiB, 24576 */
    int32_t k;              /* residents per GPU, 2 */
    int enforce_cpu;        /* check node CPUs at placement (the reference simulator does not) */
    int32_t restart_small;  /* preemption overhead, seconds, jobs of <= 8 GPUs: 40 */
    int32_t restart_large;  /* and above 8 GPUs: 60 */
    int32_t ckpt_default;   /* checkpoint interval, s, of jobs that declare none (ds_job_t.ckpt); 0 = unknown:
                               the policy then counts the whole run as at risk, the simulator keeps the
                               progress (the reference simulators' model) -- ds_engine_at_risk */
    const struct ds_predictors *predictors; /* what policies may use to predict; NULL: oracles */
    int32_t pool_nodes;     /* pooled mode: nodes of the pool; 0 = enough for the sum of quotas */
    int32_t type_order;     /* ds_type_order_t: GPU type choice of ds_engine_find_free (DS_TYPES_BLIND) */
} ds_engine_config_t;

void ds_engine_config_default(ds_engine_config_t *c);

typedef struct ds_gpu {
    int32_t res[DS_MAX_K];  /* resident job indices */
    int32_t nres;
    int32_t node;
    int32_t gmem_used;
    float util_sum;         /* sum of residents' gpu_util (percent) */
    float gmem_util_sum;    /* sum of residents' gmem_util (percent) */
} ds_gpu_t;

typedef struct ds_node {
    int32_t part;
    int32_t gtype;   /* its GPU type (index into trace->gtypes; 0 on a cluster of one kind of node) */
    int32_t gpu0;    /* index of its first GPU in engine->gpus */
    int32_t ngpus;
    int32_t nfree;   /* GPUs with no resident */
    int32_t cpus_total, cpus_used;
    int64_t mem_total, mem_used;
    uint8_t down;    /* out of service (ds_engine_set_node_down): its idle GPUs count as not free (nfree 0) */
} ds_node_t;

/* A partition is a set of nodes scheduled by one queue: a tenant's own nodes in partitioned mode,
 * the whole cluster in pooled mode, and policy-specific ones (Lucid's profiler). */
typedef struct ds_part {
    char name[64];
    int32_t node0, nnodes;
    int32_t gpus_total;
    int32_t gpus_free;   /* GPUs with no resident */
    int32_t npending;    /* jobs pending in this partition */
    int dirty;           /* something changed since its last schedule pass */
    int no_util;         /* left out of utilization figures (Lucid's profiler nodes) */
    /* its nodes by GPU type: type t holds nodes tnode0[t] .. + tnnodes[t] (contiguous, in type order) */
    int32_t tnode0[DS_MAX_GPU_TYPES], tnnodes[DS_MAX_GPU_TYPES];
    int32_t tgpus_total[DS_MAX_GPU_TYPES], tgpus_free[DS_MAX_GPU_TYPES];
} ds_part_t;

typedef enum { DS_JS_FUTURE = 0, DS_JS_PENDING, DS_JS_RUNNING, DS_JS_DONE } ds_jstatus_t;

/* A job's run state, owned by the engine. */
typedef struct ds_jstate {
    uint8_t status;       /* ds_jstatus_t */
    uint8_t klass;        /* current class (DeepShare): DS_CLASS_G or DS_CLASS_BE; 0 for other policies */
    uint8_t shared;       /* 1 while any of its GPUs has another resident */
    uint8_t keep_rate;    /* set by the policy: once alone again it keeps its colocated rate (Lucid's
                             reference simulator never restores a packed job's speed) */
    uint8_t finish_lag;   /* set by the policy: seconds between the end of its work and its completion
                             (1 reproduces Lucid's reference, which steps work before checking ends) */
    uint8_t held;         /* pending, but the driver cannot start it yet (ds_engine_hold): no policy
                             starts, places, reserves for or preempts on behalf of it */
    int32_t part;         /* partition it queues and runs in */
    int32_t nplaced;      /* GPUs held (0 when not running) */
    int32_t preemptions;
    int64_t arrival_seq;  /* order stamp: arrival or requeue order, for stable ties */
    int64_t first_start;  /* -1 before its first start */
    int64_t last_start;
    int64_t pend_since;
    int64_t queued;       /* total pending seconds so far (excluding the current pending spell) */
    int64_t queued_g;     /* ...of which while its class was G, and BE (DeepShare classes pending jobs each
                             pass; the rest it spent unclassified; both stay 0 under other policies) */
    int64_t queued_be;
    int64_t class_since;  /* start of the current pending stretch in one class */
    int64_t run_time;     /* wall seconds run before last_start */
    int64_t end;          /* -1 until done */
    double overhead;      /* restart overheads added so far, seconds of work */
    int32_t partner;      /* a co-resident job while shared, -1 otherwise */
    float cpu_scale;      /* share of its CPU/memory request it holds (CPU reclamation); 0 means 1 */
} ds_jstate_t;

typedef enum {
    DS_DEC_START = 1,     /* job started (possibly on shared GPUs) */
    DS_DEC_PREEMPT,       /* job stopped and requeued with progress kept */
    DS_DEC_PROMOTE,       /* a running BE job became G */
    DS_DEC_REVOKE         /* colocation revoked (the preempted BE partner follows as DS_DEC_PREEMPT) */
} ds_dec_type_t;

typedef struct ds_decision {
    int32_t type;
    int32_t job;
    int32_t other;   /* partner for START on shared GPUs, G job for REVOKE, else -1 */
    int32_t reason;  /* policy-defined reason code */
    int64_t time;
} ds_decision_t;

struct ds_policy_ops;
typedef struct ds_engine ds_engine_t;

/* Driver-provided hooks the engine and policies may call (all optional). */
typedef struct ds_driver_hooks {
    void *ctx;
    /* Observed retention of a running colocated job (simulator: truth x noise; daemon: measured), or NaN
     * when there is no fresh measurement (telemetry missing or stale): a policy must take NaN as no
     * sample, never as a low one. */
    double (*observe_retention)(void *ctx, int32_t job, int64_t now);
} ds_driver_hooks_t;

/* The engine. After libuv's convention its fields come in two groups:
 * - read-only: policies (src/policy, part of the engine) and drivers read them; only the engine's own
 *   functions write them. Drivers (src/sim, src/daemon) read them through the accessors below and
 *   change them only through the driver events; a test (driver_writes) fails the build's tests when
 *   a driver assigns an engine field.
 * - private (priv): the engine's own bookkeeping, for src/core alone; drivers use the accessors. */
struct ds_engine {
    /* ---- read-only ---- */
    const ds_trace_t *trace;
    ds_engine_config_t cfg;
    ds_node_t *nodes;
    int32_t nnodes;
    ds_gpu_t *gpus;
    int32_t ngpus;
    ds_part_t *parts;
    int32_t nparts;
    int32_t *tenant_part;   /* partition of each tenant's jobs (written by ops->setup) */
    ds_jstate_t *js;        /* policies write klass via ds_engine_set_class, keep_rate and finish_lag */
    int32_t *jgpus;         /* GPUs held by job j: jgpus[jgpu_off[j] .. + js[j].nplaced) */
    int64_t *jgpu_off;
    int64_t now;
    /* per-tenant live accounting (GPUs of running jobs by class; pending GPU demand) */
    int64_t *tenant_g_gpus, *tenant_be_gpus, *tenant_pending_gpus, *tenant_running;
    /* GPU types (1 on a cluster of one kind of node, where the per-type arrays below stay 0): per tenant and
     * type (index tenant x ntypes + type), GPUs held by class and pending GPUs of jobs that ask for that type */
    int32_t ntypes;
    int64_t *tenant_g_gpus_t, *tenant_be_gpus_t, *tenant_pend_t;
    int64_t *tenant_quota_t;  /* per-type quotas (tenant x ntypes); they sum to tenant_quota */
    /* quota GPUs per tenant: the trace's at create, then what ds_engine_set_quota sets (policies read
     * quotas here, never from the trace, so that a driver can change one without a new engine) */
    int64_t *tenant_quota;
    /* utilization now: GPUs with a resident, sum over GPUs of min(100, residents' util) */
    int64_t util_busy;
    double util_sm, util_gmem;
    /* totals */
    int64_t n_preemptions, n_colocations, n_revocations, n_finished;
    const struct ds_policy_ops *ops;
    void *pstate;
    const struct ds_predictors *predictors; /* from the config; may be NULL */
    ds_driver_hooks_t hooks;                /* set by the driver (ds_engine_set_hooks) */
    /* ---- private: src/core only ---- */
    struct {
        int64_t seq;            /* last order stamp given */
        ds_decision_t *dec;     /* decisions since the driver last cleared them */
        int32_t ndec, capdec;
        int32_t *rate_dirty;    /* running jobs whose co-residents changed since the driver looked */
        int32_t nrate_dirty;
        uint8_t *is_rate_dirty;
        void *placement;        /* free-GPU buckets per partition (placement.c) */
        int32_t nheld;          /* jobs held now (ds_engine_hold) */
        int32_t type_gpn_default; /* GPUs per node of a type that does not give its own (cfg.gpus_per_node as given) */
    } priv;
};

/* Creates the engine for a trace (which must outlive it) and a policy. The policy may reshape the
 * partitions (ops->setup) before nodes are laid out. */
int ds_engine_create(ds_engine_t **out, const ds_trace_t *trace, const ds_engine_config_t *cfg,
                     const struct ds_policy_ops *ops, const void *policy_config, ds_error_t *err);
void ds_engine_destroy(ds_engine_t *e);

/* Driver events. */
void ds_engine_arrive(ds_engine_t *e, int32_t job, int64_t now);
void ds_engine_finish(ds_engine_t *e, int32_t job, int64_t now);
/* A job the driver found already running on the given GPUs (the Slurm daemon rebuilding its state
 * from the cluster): it becomes running with class klass without ever having been pending, and the
 * policy hears of it through ops->adopt when it has one. job must not have arrived yet. */
void ds_engine_adopt(ds_engine_t *e, int32_t job, const int32_t *gpus, int klass, int64_t now);
/* Moves a running job that shares no GPU to other GPUs holding no job (as many as it has), keeping its
 * run state; the policy is not involved. For drivers whose cluster can only run a job on particular GPUs
 * (the Slurm daemon: a job keeps the GPU indices pinned at its first start). Returns DS_OK or DS_EINVAL. */
int ds_engine_move(ds_engine_t *e, int32_t job, const int32_t *gpus);
/* Moves n such jobs at once, jobs[k] to its nplaced GPUs next in gpus (jobs[0]'s first, then jobs[1]'s, ...):
 * a target may be one another job of the set leaves, so a set can swap GPUs (Slurm started two jobs sent to
 * one node in the other order than the engine placed them). All or nothing: DS_OK, or DS_EINVAL with the
 * engine unchanged. */
int ds_engine_move_many(ds_engine_t *e, int32_t n, const int32_t *jobs, const int32_t *gpus);
/* Takes back a start the driver could not carry out (the Slurm daemon: a dispatch Slurm refused or
 * cannot pin): the job is pending again as if this start had not happened (its pending spell and
 * queue order go on; no preemption, restart overhead or run time is counted). The policy hears
 * ops->cancel_start, or ops->enqueue when it has none, never a preemption. job must be running. */
void ds_engine_cancel_start(ds_engine_t *e, int32_t job, int64_t now);
/* Holds (held = 1) or releases (0) a pending job the driver cannot start yet (the Slurm daemon: a job
 * requeued seconds ago, or one that may only restart on GPU indices that are busy): the policy passes
 * over it as if it were not pending, so the GPUs it would have had go to the next job in the same
 * pass instead of being offered, taken back and left idle. It stays pending (its queueing time runs,
 * its tenant's demand counts); a release marks its partition dirty so the next pass considers it.
 * job must be pending to be held; releasing a job that is not held does nothing. */
void ds_engine_hold(ds_engine_t *e, int32_t job, int held);
/* Withdraws a pending job (the Slurm daemon: its owner cancelled it, held it or moved it to another
 * partition): it becomes DS_JS_FUTURE again, as if it had not arrived yet -- out of its partition's pending
 * count and its tenant's pending GPUs, no longer held -- and the policy takes it out of its bookkeeping
 * (ops->withdraw). Nothing else changes: every other job's state, every other tenant's counters and the
 * policy's per-tenant signals (DeepShare's smoothed QAD) stay as they were, so a cancel costs no rebuild
 * and resets nobody's assurance signal. Its partition is marked dirty (a job it blocked may start). Its own
 * record so far is kept (pending time until now, run time, preemptions), so that it may arrive again
 * (ds_engine_arrive: a hold released) and carry on. job must be pending. */
void ds_engine_withdraw(ds_engine_t *e, int32_t job, int64_t now);
/* Takes a node out of service (down = 1: the Slurm daemon sees it drained, down, failing or not responding)
 * or puts it back (0). While down its GPUs are capacity withdrawn: its idle GPUs, and those its jobs release,
 * leave the free counts (nfree 0, its partition's gpus_free and tgpus_free, the free-GPU index), so no
 * placement helper (ds_engine_find_free*, ds_engine_node_free_gpus, ds_engine_max_node_free) offers them and
 * no policy may start a job there, alone or beside another (ds_engine_start asserts it; a policy that picks
 * GPUs or colocation partners itself checks ds_engine_node_down). Jobs running there keep running (a drain)
 * until the driver finishes or preempts them (Slurm requeued or failed them). Back up, its idle GPUs are free
 * again and its partition is dirty. Nothing changes while no node is down. */
void ds_engine_set_node_down(ds_engine_t *e, int32_t node, int down);
static inline int ds_engine_node_down(const ds_engine_t *e, int32_t node) { return e->nodes[node].down; }
/* Runs the policy on every dirty partition (all partitions when timer is set). */
void ds_engine_schedule(ds_engine_t *e, int64_t now, int timer);
/* Next time the policy wants to run regardless of events, DS_TIME_NEVER if none. */
int64_t ds_engine_next_timer(const ds_engine_t *e, int64_t now);
/* Decisions made since the driver last cleared them (*n of them); it applies them, then clears. */
static inline const ds_decision_t *ds_engine_decisions(const ds_engine_t *e, int32_t *n)
{
    *n = e->priv.ndec;
    return e->priv.dec;
}
static inline void ds_engine_clear_decisions(ds_engine_t *e) { e->priv.ndec = 0; }
/* Running jobs whose execution rate may have changed (co-residents came or went) since the driver
 * last cleared them; a job may have stopped since. */
static inline const int32_t *ds_engine_rate_changes(const ds_engine_t *e, int32_t *n)
{
    *n = e->priv.nrate_dirty;
    return e->priv.rate_dirty;
}
void ds_engine_clear_rate_changes(ds_engine_t *e);
/* Installs the driver's hooks (copied); call before the first event. */
void ds_engine_set_hooks(ds_engine_t *e, const ds_driver_hooks_t *hooks);
/* The driver's own count of a job's restarts (Slurm's restart count after a rebuild) becomes its
 * preemption count; nothing else changes. */
void ds_engine_set_preemptions(ds_engine_t *e, int32_t job, int32_t n);

/* Changes a tenant's quota (the Slurm daemon reloading its config): every partition is marked dirty, so
 * the next schedule pass classifies, orders and reclaims against the new quota. Running jobs are not
 * touched: G jobs over a lowered quota keep running as G (no G job is ever preempted) and simply block
 * new G starts of their tenant until they finish. Returns DS_EINVAL (nothing changed) for a tenant out of
 * range, a negative or too large quota, or when the partitions were sized from quotas (partitioned mode,
 * or a policy that lays out its own partitions), since nodes cannot move between partitions. */
int ds_engine_set_quota(ds_engine_t *e, int32_t tenant, int64_t gpus);
/* The same for a typed cluster: the tenant's quota of each type (ntypes values); its total becomes their sum. */
int ds_engine_set_quota_typed(ds_engine_t *e, int32_t tenant, const int64_t *gpus_t);
static inline int64_t ds_engine_quota_t(const ds_engine_t *e, int32_t tenant, int32_t t)
{
    return e->tenant_quota_t[(size_t)tenant * (size_t)e->ntypes + (size_t)t];
}
/* Pending jobs in the order the policy's next pass considers them (ops->pending_order, else arrival
 * order); writes at most max job indices to out and returns how many pending jobs there are. */
int32_t ds_engine_pending_order(const ds_engine_t *e, int32_t *out, int32_t max);

/* Read-only views for drivers: a job's run state, the GPUs it holds, one GPU, a tenant's quota. */
static inline int64_t ds_engine_quota(const ds_engine_t *e, int32_t tenant) { return e->tenant_quota[tenant]; }
static inline const ds_jstate_t *ds_engine_job(const ds_engine_t *e, int32_t job) { return &e->js[job]; }
static inline const int32_t *ds_engine_job_gpus(const ds_engine_t *e, int32_t job)
{
    return &e->jgpus[e->jgpu_off[job]];
}
static inline const ds_gpu_t *ds_engine_gpu(const ds_engine_t *e, int32_t gpu) { return &e->gpus[gpu]; }

/* ---- policy-facing API ---- */

/* Adds a partition of nnodes nodes (only from ops->setup, before nodes are laid out); returns its
 * index. setup must also fill e->tenant_part for every tenant. On a heterogeneous cluster the nodes are of
 * the first type; ds_engine_add_part_typed gives nodes_t[t] nodes of each type t. */
int32_t ds_engine_add_part(ds_engine_t *e, const char *name, int32_t nnodes);
int32_t ds_engine_add_part_typed(ds_engine_t *e, const char *name, const int32_t *nodes_t);
/* Nodes of type t a tenant's quota of that type fills, in whole nodes (the default layouts). */
int32_t ds_engine_quota_nodes(const ds_engine_t *e, int32_t tenant, int32_t t);
/* A node's or a GPU's type, and the GPU memory of a GPU. */
static inline int32_t ds_engine_gpu_type(const ds_engine_t *e, int32_t gpu) { return e->nodes[e->gpus[gpu].node].gtype; }
int32_t ds_engine_gpu_gmem(const ds_engine_t *e, int32_t gpu);
/* GPUs per node of type t (the cluster's node size on a cluster of one kind of node). */
static inline int32_t ds_engine_type_gpus_per_node(const ds_engine_t *e, int32_t t)
{
    int32_t g = e->trace->ngtypes ? e->trace->gtypes[t].gpus_per_node : 0;
    return g > 0 ? g : e->priv.type_gpn_default;
}
/* Whether job j may run on GPU type t: it asks for t or for any type. */
static inline int ds_engine_type_ok(const ds_engine_t *e, int32_t j, int32_t t)
{
    uint32_t m = e->trace->jobs[j].gmask;
    return !m || ((m >> t) & 1u);
}
/* The type of the GPUs a running job holds (a job runs on one type); -1 when it holds none. */
int32_t ds_engine_job_type(const ds_engine_t *e, int32_t j);

/* Finds free GPUs for a job in its partition with consolidated placement (<= gpus_per_node: the
 * fullest node that fits, ties lowest index; larger: whole free nodes, the remainder on the next
 * node with most free GPUs). Writes GPU indices to out (size >= job gpus). Returns 1 if found. */
int ds_engine_find_free(const ds_engine_t *e, int32_t job, int32_t part, int32_t *out);
/* The lowest-index free GPUs of a node, at most want of them, written to out; returns how many (the GPUs
 * every consolidated placement takes on a node it chose). */
int32_t ds_engine_node_free_gpus(const ds_engine_t *e, int32_t node, int32_t want, int32_t *out);
/* The same, never using a node n with blocked[n] set (a policy's reservations); blocked may be NULL. */
int ds_engine_find_free_masked(const ds_engine_t *e, int32_t job, int32_t part, const uint8_t *blocked, int32_t *out);
/* The same on nodes of GPU type t only (a type the job may run on): how type-aware policies choose. */
int ds_engine_find_free_on(const ds_engine_t *e, int32_t job, int32_t part, int32_t t, const uint8_t *blocked,
                           int32_t *out);
/* The types job j may run on, in the order ds_engine_find_free tries them under cfg.type_order (for
 * DS_TYPES_FASTEST: by the speed predictor, fastest first, ties in type order); returns how many. */
int32_t ds_engine_type_order(const ds_engine_t *e, int32_t job, int32_t *types);
/* Job j's predicted progress rate on type t relative to its duration's reference type (the speed predictor,
 * 1 without one). */
double ds_engine_speed(const ds_engine_t *e, int32_t job, int32_t t);
/* The most free GPUs on one node of the partition, and (when whole_free is not NULL) how many of its
 * nodes have every GPU free: bounds that let a policy skip jobs no placement could take. */
int32_t ds_engine_max_node_free(const ds_engine_t *e, int32_t part, int32_t *whole_free);
/* Whether a policy may start the job now: pending and not held by the driver (ds_engine_hold). */
static inline int ds_engine_startable(const ds_engine_t *e, int32_t job)
{
    return e->js[job].status == DS_JS_PENDING && !e->js[job].held;
}
/* Starts a job on the given GPUs (which may hold residents: colocation). Records DS_DEC_START.
 * The job must be startable. */
void ds_engine_start(ds_engine_t *e, int32_t job, const int32_t *gpus, int64_t now);
/* find_free + start. Returns 1 when placed; 0 for a held job. */
int ds_engine_place(ds_engine_t *e, int32_t job, int64_t now);
/* Stops a running job, keeps its progress, adds the restart overhead, makes it pending again in its
 * partition and tells the policy (ops->enqueue). */
void ds_engine_preempt(ds_engine_t *e, int32_t job, int64_t now, int32_t reason);
void ds_engine_record(ds_engine_t *e, int32_t type, int32_t job, int32_t other, int32_t reason);
/* Wall seconds the job has run in total, as of now. */
int64_t ds_engine_elapsed(const ds_engine_t *e, int32_t job, int64_t now);
/* Restart overhead of a job in seconds (40 s up to 8 GPUs, 60 s above, configurable). */
int32_t ds_engine_restart_overhead(const ds_engine_t *e, int32_t job);
/* A job's checkpoint interval in seconds of its run: the one it declared, else cfg.ckpt_default; 0 = unknown. */
int64_t ds_engine_ckpt_interval(const ds_engine_t *e, int32_t job);
/* Wall seconds of its run a preemption now would throw away, as far as the scheduler knows: with a
 * checkpoint interval c, the time since its last checkpoint ((now - last_start) mod c: a restarted job
 * resumes from a checkpoint and checkpoints every c s of its run); without one, everything it has run
 * (ds_engine_elapsed), since nothing says that any of it is saved. 0 for a job not running. */
int64_t ds_engine_at_risk(const ds_engine_t *e, int32_t job, int64_t now);
/* Whether a job's CPU/memory requirement fits on node n (always 1 when not enforced). */
int ds_engine_node_fits(const ds_engine_t *e, int32_t node, int32_t job);
/* Sets a job's class (DS_CLASS_G / DS_CLASS_BE). A running job's GPUs move between the tenant's G and
 * BE counters; BE -> G of a running job records DS_DEC_PROMOTE. */
void ds_engine_set_class(ds_engine_t *e, int32_t job, int klass);
/* Revokes a colocation: records DS_DEC_REVOKE (job = victim, other = the job that keeps running),
 * counts it, and preempts the victim with the given reason. */
void ds_engine_revoke(ds_engine_t *e, int32_t victim, int32_t kept, int64_t now, int32_t reason);
/* Whether job j's CPU/memory shares fit on the nodes of the given GPUs (its whole GPU list). */
int ds_engine_gpus_fit(const ds_engine_t *e, int32_t job, const int32_t *gpus);
/* CPUs and memory a running job holds on a node (0 when none). */
void ds_engine_job_node_use(const ds_engine_t *e, int32_t job, int32_t node, int32_t *cpus, int64_t *mem);
/* The same, were its hold scaled to scale (ds_engine_set_cpu_scale's rounding): lets a policy decide a
 * reclamation before it shrinks anything. */
void ds_engine_job_node_use_at(const ds_engine_t *e, int32_t job, int32_t node, double scale, int32_t *cpus,
                               int64_t *mem);
/* Whether job j's share for ngp GPUs would fit on node n once cpus_freed/mem_freed are released. */
int ds_engine_node_fits_after(const ds_engine_t *e, int32_t node, int32_t job, int32_t ngp, int32_t cpus_freed,
                              int64_t mem_freed);
/* Shrinks (or restores) a running job's CPU/memory hold to scale x its request, in (0, 1]. */
void ds_engine_set_cpu_scale(ds_engine_t *e, int32_t job, double scale);
/* Checks invariants (docs/policy.md §7) that the engine can see; returns 0 or fills msg. */
int ds_engine_check(const ds_engine_t *e, char *msg, size_t n);

#endif
