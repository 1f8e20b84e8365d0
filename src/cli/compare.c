/* compare.c: 'deepshare compare': runs several policies on one workload and writes a report folder (table,
 * summary.csv/json, per-policy CSVs, gnuplot plots, index.html), optionally with DeepShare's sensitivity sweep. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/observed.h"
#include "cli/predictors.h"
#include "cli/runner.h"
#include "deepshare/plot.h"
#include "deepshare/policy.h"
#include "deepshare/report.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: deepshare compare [--trace FILE --vc-config FILE] [--policies LIST] [--jobs N] --out DIR\n"
            "                         [--sweep] [--no-plots] [--quiet] [simulate's workload, cluster and policy\n"
            "                         options]\n"
            "\n"
            "Runs several policies on one workload side by side (the built-in synthetic workload when no --trace\n"
            "is given), prints the comparison table and writes a report folder DIR:\n"
            "  summary.csv, summary.json   one row/object per policy, the numbers of 'simulate --json'\n"
            "  <policy>/                   with --details: jobs.csv, timeseries.csv, qad.csv, tenants.csv,\n"
            "                              events.csv\n"
            "  plots/*.png, plots/*.svg    queueing-delay and JCT CDFs, GPU allocation, SM utilization, idle\n"
            "                              GPUs, preemptions and colocations over time, per-tenant smoothed QAD\n"
            "                              of each policy, and with --sweep the sensitivity curves\n"
            "  data/, plots.gp             the plotted data and the gnuplot script (run 'gnuplot plots.gp' in DIR)\n"
            "  index.html                  the table and every plot, by relative links (readable offline)\n"
            "  sweep.csv                   with --sweep\n"
            "\n"
            "options:\n"
            "  --policies LIST     comma-separated policies, or 'all' (default: all; policies the workload cannot\n"
            "                      feed, such as lucid without nodes to lend its profiler, are then skipped)\n"
            "  --jobs N            run N simulations in parallel threads (1); results are identical to serial\n"
            "  --out DIR           report folder (created if needed; files in it are overwritten)\n"
            "  --sweep             also run the 'deepshare' policy with rho-min in {0.5,0.6,0.7,0.8,0.9},\n"
            "                      alpha in {0.1,0.3,0.5,0.7,0.9} and m in {1,2,4,8}, one at a time\n"
            "  --details           also write each policy's per-job, per-cycle, QAD and tenant CSVs in DIR/<policy>/\n"
            "  --no-plots          do not run gnuplot (data/ and plots.gp are still written)\n"
            "  --quiet             no table on stdout, no progress on stderr\n"
            "  --observed NAME=FILE  also score an observed schedule of the same workload (a live run:\n"
            "                      'deepshare replay-live' writes DIR/observed.csv) and show it as the row NAME,\n"
            "                      after the policies; repeatable. It is scored pooled on the cluster of the\n"
            "                      simulations (--gpus-per-node, --pool-nodes), with their --cycle and --window\n"
            "\n"
            "Workload (--trace, --vc-config, --estimates, --coloc, --predictor, --seed, --synth-*), cluster (--mode, --k,\n"
            "--gpus-per-node, --cpus-per-node, --pool-nodes, --no-cpu-check, --ckpt-default, --grace, --grace-save, --restart-pinned, --requeue-settle, --cycle,\n"
            "--window, --check-invariants) and policy\n"
            "parameters (--NAME VALUE, --config FILE) are those of 'deepshare simulate --help'.\n"
            "\n"
            "Plots are drawn by gnuplot (Debian package gnuplot-nox), found in PATH or named by the environment\n"
            "variable DS_GNUPLOT. Without it the table, CSV, JSON and index.html are still written and the\n"
            "command exits with status 3.\n"
            "\n"
            "exit status: 0 success; 1 a run or a write failed; 2 bad usage; 3 written without plots.\n");
}

/* --sweep: the values of the DeepShare issue's sensitivity study. */
static const struct {
    const char *param;
    double values[5];
    int n;
} sweeps[] = {
    {"rho-min", {0.5, 0.6, 0.7, 0.8, 0.9}, 5},
    {"alpha", {0.1, 0.3, 0.5, 0.7, 0.9}, 5},
    {"m", {1, 2, 4, 8}, 4},
};

typedef struct pool {
    const ds_trace_t *trace;
    const ds_sim_config_t *sc;
    ds_run_t *runs;
    char (*label)[128];
    char (*errmsg)[1200];
    int n, next, done, quiet;
    struct timespec t0;
    pthread_mutex_t mu;
} pool_t;

static double since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void *worker(void *arg)
{
    pool_t *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        int i = p->next < p->n ? p->next++ : -1;
        if (i >= 0 && !p->quiet) fprintf(stderr, "compare: [%d/%d] %s: running\n", i + 1, p->n, p->label[i]);
        pthread_mutex_unlock(&p->mu);
        if (i < 0) return NULL;
        ds_error_t err;
        ds_error_clear(&err);
        if (ds_run_one(p->trace, p->sc, &p->runs[i], &err)) ds_error_format(&err, p->errmsg[i], sizeof p->errmsg[i]);
        pthread_mutex_lock(&p->mu);
        p->done++;
        if (!p->quiet) {
            if (p->runs[i].ok)
                fprintf(stderr, "compare: [%d/%d] %s: done in %.1f s (%d of %d finished, %.1f s elapsed)\n", i + 1,
                        p->n, p->label[i], p->runs[i].res.wall_seconds, p->done, p->n, since(&p->t0));
            else
                fprintf(stderr, "compare: [%d/%d] %s: failed\n", i + 1, p->n, p->label[i]);
        }
        pthread_mutex_unlock(&p->mu);
    }
}

/* Runs every run with nthreads threads; per-run error messages land in errmsg. */
static void run_all(pool_t *p, int nthreads)
{
    clock_gettime(CLOCK_MONOTONIC, &p->t0);
    pthread_mutex_init(&p->mu, NULL);
    if (nthreads > p->n) nthreads = p->n;
    if (nthreads <= 1) {
        worker(p);
    } else {
        pthread_t *th = ds_xcalloc((size_t)nthreads, sizeof *th);
        int started = 0;
        for (; started < nthreads; started++)
            if (pthread_create(&th[started], NULL, worker, p)) break;
        if (!started) worker(p); /* no thread could start: do the work here */
        for (int k = 0; k < started; k++) pthread_join(th[k], NULL);
        free(th);
    }
    pthread_mutex_destroy(&p->mu);
}

static int write_file_json(const char *path, const ds_sim_result_t *const *ok, const ds_report_meta_t *meta, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "deepshare: %s: cannot write: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = ds_report_json_many(f, ok, meta, n);
    if (fclose(f) || rc) {
        fprintf(stderr, "deepshare: %s: write failed\n", path);
        return -1;
    }
    return 0;
}

static int write_file_csv(const char *path, const ds_sim_result_t *const *ok, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "deepshare: %s: cannot write: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = ds_report_summary_csv(f, ok, n);
    if (fclose(f) || rc) {
        fprintf(stderr, "deepshare: %s: write failed\n", path);
        return -1;
    }
    return 0;
}

static int write_sweep_csv(const char *path, const ds_sweep_point_t *pts, int n)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "deepshare: %s: cannot write: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = ds_sweep_csv(f, pts, n);
    if (fclose(f) || rc) {
        fprintf(stderr, "deepshare: %s: write failed\n", path);
        return -1;
    }
    return 0;
}

static int write_html(const char *path, const ds_plot_input_t *in, const ds_plot_list_t *plots, int plots_ok,
                      const char *note)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "deepshare: %s: cannot write: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = ds_report_html(f, in, plots, plots_ok, note);
    if (fclose(f) || rc) {
        fprintf(stderr, "deepshare: %s: write failed\n", path);
        return -1;
    }
    return 0;
}

/* Writes the report folder; returns the exit status contribution (0, 1 or 3). */
static int write_report(const char *out, const ds_trace_t *trace, const ds_sim_result_t *const *ok,
                        const ds_report_meta_t *meta, int nok, const ds_sweep_point_t *pts, int npts, int plots,
                        int details, int quiet)
{
    char path[1200];
    int rc = 0;
    snprintf(path, sizeof path, "%s/summary.json", out);
    if (write_file_json(path, ok, meta, nok)) rc = 1;
    snprintf(path, sizeof path, "%s/summary.csv", out);
    if (write_file_csv(path, ok, nok)) rc = 1;
    for (int i = 0; i < nok && details; i++) {
        ds_error_t err;
        ds_error_clear(&err);
        snprintf(path, sizeof path, "%s/%s", out, ok[i]->policy);
        if (ds_report_write_csv(path, trace, ok[i], &err)) ds_die_error(&err), rc = 1;
    }
    if (npts) {
        snprintf(path, sizeof path, "%s/sweep.csv", out);
        if (write_sweep_csv(path, pts, npts)) rc = 1;
    }
    ds_plot_input_t in = {trace, ok, nok, pts, npts};
    ds_plot_list_t list;
    ds_error_t err;
    ds_error_clear(&err);
    int plots_ok = 0;
    char note[1400] = "";
    if (ds_plot_write(out, &in, &list, &err)) {
        ds_die_error(&err);
        snprintf(note, sizeof note, "The plot data could not be written, so there are no plots.");
        memset(&list, 0, sizeof list);
        rc = 1;
    } else if (!plots) {
        snprintf(note, sizeof note, "Plots were not rendered (--no-plots). Run 'gnuplot plots.gp' in this folder.");
    } else {
        char gp[1024], why[1200];
        if (ds_plot_find_gnuplot(gp, sizeof gp)) {
            const char *env = getenv("DS_GNUPLOT");
            snprintf(note, sizeof note,
                     "gnuplot was not found (%s%s%s), so the plots were not rendered; install the Debian package "
                     "gnuplot-nox (scripts/deps.sh) and run 'gnuplot plots.gp' in this folder, or rerun compare.",
                     env ? "DS_GNUPLOT=" : "looked for 'gnuplot' in PATH", env ? env : "", env && !*env ? "(empty)" : "");
            fprintf(stderr, "deepshare compare: %s\n", note);
            fprintf(stderr, "deepshare compare: the table, summary.csv, summary.json and index.html are written to %s\n",
                    out);
            if (!rc) rc = 3;
        } else {
            struct timespec t0;
            clock_gettime(CLOCK_MONOTONIC, &t0);
            if (!quiet) fprintf(stderr, "compare: rendering %d plots (PNG and SVG) with %s\n", list.n, gp);
            if (ds_plot_render(gp, out, why, sizeof why)) {
                snprintf(note, sizeof note, "Rendering the plots failed: %s.", why);
                fprintf(stderr, "deepshare compare: %s\n", note);
                rc = 1;
            } else {
                plots_ok = 1;
                if (!quiet) fprintf(stderr, "compare: plots done in %.1f s\n", since(&t0));
            }
        }
    }
    snprintf(path, sizeof path, "%s/index.html", out);
    if (write_html(path, &in, &list, plots_ok, note)) rc = 1;
    ds_plot_list_free(&list);
    return rc;
}

int ds_cmd_compare(int argc, char **argv)
{
    ds_workload_opts_t wo;
    ds_workload_opts_default(&wo);
    ds_sim_config_t sc;
    ds_sim_config_default(&sc);
    const char *policies = "all", *out = NULL, *config_file = NULL;
    int64_t jobs = 1;
    int sweep = 0, plots = 1, details = 0, quiet = 0, rc = 2, np = 0, nruns = 0, ncmp = 0, nobs = 0;
    const char **obs = ds_xcalloc((size_t)argc + 1, sizeof *obs);
    ds_sim_result_t *obs_res = NULL;
    const char **pkeys = ds_xcalloc((size_t)argc + 1, sizeof *pkeys), **pvals = ds_xcalloc((size_t)argc + 1, sizeof *pvals);
    ds_run_t *runs = NULL;
    char(*label)[128] = NULL;
    char(*errmsg)[1200] = NULL;
    ds_sweep_point_t *pts = NULL;
    int npts = 0;
    ds_cli_predictors_t pred;
    ds_cli_predictors_default(&pred);
    for (int i = 1; i < argc; i++) {
        char name[128];
        const char *val;
        int k = ds_cli_split("compare", argv[i], name, sizeof name, &val);
        if (k == 0) { help(stdout); rc = 0; goto done; }
        if (k < 0) goto done;
        if (ds_run_flag(&sc, name)) continue;
        if (!strcmp(name, "sweep")) { sweep = 1; continue; }
        if (!strcmp(name, "no-plots")) { plots = 0; continue; }
        if (!strcmp(name, "details")) { details = 1; continue; }
        if (!strcmp(name, "quiet")) { quiet = 1; continue; }
        if (ds_cli_value("compare", argc, argv, &i, name, &val)) goto done;
        int w = ds_cli_common_opt("compare", &wo, &sc, &pred, name, val);
        if (w < 0) goto done;
        if (w > 0) continue;
        if (!strcmp(name, "policies") || !strcmp(name, "policy")) policies = val;
        else if (!strcmp(name, "out")) out = val;
        else if (!strcmp(name, "config")) config_file = val;
        else if (!strcmp(name, "observed")) {
            const char *eq = strchr(val, '=');
            if (!eq || eq == val || !eq[1] || eq - val > 31) {
                fprintf(stderr, "deepshare compare: option --observed: expected NAME=FILE (NAME up to 31 characters), "
                                "got '%s'\n", val);
                goto done;
            }
            obs[nobs++] = val;
        } else if (!strcmp(name, "jobs")) {
            if (ds_parse_i64("--jobs", val, 1, 256, &jobs)) goto done;
        } else {
            pkeys[np] = strdup(name);
            pvals[np++] = val;
        }
    }
    if (!out) {
        fprintf(stderr, "deepshare compare: --out DIR is required (the report folder; see --help)\n");
        goto done;
    }
    const ds_policy_ops_t *dsp = NULL;
    if (sweep && !(dsp = ds_policy_find("deepshare"))) {
        fprintf(stderr, "deepshare compare: --sweep varies the parameters of the 'deepshare' policy, which this build "
                        "does not have (policies:");
        for (const ds_policy_ops_t *const *q = ds_policy_list(); *q; q++) fprintf(stderr, " %s", (*q)->name);
        fprintf(stderr, ")\n");
        goto done;
    }
    if (ds_runs_pick(policies, "--policies", &runs, &nruns)) goto done;
    for (int i = 0; i < nruns; i++)
        for (int k = 0; k < i; k++)
            if (runs[i].ops == runs[k].ops) {
                fprintf(stderr, "deepshare compare: option --policies: '%s' is listed twice\n", runs[i].ops->name);
                goto done;
            }
    ncmp = nruns;
    /* Sweep runs follow the compared ones in the same array, so parameters reach both alike. */
    if (sweep) {
        for (size_t s = 0; s < sizeof sweeps / sizeof sweeps[0]; s++)
            for (int v = 0; v < sweeps[s].n; v++) {
                runs = ds_xrealloc(runs, (size_t)(nruns + 1) * sizeof *runs);
                memset(&runs[nruns], 0, sizeof *runs);
                runs[nruns].ops = dsp;
                if (dsp->config_new) runs[nruns].config = dsp->config_new();
                nruns++;
            }
    }
    for (int k = 0; k < np; k++) {
        int r = ds_runs_set_param(runs, nruns, pkeys[k], pvals[k], NULL);
        if (r < 0) goto done;
        if (r > 0) {
            fprintf(stderr, "deepshare compare: unknown option --%s (see --help)\n", pkeys[k]);
            goto done;
        }
    }
    if (config_file && ds_runs_read_config(runs, nruns, config_file)) goto done;
    label = ds_xcalloc((size_t)nruns, sizeof *label);
    errmsg = ds_xcalloc((size_t)nruns, sizeof *errmsg);
    for (int i = 0; i < ncmp; i++) snprintf(label[i], sizeof label[i], "%s", runs[i].ops->name);
    if (sweep) {
        /* alpha + beta may not exceed 1: where a swept alpha would, beta gives way (and the point says so) */
        double beta = 0.3;
        for (int k = 0; k < np; k++)
            if (!strcmp(pkeys[k], "beta")) beta = strtod(pvals[k], NULL);
        pts = ds_xcalloc((size_t)(nruns - ncmp), sizeof *pts);
        int i = ncmp;
        for (size_t s = 0; s < sizeof sweeps / sizeof sweeps[0]; s++)
            for (int v = 0; v < sweeps[s].n; v++, i++) {
                char val[32];
                snprintf(val, sizeof val, "%g", sweeps[s].values[v]);
                ds_error_t err;
                ds_error_clear(&err);
                int r = dsp->config_set ? dsp->config_set(runs[i].config, sweeps[s].param, val, &err) : DS_ENOTFOUND;
                if (r == DS_ENOTFOUND) {
                    fprintf(stderr, "deepshare compare: --sweep: the deepshare policy has no parameter '%s'\n",
                            sweeps[s].param);
                    goto done;
                }
                if (r) {
                    ds_die_error(&err);
                    goto done;
                }
                if (!strcmp(sweeps[s].param, "alpha") && sweeps[s].values[v] + beta > 1.0 + 1e-12) {
                    char b[32];
                    snprintf(b, sizeof b, "%g", 1.0 - sweeps[s].values[v]);
                    if (dsp->config_set(runs[i].config, "beta", b, &err) == DS_OK)
                        snprintf(pts[npts].note, sizeof pts[npts].note, "beta=%s", b);
                }
                snprintf(label[i], sizeof label[i], "deepshare %s=%s%s%s", sweeps[s].param, val,
                         pts[npts].note[0] ? " " : "", pts[npts].note);
                snprintf(pts[npts].param, sizeof pts[npts].param, "%s", sweeps[s].param);
                pts[npts++].value = sweeps[s].values[v];
            }
    }
    struct stat ost;
    if ((mkdir(out, 0777) && errno != EEXIST) || stat(out, &ost) || !S_ISDIR(ost.st_mode)) {
        fprintf(stderr, "deepshare: %s: cannot create directory: %s\n", out,
                errno == EEXIST ? "a file of that name exists" : strerror(errno));
        rc = 1;
        goto done;
    }

    ds_trace_t trace;
    ds_coloc_t coloc;
    ds_speeds_t speeds;
    memset(&speeds, 0, sizeof speeds);
    wo.speeds = &speeds;
    int have_coloc = 0;
    ds_error_t err;
    ds_error_clear(&err);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (ds_workload_open(&wo, &trace, &coloc, &have_coloc)) {
        ds_speeds_free(&speeds);
        rc = 1;
        goto done;
    }
    if (!quiet)
        fprintf(stderr, "compare: loaded %s (%d jobs, %d tenants) in %.1f s; %d runs on %d thread%s\n", trace.source,
                trace.njobs, trace.ntenants, since(&t0), nruns, (int)(jobs < nruns ? jobs : nruns),
                (jobs < nruns ? jobs : nruns) == 1 ? "" : "s");
    sc.coloc = have_coloc ? &coloc : NULL;
    sc.speeds = speeds.nrows ? &speeds : NULL;
    pred.speeds = sc.speeds;
    sc.seed = wo.synth.seed;
    sc.keep_events = details; /* <policy>/events.csv */
    /* the runs side by side, before any allocates its cluster and series */
    if (ds_fits_run(&trace, &sc, (int)(jobs < nruns ? jobs : nruns), &err) ||
        ds_cli_predictors_setup(&pred, &trace, sc.coloc, ds_runs_use_predictors(runs, nruns) || sweep, &err)) {
        ds_die_error(&err);
        if (have_coloc) ds_coloc_free(&coloc);
        ds_speeds_free(&speeds);
        ds_trace_free(&trace);
        rc = 1;
        goto done;
    }
    sc.engine.predictors = &pred.set;
    pool_t pool = {.trace = &trace, .sc = &sc, .runs = runs, .label = label, .errmsg = errmsg, .n = nruns,
                   .quiet = quiet};
    run_all(&pool, (int)jobs);

    int failed = 0, nok = 0;
    const ds_sim_result_t **ok = ds_xcalloc((size_t)nruns + (size_t)nobs + 1, sizeof *ok);
    ds_report_meta_t *meta = ds_xcalloc((size_t)nruns + (size_t)nobs + 1, sizeof *meta);
    char (*est)[600] = ds_xcalloc((size_t)nruns + 1, sizeof *est);
    for (int i = 0; i < nruns; i++) {
        if (runs[i].ok) continue;
        fprintf(stderr, "deepshare: %s: %s\n", label[i], errmsg[i]);
        /* 'all' skips policies the workload cannot feed (e.g. no estimates); named ones fail */
        if (i < ncmp && !strcmp(policies, "all")) fprintf(stderr, "deepshare compare: skipping %s\n", label[i]);
        else failed = 1;
    }
    for (int i = 0; i < ncmp; i++)
        if (runs[i].ok) {
            meta[nok].trace = trace.source;
            meta[nok].predictor = (runs[i].ops->props & DS_POLICY_USES_PREDICTORS) ? pred.kind : NULL;
            meta[nok].estimates =
                ds_run_estimates(runs[i].ops, &trace, pred.kind, wo.estimates, est[nok], sizeof est[nok]);
            ok[nok++] = &runs[i].res;
        }
    /* observed schedules (live runs) of the same workload, scored by the same metric code */
    obs_res = ds_xcalloc((size_t)nobs + 1, sizeof *obs_res);
    for (int i = 0; i < nobs; i++) {
        const char *eq = strchr(obs[i], '=');
        char lab[32];
        snprintf(lab, sizeof lab, "%.*s", (int)(eq - obs[i]), obs[i]);
        ds_observed_t ob;
        ds_error_clear(&err);
        if (ds_observed_read(&ob, &trace, eq + 1, &err) || ds_observed_score(&ob, &sc, lab, &obs_res[i], &err)) {
            ds_die_error(&err);
            failed = 1;
            if (ob.trace.njobs || ob.spells) ds_observed_free(&ob);
            continue;
        }
        if (ob.dropped && !quiet)
            fprintf(stderr, "compare: %s: %d of %d jobs did not complete in the observed run and are left out\n", lab,
                    ob.dropped, trace.njobs);
        ds_observed_free(&ob);
        meta[nok].trace = eq + 1;
        ok[nok++] = &obs_res[i];
    }
    for (int i = ncmp, k = 0; i < nruns; i++, k++)
        if (runs[i].ok) ds_sweep_point_fill(&pts[k], &trace, &runs[i].res);
    if (!nok && !npts) {
        fprintf(stderr, "deepshare compare: no run succeeded; nothing to report\n");
        rc = 1;
    } else {
        if (!quiet && nok) {
            printf("workload: %s, %d jobs, %d tenants\n", trace.source, trace.njobs, trace.ntenants);
            ds_report_table(stdout, ok, nok);
            fflush(stdout);
        }
        rc = write_report(out, &trace, ok, meta, nok, pts, npts, plots, details, quiet);
        if (failed && rc != 1) rc = 1;
        if (!quiet) fprintf(stderr, "compare: report in %s/index.html (%.1f s in all)\n", out, since(&t0));
    }
    free(ok);
    free(meta);
    free(est);
    ds_cli_predictors_free(&pred);
    if (have_coloc) ds_coloc_free(&coloc);
    ds_speeds_free(&speeds);
    ds_trace_free(&trace);
done:
    for (int i = 0; obs_res && i < nobs; i++) ds_sim_result_free(&obs_res[i]);
    free(obs_res);
    free(obs);
    ds_runs_free(runs, nruns);
    free(label);
    free(errmsg);
    free(pts);
    for (int k = 0; k < np; k++) free((void *)pkeys[k]);
    free(pkeys);
    free(pvals);
    return rc;
}
