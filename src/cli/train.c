/* train.c: 'deepshare train runtime|interference': trains the predictors of docs/predictors.md, saves
 * them to model files and prints their evaluation (online protocol, leave-one-model-out). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/predict_cli.h"
#include "deepshare/csv.h"
#include "deepshare/idmap.h"
#include "deepshare/models.h"
#include "deepshare/policy.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: deepshare train runtime --trace FILE --vc-config FILE [--evaluate] [--model-out FILE] [options]\n"
            "       deepshare train runtime --synth-jobs N [--synth-* ...] --evaluate   (the synthetic workload)\n"
            "       deepshare train interference --coloc FILE --single FILE [--evaluate] [--model-out FILE] [options]\n"
            "\n"
            "runtime: per-tenant gradient-boosted duration models (XGBoost) with a cluster-wide model for tenants\n"
            "with fewer than --min-history finished jobs; features are what is known at submit time (request,\n"
            "clock, the user's and tenant's recent durations among finished jobs, the user's submit rate).\n"
            "  --evaluate            replay the online protocol over the trace: each job is predicted at its submit\n"
            "                        time from the jobs that finished by then, models retrain every period; prints\n"
            "                        MAPE, MdAPE, R^2 (raw, log), median absolute error, split by history size\n"
            "  --finish fifo|lower|FILE  finish times that decide what has finished before a submit:\n"
            "                        fifo  = end times of a FIFO replay, partitioned (default; the baseline with the\n"
            "                                longest queues, so the least history: conservative)\n"
            "                        lower = submit + duration (no queueing: optimistic, more history than real)\n"
            "                        FILE  = jobs.csv of 'deepshare simulate --out' (columns job_id, end)\n"
            "  --compare FILE        also score a 'job_id,<seconds>' estimate file on the same jobs (repeatable;\n"
            "                        negative values become 1000 as in Lucid)\n"
            "  --predictions FILE    write job_id,actual,predicted,source,tenant_history,user_history\n"
            "  --model-out FILE      train on every job of the trace and save the models\n"
            "  --min-history N       finished jobs a tenant needs for its own model (50)\n"
            "  --retrain-every N     retrain after N new finishes (8000; sooner while the history doubles)\n"
            "  --window N            train on the latest N finishes (12000; 0 = all)\n"
            "  --batch-gap S         --evaluate also scores batch evidence: each job's siblings (its user's, or\n"
            "                        tenant's, jobs of its GPU count submitted within S s of each other) that had\n"
            "                        ended by its start, their median in place of the model's (60; 0: not scored)\n"
            "  --inc-rounds N        add N trees per retrain, fitted on the window, instead of a fresh booster (0)\n"
            "  --max-trees N         beyond N trees, grow a fresh booster on the window (200)\n"
            "  --retrain-period S    retrain at multiples of S seconds of trace time instead (the v1 schedule)\n"
            "  --cluster-only        one model for every tenant (the default)\n"
            "  --tenant-corrections  per tenant: correction trees boosted on its jobs from the cluster model\n"
            "  --separate-tenants    each tenant's model trained on its own jobs only (ablation)\n"
            "  --v1                  the first model's training: daily, all history, from scratch, tenant\n"
            "                        corrections, 200 rounds at eta 0.05 (features are today's)\n"
            "  --rounds N (30)  --max-depth N (3)  --eta X (0.2)  --max-bin N (32)  --threads N (XGBoost default)\n"
            "  --model-seed N        seed of XGBoost's row and column sampling (1); --seed is the workload's\n"
            "\n"
            "interference: random forest (XGBoost, num_parallel_tree trees, row and column subsampling, one round)\n"
            "predicting each job's retention beside a partner from both workloads' exclusive profiles.\n"
            "  --coloc FILE          colocate_info.csv (pairs and measured retentions)\n"
            "  --single FILE         single_data.csv (each workload's exclusive profile and Lucid's label)\n"
            "  --evaluate            leave-one-model-out: MAE, R^2, and precision/recall of admitting a pair when both\n"
            "                        predicted retentions are >= --threshold, against Lucid's rule (labels sum <= 2)\n"
            "  --threshold X         retention threshold of the decision (0.7)\n"
            "  --model-out FILE      train on all pairs and save the forest\n"
            "  --trees N (50)  --max-bin N (64)  --max-depth N (8)  --subsample X (0.8)  --colsample X (0.8)  --threads N\n");
}

/* End times from a jobs.csv written by 'deepshare simulate --out'. */
static int read_end_file(const ds_trace_t *t, const char *path, int64_t *end, ds_error_t *err)
{
    ds_csv_t c;
    int rc = ds_csv_open_header(&c, path, "expected a header with job_id and end", err);
    if (rc) return rc;
    static const char *const names[] = {"job_id", "end"};
    int col[2];
    if ((rc = ds_csv_require(&c, names, 2, col, err))) return rc;
    int ic = col[0], ec = col[1];
    ds_idmap_t ids;
    ds_idmap_init(&ids);
    for (int32_t i = 0; i < t->njobs; i++) ds_idmap_put(&ids, t->jobs[i].id, i), end[i] = -1;
    while ((rc = ds_csv_next(&c, err)) > 0) {
        int64_t id, e;
        if ((rc = ds_csv_i64(&c, ic, "job_id", INT64_MIN, &id, err)) || (rc = ds_csv_i64(&c, ec, "end", 0, &e, err))) break;
        int32_t j = ds_idmap_get(&ids, id);
        if (j >= 0) end[j] = e;
    }
    ds_csv_close(&c);
    ds_idmap_free(&ids);
    if (rc < 0) return rc;
    for (int32_t i = 0; i < t->njobs; i++)
        if (end[i] < 0) {
            ds_error_set(err, path, 0, "job_id", "no end time for job %lld", (long long)t->jobs[i].id);
            return DS_EPARSE;
        }
    return DS_OK;
}

int ds_cli_finish_times(ds_trace_t *t, const char *finish, int64_t *end, const char **desc, ds_error_t *err)
{
    int32_t n = t->njobs;
    if (!strcmp(finish, "lower")) {
        for (int32_t i = 0; i < n; i++) end[i] = t->jobs[i].submit + t->jobs[i].duration;
        *desc = "submit + duration (lower bound, optimistic)";
        return DS_OK;
    }
    if (!strcmp(finish, "fifo")) {
        ds_sim_config_t sc;
        ds_sim_config_default(&sc);
        sc.policy = ds_policy_find("fifo");
        sc.keep_series = 0;
        ds_sim_result_t res;
        int rc = ds_sim_run(t, &sc, &res, err);
        if (rc) return rc;
        for (int32_t i = 0; i < n; i++) end[i] = res.end[i];
        ds_sim_result_free(&res);
        *desc = "FIFO replay, partitioned (conservative)";
        return DS_OK;
    }
    *desc = finish;
    return read_end_file(t, finish, end, err);
}

void ds_cli_log_stderr(void *ctx, const char *msg)
{
    (void)ctx;
    fprintf(stderr, "deepshare: %s\n", msg);
}

static void print_row(const char *name, const ds_reg_metrics_t *m)
{
    if (!m->n) {
        printf("  %-34s %7d\n", name, 0);
        return;
    }
    printf("  %-34s %7lld %10.2f %9.2f %8.2f %8.2f %8.2f %8.4f %8.4f %10.1f\n", name, (long long)m->n, m->mape, m->mape60,
           m->smape, m->mape_log, m->mdape, m->r2, m->r2_log, m->medae);
}

#define MAX_CMP 8

static int train_runtime(int argc, char **argv)
{
    ds_workload_opts_t wo;
    ds_workload_opts_default(&wo);
    ds_runtime_model_config_t rc;
    ds_runtime_model_config_default(&rc);
    rc.log = ds_cli_log_stderr;
    const char *finish = "fifo", *model_out = NULL, *pred_out = NULL, *cmp[MAX_CMP];
    int ncmp = 0, evaluate = 0;
    int64_t v;
    double d;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { help(stdout); return 0; }
        if (!strcmp(a, "--evaluate")) { evaluate = 1; continue; }
        if (!strcmp(a, "--cluster-only")) { rc.per_tenant = DS_RT_TENANT_NONE; continue; }
        if (!strcmp(a, "--tenant-corrections")) { rc.per_tenant = DS_RT_TENANT_RESIDUAL; continue; }
        if (!strcmp(a, "--v1")) { /* the first model's schedule: daily, all history, from scratch */
            rc.per_tenant = DS_RT_TENANT_RESIDUAL, rc.retrain_period = 86400, rc.window = 0, rc.inc_rounds = 0;
            rc.rounds = 200, rc.eta = 0.05, rc.max_depth = 6, rc.max_bin = 256, rc.min_child_weight = 2;
            continue;
        }
        if (!strcmp(a, "--separate-tenants")) { rc.per_tenant = DS_RT_TENANT_SEPARATE; continue; }
        if (strncmp(a, "--", 2) || i + 1 >= argc) {
            fprintf(stderr, "deepshare train runtime: %s '%s' (see --help)\n",
                    strncmp(a, "--", 2) ? "unexpected argument" : "missing value for", a);
            return 2;
        }
        const char *name = a + 2, *val = argv[++i];
        int w = ds_workload_opt(&wo, name, val);
        if (w < 0) return 2;
        if (w > 0) continue;
        if (!strcmp(name, "finish")) finish = val;
        else if (!strcmp(name, "model-out")) model_out = val;
        else if (!strcmp(name, "predictions")) pred_out = val;
        else if (!strcmp(name, "compare")) {
            if (ncmp == MAX_CMP) { fprintf(stderr, "deepshare train: at most %d --compare files\n", MAX_CMP); return 2; }
            cmp[ncmp++] = val;
        } else if (!strcmp(name, "min-history")) {
            if (ds_parse_i64("--min-history", val, 1, 1 << 30, &v)) return 2;
            rc.min_history = (int32_t)v;
        } else if (!strcmp(name, "retrain-period")) {
            if (ds_parse_i64("--retrain-period", val, 60, INT64_C(1) << 40, &v)) return 2;
            rc.retrain_period = v;
        } else if (!strcmp(name, "retrain-every")) {
            if (ds_parse_i64("--retrain-every", val, 1, 1 << 30, &v)) return 2;
            rc.retrain_every = (int32_t)v, rc.retrain_period = 0;
        } else if (!strcmp(name, "batch-gap")) {
            if (ds_parse_i64("--batch-gap", val, 0, 86400, &v)) return 2;
            rc.batch_gap = v;
        } else if (!strcmp(name, "window")) {
            if (ds_parse_i64("--window", val, 0, 1 << 30, &v)) return 2;
            rc.window = (int32_t)v;
        } else if (!strcmp(name, "inc-rounds")) {
            if (ds_parse_i64("--inc-rounds", val, 0, 100000, &v)) return 2;
            rc.inc_rounds = (int32_t)v;
        } else if (!strcmp(name, "max-trees")) {
            if (ds_parse_i64("--max-trees", val, 1, 1000000, &v)) return 2;
            rc.max_trees = (int32_t)v;
        } else if (!strcmp(name, "max-bin")) {
            if (ds_parse_i64("--max-bin", val, 2, 65536, &v)) return 2;
            rc.max_bin = (int32_t)v;
        } else if (!strcmp(name, "rounds")) {
            if (ds_parse_i64("--rounds", val, 1, 100000, &v)) return 2;
            rc.rounds = (int32_t)v;
        } else if (!strcmp(name, "max-depth")) {
            if (ds_parse_i64("--max-depth", val, 1, 30, &v)) return 2;
            rc.max_depth = (int32_t)v;
        } else if (!strcmp(name, "threads")) {
            if (ds_parse_i64("--threads", val, 0, 1024, &v)) return 2;
            rc.nthread = (int32_t)v;
        } else if (!strcmp(name, "eta")) {
            if (ds_parse_f64("--eta", val, 1e-6, 1, &d)) return 2;
            rc.eta = d;
        } else if (!strcmp(name, "model-seed")) {
            if (ds_parse_i64("--model-seed", val, 0, INT64_MAX, &v)) return 2;
            rc.seed = (uint64_t)v;
        } else {
            fprintf(stderr, "deepshare train runtime: unknown option --%s (see --help)\n", name);
            return 2;
        }
    }
    if (!wo.trace && !wo.synth_given) {
        fprintf(stderr, "deepshare train runtime: --trace FILE and --vc-config FILE (or --synth-* options for the "
                        "synthetic workload) are required (see --help)\n");
        return 2;
    }
    if (!evaluate && !model_out) {
        fprintf(stderr, "deepshare train runtime: nothing to do: give --evaluate and/or --model-out FILE\n");
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
    int32_t n = t.njobs;
    int64_t *end = ds_xmalloc((size_t)(n ? n : 1) * sizeof *end);
    double *pred = ds_xmalloc((size_t)(n ? n : 1) * sizeof *pred), *heur = ds_xmalloc((size_t)(n ? n : 1) * sizeof *heur);
    double *bpred = ds_xmalloc((size_t)(n ? n : 1) * sizeof *bpred);
    double *actual = ds_xmalloc((size_t)(n ? n : 1) * sizeof *actual);
    double *cmpv[MAX_CMP] = {0};
    int32_t *th = ds_xmalloc((size_t)(n ? n : 1) * sizeof *th), *uh = ds_xmalloc((size_t)(n ? n : 1) * sizeof *uh);
    int32_t *src = ds_xmalloc((size_t)(n ? n : 1) * sizeof *src);
    uint8_t *mask = ds_xmalloc((size_t)(n ? n : 1));
    for (int32_t i = 0; i < n; i++) actual[i] = (double)DS_MAX(t.jobs[i].duration, 1);

    if (evaluate) {
        const char *finish_desc;
        if (ds_cli_finish_times(&t, finish, end, &finish_desc, &err)) {
            ds_die_error(&err);
            goto out;
        }
        for (int k = 0; k < ncmp; k++) {
            int32_t matched = 0;
            for (int32_t i = 0; i < n; i++) t.jobs[i].estimate = NAN;
            if (ds_trace_read_estimates(&t, cmp[k], 1000, &matched, &err)) {
                ds_die_error(&err);
                goto out;
            }
            cmpv[k] = ds_xmalloc((size_t)(n ? n : 1) * sizeof *cmpv[k]);
            for (int32_t i = 0; i < n; i++) cmpv[k][i] = t.jobs[i].estimate;
        }
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        int64_t leak;
        if (ds_runtime_online_eval(&t, end, &rc, pred, th, uh, src, &leak, &err)) {
            ds_die_error(&err);
            goto out;
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double secs = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
        ds_runtime_model_config_t hc = rc;
        hc.use_model = 0;
        hc.log = NULL;
        int64_t leak2;
        ds_runtime_online_eval(&t, end, &hc, heur, NULL, NULL, NULL, &leak2, &err);
        int64_t by_src[3] = {0, 0, 0};
        for (int32_t i = 0; i < n; i++) by_src[src[i] >= 0 ? 0 : src[i] == -1 ? 1 : 2]++;
        printf("runtime prediction, online protocol: %s, %d jobs, %d tenants\n", t.source, n, t.ntenants);
        printf("finished-before-submit rule: end <= submit, end from %s\n", finish_desc);
        printf("models: %s, min_history %d, retrain every %lld %s, window %d, +%d trees up to %d, %d rounds, depth %d, "
               "eta %g (%.2f s)\n",
               rc.per_tenant == DS_RT_TENANT_RESIDUAL   ? "per-tenant corrections of the cluster model"
               : rc.per_tenant == DS_RT_TENANT_SEPARATE ? "separate per-tenant models + cluster fallback"
                                                        : "cluster only",
               rc.min_history,
               (long long)(rc.retrain_period > 0 ? rc.retrain_period : rc.retrain_every),
               rc.retrain_period > 0 ? "s" : "finishes", rc.window, rc.inc_rounds, rc.max_trees, rc.rounds,
               rc.max_depth, rc.eta, secs);
        printf("answered by: tenant model %lld, cluster model %lld, history heuristic %lld; latest observed finish - "
               "submit <= %lld s (must be <= 0)\n", (long long)by_src[0], (long long)by_src[1], (long long)by_src[2],
               (long long)leak);
        int32_t nbatch = ds_runtime_batch_at_start(&t, end, rc.batch_gap, pred, bpred, NULL);
        if (rc.batch_gap > 0)
            printf("batch evidence (gap %lld s): %d of %d jobs had siblings that had ended by their start (end from %s)\n",
                   (long long)rc.batch_gap, nbatch, n, finish_desc);
        printf("\n  %-34s %7s %10s %9s %8s %8s %8s %8s %8s %10s\n", "predictor", "jobs", "MAPE%", "MAPE>=60%", "sMAPE%",
               "logMAPE%", "MdAPE%", "R2", "R2log", "MedAE s");
        static const char *bname[] = {"all jobs", "tenant history < 50", "tenant history 50-499", "tenant history >= 500",
                                      "user history 0", "user history 1-9", "user history 10-49", "user history >= 50"};
        for (int b = 0; b < 8; b++) {
            for (int32_t i = 0; i < n; i++) {
                int x = th[i], u = uh[i];
                mask[i] = b == 0 || (b == 1 && x < 50) || (b == 2 && x >= 50 && x < 500) || (b == 3 && x >= 500) ||
                          (b == 4 && u == 0) || (b == 5 && u >= 1 && u < 10) || (b == 6 && u >= 10 && u < 50) ||
                          (b == 7 && u >= 50);
            }
            printf("%s:\n", bname[b]);
            ds_reg_metrics_t m;
            ds_reg_metrics(pred, actual, mask, n, &m);
            print_row(rc.per_tenant == DS_RT_TENANT_RESIDUAL   ? "deepshare model (tenant corrections)"
                      : rc.per_tenant == DS_RT_TENANT_SEPARATE ? "deepshare model (separate tenants)"
                                                               : "deepshare model (cluster only)",
                      &m);
            if (rc.batch_gap > 0) {
                ds_reg_metrics(bpred, actual, mask, n, &m);
                print_row("model + batch evidence at start", &m);
            }
            ds_reg_metrics(heur, actual, mask, n, &m);
            print_row("user's recent median (heuristic)", &m);
            for (int k = 0; k < ncmp; k++) {
                uint8_t *m2 = ds_xmalloc((size_t)(n ? n : 1));
                for (int32_t i = 0; i < n; i++) m2[i] = mask[i] && !isnan(cmpv[k][i]);
                ds_reg_metrics(cmpv[k], actual, m2, n, &m);
                free(m2);
                const char *base = strrchr(cmp[k], '/');
                print_row(base ? base + 1 : cmp[k], &m);
            }
        }
        if (nbatch > 0) {
            /* the jobs the evidence speaks for, scored both ways */
            ds_runtime_batch_at_start(&t, end, rc.batch_gap, pred, bpred, mask);
            printf("jobs with batch evidence at start:\n");
            ds_reg_metrics_t m;
            ds_reg_metrics(pred, actual, mask, n, &m);
            print_row("deepshare model", &m);
            ds_reg_metrics(bpred, actual, mask, n, &m);
            print_row("batch evidence (siblings' median)", &m);
        }
        if (pred_out) {
            FILE *f = fopen(pred_out, "w");
            if (!f) {
                fprintf(stderr, "deepshare: %s: cannot write\n", pred_out);
                goto out;
            }
            fprintf(f, "job_id,actual,predicted,source,tenant_history,user_history\n");
            for (int32_t i = 0; i < n; i++)
                fprintf(f, "%lld,%lld,%.1f,%s,%d,%d\n", (long long)t.jobs[i].id, (long long)t.jobs[i].duration, pred[i],
                        src[i] >= 0 ? "tenant" : src[i] == -1 ? "cluster" : "heuristic", th[i], uh[i]);
            if (fclose(f)) {
                fprintf(stderr, "deepshare: %s: write failed\n", pred_out);
                goto out;
            }
        }
    }
    if (model_out) {
        /* replay the protocol so that every training row has its features as of its submit time, then
         * train once more on everything */
        const char *finish_desc;
        if (!evaluate && ds_cli_finish_times(&t, finish, end, &finish_desc, &err)) {
            ds_die_error(&err);
            goto out;
        }
        ds_runtime_model_config_t fc = rc;
        fc.log = NULL;
        ds_runtime_model_t *m = ds_runtime_model_create(&t, &fc);
        ds_runtime_online_run(m, end, pred, NULL, NULL, NULL, NULL);
        int64_t last = 0;
        for (int32_t i = 0; i < n; i++) last = DS_MAX(last, end[i]);
        for (int32_t i = 0; i < n; i++) ds_runtime_model_observe(m, i, last); /* the rest, all finished by now */
        char *buf = NULL;
        size_t len = 0;
        int r = ds_runtime_model_retrain(m, &err);
        if (!r) r = ds_runtime_model_save_buf(m, &buf, &len, &err);
        if (!r) r = ds_model_file_write(model_out, "runtime", buf, len, &err);
        if (r) ds_die_error(&err);
        else
            printf("saved %d runtime models (cluster + tenants with >= %d jobs) trained on %d jobs to %s\n",
                   ds_runtime_model_ntrained(m), rc.min_history, n, model_out);
        free(buf);
        ds_runtime_model_destroy(m);
        if (r) goto out;
    }
    status = 0;
out:
    for (int k = 0; k < ncmp; k++) free(cmpv[k]);
    free(end);
    free(pred);
    free(heur);
    free(bpred);
    free(actual);
    free(th);
    free(uh);
    free(src);
    free(mask);
    if (have_coloc) ds_coloc_free(&coloc);
    ds_trace_free(&t);
    return status;
}

static double pct(int64_t a, int64_t b) { return b ? 100.0 * (double)a / (double)b : NAN; }

static int train_interference(int argc, char **argv)
{
    const char *coloc_path = NULL, *single_path = NULL, *model_out = NULL;
    int evaluate = 0;
    double threshold = 0.7, d;
    int64_t v;
    ds_interference_config_t c;
    ds_interference_config_default(&c);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { help(stdout); return 0; }
        if (!strcmp(a, "--evaluate")) { evaluate = 1; continue; }
        if (strncmp(a, "--", 2) || i + 1 >= argc) {
            fprintf(stderr, "deepshare train interference: %s '%s' (see --help)\n",
                    strncmp(a, "--", 2) ? "unexpected argument" : "missing value for", a);
            return 2;
        }
        const char *name = a + 2, *val = argv[++i];
        if (!strcmp(name, "coloc")) coloc_path = val;
        else if (!strcmp(name, "single")) single_path = val;
        else if (!strcmp(name, "model-out")) model_out = val;
        else if (!strcmp(name, "threshold")) {
            if (ds_parse_f64("--threshold", val, 0, 2, &threshold)) return 2;
        } else if (!strcmp(name, "trees")) {
            if (ds_parse_i64("--trees", val, 1, 10000, &v)) return 2;
            c.trees = (int32_t)v;
        } else if (!strcmp(name, "max-bin")) {
            if (ds_parse_i64("--max-bin", val, 2, 65536, &v)) return 2;
            c.max_bin = (int32_t)v;
        } else if (!strcmp(name, "max-depth")) {
            if (ds_parse_i64("--max-depth", val, 1, 30, &v)) return 2;
            c.max_depth = (int32_t)v;
        } else if (!strcmp(name, "threads")) {
            if (ds_parse_i64("--threads", val, 0, 1024, &v)) return 2;
            c.nthread = (int32_t)v;
        } else if (!strcmp(name, "subsample")) {
            if (ds_parse_f64("--subsample", val, 0.01, 1, &d)) return 2;
            c.subsample = d;
        } else if (!strcmp(name, "colsample")) {
            if (ds_parse_f64("--colsample", val, 0.01, 1, &d)) return 2;
            c.colsample = d;
        } else {
            fprintf(stderr, "deepshare train interference: unknown option --%s (see --help)\n", name);
            return 2;
        }
    }
    if (!coloc_path || !single_path) {
        fprintf(stderr, "deepshare train interference: --coloc FILE and --single FILE are required (see --help)\n");
        return 2;
    }
    if (!evaluate && !model_out) {
        fprintf(stderr, "deepshare train interference: nothing to do: give --evaluate and/or --model-out FILE\n");
        return 2;
    }
    ds_error_t err;
    ds_error_clear(&err);
    ds_coloc_t coloc;
    ds_single_profile_t single;
    if (ds_coloc_read(&coloc, coloc_path, &err)) {
        ds_die_error(&err);
        return 1;
    }
    if (ds_single_read(&single, single_path, &err)) {
        ds_die_error(&err);
        ds_coloc_free(&coloc);
        return 1;
    }
    int status = 1;
    if (evaluate) {
        ds_interference_eval_t e;
        if (ds_interference_eval_lomo(&coloc, &single, &c, threshold, &e, &err)) {
            ds_die_error(&err);
            goto out;
        }
        printf("interference forest, leave-one-model-out over %d models (%d trees, depth %d, subsample %g, "
               "colsample_bynode %g)\n", e.nfolds, c.trees, c.max_depth, c.subsample, c.colsample);
        printf("  %-14s %6s %8s %8s\n", "held-out model", "rows", "MAE", "R2");
        for (int i = 0; i < e.nfolds; i++)
            printf("  %-14s %6lld %8.4f %8.4f\n", e.fold[i].model, (long long)e.fold[i].rows, e.fold[i].mae, e.fold[i].r2);
        printf("  %-14s %6lld %8.4f %8.4f   (RMSE %.4f)\n", "pooled", (long long)e.rows, e.mae, e.r2, e.rmse);
        printf("\npair decision on the %lld held-out pairs (admit; truth: both measured retentions >= %.2f, %lld of them)\n",
               (long long)e.pairs, threshold, (long long)(e.tp + e.fn));
        printf("  %-32s %6s %6s %6s %6s %10s %8s %10s\n", "rule", "TP", "FP", "FN", "TN", "precision", "recall",
               "accuracy");
        printf("  %-32s %6lld %6lld %6lld %6lld %9.1f%% %7.1f%% %9.1f%%\n", "forest: both rho_hat >= threshold",
               (long long)e.tp, (long long)e.fp, (long long)e.fn, (long long)e.tn, pct(e.tp, e.tp + e.fp),
               pct(e.tp, e.tp + e.fn), pct(e.tp + e.tn, e.pairs));
        printf("  %-32s %6lld %6lld %6lld %6lld %9.1f%% %7.1f%% %9.1f%%\n", "Lucid: labels sum <= 2",
               (long long)e.lucid_tp, (long long)e.lucid_fp, (long long)e.lucid_fn, (long long)e.lucid_tn,
               pct(e.lucid_tp, e.lucid_tp + e.lucid_fp), pct(e.lucid_tp, e.lucid_tp + e.lucid_fn),
               pct(e.lucid_tp + e.lucid_tn, e.pairs));
        printf("  (pairs of two different models are tested in both models' folds)\n");
    }
    if (model_out) {
        ds_interference_model_t *m;
        char *buf = NULL;
        size_t len = 0;
        int r = ds_interference_model_train(&m, &coloc, &single, &c, NULL, &err);
        if (!r) {
            r = ds_interference_model_save_buf(m, &buf, &len, &err);
            ds_interference_model_destroy(m);
        }
        if (!r) r = ds_model_file_write(model_out, "interference", buf, len, &err);
        free(buf);
        if (r) {
            ds_die_error(&err);
            goto out;
        }
        printf("saved the interference forest (%d trees, trained on %d pairs) to %s\n", c.trees, coloc.npairs, model_out);
    }
    status = 0;
out:
    ds_single_free(&single);
    ds_coloc_free(&coloc);
    return status;
}

int ds_cli_model_cmd(const char *cmd, int argc, char **argv, void (*help)(FILE *f), int (*runtime)(int, char **),
                     int (*interference)(int, char **))
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        help(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "runtime")) return runtime(argc - 2, argv + 2);
    if (!strcmp(argv[1], "interference")) return interference(argc - 2, argv + 2);
    fprintf(stderr, "deepshare %s: unknown model '%s' (runtime or interference; see --help)\n", cmd, argv[1]);
    return 2;
}

int ds_cmd_train(int argc, char **argv)
{
    return ds_cli_model_cmd("train", argc, argv, help, train_runtime, train_interference);
}
