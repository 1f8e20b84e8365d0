/* sjf.c: Shortest Job First on true durations (an oracle), non-preemptive, head-of-line blocking. */
#include "queue.h"

static int cmp_sjf(const void *ctx, int32_t a, int32_t b)
{
    const ds_engine_t *e = ctx;
    return ds_cmp_keys((double)e->trace->jobs[a].duration, (double)e->trace->jobs[b].duration, e->js[a].arrival_seq,
                       e->js[b].arrival_seq);
}

static int sjf_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    (void)config;
    (void)err;
    return ds_pqueue_policy_new(e, cmp_sjf, state);
}

static void sjf_explain(const ds_engine_t *e, const void *state, int32_t job, int64_t now, ds_buf_t *out)
{
    (void)now;
    ds_pqueue_explain(state, e, job, "sjf", "shortest true duration first", out);
}

const ds_policy_ops_t ds_policy_sjf = {
    .name = "sjf",
    .summary = "shortest job first on true durations (oracle); no preemption; head-of-line blocking",
    .props = DS_POLICY_EXACT_HOLD | DS_POLICY_TYPED,
    .init = sjf_init,
    .fini = ds_pqueue_policy_fini,
    .enqueue = ds_pqueue_policy_enqueue,
    .withdraw = ds_pqueue_policy_withdraw,
    .schedule = ds_pqueue_policy_schedule,
    .explain = sjf_explain,
};
