/* slurm_borrow.c: policy slurm-borrow, the live setup deploy/slurm/variants/slurm-borrow simulated: no hard
 * cap; job_submit.lua routes a job to QOS normal while its account's GPUs in normal (pending or running, the
 * job included) stay within the quota and to QOS borrow beyond it, at submission, for good; QOS normal
 * (priority 100, PriorityWeightQOS=100000) comes first and preempts borrow (PreemptType=preempt/qos,
 * PreemptMode=REQUEUE, GraceTime 0); the same Fair Tree fair share, age, main scheduler and backfill as
 * slurm-quota (docs/peers.md, "Slurm"). The shared model is in slurm_core.c and its neighbours. */
#include "slurm_internal.h"

static void *borrow_config_new(void) { return slm_config_new(SLM_BORROW); }
static void borrow_config_help(FILE *f) { slm_config_help(f, SLM_BORROW); }
static int borrow_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    return slm_init(e, config, SLM_BORROW, state, err);
}

const ds_policy_ops_t ds_policy_slurm_borrow = {
    .name = "slurm-borrow",
    .summary = "Slurm as deployed with soft quotas: job_submit.lua routes over-quota jobs to a QOS that preempt/qos "
               "requeues, Fair Tree fair share + age, backfill with time limits",
    .props = DS_POLICY_PREEMPTIVE | DS_POLICY_EXACT_HOLD | DS_POLICY_PRODUCTION | DS_POLICY_USES_PREDICTORS | DS_POLICY_TYPED,
    .init = borrow_init,
    .config_new = borrow_config_new,
    .config_help = borrow_config_help,
    SLM_SHARED_OPS,
};
