/* test_cli.c: the deepshare command as scripts see it: exit codes, one clear message on stderr for bad
 * usage, --help covering every flag, and byte-identical output for the same input and seed. */
#include "testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char tmpdir[512];

static const char *bin(void) { return getenv("DS_BIN"); }


/* Runs "deepshare ARGS" with stdout and stderr captured; returns the exit status. */
static int run(const char *args, char **out, char **err)
{
    char cmd[4096], o[600], e[600];
    snprintf(o, sizeof o, "%s/stdout", tmpdir);
    snprintf(e, sizeof e, "%s/stderr", tmpdir);
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s' 2>'%s'", bin(), args, o, e);
    int st = system(cmd);
    assert_true(st != -1 && WIFEXITED(st));
    if (out) *out = tu_slurp(o, NULL);
    if (err) *err = tu_slurp(e, NULL);
    return WEXITSTATUS(st);
}

static int setup(void **st)
{
    (void)st;
    tu_make_dir("ds_cli", tmpdir, sizeof tmpdir);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    return tu_remove_dir(tmpdir);
}

/* Bad usage: non-zero exit, nothing on stdout, one message on stderr that names the problem. */
static void expect_usage_error(const char *args, const char *needle)
{
    char *out, *err;
    int rc = run(args, &out, &err);
    if (rc == 0 || !strstr(err, needle)) fprintf(stderr, "deepshare %s: rc %d, stderr: %s\n", args, rc, err);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err, needle));
    assert_non_null(strstr(err, "deepshare"));
    assert_string_equal(out, "");
    free(out);
    free(err);
}

static void test_bad_usage(void **st)
{
    (void)st;
    if (!bin()) { skip(); return; }
    expect_usage_error("frobnicate", "unknown command 'frobnicate'");
    expect_usage_error("simulate --bogus 1", "unknown option --bogus");
    expect_usage_error("simulate stray", "unexpected argument 'stray'");
    expect_usage_error("simulate --seed abc", "option --seed: 'abc' is not an integer");
    expect_usage_error("simulate --seed -3", "option --seed");
    expect_usage_error("simulate --synth-jobs 0", "option --synth-jobs");
    expect_usage_error("simulate --synth-load x", "option --synth-load: 'x' is not a number");
    expect_usage_error("simulate --k 9", "option --k");
    expect_usage_error("simulate --mode shared", "option --mode: 'shared' is not partitioned or pooled");
    expect_usage_error("simulate --window 10:5", "option --window");
    expect_usage_error("simulate --policy nope", "unknown policy 'nope'");
    expect_usage_error("simulate --policy", "option --policy needs a value");
    expect_usage_error("simulate --trace /nonexistent/jobs.csv", "--trace needs --vc-config");
    expect_usage_error("simulate --vc-config /nonexistent/vc.csv", "--vc-config needs --trace");
    expect_usage_error("simulate --trace /nonexistent/jobs.csv --vc-config /nonexistent/vc.csv",
                       "/nonexistent/vc.csv: cannot open");
    expect_usage_error("simulate --estimates /nonexistent/e.csv --policy fifo", "/nonexistent/e.csv: cannot open");
}

/* A bad trace: the message names file, line and column, and the exit is non-zero. */
static void test_bad_trace_message(void **st)
{
    (void)st;
    if (!bin()) { skip(); return; }
    char vc[600], jobs[600], args[1400];
    snprintf(vc, sizeof vc, "%s/vc.csv", tmpdir);
    snprintf(jobs, sizeof jobs, "%s/jobs.csv", tmpdir);
    FILE *f = fopen(vc, "w");
    fputs("tenant,quota_gpus\nA,8\n", f);
    fclose(f);
    f = fopen(jobs, "w");
    fputs("job_id,tenant,gpus,submit,duration\n1,A,1,0,10\n2,A,1,5,-3\n", f);
    fclose(f);
    snprintf(args, sizeof args, "simulate --trace '%s' --vc-config '%s' --policy fifo", jobs, vc);
    char want[800];
    snprintf(want, sizeof want, "%s:3: column 'duration': value -3 is below the minimum 0", jobs);
    expect_usage_error(args, want);
    /* QSSF without estimates runs on the learned runtime predictor and says so */
    f = fopen(jobs, "w");
    fputs("job_id,tenant,gpus,submit,duration\n1,A,1,0,10\n", f);
    fclose(f);
    snprintf(args, sizeof args, "simulate --trace '%s' --vc-config '%s' --policy qssf --json - --quiet", jobs, vc);
    char *out, *err;
    assert_int_equal(run(args, &out, &err), 0);
    assert_non_null(strstr(out, "\"estimates\": \"model\""));
    free(out);
    free(err);
}

/* Every flag the parser accepts (read from the CLI sources) appears in 'simulate --help'. */
static void test_help_mentions_every_flag(void **st)
{
    (void)st;
    if (!bin() || !getenv("DS_SRC")) { skip(); return; }
    char *out, *err;
    assert_int_equal(run("--help", &out, &err), 0);
    assert_non_null(strstr(out, "simulate"));
    for (const ds_policy_ops_t *const *p = ds_policy_list(); *p; p++) assert_non_null(strstr(out, (*p)->name));
    free(out);
    free(err);
    assert_int_equal(run("simulate --help", &out, &err), 0);
    assert_string_equal(err, "");
    /* the files that parse simulate's options (runner.c: cluster options shared with compare;
     * predictors.c: --predictor and its inputs) */
    static const char *const files[] = {"src/cli/simulate.c", "src/cli/workload.c", "src/cli/runner.c",
                                        "src/cli/predictors.c"};
    int nflags = 0;
    for (int fi = 0; fi < 4; fi++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", getenv("DS_SRC"), files[fi]);
        char *src = tu_slurp(path, NULL);
        if (!src && fi >= 2) continue; /* option parsers other sessions added */
        assert_non_null(src);
        for (char *p = src; (p = strstr(p, "strcmp(name, \"")) != NULL;) {
            p += strlen("strcmp(name, \"");
            char *q = strchr(p, '"');
            char flag[128];
            snprintf(flag, sizeof flag, "--%.*s", (int)(q - p), p);
            if (!strstr(out, flag)) fprintf(stderr, "'simulate --help' does not mention %s\n", flag);
            assert_non_null(strstr(out, flag));
            nflags++;
            p = q;
        }
        free(src);
    }
    assert_true(nflags >= 20);
    /* the flags of the command-line contract, whatever the parser looks like */
    static const char *const contract[] = {"--trace", "--vc-config", "--policy", "--mode", "--estimates",
                                           "--seed", "--json", "--out"};
    for (size_t i = 0; i < sizeof contract / sizeof *contract; i++) assert_non_null(strstr(out, contract[i]));
    free(out);
    free(err);
    assert_int_equal(run("simulate -h", &out, NULL), 0);
    assert_non_null(strstr(out, "usage: deepshare simulate"));
    free(out);
}

/* simulate --explain JOB: each policy's own account of the job as it waits, starts and ends, without
 * changing the run; an id the trace lacks is a usage error. */
static void test_simulate_explain(void **st)
{
    (void)st;
    if (!bin()) { skip(); return; }
    char *out, *err, *plain;
    const char *args = "simulate --policy fifo,deepshare --synth-jobs 300 --synth-load 1.5 --json - --quiet";
    char with[512];
    snprintf(with, sizeof with, "%s --explain 200", args);
    assert_int_equal(run(args, &plain, NULL), 0);
    assert_int_equal(run(with, &out, &err), 0);
    assert_non_null(strstr(out, "t=18103 job 200 (fifo, partitioned): tenant tenant00, 16 GPUs, running\n"
                                "  order: started in its turn (first in, first out (submit time)); fifo never preempts"));
    assert_non_null(strstr(out, "job 200 (fifo, partitioned): done\n"));
    assert_non_null(strstr(out, "job 200 (deepshare, partitioned): tenant tenant00, 16 GPUs, pending\n  tenant: quota 88 GPUs"));
    assert_non_null(strstr(out, "so it can only borrow as best effort (BE cap 352 = m 4 x quota;"));
    assert_non_null(strstr(out, "job 200 (deepshare, partitioned): done\n"));
    /* the summary JSON that follows is the run's without --explain */
    const char *json = strstr(out, "\n[");
    assert_non_null(json);
    assert_string_equal(json + 1, plain);
    free(out);
    free(err);
    free(plain);
    expect_usage_error("simulate --policy fifo --synth-jobs 50 --explain 999999", "--explain: no job with id '999999'");
}

static void compare_files(const char *a, const char *b)
{
    size_t na, nb;
    char *x = tu_slurp(a, &na), *y = tu_slurp(b, &nb);
    if (!x || !y) fprintf(stderr, "missing %s or %s\n", a, b);
    assert_non_null(x);
    assert_non_null(y);
    assert_true(na > 0);
    assert_int_equal(na, nb);
    assert_memory_equal(x, y, na);
    free(x);
    free(y);
}

/* Runs one configuration twice into run1/ and run2/, and checks every output file is identical. */
static json_t *run_twice(const char *tag, const char *args)
{
    char a[2400];
    for (int k = 1; k <= 2; k++) {
        snprintf(a, sizeof a, "simulate %s --quiet --json '%s/%s%d.json' --out '%s/%s%d'", args, tmpdir, tag, k,
                 tmpdir, tag, k);
        char *err;
        int rc = run(a, NULL, &err);
        if (rc) fprintf(stderr, "%s\n", err);
        assert_int_equal(rc, 0);
        free(err);
    }
    static const char *const files[] = {".json", "/jobs.csv", "/timeseries.csv", "/tenants.csv", "/qad.csv", "/events.csv"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        char p1[800], p2[800];
        snprintf(p1, sizeof p1, "%s/%s1%s", tmpdir, tag, files[i]);
        snprintf(p2, sizeof p2, "%s/%s2%s", tmpdir, tag, files[i]);
        compare_files(p1, p2);
    }
    char p[800];
    snprintf(p, sizeof p, "%s/%s1.json", tmpdir, tag);
    json_error_t je;
    json_t *j = json_load_file(p, 0, &je);
    assert_non_null(j);
    return j;
}

static void test_determinism(void **st)
{
    (void)st;
    if (!bin()) { skip(); return; }
    const char *w = "--synth-jobs 1500 --synth-nodes 12 --synth-tenants 4 --synth-load 0.9 --synth-be-share 0.2";
    char a[600];
    snprintf(a, sizeof a, "--policy fifo --seed 7 %s", w);
    json_t *f = run_twice("fifo", a);
    assert_int_equal(json_integer_value(json_object_get(f, "jobs")), 1500);
    /* the contract's keys are all there */
    static const char *const keys[] = {"policy", "mode", "jobs", "avg_jct", "avg_queue", "p50_queue", "p99_queue",
                                       "p999_queue", "makespan", "gpu_alloc", "sm_util", "gmem_util",
                                       "preemptions", "colocated_jobs", "tenants"};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) assert_non_null(json_object_get(f, keys[i]));
    json_t *t0 = json_array_get(json_object_get(f, "tenants"), 0);
    assert_non_null(json_object_get(t0, "name"));
    assert_non_null(json_object_get(t0, "avg_queue"));
    /* a policy with preemption, pooled */
    snprintf(a, sizeof a, "--policy tiresias --mode pooled --seed 7 %s", w);
    json_t *t = run_twice("tir", a);
    assert_true(json_integer_value(json_object_get(t, "preemptions")) > 0);
    assert_string_equal(json_string_value(json_object_get(t, "mode")), "pooled");
    /* the seed matters: another seed gives another workload */
    snprintf(a, sizeof a, "--policy fifo --seed 8 %s", w);
    json_t *g = run_twice("fifo8", a);
    assert_true(json_real_value(json_object_get(g, "avg_jct")) != json_real_value(json_object_get(f, "avg_jct")));
    json_decref(f);
    json_decref(t);
    json_decref(g);
}


/* --missing-rho (SPEC 7.2): the ground truth of unprofiled pairs. Without --coloc every pair is one, so a
 * constant below 1 slows DeepShare's colocated jobs (same decisions where the oracle still admits them); model
 * needs a profile to learn from and says so; the model truth is deterministic and differs from 1.0. */
static void test_missing_rho(void **st)
{
    (void)st;
    if (!bin()) { skip(); return; }
    const char *w = "--policy deepshare --mode pooled --predictor oracle --synth-jobs 1500 --synth-nodes 12 --synth-tenants 4";
    char a[1600];
    snprintf(a, sizeof a, "%s --missing-rho 1", w);
    json_t *one = run_twice("rho1", a);
    snprintf(a, sizeof a, "%s --missing-rho 0.9", w);
    json_t *nine = run_twice("rho09", a);
    assert_true(json_integer_value(json_object_get(one, "colocated_jobs")) > 0);
    assert_true(json_real_value(json_object_get(nine, "avg_jct")) != json_real_value(json_object_get(one, "avg_jct")));
    json_decref(nine);
    char *out, *err;
    snprintf(a, sizeof a, "simulate %s --missing-rho model", w);
    assert_int_not_equal(run(a, &out, &err), 0);
    assert_non_null(strstr(err, "--missing-rho model needs a pair profile"));
    free(out), free(err);
    snprintf(a, sizeof a, "simulate %s --missing-rho 1.5", w);
    assert_int_equal(run(a, &out, &err), 2);
    assert_non_null(strstr(err, "--missing-rho"));
    free(out), free(err);
    const char *prof = tu_data("colocation/colocate_info.csv");
    if (prof) {
        snprintf(a, sizeof a, "%s --missing-rho model --missing-rho-profile '%s'", w, prof);
        json_t *m = run_twice("rhom", a);
        assert_true(json_real_value(json_object_get(m, "avg_jct")) != json_real_value(json_object_get(one, "avg_jct")));
        json_decref(m);
    }
    json_decref(one);
}

/* --out's per-job class split and decision log agree with each other and with the run: queue_g + queue_be
 * within each job's queue, one finish per job, one start per job and per preemption, the preemptions of
 * jobs.csv logged one by one; classless policies have neither split nor classes. */
static void check_out(const char *dir, int classes)
{
    char p[800], line[512];
    snprintf(p, sizeof p, "%s/%s/jobs.csv", tmpdir, dir);
    FILE *f = fopen(p, "r");
    assert_non_null(f);
    assert_non_null(fgets(line, sizeof line, f));
    assert_non_null(strstr(line, ",queue_g,queue_be\n"));
    long long jobs = 0, pre = 0, qbe = 0;
    while (fgets(line, sizeof line, f)) {
        long long v[14];
        char ten[64], user[64];
        int n = sscanf(line, "%lld,%63[^,],%63[^,],%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld", &v[0], ten, user,
                       &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12], &v[13]);
        assert_int_equal(n, 14);
        assert_true(v[12] >= 0 && v[13] >= 0 && v[12] + v[13] <= v[7]);
        if (!classes) assert_true(v[12] == 0 && v[13] == 0);
        jobs++, pre += v[10], qbe += v[13];
    }
    fclose(f);
    if (classes) assert_true(qbe > 0);
    snprintf(p, sizeof p, "%s/%s/events.csv", tmpdir, dir);
    assert_non_null(f = fopen(p, "r"));
    assert_non_null(fgets(line, sizeof line, f));
    assert_string_equal(line, "time,event,job_id,class,reason,other_job_id\n");
    long long fin = 0, starts = 0, pres = 0, last = -1;
    while (fgets(line, sizeof line, f)) {
        long long t, id, other;
        int reason;
        char ev[16], cls[8];
        assert_int_equal(sscanf(line, "%lld,%15[^,],%lld,%7[^,],%d,%lld", &t, ev, &id, cls, &reason, &other), 6);
        assert_true(t >= last);
        last = t;
        fin += !strcmp(ev, "finish"), starts += !strcmp(ev, "start"), pres += !strcmp(ev, "preempt");
        if (!classes) assert_string_equal(cls, "-");
        else if (!strcmp(ev, "start")) assert_true(!strcmp(cls, "G") || !strcmp(cls, "BE"));
    }
    fclose(f);
    assert_int_equal(fin, jobs);
    assert_int_equal(pres, pre);
    assert_int_equal(starts, jobs + pre);
}

static void test_out_classes_and_events(void **st)
{
    (void)st;
    const char *w = "--synth-jobs 800 --synth-nodes 6 --synth-tenants 3 --synth-load 1.3 --seed 5 --predictor oracle";
    char a[800];
    snprintf(a, sizeof a, "simulate --policy deepshare --mode pooled %s --quiet --out '%s/ev-ds'", w, tmpdir);
    assert_int_equal(run(a, NULL, NULL), 0);
    check_out("ev-ds", 1);
    snprintf(a, sizeof a, "simulate --policy tiresias --mode pooled %s --quiet --out '%s/ev-tir'", w, tmpdir);
    assert_int_equal(run(a, NULL, NULL), 0);
    check_out("ev-tir", 0);
}

/* The no-argument main job: both modes of every policy in one table, ending with DeepShare's verdict
 * against the suite's goal; the verdict names the best pooled and partitioned baselines it judged by. */
static void test_main_job_verdict(void **st)
{
    (void)st;
    char *out, *err;
    int rc = run("--synth-jobs 400 --synth-nodes 6 --predictor oracle", &out, &err);
    free(out), free(err);
    assert_int_equal(rc, 2); /* the main job takes no options: they belong to 'simulate' */
    rc = run("simulate --policy all --mode both --synth-jobs 400 --synth-nodes 6 --predictor oracle", &out, &err);
    if (rc) fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    const char *v = strstr(out, "\nverdict: GOAL ");
    assert_non_null(v);
    assert_non_null(strstr(v, "best pooled baseline"));
    assert_non_null(strstr(v, "best partitioned baseline"));
    assert_non_null(strstr(v, "[queue "));
    assert_true(strstr(out, "deepshare    pooled") < v && strstr(out, "fifo         partitioned") < v);
    /* the production models run pooled only: no partitioned row for them */
    assert_non_null(strstr(out, "slurm-borrow pooled"));
    assert_null(strstr(out, "slurm-quota  partitioned"));
    free(out), free(err);
    /* a single policy has nothing to be judged against: no verdict */
    rc = run("simulate --policy deepshare --mode pooled --synth-jobs 400 --synth-nodes 6 --predictor oracle", &out, &err);
    assert_int_equal(rc, 0);
    assert_null(strstr(out, "verdict:"));
    free(out), free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_usage),
        cmocka_unit_test(test_bad_trace_message),
        cmocka_unit_test(test_help_mentions_every_flag),
        cmocka_unit_test(test_simulate_explain),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_out_classes_and_events),
        cmocka_unit_test(test_main_job_verdict),
        cmocka_unit_test(test_missing_rho),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
