/* model_predictors.h: --predictor model: the learned predictors, one private instance per thread so
 * that concurrent replays (compare --jobs N) never share what a model has learned. */
#ifndef DS_MODEL_PREDICTORS_H
#define DS_MODEL_PREDICTORS_H

#include "deepshare/coloc.h"
#include "deepshare/predictor.h"
#include "deepshare/trace.h"

typedef struct ds_model_predictors ds_model_predictors_t;

/* Trains the interference forest on coloc (workload profiles from single, or from the trace's job
 * rows when single is NULL) and fills rt/ip with predictors whose state lives per calling thread.
 * Without coloc, ip is the measured-retention oracle. batch_gap: the runtime model's submission batches (s;
 * < 0: its default). NULL on error (err filled). */
ds_model_predictors_t *ds_model_predictors_create(const ds_trace_t *t, const ds_coloc_t *coloc, const char *single,
                                                  int64_t batch_gap,
                                                  ds_runtime_predictor_t *rt, ds_interference_predictor_t *ip,
                                                  ds_error_t *err);
/* Frees every per-thread instance (call after the replays' threads have finished). */
void ds_model_predictors_free(ds_model_predictors_t *s);

#endif
