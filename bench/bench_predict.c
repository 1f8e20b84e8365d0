/* bench_predict.c: latency of one runtime prediction and one pair-retention prediction (target:
 * under 50 us a call), both raw XGBoost inference and through the engine-facing cached predictors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "deepshare/models.h"
#include "deepshare/synth.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    const char *coloc_path = argc > 1 ? argv[1] : "../shared/data/colocation/colocate_info.csv";
    const char *single_path = argc > 2 ? argv[2] : "../shared/data/colocation/single_data.csv";
    ds_error_t err;
    ds_error_clear(&err);
    /* runtime: the synthetic workload, every job observed, models as the defaults train them */
    ds_trace_t t;
    ds_trace_init(&t);
    ds_synth_config_t sc;
    ds_synth_config_default(&sc);
    if (ds_synth_generate(&t, &sc, &err)) {
        fprintf(stderr, "bench_predict: synthetic workload: %s\n", err.msg);
        return 1;
    }
    ds_runtime_model_config_t rc;
    ds_runtime_model_config_default(&rc);
    ds_runtime_model_t *m = ds_runtime_model_create(&t, &rc);
    for (int32_t i = 0; i < t.njobs; i++) ds_runtime_model_predict(m, i, 0);
    for (int32_t i = 0; i < t.njobs; i++) ds_runtime_model_observe(m, i, 0);
    double t0 = now_s();
    if (ds_runtime_model_retrain(m, &err)) {
        fprintf(stderr, "bench_predict: %s\n", err.msg);
        return 1;
    }
    double train_s = now_s() - t0;
    /* uncached: a fresh model per pass would retrain, so time the booster on the jobs' features */
    char *buf;
    size_t len;
    ds_runtime_model_save_buf(m, &buf, &len, &err);
    int reps = 5;
    double best_raw = 1e9, best_cached = 1e9, sink = 0;
    for (int r = 0; r < reps; r++) {
        ds_runtime_model_t *f = ds_runtime_model_create(&t, &rc);
        for (int32_t i = 0; i < t.njobs; i++) ds_runtime_model_observe(f, i, 0);
        ds_runtime_model_load_buf(f, buf, len, "bench", &err);
        t0 = now_s();
        for (int32_t i = 0; i < t.njobs; i++) sink += ds_runtime_model_predict(f, i, 0); /* features + trees */
        double raw = (now_s() - t0) / t.njobs;
        t0 = now_s();
        for (int32_t i = 0; i < t.njobs; i++) sink += ds_runtime_model_predict(f, i, 0); /* cached */
        double cached = (now_s() - t0) / t.njobs;
        if (raw < best_raw) best_raw = raw;
        if (cached < best_cached) best_cached = cached;
        ds_runtime_model_destroy(f);
    }
    printf("runtime model: %d jobs, %d boosters (%d rounds, depth %d), retrain %.2f s\n", t.njobs,
           ds_runtime_model_ntrained(m), rc.rounds, rc.max_depth, train_s);
    printf("  first prediction of a job (features + flat tree walk):         %8.2f us/call\n", best_raw * 1e6);
    printf("  repeated prediction (cached until the next retrain):           %8.3f us/call\n", best_cached * 1e6);
    {
        /* the conditional remaining time DeepShare asks for running jobs at every pass */
        double best_rem = 1e9;
        for (int r = 0; r < reps; r++) {
            t0 = now_s();
            for (int32_t i = 0; i < t.njobs; i++) sink += ds_runtime_model_remaining(m, 600.0 + i % 5000, i % 7200);
            double rem = (now_s() - t0) / t.njobs;
            if (rem < best_rem) best_rem = rem;
        }
        printf("  remaining time of a running job (conditional on elapsed):      %8.3f us/call\n", best_rem * 1e6);
    }
    free(buf);
    ds_runtime_model_destroy(m);
    ds_trace_free(&t);

    ds_coloc_t coloc;
    ds_single_profile_t single;
    if (ds_coloc_read(&coloc, coloc_path, &err) || ds_single_read(&single, single_path, &err)) {
        char b[1200];
        ds_error_format(&err, b, sizeof b);
        printf("interference: skipped (%s)\n", b);
        return 0;
    }
    ds_interference_config_t ic;
    ds_interference_config_default(&ic);
    ds_interference_model_t *im;
    t0 = now_s();
    if (ds_interference_model_train(&im, &coloc, &single, &ic, NULL, &err)) {
        fprintf(stderr, "bench_predict: %s\n", err.msg);
        return 1;
    }
    train_s = now_s() - t0;
    int n = single.n, calls = 0;
    ds_wdesc_t *d = calloc((size_t)n, sizeof *d);
    for (int i = 0; i < n; i++)
        d[i] = (ds_wdesc_t){(float)single.w[i].batch, (float)single.w[i].amp, (float)single.w[i].gpu_util,
                            (float)single.w[i].gmem_util, (float)single.w[i].gmem};
    best_raw = 1e9;
    for (int r = 0; r < reps; r++) {
        t0 = now_s();
        calls = 0;
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) sink += ds_interference_model_predict(im, &d[a], &d[b]), calls++;
        double raw = (now_s() - t0) / calls;
        if (raw < best_raw) best_raw = raw;
    }
    /* the trees' spread (what probing reads, docs/policy.md §5): a second walk of every tree */
    double best_spread = 1e9;
    for (int r = 0; r < reps; r++) {
        t0 = now_s();
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) sink += ds_interference_model_spread(im, &d[a], &d[b]);
        double sp = (now_s() - t0) / (n * n);
        if (sp < best_spread) best_spread = sp;
    }
    /* through the engine-facing predictor on a trace of one job per workload */
    ds_trace_t tt;
    ds_trace_init(&tt);
    ds_trace_add_tenant(&tt, "a", 8);
    for (int i = 0; i < n; i++) {
        ds_job_t *j = ds_trace_add_job(&tt);
        memset(j, 0, sizeof *j);
        j->id = i + 1;
        j->gpus = 1;
        j->model = ds_strtab_intern(&tt.models, single.w[i].model);
        j->dataset = ds_strtab_intern(&tt.datasets, single.w[i].dataset);
        j->batch = single.w[i].batch, j->amp = single.w[i].amp;
        j->gpu_util = (float)single.w[i].gpu_util, j->gmem_util = (float)single.w[i].gmem_util;
        j->gmem_mib = (int32_t)single.w[i].gmem;
    }
    ds_interference_predictor_t p;
    ds_interference_model_as_predictor(im, &tt, &p);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) sink += p.predict(p.ctx, &tt, a, b);
    best_cached = 1e9;
    for (int r = 0; r < reps; r++) {
        t0 = now_s();
        for (int a = 0; a < n; a++)
            for (int b = 0; b < n; b++) sink += p.predict(p.ctx, &tt, a, b);
        double c = (now_s() - t0) / (n * n);
        if (c < best_cached) best_cached = c;
    }
    printf("interference forest: %d trees, depth %d, trained on %d pairs in %.2f s\n", ic.trees, ic.max_depth,
           coloc.npairs, train_s);
    printf("  pair prediction (flat walk of the forest):      %8.2f us/call\n", best_raw * 1e6);
    printf("  pair uncertainty (spread of the trees):         %8.2f us/call\n", best_spread * 1e6);
    printf("  pair prediction through the cached predictor:   %8.3f us/call\n", best_cached * 1e6);
    printf("(checksum %.3f)\n", sink);
    free(d);
    ds_trace_free(&tt);
    ds_interference_model_destroy(im);
    ds_single_free(&single);
    ds_coloc_free(&coloc);
    return 0;
}
