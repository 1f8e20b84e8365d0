/* ds_internal.h: the DeepShare policy's state, parameters and the functions its files share (docs/policy.md),
 * internal to src/policy/deepshare/: the bookkeeping first, bottom up, then the stages, then what sits on top. */
#ifndef DS_POLICY_DS_INTERNAL_H
#define DS_POLICY_DS_INTERNAL_H

#include <stdio.h>

#include "deepshare/policy.h"
#include "deepshare/predictor.h"

/* Preemption reasons (ds_decision_t.reason). */
enum { DSP_R_RECLAIM = 1, DSP_R_REVOKE = 2 };

/* Which threshold the retention monitor compares samples with. */
enum { DSP_MON_CURRENT = 0, DSP_MON_ADMIT = 1, DSP_MON_FLOOR = 2, DSP_MON_URGENT = 3 };

/* A cluster of several GPU types (docs/heterogeneous.md): how quotas and QAD count GPUs of different types, and
 * which type a job is placed on first. */
enum {
    DSP_TQ_TYPED = 0,     /* per-type quotas: a G job's GPUs count in its tenant's quota of their type */
    DSP_TQ_EFFECTIVE = 1, /* effective GPUs: each GPU counts its type's weight, in one quota per tenant */
    DSP_TQ_BLIND = 2      /* ignore types: GPUs of every type count alike against the total quota */
};
enum {
    DSP_TC_ASSURED = 0,   /* an under-served tenant's G job takes its fastest type; other jobs the type where
                             they lose least against the type's average speed (their comparative advantage) */
    DSP_TC_FASTEST = 1,   /* every job its fastest type first */
    DSP_TC_ADVANTAGE = 2, /* every job by comparative advantage */
    DSP_TC_BLIND = 3      /* the engine's type-blind rule, as the research baselines */
};
/* Fair division of the pool (fair_share, ds_fair.c): what each tenant's share steers (bits: the BE queue's order,
 * reclaims for best-effort work), and the weights the capacity beyond the quotas is divided by. */
enum { DSP_FS_OFF = 0, DSP_FS_ORDER = 1, DSP_FS_RECLAIM = 2 };
enum { DSP_FW_QUOTA = 0, DSP_FW_EQUAL = 1 };
/* Which decisions read the runtime predictor's estimate conditional on what a job has run (cond_remaining, bits). */
enum { DSP_CR_VICTIMS = 1, DSP_CR_ORDER = 2 };

typedef struct dsp_config {
    int64_t cycle;          /* QAD and monitoring period, s (60) */
    double lambda;          /* QAD smoothing weight (0.3) */
    double theta;           /* under-served below this smoothed QAD (0.95) */
    double band;            /* width of a QAD ordering band (0.05) */
    double m;               /* BE cap, multiple of the quota (4) */
    double tau_max;         /* cap of the colocation threshold (0.95) */
    int work_conserving;    /* idle GPUs go to unclassified jobs as BE (1) */
    int g_prefix;           /* G is a prefix of the tenant's order: a job that does not fit the quota now
                               keeps later ones of its tenant out of G (1) */
    int quota_backfill;     /* ...except later jobs predicted to end before the tenant's own G runs free the
                               quota that job needs (1; one GPU type; docs/policy.md §2) */
    int64_t reserve_after;  /* reservation after this wait, s (0: off) */
    int32_t reserve_max;    /* new reservations per pass (1) */
    double cpu_floor;       /* CPU/memory reclamation floor, share of request (0.5) */
    double cpu_slowdown;    /* progress lost by shrunk jobs (0: not modelled) */
    double alpha, beta;     /* preemption cost weights (0.5, 0.3) */
    int64_t min_runtime;    /* a BE job is no reclamation victim in its first min_runtime s of a run (0: off) */
    double young_victim;    /* a run younger than this x the typical run is a reclaim's victim of last resort (1; 0: off) */
    int ckpt_aware;         /* the cost's work term counts from the last checkpoint (1; 0: all it has run) */
    double gamma, eps;      /* contention pressure exponent and guard (0.5, 1e-6) */
    double rho_min;         /* most permissive retention threshold (0.7) */
    int32_t max_candidates; /* colocation candidates examined per job (64) */
    int32_t w;              /* consecutive low samples before a revocation (3) */
    int gpu_time_order;     /* inside a band, order by predicted GPU-time (remaining x GPUs), not time (0) */
    int overrun_yield;      /* a G job that outlived its prediction yields its class while its tenant waits (1) */
    int batch_evidence;     /* a job's finished batch siblings revise its estimate (1; docs/policy.md §3) */
    int quota_yield;        /* an under-served tenant's own longer G runs yield their class to its head job (0) */
    double attained_yield;  /* a G run past this x the typical run yields to its tenant's head job predicted to end
                               sooner (2; 0: off; docs/policy.md §2) */
    int served_g_in_qb;     /* G jobs of served tenants (S_i >= theta) are placed in QB's order, beside
                               best-effort work; only under-served tenants' G jobs go first (1) */
    int served_reclaim;     /* a served tenant's G job may reclaim runs of tenants above their quota that are
                               predicted to outlast it (1; docs/policy.md §4.1) */
    int admit_floor;        /* the model's prediction admits at rho_min; the monitor enforces the threshold (1) */
    double monitor_z;       /* ...and the pair's mean retention that far (in standard errors) below threshold (2; 0: off) */
    int monitor_threshold;  /* DSP_MON_*: what a retention sample is compared with (ds_monitor.c) */
    int revoke_for;         /* DSP_RF_*: a pair under the monitor's threshold is revoked always (any), or only
                               while a waiting job predicted to end sooner could take its BE member's place (shorter) */
    int learn_retention;    /* admission uses the monitor's measurements of a workload pair (1) */
    double probe_z;         /* an unmeasured pair is admitted on its prediction + probe_z x the interference
                               predictor's uncertainty, one such probe per pair at a time (3; 0: off) */
    int type_quota;         /* DSP_TQ_*: quota and QAD over GPU types (typed) */
    int type_choice;        /* DSP_TC_*: which type a job is placed on first (advantage) */
    int share_first;        /* a BE job shares a GPU before taking free ones when both keep enough (1) */
    double share_first_min; /* "enough" for that: predicted retention of both at least this and tau_max */
    int align_ends;         /* a job of less than a node takes the fullest node its residents are predicted to
                               outlast it on, before the fullest node (0) */
    int fair_share;         /* DSP_FS_* bits: best-effort work of tenants within their fair share of the pool
                               goes first (ORDER), may reclaim BE GPUs of tenants above theirs (RECLAIM) (OFF) */
    int fair_weight;        /* DSP_FW_*: the capacity beyond the quotas is divided by quota, or equally (quota) */
    int cond_remaining;     /* DSP_CR_* bits: the preemption cost (victims) and the queue keys (order) use the
                               conditional remaining-time estimate (0: max(predicted - elapsed, 1) for both) */
    /* switches (1 = on); the ablations of docs/policy.md §8 turn them off */
    int prediction, interference_aware, colocation, borrowing, preemption, cpu_reclaim, monitor;
} dsp_config_t;

void dsp_config_default(dsp_config_t *c);
int dsp_config_set(void *config, const char *key, const char *value, ds_error_t *err);
void dsp_config_help(FILE *f);
int dsp_config_validate(const dsp_config_t *c, ds_error_t *err);

typedef struct dsp_list {
    int32_t *v;
    int32_t n, cap;
} dsp_list_t;

/* A running G job's predicted remaining seconds and GPUs (the quota backfill's drain time, ds_classify.c). */
typedef struct dsp_drain {
    double rem;
    int64_t gpus;
} dsp_drain_t;

/* Measured retention of one workload next to another (ds_observed.c). */
/* Running mean of one job's ln retention samples while colocated (Welford). */
typedef struct dsp_mon {
    int32_t n;
    double mean;
    int32_t missing;        /* cycles in a row the pair had no fresh sample (kept at its pair's lower job) */
} dsp_mon_t;

typedef struct dsp_obs {
    uint64_t key;
    double sum;
    int64_t n;
    uint8_t probing;    /* a pair of these workloads runs as a probe and has no sample yet */
} dsp_obs_t;

/* A job's overrun yield (docs/policy.md §2). A yield lasts while its tenant has work waiting for the
 * quota it gave up: once nothing waits, the job is promoted back like any BE job and may yield again. */
typedef enum {
    DSP_YIELD_NONE = 0,
    DSP_YIELDED,       /* runs on as BE, its GPUs outside the tenant's BE cap */
    DSP_YIELD_ENDED,   /* stopped (preempted or finished) after yielding */
    DSP_YIELD_BACK     /* promoted back to G while that run goes on */
} dsp_yield_t;
/* Which rule made a run yield (dsp_t.qyield): its prediction outlived, its tenant's head kept out of the quota
 * (quota yield), or the quota held for k typical runs (attained-service yield); docs/policy.md §2. */
enum { DSP_QY_OVERRUN = 0, DSP_QY_QUOTA, DSP_QY_ATTAINED };

/* A reservation: the nodes a waiting job will start on and when they are predicted to be free. */
typedef struct dsp_resv {
    int32_t job, part, nn;
    int32_t *nodes;
    int64_t start;
} dsp_resv_t;

typedef struct dsp_stats {
    int64_t passes, cycles;
    int64_t preempt_reclaim, preempt_revoke, reclaimed_gpus;
    int64_t mon_missing;            /* pair-cycles without a fresh retention sample (telemetry missing or stale) */
    int64_t lent_jobs, lent_gpus, promotions, promoted_gpus, demotions, yields, yields_back, quota_yields;
    int64_t attained_yields; /* overrun yields taken by attained service, the run still within its prediction */
    int64_t batch_revised, batch_rekeyed; /* siblings a finish revised (seen ones), and of those, waiting ones re-keyed */
    int64_t coloc_admitted, coloc_attempts, coloc_no_candidate;
    int64_t rej_memory, rej_cpu, rej_retention, rej_revoked, probes;
    int64_t cpu_reclaims, cpu_shrunk_jobs;
    int64_t wc_starts, wc_gpus;     /* BE starts of the work-conserving stage */
    int64_t fair_reclaims;          /* BE jobs preempted for a tenant below its fair share (fair_share & RECLAIM) */
    int64_t reservations, backfills; /* reservations made; starts on reserved GPUs before their start */
    int64_t g_preempted;    /* must stay 0: a G job was preempted */
    int64_t young_victims;  /* reclaim victims younger than the typical run (no older set would do) */
    int64_t served_reclaims; /* victims of served tenants' reclaims (served_reclaim) */
    int64_t served_under;   /* must stay 0: a served reclaim left a victim's tenant under its quota */
} dsp_stats_t;

/* The policy's state, its fields grouped by the file that owns them (writes them); others only read them. */
/* ds_typical.c: the run times of the latest finished jobs and their median, the typical run */
#define DSP_TYPICAL_N 1024
#define DSP_TYPICAL_MIN 16  /* finishes before there is a typical run (until then no run is young) */
typedef struct dsp_typical {
    double ring[DSP_TYPICAL_N];
    int32_t n, head, since;
    double median;          /* 0 until DSP_TYPICAL_MIN finishes */
} dsp_typical_t;

typedef struct dsp {
    /* ---- all: the parameters, the trace's sizes, the counters of stats */
    dsp_config_t cfg;
    const ds_trace_t *t;
    int32_t nj, nt, nparts, maxg;
    dsp_stats_t st;
    /* ---- ds_track.c: first sight, start and stop of jobs */
    double *pred;           /* runtime prediction: total exclusive seconds, predicted once at first sight */
    uint8_t *seen;
    int64_t nactive;        /* arrived and not finished */
    int64_t min_gmem;       /* least GPU memory of any job seen: a job needing more than the GPU's less
                               this can have no partner (traces without footprints: none can) */
    int64_t gmem_max;       /* the most memory of any GPU (set at init) */
    dsp_list_t run;         /* running jobs */
    int32_t *rpos;
    dsp_list_t *trun;       /* running jobs per tenant (the quota backfill's drain time) */
    int32_t *tpos;
    dsp_drain_t *drain;     /* ds_classify.c scratch: a tenant's running G jobs by remaining time */
    int32_t drain_cap;
    dsp_list_t *solo;       /* running unshared jobs per (partition, class, GPU count): colocation partners
                               (dsp_solo); ds_classify.c moves jobs between classes */
    int32_t *spos;
    int32_t *pair;          /* co-resident partner while colocated, -1 */
    int64_t *ppend_gpus;    /* pending GPU demand per partition (and deepshare.c's enqueue) */
    double *work;           /* typed clusters: seconds of work on its reference type done in earlier runs, */
    int64_t *wseen;         /* ...the engine's run time they account for, */
    int8_t *wtype;          /* ...and the type of the run going on (-1: none) */
    /* ---- ds_types.c (set at init): a cluster of several GPU types */
    int typed;              /* the engine has several types and type_quota is not DSP_TQ_BLIND */
    int type_aware;         /* several types and type_choice is not DSP_TC_BLIND */
    double tw[DS_MAX_GPU_TYPES]; /* effective GPUs per GPU of each type (trace weight, else 1) */
    double tw_max;
    /* ---- ds_qad.c: the QAD signal */
    double *S;
    double *q_last;         /* Q after the last pass: the value of cycles skipped while idle */
    int s_init;
    int64_t last_cycle;
    /* ---- ds_fair.c: each tenant's fair share of the pool this pass (fair_share), and what it asks for */
    double *fair, *fair_want;
    int fair_set;           /* the shares were computed at least once */
    /* ---- ds_preempt.c / deepshare.c: the tenant a fair-share reclaim is for (-1: a G reclaim), jobs of QB this
     * pass already tried within their share */
    int32_t fair_for;
    /* ...and the tenant a served reclaim is for (-1: none), with the reclaiming job's predicted run time */
    int32_t served_for;
    double served_rem;
    uint8_t *fair_tried;
    int fair_on;            /* deepshare.c: the shares are computed and QB is being placed */
    /* ---- ds_order.c: pending jobs per partition, sorted by (tenant, krem, submit, id) */
    dsp_list_t *pend;
    double *krem;           /* a pending job's predicted remaining time (0 without prediction) */
    /* ---- ds_classify.c: classes, promotion, demotion, yield */
    int64_t *cls_pass;      /* the pass that last classified a job (its G/BE queue this pass) */
    uint8_t *yielded;       /* dsp_yield_t: nonzero once a job gave up its G class by outliving its
                               prediction (§2) */
    uint8_t *qyield;        /* per job: which yield made it yielded (DSP_QY_*), for explain */
    int64_t *ygpus;         /* per tenant: GPUs of its running jobs that yielded (yielded == DSP_YIELDED) */
    int64_t *waits;         /* per tenant scratch: GPUs of its waiting work (dsp_waiting_gpus) */
    /* ---- ds_coloc.c and ds_monitor.c: pairs, admission and retention monitoring */
    float *admit_tau;       /* threshold j was admitted with (ds_coloc.c) */
    int32_t *low;           /* consecutive low retention samples of j's pair */
    dsp_mon_t *mon;         /* j's samples (ln retention) since its colocation began */
    double mon_m2;          /* pooled within-pair squared deviations of ln retention: the measurement noise */
    int64_t mon_dof;
    int32_t *banned;        /* partner whose colocation with j was revoked, -1 */
    double *mon_base;       /* per partition: tau at the start of the monitoring round */
    /* ---- ds_observed.c: observed retention by workload pair (open addressing) */
    dsp_obs_t *obs;
    size_t obs_cap, obs_n;
    /* ---- ds_preempt.c: per pass, a reclamation that failed for (gpus, cpus, mem) fails for any job needing
     * at least as much, since within the G placement stage evictable capacity only shrinks */
    int32_t *pre_fail_cpus; /* by GPU count; INT32_MAX: no failure yet */
    int64_t *pre_fail_mem;
    /* ---- ds_reserve.c: reservations (reserve_after > 0), oldest first; node_resv: a node's reservation or -1 */
    dsp_resv_t *resv;
    int32_t nresv, capresv, resv_new;
    int32_t *node_resv, *resv_node;
    double *resv_time;
    uint8_t *blocked;       /* nodes the job being placed must keep off */
    int64_t *resv_fail;     /* the pass in which a job found nothing to reserve */
    /* ---- ds_align.c (scratch): nodes set aside while choosing, and the fullest node's GPUs */
    uint8_t *align_mask;
    int32_t *align_set, *align_gpus;
    /* ---- ds_workcons.c: the work-conserving stage */
    uint8_t *wc;            /* 1 while a job runs as BE from the work-conserving stage */
    int32_t *wcv, *wc_end;  /* candidates, and its tenant runs' ends */
    /* ---- pass scratch, one user at a time: the pass's G and BE queues, a job array (classification,
     * monitoring, preemption), the merge of tenant runs (ds_order.c, ds_workcons.c; one entry per tenant + 1) */
    int32_t *order, *qg, *qb;
    int32_t *run_at, *heap, *cursor;
    /* ---- ds_typical.c: the typical run (young victims, ds_preempt.c) */
    dsp_typical_t typical;
} dsp_t;

/* The bookkeeping under the stages, bottom first; a file calls only files listed before it (and the
 * stages call the bookkeeping, deepshare.c everything), so the policy has no call cycle
 * (tests/check_cycles.sh). */

/* ds_typical.c (calls only the engine): ascending doubles for qsort (the typical run's median, ds_reserve.c's free times) */
int dsp_cmp_double(const void *a, const void *b);
/* ds_typical.c: a finished job's run time joins the typical run's record */
void dsp_typical_observe(const ds_engine_t *e, dsp_t *s, int32_t j, int64_t now);
/* seconds a running job stays young (younger than young_victim x the typical run); 0: not young */
double dsp_young_for(const ds_engine_t *e, const dsp_t *s, int32_t v, int64_t now);

/* ds_lists.c: unordered lists with positions (pos[j] = -1 when absent) */
void dsp_list_push(dsp_list_t *l, int32_t *pos, int32_t j);
void dsp_list_remove(dsp_list_t *l, int32_t *pos, int32_t j);
/* running unshared jobs of a partition, class (be: 1 for BE) and GPU count: colocation partners */
static inline dsp_list_t *dsp_solo(dsp_t *s, int32_t part, int be, int32_t gpus)
{
    return &s->solo[((size_t)part * 2 + (size_t)(be != 0)) * (size_t)(s->maxg + 1) + (size_t)gpus];
}
/* the solo list running job j belongs in, by its partition, class and GPU count */
static inline dsp_list_t *dsp_solo_of(dsp_t *s, const ds_engine_t *e, int32_t j)
{
    return dsp_solo(s, e->js[j].part, e->js[j].klass == DS_CLASS_BE, e->trace->jobs[j].gpus);
}

/* ds_qad.c (docs/policy.md §1); with several GPU types per s->cfg.type_quota (docs/heterogeneous.md) */
double dsp_qad_now(const ds_engine_t *e, const dsp_t *s, int32_t tenant);
/* Effective GPUs a tenant holds as G, and its effective quota (DSP_TQ_EFFECTIVE). */
double dsp_eff_held(const ds_engine_t *e, const dsp_t *s, int32_t tenant);
double dsp_eff_quota(const ds_engine_t *e, const dsp_t *s, int32_t tenant);
void dsp_qad_cycle(ds_engine_t *e, dsp_t *s, int64_t now);
int dsp_band(const dsp_t *s, int32_t tenant);
int dsp_underserved(const dsp_t *s, int32_t tenant);

/* ds_fair.c: the tenants' fair shares of the pool (fair_share); dsp_fair_update returns 0 when off (or the
 * cluster has several partitions), and then the others mean nothing */
int dsp_fair_update(const ds_engine_t *e, dsp_t *s, int32_t part);
/* whether j's tenant stays within its fair share with j running (a G job always does) */
int dsp_fair_within(const ds_engine_t *e, const dsp_t *s, int32_t j);
/* GPUs tenant i holds beyond its fair share (negative: below it) */
double dsp_fair_spare(const ds_engine_t *e, const dsp_t *s, int32_t i);

/* ds_types.c: the type dimension (docs/heterogeneous.md), below the stages; calls only ds_qad.c */
/* Whether j's tenant may hold j as G on type t beside what it holds as G now (per s->cfg.type_quota; with one
 * type, or blind: the total quota). extra: GPUs of that type (or effective GPUs) already promised this pass. */
int dsp_g_room(const ds_engine_t *e, const dsp_t *s, int32_t j, int32_t t, double extra);
/* The types j may use, in the order placement tries them for j of class klass (s->cfg.type_choice); returns
 * how many. */
int32_t dsp_type_order(const ds_engine_t *e, const dsp_t *s, int32_t j, int klass, int32_t *types);
/* Seconds of work on j's reference type it has done, as of now (on one type: its elapsed run time). */
double dsp_work_done(const ds_engine_t *e, const dsp_t *s, int32_t j, int64_t now);
/* What j has run, in seconds of work on its reference type where the cluster has several types (where a
 * prediction is compared with it): its elapsed run time on one kind of node. */
static inline double dsp_elapsed(const ds_engine_t *e, const dsp_t *s, int32_t j, int64_t now)
{
    return e->ntypes < 2 ? (double)ds_engine_elapsed(e, j, now) : dsp_work_done(e, s, j, now);
}

/* Served reclaim (docs/policy.md §4.1) applies: on, with prediction, on a cluster without typed quotas. */
static inline int dsp_served_reclaim_on(const ds_engine_t *e, const dsp_t *s)
{
    return s->cfg.served_reclaim && s->cfg.prediction && !(s->typed && e->ntypes > 1);
}

/* j's speed on the type it runs on (1 when it runs on none, or on one kind of node), and on the fastest type it
 * may use. */
double dsp_speed_now(const ds_engine_t *e, int32_t j);
double dsp_best_speed(const ds_engine_t *e, int32_t j);
/* Free GPUs for j in its partition: on one kind of node (or blind to types) the engine's consolidated rule;
 * else on the first type of dsp_type_order with room (a G job: where its tenant's quota has room). */
int dsp_find_free(const ds_engine_t *e, const dsp_t *s, int32_t j, int32_t part, const uint8_t *blocked, int32_t *out);
/* Whether j may take GPUs of node's type: a type it may use and, for a G job, where its quota has room. */
int dsp_node_usable(const ds_engine_t *e, const dsp_t *s, int32_t j, int32_t node);
/* The GPU type pair retention is looked up for when j joins partner p's GPUs: their type, -1 when the
 * cluster has one kind of node or the policy is type-blind. */
static inline int32_t dsp_pair_type(const ds_engine_t *e, const dsp_t *s, int32_t p)
{
    return s->type_aware ? ds_engine_job_type(e, p) : -1;
}

/* ds_observed.c: the monitor's measurements by workload pair (on a GPU type, gtype >= 0, on a typed cluster),
 * used before the model's prediction */
void dsp_observed_add(dsp_t *s, const ds_trace_t *t, int32_t a, int32_t b, int32_t gtype, double rho);
int dsp_observed_get(const dsp_t *s, const ds_trace_t *t, int32_t a, int32_t b, int32_t gtype, double *rho);
/* Whether a probe of the pair may start: it can be learned (both jobs have a workload), nothing has been
 * measured of it, and no probe of it runs. */
int dsp_observed_probe_ok(const dsp_t *s, const ds_trace_t *t, int32_t a, int32_t b, int32_t gtype);
/* Marks (on) or clears a probe of the pair; the first sample clears it too. */
void dsp_observed_set_probe(dsp_t *s, const ds_trace_t *t, int32_t a, int32_t b, int32_t gtype, int on);

/* ds_estimate.c: predictions */
/* j's total run time as its finished batch siblings put it, given it has run el s; < 0: they say nothing (or
 * batch_evidence is off, or the predictor has no batches). */
double dsp_batch_total(const ds_engine_t *e, const dsp_t *s, int32_t j, double el);
/* After a finish: the job's unfinished siblings that wait take their revised keys. */
void dsp_batch_revise(ds_engine_t *e, dsp_t *s, int32_t finished, int64_t now);
double dsp_remaining(const ds_engine_t *e, const dsp_t *s, int32_t j, int64_t now);
/* The same for one use (DSP_CR_*): where cond_remaining names it, the runtime predictor's estimate given what j
 * has run (the median of its recent errors beyond that, docs/predictors.md) when it has one */
double dsp_remaining_for(const ds_engine_t *e, const dsp_t *s, int32_t j, int64_t now, int use);
/* a's retention beside b on a GPU of type gtype (-1: no particular type) */
double dsp_retention(const ds_engine_t *e, const dsp_t *s, int32_t a, int32_t b, int32_t gtype);
/* What admission weighs for a at b's side: the estimate above, and (*bound) the value it must clear the
 * threshold with, the estimate raised by probe_z x the predictor's uncertainty while the pair is unmeasured and
 * no probe of it runs (*probe = 1 then), else the estimate itself. */
double dsp_retention_admit(const ds_engine_t *e, const dsp_t *s, int32_t a, int32_t b, int32_t gtype, double *bound,
                           int *probe);

/* ds_order.c (docs/policy.md §3) */
void dsp_set_key(const ds_engine_t *e, dsp_t *s, int32_t j, int64_t now);
void dsp_pend_insert(dsp_t *s, int32_t part, int32_t j);
void dsp_pend_remove(dsp_t *s, int32_t part, int32_t j);
/* v: runs of one tenant each in (rem, submit, id) order, as classification writes them */
void dsp_merge_qg(const ds_engine_t *e, dsp_t *s, int32_t *v, int32_t n);
void dsp_merge_qb(const ds_engine_t *e, dsp_t *s, int32_t *v, int32_t n);
/* any v: sets the keys as of now and sorts it into QG order (tests only: re-keying a pending job
 * breaks the pending list's order) */
void dsp_sort_qg(const ds_engine_t *e, dsp_t *s, int32_t *v, int32_t n, int64_t now);
int32_t dsp_pending_order(const ds_engine_t *e, const void *state, int32_t *out, int32_t max);
/* The status page's order of two pending jobs: QAD band, then (rem, submit, id); negative when a goes first. */
int dsp_cmp_band(const dsp_t *s, int32_t a, int32_t b);

/* ds_reserve.c: reservations with backfill */
void dsp_resv_refresh(ds_engine_t *e, dsp_t *s, int32_t part, int64_t now);
void dsp_resv_try(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now);
/* marks in s->blocked the nodes j must keep off now; 1 when any (then call dsp_resv_unmask) */
int dsp_resv_mask(const ds_engine_t *e, dsp_t *s, int32_t j, int64_t now);
void dsp_resv_unmask(dsp_t *s);
/* whether starting j on these GPUs uses another job's reservation (a backfill) */
int dsp_resv_backfilled(const ds_engine_t *e, const dsp_t *s, int32_t j, const int32_t *gpus, int32_t n);
void dsp_resv_free(dsp_t *s);

/* ds_align.c: free GPUs for j (dsp_find_free), on one kind of node the fullest node whose residents are predicted
 * to outlast j when there is one (align_ends); blocked (NULL or s->blocked) is marked and restored while it
 * chooses. */
int dsp_take_free(const ds_engine_t *e, dsp_t *s, int32_t j, int32_t part, uint8_t *blocked, int64_t now, int32_t *out);

/* ds_track.c: first sight, start and stop of a job, below every stage */
/* First sight of a job: counts it and predicts its run time from what is known now. */
void dsp_first_seen(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now);
/* starts j on the given GPUs (partner: the resident it joins, or -1) and updates the policy's lists */
void dsp_start(ds_engine_t *e, dsp_t *s, int32_t j, const int32_t *gpus, int32_t partner, int64_t now);
/* j stopped running (finished or preempted): its partner, if any, is alone again */
void dsp_stopped(ds_engine_t *e, dsp_t *s, int32_t j);

/* ---- the stages (docs/policy.md §2-§6): each calls the bookkeeping above, none calls deepshare.c */

/* ds_classify.c (docs/policy.md §2) */
/* A tenant's classification budgets in a pass: quota, BE cap (m x quota), G and BE GPUs left, BE GPUs that
 * count against the cap, whether a BE job was taken, and whether the G prefix rule closed G. */
typedef struct dsp_budget {
    int64_t q, becap, gbud, bbud, be_now;
    int be_taken, prefix;
    /* quota backfill (prefix set): quota GPUs the prefix closed, the GPUs the job that set it lacks (until the
     * drain time is taken, then 0), and the predicted seconds until the tenant's own G runs free them */
    int64_t bf_gpus, bf_need;
    double bf_until;
    /* several GPU types (s->typed): G GPUs left per type (DSP_TQ_TYPED; gbud their positive sum) or effective
     * GPUs left (DSP_TQ_EFFECTIVE; gbud its ceiling) */
    int64_t gbud_t[DS_MAX_GPU_TYPES];
    double gbud_eff;
} dsp_budget_t;
/* Writes the G jobs of under-served tenants to s->qg and the BE jobs, with the G jobs of served tenants when
 * served-g-in-qb, to s->qb, each tenant's in its own order. */
void dsp_classify(ds_engine_t *e, dsp_t *s, const int32_t *v, int32_t n, int64_t now, int32_t *ng, int32_t *nb);
/* The class pending job j would get from a pass now (DS_CLASS_G, DS_CLASS_BE, 0: none), with its tenant's
 * budgets as its turn comes in *before (for explain; as if j were not held). Read-only. */
int dsp_class_now(const ds_engine_t *e, const dsp_t *s, int32_t j, int64_t now, dsp_budget_t *before);
/* Running unshared BE jobs become G, oldest first, where their tenant's quota has room; a job that
 * yielded only while its tenant has nothing waiting (dsp_waiting_gpus). */
void dsp_promote(ds_engine_t *e, dsp_t *s);
/* Per tenant, the GPUs of its pending startable jobs that its quota could hold: the work a yield is
 * for. waits has one entry per tenant. */
void dsp_waiting_gpus(const ds_engine_t *e, const dsp_t *s, int64_t *waits);
/* Overrun yield: running unshared G jobs that have run longer than predicted become BE while their
 * tenant has a pending job its quota could hold; so do (attained-service yield, attained_yield) those that
 * have run longer than that many typical runs while the tenant's head job is predicted to end first. */
void dsp_yield(ds_engine_t *e, dsp_t *s, int64_t now);
/* Quota yield (quota_yield, docs/policy.md §2): an under-served tenant whose head job (at most its quota) is
 * kept out of G only by its own running G jobs has those of them predicted to run longer than the head
 * yield their class, longest first, until the head fits; nothing yields unless enough of them can. */
void dsp_quota_yield(ds_engine_t *e, dsp_t *s, int64_t now);
/* A lowered quota: running unshared G jobs of a tenant over its quota become BE, most recently started
 * first, until its G GPUs fit the quota again (no G job is ever preempted; BE ones may be). */
void dsp_demote(ds_engine_t *e, dsp_t *s);

/* ds_coloc.c (docs/policy.md §5) */
/* the partition's contention pressure P (pending GPU demand over free GPUs, to the power gamma) */
double dsp_pressure(const ds_engine_t *e, const dsp_t *s, int32_t part);
/* tau of docs/policy.md §5 from the partition's contention pressure, then a tenant's tau_i */
double dsp_tau_base(const ds_engine_t *e, const dsp_t *s, int32_t part);
double dsp_tau_tenant(const dsp_t *s, double tau, int32_t tenant);
double dsp_threshold(const ds_engine_t *e, const dsp_t *s, int32_t j, int32_t part);
int dsp_try_colocate(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now);
/* the same with both thresholds at least floor_tau */
int dsp_try_colocate_min(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now, double floor_tau);

/* ds_preempt.c (docs/policy.md §4.1) */
int dsp_try_preempt(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now);
/* fair_share & RECLAIM: BE job j of a tenant below its fair share takes BE GPUs of tenants above theirs, each
 * victim's tenant left at or above its share (as KAI's MaintainFairShare), cheapest set by the same cost */
int dsp_try_fair_reclaim(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now);
void dsp_preempt_memo_reset(dsp_t *s);

/* ds_place.c: placement escalation of one job (docs/policy.md §4); 1 when it started */
int dsp_place(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now);
int dsp_try_cpu_reclaim(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now);

/* ds_monitor.c (docs/policy.md §6) */
enum { DSP_RF_ANY = 0, DSP_RF_SHORTER = 1 };
void dsp_monitor(ds_engine_t *e, dsp_t *s, int64_t now);

/* ds_workcons.c: idle GPUs to the jobs classification left over, as BE */
void dsp_work_conserve(ds_engine_t *e, dsp_t *s, int32_t part, int64_t now);

/* ---- on top, beside deepshare.c (the ops and the pass) */

/* ds_explain.c: the policy's account of one job (ops->explain) */
void dsp_explain(const ds_engine_t *e, const void *state, int32_t j, int64_t now, ds_buf_t *out);

#endif
