/* test_predict.c: the XGBoost predictors: they recover synthetic relations, survive save/load
 * unchanged, reject corrupt files, cope with empty history, and never learn from the future. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deepshare/limits.h"
#include "deepshare/models.h"
#include "deepshare/residuals.h"
#include "testutil.h"

static uint64_t rng_state = 88172645463325252ull;
static double urand(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / 9007199254740992.0;
}

/* The wrapper learns a smooth nonlinear function of two inputs and ignores a noise column. */
static void test_xgb_learns_relation(void **state)
{
    (void)state;
    int n = 2000, d = 3;
    float *x = malloc(sizeof *x * (size_t)n * d), *y = malloc(sizeof *y * (size_t)n);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < d; k++) x[i * d + k] = (float)urand();
        y[i] = 3 * x[i * d] + (float)sin(6 * x[i * d + 1]);
    }
    ds_xgb_params_t p;
    ds_xgb_params_init(&p, 150);
    ds_xgb_param(&p, "max_depth", "5");
    ds_xgb_param(&p, "eta", "0.1");
    ds_xgb_t *m;
    ds_error_t err;
    assert_int_equal(ds_xgb_train(&m, x, y, n, d, &p, &err), 0);
    double se = 0, tot = 0;
    for (int i = 0; i < 500; i++) {
        float r[3] = {(float)urand(), (float)urand(), (float)urand()};
        double truth = 3 * r[0] + sin(6 * r[1]);
        double e = ds_xgb_predict1(m, r) - truth;
        se += e * e;
        tot += (truth - 1.5) * (truth - 1.5);
    }
    assert_true(1 - se / tot > 0.95);
    ds_xgb_free(m);
    free(x);
    free(y);
}

/* The flat trees that answer one-row predictions agree with XGBoost's predictor, missing values
 * included, before and after trees are added in place. */
static void test_xgb_flat_matches_xgboost(void **state)
{
    (void)state;
    int n = 3000, d = 5;
    float *x = malloc(sizeof *x * (size_t)n * d), *y = malloc(sizeof *y * (size_t)n);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < d; k++) x[i * d + k] = urand() < 0.15 ? NAN : (float)(10 * urand());
        y[i] = (isnan(x[i * d]) ? 4 : x[i * d]) + (isnan(x[i * d + 1]) ? 0 : (float)sin(x[i * d + 1])) +
               (isnan(x[i * d + 2]) ? 3.0f : 0.0f);
    }
    ds_xgb_params_t p;
    ds_xgb_params_init(&p, 60);
    ds_xgb_param(&p, "max_depth", "7");
    ds_xgb_param(&p, "base_score", "2.5");
    ds_xgb_t *m;
    ds_error_t err;
    assert_int_equal(ds_xgb_train(&m, x, y, n, d, &p, &err), 0);
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n; i++) {
            double a = ds_xgb_predict1(m, &x[i * d]), b = ds_xgb_predict1_ref(m, &x[i * d]);
            assert_true(fabs(a - b) <= 1e-4 * (1 + fabs(b)));
        }
        int brc = ds_xgb_boost(m, x, y, n, 10, &err);
        if (brc) fprintf(stderr, "%s\n", err.msg);
        assert_int_equal(brc, 0);
        assert_int_equal(ds_xgb_rounds(m), 70 + 10 * pass);
    }
    ds_xgb_free(m);
    free(x);
    free(y);
}

/* A random forest in XGBoost's terms: one round of `trees` parallel trees of depth 6, learning rate 1. */
static void forest_params(ds_xgb_params_t *p, const char *trees, const char *subsample, const char *colsample)
{
    ds_xgb_params_init(p, 1);
    ds_xgb_param(p, "num_parallel_tree", "%s", trees);
    ds_xgb_param(p, "subsample", "%s", subsample);
    ds_xgb_param(p, "colsample_bynode", "%s", colsample);
    ds_xgb_param(p, "learning_rate", "1");
    ds_xgb_param(p, "max_depth", "6");
    ds_xgb_param(p, "base_score", "0.5");
}

/* A random forest (many parallel trees, one round, as the interference model trains it) is walked
 * by the flat trees too, and agrees with XGBoost's own predictor. */
static void test_xgb_flat_forest_matches_xgboost(void **state)
{
    (void)state;
    int n = 2000, d = 4;
    float *x = malloc(sizeof *x * (size_t)n * d), *y = malloc(sizeof *y * (size_t)n);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < d; k++) x[i * d + k] = urand() < 0.1 ? NAN : (float)urand();
        y[i] = (isnan(x[i * d]) ? 0.5f : x[i * d]) + 0.3f * (float)(urand() - 0.5);
    }
    ds_xgb_params_t p;
    forest_params(&p, "20", "0.8", "0.8");
    ds_xgb_t *m;
    ds_error_t err;
    assert_int_equal(ds_xgb_train(&m, x, y, n, d, &p, &err), 0);
    double worst = 0, spread = 0;
    for (int i = 0; i < n; i++) {
        double a = ds_xgb_predict1(m, &x[i * d]), b = ds_xgb_predict1_ref(m, &x[i * d]);
        if (fabs(a - b) > worst) worst = fabs(a - b);
        spread += fabs(b - 0.5);
    }
    assert_true(worst <= 1e-4);
    assert_true(spread / n > 0.05); /* the forest learned something: not the base everywhere */
    assert_true(ds_xgb_flat_active(m));
    ds_xgb_free(m);
    free(x);
    free(y);
}

/* A forest's tree spread: trees grown on the same rows with the same features (no sampling) agree
 * everywhere; row and feature sampling make them disagree, more where the data are noisy. */
static void test_xgb_tree_spread(void **state)
{
    (void)state;
    int n = 2000, d = 2;
    float *x = malloc(sizeof *x * (size_t)n * d), *y = malloc(sizeof *y * (size_t)n);
    for (int i = 0; i < n; i++) {
        x[i * d] = (float)urand(), x[i * d + 1] = (float)urand();
        /* noise only where x1 > 0.5 */
        y[i] = x[i * d] + (x[i * d + 1] > 0.5f ? 0.8f * (float)(urand() - 0.5) : 0.0f);
    }
    for (int sampled = 0; sampled < 2; sampled++) {
        ds_xgb_params_t p;
        forest_params(&p, "30", sampled ? "0.5" : "1", "1");
        ds_xgb_t *m;
        ds_error_t err;
        assert_int_equal(ds_xgb_train(&m, x, y, n, d, &p, &err), 0);
        double quiet = 0, noisy = 0;
        for (int k = 0; k < 50; k++) {
            float a[2] = {(float)urand(), 0.25f}, b[2] = {a[0], 0.75f};
            quiet += ds_xgb_tree_spread(m, a) / 50, noisy += ds_xgb_tree_spread(m, b) / 50;
        }
        if (!sampled) {
            assert_true(quiet < 1e-6 && noisy < 1e-6);
        } else {
            assert_true(noisy > 0.02);
            assert_true(noisy > 2 * quiet);
        }
        ds_xgb_free(m);
    }
    free(x);
    free(y);
}

/* Training on nothing is an error, not a crash. */
static void test_xgb_empty(void **state)
{
    (void)state;
    ds_xgb_params_t p;
    ds_xgb_params_init(&p, 10);
    ds_xgb_t *m = (ds_xgb_t *)1;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_not_equal(ds_xgb_train(&m, NULL, NULL, 0, 3, &p, &err), 0);
    assert_null(m);
    assert_true(strlen(err.msg) > 0);
}

/* A trace of one tenant whose job durations follow the GPU count (600 s per GPU, +-5%). */
static void synth_trace(ds_trace_t *t, int njobs)
{
    ds_trace_init(t);
    ds_trace_add_tenant(t, "a", 64);
    ds_trace_add_tenant(t, "b", 64);
    static const int g[4] = {1, 2, 4, 8};
    for (int i = 0; i < njobs; i++) {
        ds_job_t *j = ds_trace_add_job(t);
        memset(j, 0, sizeof *j);
        j->id = i + 1;
        j->tenant = i % 2;
        char u[16];
        snprintf(u, sizeof u, "u%d", (int)(urand() * 20));
        j->user = ds_strtab_intern(&t->users, u);
        j->gpus = g[(int)(urand() * 4)];
        j->cpus = 4;
        j->model = j->dataset = -1;
        j->submit = (int64_t)i * 300;
        j->duration = (int64_t)(600.0 * j->gpus * (0.95 + 0.1 * urand()));
        j->estimate = NAN;
        j->line = i + 2;
    }
}

static int64_t *lower_ends(const ds_trace_t *t)
{
    int64_t *end = malloc(sizeof *end * (size_t)(t->njobs ? t->njobs : 1));
    for (int32_t i = 0; i < t->njobs; i++) end[i] = t->jobs[i].submit + t->jobs[i].duration;
    return end;
}

/* Online models recover duration = 600 s x GPUs once trained (after the first day), in each of the
 * three tenant modes; with tenant models, both tenants' jobs are answered by their own. */
static void test_runtime_recovers_relation(void **state)
{
    (void)state;
    ds_trace_t t;
    synth_trace(&t, 1500); /* ~5.2 days */
    int64_t *end = lower_ends(&t);
    double *pred = malloc(sizeof *pred * (size_t)t.njobs), *act = malloc(sizeof *act * (size_t)t.njobs);
    int32_t *src = malloc(sizeof *src * (size_t)t.njobs);
    uint8_t *mask = calloc((size_t)t.njobs, 1);
    for (int mode = DS_RT_TENANT_NONE; mode <= DS_RT_TENANT_RESIDUAL; mode++) {
        ds_runtime_model_config_t c;
        ds_runtime_model_config_default(&c);
        c.rounds = 80;
        c.eta = 0.2;
        c.per_tenant = mode;
        int64_t leak;
        ds_error_t err;
        assert_int_equal(ds_runtime_online_eval(&t, end, &c, pred, NULL, NULL, src, &leak, &err), 0);
        int expected_src = 0;
        for (int32_t i = 0; i < t.njobs; i++) {
            act[i] = (double)t.jobs[i].duration;
            mask[i] = t.jobs[i].submit >= 2 * 86400;
            expected_src += mask[i] && (mode == DS_RT_TENANT_NONE ? src[i] == -1 : src[i] == t.jobs[i].tenant);
        }
        ds_reg_metrics_t m;
        ds_reg_metrics(pred, act, mask, t.njobs, &m);
        assert_true(m.n > 500);
        assert_true(expected_src == m.n); /* both tenants have >= 50 finished jobs by day 2 */
        assert_true(m.mape < 10.0);
        assert_true(m.r2_log > 0.95);
        assert_true(leak <= 0);
    }
    free(end), free(pred), free(act), free(src), free(mask);
    ds_trace_free(&t);
}

/* Saved models, loaded into a fresh model with the same history, predict bit-identically; the
 * same through a model file. */
static void test_runtime_save_load_identical(void **state)
{
    (void)state;
    ds_trace_t t;
    synth_trace(&t, 600);
    ds_runtime_model_config_t c;
    ds_runtime_model_config_default(&c);
    c.rounds = 40;
    c.min_history = 50;
    c.per_tenant = DS_RT_TENANT_RESIDUAL;
    ds_runtime_model_t *a = ds_runtime_model_create(&t, &c), *b = ds_runtime_model_create(&t, &c);
    for (int32_t i = 0; i < t.njobs; i++) {
        ds_runtime_model_observe(a, i, 0);
        ds_runtime_model_observe(b, i, 0);
    }
    ds_error_t err;
    assert_int_equal(ds_runtime_model_retrain(a, &err), 0);
    assert_int_equal(ds_runtime_model_ntrained(a), 3);
    char *buf;
    size_t len;
    assert_int_equal(ds_runtime_model_save_buf(a, &buf, &len, &err), 0);
    const char *path = tu_write_temp("rt.model", "");
    assert_int_equal(ds_model_file_write(path, "runtime", buf, len, &err), 0);
    char *buf2;
    size_t len2;
    assert_int_equal(ds_model_file_read(path, "runtime", &buf2, &len2, &err), 0);
    assert_int_equal(len, len2);
    assert_memory_equal(buf, buf2, len);
    assert_int_equal(ds_runtime_model_load_buf(b, buf2, len2, path, &err), 0);
    assert_int_equal(ds_runtime_model_ntrained(b), 3);
    for (int32_t i = 0; i < t.njobs; i++) {
        double pa = ds_runtime_model_predict(a, i, 0), pb = ds_runtime_model_predict(b, i, 0);
        assert_true(pa == pb);
        assert_int_equal(ds_runtime_model_last_source(b), t.jobs[i].tenant);
    }
    free(buf);
    free(buf2);
    ds_runtime_model_destroy(a);
    ds_runtime_model_destroy(b);
    ds_trace_free(&t);
}

/* Corrupt, truncated, foreign and missing model files give clear errors. */
static void test_model_file_errors(void **state)
{
    (void)state;
    ds_error_t err;
    char *buf;
    size_t len;
    ds_error_clear(&err);
    assert_int_equal(ds_model_file_read("/nonexistent/x.model", "runtime", &buf, &len, &err), DS_ENOTFOUND);
    const char *p = tu_write_temp("junk.model", "hello world\n");
    assert_int_equal(ds_model_file_read(p, "runtime", &buf, &len, &err), DS_EPARSE);
    assert_non_null(strstr(err.msg, "not a deepshare model file"));
    p = tu_write_temp("trunc.model", "deepshare-model runtime 100 fnv1a64=0000000000000000\nabc");
    assert_int_equal(ds_model_file_read(p, "runtime", &buf, &len, &err), DS_EPARSE);
    assert_non_null(strstr(err.msg, "the file holds 3"));
    /* a header claiming 16 GiB is refused before anything is allocated (the file holds 3 bytes) */
    p = tu_write_temp("huge.model", "deepshare-model runtime 17179869184 fnv1a64=0000000000000000\nabc");
    assert_int_equal(ds_model_file_read(p, "runtime", &buf, &len, &err), DS_EPARSE);
    assert_non_null(strstr(err.msg, "corrupt model file"));
    /* files without a checksum (older deepshare) are refused: their bytes would reach XGBoost unchecked */
    p = tu_write_temp("old.model", "deepshare-model runtime 3\nabc");
    assert_int_equal(ds_model_file_read(p, "runtime", &buf, &len, &err), DS_EPARSE);
    assert_non_null(strstr(err.msg, "no checksum"));
    /* one flipped byte (as a corrupted UBJSON string length) fails the checksum before XGBoost sees it */
    char good[128];
    snprintf(good, sizeof good, "deepshare-model runtime 3 fnv1a64=%016llx\nabc",
             (unsigned long long)ds_model_checksum("abc", 3));
    p = tu_write_temp("good.model", good);
    assert_int_equal(ds_model_file_read(p, "runtime", &buf, &len, &err), DS_OK);
    assert_int_equal(len, 3);
    free(buf);
    good[strlen(good) - 2] = 'X';
    p = tu_write_temp("flip.model", good);
    assert_int_equal(ds_model_file_read(p, "runtime", &buf, &len, &err), DS_EPARSE);
    assert_non_null(strstr(err.msg, "checksum mismatch"));
    p = tu_write_temp("kind.model", "deepshare-model interference 3\nabc");
    assert_int_equal(ds_model_file_read(p, "runtime", &buf, &len, &err), DS_EPARSE);
    assert_non_null(strstr(err.msg, "expected a 'runtime' model"));
    /* a well-formed file whose booster bytes are garbage */
    ds_trace_t t;
    synth_trace(&t, 10);
    ds_runtime_model_config_t c;
    ds_runtime_model_config_default(&c);
    ds_runtime_model_t *m = ds_runtime_model_create(&t, &c);
    const char bad[] = "deepshare-runtime 3 34 1 0\n* 9\nnot-ubj!!\n";
    ds_error_clear(&err);
    assert_int_equal(ds_runtime_model_load_buf(m, bad, sizeof bad - 1, "bad.model", &err), DS_EPARSE);
    assert_string_equal(err.file, "bad.model");
    assert_non_null(strstr(err.msg, "XGBoost"));
    const char old[] = "deepshare-runtime 1 27 0\n";
    assert_int_equal(ds_runtime_model_load_buf(m, old, sizeof old - 1, "old.model", &err), DS_EPARSE);
    /* a file of the previous version (28 features) names the cause and the fix */
    const char v2[] = "deepshare-runtime 2 28 1 2\n* 9\nnot-ubj!!\n";
    assert_int_equal(ds_runtime_model_load_buf(m, v2, sizeof v2 - 1, "v2.model", &err), DS_EPARSE);
    assert_non_null(strstr(err.msg, "older deepshare"));
    assert_non_null(strstr(err.msg, "train runtime"));
    ds_interference_model_t *im = (ds_interference_model_t *)1;
    assert_int_equal(ds_interference_model_load_buf(&im, bad, sizeof bad - 1, "bad.model", &err), DS_EPARSE);
    assert_null(im);
    /* the model still answers (history heuristic) after failed loads */
    assert_true(ds_runtime_model_predict(m, 0, 0) >= 1);
    ds_runtime_model_destroy(m);
    ds_trace_free(&t);
}

static int nlogs;
static void count_log(void *ctx, const char *msg)
{
    (void)ctx;
    (void)msg;
    nlogs++;
}

/* No jobs, one job, a handful: training does not crash and predictions fall back, logged once. */
static void test_runtime_tiny_history(void **state)
{
    (void)state;
    ds_trace_t t;
    ds_trace_init(&t);
    ds_trace_add_tenant(&t, "a", 8);
    ds_runtime_model_config_t c;
    ds_runtime_model_config_default(&c);
    c.log = count_log;
    ds_error_t err;
    ds_runtime_model_t *m = ds_runtime_model_create(&t, &c);
    assert_int_equal(ds_runtime_model_retrain(m, &err), 0);
    assert_int_equal(ds_runtime_model_ntrained(m), 0);
    ds_runtime_model_destroy(m);
    ds_trace_free(&t);

    synth_trace(&t, 5);
    nlogs = 0;
    m = ds_runtime_model_create(&t, &c);
    assert_true(fabs(ds_runtime_model_predict(m, 0, 0) - 1000.0) < 1e-9); /* nothing known at all */
    ds_runtime_model_observe(m, 0, 10);
    assert_int_equal(ds_runtime_model_retrain(m, &err), 0);
    assert_int_equal(ds_runtime_model_ntrained(m), 0); /* below min_train */
    for (int32_t i = 1; i < 5; i++) assert_true(ds_runtime_model_predict(m, i, 20) >= 1);
    assert_int_equal(nlogs, 1);
    ds_runtime_model_destroy(m);
    c.min_train = 1;
    c.min_history = 1;
    c.per_tenant = DS_RT_TENANT_RESIDUAL;
    m = ds_runtime_model_create(&t, &c);
    ds_runtime_model_observe(m, 0, 10);
    assert_int_equal(ds_runtime_model_retrain(m, &err), 0);
    assert_int_equal(ds_runtime_model_ntrained(m), 2);
    double p = ds_runtime_model_predict(m, 1, 20);
    assert_true(p >= 1 && isfinite(p));
    ds_runtime_model_destroy(m);
    ds_trace_free(&t);
}

/* Pairs of jobs submitted 10 s apart with the same random duration (100 s .. 100000 s), pairs 200000 s
 * apart, users alternating between two names. The second job of a pair is predictable only from the
 * first one's duration, which is unknown at its submit time (the first is still running): a model
 * that used jobs finishing later would predict it (near) exactly. The control declares the first job
 * finished at its own submit, which makes its duration legitimate history: then the model does. */
static void pair_trace(ds_trace_t *t, int npairs)
{
    ds_trace_init(t);
    ds_trace_add_tenant(t, "a", 64);
    for (int k = 0; k < npairs; k++) {
        int64_t dur = (int64_t)(100 * pow(1000, urand()));
        for (int s = 0; s < 2; s++) {
            ds_job_t *j = ds_trace_add_job(t);
            memset(j, 0, sizeof *j);
            j->id = 2 * k + s + 1;
            j->tenant = 0;
            j->user = ds_strtab_intern(&t->users, k % 2 ? "u1" : "u0");
            j->gpus = 1;
            j->cpus = 2;
            j->model = j->dataset = -1;
            j->submit = (int64_t)k * 200000 + 10 * s;
            j->duration = dur;
            j->estimate = NAN;
        }
    }
}

/* Median APE of the second jobs of the pairs from the 30th pair on (models trained by then). */
static double second_job_mdape(const ds_trace_t *t, const int64_t *end, int use_model, int64_t *leak)
{
    ds_runtime_model_config_t c;
    ds_runtime_model_config_default(&c);
    c.rounds = 100;
    c.eta = 0.3;
    c.retrain_period = 10 * 86400;
    c.min_child_weight = 2; /* 150 pairs: the protocol is under test, not the regularization */
    c.use_model = use_model;
    int32_t n = t->njobs;
    double *pred = malloc(sizeof *pred * (size_t)n), *act = malloc(sizeof *act * (size_t)n);
    uint8_t *mask = calloc((size_t)n, 1);
    ds_error_t err;
    assert_int_equal(ds_runtime_online_eval(t, end, &c, pred, NULL, NULL, NULL, leak, &err), 0);
    for (int32_t i = 0; i < n; i++) act[i] = (double)t->jobs[i].duration, mask[i] = i % 2 && i >= 60;
    ds_reg_metrics_t m;
    ds_reg_metrics(pred, act, mask, n, &m);
    free(pred), free(act), free(mask);
    return m.mdape;
}

static void test_runtime_no_future_leak(void **state)
{
    (void)state;
    ds_trace_t t;
    pair_trace(&t, 150);
    int64_t *end = lower_ends(&t), leak;
    /* honest: the partner runs for >= 100 s, so it is unknown 10 s later */
    double honest_h = second_job_mdape(&t, end, 0, &leak);
    assert_true(leak <= 0);
    double honest_m = second_job_mdape(&t, end, 1, &leak);
    assert_true(leak <= 0);
    /* independent guesses: ~95% here; a model fed the partner's duration as a feature scored 78% */
    assert_true(honest_h > 85.0);
    assert_true(honest_m > 85.0);
    /* control: the partner declared finished at its own submit: now its duration is history */
    for (int32_t i = 0; i < t.njobs; i += 2) end[i] = t.jobs[i].submit;
    double seen_m = second_job_mdape(&t, end, 1, &leak);
    assert_true(seen_m < 50.0); /* 37% here */
    assert_true(leak <= 0);
    free(end);
    ds_trace_free(&t);
}

/* One predictor reused for a second replay (simulate runs several policies) starts from scratch:
 * its second-replay predictions equal the first's instead of knowing the whole trace. */
static void test_runtime_replay_resets(void **state)
{
    (void)state;
    ds_trace_t t;
    synth_trace(&t, 700);
    int64_t *end = lower_ends(&t);
    ds_runtime_model_config_t c;
    ds_runtime_model_config_default(&c);
    c.rounds = 30;
    double *p1 = malloc(sizeof *p1 * (size_t)t.njobs), *p2 = malloc(sizeof *p2 * (size_t)t.njobs);
    ds_runtime_model_t *m = ds_runtime_model_create(&t, &c);
    int64_t leak;
    ds_runtime_online_run(m, end, p1, NULL, NULL, NULL, &leak);
    assert_true(leak <= 0);
    ds_runtime_online_run(m, end, p2, NULL, NULL, NULL, &leak);
    assert_true(leak <= 0);
    for (int32_t i = 0; i < t.njobs; i++) assert_true(p1[i] == p2[i]);
    ds_runtime_model_destroy(m);
    free(p1), free(p2), free(end);
    ds_trace_free(&t);
}


/* The online protocol, end to end: removing every job submitted after job k from the trace (the
 * future) changes none of the predictions of jobs up to k, whichever training path is used. */
static void test_runtime_future_removed_same_predictions(void **state)
{
    (void)state;
    ds_trace_t t;
    synth_trace(&t, 1200);
    int64_t *end = lower_ends(&t);
    double *full = malloc(sizeof *full * (size_t)t.njobs), *cut = malloc(sizeof *cut * (size_t)t.njobs);
    for (int variant = 0; variant < 3; variant++) {
        ds_runtime_model_config_t c;
        ds_runtime_model_config_default(&c);
        c.rounds = 20;
        c.retrain_every = 150;
        c.window = 400;
        if (variant == 1) c.inc_rounds = 5;
        if (variant == 2) c.retrain_period = 86400, c.per_tenant = DS_RT_TENANT_RESIDUAL;
        ds_error_t err;
        int64_t leak;
        assert_int_equal(ds_runtime_online_eval(&t, end, &c, full, NULL, NULL, NULL, &leak, &err), 0);
        assert_true(leak <= 0);
        static const int32_t ks[] = {40, 333, 800};
        for (int q = 0; q < 3; q++) {
            int32_t k = ks[q], keep = t.njobs;
            t.njobs = k + 1; /* the jobs after k were never submitted */
            assert_int_equal(ds_runtime_online_eval(&t, end, &c, cut, NULL, NULL, NULL, &leak, &err), 0);
            t.njobs = keep;
            for (int32_t i = 0; i <= k; i++) assert_true(cut[i] == full[i]);
        }
    }
    free(full), free(cut), free(end);
    ds_trace_free(&t);
}

/* Continuing a booster with a few trees per retrain (incremental) and growing a fresh one each time
 * predict alike on a learnable relation: stated tolerance, after the first two days, the median
 * |ln(incremental / from scratch)| < 0.05 and the 95th percentile < 0.2 (both recover 600 s x GPUs). */
static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_runtime_incremental_matches_scratch(void **state)
{
    (void)state;
    ds_trace_t t;
    synth_trace(&t, 1500);
    int64_t *end = lower_ends(&t);
    int32_t n = t.njobs;
    double *ps = malloc(sizeof *ps * (size_t)n), *pi = malloc(sizeof *pi * (size_t)n), *d = malloc(sizeof *d * (size_t)n);
    ds_runtime_model_config_t c;
    ds_runtime_model_config_default(&c);
    c.retrain_every = 200;
    c.window = 1000;
    ds_error_t err;
    int64_t leak;
    assert_int_equal(ds_runtime_online_eval(&t, end, &c, ps, NULL, NULL, NULL, &leak, &err), 0);
    c.inc_rounds = 5;
    c.max_trees = 100;
    assert_int_equal(ds_runtime_online_eval(&t, end, &c, pi, NULL, NULL, NULL, &leak, &err), 0);
    int32_t k = 0;
    for (int32_t i = 0; i < n; i++)
        if (t.jobs[i].submit >= 2 * 86400) d[k++] = fabs(log(pi[i] / ps[i]));
    qsort(d, (size_t)k, sizeof *d, cmp_dbl);
    assert_true(k > 500);
    assert_true(d[k / 2] < 0.05);
    assert_true(d[(int32_t)(0.95 * k)] < 0.2);
    free(ps), free(pi), free(d), free(end);
    ds_trace_free(&t);
}

/* The conditional remaining time: at elapsed 0 it is the prediction scaled by the median residual;
 * it never goes below 1, and a job that has outlived every similar one is expected to run as long
 * again; without residuals (or disabled) it is max(pred - elapsed, 1). */
static void test_runtime_conditional_remaining(void **state)
{
    (void)state;
    ds_trace_t t;
    synth_trace(&t, 1500);
    int64_t *end = lower_ends(&t);
    ds_runtime_model_config_t c;
    ds_runtime_model_config_default(&c);
    c.conditional = 1;
    ds_runtime_model_t *m = ds_runtime_model_create(&t, &c);
    assert_true(ds_runtime_model_remaining(m, 500, 100) == 400);
    assert_true(ds_runtime_model_remaining(m, 500, 700) == 1);
    double *pred = malloc(sizeof *pred * (size_t)t.njobs);
    ds_runtime_online_run(m, end, pred, NULL, NULL, NULL, NULL);
    ds_error_t err;
    assert_int_equal(ds_runtime_model_retrain(m, &err), 0); /* takes the residuals in */
    double r0 = ds_runtime_model_remaining(m, 1200, 0);
    assert_true(r0 > 1000 && r0 < 1400); /* most residuals are within +-10% here */
    double r1 = ds_runtime_model_remaining(m, 1200, 1100);
    assert_true(r1 >= 1 && r1 < 300);
    assert_true(ds_runtime_model_remaining(m, 1200, 10000000) == 10000000);
    ds_runtime_model_t *plain = ds_runtime_model_create(&t, &(ds_runtime_model_config_t){0});
    assert_true(ds_runtime_model_remaining(plain, 1200, 1100) == 100); /* conditional off: the simple one */
    ds_runtime_model_destroy(plain);
    free(pred), free(end);
    ds_runtime_model_destroy(m);
    ds_trace_free(&t);
}

/* Batch evidence (docs/predictors.md): jobs of one owner and GPU count submitted within the gap of each other
 * are one batch (a chain: each within the gap of the last); a finish names the unfinished siblings it revises;
 * a sibling's estimate is the median of the finished siblings that ran longer than it has, a run past all of
 * them is expected within the batch's spread, and one past twice the longest gets no estimate from them. */
static void test_runtime_batch_evidence(void **state)
{
    (void)state;
    ds_trace_t t;
    /* One user (tu_trace's): jobs 1-4 are one batch of 2-GPU jobs (submitted 0, 30, 80, 130: each within 60 s
     * of the last), job 5 the same shape 200 s later (a new batch), jobs 6 and 7 other GPU counts. */
    tu_trace(&t, "A:8 B:8", "1 A 2 0 1000; 2 A 2 30 1100; 3 A 2 80 1200; 4 A 2 130 5000; 5 A 2 330 900; "
                            "6 A 1 10 50; 7 B 4 20 70");
    ds_runtime_model_config_t c;
    ds_runtime_model_config_default(&c);
    assert_int_equal(c.batch_gap, 60);
    c.batch_min_record = 0; /* the rules, without the record that earns their use (below) */
    ds_runtime_model_t *m = ds_runtime_model_create(&t, &c);
    ds_runtime_predictor_t p;
    ds_runtime_model_as_predictor(m, &p);
    assert_non_null(p.batch_total);
    for (int32_t j = 0; j < t.njobs; j++) assert_true(ds_runtime_model_batch_total(m, j, 0) < 0); /* nothing finished */
    ds_runtime_model_observe(m, 0, 1000); /* job 1 (1,000 s) */
    int32_t n;
    const int32_t *v = ds_runtime_model_batch_revised(m, 0, &n);
    assert_int_equal(n, 3);
    assert_int_equal(v[0], 1), assert_int_equal(v[1], 2), assert_int_equal(v[2], 3);
    assert_true(ds_runtime_model_batch_total(m, 4, 0) < 0); /* job 5: 200 s after job 4, its own batch */
    assert_true(ds_runtime_model_batch_total(m, 5, 0) < 0); /* job 6: another GPU count */
    assert_true(fabs(ds_runtime_model_batch_total(m, 1, 0) - 1000) < 1e-9);
    /* past the only finished sibling: 10% more (at least a minute); past twice it: nothing */
    assert_true(fabs(ds_runtime_model_batch_total(m, 1, 1500) - 1650) < 1e-9);
    assert_true(fabs(ds_runtime_model_batch_total(m, 1, 1010) - 1111) < 1e-9);
    assert_true(ds_runtime_model_batch_total(m, 1, 2001) < 0);
    ds_runtime_model_observe(m, 1, 1200); /* job 2 (1,100 s) */
    v = ds_runtime_model_batch_revised(m, 1, &n);
    assert_int_equal(n, 2);
    assert_int_equal(v[0], 2), assert_int_equal(v[1], 3);
    assert_true(fabs(ds_runtime_model_batch_total(m, 2, 0) - 1050) < 1e-9);     /* median of 1,000 and 1,100 */
    assert_true(fabs(ds_runtime_model_batch_total(m, 2, 1050) - 1100) < 1e-9);  /* only 1,100 ran longer */
    double spread = log(1100.0 / 1000.0);                                       /* 9.5%: the batch's own */
    assert_true(fabs(ds_runtime_model_batch_total(m, 2, 1500) - 1500 * (1 + spread)) < 1e-6);
    /* an observe of another job does not repeat the list */
    ds_runtime_model_observe(m, 5, 1300);
    ds_runtime_model_batch_revised(m, 1, &n);
    assert_int_equal(n, 0);
    /* a new replay (time goes back) forgets the finishes, not the batches */
    ds_runtime_model_predict(m, 3, 0);
    assert_true(ds_runtime_model_batch_total(m, 3, 0) < 0);
    ds_runtime_model_observe(m, 2, 1500);
    assert_true(fabs(ds_runtime_model_batch_total(m, 3, 0) - 1200) < 1e-9);
    ds_runtime_model_destroy(m);
    /* gap 0: no batches, no callbacks */
    c.batch_gap = 0;
    m = ds_runtime_model_create(&t, &c);
    ds_runtime_model_as_predictor(m, &p);
    assert_null(p.batch_total), assert_null(p.batch_revised);
    ds_runtime_model_observe(m, 0, 1000);
    assert_true(ds_runtime_model_batch_total(m, 1, 0) < 0);
    ds_runtime_model_destroy(m);
    ds_trace_free(&t);
}

/* Without users (ITP) the owner is the tenant: the same shape at the same time in two tenants is two batches. */
static void test_runtime_batch_owner_tenant(void **state)
{
    (void)state;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", "1 A 1 0 100; 2 B 1 0 900; 3 A 1 5 110; 4 B 1 5 950");
    for (int32_t j = 0; j < t.njobs; j++) t.jobs[j].user = -1;
    ds_runtime_model_config_t c;
    ds_runtime_model_config_default(&c);
    c.batch_min_record = 0;
    ds_runtime_model_t *m = ds_runtime_model_create(&t, &c);
    ds_runtime_model_observe(m, 0, 100);
    ds_runtime_model_observe(m, 1, 900);
    assert_true(fabs(ds_runtime_model_batch_total(m, 2, 0) - 100) < 1e-9);
    assert_true(fabs(ds_runtime_model_batch_total(m, 3, 0) - 900) < 1e-9);
    ds_runtime_model_destroy(m);
    ds_trace_free(&t);
}

/* The offline score (train runtime --evaluate): a job's estimate at its start is the median of its siblings that
 * had ended by then under the given schedule; without such siblings, the model's. */
static void test_runtime_batch_at_start(void **state)
{
    (void)state;
    ds_trace_t t;
    /* one batch of three (0, 10, 20 s), run one after the other; job 4 alone */
    tu_trace(&t, "A:8", "1 A 1 0 100; 2 A 1 10 300; 3 A 1 20 200; 4 A 2 30 50");
    int64_t end[] = {100, 401, 602, 80};
    double pred[] = {7, 7, 7, 7}, out[4];
    uint8_t has[4];
    assert_int_equal(ds_runtime_batch_at_start(&t, end, 60, pred, out, has), 2);
    assert_true(out[0] == 7 && !has[0]);          /* the first had none ended */
    assert_true(out[1] == 100 && has[1]);         /* job 2 started at 101: job 1 had ended */
    assert_true(out[2] == 200 && has[2]);         /* job 3 started at 402: median of 100 and 300 */
    assert_true(out[3] == 7 && !has[3]);
    assert_int_equal(ds_runtime_batch_at_start(&t, end, 0, pred, out, NULL), 0); /* gap 0: nothing */
    ds_trace_free(&t);
}

/* A burst longer than 1,024 jobs is cut into batches of 1,024, so that a finish costs a bounded scan. */
static void test_runtime_batch_bounded(void **state)
{
    (void)state;
    ds_trace_t t;
    ds_trace_init(&t);
    ds_trace_add_tenant(&t, "A", 8);
    for (int i = 0; i < 2100; i++) {
        ds_job_t *j = ds_trace_add_job(&t);
        j->id = i + 1, j->tenant = 0, j->user = ds_strtab_intern(&t.users, "u"), j->gpus = 1, j->cpus = 1;
        j->submit = i, j->duration = 100, j->estimate = NAN;
    }
    ds_runtime_model_config_t c;
    ds_runtime_model_config_default(&c);
    ds_runtime_model_t *m = ds_runtime_model_create(&t, &c);
    for (int32_t job = 0; job < 2100; job++) ds_runtime_model_batch_total(m, job, 0); /* each asked about at arrival */
    int32_t n;
    int64_t now = 3000;
    for (int32_t job = 0; job < 2100; job += 1024) {
        ds_runtime_model_observe(m, job, now++);
        ds_runtime_model_batch_revised(m, job, &n);
        assert_int_equal(n, job + 1024 <= 2100 ? 1023 : 2100 - job - 1);
    }
    ds_runtime_model_destroy(m);
    ds_trace_free(&t);
}

/* The evidence earns its use: where batches run alike (sweeps) it is used once it has erred less than the model
 * on min_record jobs; where siblings' run times are independent draws it is not. */
static int batch_trusted_after(int alike)
{
    ds_trace_t t;
    ds_trace_init(&t);
    ds_trace_add_tenant(&t, "A", 8);
    /* 60 batches of three 1-GPU jobs of one user, 10,000 s apart; log run times uniform in [ln 100, ln 3000],
     * per batch (alike, each job within 2% of it) or per job (independent) */
    uint64_t r = 12345;
    double L = 0;
    for (int b = 0; b < 60; b++)
        for (int k = 0; k < 3; k++) {
            ds_job_t *j = ds_trace_add_job(&t);
            j->id = b * 3 + k + 1;
            j->tenant = 0;
            j->user = ds_strtab_intern(&t.users, "u");
            j->gpus = 1;
            j->cpus = 1;
            j->submit = (int64_t)b * 10000 + k;
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            double u = (double)(r >> 11) / 9007199254740992.0;
            if (!alike || k == 0) L = exp(log(100.0) + u * (log(3000.0) - log(100.0)));
            j->duration = (int64_t)(L * (alike ? 1 + 0.02 * u : 1));
            j->estimate = NAN;
        }
    ds_runtime_model_config_t c;
    ds_runtime_model_config_default(&c);
    ds_runtime_model_t *m = ds_runtime_model_create(&t, &c);
    /* each batch predicted at submit, then run one after the other (a later one starts after the earlier ones
     * finished, as the record needs); of the last, only the first two finish */
    for (int b = 0; b < 60; b++) {
        for (int k = 0; k < 3; k++) ds_runtime_model_predict(m, b * 3 + k, (int64_t)b * 10000 + k);
        int64_t at = (int64_t)b * 10000 + 10;
        for (int k = 0; k < (b < 59 ? 3 : 2); k++) {
            at += t.jobs[b * 3 + k].duration + 1;
            ds_runtime_model_observe(m, b * 3 + k, at);
        }
    }
    double v = ds_runtime_model_batch_total(m, 179, 0);
    if (v >= 0) { /* when used: the median of its two finished siblings */
        double a = (double)t.jobs[177].duration, b = (double)t.jobs[178].duration;
        assert_true(fabs(v - 0.5 * (a + b)) < 1e-9);
    }
    ds_runtime_model_destroy(m);
    ds_trace_free(&t);
    return v >= 0;
}

static void test_runtime_batch_record(void **state)
{
    (void)state;
    assert_true(batch_trusted_after(1));
    assert_false(batch_trusted_after(0));
}

/* ---- interference ---- */

/* A synthetic profile: retention of a falls linearly with the partner's GPU utilization. */
static void synth_profile(ds_coloc_t *c, ds_single_profile_t *s)
{
    memset(c, 0, sizeof *c);
    memset(s, 0, sizeof *s);
    s->n = 12;
    s->w = calloc((size_t)s->n, sizeof *s->w);
    for (int i = 0; i < s->n; i++) {
        snprintf(s->w[i].model, sizeof s->w[i].model, "M%d", i / 2);
        snprintf(s->w[i].dataset, sizeof s->w[i].dataset, "D");
        s->w[i].batch = 32;
        s->w[i].amp = i % 2;
        s->w[i].gpu_util = 10 + 7.5 * i;
        s->w[i].gmem_util = 5 + i;
        s->w[i].gmem = 1000 + 100 * i;
        s->w[i].label = i % 3;
    }
    c->pairs = calloc((size_t)(s->n * s->n), sizeof *c->pairs);
    for (int a = 0; a < s->n; a++)
        for (int b = a; b < s->n; b++) {
            ds_coloc_pair_t *p = &c->pairs[c->npairs++];
            snprintf(p->model1, sizeof p->model1, "%s", s->w[a].model);
            snprintf(p->dataset1, sizeof p->dataset1, "D");
            snprintf(p->model2, sizeof p->model2, "%s", s->w[b].model);
            snprintf(p->dataset2, sizeof p->dataset2, "D");
            p->batch1 = p->batch2 = 32;
            p->amp1 = s->w[a].amp;
            p->amp2 = s->w[b].amp;
            p->speed1 = 1.1 - 0.006 * s->w[b].gpu_util;
            p->speed2 = 1.1 - 0.006 * s->w[a].gpu_util;
        }
}

static void test_interference_recovers_and_roundtrips(void **state)
{
    (void)state;
    ds_coloc_t c;
    ds_single_profile_t s;
    synth_profile(&c, &s);
    ds_interference_config_t cfg;
    ds_interference_config_default(&cfg);
    cfg.trees = 50;
    ds_interference_model_t *m, *m2;
    ds_error_t err;
    assert_int_equal(ds_interference_model_train(&m, &c, &s, &cfg, NULL, &err), 0);
    double worst = 0;
    for (int a = 0; a < s.n; a++)
        for (int b = 0; b < s.n; b++) {
            ds_wdesc_t da = {32, (float)s.w[a].amp, (float)s.w[a].gpu_util, (float)s.w[a].gmem_util, (float)s.w[a].gmem};
            ds_wdesc_t db = {32, (float)s.w[b].amp, (float)s.w[b].gpu_util, (float)s.w[b].gmem_util, (float)s.w[b].gmem};
            double e = fabs(ds_interference_model_predict(m, &da, &db) - (1.1 - 0.006 * s.w[b].gpu_util));
            if (e > worst) worst = e;
        }
    assert_true(worst < 0.05);
    char *buf;
    size_t len;
    assert_int_equal(ds_interference_model_save_buf(m, &buf, &len, &err), 0);
    assert_int_equal(ds_interference_model_load_buf(&m2, buf, len, "mem", &err), 0);
    for (int a = 0; a < s.n; a++) {
        ds_wdesc_t da = {32, (float)s.w[a].amp, (float)s.w[a].gpu_util, (float)s.w[a].gmem_util, (float)s.w[a].gmem};
        ds_wdesc_t db = {64, 0, 50, 20, 3000};
        assert_true(ds_interference_model_predict(m, &da, &db) == ds_interference_model_predict(m2, &da, &db));
    }
    /* the engine-facing predictor gives the same numbers through its per-workload cache */
    ds_trace_t t;
    ds_trace_init(&t);
    ds_trace_add_tenant(&t, "a", 8);
    for (int i = 0; i < 4; i++) {
        ds_job_t *j = ds_trace_add_job(&t);
        memset(j, 0, sizeof *j);
        j->id = i + 1;
        j->gpus = 1;
        j->model = ds_strtab_intern(&t.models, s.w[i % 2 ? 5 : 2].model);
        j->dataset = ds_strtab_intern(&t.datasets, "D");
        const ds_workload_t *w = &s.w[i % 2 ? 5 : 2];
        j->batch = w->batch, j->amp = w->amp, j->gpu_util = (float)w->gpu_util, j->gmem_util = (float)w->gmem_util;
        j->gmem_mib = (int32_t)w->gmem;
    }
    ds_interference_predictor_t p;
    ds_interference_model_as_predictor(m2, &t, &p);
    ds_wdesc_t d5 = {32, (float)s.w[5].amp, (float)s.w[5].gpu_util, (float)s.w[5].gmem_util, (float)s.w[5].gmem};
    ds_wdesc_t d2 = {32, (float)s.w[2].amp, (float)s.w[2].gpu_util, (float)s.w[2].gmem_util, (float)s.w[2].gmem};
    double direct = ds_interference_model_predict(m2, &d2, &d5);
    assert_true(fabs(p.predict(p.ctx, &t, 0, 1) - direct) < 1e-6);
    assert_true(fabs(p.predict(p.ctx, &t, 2, 3) - direct) < 1e-6); /* cached */
    double spread = ds_interference_model_spread(m2, &d2, &d5);
    assert_true(spread >= 0);
    assert_true(fabs(p.uncertainty(p.ctx, &t, 0, 1) - spread) < 1e-6);
    assert_true(fabs(p.uncertainty(p.ctx, &t, 2, 3) - spread) < 1e-6); /* cached beside the prediction */
    assert_true(fabs(p.predict(p.ctx, &t, 2, 3) - direct) < 1e-6);
    ds_trace_free(&t);
    free(buf);
    ds_interference_model_destroy(m);
    ds_interference_model_destroy(m2);
    free(c.pairs);
    ds_single_free(&s);
}

/* On the real profile, held-out models are predicted far better than by the mean retention. */
static void test_interference_lomo_real(void **state)
{
    (void)state;
    const char *cp = tu_data("colocation/colocate_info.csv");
    if (!cp) skip();
    char cpath[1024];
    snprintf(cpath, sizeof cpath, "%s", cp);
    const char *sp = tu_data("colocation/single_data.csv");
    if (!sp) skip();
    ds_coloc_t c;
    ds_single_profile_t s;
    ds_error_t err;
    assert_int_equal(ds_coloc_read(&c, cpath, &err), 0);
    assert_int_equal(ds_single_read(&s, sp, &err), 0);
    assert_int_equal(s.n, 66);
    ds_interference_config_t cfg;
    ds_interference_config_default(&cfg);
    cfg.trees = 20;
    cfg.max_depth = 6;
    ds_interference_eval_t e;
    assert_int_equal(ds_interference_eval_lomo(&c, &s, &cfg, 0.7, &e, &err), 0);
    assert_int_equal(e.nfolds, 11);
    assert_true(e.rows > 4000);
    assert_true(e.mae < 0.09);
    assert_true(e.r2 > 0.2);
    assert_int_equal(e.tp + e.fp + e.fn + e.tn, e.pairs);
    /* The forest trained on every pair knows which pairs it learned from: its trees agree more on
     * profiled pairs than on pairs of the same workloads the profile lacks (what probing reads,
     * docs/policy.md §5; medians 0.026 and 0.090 with the default forest). */
    ds_interference_model_t *m;
    ds_interference_config_default(&cfg);
    assert_int_equal(ds_interference_model_train(&m, &c, &s, &cfg, NULL, &err), 0);
    double *known = malloc(sizeof *known * (size_t)s.n * s.n), *unknown = malloc(sizeof *unknown * (size_t)s.n * s.n);
    int nk = 0, nu = 0;
    for (int a = 0; a < s.n; a++)
        for (int b = 0; b < s.n; b++) {
            const ds_workload_t *wa = &s.w[a], *wb = &s.w[b];
            int profiled = 0;
            for (int32_t k = 0; k < c.npairs && !profiled; k++) {
                const ds_coloc_pair_t *q = &c.pairs[k];
                profiled = (!strcmp(q->model1, wa->model) && !strcmp(q->dataset1, wa->dataset) && q->batch1 == wa->batch &&
                            q->amp1 == wa->amp && !strcmp(q->model2, wb->model) && !strcmp(q->dataset2, wb->dataset) &&
                            q->batch2 == wb->batch && q->amp2 == wb->amp) ||
                           (!strcmp(q->model2, wa->model) && !strcmp(q->dataset2, wa->dataset) && q->batch2 == wa->batch &&
                            q->amp2 == wa->amp && !strcmp(q->model1, wb->model) && !strcmp(q->dataset1, wb->dataset) &&
                            q->batch1 == wb->batch && q->amp1 == wb->amp);
            }
            ds_wdesc_t da = {(float)wa->batch, (float)wa->amp, (float)wa->gpu_util, (float)wa->gmem_util, (float)wa->gmem};
            ds_wdesc_t db = {(float)wb->batch, (float)wb->amp, (float)wb->gpu_util, (float)wb->gmem_util, (float)wb->gmem};
            double u = ds_interference_model_spread(m, &da, &db);
            if (profiled) known[nk++] = u;
            else unknown[nu++] = u;
        }
    assert_true(nk > 1000 && nu > 1000);
    qsort(known, (size_t)nk, sizeof *known, cmp_dbl);
    qsort(unknown, (size_t)nu, sizeof *unknown, cmp_dbl);
    assert_true(unknown[nu / 2] > 2 * known[nk / 2]);
    free(known);
    free(unknown);
    ds_interference_model_destroy(m);
    ds_coloc_free(&c);
    ds_single_free(&s);
}

/* What the errors say remains of a job that outlived its prediction: with errors within x2 (light tails),
 * a job at 1.5x its prediction has less left than it has run; with errors spread over x1000 (heavy
 * tails), more; no estimate before DS_RESID_MIN errors; non-finite errors are ignored. */

/* Time limits (limits.h), hand-computed: a limit caps any prediction; a user whose runs are a steady share of
 * their limits is predicted from the limit once that share has erred less than the base; a user whose limits
 * say nothing keeps the (capped) base; the tenant speaks for a user it has not seen. */
static void test_limits_rules(void **st)
{
    (void)st;
    ds_limits_t l;
    ds_limits_init(&l, 3);
    assert_true(fabs(ds_limits_predict(&l, "a", "u", 0, 500) - 500) < 1e-9);    /* no limit: base */
    assert_true(fabs(ds_limits_predict(&l, "a", "u", 300, 500) - 300) < 1e-9);  /* capped */
    assert_true(fabs(ds_limits_predict(&l, "a", "u", 900, 500) - 500) < 1e-9);
    /* u runs a quarter of its limits; the base said 1000 every time */
    double lim[3] = {400, 4000, 40000};
    for (int i = 0; i < 2; i++) ds_limits_learn(&l, "a", "u", lim[i] / 4, lim[i], 1000);
    assert_true(fabs(ds_limits_predict(&l, "a", "u", 8000, 1000) - 1000) < 1e-9); /* 2 < min_history */
    ds_limits_learn(&l, "a", "u", lim[2] / 4, lim[2], 1000);
    /* ratio variance 0 < the base's squared log errors: limit x 1/4 */
    assert_true(fabs(ds_limits_predict(&l, "a", "u", 8000, 1000) - 2000) < 1e-6);
    assert_true(fabs(ds_limits_predict(&l, "a", "u", 0, 1000) - 1000) < 1e-9);
    /* v's limits are all 10000 whatever it runs, and the base is exact: the base, capped */
    double run[3] = {100, 1000, 5000};
    for (int i = 0; i < 3; i++) ds_limits_learn(&l, "b", "v", run[i], 10000, run[i]);
    assert_true(fabs(ds_limits_predict(&l, "b", "v", 10000, 700) - 700) < 1e-9);
    assert_true(fabs(ds_limits_predict(&l, "b", "v", 600, 700) - 600) < 1e-9);
    /* tenant a (its only user u) speaks for a new user w: limit x 1/4 */
    assert_true(fabs(ds_limits_predict(&l, "a", "w", 4000, 3000) - 1000) < 1e-6);
    /* a run past its limit (a trace that oversteps) never lifts a prediction above the limit */
    ds_limits_t m;
    ds_limits_init(&m, 2);
    ds_limits_learn(&m, "c", "x", 200, 100, 1);
    ds_limits_learn(&m, "c", "x", 400, 200, 1);
    assert_true(ds_limits_predict(&m, "c", "x", 100, 1) <= 100);
    ds_limits_learn(&m, "c", "x", NAN, 100, 1); /* ignored */
    ds_limits_learn(&m, "c", "x", 10, -1, 1);   /* no limit: ignored */
    assert_int_equal(m.st[ds_strtab_find(&m.keys, "c/x")].n, 2);
    ds_limits_free(&m);
    ds_limits_reset(&l);
    assert_true(fabs(ds_limits_predict(&l, "a", "u", 8000, 1000) - 1000) < 1e-9);
    ds_limits_free(&l);
}

static double fixed_pred(void *ctx, const ds_trace_t *t, int32_t j, int64_t now)
{
    (void)ctx, (void)t, (void)j, (void)now;
    return 1000;
}

/* The wrapper every predicting policy sees: it learns from the finishes it is told of, forgets at a replay
 * that starts over, and leaves a job without a limit to the base. */
static void test_limits_wrap(void **st)
{
    (void)st;
    ds_trace_t t;
    memset(&t, 0, sizeof t);
    t.ntenants = 1;
    t.tenants = calloc(1, sizeof *t.tenants);
    snprintf(t.tenants[0].name, sizeof t.tenants[0].name, "a");
    t.njobs = 5;
    t.jobs = calloc(5, sizeof *t.jobs);
    int32_t u = ds_strtab_intern(&t.users, "u");
    for (int j = 0; j < 5; j++) {
        t.jobs[j].user = u;
        t.jobs[j].limit = 3600 * (j + 1);
        t.jobs[j].duration = t.jobs[j].limit / 2;
    }
    t.jobs[4].limit = 0;
    ds_runtime_predictor_t base = {.name = "fixed", .predict = fixed_pred}, p;
    ds_limits_wrap_t *w = ds_limits_wrap(&p, &base, 3);
    assert_true(fabs(p.predict(p.ctx, &t, 0, 0) - 1000) < 1e-9);
    for (int j = 0; j < 3; j++) p.observe_finish(p.ctx, &t, j, 100 + j);
    assert_true(fabs(p.predict(p.ctx, &t, 3, 200) - 7200) < 1e-6); /* half of its 14400 s */
    assert_true(fabs(p.predict(p.ctx, &t, 4, 200) - 1000) < 1e-9); /* no limit */
    assert_true(fabs(p.predict(p.ctx, &t, 3, 0) - 1000) < 1e-9);   /* time went back: a new replay */
    ds_limits_wrap_free(w);
    ds_strtab_free(&t.users);
    free(t.jobs);
    free(t.tenants);
}

static void test_resid_beyond(void **st)
{
    (void)st;
    ds_resid_t *light = calloc(1, sizeof *light), *heavy = calloc(1, sizeof *heavy);
    for (int i = 0; i < 1000; i++) {
        double u = (i + 0.5) / 1000.0;
        ds_resid_add(light, log(0.5) + u * log(4.0));     /* actual / predicted in [0.5, 2] */
        ds_resid_add(heavy, log(0.5) + u * log(2000.0));  /* in [0.5, 1000] */
        if (i == DS_RESID_MIN - 2) {
            ds_resid_sort(light);
            assert_true(ds_resid_beyond(light, 100, 150) < 0);
        }
    }
    ds_resid_add(light, NAN);
    ds_resid_add(light, INFINITY);
    ds_resid_sort(light);
    ds_resid_sort(heavy);
    assert_int_equal(light->nsorted, 1000);
    double rl = ds_resid_beyond(light, 100, 150), rh = ds_resid_beyond(heavy, 100, 150);
    assert_true(rl > 0 && rl < 150); /* median of (150, 200] less 150: about 24 */
    assert_true(rh > 150);
    assert_true(ds_resid_beyond(light, 100, 5000) == 5000); /* outlived every error: as long again */
    assert_true(ds_resid_beyond(light, 0.5, 10) < 0);        /* no usable prediction */
    free(light);
    free(heavy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resid_beyond),
        cmocka_unit_test(test_limits_rules),
        cmocka_unit_test(test_limits_wrap),
        cmocka_unit_test(test_xgb_learns_relation),
        cmocka_unit_test(test_xgb_empty),
        cmocka_unit_test(test_xgb_flat_matches_xgboost),
        cmocka_unit_test(test_xgb_flat_forest_matches_xgboost),
        cmocka_unit_test(test_xgb_tree_spread),
        cmocka_unit_test(test_runtime_recovers_relation),
        cmocka_unit_test(test_runtime_save_load_identical),
        cmocka_unit_test(test_model_file_errors),
        cmocka_unit_test(test_runtime_tiny_history),
        cmocka_unit_test(test_runtime_no_future_leak),
        cmocka_unit_test(test_runtime_replay_resets),
        cmocka_unit_test(test_runtime_future_removed_same_predictions),
        cmocka_unit_test(test_runtime_incremental_matches_scratch),
        cmocka_unit_test(test_runtime_conditional_remaining),
        cmocka_unit_test(test_runtime_batch_evidence),
        cmocka_unit_test(test_runtime_batch_owner_tenant),
        cmocka_unit_test(test_runtime_batch_record),
        cmocka_unit_test(test_runtime_batch_bounded),
        cmocka_unit_test(test_runtime_batch_at_start),
        cmocka_unit_test(test_interference_recovers_and_roundtrips),
        cmocka_unit_test(test_interference_lomo_real),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
