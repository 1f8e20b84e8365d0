/* queue.h: per-partition ordered pending queues shared by the queue-based policies. */
#ifndef DS_POLICY_QUEUE_H
#define DS_POLICY_QUEUE_H

#include "jheap.h"
#include "deepshare/policy.h"

typedef struct ds_pqueue {
    ds_jheap_t *heaps;  /* one per partition */
    int32_t nparts;
    int32_t *pos;       /* heap position of every job */
} ds_pqueue_t;

void ds_pqueue_init(ds_pqueue_t *q, const ds_engine_t *e, ds_jheap_cmp cmp, const void *ctx);
void ds_pqueue_free(ds_pqueue_t *q);
void ds_pqueue_push(ds_pqueue_t *q, const ds_engine_t *e, int32_t job);
/* takes a pending job out of its partition's queue (a withdrawal) */
void ds_pqueue_remove(ds_pqueue_t *q, const ds_engine_t *e, int32_t job);
/* Places jobs in queue order and stops at the first that does not fit (head-of-line blocking,
 * no backfill): the reference semantics of FIFO, SJF and QSSF. Returns how many started. */
int32_t ds_pqueue_place_blocking(ds_pqueue_t *q, ds_engine_t *e, int32_t part, int64_t now);

/* The explanation of a job of a blocking queue policy (ops->explain): its place in its partition's queue
 * (order: the order's words, e.g. "first in, first out"), the head that blocks it, and the fit line.
 * name is the policy's. */
void ds_pqueue_explain(const ds_pqueue_t *q, const ds_engine_t *e, int32_t job, const char *name, const char *order,
                       ds_buf_t *out);

/* Compares two keys, then arrival order: the stable tie-break all reference policies share. */
static inline int ds_cmp_keys(double ka, double kb, int64_t sa, int64_t sb)
{
    if (ka != kb) return ka < kb ? -1 : 1;
    return (sa > sb) - (sa < sb);
}

/* Ops building blocks for a blocking policy whose only difference is its order (FIFO, SJF). */
int ds_pqueue_policy_new(ds_engine_t *e, ds_jheap_cmp cmp, void **state);
void ds_pqueue_policy_fini(void *state);
void ds_pqueue_policy_enqueue(ds_engine_t *e, void *state, int32_t job, int64_t now);
/* ops->withdraw: the job leaves its partition's queue */
void ds_pqueue_policy_withdraw(ds_engine_t *e, void *state, int32_t job, int64_t now);
void ds_pqueue_policy_schedule(ds_engine_t *e, void *state, int32_t part, int64_t now, int timer);
#endif
