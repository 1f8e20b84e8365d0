/* test_compare.c: 'deepshare compare' as a user runs it (binary from DS_BIN): the report folder's files exist
 * and parse, its numbers equal 'simulate --json', parallel runs equal serial ones, and without gnuplot the
 * command says so while still writing the table, CSV and JSON. */
#include "testutil.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "deepshare/plot.h"
#include "deepshare/policy.h"

#define SMALL "--synth-jobs 300 --synth-nodes 4 --synth-tenants 3 --seed 7"

static char tmpdir[512];

static const char *bin(void) { return getenv("DS_BIN"); }


/* Runs "[env] deepshare ARGS" with stdout and stderr captured; returns the exit status. */
static int run_env(const char *env, const char *args, char **out, char **err)
{
    char cmd[8192], o[600], e[600];
    snprintf(o, sizeof o, "%s/stdout", tmpdir);
    snprintf(e, sizeof e, "%s/stderr", tmpdir);
    snprintf(cmd, sizeof cmd, "%s '%s' %s >'%s' 2>'%s'", env ? env : "", bin(), args, o, e);
    int st = system(cmd);
    assert_true(st != -1 && WIFEXITED(st));
    if (out) *out = tu_slurp(o, NULL);
    if (err) *err = tu_slurp(e, NULL);
    return WEXITSTATUS(st);
}

static int run(const char *args, char **out, char **err) { return run_env(NULL, args, out, err); }

/* Runs "deepshare FMT..." (formatted) and asserts it succeeded. */
static void run_ok(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void run_ok(const char *fmt, ...)
{
    char args[6000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    assert_int_equal(run(args, NULL, NULL), 0);
}

static const char *path_in(const char *dir, const char *name)
{
    static char buf[4][1024];
    static int slot;
    char *p = buf[slot++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s/%s", tmpdir, dir, name);
    return p;
}

static int exists(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && st.st_size > 0;
}

static int have_gnuplot(void)
{
    char p[1024];
    return ds_plot_find_gnuplot(p, sizeof p) == 0;
}

static int setup(void **st)
{
    (void)st;
    tu_make_dir("ds_compare", tmpdir, sizeof tmpdir);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    return tu_remove_dir(tmpdir);
}

static int count_lines(const char *text)
{
    int n = 0;
    for (const char *c = text; *c; c++) n += *c == '\n';
    return n;
}

static json_t *load_json(const char *path)
{
    json_error_t je;
    json_t *j = json_load_file(path, 0, &je);
    if (!j) fprintf(stderr, "%s:%d: %s\n", path, je.line, je.text);
    assert_non_null(j);
    return j;
}

/* Every policy's object in a equals the one of the same policy in b, key for key. */
static void assert_same_summaries(json_t *a, json_t *b)
{
    assert_true(json_is_array(a) && json_is_array(b));
    assert_int_equal(json_array_size(a), json_array_size(b));
    for (size_t i = 0; i < json_array_size(a); i++) {
        json_t *x = json_array_get(a, i), *y = json_array_get(b, i);
        assert_string_equal(json_string_value(json_object_get(x, "policy")),
                            json_string_value(json_object_get(y, "policy")));
        if (!json_equal(x, y)) {
            char *sx = json_dumps(x, JSON_COMPACT), *sy = json_dumps(y, JSON_COMPACT);
            fprintf(stderr, "differ:\n%s\n%s\n", sx, sy);
            free(sx);
            free(sy);
        }
        assert_true(json_equal(x, y));
    }
}

static void check_png(const char *p)
{
    size_t n = 0;
    char *b = tu_slurp(p, &n);
    if (!b) fprintf(stderr, "missing %s\n", p);
    assert_non_null(b);
    assert_true(n > 1000);
    assert_memory_equal(b, "\x89PNG\r\n\x1a\n", 8);
    free(b);
}

static void check_svg(const char *p)
{
    char *b = tu_slurp(p, NULL);
    if (!b) fprintf(stderr, "missing %s\n", p);
    assert_non_null(b);
    assert_true(!strncmp(b, "<?xml", 5) || !strncmp(b, "<svg", 4));
    assert_non_null(strstr(b, "</svg>"));
    free(b);
}

/* The report folder: table on stdout, CSV and JSON agree, every plot exists in both formats and index.html
 * shows each of them by a relative link. */
static void test_report_files(void **st)
{
    (void)st;
    if (!have_gnuplot()) skip();
    char args[2048], *out, *err;
    snprintf(args, sizeof args, "compare " SMALL " --jobs 2 --out '%s/r'", tmpdir);
    int rc = run(args, &out, &err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "avg_queue"));
    assert_non_null(strstr(err, "compare: ")); /* progress */

    json_t *sum = load_json(path_in("r", "summary.json"));
    size_t np = json_array_size(sum);
    assert_true(np >= 4);
    char *csv = tu_slurp(path_in("r", "summary.csv"), NULL);
    assert_non_null(csv);
    assert_int_equal(count_lines(csv), (int)np + 1);
    assert_true(!strncmp(csv, "policy,mode,jobs,avg_jct", 24));
    for (size_t i = 0; i < np; i++) {
        const char *pol = json_string_value(json_object_get(json_array_get(sum, i), "policy"));
        char row[128];
        snprintf(row, sizeof row, "\n%s,", pol);
        assert_non_null(strstr(csv, row));
        assert_non_null(strstr(out, pol));
    }

    char *html = tu_slurp(path_in("r", "index.html"), NULL);
    assert_non_null(html);
    assert_null(strstr(html, "http://"));
    assert_null(strstr(html, "https://"));
    assert_non_null(strstr(html, "summary.csv"));
    const char *want[] = {"queue_cdf", "jct_cdf", "gpu_alloc", "sm_util", "idle_gpus", "preemptions", "colocations"};
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        char ref[128];
        snprintf(ref, sizeof ref, "src=\"plots/%s.png\"", want[k]);
        assert_non_null(strstr(html, ref));
    }
    for (size_t i = 0; i < np; i++) {
        char ref[128];
        snprintf(ref, sizeof ref, "src=\"plots/qad_%s.png\"",
                 json_string_value(json_object_get(json_array_get(sum, i), "policy")));
        assert_non_null(strstr(html, ref));
    }
    /* every image index.html references exists as PNG and as SVG */
    int nimg = 0;
    for (const char *p = html; (p = strstr(p, "src=\"plots/")); p++) {
        const char *s = p + 11, *e = strstr(s, ".png\"");
        assert_non_null(e);
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(e - s), s);
        char f[300];
        snprintf(f, sizeof f, "%s.png", name);
        check_png(path_in("r/plots", f));
        snprintf(f, sizeof f, "%s.svg", name);
        check_svg(path_in("r/plots", f));
        snprintf(f, sizeof f, "href=\"plots/%s.svg\"", name);
        assert_non_null(strstr(html, f));
        nimg++;
    }
    assert_int_equal(nimg, 7 + (int)np);
    assert_true(exists(path_in("r", "plots.gp")));
    assert_true(exists(path_in("r/data", "cdf_0.dat")));
    json_decref(sum);
    free(csv);
    free(html);
    free(out);
    free(err);
}

/* The report's numbers are the simulator's: summary.json equals 'simulate --json' for the same workload. */
static void test_numbers_equal_simulate(void **st)
{
    (void)st;
    run_ok("compare " SMALL " --mode pooled --k 2 --no-plots --quiet --out '%s/eq'", tmpdir);
    run_ok("simulate " SMALL " --mode pooled --k 2 --quiet --json '%s/sim.json'", tmpdir);
    char simp[600];
    snprintf(simp, sizeof simp, "%s/sim.json", tmpdir);
    json_t *a = load_json(path_in("eq", "summary.json")), *b = load_json(simp);
    assert_same_summaries(a, b);
    /* and summary.csv carries the same averages */
    char *csv = tu_slurp(path_in("eq", "summary.csv"), NULL);
    json_t *first = json_array_get(b, 0);
    char row[256];
    snprintf(row, sizeof row, "\n%s,%s,%lld,%.3f,", json_string_value(json_object_get(first, "policy")),
             json_string_value(json_object_get(first, "mode")), (long long)json_integer_value(json_object_get(first, "jobs")),
             json_real_value(json_object_get(first, "avg_jct")));
    assert_non_null(strstr(csv, row));
    free(csv);
    json_decref(a);
    json_decref(b);
}

/* Same on Venus with estimates and the colocation profile; one named policy, so simulate prints an object. */
static void test_venus_equals_simulate(void **st)
{
    (void)st;
    /* tu_data returns a static buffer: take one path at a time */
    const char *rel[] = {"venus/venus_sept_jobs.csv", "venus/vc_config.csv", "estimates/Venus_Sept_lgb.csv",
                         "colocation/colocate_info.csv"};
    const char *flag[] = {"--trace", "--vc-config", "--estimates", "--coloc"};
    char w[4400] = "";
    for (int k = 0; k < 4; k++) {
        const char *p = tu_data(rel[k]);
        if (!p) skip();
        size_t used = strlen(w);
        snprintf(w + used, sizeof w - used, " %s '%s'", flag[k], p);
    }
    run_ok("compare %s --policies qssf,tiresias --jobs 2 --no-plots --quiet --out '%s/v'", w, tmpdir);
    json_t *a = load_json(path_in("v", "summary.json"));
    assert_int_equal(json_array_size(a), 2);
    const char *pol[] = {"qssf", "tiresias"};
    for (int i = 0; i < 2; i++) {
        run_ok("simulate %s --policy %s --quiet --json '%s/s.json'", w, pol[i], tmpdir);
        char p[600];
        snprintf(p, sizeof p, "%s/s.json", tmpdir);
        json_t *b = load_json(p);
        assert_true(json_is_object(b));
        assert_true(json_equal(json_array_get(a, (size_t)i), b));
        json_decref(b);
    }
    json_decref(a);
}

/* --jobs N gives byte-identical summaries and plot data to a serial run. */
static void test_parallel_equals_serial(void **st)
{
    (void)st;
    run_ok("compare " SMALL " --no-plots --quiet --jobs 1 --out '%s/j1'", tmpdir);
    run_ok("compare " SMALL " --no-plots --quiet --jobs 4 --out '%s/j4'", tmpdir);
    const char *files[] = {"summary.json", "summary.csv", "data/cdf_3.dat", "data/series_3.dat", "data/qad_3.dat"};
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        size_t n1, n4;
        char *a = tu_slurp(path_in("j1", files[k]), &n1), *b = tu_slurp(path_in("j4", files[k]), &n4);
        if (!a || !b) fprintf(stderr, "missing %s\n", files[k]);
        assert_non_null(a);
        assert_non_null(b);
        assert_int_equal(n1, n4);
        assert_memory_equal(a, b, n1);
        free(a);
        free(b);
    }
}

static void check_no_plot_run(const char *env, const char *dir, const char *needle)
{
    char args[2048], *out, *err;
    snprintf(args, sizeof args, "compare " SMALL " --out '%s/%s'", tmpdir, dir);
    int rc = run_env(env, args, &out, &err);
    if (rc != 3) fprintf(stderr, "rc %d: %s\n", rc, err);
    assert_int_equal(rc, 3);
    assert_non_null(strstr(err, needle));
    assert_non_null(strstr(err, "gnuplot-nox"));
    assert_non_null(strstr(out, "avg_queue")); /* the table is still printed */
    json_t *j = load_json(path_in(dir, "summary.json"));
    assert_true(json_array_size(j) >= 4);
    json_decref(j);
    char *csv = tu_slurp(path_in(dir, "summary.csv"), NULL);
    assert_non_null(csv);
    assert_true(count_lines(csv) >= 5);
    char *html = tu_slurp(path_in(dir, "index.html"), NULL);
    assert_non_null(html);
    assert_null(strstr(html, "<img"));
    assert_non_null(strstr(html, "gnuplot was not found"));
    assert_false(exists(path_in(dir, "plots/queue_cdf.png")));
    free(csv);
    free(html);
    free(out);
    free(err);
}

/* No plotting tool: a clear message, exit status 3, and the table, CSV, JSON and index.html all the same. */
static void test_missing_gnuplot(void **st)
{
    (void)st;
    char env[1200];
    check_no_plot_run("DS_GNUPLOT=/nonexistent/gnuplot", "ng1", "DS_GNUPLOT=/nonexistent/gnuplot");
    snprintf(env, sizeof env, "mkdir -p '%s/emptybin' && env -u DS_GNUPLOT PATH='%s/emptybin'", tmpdir, tmpdir);
    check_no_plot_run(env, "ng2", "gnuplot was not found");
}

/* --sweep needs the deepshare policy: a clear message without it; the sweep table and curves with it. */
static void test_sweep(void **st)
{
    (void)st;
    char args[2048], *out, *err;
    if (!ds_policy_find("deepshare")) {
        snprintf(args, sizeof args, "compare " SMALL " --sweep --out '%s/sw'", tmpdir);
        int rc = run(args, &out, &err);
        assert_int_equal(rc, 2);
        assert_non_null(strstr(err, "--sweep"));
        assert_non_null(strstr(err, "'deepshare' policy"));
        assert_false(exists(path_in("sw", "summary.json")));
        free(out);
        free(err);
        return;
    }
    snprintf(args, sizeof args, "compare " SMALL " --mode pooled --policies deepshare --sweep --jobs 2 %s --out '%s/sw'",
             have_gnuplot() ? "" : "--no-plots", tmpdir);
    int rc = run(args, &out, &err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    char *csv = tu_slurp(path_in("sw", "sweep.csv"), NULL);
    assert_non_null(csv);
    assert_int_equal(count_lines(csv), 1 + 5 + 5 + 4);
    assert_non_null(strstr(csv, "\nrho-min,0.5,1,"));
    assert_non_null(strstr(csv, "\nalpha,0.9,1,"));
    assert_non_null(strstr(csv, "\nm,2,1,"));
    /* alpha + beta <= 1: the alpha=0.9 point runs with beta lowered, and says so */
    assert_non_null(strstr(csv, "\nalpha,0.9,1,"));
    assert_non_null(strstr(csv, ",beta=0.1\n"));
    /* the three points at the defaults are one configuration: identical numbers, equal to the compared run */
    const char *at[] = {"\nrho-min,0.7,", "\nalpha,0.5,", "\nm,4,"};
    char rows[3][512];
    for (int k = 0; k < 3; k++) {
        const char *r = strstr(csv, at[k]);
        assert_non_null(r);
        r = strchr(r + strlen(at[k]), ','); /* skip 'ok' */
        assert_non_null(r);
        size_t len = strcspn(r, "\n");
        snprintf(rows[k], sizeof rows[k], "%.*s", (int)len, r);
    }
    assert_string_equal(rows[0], rows[1]);
    assert_string_equal(rows[0], rows[2]);
    json_t *sum = load_json(path_in("sw", "summary.json"));
    char want[64];
    snprintf(want, sizeof want, ",%.3f,", json_real_value(json_object_get(json_array_get(sum, 0), "avg_queue")));
    assert_non_null(strstr(rows[0], want));
    json_decref(sum);
    if (have_gnuplot()) {
        check_png(path_in("sw/plots", "sweep_rho-min.png"));
        check_svg(path_in("sw/plots", "sweep_alpha.svg"));
        check_png(path_in("sw/plots", "sweep_m.png"));
    }
    free(csv);
    free(out);
    free(err);
}

static void expect_error(const char *args, int code, const char *needle)
{
    char *out, *err;
    int rc = run(args, &out, &err);
    if (rc != code || !strstr(err, needle)) fprintf(stderr, "deepshare %s: rc %d, stderr: %s\n", args, rc, err);
    assert_int_equal(rc, code);
    assert_non_null(strstr(err, needle));
    free(out);
    free(err);
}

static void test_bad_usage(void **st)
{
    (void)st;
    char args[2048];
    expect_error("compare " SMALL, 2, "--out DIR is required");
    snprintf(args, sizeof args, "compare --policies fifo,nope --out '%s/b'", tmpdir);
    expect_error(args, 2, "unknown policy 'nope'");
    snprintf(args, sizeof args, "compare --policies fifo,fifo --out '%s/b'", tmpdir);
    expect_error(args, 2, "listed twice");
    snprintf(args, sizeof args, "compare --jobs 0 --out '%s/b'", tmpdir);
    expect_error(args, 2, "--jobs");
    snprintf(args, sizeof args, "compare --no-such-thing 3 --out '%s/b'", tmpdir);
    expect_error(args, 2, "unknown option --no-such-thing");
    char f[700];
    snprintf(f, sizeof f, "%s/plainfile", tmpdir);
    FILE *pf = fopen(f, "w");
    assert_non_null(pf);
    fclose(pf);
    snprintf(args, sizeof args, "compare " SMALL " --out '%s'", f);
    expect_error(args, 1, "cannot create directory");
    char *out, *err;
    assert_int_equal(run("compare --help", &out, &err), 0);
    const char *flags[] = {"--policies", "--jobs", "--out", "--sweep", "--no-plots", "--details", "--quiet",
                           "DS_GNUPLOT"};
    for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++) assert_non_null(strstr(out, flags[k]));
    free(out);
    free(err);
}

/* Without estimates, QSSF and Lucid rank by the learned runtime predictor instead of being skipped,
 * and each summary says which estimates a run used. */
static void test_estimates_source(void **st)
{
    (void)st;
    const char *jobs = tu_write_temp("cmp_jobs.csv", "job_id,tenant,gpus,submit,duration\n"
                                                     "1,a,1,0,100\n2,a,2,10,50\n3,b,1,20,300\n4,b,1,25,10\n");
    const char *vc = tu_write_temp("cmp_vc.csv", "tenant,quota_gpus\na,8\nb,8\n");
    char args[2048], *out, *err;
    snprintf(args, sizeof args, "compare --trace '%s' --vc-config '%s' --no-plots --out '%s/sk'", jobs, vc, tmpdir);
    int rc = run(args, &out, &err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_null(strstr(err, "skipping qssf")); /* lucid is, for want of nodes to lend its profiler */
    json_t *j = load_json(path_in("sk", "summary.json"));
    int seen = 0;
    for (size_t i = 0; i < json_array_size(j); i++) {
        json_t *o = json_array_get(j, i);
        const char *p = json_string_value(json_object_get(o, "policy"));
        const char *e = json_string_value(json_object_get(o, "estimates"));
        if (!strcmp(p, "qssf") || !strcmp(p, "deepshare")) {
            assert_non_null(e);
            assert_string_equal(e, "model");
            seen++;
        } else if (!strcmp(p, "fifo")) {
            assert_null(e);
        }
    }
    assert_int_equal(seen, 2);
    json_decref(j);
    free(out);
    free(err);
    /* with the truth, and with a file of estimates */
    const char *est = tu_write_temp("cmp_est.csv", "job_id,estimate\n1,90\n2,60\n3,200\n4,20\n");
    snprintf(args, sizeof args, "compare --trace '%s' --vc-config '%s' --policies qssf --predictor oracle --no-plots "
             "--out '%s/sk2'", jobs, vc, tmpdir);
    assert_int_equal(run(args, &out, &err), 0);
    j = load_json(path_in("sk2", "summary.json"));
    assert_string_equal(json_string_value(json_object_get(json_array_get(j, 0), "estimates")), "oracle");
    json_decref(j);
    free(out);
    free(err);
    snprintf(args, sizeof args, "compare --trace '%s' --vc-config '%s' --policies qssf --estimates '%s' --no-plots "
             "--out '%s/sk3'", jobs, vc, est, tmpdir);
    rc = run(args, &out, &err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    j = load_json(path_in("sk3", "summary.json"));
    const char *e = json_string_value(json_object_get(json_array_get(j, 0), "estimates"));
    assert_non_null(e);
    assert_true(!strncmp(e, "file:", 5));
    json_decref(j);
    free(out);
    free(err);
}


/* deepshare suite on the synthetic workloads (invariants checked on every pass): the report folders,
 * suite.json with every policy in both modes, and verdicts that agree with the results they judge. */
static void test_suite(void **st)
{
    (void)st;
    char args[2048], *out = NULL, *err = NULL;
    snprintf(args, sizeof args, "suite --workloads synthetic,noisy-neighbour,large-jobs --predictor oracle --no-plots "
             "--check-invariants --data /nonexistent --jobs 2 --quiet --out '%s/suite'", tmpdir);
    int rc = run(args, &out, &err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "== noisy-neighbour"));
    assert_non_null(strstr(out, "verdict: GOAL"));
    assert_true(exists(path_in("suite", "suite.md")));
    assert_true(exists(path_in("suite", "index.html")));
    assert_true(exists(path_in("suite/large-jobs/pooled", "summary.json")));
    assert_true(exists(path_in("suite/large-jobs/partitioned", "index.html")));
    json_t *sj = load_json(path_in("suite", "suite.json"));
    json_t *wl = json_object_get(sj, "workloads");
    assert_int_equal(json_array_size(wl), 3);
    for (size_t w = 0; w < json_array_size(wl); w++) {
        json_t *o = json_array_get(wl, w), *res = json_object_get(o, "results");
        /* every policy in both modes, the production models (by their props) pooled only */
        const ds_policy_ops_t *const *pl = ds_policy_list();
        size_t nrows = 0, nprod = 0;
        for (size_t k = 0; pl[k]; k++) {
            int prod = (pl[k]->props & DS_POLICY_PRODUCTION) != 0;
            nrows += prod ? 1 : 2;
            nprod += prod;
        }
        assert_true(nprod >= 2); /* slurm-quota, slurm-borrow at least */
        assert_int_equal(json_array_size(res), nrows);
        double ds_q = -1, ds_p99 = -1, best = -1, minp99 = -1, best_prod = -1;
        const char *best_prod_name = NULL, *best_name = NULL;
        for (size_t i = 0; i < json_array_size(res); i++) {
            json_t *r = json_array_get(res, i);
            const char *pol = json_string_value(json_object_get(r, "policy"));
            int pooled = !strcmp(json_string_value(json_object_get(r, "mode")), "pooled");
            double q = json_number_value(json_object_get(r, "avg_queue")), p99 = json_number_value(json_object_get(r, "p99_queue"));
            const ds_policy_ops_t *ops = ds_policy_find(pol);
            assert_non_null(ops);
            if (!pooled) {
                assert_false(ops->props & DS_POLICY_PRODUCTION);
                continue;
            }
            if (!strcmp(pol, "deepshare")) ds_q = q, ds_p99 = p99;
            else {
                if (best < 0 || q < best) best = q, best_name = pol;
                if (minp99 < 0 || p99 < minp99) minp99 = p99;
                if ((ops->props & DS_POLICY_PRODUCTION) && (best_prod < 0 || q < best_prod)) best_prod = q, best_prod_name = pol;
            }
        }
        json_t *v = json_object_get(o, "verdict");
        assert_true(json_is_true(json_object_get(v, "judged")));
        assert_true(json_number_value(json_object_get(v, "best_pooled_avg_queue")) == best);
        assert_true(json_is_true(json_object_get(v, "queue_ok")) == (ds_q <= best));
        assert_true(json_is_true(json_object_get(v, "p99_ok")) == (ds_p99 <= 1.5 * minp99));
        assert_true(json_number_value(json_object_get(v, "deepshare_avg_queue")) == ds_q);
        /* the best of all pooled baselines, research or production, is named with its kind; the best production
         * model and DeepShare's ratio to it too */
        assert_string_equal(json_string_value(json_object_get(v, "best_pooled_baseline")), best_name);
        assert_true(json_is_true(json_object_get(v, "best_pooled_is_production")) ==
                    ((ds_policy_find(best_name)->props & DS_POLICY_PRODUCTION) != 0));
        assert_string_equal(json_string_value(json_object_get(v, "best_production_model")), best_prod_name);
        assert_true(json_number_value(json_object_get(v, "best_production_avg_queue")) == best_prod);
        if (best_prod > 0)
            assert_true(fabs(json_number_value(json_object_get(v, "deepshare_to_best_production")) - ds_q / best_prod) < 1e-9);
        /* without the colocation profile (--data /nonexistent) only the reference ground truth runs */
        assert_int_equal(json_array_size(json_object_get(o, "runs")), 1);
    }
    assert_non_null(strstr(err, "--missing-rho model skipped"));
    json_decref(sj);
    free(out);
    free(err);
    /* a workload that is not one is a usage error naming it */
    snprintf(args, sizeof args, "suite --workloads synthetic,nope --out '%s/suite2'", tmpdir);
    assert_int_equal(run(args, &out, &err), 2);
    assert_non_null(strstr(err, "'nope' is not a workload"));
    free(out);
    free(err);
}

/* The hetero workload (three GPU types): every policy has type rules now (Kueue with one ResourceFlavor per
 * type), so none is left out and no note names one; the baselines run again type-aware (NAME+fastest, judged
 * like the others) and DeepShare blind to types (deepshare+blind, shown, not judged); the verdict's "types"
 * names the best type-blind, type-aware and production baselines. */
static void test_suite_hetero(void **st)
{
    (void)st;
    char args[2048], *out = NULL, *err = NULL;
    snprintf(args, sizeof args, "suite --workloads hetero --predictor oracle --no-plots --policies fifo,kai,kueue,deepshare "
             "--missing-rho 1 --check-invariants --jobs 2 --quiet --out '%s/suite-het'", tmpdir);
    int rc = run(args, &out, &err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_null(strstr(out, "not run on several GPU types"));
    assert_non_null(strstr(out, "types: deepshare "));
    assert_true(exists(path_in("suite-het/hetero/pooled-fastest", "summary.json")));
    json_t *sj = load_json(path_in("suite-het", "suite.json"));
    json_t *o = json_array_get(json_object_get(sj, "workloads"), 0), *res = json_object_get(o, "results");
    /* partitioned fifo, deepshare; pooled fifo, deepshare, kai, kueue; fifo+fastest, kai+fastest, kueue+fastest;
     * deepshare+blind */
    assert_int_equal(json_array_size(res), 10);
    int nkueue = 0;
    double best = -1, best_prod = -1, blind = -1, aware = -1;
    int nfast = 0;
    for (size_t i = 0; i < json_array_size(res); i++) {
        json_t *r = json_array_get(res, i);
        const char *pol = json_string_value(json_object_get(r, "policy"));
        nkueue += !strncmp(pol, "kueue", 5);
        double q = json_number_value(json_object_get(r, "avg_queue"));
        int pooled = !strcmp(json_string_value(json_object_get(r, "mode")), "pooled");
        if (strstr(pol, "+fastest")) {
            assert_true(pooled);
            nfast++;
            if (aware < 0 || q < aware) aware = q;
        }
        if (!strcmp(pol, "deepshare+blind")) blind = q;
        else if (strncmp(pol, "deepshare", 9) && pooled) {
            if (best < 0 || q < best) best = q;
            int prod = !strncmp(pol, "kai", 3) || !strncmp(pol, "kueue", 5);
            if (prod && (best_prod < 0 || q < best_prod)) best_prod = q;
        }
    }
    assert_int_equal(nkueue, 2);
    assert_int_equal(nfast, 3);
    assert_true(blind >= 0);
    json_t *v = json_object_get(o, "verdict");
    assert_true(json_is_true(json_object_get(v, "judged")));
    /* the type-aware rows are judged (kai+fastest is a production model), DeepShare blind to types is not */
    assert_true(json_number_value(json_object_get(v, "best_pooled_avg_queue")) == best);
    assert_true(json_number_value(json_object_get(v, "best_production_avg_queue")) == best_prod);
    assert_string_not_equal(json_string_value(json_object_get(v, "best_pooled_baseline")), "deepshare+blind");
    json_t *tj = json_object_get(v, "types");
    assert_true(json_number_value(json_object_get(json_object_get(tj, "deepshare_type_blind"), "avg_queue")) == blind);
    assert_true(json_number_value(json_object_get(json_object_get(tj, "best_type_aware"), "avg_queue")) == aware);
    json_decref(sj);
    free(out);
    free(err);
}

/* The ITP workloads (../shared/data/itp, MIT): skipped with a message naming the missing file when absent;
 * when present, itp-slice runs every listed policy in both modes over all 15,536 jobs with the invariants
 * checked on every pass, and is judged like the other workloads. */
static void test_suite_itp(void **st)
{
    (void)st;
    char args[4096], *out = NULL, *err = NULL;
    snprintf(args, sizeof args, "suite --workloads itp,itp-slice --data /nonexistent --no-plots --quiet --out '%s/suite-noitp'",
             tmpdir);
    assert_int_equal(run(args, &out, &err), 0);
    assert_non_null(strstr(err, "itp: skipped: /nonexistent/itp/itp_jobs.csv"));
    assert_non_null(strstr(err, "itp-slice: skipped"));
    free(out);
    free(err);
    const char *jobs = tu_data("itp/itp_jobs_slice.csv");
    if (!jobs) {
        fprintf(stderr, "note: itp-slice not run: no itp/ under DS_DATA_DIR\n");
        skip();
    }
    char data[1024];
    snprintf(data, sizeof data, "%.*s", (int)(strlen(jobs) - strlen("/itp/itp_jobs_slice.csv")), jobs);
    snprintf(args, sizeof args, "suite --workloads itp-slice --predictor oracle --policies qssf,tiresias,deepshare "
             "--no-plots --check-invariants --jobs 2 --quiet --data '%s' --out '%s/suite-itp'", data, tmpdir);
    int rc = run(args, &out, &err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_non_null(strstr(out, "== itp-slice"));
    assert_non_null(strstr(out, "verdict: GOAL"));
    json_t *sj = load_json(path_in("suite-itp", "suite.json"));
    json_t *o = json_array_get(json_object_get(sj, "workloads"), 0);
    assert_string_equal(json_string_value(json_object_get(o, "name")), "itp-slice");
    json_t *res = json_object_get(o, "results");
    assert_int_equal(json_array_size(res), 6);
    for (size_t i = 0; i < json_array_size(res); i++)
        assert_int_equal(json_integer_value(json_object_get(json_array_get(res, i), "jobs")), 15536);
    assert_true(json_is_true(json_object_get(json_object_get(o, "verdict"), "judged")));
    json_decref(sj);
    free(out);
    free(err);
}

int main(void)
{
    if (!bin()) {
        fprintf(stderr, "DS_BIN is not set (run through ctest)\n");
        return 77;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_report_files),
        cmocka_unit_test(test_numbers_equal_simulate),
        cmocka_unit_test(test_venus_equals_simulate),
        cmocka_unit_test(test_parallel_equals_serial),
        cmocka_unit_test(test_missing_gnuplot),
        cmocka_unit_test(test_sweep),
        cmocka_unit_test(test_bad_usage),
        cmocka_unit_test(test_suite),
        cmocka_unit_test(test_suite_hetero),
        cmocka_unit_test(test_suite_itp),
        cmocka_unit_test(test_estimates_source),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
