/* kueue_state.h: the Kueue model's run state, shared by its files (kueue.c: ops and bookkeeping;
 * kueue_cycle.c: scheduling cycles and node placement; kueue_config.c: parameters). */
#ifndef DS_POLICY_KUEUE_STATE_H
#define DS_POLICY_KUEUE_STATE_H

#include "kueue/kueue.h"

/* where a workload is: waiting in its ClusterQueue, admitted (quota reserved) but not on nodes yet,
 * admitted and running */
enum { KQ_NONE = 0, KQ_PENDING, KQ_ADMITTED, KQ_RUNNING, KQ_DONE };
enum { KQ_FIT = 1, KQ_PREEMPT, KQ_NOFIT };
enum { KQ_REASON_EVICT = 3 };

typedef struct kq_cq {
    int32_t tenant, part, local;   /* its tenant, cohort (partition) and index in the cohort */
    int64_t nominal, usage;        /* GPUs: nominalQuota, used by admitted workloads */
    int64_t unplaced;              /* GPUs of admitted workloads not on nodes yet */
    int64_t gdemand;               /* GPUs of its G-class workloads not finished (the class mapping) */
    /* BestEffortFIFO bookkeeping: a workload is inadmissible while inadm_gen[j] == gen; requeueing the
     * inadmissible workloads (a workload finished or was evicted in the cohort) starts a new gen */
    int64_t gen, gen_seq;
    /* SchedulingEquivalenceHashing: after a NoFit or no-candidates head, the workloads of the same class and
     * size that were active then are inadmissible too, until the next requeue */
    int64_t mask_gen[2][PQ_HB], mask_seq[2][PQ_HB];
    uint32_t mask_gmask[2][PQ_HB];  /* the requested types of the head that set the mask (several flavors) */
    int32_t sticky;                /* the preemptor workload kept at the head (BestEffortFIFO), -1 */
    int64_t rel_gen;               /* AllocatableResourceGeneration: counts its workloads that released quota */
    int32_t cur[2];                /* head cursors in its two pending lists, and the lists' epochs */
    uint32_t cur_epoch[2];
} kq_cq_t;

/* flavorassigner's granular mode of one flavor: how it could be assigned (preemptionMode, in rank order) and
 * whether the CQ borrows then (borrowingLevel, 0 or 1 in one flat cohort; INT_MAX for none) */
enum { KQ_PM_NOFIT = 0, KQ_PM_NOCAND, KQ_PM_PREEMPT, KQ_PM_RECLAIM, KQ_PM_FIT };
typedef struct kq_gmode {
    int pm, borrow;
} kq_gmode_t;
int kq_flavor_preferred(const kq_gmode_t *a, const kq_gmode_t *b, int preference);
int kq_flavor_try_next(const kq_gmode_t *m, const kueue_config_t *c);

/* A ClusterQueue's quota and usage in one ResourceFlavor (one GPU type; one flavor on an untyped cluster) */
typedef struct kq_fq {
    int64_t usage, unplaced;       /* GPUs of its admitted workloads on this flavor, and of those not on nodes yet */
    int32_t ahist[2][PQ_HB];       /* its admitted workloads on this flavor by class and GPU count */
    int64_t ause[2];               /* and their GPUs by class */
} kq_fq_t;

typedef struct kq_entry {
    int32_t cq, job;               /* cq: the tenant */
    int32_t f;                     /* the flavor assigned (a GPU type); for NoFit the first the workload may use */
    int32_t stop_k;                /* where in the flavor list the search stopped early, -1 when it tried them all */
    int mode, borrows;
    int32_t t0, nt;                /* its preemption targets in s->tgt */
    int done;
} kq_entry_t;

typedef struct kq_stats {
    int64_t cycles, passes, admitted, inadmissible, bulk_moved, preemptions_issued, evictions, evictions_unplaced;
    int64_t skipped, placed, placement_waits, cycle_guard_hits, illegal_victims, higher_prio_own_victims;
    int64_t searches, searches_found; /* preemption target searches, and those that found targets */
    double unplaced_gpu_s;        /* GPU-seconds admitted but not on nodes */
} kq_stats_t;

typedef struct kueue {
    kueue_config_t cfg;
    const ds_trace_t *t;
    int32_t nt, nparts, gpn;
    kq_cq_t *cq;
    int32_t nf;                    /* ResourceFlavors: the GPU types (1 on an untyped cluster) */
    int32_t forder[DS_MAX_GPU_TYPES]; /* the ClusterQueues' flavor list, in order */
    kq_fq_t *fq;                   /* per CQ (tenant) x flavor */
    uint8_t *flv;                  /* the flavor of an admitted or running workload */
    uint8_t *never;                /* per job x flavor: its partition's nodes of that type could never hold it */
    /* FlavorFungibilityPreserveScanProgress: a workload skipped in a cycle after its search stopped early resumes
     * the search at the next flavor (resume: list index, 0 = from the first), unless that is outdated */
    uint8_t *resume;
    int64_t *resume_cycle, *resume_gen;
    int32_t *pbuf;                 /* GPUs of one placement */
    int32_t *pq, *pq_off;          /* CQs of each cohort (partition) */
    pq_fam_t pend;                 /* pending workloads: list 2 x tenant + class, by creation */
    pq_fam_t adm;                  /* admitted workloads: list 2 x (tenant x nf + flavor) + class, by admission */
    pq_fam_t unpl;                 /* admitted, not placed yet: list = partition, by admission */
    uint8_t *state, *cls;
    int64_t *act_seq, *inadm_gen;
    int64_t *hold_until;           /* an evicted workload rejoins its queue then (the eviction's latency) */
    int64_t seq;
    int64_t *requeue_at;           /* per partition: when its inadmissible workloads are requeued (DS_TIME_NEVER) */
    /* one cycle */
    kq_entry_t *ent;
    int32_t nent;
    int32_t *tgt, ntgt, captgt;
    /* per flavor f and local CQ i at [f x nt + i]: the cycle's working usage, its usage at the cycle's start, the
     * snapshot's usage and nominal quota; xb: the current flavor's xborrow */
    int64_t *W, *S0, *usage_local, *nominal_local, *xb;
    uint32_t *pre_mark, cycle_mark;
    kq_snap_t snap;
    int32_t snap_part, snap_flv;
    /* placement */
    int32_t failc[DS_MAX_GPUS_PER_NODE + 1];
    int32_t mf, nfull;
    int64_t timer;
    int64_t *last_pass, placed_before;
    kq_stats_t st;
} kueue_t;

void kueue_pass(ds_engine_t *e, kueue_t *s, int32_t part, int64_t now);
/* bookkeeping (kueue_book.c) */
void kq_pend_insert(kueue_t *s, int32_t j);
void kq_release(kueue_t *s, int32_t j, int64_t now);
void kq_snap_init(kueue_t *s);
void kq_admit(ds_engine_t *e, kueue_t *s, int32_t j, int32_t f);
void kq_evict(ds_engine_t *e, kueue_t *s, int32_t j, int64_t now);
void kq_adopt(ds_engine_t *e, kueue_t *s, int32_t j);
void kq_unplace(ds_engine_t *e, kueue_t *s, int32_t j);
void kq_mark_placed(ds_engine_t *e, kueue_t *s, int32_t j);
void kq_snap_bind(ds_engine_t *e, kueue_t *s, int32_t part);
/* points the snapshot at flavor f of the bound cohort */
void kq_snap_flavor(kueue_t *s, int32_t f);
static inline kq_fq_t *kq_fq(const kueue_t *s, int32_t tenant, int32_t f) { return &s->fq[(size_t)tenant * (size_t)s->nf + (size_t)f]; }
/* a tenant's nominalQuota in flavor f: its quota of that GPU type */
static inline int64_t kq_nominal(const ds_engine_t *e, const kueue_t *s, int32_t tenant, int32_t f)
{
    return s->nf > 1 ? ds_engine_quota_t(e, tenant, f) : e->tenant_quota[tenant];
}

#endif
