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
    int typed;             /* several GPU types: also the type-aware baselines and DeepShare type-blind */
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
            "\n"
            "Runs the benchmark suite: each workload under every policy, partitioned and pooled, as one\n"
            "'deepshare compare' report per workload and mode (DIR/<workload>/<mode>/, with plots and\n"
            "index.html), then prints one table and DeepShare's verdict per workload, and writes\n"
            "DIR/suite.json, DIR/suite.md and DIR/index.html.\n"
            "\n"
            "workloads:\n");
    for (int w = 0; w < NWORK; w++) fprintf(f, "  %-16s %s\n", workloads[w].name, workloads[w].what);
    fprintf(f,
            "\n"
            "The goal on every workload: DeepShare's (pooled) average queueing delay at most the best pooled\n"
            "baseline's, its p99 at most 1.5x the lowest pooled baseline p99, and its QAD compliance at least\n"
            "max(0.95, the best baseline's) where some policy attains 0.95 (else the best baseline's).\n"
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
            "  --policies LIST     policies to run (default all)\n"
            "  --jobs N            simulations in parallel threads per report (1)\n"
            "  --no-plots          do not render plots (gnuplot)\n"
            "  --check-invariants  check the engine and policy invariants after every scheduling pass\n"
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
static int read_summary(const char *path, ds_vrow_t *rows, int max, json_t **keep, const char *rename)
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
        /* a variant's rows (type-aware first fit, DeepShare type-blind) carry its name, "+fastest" appended or
         * the name given */
        char name[sizeof r->policy];
        if (rename && rename[0] == '+') snprintf(name, sizeof name, "%s%s", pol ? pol : "?", rename);
        else snprintf(name, sizeof name, "%s", rename ? rename : pol ? pol : "?");
        if (rename) json_object_set_new(o, "policy", json_string(name));
        snprintf(r->policy, sizeof r->policy, "%s", name);
        const char *mode = json_string_value(json_object_get(o, "mode"));
        r->pooled = mode && !strcmp(mode, "pooled");
        r->avg_queue = json_number_value(json_object_get(o, "avg_queue"));
        r->p99_queue = json_number_value(json_object_get(o, "p99_queue"));
        r->compliance = json_number_value(json_object_get(o, "qad_compliance"));
        r->avg_jct = json_number_value(json_object_get(o, "avg_jct"));
    }
    *keep = a;
    return n;
}

static const char *source_of(const char *policy, const char *pred)
{
    size_t n = strcspn(policy, "+");
    if (!strncmp(policy, "deepshare", 9)) return pred;
    if (n == 3 && !strncmp(policy, "sjf", 3)) return "oracle";
    if ((n == 4 && !strncmp(policy, "qssf", 4)) || (n == 5 && !strncmp(policy, "lucid", 5))) return pred;
    return "-";
}

/* The policies of a --policies list that run on several GPU types (with_ds 0: other than deepshare, the
 * baselines run again type-aware). */
static void typed_policies(const char *policies, int with_ds, char *out, size_t n)
{
    size_t k = 0;
    out[0] = '\0';
    for (const ds_policy_ops_t *const *p = ds_policy_list(); *p; p++) {
        if (!((*p)->props & DS_POLICY_TYPED) || (!with_ds && !strcmp((*p)->name, "deepshare")) ||
            !strcmp((*p)->name, "replay"))
            continue;
        if (strcmp(policies, "all") && !listed(policies, (*p)->name)) continue;
        int w = snprintf(out + k, n - k, "%s%s", k ? "," : "", (*p)->name);
        if (w < 0 || (size_t)w >= n - k) break;
        k += (size_t)w;
    }
}

int ds_cmd_suite(int argc, char **argv)
{
    const char *out = "suite-out", *pred = "model", *data = getenv("DS_DATA_DIR"), *only = NULL, *policies = "all";
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
        else if (!strcmp(name, "jobs")) {
            if (ds_parse_i64("--jobs", val, 1, 256, &jobs)) return 2;
        } else {
            fprintf(stderr, "deepshare suite: unknown option --%s (see --help)\n", name);
            return 2;
        }
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
    char venus[1200], vc[1200], coloc[1200], est[1200];
    snprintf(venus, sizeof venus, "%s/venus/venus_sept_jobs.csv", data);
    snprintf(vc, sizeof vc, "%s/venus/vc_config.csv", data);
    snprintf(coloc, sizeof coloc, "%s/colocation/colocate_info.csv", data);
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
    int failed = 0, judged = 0, met = 0;
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
        ds_vrow_t rows[96];
        int nrows = 0, njudged = 0;
        json_t *keep[4] = {NULL, NULL, NULL, NULL};
        /* runs: partitioned, pooled; on several GPU types also the baselines type-aware (fastest free type first,
         * pooled: judged like the others) and DeepShare blind to types (pooled: the cost of ignoring types, not
         * judged) */
        static const char *const run_dir[4] = {"partitioned", "pooled", "pooled-fastest", "pooled-deepshare-blind"};
        char typed_list[512], typed_all[512];
        typed_policies(policies, 0, typed_list, sizeof typed_list);
        /* a listed policy that does not run on several types is left out (compare skips them from 'all') */
        typed_policies(policies, 1, typed_all, sizeof typed_all);
        const char *run_pol = W->typed && strcmp(policies, "all") ? typed_all : policies;
        int have_dsp = !strcmp(policies, "all") || listed(policies, "deepshare");
        for (int run = 0; run < (W->typed ? 4 : 2); run++) {
            int pooled = run > 0;
            if (run == 2 && !typed_list[0]) continue;
            if (run == 3 && !have_dsp) continue;
            if (run == 3) njudged = nrows;
            char odir[1400], scale[32], window[64];
            snprintf(odir, sizeof odir, "%s/%s", wdir, run_dir[run]);
            const char *av[56];
            int ac = 0;
            av[ac++] = "compare";
            av[ac++] = "--out", av[ac++] = odir;
            if (run < 2 && !run_pol[0]) continue;
            av[ac++] = "--policies", av[ac++] = run == 2 ? typed_list : run == 3 ? "deepshare" : run_pol;
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
            if (W->arrival_scale != 1.0) {
                snprintf(scale, sizeof scale, "%g", W->arrival_scale);
                av[ac++] = "--arrival-scale", av[ac++] = scale;
            }
            for (int k = 0; W->synth[k]; k++) av[ac++] = W->synth[k];
            /* parity: with model or oracle nobody reads the generator's noisy estimates */
            if (strcmp(pred, "file") && W->src != W_VENUS) av[ac++] = "--trace-estimates", av[ac++] = "drop";
            av[ac] = NULL;
            if (!quiet) fprintf(stderr, "suite: %s, %s\n", W->name, run_dir[run]);
            int rc = ds_cmd_compare(ac, (char **)av);
            if (rc != 0 && rc != 3) {
                fprintf(stderr, "deepshare suite: %s %s: compare exited with status %d\n", W->name, run_dir[run], rc);
                failed = 1;
            }
            char sp[1500];
            snprintf(sp, sizeof sp, "%s/summary.json", odir);
            const char *rename = run == 2 ? "+fastest" : run == 3 ? "deepshare-blind" : NULL;
            int n = file_exists(sp) ? read_summary(sp, rows + nrows, 96 - nrows, &keep[run], rename) : -1;
            if (n < 0) { failed = 1; continue; }
            nrows += n;
        }
        if (!W->typed || !have_dsp) njudged = nrows;
        ds_verdict_t v;
        ds_verdict_judge(rows, njudged, 0.95, &v);
        int judged_here = v.have_ds && v.have_pooled_base;
        judged += judged_here;
        met += judged_here && v.ok;
        printf("\n== %s: %s\n", W->name, W->what);
        int pw = 10; /* the policy column: variants' names are longer */
        for (int i = 0; i < nrows; i++) pw = DS_MAX(pw, (int)strlen(rows[i].policy));
        printf("%-*s %-12s %-7s %10s %10s %10s %7s\n", pw, "policy", "mode", "source", "avg_queue", "p99_queue", "avg_jct",
               "qad_ok");
        fprintf(md, "## %s\n\n%s.\n\n| policy | mode | runtimes from | avg queue (s) | p99 queue (s) | avg JCT (s) | QAD compliance |\n"
                    "| --- | --- | --- | ---: | ---: | ---: | ---: |\n", W->name, W->what);
        for (int i = 0; i < nrows; i++) {
            const ds_vrow_t *r = &rows[i];
            const char *src = source_of(r->policy, pred);
            printf("%-*s %-12s %-7s %10.0f %10.0f %10.0f %7.3f\n", pw, r->policy, r->pooled ? "pooled" : "partitioned",
                   src, r->avg_queue, r->p99_queue, r->avg_jct, r->compliance);
            fprintf(md, "| %s | %s | %s | %.0f | %.0f | %.0f | %.3f |\n", r->policy, r->pooled ? "pooled" : "partitioned",
                    src, r->avg_queue, r->p99_queue, r->avg_jct, r->compliance);
        }
        if (W->typed) {
            char skipped[512] = "";
            size_t k = 0;
            for (const ds_policy_ops_t *const *q = ds_policy_list(); *q; q++)
                if (!((*q)->props & DS_POLICY_TYPED) && (!strcmp(policies, "all") || listed(policies, (*q)->name))) {
                    int wr = snprintf(skipped + k, sizeof skipped - k, "%s%s", k ? ", " : "", (*q)->name);
                    if (wr < 0 || (size_t)wr >= sizeof skipped - k) break;
                    k += (size_t)wr;
                }
            const char *note = "rows NAME+fastest: the baseline type-aware (fastest free type first, --type-placement "
                               "fastest), judged like the others; deepshare-blind: DeepShare blind to GPU types "
                               "(--type-quota blind --type-choice blind), shown for the cost of ignoring types, not judged";
            printf("%s\n", note);
            fprintf(md, "\n%s.\n", note);
            if (k) {
                printf("not run on several GPU types (no model of their type rules): %s\n", skipped);
                fprintf(md, "Not run on several GPU types (no model of their type rules): %s.\n", skipped);
            }
        }
        ds_verdict_print(stdout, &v);
        fprintf(md, "\n");
        ds_verdict_print(md, &v);
        fprintf(md, "\n");
        fflush(stdout);
        json_t *o = json_object();
        json_object_set_new(o, "name", json_string(W->name));
        json_object_set_new(o, "description", json_string(W->what));
        json_t *res = json_array();
        for (int k = 0; k < 4; k++)
            if (keep[k]) json_array_extend(res, keep[k]), json_decref(keep[k]);
        json_object_set_new(o, "results", res);
        json_t *vj = json_object();
        json_object_set_new(vj, "judged", json_boolean(judged_here));
        if (judged_here) {
            json_object_set_new(vj, "goal_met", json_boolean(v.ok));
            json_object_set_new(vj, "queue_ok", json_boolean(v.queue_ok));
            json_object_set_new(vj, "p99_ok", json_boolean(v.p99_ok));
            json_object_set_new(vj, "compliance_ok", json_boolean(v.compliance_ok));
            json_object_set_new(vj, "deepshare_avg_queue", json_real(v.ds.avg_queue));
            json_object_set_new(vj, "deepshare_p99_queue", json_real(v.ds.p99_queue));
            json_object_set_new(vj, "deepshare_compliance", json_real(v.ds.compliance));
            json_object_set_new(vj, "best_pooled_baseline", json_string(v.best_pooled.policy));
            json_object_set_new(vj, "best_pooled_avg_queue", json_real(v.best_pooled.avg_queue));
            json_object_set_new(vj, "lowest_pooled_p99_queue", json_real(v.min_pooled_p99));
            if (v.have_part_base) {
                json_object_set_new(vj, "best_partitioned_baseline", json_string(v.best_part.policy));
                json_object_set_new(vj, "best_partitioned_avg_queue", json_real(v.best_part.avg_queue));
            }
            json_object_set_new(vj, "best_baseline_compliance", json_real(v.best_compliance));
            json_object_set_new(vj, "compliance_target", json_real(v.compliance_target));
            json_object_set_new(vj, "theta_attained", json_boolean(v.theta_attained));
        }
        json_object_set_new(o, "verdict", vj);
        json_array_append_new(wl, o);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    printf("\nsuite: goal met on %d of %d judged workloads (runtimes from %s), %.1f s\n", met, judged, pred, secs);
    fprintf(md, "Goal met on %d of %d judged workloads.\n", met, judged);
    json_object_set_new(suite, "judged", json_integer(judged));
    json_object_set_new(suite, "goal_met", json_integer(met));
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
                fprintf(h, "<li>%s: <a href=\"%s/partitioned/index.html\">partitioned</a>, "
                           "<a href=\"%s/pooled/index.html\">pooled</a></li>\n",
                        workloads[w].name, workloads[w].name, workloads[w].name);
        fprintf(h, "</ul>\n</body></html>\n");
        if (fclose(h)) failed = 1;
    } else {
        failed = 1;
    }
    return failed ? 1 : 0;
}
