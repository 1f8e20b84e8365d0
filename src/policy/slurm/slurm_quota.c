/* slurm_quota.c: policy slurm-quota, the live setup deploy/slurm/variants/slurm-quota simulated: each tenant
 * an account whose association has GrpTRES=gres/gpu=<quota>, enforced, so a tenant never holds more than
 * its quota and idle quota is never lent; Fair Tree fair share (shares = quotas) plus age orders the queue;
 * the main scheduler and conservative backfill with time limits start jobs; nothing is preempted
 * (docs/peers.md, "Slurm"). The shared model is in slurm_core.c and its neighbours. */
#include "slurm_internal.h"

#include <stdlib.h>

static void *quota_config_new(void)
{
    slm_config_t *c = ds_xmalloc(sizeof *c);
    slm_config_default(c, SLM_QUOTA);
    return c;
}

static int quota_config_set(void *config, const char *key, const char *value, ds_error_t *err)
{
    return slm_config_set(config, key, value, err);
}

static void quota_config_help(FILE *f) { slm_config_help(f, SLM_QUOTA); }

static int quota_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    slm_config_t c;
    if (config) c = *(const slm_config_t *)config;
    else slm_config_default(&c, SLM_QUOTA);
    return slm_init(e, &c, state, err);
}

const ds_policy_ops_t ds_policy_slurm_quota = {
    .name = "slurm-quota",
    .summary = "Slurm as deployed with hard quotas: GrpTRES=gres/gpu=<quota> per account, Fair Tree fair share + age, "
               "backfill with time limits, no preemption",
    .props = DS_POLICY_EXACT_HOLD | DS_POLICY_PRODUCTION | DS_POLICY_USES_PREDICTORS | DS_POLICY_TYPED,
    .init = quota_init,
    .fini = slm_fini,
    .enqueue = slm_enqueue,
    .withdraw = slm_withdraw,
    .on_finish = slm_on_finish,
    .cancel_start = slm_cancel_start,
    .schedule = slm_schedule,
    .next_timer = slm_next_timer,
    .config_new = quota_config_new,
    .config_free = slm_config_free,
    .config_set = quota_config_set,
    .config_help = quota_config_help,
    .check = slm_check,
    .stats = slm_stats,
    .pending_order = slm_pending_order,
    .explain = slm_explain,
};
