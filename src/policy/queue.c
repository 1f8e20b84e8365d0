/* queue.c: per-partition ordered pending queues with head-of-line-blocking placement. */
#include "queue.h"

#include <stdlib.h>

void ds_pqueue_init(ds_pqueue_t *q, const ds_engine_t *e, ds_jheap_cmp cmp, const void *ctx)
{
    q->nparts = e->nparts;
    q->heaps = ds_xcalloc((size_t)(e->nparts ? e->nparts : 1), sizeof *q->heaps);
    q->pos = ds_xmalloc((size_t)(e->trace->njobs ? e->trace->njobs : 1) * sizeof *q->pos);
    for (int32_t j = 0; j < e->trace->njobs; j++) q->pos[j] = -1;
    for (int32_t p = 0; p < e->nparts; p++) ds_jheap_init(&q->heaps[p], q->pos, cmp, ctx);
}

void ds_pqueue_free(ds_pqueue_t *q)
{
    for (int32_t p = 0; p < q->nparts; p++) ds_jheap_free(&q->heaps[p]);
    free(q->heaps);
    free(q->pos);
}

void ds_pqueue_push(ds_pqueue_t *q, const ds_engine_t *e, int32_t job)
{
    ds_jheap_push(&q->heaps[e->js[job].part], job);
}

void ds_pqueue_remove(ds_pqueue_t *q, const ds_engine_t *e, int32_t job)
{
    ds_jheap_remove(&q->heaps[e->js[job].part], job);
}

int32_t ds_pqueue_place_blocking(ds_pqueue_t *q, ds_engine_t *e, int32_t part, int64_t now)
{
    ds_jheap_t *h = &q->heaps[part];
    int32_t n = 0;
    for (int32_t j; (j = ds_jheap_top(h)) >= 0; n++) {
        if (!ds_engine_place(e, j, now)) break;
        ds_jheap_pop(h);
    }
    return n;
}

void ds_pqueue_explain(const ds_pqueue_t *q, const ds_engine_t *e, int32_t j, const char *name, const char *order,
                       ds_buf_t *out)
{
    const ds_jstate_t *js = &e->js[j];
    if (js->status == DS_JS_RUNNING) {
        ds_bprintf(out, "  order: started in its turn (%s); %s never preempts a running job\n", order, name);
        return;
    }
    if (js->status != DS_JS_PENDING) return;
    const ds_jheap_t *h = &q->heaps[js->part];
    int32_t ahead = 0, head = ds_jheap_top(h);
    for (int32_t i = 0; i < h->n; i++) ahead += h->a[i] != j && h->cmp(h->ctx, h->a[i], j) < 0;
    ds_bprintf(out, "  order: %s; %d of %d waiting%s\n", order, ahead + 1, h->n, e->nparts > 1 ? " in its partition" : "");
    if (head >= 0 && head != j) {
        const ds_job_t *hj = &e->trace->jobs[head];
        ds_bprintf(out, "  blocked: job %lld (%d GPU%s) heads the queue and %s: %s starts no job past the first that "
                   "does not fit (no backfill)\n", (long long)hj->id, hj->gpus, hj->gpus == 1 ? "" : "s",
                   e->js[head].held ? "is held by the driver, which blocks like a job that does not fit" : "does not fit yet",
                   name);
    } else if (head == j) {
        ds_bprintf(out, "  head: it is next; it starts once GPUs for it are free\n");
    }
    ds_explain_fit(e, j, out);
}

int ds_pqueue_policy_new(ds_engine_t *e, ds_jheap_cmp cmp, void **state)
{
    ds_pqueue_t *q = ds_xmalloc(sizeof *q);
    ds_pqueue_init(q, e, cmp, e);
    *state = q;
    return DS_OK;
}

void ds_pqueue_policy_fini(void *state)
{
    ds_pqueue_free(state);
    free(state);
}

void ds_pqueue_policy_enqueue(ds_engine_t *e, void *state, int32_t job, int64_t now)
{
    (void)now;
    ds_pqueue_push(state, e, job);
}

void ds_pqueue_policy_withdraw(ds_engine_t *e, void *state, int32_t job, int64_t now)
{
    (void)now;
    ds_pqueue_remove(state, e, job);
}

void ds_pqueue_policy_schedule(ds_engine_t *e, void *state, int32_t part, int64_t now, int timer)
{
    (void)timer;
    ds_pqueue_place_blocking(state, e, part, now);
}
