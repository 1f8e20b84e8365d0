/* slurm_borrow.c: policy slurm-borrow, the live setup deploy/slurm/variants/slurm-borrow simulated: no hard
 * cap; job_submit.lua routes a job to QOS normal while its account's GPUs in normal (pending or running, the
 * job included) stay within the quota and to QOS borrow beyond it, at submission, for good; QOS normal
 * (priority 100, PriorityWeightQOS=100000) comes first and preempts borrow (PreemptType=preempt/qos,
 * PreemptMode=REQUEUE, GraceTime 0); the same Fair Tree fair share, age, main scheduler and backfill as
 * slurm-quota (docs/peers.md, "Slurm"). The shared model is in slurm_core.c and its neighbours. */
#include "slurm_internal.h"

#include <stdlib.h>

static void *borrow_config_new(void)
{
    slm_config_t *c = ds_xmalloc(sizeof *c);
    slm_config_default(c, SLM_BORROW);
    return c;
}

static int borrow_config_set(void *config, const char *key, const char *value, ds_error_t *err)
{
    return slm_config_set(config, key, value, err);
}

static void borrow_config_help(FILE *f) { slm_config_help(f, SLM_BORROW); }

static int borrow_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    slm_config_t c;
    if (config) c = *(const slm_config_t *)config;
    else slm_config_default(&c, SLM_BORROW);
    return slm_init(e, &c, state, err);
}

const ds_policy_ops_t ds_policy_slurm_borrow = {
    .name = "slurm-borrow",
    .summary = "Slurm as deployed with soft quotas: job_submit.lua routes over-quota jobs to a QOS that preempt/qos "
               "requeues, Fair Tree fair share + age, backfill with time limits",
    .props = DS_POLICY_PREEMPTIVE | DS_POLICY_EXACT_HOLD | DS_POLICY_PRODUCTION | DS_POLICY_USES_PREDICTORS | DS_POLICY_TYPED,
    .init = borrow_init,
    .fini = slm_fini,
    .enqueue = slm_enqueue,
    .withdraw = slm_withdraw,
    .on_finish = slm_on_finish,
    .cancel_start = slm_cancel_start,
    .schedule = slm_schedule,
    .next_timer = slm_next_timer,
    .config_new = borrow_config_new,
    .config_free = slm_config_free,
    .config_set = borrow_config_set,
    .config_help = borrow_config_help,
    .check = slm_check,
    .stats = slm_stats,
    .pending_order = slm_pending_order,
    .explain = slm_explain,
};
