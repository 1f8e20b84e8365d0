/* predict.c: 'deepshare predict runtime|interference': answers from saved model files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/predict_cli.h"
#include "deepshare/models.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: deepshare predict runtime --model FILE --trace FILE --vc-config FILE [--finish fifo|lower|FILE]\n"
            "                                 [--out FILE]\n"
            "       deepshare predict interference --model FILE --single FILE\n"
            "                                 (--pair MODEL/DATASET/BATCH/AMP,MODEL/DATASET/BATCH/AMP | --coloc FILE)\n"
            "                                 [--out FILE]\n"
            "\n"
            "runtime: predicts every job of the trace at its submit time with the saved models (no retraining);\n"
            "the user and tenant history comes from the jobs of this trace that finished before the submit, with\n"
            "finish times as in 'deepshare train runtime --finish' (default fifo). Tenants without a model of their\n"
            "own use the cluster model; a missing model file falls back to the history heuristic (logged once).\n"
            "Writes job_id,predicted[,actual] to --out or stdout and the error summary to stderr.\n"
            "\n"
            "interference: predicted retention of each job of a pair; --pair gives one pair (workloads as in\n"
            "single_data.csv), --coloc predicts every profiled pair and reports the error against the measurement.\n");
}

static int predict_runtime(int argc, char **argv)
{
    ds_workload_opts_t wo;
    ds_workload_opts_default(&wo);
    const char *model = NULL, *finish = "fifo", *out = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { help(stdout); return 0; }
        if (strncmp(a, "--", 2) || i + 1 >= argc) {
            fprintf(stderr, "deepshare predict runtime: %s '%s' (see --help)\n",
                    strncmp(a, "--", 2) ? "unexpected argument" : "missing value for", a);
            return 2;
        }
        const char *name = a + 2, *val = argv[++i];
        int w = ds_workload_opt(&wo, name, val);
        if (w < 0) return 2;
        if (w > 0) continue;
        if (!strcmp(name, "model")) model = val;
        else if (!strcmp(name, "finish")) finish = val;
        else if (!strcmp(name, "out")) out = val;
        else {
            fprintf(stderr, "deepshare predict runtime: unknown option --%s (see --help)\n", name);
            return 2;
        }
    }
    if (!model || !wo.trace) {
        fprintf(stderr, "deepshare predict runtime: --model FILE, --trace FILE and --vc-config FILE are required\n");
        return 2;
    }
    ds_trace_t t;
    ds_coloc_t coloc;
    int have_coloc = 0, status = 1;
    ds_error_t err;
    ds_error_clear(&err);
    if (ds_workload_open(&wo, &t, &coloc, &have_coloc)) {
        return 1;
    }
    ds_runtime_model_config_t c;
    ds_runtime_model_config_default(&c);
    c.log = ds_cli_log_stderr;
    c.frozen = 1;
    ds_runtime_model_t *m = ds_runtime_model_create(&t, &c);
    char *buf = NULL;
    size_t len = 0;
    int32_t n = t.njobs;
    int64_t *end = ds_xmalloc((size_t)(n ? n : 1) * sizeof *end);
    double *pred = ds_xmalloc((size_t)(n ? n : 1) * sizeof *pred);
    double *actual = ds_xmalloc((size_t)(n ? n : 1) * sizeof *actual);
    int rc = ds_model_file_read(model, "runtime", &buf, &len, &err);
    if (rc == DS_ENOTFOUND) {
        fprintf(stderr, "deepshare: %s: no such model file: predicting from the users' recent durations\n", model);
    } else if (rc || (rc = ds_runtime_model_load_buf(m, buf, len, model, &err))) {
        ds_die_error(&err);
        goto done;
    }
    const char *desc;
    if (ds_cli_finish_times(&t, finish, end, &desc, &err)) {
        ds_die_error(&err);
        goto done;
    }
    ds_runtime_online_run(m, end, pred, NULL, NULL, NULL, NULL);
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) {
        fprintf(stderr, "deepshare: %s: cannot write\n", out);
        goto done;
    }
    fprintf(f, "job_id,predicted,actual\n");
    for (int32_t i = 0; i < n; i++) {
        actual[i] = (double)DS_MAX(t.jobs[i].duration, 1);
        fprintf(f, "%lld,%.1f,%lld\n", (long long)t.jobs[i].id, pred[i], (long long)t.jobs[i].duration);
    }
    if (f != stdout && fclose(f)) {
        fprintf(stderr, "deepshare: %s: write failed\n", out);
        goto done;
    }
    ds_reg_metrics_t mt;
    ds_reg_metrics(pred, actual, NULL, n, &mt);
    fprintf(stderr, "deepshare: %d jobs (history: finished by submit, %s): MAPE %.2f%%, MdAPE %.2f%%, R2 %.4f, "
            "R2log %.4f, MedAE %.1f s\n", n, desc, mt.mape, mt.mdape, mt.r2, mt.r2_log, mt.medae);
    status = 0;
done:
    free(buf);
    free(end);
    free(pred);
    free(actual);
    ds_runtime_model_destroy(m);
    if (have_coloc) ds_coloc_free(&coloc);
    ds_trace_free(&t);
    return status;
}

/* "MODEL/DATASET/BATCH/AMP" -> a workload of the profile. */
static int parse_workload(const ds_single_profile_t *s, const char *spec, int32_t *out)
{
    char model[64], dataset[64];
    int batch, amp;
    char tail;
    if (sscanf(spec, "%63[^/]/%63[^/]/%d/%d%c", model, dataset, &batch, &amp, &tail) != 4) {
        fprintf(stderr, "deepshare predict interference: option --pair: '%s' is not MODEL/DATASET/BATCH/AMP\n", spec);
        return -1;
    }
    *out = ds_single_find(s, model, dataset, batch, amp);
    if (*out < 0) {
        fprintf(stderr, "deepshare predict interference: option --pair: workload '%s' is not in the single-job "
                "profile\n", spec);
        return -1;
    }
    return 0;
}

static int predict_interference(int argc, char **argv)
{
    const char *model = NULL, *single_path = NULL, *pair = NULL, *coloc_path = NULL, *out = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { help(stdout); return 0; }
        if (strncmp(a, "--", 2) || i + 1 >= argc) {
            fprintf(stderr, "deepshare predict interference: %s '%s' (see --help)\n",
                    strncmp(a, "--", 2) ? "unexpected argument" : "missing value for", a);
            return 2;
        }
        const char *name = a + 2, *val = argv[++i];
        if (!strcmp(name, "model")) model = val;
        else if (!strcmp(name, "single")) single_path = val;
        else if (!strcmp(name, "pair")) pair = val;
        else if (!strcmp(name, "coloc")) coloc_path = val;
        else if (!strcmp(name, "out")) out = val;
        else {
            fprintf(stderr, "deepshare predict interference: unknown option --%s (see --help)\n", name);
            return 2;
        }
    }
    if (!model || !single_path || (!pair == !coloc_path)) {
        fprintf(stderr, "deepshare predict interference: --model FILE, --single FILE and one of --pair or --coloc "
                "are required\n");
        return 2;
    }
    ds_error_t err;
    ds_error_clear(&err);
    ds_single_profile_t s;
    if (ds_single_read(&s, single_path, &err)) {
        ds_die_error(&err);
        return 1;
    }
    char *buf = NULL;
    size_t len = 0;
    ds_interference_model_t *m = NULL;
    int status = 1;
    if (ds_model_file_read(model, "interference", &buf, &len, &err) ||
        ds_interference_model_load_buf(&m, buf, len, model, &err)) {
        ds_die_error(&err);
        goto done;
    }
    if (pair) {
        char a[160], b[160];
        const char *comma = strchr(pair, ',');
        if (!comma || (size_t)(comma - pair) >= sizeof a || strlen(comma + 1) >= sizeof b) {
            fprintf(stderr, "deepshare predict interference: option --pair: expected two workloads separated by ','\n");
            goto done;
        }
        snprintf(a, sizeof a, "%.*s", (int)(comma - pair), pair);
        snprintf(b, sizeof b, "%s", comma + 1);
        int32_t ia, ib;
        if (parse_workload(&s, a, &ia) || parse_workload(&s, b, &ib)) goto done;
        ds_wdesc_t da, db;
        ds_wdesc_of(&s.w[ia], &da);
        ds_wdesc_of(&s.w[ib], &db);
        printf("rho_a,rho_b\n%.4f,%.4f\n", ds_interference_model_predict(m, &da, &db),
               ds_interference_model_predict(m, &db, &da));
        status = 0;
        goto done;
    }
    ds_coloc_t c;
    if (ds_coloc_read(&c, coloc_path, &err)) {
        ds_die_error(&err);
        goto done;
    }
    FILE *f = out ? fopen(out, "w") : stdout;
    if (!f) {
        fprintf(stderr, "deepshare: %s: cannot write\n", out);
        ds_coloc_free(&c);
        goto done;
    }
    fprintf(f, "model1,dataset1,batchsize1,amp1,model2,dataset2,batchsize2,amp2,speed1,pred1,speed2,pred2\n");
    double sae = 0;
    int64_t k = 0;
    for (int32_t i = 0; i < c.npairs; i++) {
        const ds_coloc_pair_t *p = &c.pairs[i];
        int32_t ia = ds_single_find(&s, p->model1, p->dataset1, p->batch1, p->amp1);
        int32_t ib = ds_single_find(&s, p->model2, p->dataset2, p->batch2, p->amp2);
        if (ia < 0 || ib < 0) continue;
        ds_wdesc_t da, db;
        ds_wdesc_of(&s.w[ia], &da);
        ds_wdesc_of(&s.w[ib], &db);
        double pa = ds_interference_model_predict(m, &da, &db), pb = ds_interference_model_predict(m, &db, &da);
        fprintf(f, "%s,%s,%d,%d,%s,%s,%d,%d,%.4f,%.4f,%.4f,%.4f\n", p->model1, p->dataset1, p->batch1, p->amp1,
                p->model2, p->dataset2, p->batch2, p->amp2, p->speed1, pa, p->speed2, pb);
        sae += fabs(pa - p->speed1) + fabs(pb - p->speed2);
        k += 2;
    }
    int bad = f != stdout && fclose(f);
    ds_coloc_free(&c);
    if (bad) {
        fprintf(stderr, "deepshare: %s: write failed\n", out);
        goto done;
    }
    fprintf(stderr, "deepshare: %lld predictions, MAE %.4f (in-sample when the model was trained on this file)\n",
            (long long)k, k ? sae / (double)k : NAN);
    status = 0;
done:
    free(buf);
    ds_interference_model_destroy(m);
    ds_single_free(&s);
    return status;
}

int ds_cmd_predict(int argc, char **argv)
{
    return ds_cli_model_cmd("predict", argc, argv, help, predict_runtime, predict_interference);
}
