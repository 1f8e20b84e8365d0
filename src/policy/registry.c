/* registry.c: the list of scheduling policies, by name, in display order. */
#include "deepshare/policy.h"

#include <string.h>

extern const ds_policy_ops_t ds_policy_fifo, ds_policy_sjf, ds_policy_qssf, ds_policy_tiresias;
extern const ds_policy_ops_t ds_policy_lucid;
extern const ds_policy_ops_t ds_policy_deepshare;
extern const ds_policy_ops_t ds_policy_slurm_quota, ds_policy_slurm_borrow;

static const ds_policy_ops_t *const policies[] = {
    &ds_policy_fifo,
    &ds_policy_sjf,
    &ds_policy_qssf,
    &ds_policy_tiresias,
    &ds_policy_lucid,
    &ds_policy_deepshare,
    &ds_policy_slurm_quota,
    &ds_policy_slurm_borrow,
    NULL,
};

const ds_policy_ops_t *const *ds_policy_list(void) { return policies; }

const ds_policy_ops_t *ds_policy_find(const char *name)
{
    for (int i = 0; policies[i]; i++)
        if (strcmp(policies[i]->name, name) == 0) return policies[i];
    return NULL;
}
