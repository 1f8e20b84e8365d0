/* registry.c: the scheduling policies, by name, in display order. One line of DS_POLICIES adds a policy to
 * every place that lists them -- the CLI (simulate, compare, suite, --help), deepshared's 'policy' key, the
 * benchmarks and the tests (test_invariants runs every registered policy) -- since they all read
 * ds_policy_list(). */
#include "deepshare/policy.h"

#include <string.h>

/* X(id): the policy whose ops are ds_policy_<id> (its name, "slurm-quota" say, is the ops' own). */
#define DS_POLICIES(X) \
    X(fifo)            \
    X(sjf)             \
    X(qssf)            \
    X(tiresias)        \
    X(lucid)           \
    X(deepshare)       \
    X(kai)             \
    X(kueue)           \
    X(kueue_fs)        \
    X(slurm_quota)     \
    X(slurm_borrow)

#define DECLARE(id) extern const ds_policy_ops_t ds_policy_##id;
DS_POLICIES(DECLARE)
#undef DECLARE

#define ENTRY(id) &ds_policy_##id,
static const ds_policy_ops_t *const policies[] = {DS_POLICIES(ENTRY) NULL};
#undef ENTRY

const ds_policy_ops_t *const *ds_policy_list(void) { return policies; }

const ds_policy_ops_t *ds_policy_find(const char *name)
{
    for (int i = 0; policies[i]; i++)
        if (strcmp(policies[i]->name, name) == 0) return policies[i];
    return NULL;
}
