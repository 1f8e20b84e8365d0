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
    int32_t ahist[2][PQ_HB];       /* its admitted workloads by class and GPU count */
    int64_t ause[2];               /* and their GPUs by class */
    /* BestEffortFIFO bookkeeping: a workload is inadmissible while inadm_gen[j] == gen; requeueing the
     * inadmissible workloads (a workload finished or was evicted in the cohort) starts a new gen */
    int64_t gen, gen_seq;
    /* SchedulingEquivalenceHashing: after a NoFit or no-candidates head, the workloads of the same class and
     * size that were active then are inadmissible too, until the next requeue */
    int64_t mask_gen[2][PQ_HB], mask_seq[2][PQ_HB];
    int32_t sticky;                /* the preemptor workload kept at the head (BestEffortFIFO), -1 */
    int32_t cur[2];                /* head cursors in its two pending lists, and the lists' epochs */
    uint32_t cur_epoch[2];
} kq_cq_t;

typedef struct kq_entry {
    int32_t cq, job;               /* cq: the tenant */
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
    int32_t *pq, *pq_off;          /* CQs of each cohort (partition) */
    pq_fam_t pend;                 /* pending workloads: list 2 x tenant + class, by creation */
    pq_fam_t adm;                  /* admitted workloads: list 2 x tenant + class, by admission */
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
    int64_t *W, *S0, *usage_local, *nominal_local;
    uint32_t *pre_mark, cycle_mark;
    kq_snap_t snap;
    int32_t snap_part;
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
void kq_admit(ds_engine_t *e, kueue_t *s, int32_t j);
void kq_evict(ds_engine_t *e, kueue_t *s, int32_t j, int64_t now);
void kq_mark_placed(ds_engine_t *e, kueue_t *s, int32_t j);
void kq_snap_bind(ds_engine_t *e, kueue_t *s, int32_t part);

#endif
