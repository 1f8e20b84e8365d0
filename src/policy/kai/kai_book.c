/* kai_book.c: the KAI model's bookkeeping the ops and the session share: a job's place in its queue's
 * pending lists, the queue's allocation counters, the running preemptible jobs and the non-preemptible GPUs
 * of each node. */
#include "kai/kai_state.h"

double kai_queue_allocatable(const kai_queue_t *q)
{
    kai_qview_t v = {q->deserved, q->fair, q->limit, (double)q->alloc, (double)q->alloc_np};
    return kai_allocatable(&v);
}

static int32_t list_of(const kai_t *s, int32_t j)
{
    return 2 * s->t->jobs[j].tenant + s->cls[j];
}

void kai_pend_add(ds_engine_t *e, kai_t *s, int32_t j)
{
    const ds_job_t *jb = &e->trace->jobs[j];
    pq_put(&s->pend, list_of(s, j), j, jb->submit);
    kai_queue_t *q = &s->q[jb->tenant];
    int c = s->cls[j], b = pq_hb(jb->gpus);
    q->hist[c][b]++;
    if (q->minp[c] >= 0 && (q->minp[c] == 0 || b < q->minp[c])) q->minp[c] = b;
}

void kai_pend_remove(kai_t *s, int32_t j)
{
    const ds_job_t *jb = &s->t->jobs[j];
    if (!pq_in(&s->pend, j)) return;
    pq_drop(&s->pend, j);
    kai_queue_t *q = &s->q[jb->tenant];
    int c = s->cls[j], b = pq_hb(jb->gpus);
    if (--q->hist[c][b] == 0 && q->minp[c] == b) q->minp[c] = -1;
}

/* A non-preemptible job's GPUs block their nodes for every solver (sign +1 at start, -1 at its end). */
static void blockers(const ds_engine_t *e, kai_t *s, int32_t j, int sign)
{
    const ds_job_t *jb = &e->trace->jobs[j];
    int32_t *nodes = &s->jnodes[s->jnode_off[j]];
    if (sign > 0)
        for (int32_t i = 0; i < jb->gpus; i++) nodes[i] = e->gpus[ds_engine_job_gpus(e, j)[i]].node;
    for (int32_t i = 0; i < jb->gpus; i++) {
        int32_t n = nodes[i], *h = &s->blk_hist[(size_t)e->nodes[n].part * (size_t)(s->gpn + 1)];
        h[s->blockers[n]]--;
        s->blockers[n] = (uint8_t)(s->blockers[n] + sign);
        h[s->blockers[n]]++;
    }
}

void kai_run_add(const ds_engine_t *e, kai_t *s, int32_t j)
{
    const ds_job_t *jb = &e->trace->jobs[j];
    kai_queue_t *q = &s->q[jb->tenant];
    s->run_version++;
    if (s->cls[j] == KAI_G) blockers(e, s, j, +1);
    q->alloc += jb->gpus;
    q->alloc_cpu += jb->cpus;
    q->alloc_mem += jb->mem_mib;
    if (s->cls[j] == KAI_G) {
        q->alloc_np += jb->gpus;
    } else {
        q->nrun_be++;
        pq_put(&s->run, jb->tenant, j, jb->submit);
    }
}

void kai_run_remove(const ds_engine_t *e, kai_t *s, int32_t j)
{
    const ds_job_t *jb = &s->t->jobs[j];
    kai_queue_t *q = &s->q[jb->tenant];
    s->run_version++;
    if (s->cls[j] == KAI_G) blockers(e, s, j, -1);
    q->alloc -= jb->gpus;
    q->alloc_cpu -= jb->cpus;
    q->alloc_mem -= jb->mem_mib;
    if (s->cls[j] == KAI_G) {
        q->alloc_np -= jb->gpus;
    } else {
        q->nrun_be--;
        pq_drop(&s->run, j);
    }
}

void kai_on_start(ds_engine_t *e, kai_t *s, int32_t j)
{
    kai_pend_remove(s, j);
    kai_run_add(e, s, j);
    s->seen[j] = 2;
    s->st.allocated++;
}

