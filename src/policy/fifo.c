/* fifo.c: First-In-First-Out, non-preemptive, head-of-line blocking (reference semantics). */
#include "queue.h"

static int cmp_fifo(const void *ctx, int32_t a, int32_t b)
{
    const ds_engine_t *e = ctx;
    return ds_cmp_keys((double)e->trace->jobs[a].submit, (double)e->trace->jobs[b].submit, e->js[a].arrival_seq,
                       e->js[b].arrival_seq);
}

static int fifo_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    (void)config;
    (void)err;
    return ds_pqueue_policy_new(e, cmp_fifo, state);
}

static void fifo_explain(const ds_engine_t *e, const void *state, int32_t job, int64_t now, ds_buf_t *out)
{
    (void)now;
    ds_pqueue_explain(state, e, job, "fifo", "first in, first out (submit time)", out);
}

const ds_policy_ops_t ds_policy_fifo = {
    .name = "fifo",
    .summary = "first in, first out; no preemption; stops at the first job that does not fit",
    .props = DS_POLICY_EXACT_HOLD | DS_POLICY_TYPED,
    .init = fifo_init,
    .fini = ds_pqueue_policy_fini,
    .enqueue = ds_pqueue_policy_enqueue,
    .withdraw = ds_pqueue_policy_withdraw,
    .schedule = ds_pqueue_policy_schedule,
    .explain = fifo_explain,
};
