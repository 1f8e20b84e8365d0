/* kai_state.h: the KAI model's run state, shared by its files (kai.c: ops and bookkeeping; kai_cycle.c:
 * the scheduling session; kai_config.c: parameters). */
#ifndef DS_POLICY_KAI_STATE_H
#define DS_POLICY_KAI_STATE_H

#include "kai/kai.h"

enum { KAI_G = 0, KAI_BE = 1 }; /* list of a job inside its queue: build (non-preemptible) before train */
enum { KAI_REASON_RECLAIM = 1, KAI_REASON_PREEMPT = 2 };

typedef struct kai_queue {
    int32_t tenant, part;
    double deserved, weight, limit; /* GPUs; limit -1 = none */
    double fair;                    /* fair share of this session */
    int64_t alloc, alloc_np, alloc_cpu, alloc_mem; /* running jobs: GPUs, of which non-preemptible; CPUs, MiB */
    int64_t gdemand;                /* GPUs of its build-class jobs not finished (the class mapping) */
    int32_t hist[2][PQ_HB];         /* its pending jobs by list and GPU count */
    int32_t minp[2];                /* smallest GPU bucket with a pending job per list (0: none), -1: to recount */
    int32_t nrun_be;                /* its running preemptible jobs */
    /* a walk over its pending jobs (one session action at a time) */
    int32_t cls, cur, head;         /* list, index, job at the cursor (-1: walked out) */
    int32_t failg[2];               /* scheduling signatures: smallest job per list that failed this action */
    int64_t memo_run, memo_share;   /* the state a failure below was seen in (run and share versions) */
    int32_t memo_failg[2];          /* smallest job per list whose reclaim failed in that state */
    /* a walk over its running preemptible jobs, newest first (victims) */
    int32_t vcur, vnext;
    uint8_t vlegal;                 /* its victims can pass a reclaim strategy at all (above the threshold) */
    int64_t vtaken_gpu, vtaken_cpu, vtaken_mem;
    double key[6];                  /* its place in the queue order (ascending) */
    double vkey[6];                 /* the same as a victim queue (the order reversed) */
} kai_queue_t;

typedef struct kai_stats {
    int64_t sessions, allocated, reclaims, reclaim_victims, reclaim_attempts, preempts, preempt_victims;
    int64_t np_victims;             /* non-preemptible jobs evicted: must stay 0 */
    int64_t reclaim_illegal;        /* victims taken without a strategy that allows it: must stay 0 */
    int64_t victim_place_failed;    /* victims evicted, then the job still did not fit */
    int64_t victims_walked;         /* potential victims the solver looked at */
} kai_stats_t;

typedef struct kai {
    kai_config_t cfg;
    const ds_trace_t *t;
    int32_t nt, nparts, gpn, maxg; /* maxg: the largest job of the trace */
    kai_queue_t *q;
    int32_t *pq, *pq_off;           /* queues of each partition: pq[pq_off[p] .. pq_off[p+1]) */
    int64_t *part_cpus, *part_mem;  /* capacity of each partition */
    pq_fam_t pend;                  /* pending jobs: list 2 x tenant + (0 build, 1 train) */
    pq_fam_t run;                   /* running preemptible jobs: list = tenant, by creation */
    uint8_t *seen;                  /* 0 not arrived, 1 pending, 2 running, 3 done */
    uint8_t *cls;                   /* KAI_G or KAI_BE, fixed at submit */
    double max_deserved_seen;
    pq_heap_t qh, vh;               /* queues in session order; victim queues in reverse order */
    /* scratch of one solver run */
    int32_t *pot, npot;             /* potential victims in the order taken */
    int32_t *nhead;                 /* per node: its last (pot index, node) link, -1 */
    int32_t *lnext, *lpot, nlink;   /* links: previous link of the same node, pot index */
    uint8_t *recd;                  /* per pot index: already a victim of an earlier pod */
    double *ws_rem;                 /* legality scratch, per queue */
    uint8_t *ws_touched;
    int32_t *acc_gpu, *acc_cpu;     /* per node: GPUs and CPUs the potential victims hold there */
    int64_t *acc_mem;
    int32_t *touched, ntouched;
    uint8_t *is_touched;
    int32_t *sel;                   /* the victims of a scenario */
    kai_qview_t *views;
    kai_share_in_t *sin;            /* fair-share division inputs and outputs, per queue of a partition */
    double *sout;
    int32_t *vof, *vqmap;
    double *vg;
    pq_fit_t fit;                   /* what could still be placed this session */
    /* non-preemptible GPUs per node ("blockers": no reclaim or preemption frees them), nodes of each
     * partition by blocker count, and the nodes of every running non-preemptible job */
    uint8_t *blockers;
    int32_t *blk_hist;              /* (gpn + 1) per partition */
    int32_t *jnodes;                /* per job: the node of each of its GPUs, at jnode_off[j] */
    int64_t *jnode_off;
    int64_t run_version, share_version; /* bumped when the running set or any fair share changes */
    uint8_t *used;                  /* nodes taken by the pods of a multi-node job being solved */
    int64_t timer;                  /* next session wanted (evictions, min-runtime expiry) */
    int evicted;
    int32_t nlegal;                 /* victim queues in s->vh with vlegal set */
    kai_stats_t st;
} kai_t;

void kai_session(ds_engine_t *e, kai_t *s, int32_t part, int64_t now);
/* bookkeeping (kai_book.c) */
void kai_on_start(ds_engine_t *e, kai_t *s, int32_t j);
double kai_queue_allocatable(const kai_queue_t *q);
void kai_pend_add(ds_engine_t *e, kai_t *s, int32_t j);
void kai_pend_remove(kai_t *s, int32_t j);
void kai_run_add(const ds_engine_t *e, kai_t *s, int32_t j);
void kai_run_remove(const ds_engine_t *e, kai_t *s, int32_t j);

#endif
