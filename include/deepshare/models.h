/* models.h: the learned predictors of docs/predictors.md on XGBoost: per-tenant gradient-boosted runtime
 * models with a cluster fallback, learned online, and a random-forest colocation interference model. */
#ifndef DS_MODELS_H
#define DS_MODELS_H
/* layering (CMakeLists.txt): the predict layer's header, out of reach of the layers below it */
#if defined(DS_LAYER_BASE) || defined(DS_LAYER_ENGINE) || defined(DS_LAYER_IO) || defined(DS_LAYER_SIM)
#error "deepshare/models.h belongs to the predict layer: this layer may not include it (see CMakeLists.txt)"
#endif

#include "deepshare/coloc.h"
#include "deepshare/predictor.h"
#include "deepshare/trace.h"

/* ---------------------------------------------------------------- XGBoost wrapper (xgb.c) */

typedef struct ds_xgb ds_xgb_t;

#define DS_XGB_MAX_PARAMS 24
typedef struct ds_xgb_params {
    const char *key[DS_XGB_MAX_PARAMS];
    char val[DS_XGB_MAX_PARAMS][32];
    int n;
    int rounds;
    int nthread;   /* training threads; prediction always uses one (0: XGBoost's default) */
} ds_xgb_params_t;

void ds_xgb_params_init(ds_xgb_params_t *p, int rounds);
void ds_xgb_param(ds_xgb_params_t *p, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Trains on n rows of d float features (row-major, NAN = missing) with labels y. */
int ds_xgb_train(ds_xgb_t **out, const float *x, const float *y, int64_t n, int32_t d, const ds_xgb_params_t *p,
                 ds_error_t *err);
/* The same, continuing from init's trees (init may be NULL): the result holds init's trees and
 * p->rounds new ones fitted to what init leaves unexplained on these rows. */
int ds_xgb_train_more(ds_xgb_t **out, ds_xgb_t *init, const float *x, const float *y, int64_t n, int32_t d,
                      const ds_xgb_params_t *p, ds_error_t *err);
/* Adds rounds trees to m in place, fitted to what m leaves unexplained on these n rows (its own
 * training parameters): the cost is the new trees plus one pass of the old ones over the rows. */
int ds_xgb_boost(ds_xgb_t *m, const float *x, const float *y, int64_t n, int rounds, ds_error_t *err);
/* Boosting rounds (trees) the model holds. */
int32_t ds_xgb_rounds(ds_xgb_t *m);
/* One row (d features); NAN if XGBoost fails (it never should on a valid model). */
double ds_xgb_predict1(ds_xgb_t *m, const float *x);
/* For a random forest (one round of num_parallel_tree trees): the standard deviation of its trees'
 * predictions of x, NAN when the trees cannot be read. */
double ds_xgb_tree_spread(ds_xgb_t *m, const float *x);
/* The same through XGBoost's own predictor (ds_xgb_predict1 walks a flat copy of the trees once it
 * agreed with XGBoost on the first 16 rows): for tests and benchmarks. */
double ds_xgb_predict1_ref(ds_xgb_t *m, const float *x);
int32_t ds_xgb_nfeatures(const ds_xgb_t *m);
/* 1 once the flat copy of the trees answers predictions alone (it agreed with XGBoost on the first). */
int ds_xgb_flat_active(const ds_xgb_t *m);
/* Serialized model (XGBoost's UBJSON); *buf is malloc'ed. */
int ds_xgb_save(ds_xgb_t *m, char **buf, size_t *len, ds_error_t *err);
/* Loads a serialized model; d is the feature count it must have. */
int ds_xgb_load(ds_xgb_t **out, const void *buf, size_t len, int32_t d, ds_error_t *err);
void ds_xgb_free(ds_xgb_t *m);

/* ---------------------------------------------------------------- regression metrics (metrics.c) */

/* Definitions (docs/predictors.md): actual a and prediction p in seconds, a >= 1.
 * MAPE = mean |p - a| / a x 100; MdAPE its median; R2 = 1 - SS_res / SS_tot on seconds; R2log the
 * same on ln(max(x, 1)); MedAE = median |p - a| in seconds. */
typedef struct ds_reg_metrics {
    int64_t n;
    double mape, mdape, r2, r2_log, medae;
    /* the paper leaves MAPE undefined; the readings a reader would try: MAPE over jobs of at least
     * 60 s (n60 of them); symmetric MAPE = mean 2|p - a| / (p + a); MAPE of log-durations = mean
     * |ln(1 + p) - ln(1 + a)| / ln(1 + a) */
    int64_t n60;
    double mape60, smape, mape_log;
} ds_reg_metrics_t;

/* Metrics over the rows with mask[i] != 0 (mask NULL: all rows). */
void ds_reg_metrics(const double *pred, const double *actual, const uint8_t *mask, int64_t n, ds_reg_metrics_t *m);

/* ---------------------------------------------------------------- runtime model (features.c, runtime_model.c) */

#define DS_RT_NFEAT 34

enum {
    DS_RT_TENANT_NONE = 0,     /* the cluster model for everyone */
    DS_RT_TENANT_SEPARATE = 1, /* an independent model per tenant, trained on its jobs only */
    DS_RT_TENANT_RESIDUAL = 2  /* per tenant: the cluster model's trees plus correction trees boosted on its jobs */
};

typedef struct ds_runtime_model_config {
    int32_t min_history;    /* finished jobs a tenant needs for its own model (50) */
    int32_t min_train;      /* finished jobs the cluster model needs (20) */
    int64_t retrain_period; /* > 0: retrain at multiples of this many seconds (v1); 0: by count (default) */
    int32_t retrain_every;  /* by count: retrain after this many new finishes (8000; sooner while history doubles) */
    int32_t window;         /* train on the latest this many finishes (12000; 0 = all) */
    int32_t inc_rounds;     /* > 0: trees added to the booster per retrain, fitted on the window (0: fresh booster) */
    int32_t max_bin;        /* histogram bins per feature (32): XGBoost's split search scales with them */
    double min_child_weight; /* 20 (v1: 2): fewer leaves fitted to a few noisy jobs */
    int32_t max_trees;      /* beyond this many trees, grow a fresh booster on the window (200) */
    int conditional;        /* remaining time from the residual distribution given elapsed (0: the
                             * simple max(pred - elapsed, 1), which scheduled better on Venus) */
    int per_tenant;         /* DS_RT_TENANT_*: how tenants with enough history get a model of their own */
    int use_model;          /* 0: history heuristic only (the fallback), for comparison */
    int frozen;             /* 1: never retrain (models loaded from a file) */
    int32_t rounds;         /* boosting rounds of a fresh booster (30; 10 + rows / 50 on fewer rows) */
    int32_t max_depth;      /* 3 */
    double eta;             /* 0.2 */
    double subsample;       /* 0.8 */
    double colsample;       /* colsample_bytree 0.8 */
    int32_t nthread;        /* training threads, 0 = XGBoost default (1: see runtime_model.c) */
    uint64_t seed;
    int64_t batch_gap;      /* submission batches: a job joins its owner's batch when submitted within this many s of
                             * its members (in a trace, of the last; 60; <= 0: no batch evidence), docs/predictors.md */
    int32_t batch_min_record; /* the evidence is used once, on at least this many of the latest (256) jobs finished with
                               * both estimates (20), the batch's erred less than the model's on clearly more than half
                               * (|ln(actual / estimate)|, a sign test at two standard deviations); 0: always */
    /* Called once per fallback situation (driver-provided: the engine does not print). */
    void (*log)(void *log_ctx, const char *msg);
    void *log_ctx;
} ds_runtime_model_config_t;

void ds_runtime_model_config_default(ds_runtime_model_config_t *c);

typedef struct ds_runtime_model ds_runtime_model_t;

/* A model for jobs of trace t (which may grow by appending jobs in submit order, as a daemon's does). */
ds_runtime_model_t *ds_runtime_model_create(const ds_trace_t *t, const ds_runtime_model_config_t *c);
void ds_runtime_model_destroy(ds_runtime_model_t *m);
/* Predicted exclusive run time (seconds, >= 1). The job's features are fixed at its first prediction
 * (which the driver makes at submit time); history is only what observe() was told. Retrains first
 * when now has crossed a retrain boundary. */
double ds_runtime_model_predict(ds_runtime_model_t *m, int32_t job, int64_t now);
/* Job finished at time now: its duration joins the history and the training set. */
void ds_runtime_model_observe(ds_runtime_model_t *m, int32_t job, int64_t now);
/* Retrains now on everything observed (normally automatic). Returns 0 or an XGBoost error. */
int ds_runtime_model_retrain(ds_runtime_model_t *m, ds_error_t *err);
/* Remaining run time of a job predicted to take pred seconds in all that has run elapsed seconds:
 * the median of pred x exp(r) - elapsed over recent log-residuals r with pred x exp(r) > elapsed
 * (elapsed when it outlived all; max(pred - elapsed, 1) before there are enough or if disabled). */
double ds_runtime_model_remaining(const ds_runtime_model_t *m, double pred, int64_t elapsed);
/* The same conditional estimate whatever the config says, or -1 before there are enough residuals. */
double ds_runtime_model_beyond(const ds_runtime_model_t *m, double pred, int64_t elapsed);
/* Batch evidence (docs/predictors.md): the unfinished siblings of job, when job is the latest observe()d,
 * whose batch_total that finish changed (*n; valid until the next observe), and the batch's estimate of
 * job's total run time given it has run elapsed s (< 0: its batch says nothing yet). */
const int32_t *ds_runtime_model_batch_revised(const ds_runtime_model_t *m, int32_t job, int32_t *n);
double ds_runtime_model_batch_total(ds_runtime_model_t *m, int32_t job, int64_t elapsed);
/* For the daemon's compacted table (src/daemon/rtmodel.c): job's batch (an index, stable while m lives; -1:
 * batches off), whether the batches' record has the evidence in use, and to taking from's record. */
int32_t ds_runtime_model_batch_of(ds_runtime_model_t *m, int32_t job);
int ds_runtime_model_batch_trusted(const ds_runtime_model_t *m);
void ds_runtime_model_batch_carry(ds_runtime_model_t *to, const ds_runtime_model_t *from);
/* Offline, for evaluation: each job's estimate as batch evidence would have it at its start under the schedule
 * end[] (start = end - duration): the median of its batch siblings that had ended by then (gap: --batch-gap),
 * else pred[i]. Fills out[njobs] and, when not NULL, has[njobs] (1: from the evidence); returns how many. */
int32_t ds_runtime_batch_at_start(const ds_trace_t *t, const int64_t *end, int64_t gap, const double *pred, double *out,
                                  uint8_t *has);
/* Wraps the model as the engine's runtime predictor (name "model"; bench_replay uses it). */
void ds_runtime_model_as_predictor(ds_runtime_model_t *m, ds_runtime_predictor_t *p);
/* Latest finish time the model has been told about (the online-protocol guard checks it). */
int64_t ds_runtime_model_latest_observed(const ds_runtime_model_t *m);
/* Finished jobs observed so far, in total and for one tenant. */
int64_t ds_runtime_model_observed(const ds_runtime_model_t *m, int32_t tenant);
/* Which model answered the last prediction: tenant index, -1 cluster, -2 history heuristic. */
int32_t ds_runtime_model_last_source(const ds_runtime_model_t *m);
/* Trained boosters: 1 for the cluster model plus one per tenant that has its own. */
int32_t ds_runtime_model_ntrained(const ds_runtime_model_t *m);

/* Serialization of the trained boosters (not the history, which comes from the trace being
 * predicted). Tenants are matched by name on load; loading makes the model frozen. */
int ds_runtime_model_save_buf(ds_runtime_model_t *m, char **buf, size_t *len, ds_error_t *err);
int ds_runtime_model_load_buf(ds_runtime_model_t *m, const char *buf, size_t len, const char *what, ds_error_t *err);

/* The online protocol over a whole trace: every job is predicted at its submit time from the jobs
 * with end[i] <= submit (finishes before arrivals at equal times), models retrain on the period.
 * Fills pred[njobs]; tenant_hist / user_hist (may be NULL) get each tenant's / user's finished-job
 * count at the job's submit time; source (may be NULL) the answering model. *leak gets the largest
 * (latest observed finish - submit) over all predictions: positive would mean a leak. */
/* The same protocol with an existing model (e.g. one loaded from a file: frozen, no retraining). */
int ds_runtime_online_run(ds_runtime_model_t *m, const int64_t *end, double *pred, int32_t *tenant_hist,
                          int32_t *user_hist, int32_t *source, int64_t *leak);
int ds_runtime_online_eval(const ds_trace_t *t, const int64_t *end, const ds_runtime_model_config_t *c, double *pred,
                           int32_t *tenant_hist, int32_t *user_hist, int32_t *source, int64_t *leak, ds_error_t *err);

/* ---------------------------------------------------------------- interference model */

/* One workload of single_data.csv: its exclusive profile and Lucid's sharing score. */
typedef struct ds_workload {
    char model[32], dataset[32];
    int32_t batch, amp;
    double speed, gpu_util, gmem_util, gmem;
    int32_t label;
} ds_workload_t;

typedef struct ds_single_profile {
    ds_workload_t *w;
    int32_t n;
} ds_single_profile_t;

int ds_single_read(ds_single_profile_t *s, const char *path, ds_error_t *err);
/* Index of a workload, -1 if absent. */
int32_t ds_single_find(const ds_single_profile_t *s, const char *model, const char *dataset, int32_t batch, int32_t amp);
void ds_single_free(ds_single_profile_t *s);
/* The workloads the trace's jobs carry (each job has its exclusive profile), label -1: lets the
 * forest train on a colocation profile without single_data.csv. Returns how many. */
int32_t ds_single_from_trace(ds_single_profile_t *s, const ds_trace_t *t);

#define DS_IF_NDESC 5     /* per job: batch, amp, gpu_util, gmem_util, gmem */
#define DS_IF_NFEAT (2 * DS_IF_NDESC + 3)

typedef struct ds_interference_config {
    int32_t trees;        /* num_parallel_tree (50) */
    int32_t max_bin;      /* histogram bins per feature (64) */
    int32_t max_depth;    /* 8 */
    double subsample;     /* 0.8 */
    double colsample;     /* colsample_bynode 0.8 */
    int32_t nthread;
    uint64_t seed;
} ds_interference_config_t;

void ds_interference_config_default(ds_interference_config_t *c);

/* A job's descriptor as the forest sees it. */
typedef struct ds_wdesc {
    float batch, amp, gpu_util, gmem_util, gmem;
} ds_wdesc_t;

void ds_interference_features(const ds_wdesc_t *a, const ds_wdesc_t *b, float *x);
/* A profiled workload's descriptor (single_data.csv's figures). */
void ds_wdesc_of(const ds_workload_t *w, ds_wdesc_t *d);

typedef struct ds_interference_model ds_interference_model_t;

/* Trains on the profiled pairs (each pair gives two rows: a beside b, b beside a). Pairs whose
 * workloads are not in single (or, when skip_model is set, that involve that model) are left out. */
int ds_interference_model_train(ds_interference_model_t **out, const ds_coloc_t *coloc,
                                const ds_single_profile_t *single, const ds_interference_config_t *c,
                                const char *skip_model, ds_error_t *err);
void ds_interference_model_destroy(ds_interference_model_t *m);
/* Predicted retention of a beside b, clamped to [0.05, 2]. */
double ds_interference_model_predict(ds_interference_model_t *m, const ds_wdesc_t *a, const ds_wdesc_t *b);
/* How much the forest's trees disagree about a beside b (the standard deviation of their predictions). */
double ds_interference_model_spread(ds_interference_model_t *m, const ds_wdesc_t *a, const ds_wdesc_t *b);
/* Wraps the model for a trace's jobs (descriptors from the job rows; per-workload-pair cache). */
void ds_interference_model_as_predictor(ds_interference_model_t *m, const ds_trace_t *t, ds_interference_predictor_t *p);
int ds_interference_model_save_buf(ds_interference_model_t *m, char **buf, size_t *len, ds_error_t *err);
int ds_interference_model_load_buf(ds_interference_model_t **out, const char *buf, size_t len, const char *what,
                                   ds_error_t *err);

/* Leave-one-model-out evaluation (folds grouped by model; the rows of pairs involving the held-out
 * model are tested) and the pair decision "both rho >= threshold" against Lucid's rule. */
typedef struct ds_interference_eval {
    int64_t rows;              /* job-in-pair predictions tested */
    double mae, r2, rmse;
    int64_t pairs;             /* pairs tested */
    /* confusion of the pair decision (positive = admit; truth: both measured rho >= threshold) */
    int64_t tp, fp, fn, tn;
    int64_t lucid_tp, lucid_fp, lucid_fn, lucid_tn;
    struct { char model[32]; int64_t rows; double mae, r2; } fold[32];
    int32_t nfolds;
} ds_interference_eval_t;

int ds_interference_eval_lomo(const ds_coloc_t *coloc, const ds_single_profile_t *single,
                              const ds_interference_config_t *c, double threshold, ds_interference_eval_t *out,
                              ds_error_t *err);

/* ---------------------------------------------------------------- model files (model_file.c: the only file I/O) */

/* A model file holds a kind ("runtime" or "interference"), the size and FNV-1a checksum of the serialized
 * models, then those bytes. Reading checks size and checksum before allocating or parsing anything; it
 * detects corruption, not tampering: model files must come from a trusted source. */
uint64_t ds_model_checksum(const char *buf, size_t len);
int ds_model_file_write(const char *path, const char *kind, const char *buf, size_t len, ds_error_t *err);
/* Reads a model file of the given kind; *buf is malloc'ed. A missing file is DS_ENOTFOUND. */
int ds_model_file_read(const char *path, const char *kind, char **buf, size_t *len, ds_error_t *err);

#endif
