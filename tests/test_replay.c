/* test_replay.c: scoring an observed schedule (a live run, src/cli/observed.c with the 'replay' policy)
 * gives the simulator's own numbers for the schedule the simulator made; requeues, node fallbacks and
 * jobs that never completed are accounted as documented; a malformed observed.csv stops with file, line
 * and column; and 'deepshare replay-live' refuses bad usage before it touches a cluster. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli/observed.h"
#include "deepshare/policy.h"

static char tmpdir[512];

static int setup(void **st)
{
    (void)st;
    tu_make_dir("ds_replay", tmpdir, sizeof tmpdir);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    return tu_remove_dir(tmpdir);
}

static const char *tpath(const char *name)
{
    static char p[8][700];
    static int k;
    k = (k + 1) % 8;
    snprintf(p[k], sizeof p[k], "%s/%s", tmpdir, name);
    return p[k];
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

/* The cluster of the live test bed: 4 nodes of 4 GPUs, one job per GPU, no CPU check. */
static void cluster(ds_sim_config_t *c)
{
    ds_sim_config_default(c);
    c->engine.mode = DS_MODE_POOLED;
    c->engine.gpus_per_node = 4;
    c->engine.k = 1;
    c->engine.enforce_cpu = 0;
    c->engine.pool_nodes = 4;
    c->window_start = 0;
    c->window_end = 7200;
}

static const char *TENANTS = "ta:8 tb:4 tc:4";
static const char *JOBS = "1 ta 2 0 600; 2 ta 4 30 1200; 3 tb 4 60 900; 4 tb 1 60 300; 5 ta 4 120 600; 6 tb 2 200 1500;"
                          "7 tc 1 300 100; 8 tc 4 310 2000; 9 ta 1 320 50; 10 tb 4 400 700; 11 tc 2 500 400;"
                          "12 ta 4 600 900; 13 tb 1 650 60; 14 tc 4 700 300; 15 ta 2 900 1200";

static void score_file(const ds_trace_t *t, const char *path, ds_sim_result_t *r, ds_observed_t *o)
{
    ds_sim_config_t c;
    cluster(&c);
    ds_error_t err;
    ds_error_clear(&err);
    int rc = ds_observed_read(o, t, path, &err);
    if (rc) fprintf(stderr, "read: %s:%ld: %s\n", err.file, err.line, err.msg);
    assert_int_equal(rc, 0);
    rc = ds_observed_score(o, &c, "live", r, &err);
    if (rc) fprintf(stderr, "score: %s\n", err.msg);
    assert_int_equal(rc, 0);
}

/* A non-preemptive simulated schedule, written as an observed one and scored: every metric is the
 * simulator's own, to the last bit. */
static void test_score_reproduces_simulation(void **st)
{
    (void)st;
    const char *pols[] = {"fifo", "sjf"};
    for (int p = 0; p < 2; p++) {
        ds_trace_t t;
        tu_trace(&t, TENANTS, JOBS);
        ds_sim_config_t c;
        cluster(&c);
        c.policy = ds_policy_find(pols[p]);
        ds_sim_result_t sim;
        tu_sim(&t, &c, &sim);
        FILE *f = fopen(tpath("observed.csv"), "w");
        assert_non_null(f);
        fprintf(f, "job_id,submit,start,end,node,class,last,slurm_id\n");
        for (int32_t j = 0; j < t.njobs; j++)
            fprintf(f, "%lld,%lld,%lld,%lld,-1,G,1,%d\n", (long long)t.jobs[j].id, (long long)t.jobs[j].submit,
                    (long long)sim.start[j], (long long)sim.end[j], 100 + j);
        assert_int_equal(fclose(f), 0);
        ds_observed_t o;
        ds_sim_result_t r;
        score_file(&t, tpath("observed.csv"), &r, &o);
        assert_int_equal(o.dropped, 0);
        assert_int_equal(r.jobs, sim.jobs);
        assert_string_equal(r.policy, "live");
        assert_true(r.queue.avg == sim.queue.avg && r.queue.p99 == sim.queue.p99 && r.queue.p50 == sim.queue.p50);
        assert_true(r.jct.avg == sim.jct.avg && r.jct.p99 == sim.jct.p99);
        assert_true(r.gpu_alloc == sim.gpu_alloc);
        assert_true(r.qad_compliance == sim.qad_compliance && r.qad_mean == sim.qad_mean);
        assert_int_equal(r.preemptions, 0);
        assert_int_equal(r.makespan, sim.makespan);
        for (int32_t i = 0; i < t.ntenants; i++) {
            assert_true(r.tenants[i].qad_compliance == sim.tenants[i].qad_compliance);
            assert_true(r.tenants[i].queue.avg == sim.tenants[i].queue.avg);
        }
        ds_sim_result_free(&r);
        ds_sim_result_free(&sim);
        ds_observed_free(&o);
        ds_trace_free(&t);
    }
}

static double stat_of(const ds_sim_result_t *r, const char *name)
{
    for (int32_t i = 0; i < r->npstats; i++)
        if (!strcmp(r->pstats[i].name, name)) return r->pstats[i].value;
    return NAN;
}

/* A job requeued once: one preemption, its queueing delay counts both waits, its JCT runs to the end of
 * its second run, and a run that ran on the cluster's node 2 runs on node 2 here (no fallback). The rows'
 * order in the file does not matter. */
static void test_requeue_and_nodes(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "ta:4 tb:4", "1 ta 4 0 0; 2 tb 4 10 0; 3 ta 2 20 0");
    write_file(tpath("requeue.csv"), "job_id,submit,start,end,node,class,last\n"
                                     "2,10,15,500,1,G,1\n"
                                     "1,0,5,100,2,BE,0\n"
                                     "1,0,160,260,2,G,1\n"
                                     "3,20,100,400,0,G,1\n");
    ds_observed_t o;
    ds_sim_result_t r;
    score_file(&t, tpath("requeue.csv"), &r, &o);
    assert_int_equal(o.runs, 4);
    assert_int_equal(o.requeues, 1);
    assert_int_equal(r.preemptions, 1);
    /* job 1: waits 5 s, runs 95 s, waits 60 s, runs 100 s: JCT 260, queue 65 */
    int32_t j1 = -1;
    for (int32_t j = 0; j < o.trace.njobs; j++)
        if (o.trace.jobs[j].id == 1) j1 = j;
    assert_true(j1 >= 0);
    assert_int_equal(o.trace.jobs[j1].duration, 195);
    assert_int_equal(r.queued[j1], 65);
    assert_int_equal(r.end[j1], 260);
    assert_int_equal(r.preempts[j1], 1);
    assert_true(stat_of(&r, "replay_node_fallbacks") == 0);
    assert_true(stat_of(&r, "replay_stops") == 1);
    /* queue: (65 + 5 + 80) / 3 */
    assert_true(fabs(r.queue.avg - 150.0 / 3) < 1e-9);
    ds_sim_result_free(&r);
    ds_observed_free(&o);
    ds_trace_free(&t);
}

/* A job with no row, and one whose runs never completed, are left out and counted. */
static void test_incomplete_jobs_dropped(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "ta:4 tb:4", "1 ta 1 0 0; 2 tb 1 10 0; 3 ta 1 20 0");
    write_file(tpath("drop.csv"), "job_id,submit,start,end,node,class,last\n"
                                  "1,0,0,100,-1,G,1\n"
                                  "2,10,10,40,-1,BE,0\n");
    ds_observed_t o;
    ds_sim_result_t r;
    score_file(&t, tpath("drop.csv"), &r, &o);
    assert_int_equal(o.dropped, 2);
    assert_int_equal(r.jobs, 1);
    assert_int_equal(o.trace.jobs[0].id, 1);
    ds_sim_result_free(&r);
    ds_observed_free(&o);
    ds_trace_free(&t);
}

/* Malformed observed schedules: one message with file, line and column. */
static void test_bad_observed(void **st)
{
    (void)st;
    static const struct {
        const char *text;
        long line;
        const char *field, *needle;
    } cases[] = {
        {"job_id,submit,start,end,node,class,last\n9,0,0,10,-1,G,1\n", 2, "job_id", "not in the trace"},
        {"job_id,submit,start,end,node,class,last\n1,0,0,10,-1,X,1\n", 2, "class", "not G or BE"},
        {"job_id,submit,start,end,node,class,last\n1,5,0,10,-1,G,1\n", 2, "end", "start after its submit"},
        {"job_id,submit,start,end,node,class,last\n1,0,20,10,-1,G,1\n", 2, "end", "end after its start"},
        {"job_id,submit,start,end,node,class,last\n1,0,0,50,-1,G,0\n1,0,40,90,-1,G,1\n", 3, "start", "overlap"},
        {"job_id,submit,start,end,node,class,last\n1,0,0,50,-1,G,1\n1,0,60,90,-1,G,0\n", 3, "last", "final run"},
        {"job_id,submit,start,end,node,class,last\n1,0,0,5x,-1,G,1\n", 2, "end", ""},
        {"job_id,submit,start,end,node,class\n1,0,0,5,-1,G\n", 1, "last", "missing required column"},
        {"", 0, "", "empty file"},
        /* issue 24: the trace reader's bounds; a run of 2^40 s exhausted memory in the scored series */
        {"job_id,submit,start,end,node,class,last\n1,0,0,100,0,G,1\n2,10,10,1099511627776,0,G,1\n", 3, "end",
         "longer than a job's 31622400 s"},
        {"job_id,submit,start,end,node,class,last\n1,0,0,100,0,G,1\n2,10,94867200,94867300,0,G,1\n", 3, "end",
         "spans more than 1098 days"},
        {"job_id,submit,start,end,node,class,last\n2,94867200,94867200,94867300,0,G,1\n1,0,0,100,0,G,1\n", 3, "submit",
         "spans more than 1098 days"},
    };
    ds_trace_t t;
    tu_trace(&t, "ta:4", "1 ta 1 0 0; 2 ta 1 0 0");
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        write_file(tpath("bad.csv"), cases[i].text);
        ds_observed_t o;
        ds_error_t err;
        ds_error_clear(&err);
        assert_int_not_equal(ds_observed_read(&o, &t, tpath("bad.csv"), &err), 0);
        tu_expect_error(&err, "bad.csv", cases[i].line, cases[i].field, cases[i].needle);
    }
    ds_trace_free(&t);
}

/* The replay policy refuses a schedule that does not fit its trace (durations must be the runs' work). */
static void test_replay_policy_checks(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "ta:4", "1 ta 1 0 100");
    ds_spell_t sp = {0, 50, -1, DS_CLASS_G, 1};
    int64_t first[2] = {0, 1};
    ds_script_t sc = {&sp, first, 1};
    ds_sim_config_t c;
    cluster(&c);
    c.engine.restart_small = c.engine.restart_large = 0;
    c.policy = &ds_policy_replay;
    c.policy_config = &sc;
    ds_sim_result_t r;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_not_equal(ds_sim_run(&t, &c, &r, &err), 0);
    assert_non_null(strstr(err.msg, "not the 50 s its runs last"));
    t.jobs[0].duration = 50;
    c.engine.restart_small = 40;
    ds_error_clear(&err);
    assert_int_not_equal(ds_sim_run(&t, &c, &r, &err), 0);
    assert_non_null(strstr(err.msg, "restart overheads of 0"));
    c.engine.restart_small = 0;
    tu_sim(&t, &c, &r);
    assert_int_equal(r.end[0], 50);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

static int run(const char *args, const char *env, char **err)
{
    char cmd[4096], e[700];
    snprintf(e, sizeof e, "%s/stderr", tmpdir);
    snprintf(cmd, sizeof cmd, "%s '%s' replay-live %s >/dev/null 2>'%s'", env ? env : "", getenv("DS_BIN"), args, e);
    int stt = system(cmd);
    assert_true(stt != -1 && WIFEXITED(stt));
    *err = tu_slurp(e, NULL);
    return WEXITSTATUS(stt);
}

/* The command: bad usage and inputs the cluster cannot run are refused before anything is submitted;
 * --score rescores a folder without a cluster. */
static void test_cli(void **st)
{
    (void)st;
    if (!getenv("DS_BIN")) skip();
    write_file(tpath("jobs.csv"), "job_id,tenant,gpus,submit,duration\n1,ta,2,0,600\n2,tb,4,30,1200\n3,ta,1,60,300\n");
    write_file(tpath("big.csv"), "job_id,tenant,gpus,submit,duration\n1,ta,8,0,600\n");
    write_file(tpath("ten.csv"), "tenant,quota_gpus\nta,8\ntb,8\n");
    char args[3000], *err;
    snprintf(args, sizeof args, "--trace %s --vc-config %s --variant slurm-quota", tpath("jobs.csv"), tpath("ten.csv"));
    assert_int_equal(run(args, NULL, &err), 2);
    assert_non_null(strstr(err, "--out DIR is required"));
    free(err);
    snprintf(args, sizeof args, "--trace %s --vc-config %s --variant slurm-magic --out %s", tpath("jobs.csv"),
             tpath("ten.csv"), tpath("o"));
    assert_int_equal(run(args, NULL, &err), 2);
    assert_non_null(strstr(err, "'slurm-magic' is not slurm-quota, slurm-borrow or deepshared"));
    free(err);
    snprintf(args, sizeof args, "--trace %s --vc-config %s --out %s", tpath("jobs.csv"), tpath("ten.csv"), tpath("o"));
    assert_int_equal(run(args, NULL, &err), 2);
    assert_non_null(strstr(err, "--variant is required"));
    free(err);
    snprintf(args, sizeof args, "--trace %s --vc-config %s --variant deepshared --compress 0 --out %s", tpath("jobs.csv"),
             tpath("ten.csv"), tpath("o"));
    assert_int_equal(run(args, NULL, &err), 2);
    assert_non_null(strstr(err, "--compress"));
    free(err);
    snprintf(args, sizeof args, "--trace %s --vc-config %s --variant deepshared --mode partitioned --out %s",
             tpath("jobs.csv"), tpath("ten.csv"), tpath("o"));
    assert_int_equal(run(args, NULL, &err), 2);
    assert_non_null(strstr(err, "does not apply"));
    free(err);
    /* an 8-GPU job on 4-GPU nodes: refused with its line, before Slurm is asked anything */
    snprintf(args, sizeof args, "--trace %s --vc-config %s --variant slurm-quota --out %s", tpath("big.csv"),
             tpath("ten.csv"), tpath("o"));
    assert_int_equal(run(args, "PATH=/nonexistent", &err), 2);
    assert_non_null(strstr(err, "big.csv:2: job 1 asks 8 GPUs, more than a node's 4"));
    free(err);
    /* no Slurm commands at all: a clear message, exit 1 */
    snprintf(args, sizeof args, "--trace %s --vc-config %s --variant slurm-quota --out %s", tpath("jobs.csv"),
             tpath("ten.csv"), tpath("o"));
    assert_int_equal(run(args, "PATH=/nonexistent", &err), 1);
    assert_non_null(strstr(err, "Slurm does not answer"));
    free(err);
    /* --score: the folder's observed.csv, scored without a cluster; summary.json and jobs.csv written */
    assert_int_equal(system(NULL) != 0, 1);
    char mk[800];
    snprintf(mk, sizeof mk, "mkdir -p '%s'", tpath("s"));
    assert_int_equal(system(mk), 0);
    write_file(tpath("s/observed.csv"), "job_id,submit,start,end,node,class,last\n1,0,1,601,0,G,1\n2,31,32,1232,1,G,1\n"
                                        "3,60,62,300,2,BE,0\n3,60,330,400,2,G,1\n");
    snprintf(args, sizeof args, "--trace %s --vc-config %s --score --out %s --window 0:3600 --json %s", tpath("jobs.csv"),
             tpath("ten.csv"), tpath("s"), tpath("s/out.json"));
    assert_int_equal(run(args, NULL, &err), 0);
    free(err);
    char *js = tu_slurp(tpath("s/out.json"), NULL);
    assert_non_null(js);
    assert_non_null(strstr(js, "\"preemptions\": 1"));
    assert_non_null(strstr(js, "\"jobs\": 3"));
    free(js);
    js = tu_slurp(tpath("s/summary.json"), NULL);
    assert_non_null(js);
    free(js);
    js = tu_slurp(tpath("s/jobs.csv"), NULL);
    assert_non_null(js);
    free(js);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_score_reproduces_simulation),
        cmocka_unit_test(test_requeue_and_nodes),
        cmocka_unit_test(test_incomplete_jobs_dropped),
        cmocka_unit_test(test_bad_observed),
        cmocka_unit_test(test_replay_policy_checks),
        cmocka_unit_test(test_cli),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
