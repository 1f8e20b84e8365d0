/* predictors.c: --predictor model|oracle|file: the learned models (default), the truth (true durations,
 * measured colocation profile) or durations from the --estimates file with the measured profile. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/predictors.h"
#include "cli/model_predictors.h"
#include "deepshare/limits.h"

void ds_cli_predictors_default(ds_cli_predictors_t *p)
{
    memset(p, 0, sizeof *p);
    p->kind = "model";
    p->batch_gap = -1;
}

int ds_cli_predictors_opt(ds_cli_predictors_t *p, const char *name, const char *val)
{
    if (!strcmp(name, "single")) {
        p->single = val;
        return 1;
    }
    if (!strcmp(name, "remaining")) {
        if (strcmp(val, "conditional") && strcmp(val, "simple")) {
            fprintf(stderr, "deepshare: option --remaining: '%s' is not conditional or simple\n", val);
            return -1;
        }
        p->remaining = !strcmp(val, "simple") ? 1 : 2;
        return 1;
    }
    if (!strcmp(name, "batch-gap")) {
        char *end;
        long long v = strtoll(val, &end, 10);
        if (end == val || *end || v < 0 || v > 86400) {
            fprintf(stderr, "deepshare: option --batch-gap: '%s' is not a whole number of seconds in 0..86400\n", val);
            return -1;
        }
        p->batch_gap = v;
        return 1;
    }
    if (!strcmp(name, "interference")) {
        if (strcmp(val, "model") && strcmp(val, "measured")) {
            fprintf(stderr, "deepshare: option --interference: '%s' is not model or measured\n", val);
            return -1;
        }
        p->interference_kind = val;
        return 1;
    }
    if (strcmp(name, "predictor")) return 0;
    if (!strcmp(val, "oracle")) p->kind = "oracle";
    else if (!strcmp(val, "file")) p->kind = "file";
    else if (!strcmp(val, "model")) p->kind = "model";
    else {
        fprintf(stderr, "deepshare: option --predictor: '%s' is not oracle, file or model\n", val);
        return -1;
    }
    return 1;
}

void ds_cli_predictors_free(ds_cli_predictors_t *p)
{
    ds_model_predictors_free(p->rt_model);
    p->rt_model = NULL;
    ds_limits_wrap_free(p->limits);
    p->limits = NULL;
}

/* Jobs that carry a time limit (a Slurm trace's --time) give every predicting policy the same extra
 * information: the limit caps a prediction, and a user's learned ratio of run time to limit replaces the
 * prediction where it has erred less (docs/predictors.md, "Time limits"). The oracle knows better. */
static void with_limits(ds_cli_predictors_t *p, const ds_trace_t *t)
{
    int32_t have = 0;
    for (int32_t j = 0; j < t->njobs && !have; j++) have = t->jobs[j].limit > 0;
    if (!have) return;
    p->base_runtime = p->runtime;
    p->limits = ds_limits_wrap(&p->runtime, &p->base_runtime, 3);
}

int ds_cli_predictors_setup(ds_cli_predictors_t *p, const ds_trace_t *t, const ds_coloc_t *coloc, int needed,
                            ds_error_t *err)
{
    /* every policy knows the measured speed of a workload on each type (type-aware placement needs it, also
     * for the baselines' type-aware variant, which predict nothing else) */
    p->set.speed = NULL;
    if (p->speeds && p->speeds->nrows) {
        ds_speed_from_table(&p->speed, p->speeds);
        p->set.speed = &p->speed;
    }
    if (!needed) {
        p->set.runtime = NULL;
        p->set.interference = NULL;
        return 0;
    }
    /* an object that only carries the truth of unprofiled pairs (--missing-rho without --coloc) is no profile
     * a policy's model could learn from; oracles and "measured" retention read the truth itself */
    const ds_coloc_t *train_on = coloc && coloc->no_profile ? NULL : coloc;
    if (!strcmp(p->kind, "model")) {
        /* online runtime models (daily retrain in trace time) and the forest trained on --coloc now */
        if (!(p->rt_model = ds_model_predictors_create(t, train_on, p->single, p->batch_gap, &p->runtime, &p->interference, err)))
            return -1;
        /* default simple: max(pred - elapsed, 1) through DeepShare's own formula */
        if (p->remaining != 2) p->runtime.remaining = NULL;
        if (p->interference_kind && !strcmp(p->interference_kind, "measured")) ds_interference_oracle(&p->interference, coloc);
        with_limits(p, t);
        p->set.runtime = &p->runtime;
        p->set.interference = &p->interference;
        return 0;
    }
    if (!strcmp(p->kind, "file")) {
        int32_t have = 0;
        for (int32_t j = 0; j < t->njobs; j++) have += !isnan(t->jobs[j].estimate);
        if (have == 0) {
            ds_error_set(err, NULL, 0, "predictor", "--predictor file needs --estimates FILE");
            return -1;
        }
        ds_runtime_from_estimates(&p->runtime);
        with_limits(p, t);
    } else {
        ds_runtime_oracle(&p->runtime);
    }
    if (p->interference_kind && !strcmp(p->interference_kind, "model")) {
        /* true durations beside the learned forest: the forest's share of a schedule's gap */
        ds_runtime_predictor_t unused;
        if (!(p->rt_model = ds_model_predictors_create(t, train_on, p->single, p->batch_gap, &unused, &p->interference, err)))
            return -1;
    } else {
        ds_interference_oracle(&p->interference, coloc);
    }
    p->set.runtime = &p->runtime;
    p->set.interference = &p->interference;
    return 0;
}
