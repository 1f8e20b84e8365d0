/* predictors.h: the --predictor option of the CLI: which runtime and interference predictors the
 * policies get (oracle or estimate file), kept in one place so new kinds (models) plug in here. */
#ifndef DS_CLI_PREDICTORS_H
#define DS_CLI_PREDICTORS_H

#include "deepshare/coloc.h"
#include "deepshare/predictor.h"
#include "deepshare/speeds.h"
#include "deepshare/trace.h"

typedef struct ds_cli_predictors {
    const char *kind;  /* "oracle" (default) or "file"; reported as "predictor" in the JSON */
    ds_runtime_predictor_t runtime;
    ds_interference_predictor_t interference;
    ds_predictors_t set;  /* what goes into ds_engine_config_t.predictors */
    const char *single;   /* --single FILE: workload profiles for the interference forest (model) */
    void *rt_model;       /* --predictor model: ds_model_predictors_t (cli/model_predictors.h) */
    const char *interference_kind; /* --interference model|measured; NULL: as --predictor says */
    int64_t batch_gap;    /* --batch-gap S: the runtime model's submission batches (-1: its default, 60 s) */
    int remaining;        /* --remaining: 0 default (simple), 1 simple, 2 conditional (the model's estimate) */
    const ds_speeds_t *speeds; /* the workload's speed table (typed clusters), set before setup; NULL: none */
    ds_speed_predictor_t speed;
    ds_runtime_predictor_t base_runtime; /* what runtime wraps when the trace carries time limits */
    struct ds_limits_wrap *limits;       /* NULL: no job has a time limit (or the oracle: nothing to add) */
} ds_cli_predictors_t;

void ds_cli_predictors_default(ds_cli_predictors_t *p);
/* Handles --predictor VALUE: 1 when it was this option, 0 when not, -1 after printing a bad value. */
int ds_cli_predictors_opt(ds_cli_predictors_t *p, const char *name, const char *val);
/* Builds the predictors once the workload is loaded (coloc may be NULL: retention 1 everywhere).
 * needed: whether any selected policy predicts; when 0 nothing is built (no training, no messages)
 * and the policies get the oracles. Returns 0, or an error with err filled. */
int ds_cli_predictors_setup(ds_cli_predictors_t *p, const ds_trace_t *t, const ds_coloc_t *coloc, int needed,
                            ds_error_t *err);
/* Frees what setup built (the models of --predictor model). */
void ds_cli_predictors_free(ds_cli_predictors_t *p);

#endif
