/* suite.c: 'deepshare suite': the benchmark suite (docs/results.md, "Benchmark suite"): every named workload
 * under every policy in both modes, each workload a 'compare' report folder, then one table, suite.json
 * and DeepShare's verdict per workload against the best pooled and partitioned baselines. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/runner.h"
#include "cli/verdict.h"
#include "deepshare/policy.h"

/* Venus' utilization window (2020-09-01 to 2020-09-27). */
#define VENUS_T0 13219200LL
#define VENUS_T1 15465600LL

/* Where a workload's jobs come from. */
typedef enum { W_SYNTH = 0, W_VENUS, W_ITP } wsource_t;

typedef struct workload {
    const char *name, *what;
    wsource_t src;         /* W_VENUS: the Venus files (trace, tenants, colocation profile, window, estimates) */
    const char *jobs, *tenants; /* W_ITP: the files under DATA/itp (ITP has no workload columns, so no profile) */
    double arrival_scale;  /* passed as --arrival-scale when not 1 */
    const char *synth[4];  /* extra generator options */
    int typed;             /* several GPU types: also the baselines type-aware and DeepShare blind to types */
} workload_t;

static const workload_t workloads[] = {
    {"venus", "Venus as given (load 0.89 over its window)", W_VENUS, NULL, NULL, 1.0, {NULL}, 0},
    {"venus-x1.5", "Venus, every inter-arrival gap divided by 1.5", W_VENUS, NULL, NULL, 1.5, {NULL}, 0},
    {"itp", "Microsoft ITP, 60 days, 10 clusters as tenants (load 0.85; part-time tenants)", W_ITP, "itp_jobs.csv",
     "itp_tenants.csv", 1.0, {NULL}, 0},
    {"itp-slice", "Microsoft ITP, days 28-42, when all ten tenants submit (load 0.85)", W_ITP, "itp_jobs_slice.csv",
     "itp_tenants_slice.csv", 1.0, {NULL}, 0},
    {"synthetic", "the built-in synthetic workload (load 1.0)", W_SYNTH, NULL, NULL, 1.0, {NULL}, 0},
    {"noisy-neighbour", "synthetic; the smallest tenant offers 4x its quota in bursts, the others 0.8x", W_SYNTH, NULL,
     NULL, 1.0, {"--synth-noisy", "4", NULL}, 0},
    {"large-jobs", "synthetic; a third of GPU-time in jobs of 16-64 GPUs", W_SYNTH, NULL, NULL, 1.0,
     {"--synth-large-share", "0.33", NULL}, 0},
    {"hetero", "synthetic on three GPU types (v100:12, p100:8, k80:4 nodes; Gavel's speeds and per-type pair retention)",
     W_SYNTH, NULL, NULL, 1.0, {"--synth-gpu-types", "v100:12,p100:8,k80:4", NULL}, 1},
};
#define NWORK ((int)(sizeof workloads / sizeof workloads[0]))

static void help(FILE *f)
{
    fprintf(f,
            "usage: deepshare suite [--out DIR] [--predictor model|oracle|file] [--data DIR] [--workloads LIST]\n"
            "                       [--jobs N] [--no-plots] [--check-invariants] [--quiet] [--policies LIST]\n"
            "                       [--missing-rho both|1|model|X] [--ckpt-default S] [--config FILE]\n"
            "\n"
            "Runs the benchmark suite: each workload under every policy, partitioned and pooled (the models\n"
            "of production schedulers pooled only), as one 'deepshare compare' report per workload and mode\n"
            "(DIR/<workload>/<mode>/, and DIR/<workload>/<mode>-rho-model/ for the second ground truth, with\n"
            "plots and index.html), then prints one table and DeepShare's verdict per workload and ground\n"
            "truth, and writes DIR/suite.json, DIR/suite.md and DIR/index.html.\n"
            "\n"
            "workloads:\n");
    for (int w = 0; w < NWORK; w++) fprintf(f, "  %-16s %s\n", workloads[w].name, workloads[w].what);
    fprintf(f,
            "\n"
            "The goal on every workload: DeepShare's (pooled) average queueing delay at most the best pooled\n"
            "baseline's (research or production model; the verdict names it, and the best production model\n"
            "with DeepShare's ratio to it), its p99 at most 1.5x the lowest pooled baseline p99, and its QAD\n"
            "compliance at least max(0.95, the best baseline's) where some policy attains 0.95 (else the best\n"
            "baseline's).\n"
            "\n"
            "On a workload of several GPU types (hetero) only the policies with type rules run (the others\n"
            "are named); the baselines also run pooled type-aware (NAME+fastest: fastest free type first,\n"
            "judged like the others) and DeepShare blind to types (deepshare+blind: the cost of ignoring\n"
            "types, shown and not judged), in DIR/<workload>/pooled-fastest/ and pooled-deepshare-blind/.\n"
            "\n"
            "options:\n"
            "  --out DIR           report folder (default suite-out)\n"
            "  --predictor P       where every runtime-ordering policy gets runtimes (information parity):\n"
            "                      model (default: the online learned predictor for DeepShare, QSSF and Lucid),\n"
            "                      oracle (true durations for all) or file (the trace's own estimates for all:\n"
            "                      the generator's noisy ones, Venus_Sept_ebm_weekly_updated.csv on Venus).\n"
            "                      SJF orders by true durations in every variant (its definition).\n"
            "  --data DIR          the shared data folder with venus/, colocation/ and itp/ (default\n"
            "                      $DS_DATA_DIR or ../shared/data); a workload whose files are absent is\n"
            "                      skipped with a message; the ITP workloads also with --predictor file\n"
            "                      (the trace carries no estimates)\n"
            "  --workloads LIST    comma-separated subset of the workloads above (default: all)\n"
            "  --policies LIST     policies to run (default all; production models, those declaring\n"
            "                      DS_POLICY_PRODUCTION, run pooled only)\n"
            "  --missing-rho R     ground truth of colocated pairs the profile lacks: both (default: the\n"
            "                      verdict at 1, the reference convention, and at model, a fixed forest\n"
            "                      trained on DATA/colocation; SPEC 7.2), 1, model or a constant X\n"
            "  --jobs N            simulations in parallel threads per report (1)\n"
            "  --no-plots          do not render plots (gnuplot)\n"
            "  --check-invariants  check the engine and policy invariants after every scheduling pass\n"
            "  --ckpt-default S    every job checkpoints every S s of its run (the traces declare none): a\n"
            "                      preemption costs the work since the last checkpoint, and the policies know\n"
            "                      it (0, the default: progress is kept, as in the reference simulators)\n"
            "  --config FILE       policy parameters ('name = value' lines) for every report, as compare's\n"
            "  --quiet             no progress on stderr\n"
            "\n"
            "exit status: 0 all ran (whatever the verdicts); 1 a run or a write failed; 2 bad usage.\n");
}

/* Walks a comma-separated list: returns the item at *p (its length in *len) and moves *p past it, NULL at
 * the end. */
static const char *next_item(const char **p, size_t *len)
{
    if (!**p) return NULL;
    const char *item = *p, *c = strchr(item, ',');
    *len = c ? (size_t)(c - item) : strlen(item);
    *p = c ? c + 1 : item + *len;
    return item;
}

static int listed(const char *list, const char *name)
{
    if (!list) return 1;
    size_t len, n = strlen(name);
    for (const char *p = list, *it; (it = next_item(&p, &len));)
        if (len == n && !strncmp(it, name, n)) return 1;
    return 0;
}

static int file_exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static int make_dir(const char *p)
{
    if (mkdir(p, 0777) && errno != EEXIST) {
        fprintf(stderr, "deepshare suite: %s: cannot create directory: %s\n", p, strerror(errno));
        return -1;
    }
    return 0;
}

/* Reads a compare summary.json into rows; returns how many, or -1. */
static int read_summary(const char *path, ds_vrow_t *rows, int max, json_t **keep, const char *variant)
{
    json_error_t je;
    json_t *a = json_load_file(path, 0, &je);
    if (!a || !json_is_array(a)) {
        fprintf(stderr, "deepshare suite: %s: %s\n", path, a ? "not a JSON array" : je.text);
        json_decref(a);
        return -1;
    }
    int n = 0;
    for (size_t i = 0; i < json_array_size(a) && n < max; i++) {
        json_t *o = json_array_get(a, i);
        ds_vrow_t *r = &rows[n++];
        memset(r, 0, sizeof *r);
        const char *pol = json_string_value(json_object_get(o, "policy"));
        /* a run with other options (type-aware first fit, DeepShare blind to types): its rows are NAME+VARIANT */
        snprintf(r->policy, sizeof r->policy, "%s%s", pol ? pol : "?", variant ? variant : "");
        if (variant) json_object_set_new(o, "policy", json_string(r->policy));
        const char *mode = json_string_value(json_object_get(o, "mode"));
        r->pooled = mode && !strcmp(mode, "pooled");
        r->avg_queue = json_number_value(json_object_get(o, "avg_queue"));
        r->p99_queue = json_number_value(json_object_get(o, "p99_queue"));
        r->compliance = json_number_value(json_object_get(o, "qad_compliance"));
        r->avg_jct = json_number_value(json_object_get(o, "avg_jct"));
        r->lost_gpu_hours = json_number_value(json_object_get(o, "gpu_hours_lost"));
    }
    *keep = a;
    return n;
}

/* Where a row's runtimes came from: its policy declares whether it reads the predictor or estimates. */
static const char *source_of(const char *policy, const char *pred)
{
    const ds_policy_ops_t *ops = ds_vrow_ops(policy);
    if (ops && !strcmp(ops->name, "sjf")) return "oracle"; /* SJF is defined on true durations */
    if (ops && (ops->props & (DS_POLICY_USES_PREDICTORS | DS_POLICY_USES_ESTIMATES))) return pred;
    return "-";
}

static const char *kind_of(const char *policy)
{
    const ds_policy_ops_t *ops = ds_vrow_ops(policy);
    if (!ops) return "?";
    if (!strcmp(ops->name, "deepshare")) return "deepshare";
    return (ops->props & DS_POLICY_PRODUCTION) ? "production" : "research";
}

/* Appends to out (size n) the items of list whose policy runs on several GPU types (DS_POLICY_TYPED), without
 * deepshare when drop_ds; with untyped set, the others instead (for the note naming them). */
static void typed_of(const char *list, int drop_ds, int untyped, char *out, size_t n)
{
    size_t len, k = 0;
    out[0] = '\0';
    for (const char *p = list, *it; (it = next_item(&p, &len));) {
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)len, it);
        const ds_policy_ops_t *ops = ds_policy_find(name);
        int typed = ops && (ops->props & DS_POLICY_TYPED);
        if (typed == untyped || (drop_ds && !strcmp(name, "deepshare"))) continue;
        int w = snprintf(out + k, n - k, "%s%s", k ? (untyped ? ", " : ",") : "", name);
        if (w < 0 || (size_t)w >= n - k) break;
        k += (size_t)w;
    }
}

/* The pooled row of rows[0..n) with the lowest average queueing delay among those sel accepts; NULL if none. */
static const ds_vrow_t *best_row(const ds_vrow_t *rows, int n, int (*sel)(const ds_vrow_t *))
{
    const ds_vrow_t *b = NULL;
    for (int i = 0; i < n; i++)
        if (rows[i].pooled && sel(&rows[i]) && (!b || rows[i].avg_queue < b->avg_queue)) b = &rows[i];
    return b;
}
static int is_baseline(const ds_vrow_t *r) { return strncmp(r->policy, "deepshare", 9) != 0; }
static int is_type_blind(const ds_vrow_t *r) { return is_baseline(r) && !strchr(r->policy, '+'); }
static int is_type_aware(const ds_vrow_t *r) { return is_baseline(r) && strchr(r->policy, '+'); }
static int is_prod(const ds_vrow_t *r)
{
    const ds_policy_ops_t *ops = ds_vrow_ops(r->policy);
    return is_baseline(r) && ops && (ops->props & DS_POLICY_PRODUCTION);
}
static int is_ds_blind(const ds_vrow_t *r) { return !strcmp(r->policy, "deepshare+blind"); }

/* A workload on several GPU types: DeepShare against the best type-blind, type-aware and production baseline,
 * and the cost of ignoring types (DeepShare blind to them against DeepShare); printed, in suite.md and as
 * the verdict's "types" object. */
static json_t *types_line(FILE *f, FILE *md, const ds_vrow_t *rows, int n, const ds_verdict_t *v)
{
    json_t *tj = json_object();
    if (!v->have_ds) return tj;
    const ds_vrow_t *bl = best_row(rows, n, is_type_blind), *aw = best_row(rows, n, is_type_aware),
                    *pr = best_row(rows, n, is_prod), *db = best_row(rows, n, is_ds_blind);
    const ds_vrow_t *sel[3] = {bl, aw, pr};
    static const char *const what[3] = {"best type-blind baseline", "best type-aware baseline", "best production model"};
    static const char *const key[3] = {"best_type_blind", "best_type_aware", "best_production"};
    FILE *outs[2] = {f, md};
    for (int i = 0; i < 2; i++) {
        FILE *o = outs[i];
        fprintf(o, "types: deepshare %.0f s", v->ds.avg_queue);
        for (int k = 0; k < 3; k++)
            if (sel[k])
                fprintf(o, "; %s %s %.0f s (deepshare x%.2f)", what[k], sel[k]->policy, sel[k]->avg_queue,
                        sel[k]->avg_queue > 0 ? v->ds.avg_queue / sel[k]->avg_queue : 0);
        if (db && v->ds.avg_queue > 0)
            fprintf(o, "; cost of ignoring types: deepshare+blind %.0f s (%+.0f%% avg queue), p99 %.0f s against %.0f s, "
                       "compliance %.3f against %.3f",
                    db->avg_queue, 100 * (db->avg_queue / v->ds.avg_queue - 1), db->p99_queue, v->ds.p99_queue,
                    db->compliance, v->ds.compliance);
        fprintf(o, "\n");
    }
    for (int k = 0; k < 3; k++)
        if (sel[k]) {
            json_t *x = json_object();
            json_object_set_new(x, "policy", json_string(sel[k]->policy));
            json_object_set_new(x, "avg_queue", json_real(sel[k]->avg_queue));
            json_object_set_new(tj, key[k], x);
        }
    if (db) {
        json_t *x = json_object();
        json_object_set_new(x, "avg_queue", json_real(db->avg_queue));
        json_object_set_new(x, "p99_queue", json_real(db->p99_queue));
        json_object_set_new(x, "compliance", json_real(db->compliance));
        json_object_set_new(tj, "deepshare_type_blind", x);
    }
    return tj;
}

static json_t *verdict_json(const ds_verdict_t *v, int judged_here)
{
    json_t *vj = json_object();
    json_object_set_new(vj, "judged", json_boolean(judged_here));
    if (!judged_here) return vj;
    json_object_set_new(vj, "goal_met", json_boolean(v->ok));
    json_object_set_new(vj, "queue_ok", json_boolean(v->queue_ok));
    json_object_set_new(vj, "p99_ok", json_boolean(v->p99_ok));
    json_object_set_new(vj, "compliance_ok", json_boolean(v->compliance_ok));
    json_object_set_new(vj, "deepshare_avg_queue", json_real(v->ds.avg_queue));
    json_object_set_new(vj, "deepshare_p99_queue", json_real(v->ds.p99_queue));
    json_object_set_new(vj, "deepshare_compliance", json_real(v->ds.compliance));
    json_object_set_new(vj, "best_pooled_baseline", json_string(v->best_pooled.policy));
    json_object_set_new(vj, "best_pooled_is_production", json_boolean(v->best_pooled.production));
    json_object_set_new(vj, "best_pooled_avg_queue", json_real(v->best_pooled.avg_queue));
    json_object_set_new(vj, "lowest_pooled_p99_queue", json_real(v->min_pooled_p99));
    if (v->have_prod) {
        json_object_set_new(vj, "best_production_model", json_string(v->best_prod.policy));
        json_object_set_new(vj, "best_production_avg_queue", json_real(v->best_prod.avg_queue));
        json_object_set_new(vj, "deepshare_to_best_production", json_real(v->prod_ratio));
    }
    if (v->have_part_base) {
        json_object_set_new(vj, "best_partitioned_baseline", json_string(v->best_part.policy));
        json_object_set_new(vj, "best_partitioned_avg_queue", json_real(v->best_part.avg_queue));
    }
    json_object_set_new(vj, "best_baseline_compliance", json_real(v->best_compliance));
    json_object_set_new(vj, "compliance_target", json_real(v->compliance_target));
    json_object_set_new(vj, "theta_attained", json_boolean(v->theta_attained));
    return vj;
}

int ds_cmd_suite(int argc, char **argv)
{
    const char *out = "suite-out", *pred = "model", *data = getenv("DS_DATA_DIR"), *only = NULL, *policies = "all";
    const char *ckpt = NULL, *pconf = NULL;
    const char *rho_opt = "both";
    int64_t jobs = 1;
    int plots = 1, check = 0, quiet = 0;
    if (!data || !*data) data = "../shared/data";
    for (int i = 1; i < argc; i++) {
        char name[128];
        const char *val;
        int k = ds_cli_split("suite", argv[i], name, sizeof name, &val);
        if (k == 0) { help(stdout); return 0; }
        if (k < 0) return 2;
        if (!strcmp(name, "no-plots")) { plots = 0; continue; }
        if (!strcmp(name, "check-invariants")) { check = 1; continue; }
        if (!strcmp(name, "quiet")) { quiet = 1; continue; }
        if (ds_cli_value("suite", argc, argv, &i, name, &val)) return 2;
        if (!strcmp(name, "out")) out = val;
        else if (!strcmp(name, "predictor")) pred = val;
        else if (!strcmp(name, "data")) data = val;
        else if (!strcmp(name, "workloads")) only = val;
        else if (!strcmp(name, "policies")) policies = val;
        else if (!strcmp(name, "config")) pconf = val;
        else if (!strcmp(name, "ckpt-default")) {
            int64_t v;
            if (ds_parse_i64("--ckpt-default", val, 0, DS_MAX_DURATION, &v)) return 2;
            ckpt = val;
        }
        else if (!strcmp(name, "missing-rho")) rho_opt = val;
        else if (!strcmp(name, "jobs")) {
            if (ds_parse_i64("--jobs", val, 1, 256, &jobs)) return 2;
        } else {
            fprintf(stderr, "deepshare suite: unknown option --%s (see --help)\n", name);
            return 2;
        }
    }
    if (strcmp(rho_opt, "both") && strcmp(rho_opt, "model")) {
        double x;
        if (ds_parse_f64("--missing-rho", rho_opt, 0.01, 1, &x)) return 2;
    }
    if (strcmp(pred, "model") && strcmp(pred, "oracle") && strcmp(pred, "file")) {
        fprintf(stderr, "deepshare suite: option --predictor: '%s' is not model, oracle or file\n", pred);
        return 2;
    }
    size_t len;
    for (const char *p = only ? only : "", *it; (it = next_item(&p, &len));) {
        int found = 0;
        for (int w = 0; w < NWORK; w++) found |= strlen(workloads[w].name) == len && !strncmp(it, workloads[w].name, len);
        if (!found) {
            fprintf(stderr, "deepshare suite: option --workloads: '%.*s' is not a workload (see --help)\n", (int)len, it);
            return 2;
        }
    }
    char venus[1200], vc[1200], coloc[1200], est[1200], single[1200];
    snprintf(venus, sizeof venus, "%s/venus/venus_sept_jobs.csv", data);
    snprintf(vc, sizeof vc, "%s/venus/vc_config.csv", data);
    snprintf(coloc, sizeof coloc, "%s/colocation/colocate_info.csv", data);
    snprintf(single, sizeof single, "%s/colocation/single_data.csv", data);
    snprintf(est, sizeof est, "%s/estimates/Venus_Sept_ebm_weekly_updated.csv", data);
    int have_venus = file_exists(venus) && file_exists(vc) && file_exists(coloc);
    char itp_jobs[NWORK][1200], itp_ten[NWORK][1200];
    int have[NWORK];
    for (int w = 0; w < NWORK; w++) {
        const workload_t *W = &workloads[w];
        have[w] = W->src == W_SYNTH || (W->src == W_VENUS && have_venus);
        if (W->src != W_ITP) continue;
        snprintf(itp_jobs[w], sizeof itp_jobs[w], "%s/itp/%s", data, W->jobs);
        snprintf(itp_ten[w], sizeof itp_ten[w], "%s/itp/%s", data, W->tenants);
        have[w] = file_exists(itp_jobs[w]) && file_exists(itp_ten[w]) && strcmp(pred, "file");
    }
    if (make_dir(out)) return 1;

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    json_t *suite = json_object(), *wl = json_array();
    json_object_set_new(suite, "predictor", json_string(pred));
    json_object_set_new(suite, "workloads", wl);
    char mdpath[1300];
    snprintf(mdpath, sizeof mdpath, "%s/suite.md", out);
    FILE *md = fopen(mdpath, "w");
    if (!md) {
        fprintf(stderr, "deepshare suite: %s: cannot write: %s\n", mdpath, strerror(errno));
        json_decref(suite);
        return 1;
    }
    fprintf(md, "# Benchmark suite (runtimes from: %s)\n\n", pred);
    /* the policies of each mode: the production models (DS_POLICY_PRODUCTION) run pooled only (SPEC 7.1) */
    char pol_part[4096] = "", pol_pool[4096] = "";
    size_t plen;
    for (const ds_policy_ops_t *const *q = ds_policy_list(); *q; q++) {
        int want = 0;
        if (!strcmp(policies, "all")) want = 1;
        else
            for (const char *pp = policies, *it; (it = next_item(&pp, &plen));)
                want |= plen == strlen((*q)->name) && !strncmp(it, (*q)->name, plen);
        if (!want) continue;
        size_t u = strlen(pol_pool);
        snprintf(pol_pool + u, sizeof pol_pool - u, "%s%s", u ? "," : "", (*q)->name);
        if ((*q)->props & DS_POLICY_PRODUCTION) continue;
        u = strlen(pol_part);
        snprintf(pol_part + u, sizeof pol_part - u, "%s%s", u ? "," : "", (*q)->name);
    }
    /* the ground truth of unprofiled pairs: the reference's 1.0 and the fixed model (SPEC 7.2) */
    const char *rhos[2];
    int nrho = 0;
    if (!strcmp(rho_opt, "both") || !strcmp(rho_opt, "1")) rhos[nrho++] = "1";
    if (!strcmp(rho_opt, "both") || !strcmp(rho_opt, "model")) {
        if (file_exists(coloc) && file_exists(single)) rhos[nrho++] = "model";
        else
            fprintf(stderr, "deepshare suite: --missing-rho model skipped: %s or %s is absent (give --data DIR)\n", coloc,
                    single);
    }
    if (strcmp(rho_opt, "both") && strcmp(rho_opt, "1") && strcmp(rho_opt, "model")) rhos[nrho++] = rho_opt;
    int failed = 0, judged[2] = {0, 0}, met[2] = {0, 0};
    for (int w = 0; w < NWORK; w++) {
        const workload_t *W = &workloads[w];
        if (!listed(only, W->name)) continue;
        if (!have[w]) {
            if (W->src == W_VENUS)
                fprintf(stderr, "deepshare suite: %s: skipped: the Venus files are not under %s (give --data DIR)\n",
                        W->name, data);
            else if (!strcmp(pred, "file"))
                fprintf(stderr, "deepshare suite: %s: skipped: the ITP trace has no runtime estimates for --predictor file\n",
                        W->name);
            else
                fprintf(stderr, "deepshare suite: %s: skipped: %s or %s is absent (give --data DIR)\n", W->name,
                        itp_jobs[w], itp_ten[w]);
            continue;
        }
        char wdir[1300];
        snprintf(wdir, sizeof wdir, "%s/%s", out, W->name);
        if (make_dir(wdir)) { failed = 1; continue; }
        /* on several GPU types: only the policies with type rules (the others named in a note), the baselines
         * once more type-aware and DeepShare once more blind to types */
        char part_w[4096], pool_w[4096], fast_w[4096], blind_w[16] = "", untyped_w[4096] = "";
        if (W->typed) {
            typed_of(pol_part, 0, 0, part_w, sizeof part_w);
            typed_of(pol_pool, 0, 0, pool_w, sizeof pool_w);
            typed_of(pol_pool, 1, 0, fast_w, sizeof fast_w);
            typed_of(pol_pool, 0, 1, untyped_w, sizeof untyped_w);
            if (listed(pol_pool, "deepshare")) snprintf(blind_w, sizeof blind_w, "deepshare");
        } else {
            snprintf(part_w, sizeof part_w, "%s", pol_part);
            snprintf(pool_w, sizeof pool_w, "%s", pol_pool);
            fast_w[0] = '\0';
        }
        json_t *o = json_object(), *runs_j = json_array();
        json_object_set_new(o, "name", json_string(W->name));
        json_object_set_new(o, "description", json_string(W->what));
        for (int ri = 0; ri < nrho; ri++) {
            const char *rho = rhos[ri];
            int model = !strcmp(rho, "model");
            ds_vrow_t rows[96];
            int nrows = 0, njudged = -1;
            json_t *keep[4] = {NULL, NULL, NULL, NULL};
            /* runs: partitioned, pooled; on several GPU types also the baselines type-aware (fastest free type
             * first, pooled, judged like the others) and DeepShare blind to types (pooled, not judged: the cost of
             * ignoring types) */
            static const char *const run_dir[4] = {"partitioned", "pooled", "pooled-fastest", "pooled-deepshare-blind"};
            for (int run = 0; run < (W->typed ? 4 : 2); run++) {
                int pooled = run > 0;
                const char *plist = run == 0 ? part_w : run == 1 ? pool_w : run == 2 ? fast_w : blind_w;
                if (!*plist) continue;
                if (run == 3) njudged = nrows;
                char odir[1400], scale[32], window[64];
                snprintf(odir, sizeof odir, "%s/%s%s%s", wdir, run_dir[run], ri ? "-rho-" : "", ri ? rho : "");
                const char *av[56];
                int ac = 0;
                av[ac++] = "compare";
                av[ac++] = "--out", av[ac++] = odir;
                av[ac++] = "--policies", av[ac++] = plist;
                av[ac++] = "--mode", av[ac++] = pooled ? "pooled" : "partitioned";
                if (run == 2) av[ac++] = "--type-placement", av[ac++] = "fastest";
                if (run == 3) av[ac++] = "--type-quota", av[ac++] = "blind", av[ac++] = "--type-choice", av[ac++] = "blind";
                av[ac++] = "--predictor", av[ac++] = pred;
                av[ac++] = "--quiet";
                char nj[32];
                snprintf(nj, sizeof nj, "%lld", (long long)jobs);
                av[ac++] = "--jobs", av[ac++] = nj;
                if (!plots) av[ac++] = "--no-plots";
                if (check) av[ac++] = "--check-invariants";
                if (ckpt) av[ac++] = "--ckpt-default", av[ac++] = ckpt;
                if (pconf) av[ac++] = "--config", av[ac++] = pconf;
                if (W->src == W_ITP) {
                    av[ac++] = "--trace", av[ac++] = itp_jobs[w];
                    av[ac++] = "--vc-config", av[ac++] = itp_ten[w];
                }
                if (W->src == W_VENUS) {
                    av[ac++] = "--trace", av[ac++] = venus;
                    av[ac++] = "--vc-config", av[ac++] = vc;
                    av[ac++] = "--coloc", av[ac++] = coloc;
                    /* the window keeps Venus' span of submissions: compressed arrivals compress it too */
                    snprintf(window, sizeof window, "%lld:%lld", VENUS_T0,
                             VENUS_T0 + (long long)((double)(VENUS_T1 - VENUS_T0) / W->arrival_scale));
                    av[ac++] = "--window", av[ac++] = window;
                    if (!strcmp(pred, "file")) av[ac++] = "--estimates", av[ac++] = est;
                }
                av[ac++] = "--missing-rho", av[ac++] = rho;
                if (model) {
                    av[ac++] = "--missing-rho-profile", av[ac++] = coloc;
                    av[ac++] = "--missing-rho-single", av[ac++] = single;
                }
                if (W->arrival_scale != 1.0) {
                    snprintf(scale, sizeof scale, "%g", W->arrival_scale);
                    av[ac++] = "--arrival-scale", av[ac++] = scale;
                }
                for (int k = 0; W->synth[k]; k++) av[ac++] = W->synth[k];
                /* parity: with model or oracle nobody reads the generator's noisy estimates */
                if (strcmp(pred, "file") && W->src != W_VENUS) av[ac++] = "--trace-estimates", av[ac++] = "drop";
                av[ac] = NULL;
                if (!quiet) fprintf(stderr, "suite: %s, %s, missing-rho %s\n", W->name, run_dir[run], rho);
                int rc = ds_cmd_compare(ac, (char **)av);
                if (rc != 0 && rc != 3) {
                    fprintf(stderr, "deepshare suite: %s %s: compare exited with status %d\n", W->name, run_dir[run], rc);
                    failed = 1;
                }
                char sp[1500];
                snprintf(sp, sizeof sp, "%s/summary.json", odir);
                const char *variant = run == 2 ? "+fastest" : run == 3 ? "+blind" : NULL;
                int n = file_exists(sp) ? read_summary(sp, rows + nrows, 96 - nrows, &keep[run], variant) : -1;
                if (n < 0) {
                    fprintf(stderr, "deepshare suite: %s %s: %s: %s\n", W->name, run_dir[run], sp,
                            file_exists(sp) ? "unreadable or malformed" : "missing (the compare run wrote no summary)");
                    failed = 1;
                    continue;
                }
                nrows += n;
            }
            if (njudged < 0) njudged = nrows;
            ds_verdict_t v;
            ds_verdict_judge(rows, njudged, 0.95, &v);
            int judged_here = v.have_ds && v.have_pooled_base;
            judged[ri] += judged_here;
            met[ri] += judged_here && v.ok;
            printf("\n== %s (missing-rho %s): %s\n", W->name, rho, W->what);
            int pw = 12; /* the policy column: a variant's name is longer */
            for (int i = 0; i < nrows; i++) pw = DS_MAX(pw, (int)strlen(rows[i].policy));
            printf("%-*s %-12s %-10s %-7s %10s %10s %10s %7s %9s\n", pw, "policy", "mode", "kind", "source", "avg_queue",
                   "p99_queue", "avg_jct", "qad_ok", "lost_gpuh");
            fprintf(md, "## %s, missing-rho %s\n\n%s.\n\n| policy | mode | kind | runtimes from | avg queue (s) | p99 queue (s) "
                        "| avg JCT (s) | QAD compliance | GPU-h lost to preemption |\n| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: |\n",
                    W->name, rho, W->what);
            for (int i = 0; i < nrows; i++) {
                const ds_vrow_t *r = &rows[i];
                const char *src = source_of(r->policy, pred);
                const char *kind = kind_of(r->policy);
                printf("%-*s %-12s %-10s %-7s %10.0f %10.0f %10.0f %7.3f %9.1f\n", pw, r->policy,
                       r->pooled ? "pooled" : "partitioned", kind, src, r->avg_queue, r->p99_queue, r->avg_jct,
                       r->compliance, r->lost_gpu_hours);
                fprintf(md, "| %s | %s | %s | %s | %.0f | %.0f | %.0f | %.3f | %.1f |\n", r->policy,
                        r->pooled ? "pooled" : "partitioned", kind, src, r->avg_queue, r->p99_queue, r->avg_jct,
                        r->compliance, r->lost_gpu_hours);
            }
            json_t *tj = NULL;
            if (W->typed) {
                const char *note = "rows NAME+fastest: the baseline type-aware (fastest free type first, --type-placement "
                                   "fastest), judged like the others; deepshare+blind: DeepShare blind to GPU types "
                                   "(--type-quota blind --type-choice blind), the cost of ignoring types, not judged";
                printf("%s\n", note);
                fprintf(md, "\n%s.\n", note);
                if (*untyped_w) {
                    printf("not run on several GPU types (no model of their type rules): %s\n", untyped_w);
                    fprintf(md, "Not run on several GPU types (no model of their type rules): %s.\n", untyped_w);
                }
                fprintf(md, "\n");
                tj = types_line(stdout, md, rows, nrows, &v);
            }
            ds_verdict_print(stdout, &v);
            fprintf(md, "\n");
            ds_verdict_print(md, &v);
            fprintf(md, "\n");
            fflush(stdout);
            json_t *res = json_array();
            for (int k = 0; k < 4; k++)
                if (keep[k]) json_array_extend(res, keep[k]), json_decref(keep[k]);
            json_t *vj = verdict_json(&v, judged_here);
            if (tj) json_object_set_new(vj, "types", tj);
            json_t *run = json_object();
            json_object_set_new(run, "missing_rho", json_string(rho));
            json_object_set(run, "results", res);
            json_object_set(run, "verdict", vj);
            json_array_append_new(runs_j, run);
            if (ri == 0) { /* the reference setting is also the workload's own results and verdict */
                json_object_set(o, "results", res);
                json_object_set(o, "verdict", vj);
            }
            json_decref(res);
            json_decref(vj);
        }
        json_object_set_new(o, "runs", runs_j);
        json_array_append_new(wl, o);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("\n");
    json_t *tot = json_array();
    for (int ri = 0; ri < nrho; ri++) {
        printf("suite: goal met on %d of %d judged workloads (runtimes from %s, missing-rho %s), %.1f s\n", met[ri],
               judged[ri], pred, rhos[ri], secs);
        fprintf(md, "Goal met on %d of %d judged workloads (missing-rho %s).\n", met[ri], judged[ri], rhos[ri]);
        json_t *x = json_object();
        json_object_set_new(x, "missing_rho", json_string(rhos[ri]));
        json_object_set_new(x, "judged", json_integer(judged[ri]));
        json_object_set_new(x, "goal_met", json_integer(met[ri]));
        json_array_append_new(tot, x);
    }
    json_object_set_new(suite, "judged", json_integer(nrho ? judged[0] : 0));
    json_object_set_new(suite, "goal_met", json_integer(nrho ? met[0] : 0));
    json_object_set_new(suite, "by_missing_rho", tot);
    json_object_set_new(suite, "seconds", json_real(secs));
    char jp[1300];
    snprintf(jp, sizeof jp, "%s/suite.json", out);
    if (json_dump_file(suite, jp, JSON_INDENT(1)) || fclose(md)) {
        fprintf(stderr, "deepshare suite: writing %s or suite.md failed\n", jp);
        failed = 1;
    }
    json_decref(suite);
    /* an index page linking every workload's two compare reports */
    snprintf(jp, sizeof jp, "%s/index.html", out);
    FILE *h = fopen(jp, "w");
    if (h) {
        fprintf(h, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>deepshare suite</title></head><body>\n"
                   "<h1>Benchmark suite</h1>\n<p>Runtimes from: %s. Table and verdicts: <a href=\"suite.md\">suite.md</a>, "
                   "<a href=\"suite.json\">suite.json</a>.</p>\n<ul>\n", pred);
        for (int w = 0; w < NWORK; w++)
            if (listed(only, workloads[w].name) && have[w])
            {
                fprintf(h, "<li>%s: <a href=\"%s/partitioned/index.html\">partitioned</a>, "
                           "<a href=\"%s/pooled/index.html\">pooled</a>%s",
                        workloads[w].name, workloads[w].name, workloads[w].name, workloads[w].typed ? "" : "</li>\n");
                if (workloads[w].typed)
                    fprintf(h, ", <a href=\"%s/pooled-fastest/index.html\">pooled type-aware</a>, "
                               "<a href=\"%s/pooled-deepshare-blind/index.html\">DeepShare blind to types</a></li>\n",
                            workloads[w].name, workloads[w].name);
            }
        fprintf(h, "</ul>\n</body></html>\n");
        if (fclose(h)) {
            fprintf(stderr, "deepshare suite: writing %s failed: %s\n", jp, strerror(errno));
            failed = 1;
        }
    } else {
        fprintf(stderr, "deepshare suite: %s: cannot write: %s\n", jp, strerror(errno));
        failed = 1;
    }
    return failed ? 1 : 0;
}
