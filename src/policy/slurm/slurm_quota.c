/* slurm_quota.c: policy slurm-quota, the live setup deploy/slurm/variants/slurm-quota simulated: each tenant
 * an account whose association has GrpTRES=gres/gpu=<quota>, enforced, so a tenant never holds more than
 * its quota and idle quota is never lent; Fair Tree fair share (shares = quotas) plus age orders the queue;
 * the main scheduler and conservative backfill with time limits start jobs; nothing is preempted
 * (docs/peers.md, "Slurm"). The shared model is in slurm_core.c and its neighbours. */
#include "slurm_internal.h"

static void *quota_config_new(void) { return slm_config_new(SLM_QUOTA); }
static void quota_config_help(FILE *f) { slm_config_help(f, SLM_QUOTA); }
static int quota_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    return slm_init(e, config, SLM_QUOTA, state, err);
}

const ds_policy_ops_t ds_policy_slurm_quota = {
    .name = "slurm-quota",
    .summary = "Slurm as deployed with hard quotas: GrpTRES=gres/gpu=<quota> per account, Fair Tree fair share + age, "
               "backfill with time limits, no preemption",
    .props = DS_POLICY_EXACT_HOLD | DS_POLICY_PRODUCTION | DS_POLICY_USES_PREDICTORS | DS_POLICY_TYPED,
    .init = quota_init,
    .config_new = quota_config_new,
    .config_help = quota_config_help,
    SLM_SHARED_OPS,
};
