/* slurm_internal.h: the simulated Slurm of the two native setups (slurm-quota, slurm-borrow; docs/peers.md,
 * "Slurm"): its parameters, Fair Tree fair share, the backfill map and the state the files share.
 *
 * What is modelled, read from SchedMD/slurm 22.05.8 (the live cluster's version; the same code at 284c3b95):
 * priority/multifactor with Fair Tree (src/plugins/priority/multifactor/fair_tree.c,
 * priority_multifactor.c), the main scheduler's walk in priority order that stops a partition at its first
 * job that does not fit (src/slurmctld/job_scheduler.c), sched/backfill with its node-space map of
 * reservations and the select plugin's will-run estimate (src/plugins/sched/backfill/backfill.c,
 * src/plugins/select/cons_common/job_test.c), association GrpTRES limits (src/slurmctld/acct_policy.c),
 * preempt/qos with PreemptMode=REQUEUE, its candidate order and victim search (src/slurmctld/preempt.c,
 * src/plugins/preempt/qos/preempt_qos.c, _run_now in job_test.c), and the requeue's begin-time delay
 * (job_mgr.c). */
#ifndef DS_POLICY_SLURM_INTERNAL_H
#define DS_POLICY_SLURM_INTERNAL_H

#include <stdio.h>

#include "deepshare/policy.h"

enum { SLM_QUOTA = 0, SLM_BORROW = 1 };         /* which live setup a config starts from */
enum { SLM_QOS_NORMAL = 0, SLM_QOS_BORROW = 1 };
enum { SLM_BILL_CPU = 0, SLM_BILL_GPU = 1, SLM_BILL_JOB = 2 };
/* Preemption reason recorded with a requeue (ds_decision_t.reason). */
enum { SLM_R_QOS = 1 };

/* Why a pending job waits, as Slurm's squeue would say it (the last pass that looked at it). */
enum {
    SLM_W_NONE = 0,
    SLM_W_PRIORITY,    /* a job ahead of it in its partition did not fit: the main scheduler stopped */
    SLM_W_RESOURCES,   /* no node has its GPUs free now, and backfill found no earlier start */
    SLM_W_GRPTRES,     /* its account holds GrpTRES gres/gpu's worth of GPUs (AssocGrpGRES) */
    SLM_W_BEGIN,       /* requeued: may not start before its begin time (BeginTime) */
    SLM_W_RESERVED,    /* it fits now, but only on nodes backfill reserved for a job ahead of it */
    SLM_W_PREEMPTING,  /* its victims are being stopped (GraceTime) */
    SLM_W_HELD,        /* the driver holds it */
    SLM_W_NOTTESTED,   /* past bf_max_job_test or the backfill window */
};

typedef struct slm_config {
    int variant;
    /* priority/multifactor */
    double w_fs, w_age, w_qos;
    int32_t qos_prio_normal, qos_prio_borrow;
    int64_t half_life;     /* PriorityDecayHalfLife, s (0: no decay) */
    int64_t calc_period;   /* PriorityCalcPeriod, s */
    int64_t max_age;       /* PriorityMaxAge, s */
    int billing;           /* what usage bills: SLM_BILL_* */
    int user_assocs;       /* one association per (account, user) of the trace; 0: one per account */
    /* main scheduler */
    int32_t queue_depth;   /* default_queue_depth: jobs an event-driven pass looks at */
    int64_t sched_interval;/* a full pass at least this often while jobs wait */
    /* sched/backfill */
    int backfill;
    int64_t bf_interval, bf_resolution, bf_window;
    int32_t bf_max_job_test;
    /* time limits: factor x (runtime estimate + restart overhead), rounded up */
    double limit_factor;
    int64_t limit_round;
    /* limits, routing, preemption */
    int grp_tres;          /* associations carry GrpTRES=gres/gpu=<quota>, enforced */
    int grp_tres_types;    /* several GPU types: also GrpTRES=gres/gpu:<type>=<quota of the type> */
    int route;             /* job_submit.lua: beyond the quota in QOS normal, a job goes to QOS borrow */
    int route_types;       /* several GPU types: also beyond the quota of the type a job asks for */
    int preempt;           /* PreemptType=preempt/qos, PreemptMode=REQUEUE: normal preempts borrow */
    int64_t grace_time;    /* GraceTime of QOS borrow, s */
    int64_t exempt_time;   /* PreemptExemptTime, s (-1: off) */
    int32_t reorder_count; /* PreemptParameters=reorder_count */
    int strict_order;      /* PreemptParameters=strict_order */
    int youngest_first;    /* SchedulerParameters=preempt_youngest_first */
    int64_t requeue_delay; /* a requeued job's begin time: now + cred_expire + 1, s */
} slm_config_t;

void slm_config_default(slm_config_t *c, int variant);
int slm_config_set(void *config, const char *key, const char *value, ds_error_t *err);
/* A variant's defaults, allocated (config_new). */
void *slm_config_new(int variant);
void slm_config_help(FILE *f, int variant);

/* ---- Fair Tree (slurm_fairtree.c) ---- */
/* The association tree: root -> accounts (the tenants, shares = quota) -> user associations (shares 1). */
typedef struct slm_tree {
    int32_t naccts, nusers;
    double *acct_shares;
    long double *acct_usage, *user_usage;  /* decayed usage, billed TRES-seconds */
    int32_t *user_acct;
    int32_t *acct_user0, *acct_nusers, *by_acct; /* users of account a: by_acct[acct_user0[a] ..] */
    double *fs;                            /* fairshare factor per user association */
    long double *acct_lf, *user_lf;        /* level fair share S/U of the last ranking */
    int32_t *acct_rank, *user_rank;        /* rank the last ranking gave (users) */
    int32_t *scratch;
} slm_tree_t;

/* users = nusers associations, user_acct[u] its account. */
void slm_tree_init(slm_tree_t *t, int32_t naccts, const double *acct_shares, int32_t nusers, const int32_t *user_acct);
void slm_tree_free(slm_tree_t *t);
/* Multiplies every usage by f (the decay of PriorityDecayHalfLife over one calc period). */
void slm_tree_decay(slm_tree_t *t, long double f);
void slm_tree_charge(slm_tree_t *t, int32_t user, long double amount);
/* Fair Tree's ranking (_apply_priority_fs): sets fs[u] = rank / nusers, ties as Slurm's. */
void slm_tree_rank(slm_tree_t *t);

/* ---- backfill's reservations of one pass (slurm_backfill.c) ---- */
/* A node's reservations of one pass: whole node, [begin, end) at bf_resolution, sorted by begin, with the
 * latest end of every prefix (the map's test "ends after t, begins by t + L" is then one binary search). */
typedef struct slm_resv {
    int64_t *begin, *end, *pmax; /* pmax[i]: the latest end among the first i + 1 */
    int32_t n, cap;
    int64_t first_live;          /* the earliest begin among those that end after the pass's time (bf_now):
                                    a job starting then for L s meets one iff first_live <= bf_now + L */
} slm_resv_t;

/* A running job's place in the order the select plugin removes jobs (expected end, then job), on a node;
 * {-1, -1}: nothing needs to leave; job INT32_MAX: never. */
typedef struct slm_key {
    int64_t end;
    int32_t job, node;
} slm_key_t;

#define SLM_KEY_NONE ((slm_key_t){INT64_MAX, INT32_MAX, INT32_MAX})
static inline int slm_key_lt(slm_key_t a, slm_key_t b)
{
    if (a.end != b.end) return a.end < b.end;
    if (a.job != b.job) return a.job < b.job;
    return a.node < b.node;
}

typedef struct slm_bmemo slm_bmemo_t;

/* A prefix of the unreserved nodes in order of their whole-node key (slurm_nodes.c). */
typedef struct slm_korder {
    slm_key_t *k;
    int32_t n, cap, lo, hi;
    int complete;          /* it holds every such node with a key */
    uint64_t gen;
} slm_korder_t;

/* A sorted list of jobs with lazy removal: an entry is live while it carries its job's stamp. */
typedef struct slm_list {
    int32_t *job;
    uint32_t *stamp;
    int32_t n, cap, live;
} slm_list_t;

/* Pending jobs of one association in one QOS asking for one size class (1 .. GPUs per node, or more), in
 * Slurm's queue order: within such a group every job has the same fair-share and QOS factors, so the order
 * (priority, then submit time, then id) only moves when a requeued job's priority is recomputed; the queue
 * of a partition is the merge of its groups. The size class lets a walk pass by at once every job that
 * its account's GrpTRES refuses (slurm-quota's accounts at their cap hold long queues of such jobs). */
typedef struct slm_group {
    slm_list_t l;
    int32_t part;
    int32_t head;          /* index of its first pending job in l */
    int32_t hpos;          /* place in its partition's heap, -1 when it has no pending job */
    int32_t nfrozen;       /* requeued jobs whose priority is frozen until the next update */
    int requeued;          /* has held a requeued job: re-sorted at every update */
    int dirty;             /* its first job started: its heap place is repaired after the walk */
} slm_group_t;

/* An entry of a walk: a group's job at index idx, and, for a group's first job, the group's heap node. */
typedef struct slm_witem {
    int32_t g, idx, hpos, job;
    int64_t k1, k2;        /* its sort key: QOS rank and priority, submit time (then job) */
} slm_witem_t;

/* A walk of a partition's queue in priority order (slurm_queue.c). */
typedef struct slm_walk {
    slm_witem_t *heap;
    int32_t n, part;
    slm_witem_t *capped;   /* the pending jobs of groups passed by as capped that a depth-limited pass has not
                              counted yet: each such group's next one, a heap by key (s->citems) */
    int32_t ncapped, counted; /* how many of them, and how many jobs counted so far */
    int skip_capped;       /* pass by groups whose account is at its GrpTRES cap (a pass with no depth limit:
                              it would look at each of their jobs and start none) */
} slm_walk_t;

typedef struct slm_part {
    int32_t *heap;         /* groups with pending jobs here, a binary heap by their first job */
    int32_t nheap, capheap;
    slm_list_t run;         /* running jobs by expected end (start + time limit), then job */
    slm_list_t run_normal;  /* those of QOS normal */
    int64_t last_bf;       /* time of the last backfill pass */
    int bf_work;           /* something changed since (Slurm's _more_work) */
    int main_work;         /* an event since the last main pass */
    int64_t last_full;     /* time of the last full-depth main pass */
    int truncated;         /* an event pass stopped at queue_depth since the last full pass */
    int64_t *wants;        /* min-heap of times a full main pass is wanted (a begin time, the end of a
                              GraceTime or PreemptExemptTime, new priorities): Slurm's periodic pass */
    int32_t nwants, capwants;
    int64_t *hist;         /* pending jobs by min(GPUs, GPUs per node) */
    int32_t nborrow;       /* running jobs of QOS borrow (preemption candidates) */
    int32_t main_blocker;  /* job at which the last main pass stopped, -1 */
    int64_t main_at;       /* time of that pass */
} slm_part_t;

typedef struct slm_state {
    slm_config_t cfg;
    const ds_engine_t *e;
    slm_tree_t tree;
    int32_t njobs;
    int32_t *assoc;        /* user association of each job */
    uint8_t *qos, *reason, *seen;
    uint8_t *inq;           /* in its group (slm_queue_add), not only among the arrivals of the pass */
    int32_t *blocker;      /* job whose reservation holds it (trace index), -1 */
    int64_t *blocker_at;   /* and the start of that reservation */
    int64_t *limit;        /* time limit, s */
    int64_t *eligible;     /* begin time */
    int64_t *accrue;       /* age counts from here */
    int64_t *order_submit; /* submit time as Slurm orders ties (a requeue resets it) */
    int64_t *prio;         /* a requeued job's priority frozen until the next update, else -1 */
    int64_t *end_est;      /* running: start + time limit */
    int64_t *bf_start;     /* pending: start the last backfill pass planned (reserved), -1 */
    int64_t *charged;      /* running: usage billed up to this time */
    int64_t *stop_at;      /* running victim: requeued at this time (GraceTime); pending preemptor: waits
                              for its victims until then; -1 none (-2: a requeue in progress) */
    uint32_t *pstamp, *rstamp;
    double *est;           /* runtime estimate the limit came from */
    int64_t *ten_run;      /* GPUs each account holds (GrpTRES counts running jobs) */
    int64_t *ten_normal;   /* GPUs of each account's jobs in QOS normal, pending or running (routing) */
    int64_t *ten_quota;    /* quota when the job_submit routing read it */
    /* several GPU types (typed: e->ntypes > 1; slurm_types.c), per account x type: GPUs held on the type by
     * all its running jobs (a typed TRES counts what a job was allocated), and GPUs in QOS normal of jobs
     * that asked for the type by name (what job_submit.lua can read of a request) */
    int typed;
    int64_t *ten_run_t, *ten_normal_t;
    int8_t *jtype;         /* running: the GPU type it holds, -1 */
    slm_part_t *parts;
    int32_t nparts;
    slm_group_t *groups;    /* 2 per association: [2 a + qos] */
    int32_t ngroups;
    double *gconst;        /* per group: W_fs x fairshare + W_qos x QOS factor, as of the last update */
    int32_t *frozen, nfrozen_jobs; /* requeued jobs whose priority is frozen */
    int32_t *dirtyg, ndirtyg;
    slm_witem_t *witems, *citems;
    int32_t capw, capc;
    int in_walk;
    int64_t nqueued;       /* pending jobs in groups */
    int64_t *pcache;       /* slm_prio's cache, valid while pgen[j] == prio_gen */
    uint32_t *pgen, prio_gen;
    long double *pend_charge; /* per association: usage of runs that ended since the last update */
    slm_list_t incoming;    /* jobs enqueued during a pass (re-entrancy), merged at the next */
    int in_pass;
    int64_t origin, last_calc, next_calc;
    double pow_period;     /* decay factor ^ calc period */
    double *pow_tab;       /* decay factor ^ d for d < npow_tab (slm_decay_table) */
    int32_t npow_tab;
    int fs_stale;          /* usage changed since the tree was last ranked */
    int64_t n_routed_borrow, n_main_starts, n_bf_starts, n_resv, n_preempt, n_grp_blocks, n_bad_victims;
    int64_t n_fs_ticks, n_bf_passes, n_oversize, n_plans, n_plan_iters, n_multi;
    /* scratch */
    int32_t *gtmp, *cand, *removed, *gbuf, *touched, *usable, *nflag;
    int64_t *nfree;        /* per node: free GPUs in a will-run simulation */
    uint32_t *nstamp;      /* per node: nfree valid while it equals cur */
    uint32_t cur;
    uint8_t *blocked;      /* per node: masked out by reservations (for ds_engine_find_free_masked) */
    int32_t *resv_owner;   /* per node: first job that reserved it in the current backfill pass */
    int64_t bf_now;        /* the time of the current (or last) backfill pass */
    int64_t *resv_from;
    /* per node: the running jobs on it by expected end, and their GPUs there (at most gpus_per_node:
     * the production models never share a GPU) */
    int32_t *node_job, *node_ngpu, *node_nj;
    slm_key_t *seg;        /* segment trees of slurm_nodes.c */
    int32_t *kheap, nkheap, capkheap; /* slm_nodes_iter's heap of tree cells */
    uint64_t keys_gen;     /* bumped when a node's key changes or a reserved node returns */
    slm_korder_t ko[2];    /* per mode: the unreserved nodes by whole-node key, as of keys_gen */
    int32_t segsize;
    uint8_t *node_dirty;   /* a node whose keys must be recomputed */
    int32_t *dirty, ndirty;
    int32_t *skip, *skip2; /* scratch: sorted nodes a test may not use */
    int32_t nskip;
    int64_t *jnode_off;    /* per job: the nodes it runs on, jnodes[jnode_off[j] ..] (the engine's GPU list is
                              gone by the time it reports a finish) */
    int32_t *jnodes, *jnnodes;
    slm_resv_t *rv;        /* per node: its reservations of this pass */
    int32_t nrv;           /* nodes rv has */
    int32_t *rnodes, nrnodes; /* nodes with reservations, sorted */
    slm_key_t *ukeys;      /* scratch of a multi-node test */
    int64_t *ubs, *rbf, *rbr, *ctimes, *fstarts;
    struct slm_bmemo {     /* backfill's will-run starts by batch, per mode, while run_gen, part and now stay */
        uint64_t gen, have;
        int32_t part;
        int64_t now, val[64];
    } bmemo[2];
    uint64_t run_gen, first_gen[2]; /* running jobs changed (a start or an end): backfill's cache of the */
    int32_t first_idx[2], first_part[2]; /* first job to leave goes stale */
} slm_state_t;

/* ---- per-node will-run keys (slurm_nodes.c) ---- */
struct slm_state;
void slm_nodes_init(struct slm_state *s);
void slm_nodes_free(struct slm_state *s);
void slm_nodes_dirty(struct slm_state *s, int32_t n);
void slm_nodes_flush(struct slm_state *s, int64_t now);
slm_key_t slm_nodes_key(struct slm_state *s, int mode, int32_t g, int32_t n);
/* Least key of slot g (GPUs wanted; 0: first to leave) over nodes [lo, hi) but those in skip (sorted). */
slm_key_t slm_nodes_min(struct slm_state *s, int mode, int32_t g, int32_t lo, int32_t hi, const int32_t *skip,
                        int32_t nskip);
/* The same over the nodes the current backfill pass has not reserved (rv[n].n == 0) but those in skip. */
slm_key_t slm_nodes_min_unreserved(struct slm_state *s, int mode, int32_t g, int32_t lo, int32_t hi,
                                   const int32_t *skip, int32_t nskip);
/* The unreserved nodes of [lo, hi) in order of their slot-g key, up to the first key with no job to
 * leave (job INT32_MAX: then SLM_KEY_NONE): what slm_nodes_min_unreserved gives when asked again and again,
 * each time skipping the nodes it gave before. One iteration at a time (the heap is the state's). */
typedef struct slm_kiter {
    const slm_key_t *a;
} slm_kiter_t;
void slm_nodes_iter_begin(struct slm_state *s, slm_kiter_t *it, int mode, int32_t g, int32_t lo, int32_t hi);
slm_key_t slm_nodes_iter_next(struct slm_state *s, slm_kiter_t *it);
/* The same for slot GPUs-per-node (whole free nodes), from an order kept while no key changes (a node
 * reserved meanwhile is skipped): what a multi-node test walks, test after test. */
typedef struct slm_kcur {
    int mode;
    int32_t i, got;
} slm_kcur_t;
void slm_nodes_whole_begin(struct slm_state *s, slm_kcur_t *c, int mode, int32_t lo, int32_t hi, int32_t want);
slm_key_t slm_nodes_whole_next(struct slm_state *s, slm_kcur_t *c);
/* Node n has just been reserved (1) or its reservations dropped (0): the second trees follow. */
void slm_nodes_reserved(struct slm_state *s, int32_t n, int reserved);

/* ---- what-if placement on scratch free-GPU counts (slurm_fit.c) ---- */
/* Tracks whether a job would fit once some running jobs' GPUs are freed in a simulation (the select
 * plugin's future test): nodes masked by blocked are never used. */
typedef struct slm_fit {
    int32_t job, part, need, gpn, whole, rem;
    const uint8_t *blocked;
    int32_t full;          /* multi-node: allowed nodes wholly free */
    int32_t partial;       /* multi-node with a remainder: allowed nodes with rem .. gpn - 1 GPUs free */
    int32_t ntouched;      /* nodes whose free count grew (s->touched) */
    int single_ok;         /* single node: some allowed node grew to the job's GPUs (kept as nodes grow, so
                              a test after each freed job is not a pass over every grown node) */
    /* several GPU types: nodes of a type the job does not take are not allowed (tmask: the types it takes,
     * 0 any), and a multi-node job needs its nodes of one type (fullt: allowed nodes wholly free by type) */
    int typed;
    uint32_t tmask;
    int32_t fullt[DS_MAX_GPU_TYPES], partialt[DS_MAX_GPU_TYPES];
} slm_fit_t;

struct slm_state;
void slm_fit_begin(struct slm_state *s, slm_fit_t *f, int32_t job, int32_t part, const uint8_t *blocked);
/* Frees running job r's GPUs in the simulation. */
void slm_fit_free_job(struct slm_state *s, slm_fit_t *f, int32_t r);
int slm_fit_ok(struct slm_state *s, const slm_fit_t *f);
/* The nodes the job would take (the engine's placement rule on the simulated counts); returns how many. */
int32_t slm_fit_nodes(struct slm_state *s, const slm_fit_t *f, int32_t *nodes);
int64_t slm_sfree(struct slm_state *s, int32_t n);

/* Entry points shared by the two ops (slurm_core.c; slm_on_finish in slurm_run.c). */
/* config NULL: the variant's defaults. */
int slm_init(ds_engine_t *e, const void *config, int variant, void **state, ds_error_t *err);
void slm_fini(void *state);
void slm_enqueue(ds_engine_t *e, void *state, int32_t job, int64_t now);
void slm_withdraw(ds_engine_t *e, void *state, int32_t job, int64_t now);
void slm_cancel_start(ds_engine_t *e, void *state, int32_t job, int64_t now);
void slm_schedule(ds_engine_t *e, void *state, int32_t part, int64_t now, int timer);
int64_t slm_next_timer(const ds_engine_t *e, const void *state, int64_t now);
int slm_check(const ds_engine_t *e, const void *state, char *msg, size_t n);
int slm_stats(const ds_engine_t *e, const void *state, ds_policy_stat_t *out, int max);
int32_t slm_pending_order(const ds_engine_t *e, const void *state, int32_t *out, int32_t max);
void slm_config_free(void *config);
/* What the model makes of one job now, as "  topic: text\n" lines (slurm_explain.c): the explain hook. */
void slm_explain(const ds_engine_t *e, const void *state, int32_t job, int64_t now, ds_buf_t *out);

/* ---- GPU types (slurm_types.c): typed GRES and typed TRES on a cluster of several GPU types ---- */
/* The node ranges [lo[i], hi[i]) of partition p a job may be placed on as one piece, in type order: the
 * whole partition on a cluster of one type, or for a single-node job that takes any type (--gres=gpu:N: the
 * select plugin looks at every node); else one range per type it takes (a job runs on one type). */
int32_t slm_ranges(const slm_state_t *s, int32_t j, int32_t p, int multi, int32_t *lo, int32_t *hi);
/* The one type a job names (--gres=gpu:TYPE:N), else -1 (any type, or a set: --constraint, untyped GRES). */
int32_t slm_named_type(const slm_state_t *s, int32_t j);
/* The job's typed TRES start (1) or end (0): the account's GPUs on its type. */
void slm_types_run(slm_state_t *s, int32_t j, int start);
/* The job's QOS-normal GPUs of a named type join (1) or leave (0) job_submit.lua's count. */
void slm_types_normal(slm_state_t *s, int32_t j, int add);
/* 1 when a typed GrpTRES (gres/gpu:TYPE) lets the job start now: only a job that names the type is held
 * by it, and every job holding GPUs of the type counts (acct_policy: requested TRES against used TRES). */
int slm_types_limit_ok(const slm_state_t *s, int32_t j);
/* job_submit.lua's typed test: the account's QOS-normal GPUs of the job's named type, the job included,
 * over the quota of that type. */
int slm_types_over_quota(const slm_state_t *s, int32_t j);
/* The check hook's typed part: bookkeeping against a recount (0 ok, 1 with msg). */
int slm_types_check(const slm_state_t *s, char *msg, size_t n);

/* ---- job lists with lazy removal (slurm_lists.c) ---- */
void slm_list_push(slm_list_t *l, const uint32_t *stamp, int32_t job);
void slm_list_compact(slm_list_t *l, const uint32_t *stamp);
/* Inserts before the first live entry that does not precede job (less(a, b): a goes before b). */
void slm_list_insert(slm_list_t *l, const uint32_t *stamp, int32_t job, const slm_state_t *s,
                     int (*less)(const slm_state_t *, int32_t, int32_t));
void slm_list_free(slm_list_t *l);
/* ---- usage (slurm_usage.c) ---- */
double slm_decay_factor(const slm_state_t *s);
/* decay^d */
double slm_decay_pow(const slm_state_t *s, int64_t d);
/* Fills the table slm_decay_pow reads (once the config is set). */
void slm_decay_table(slm_state_t *s);
/* Usage of job j's run from charged[j] to t. */
long double slm_run_usage(const slm_state_t *s, int32_t j, int64_t t);
/* ---- the queue (slurm_queue.c) ---- */
int slm_prio_cmp(const slm_state_t *s, int32_t a, int32_t b);
/* Slurm's integer priority of a pending job. */
int64_t slm_prio(const slm_state_t *s, int32_t j);
/* Fair Tree ranked and the groups' constant terms recomputed, when usage changed since. */
void slm_queue_fresh(slm_state_t *s);
/* A pending job joins its group (and its group the partition's heap). */
void slm_queue_add(slm_state_t *s, int32_t j);
/* It left pending (started, or withdrawn): its entry is dead already (pstamp bumped). */
void slm_queue_started(slm_state_t *s, int32_t j);
/* Before a requeue resets its eligibility: its priority is frozen until the next update. */
void slm_queue_requeued(slm_state_t *s, int32_t j);
/* A PriorityCalcPeriod update, once usage and Fair Tree are: frozen priorities go, heaps are rebuilt. */
void slm_queue_tick(slm_state_t *s);
void slm_queue_repair(slm_state_t *s);
/* 1 with a message when a partition's group heap is not a heap of groups with pending jobs (the check hook). */
int slm_queue_check(slm_state_t *s, char *msg, size_t n);
int slm_queue_any(const slm_state_t *s);
void slm_queue_free(slm_state_t *s);
/* Walks partition p's pending jobs in priority order; next returns -1 at the end. A job it returned may
 * be started before the next call; nothing else changes the queue during a walk. */
void slm_walk_begin(slm_state_t *s, int32_t p, slm_walk_t *w);
int32_t slm_walk_next(slm_state_t *s, slm_walk_t *w);
void slm_walk_end(slm_state_t *s, slm_walk_t *w);
/* How many pending jobs of the groups the walk passed by as capped come before job j (j < 0: all of them),
 * the exact count when below limit, else at least limit: what a depth-limited pass would have looked at and
 * skipped. */
int32_t slm_walk_capped_before(slm_state_t *s, slm_walk_t *w, int32_t j, int32_t limit);
/* ---- running jobs (slurm_run.c) ---- */
void slm_on_finish(ds_engine_t *e, void *state, int32_t job, int64_t now);
void slm_forget_run(ds_engine_t *e, slm_state_t *s, int32_t j, int64_t now);
/* Asks for a full-depth main pass of partition p at time t (the end of a GraceTime); slm_want_periodic
 * at the first periodic pass (every sched_interval) at or after t (a begin time, new priorities). */
void slm_want_pass(slm_state_t *s, int32_t p, int64_t t);
void slm_want_periodic(slm_state_t *s, int32_t p, int64_t t);
void slm_start(ds_engine_t *e, slm_state_t *s, int32_t job, const int32_t *gpus, int64_t now, int by_backfill);
/* 1 when account limits let the job start now (GrpTRES), else sets its reason. */
int slm_limits_ok(slm_state_t *s, int32_t job);
/* Main scheduler pass over partition p; depth 0: full queue. */
void slm_main_pass(ds_engine_t *e, slm_state_t *s, int32_t p, int64_t now, int32_t depth);
void slm_backfill_pass(ds_engine_t *e, slm_state_t *s, int32_t p, int64_t now);
/* preempt/qos: the victims that let a normal job start now on nodes not in blocked (may be NULL);
 * returns how many (written to victims) or 0 when preemption cannot make room. */
int32_t slm_find_victims(ds_engine_t *e, slm_state_t *s, int32_t job, const uint8_t *blocked, int64_t now,
                        int32_t *victims);
/* Stops the victims (REQUEUE; GraceTime > 0: at now + grace) and starts job when they are gone now.
 * Returns 1 when the job started. */
int slm_preempt_for(ds_engine_t *e, slm_state_t *s, int32_t job, const int32_t *victims, int32_t nv, int64_t now,
                   int by_backfill);
void slm_requeue(ds_engine_t *e, slm_state_t *s, int32_t victim, int64_t now);
/* A running job preempt/qos may stop now: QOS borrow, not already being stopped, past PreemptExemptTime.
 * Inline: the node keys (below the running-job bookkeeping) and preemption (above it) both ask. */
static inline int slm_preemptable(const slm_state_t *s, int32_t j, int64_t now)
{
    const ds_jstate_t *js = &s->e->js[j];
    if (js->status != DS_JS_RUNNING || s->qos[j] != SLM_QOS_BORROW || s->stop_at[j] >= 0) return 0;
    if (s->cfg.exempt_time >= 0 && js->last_start + s->cfg.exempt_time > now) return 0;
    return 1;
}

/* The ops members the two variants share (slurm_quota.c, slurm_borrow.c add name, summary, props, init,
 * config_new and config_help). */
#define SLM_SHARED_OPS                                                                                         \
    .fini = slm_fini, .enqueue = slm_enqueue, .withdraw = slm_withdraw, .on_finish = slm_on_finish,            \
    .cancel_start = slm_cancel_start, .schedule = slm_schedule, .next_timer = slm_next_timer,                  \
    .config_free = slm_config_free, .config_set = slm_config_set, .check = slm_check, .stats = slm_stats,      \
    .pending_order = slm_pending_order, .explain = slm_explain

#endif
