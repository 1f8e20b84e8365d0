/* kueue.h: the Kueue model's internals: configuration, the quota snapshot its preemption searches work on,
 * Classic preemption and Fair Sharing (DRS, strategies), exposed for the policy's files and its tests
 * (docs/peers.md, "Kueue"). */
#ifndef DS_POLICY_KUEUE_H
#define DS_POLICY_KUEUE_H

#include "../prod/prod.h"

/* WorkloadPriorityClass values of the two classes; index 0 (G) is the higher one */
#define KQ_PRIO_G 100
#define KQ_PRIO_BE 50

enum { KQ_FS_LTE_FINAL = 1, KQ_FS_LT_INITIAL = 2 }; /* fair sharing preemption strategies, as bits */

typedef struct kueue_config {
    int fair_sharing;        /* 0: Classic preemption (kueue); 1: fairSharing enabled (kueue-fs) */
    int classes;             /* PQ_CLASSES_*: which trace jobs get the higher WorkloadPriorityClass */
    int within_cq;           /* withinClusterQueue: 0 Never, 1 LowerPriority (recipe), 2 LowerOrNewerEqualPriority */
    int reclaim_cohort;      /* reclaimWithinCohort: 0 Never, 1 LowerPriority, 2 Any (recipe) */
    int strategies[2];       /* fair sharing preemptionStrategies in order; 0 = none */
    int preempt_within_nominal; /* gate FairSharingPreemptWithinNominal (on since v0.17) */
    int prioritize_nonborrowing; /* gate FairSharingPrioritizeNonBorrowing (on since v0.17) */
    int32_t max_cycles;      /* guard: scheduling cycles per event instant before yielding a second */
    int64_t eviction_latency; /* model: an evicted workload rejoins its queue this much later (1 s, the time unit) */
    int64_t requeue_period;  /* requeueBatchPeriod: inadmissible workloads return this long after quota is released (1 s) */
    /* ResourceFlavors, one per GPU type (docs/peers.md, "Kueue on several GPU types") */
    char flavor_order[160];  /* the ClusterQueues' flavor list, type names comma-separated; "" = the cluster's type order */
    int when_can_borrow;     /* flavorFungibility.whenCanBorrow: KQ_MAY_STOP (default) or KQ_TRY_NEXT */
    int when_can_preempt;    /* flavorFungibility.whenCanPreempt: KQ_MAY_STOP or KQ_TRY_NEXT (default) */
    int preference;          /* flavorFungibility.preference: KQ_PREF_UNSET (default), BorrowingOverPreemption, PreemptionOverBorrowing */
} kueue_config_t;

enum { KQ_MAY_STOP = 0, KQ_TRY_NEXT = 1 };
enum { KQ_PREF_UNSET = 0, KQ_PREF_BORROWING = 1, KQ_PREF_PREEMPTION = 2 };

void kueue_config_default(kueue_config_t *c, int fair_sharing);

/* ---- the quota snapshot of one cohort, as the preemption searches see it ----
 * ClusterQueues 0..ncq-1, each with its nominal quota (GPUs, one flavor) and usage (the GPUs of its admitted
 * workloads; a search changes usage while it simulates removals and restores it before returning).
 * Admitted workloads are reached through next(): CQ cq's workloads of priority class cls (0 = the higher),
 * most recently admitted first; *it starts at -1. gpus() and adm() (admission order, larger = later) describe
 * one workload. Borrowing and lending limits are nil (the recipe), so a CQ can use any unused quota of the
 * cohort: available = sum(nominal) - sum(usage). */
typedef struct kq_snap {
    int32_t ncq;
    const int64_t *nominal;
    int64_t *usage;
    int32_t (*next)(void *ctx, int32_t cq, int cls, int32_t *it);
    int32_t (*gpus)(void *ctx, int32_t wl);
    int32_t (*cq_of)(void *ctx, int32_t wl);
    int (*cls_of)(void *ctx, int32_t wl);
    /* the fewest GPUs of an admitted workload of CQ cq in class cls (0 when none); a lower bound is enough */
    int32_t (*min_gpus)(void *ctx, int32_t cq, int cls);
    /* the most GPUs of an admitted workload of CQ cq in class cls (0 when none); an upper bound is enough */
    int32_t (*max_gpus)(void *ctx, int32_t cq, int cls);
    /* GPUs of CQ cq's admitted workloads of class cls */
    int64_t (*cls_usage)(void *ctx, int32_t cq, int cls);
    int64_t (*adm)(void *ctx, int32_t wl);
    void *ctx;
    int within_cq, reclaim_cohort; /* the preemptor CQ's policies (every CQ has the recipe's) */
    int64_t tot_nominal, tot_usage; /* sums over the CQs, kept by the searches as usage changes */
    /* scratch the caller sizes: at least as many entries as admitted workloads, and ncq */
    int32_t *cur, *first, *phase, *retry; /* per CQ */
    int64_t *cur_adm;
    /* Several flavors: the snapshot is one flavor's (nominal, usage, next() its workloads); xborrow[cq] is what
     * CQ cq borrows on the other flavors and lendable the cohort's nominal quota over all flavors, since fair
     * sharing's DRS adds borrowing per resource name across flavors. xborrow NULL: one flavor. */
    const int64_t *xborrow;
    int64_t lendable;
} kq_snap_t;

int64_t kq_available(const kq_snap_t *s);
/* Dominant resource share of a CQ (fair_sharing.go dominantResourceShare, weight 1): GPUs used above
 * nominal, summed over the flavors, x 1000 / the cohort's lendable GPUs (sum of nominal quotas over the
 * flavors); 0 when not borrowing. */
double kq_drs(const kq_snap_t *s, int32_t cq);

/* Classic preemption (preemption.go classicalPreemptions): the targets to evict so that a workload of gpus
 * GPUs and class cls fits in CQ cq; written to out, their count returned (0: none found). Candidates: CQs
 * of the cohort over their nominal quota, in CandidatesOrdering (lower priority first, most recently
 * admitted first), then the own CQ's workloads the withinClusterQueue policy allows; taken greedily while
 * their CQ is still borrowing until the workload fits, then filled back in reverse order. */
int32_t kq_classic_targets(kq_snap_t *s, int32_t cq, int32_t gpus, int cls, int32_t *out);
/* Fair sharing preemption (fairPreemptions): target CQs by highest DRS, strategies[] in order
 * (KQ_FS_LTE_FINAL: preemptor share after <= target share after; KQ_FS_LT_INITIAL: preemptor share after <
 * target share before), within-nominal preemptors exempt when within_nominal is set; then fill-back. */
int32_t kq_fs_targets(kq_snap_t *s, int32_t cq, int32_t gpus, int cls, const int *strategies, int within_nominal,
                      int32_t *out);

#endif
