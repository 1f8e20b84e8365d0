/* kai_config.c: the KAI model's parameters, each a flag and a --config line with KAI-Scheduler's own
 * default (docs/peers.md, "KAI", knobs). */
#include "kai/kai_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *kai_config_new(void)
{
    kai_config_t *c = ds_xmalloc(sizeof *c);
    kai_config_default(c);
    return c;
}

void kai_config_free(void *c) { free(c); }

int kai_config_set(void *config, const char *key, const char *value, ds_error_t *err)
{
    kai_config_t *c = config;
    if (!strcmp(key, "kai-classes")) return pq_parse_classes(key, value, &c->classes, err);
    if (!strcmp(key, "kai-over-quota-weight")) {
        if (!strcmp(value, "1")) c->weight_by_quota = 0;
        else if (!strcmp(value, "quota")) c->weight_by_quota = 1;
        else {
            ds_error_set(err, NULL, 0, NULL, "option --%s: '%s' is not 1 or quota", key, value);
            return DS_EINVAL;
        }
        return DS_OK;
    }
    if (!strcmp(key, "kai-limit-factor")) {
        double v;
        int rc = pq_parse_double(key, value, -1, 1e6, &v, err);
        if (rc) return rc;
        if (v != -1 && v < 1) {
            ds_error_set(err, NULL, 0, NULL, "option --%s: '%s' is neither -1 (no limit) nor at least 1 (a limit below "
                         "the quota would keep deserved GPUs out of reach)", key, value);
            return DS_EINVAL;
        }
        c->limit_factor = v;
        return DS_OK;
    }
    if (!strcmp(key, "kai-preempt-min-runtime")) return pq_parse_seconds(key, value, &c->preempt_min_runtime, err);
    if (!strcmp(key, "kai-reclaim-min-runtime")) return pq_parse_seconds(key, value, &c->reclaim_min_runtime, err);
    if (!strcmp(key, "kai-saturation-multiplier")) return pq_parse_double(key, value, 1, 1e6, &c->saturation_mult, err);
    if (!strcmp(key, "kai-period")) {
        int64_t v;
        int rc = pq_parse_seconds(key, value, &v, err);
        if (rc) return rc;
        if (v < 1) {
            ds_error_set(err, NULL, 0, NULL, "option --%s: '%s' must be at least 1 s", key, value);
            return DS_EINVAL;
        }
        c->period = v;
        return DS_OK;
    }
    return DS_ENOTFOUND;
}

void kai_config_help(FILE *f)
{
    fprintf(f,
            "  --kai-classes M              quota|all-g|all-be: trace jobs without a class become build (non-preemptible,\n"
            "                               priority 100) while their tenant's build jobs fit in its quota (quota), or all\n"
            "                               build, or all train (preemptible, 50); default quota\n"
            "  --kai-over-quota-weight W    1|quota: each queue's overQuotaWeight (KAI default 1)\n"
            "  --kai-limit-factor F         queue GPU limit = F x quota; -1 = no limit (KAI default -1)\n"
            "  --kai-preempt-min-runtime T  minruntime plugin defaultPreemptMinRuntime (s, or Nm, Nh; default 0)\n"
            "  --kai-reclaim-min-runtime T  minruntime plugin defaultReclaimMinRuntime (default 0)\n"
            "  --kai-saturation-multiplier X  proportion relcaimerSaturationMultiplier, >= 1 (default 1)\n"
            "  --kai-period T               schedule-period: the next session after evictions (default 1 s)\n");
}
