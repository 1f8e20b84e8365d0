/* predictors.c: --predictor oracle|file: runtime from the true durations or from the --estimates file;
 * interference from the measured colocation profile (the oracle) until a model is chosen. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/predictors.h"
#include "deepshare/models.h"

void ds_cli_predictors_default(ds_cli_predictors_t *p)
{
    memset(p, 0, sizeof *p);
    p->kind = "oracle";
}

int ds_cli_predictors_opt(ds_cli_predictors_t *p, const char *name, const char *val)
{
    if (!strcmp(name, "single")) {
        p->single = val;
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

static void log_stderr(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "deepshare: %s\n", msg);
}

/* --predictor model: the online runtime model (learns from finishes, retrains daily in trace time)
 * and the interference forest trained on the colocation profile now; without a profile the
 * measured-retention oracle stands in (the simulator then runs every pair at retention 1 anyway). */
static int setup_models(ds_cli_predictors_t *p, const ds_trace_t *t, const ds_coloc_t *coloc, ds_error_t *err)
{
    ds_runtime_model_config_t rc;
    ds_runtime_model_config_default(&rc);
    rc.log = log_stderr;
    ds_runtime_model_t *rm = ds_runtime_model_create(t, &rc);
    p->rt_model = rm;
    ds_runtime_model_as_predictor(rm, &p->runtime);
    if (!coloc) {
        fprintf(stderr, "deepshare: --predictor model: no --coloc profile to train the interference model on: "
                        "using the measured retention (1 everywhere without a profile)\n");
        ds_interference_oracle(&p->interference, coloc);
        return 0;
    }
    ds_single_profile_t single;
    if (p->single) {
        if (ds_single_read(&single, p->single, err)) return -1;
    } else if (ds_single_from_trace(&single, t) == 0) {
        ds_error_set(err, NULL, 0, "single", "--predictor model: the trace's jobs carry no workload profiles "
                     "(model, gpu_util, gmem): give --single single_data.csv for the interference model");
        return -1;
    }
    ds_interference_config_t ic;
    ds_interference_config_default(&ic);
    ds_interference_model_t *im;
    int rc2 = ds_interference_model_train(&im, coloc, &single, &ic, NULL, err);
    ds_single_free(&single);
    if (rc2) return -1;
    p->if_model = im;
    ds_interference_model_as_predictor(im, t, &p->interference);
    return 0;
}

void ds_cli_predictors_free(ds_cli_predictors_t *p)
{
    ds_runtime_model_destroy(p->rt_model);
    ds_interference_model_destroy(p->if_model);
    p->rt_model = p->if_model = NULL;
}

int ds_cli_predictors_setup(ds_cli_predictors_t *p, const ds_trace_t *t, const ds_coloc_t *coloc, ds_error_t *err)
{
    if (!strcmp(p->kind, "model")) {
        if (setup_models(p, t, coloc, err)) {
            ds_cli_predictors_free(p);
            return -1;
        }
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
    } else {
        ds_runtime_oracle(&p->runtime);
    }
    ds_interference_oracle(&p->interference, coloc);
    p->set.runtime = &p->runtime;
    p->set.interference = &p->interference;
    return 0;
}
