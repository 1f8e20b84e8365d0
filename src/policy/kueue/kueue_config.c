/* kueue_config.c: the Kueue models' parameters, each a flag and a --config line with the recipe's setting or
 * Kueue's own default (docs/peers.md, "Kueue", knobs). */
#include "kueue/kueue_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void kueue_config_default(kueue_config_t *c, int fair_sharing)
{
    c->fair_sharing = fair_sharing;
    c->classes = PQ_CLASSES_QUOTA;
    c->within_cq = 1;      /* LowerPriority */
    c->reclaim_cohort = 2; /* Any */
    c->strategies[0] = KQ_FS_LTE_FINAL; /* parseStrategies' default: both, in this order */
    c->strategies[1] = KQ_FS_LT_INITIAL;
    c->preempt_within_nominal = 1;
    c->prioritize_nonborrowing = 1;
    c->max_cycles = 1000000;
    c->requeue_period = 1;
    c->eviction_latency = 1;
    c->flavor_order[0] = '\0';            /* the cluster's type order */
    c->when_can_borrow = KQ_MAY_STOP;      /* Kueue's defaults (v1beta2; v1beta1 called MayStopSearch Borrow/Preempt) */
    c->when_can_preempt = KQ_TRY_NEXT;
    c->preference = KQ_PREF_UNSET;
}

static void *config_new(int fs)
{
    kueue_config_t *c = ds_xmalloc(sizeof *c);
    kueue_config_default(c, fs);
    return c;
}

void *kueue_config_new(void) { return config_new(0); }
void *kueue_fs_config_new(void) { return config_new(1); }
void kueue_config_free(void *c) { free(c); }

static int pick(const char *key, const char *value, const char *const *names, int n, int *out, ds_error_t *err)
{
    for (int i = 0; i < n; i++)
        if (names[i] && !strcmp(value, names[i])) {
            *out = i;
            return DS_OK;
        }
    char list[200] = "";
    for (int i = 0; i < n; i++)
        if (names[i]) snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", list[0] ? ", " : "", names[i]);
    ds_error_set(err, NULL, 0, NULL, "option --%s: '%s' is not one of %s", key, value, list);
    return DS_EINVAL;
}

static int bool01(const char *key, const char *value, int *out, ds_error_t *err)
{
    static const char *const b[] = {"0", "1"};
    return pick(key, value, b, 2, out, err);
}

int kueue_config_set(void *config, const char *key, const char *value, ds_error_t *err)
{
    kueue_config_t *c = config;
    if (!strcmp(key, "kueue-classes")) return pq_parse_classes(key, value, &c->classes, err);
    if (!strcmp(key, "kueue-within-cluster-queue")) {
        static const char *const n[] = {"Never", "LowerPriority"};
        return pick(key, value, n, 2, &c->within_cq, err);
    }
    if (!strcmp(key, "kueue-reclaim-within-cohort")) {
        static const char *const n[] = {"Never", "LowerPriority", "Any"};
        return pick(key, value, n, 3, &c->reclaim_cohort, err);
    }
    if (!strcmp(key, "kueue-flavor-order")) {
        size_t n = strlen(value);
        if (n == 0 || n >= sizeof c->flavor_order) {
            ds_error_set(err, NULL, 0, NULL, "option --%s: give GPU type names, comma-separated (at most %d characters)",
                         key, (int)sizeof c->flavor_order - 1);
            return DS_EINVAL;
        }
        memcpy(c->flavor_order, value, n + 1); /* checked against the cluster's types when the run starts */
        return DS_OK;
    }
    if (!strcmp(key, "kueue-when-can-borrow") || !strcmp(key, "kueue-when-can-preempt")) {
        /* v1beta2's MayStopSearch, or v1beta1's name for it (Borrow, Preempt) */
        int borrow = !strcmp(key, "kueue-when-can-borrow");
        const char *const n[] = {"MayStopSearch", "TryNextFlavor", borrow ? "Borrow" : "Preempt"};
        int k;
        int rc = pick(key, value, n, 3, &k, err);
        if (rc) return rc;
        *(borrow ? &c->when_can_borrow : &c->when_can_preempt) = k == 1 ? KQ_TRY_NEXT : KQ_MAY_STOP;
        return DS_OK;
    }
    if (!strcmp(key, "kueue-flavor-preference")) {
        static const char *const n[] = {NULL, "BorrowingOverPreemption", "PreemptionOverBorrowing"};
        return pick(key, value, n, 3, &c->preference, err);
    }
    if (!strcmp(key, "kueue-eviction-latency")) return pq_parse_seconds(key, value, &c->eviction_latency, err);
    if (!strcmp(key, "kueue-requeue-batch-period")) return pq_parse_seconds(key, value, &c->requeue_period, err);
    if (!strcmp(key, "kueue-max-cycles")) {
        double v;
        int rc = pq_parse_double(key, value, 1, 1e9, &v, err);
        if (!rc) c->max_cycles = (int32_t)v;
        return rc;
    }
    return DS_ENOTFOUND;
}

int kueue_fs_config_set(void *config, const char *key, const char *value, ds_error_t *err)
{
    kueue_config_t *c = config;
    if (!strcmp(key, "kueue-fs-strategies")) {
        /* the API accepts either strategy alone, or both in this order */
        static const char *const n[] = {"LessThanOrEqualToFinalShare", "LessThanInitialShare",
                                        "LessThanOrEqualToFinalShare,LessThanInitialShare"};
        int k;
        int rc = pick(key, value, n, 3, &k, err);
        if (rc) return rc;
        c->strategies[0] = k == 1 ? KQ_FS_LT_INITIAL : KQ_FS_LTE_FINAL;
        c->strategies[1] = k == 2 ? KQ_FS_LT_INITIAL : 0;
        return DS_OK;
    }
    if (!strcmp(key, "kueue-fs-preempt-within-nominal")) return bool01(key, value, &c->preempt_within_nominal, err);
    if (!strcmp(key, "kueue-fs-prioritize-non-borrowing")) return bool01(key, value, &c->prioritize_nonborrowing, err);
    return kueue_config_set(config, key, value, err);
}

void kueue_config_help(FILE *f)
{
    fprintf(f,
            "  --kueue-classes M            quota|all-g|all-be: trace jobs without a class get the high WorkloadPriorityClass\n"
            "                               (100) while their tenant's such jobs fit in its quota, or all, or none (50)\n"
            "  --kueue-within-cluster-queue P  Never|LowerPriority (recipe: LowerPriority)\n"
            "  --kueue-reclaim-within-cohort P Never|LowerPriority|Any (recipe: Any)\n"
            "  --kueue-requeue-batch-period T  inadmissible workloads return T after quota is released (Kueue: 1 s)\n"
            "  --kueue-eviction-latency T   model: an evicted workload rejoins its queue T later (default 1 s)\n"
            "  --kueue-max-cycles N         model guard: scheduling cycles per instant before waiting a second (1000000)\n"
            "  Several GPU types (one ResourceFlavor per type, nominalQuota = the tenant's quota of that type):\n"
            "  --kueue-flavor-order T1,T2.. the ClusterQueues' flavor list, every type once (default: the cluster's order)\n"
            "  --kueue-when-can-borrow P    flavorFungibility.whenCanBorrow: MayStopSearch (Kueue's default; v1beta1:\n"
            "                               Borrow) or TryNextFlavor\n"
            "  --kueue-when-can-preempt P   flavorFungibility.whenCanPreempt: TryNextFlavor (Kueue's default) or\n"
            "                               MayStopSearch (v1beta1: Preempt)\n"
            "  --kueue-flavor-preference P  flavorFungibility.preference when both are TryNextFlavor:\n"
            "                               BorrowingOverPreemption (Kueue's behaviour when unset) or PreemptionOverBorrowing\n");
}

void kueue_fs_config_help(FILE *f)
{
    kueue_config_help(f);
    fprintf(f,
            "  --kueue-fs-strategies S      fairSharing.preemptionStrategies: LessThanOrEqualToFinalShare,\n"
            "                               LessThanInitialShare or both (Kueue's default: both, in that order)\n"
            "  --kueue-fs-preempt-within-nominal 0|1   feature gate FairSharingPreemptWithinNominal (1)\n"
            "  --kueue-fs-prioritize-non-borrowing 0|1 feature gate FairSharingPrioritizeNonBorrowing (1)\n");
}
