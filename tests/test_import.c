/* test_import.c: 'deepshare import' on hand-written fixtures of each published format (tests/fixtures/import):
 * the exact jobs.csv and tenants.csv, every option, file:line:column errors, all-or-nothing writes, --skip-bad,
 * and simulate/compare run end to end on what import wrote. */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "deepshare/import.h"

static char tmpdir[512];
static char *out_text, *err_text;

static const char *bin(void) { return getenv("DS_BIN"); }

/* A fixture's path (tests/fixtures/import/NAME under DS_SRC). */
static const char *fx(const char *name)
{
    static char buf[4][1024];
    static int slot;
    char *p = buf[slot++ % 4];
    snprintf(p, sizeof buf[0], "%s/tests/fixtures/import/%s", getenv("DS_SRC"), name);
    return p;
}

/* A path in this test's scratch folder. */
static const char *tmp(const char *name)
{
    static char buf[4][1024];
    static int slot;
    char *p = buf[slot++ % 4];
    snprintf(p, sizeof buf[0], "%s/%s", tmpdir, name);
    return p;
}

/* Runs "deepshare ARGS" (printf-style); stdout and stderr land in out_text/err_text; returns the exit status. */
static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
    char args[6000], cmd[8000];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "'%s' %s >'%s/stdout' 2>'%s/stderr'", bin(), args, tmpdir, tmpdir);
    int st = system(cmd);
    assert_true(st != -1 && WIFEXITED(st));
    free(out_text);
    free(err_text);
    out_text = tu_slurp(tmp("stdout"), NULL);
    err_text = tu_slurp(tmp("stderr"), NULL);
    if (WEXITSTATUS(st)) fprintf(stderr, "[deepshare %s] exit %d: %s", args, WEXITSTATUS(st), err_text);
    return WEXITSTATUS(st);
}

static char *file_in(const char *dir, const char *name)
{
    char p[1200];
    snprintf(p, sizeof p, "%s/%s/%s", tmpdir, dir, name);
    return tu_slurp(p, NULL);
}

static void expect_file(const char *dir, const char *name, const char *want)
{
    char *got = file_in(dir, name);
    assert_non_null(got);
    if (strcmp(got, want)) fprintf(stderr, "%s/%s:\n%s\nwanted:\n%s\n", dir, name, got, want);
    assert_string_equal(got, want);
    free(got);
}

static void expect_out(const char *needle)
{
    if (!strstr(out_text, needle)) fprintf(stderr, "stdout lacks '%s':\n%s\n", needle, out_text);
    assert_non_null(strstr(out_text, needle));
}

static void expect_err(const char *needle)
{
    if (!strstr(err_text, needle)) fprintf(stderr, "stderr lacks '%s':\n%s\n", needle, err_text);
    assert_non_null(strstr(err_text, needle));
}

static int setup(void **st)
{
    (void)st;
    const char *t = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(tmpdir, sizeof tmpdir, "%s/ds_import_%d", t, (int)getpid());
    mkdir(tmpdir, 0777);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    free(out_text);
    free(err_text);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

#define NEED_BIN() do { if (!bin() || !getenv("DS_SRC")) { skip(); return; } } while (0)

static const char helios_jobs[] =
    "job_id,tenant,user,gpus,cpus,submit,duration,state,orig_id\n"
    "1001,vcA,uAlice,1,4,600,3600,completed,1001\n"
    "1002,vcA,uBob,8,32,7200,300,failed,1002\n"
    "1004,vcB,uCarol,16,64,82800,7200,cancelled,1004\n"
    "1006,vcC,uDave,4,16,201600,86400,timeout,1006\n"
    "1008,vcC,uDave,8,32,205200,3600,node_fail,1008\n"
    "1007,vcB,uBob,1,2,259199,30,completed,1007\n";

static void test_helios(void **st)
{
    (void)st;
    NEED_BIN();
    assert_int_equal(run("import helios '%s' --out '%s'", fx("helios_cluster_log.csv"), tmp("h")), 0);
    /* sorted by submit (1004 was submitted before 1005's row), CPU-only 1003 and never-started 1005 dropped,
     * submit counted from midnight of the first day, Slurm ids kept */
    expect_file("h", "jobs.csv", helios_jobs);
    /* derived: every tenant's GPU-hour share is below its largest job, so that (in whole nodes) sets it */
    expect_file("h", "tenants.csv", "tenant,quota_gpus\nvcA,8\nvcB,16\nvcC,8\n");
    expect_out("import helios: 8 jobs read, 6 imported");
    expect_out("dropped 1: CPU-only");
    expect_out("dropped 1: never ran or unfinished");
    expect_out("window:       2020-09-01 00:10:00 to 2020-09-04 00:00:00");
    expect_out("submit 0 is 2020-09-01 00:00:00");
    expect_out("tenants:      3");
    expect_out("GPU-hours:    137.7"); /* 1 + 8*300/3600 + 32 + 96 + 8 + 30/3600 */
    expect_out("quotas:       32 GPUs (4 nodes of 8), derived for an offered load of 0.85");
    expect_out("offered load: 0.060");
}

static void test_helios_sizes(void **st)
{
    (void)st;
    NEED_BIN();
    /* the row of 2020-09-01 (the window's first day); vcZ has no GPUs that day and no jobs: left out */
    assert_int_equal(run("import helios '%s' --vc-sizes '%s' --out '%s'", fx("helios_cluster_log.csv"),
                         fx("helios_cluster_gpu_number.csv"), tmp("hs")), 0);
    expect_file("hs", "tenants.csv", "tenant,quota_gpus\nvcA,16\nvcB,16\nvcC,8\n");
    expect_out("quotas:       40 GPUs (5 nodes of 8) from");
    /* a window starting on 2020-09-02 takes that day's row */
    assert_int_equal(run("import helios '%s' --vc-sizes '%s' --from 2020-09-02 --out '%s'",
                         fx("helios_cluster_log.csv"), fx("helios_cluster_gpu_number.csv"), tmp("hs2")), 0);
    expect_file("hs2", "tenants.csv", "tenant,quota_gpus\nvcA,16\nvcB,32\nvcC,8\n");
    /* a generic tenant file; a tenant it lacks or sizes below its largest job is raised to fit, in nodes */
    const char *q = tu_write_temp("quotas.csv", "tenant,quota_gpus\nvcA,64\nvcB,8\n");
    assert_int_equal(run("import helios '%s' --quotas '%s' --out '%s'", fx("helios_cluster_log.csv"), q, tmp("hq")), 0);
    expect_file("hq", "tenants.csv", "tenant,quota_gpus\nvcA,64\nvcB,16\nvcC,8\n");
    expect_out("2 tenants raised to fit their largest job");
    /* Venus' node layout (",num") with --gpus-per-node */
    q = tu_write_temp("vc.csv", ",num\nvcA,2\nvcB,4\nvcC,1\n");
    assert_int_equal(run("import helios '%s' --vc-sizes '%s' --gpus-per-node 4 --out '%s'",
                         fx("helios_cluster_log.csv"), q, tmp("hn")), 0);
    expect_file("hn", "tenants.csv", "tenant,quota_gpus\nvcA,8\nvcB,16\nvcC,8\n"); /* vcC runs an 8-GPU job */
    expect_out("1 tenants raised to fit their largest job");
    /* a malformed sizes file names its line and column */
    q = tu_write_temp("gpn.csv", "date,vcA,vcB,total\n2020-09-01,8,x,16\n");
    assert_int_equal(run("import helios '%s' --vc-sizes '%s' --out '%s'", fx("helios_cluster_log.csv"), q, tmp("hx")), 1);
    expect_err(":2: column 'vcB': 'x' is not an integer");
}

static void test_helios_tenant_by_user(void **st)
{
    (void)st;
    NEED_BIN();
    assert_int_equal(run("import helios '%s' --tenant-by user --out '%s'", fx("helios_cluster_log.csv"), tmp("hu")), 0);
    char *jobs = file_in("hu", "jobs.csv");
    assert_non_null(strstr(jobs, "\n1001,uAlice,uAlice,1,"));
    free(jobs);
    expect_file("hu", "tenants.csv", "tenant,quota_gpus\nuAlice,8\nuBob,8\nuCarol,16\nuDave,8\n");
}

static void test_acme(void **st)
{
    (void)st;
    NEED_BIN();
    assert_int_equal(run("import acme '%s' --out '%s'", fx("acme_trace_seren.csv"), tmp("a")), 0);
    /* +08:00 stamps are converted to UTC: 00:17:00+08:00 is 16:17:00 the day before */
    expect_file("a", "jobs.csv",
                "job_id,tenant,user,gpus,cpus,submit,duration,state,orig_id\n"
                "9000001,u0a01,u0a01,8,128,58620,120,failed,9000001\n"
                "9000002,u0a01,u0a01,8,128,59100,2700,completed,9000002\n"
                "9000003,u0b02,u0b02,16,256,90000,7200,completed,9000003\n");
    expect_out("window:       2023-02-28 16:17:00");
    /* Seren's nodes have 128 CPUs for 8 GPUs: the summary says simulate needs to know */
    expect_out("--cpus-per-node 128");
    assert_int_equal(run("import acme '%s' --tenant-by type --out '%s'", fx("acme_trace_seren.csv"), tmp("at")), 0);
    expect_file("at", "tenants.csv", "tenant,quota_gpus\nOther,8\nPretrain,8\nSFT,16\n");
}

static void test_philly(void **st)
{
    (void)st;
    NEED_BIN();
    assert_int_equal(run("import philly '%s' --out '%s'", fx("philly_cluster_job_log.json"), tmp("p")), 0);
    /* job 1: two attempts of 60 s and 7200 s on 8 GPUs; job 2: 2+2 GPUs on two machines; 14201 has no attempt and
     * 14202 was still running (end "None"): dropped; 14203's first attempt has no start: only the second counts */
    expect_file("p", "jobs.csv",
                "job_id,tenant,user,gpus,cpus,submit,duration,state,orig_id\n"
                "1,vc0a1b,u00001,8,0,4200,7260,completed,application_1000000000000_14199\n"
                "2,vc2c3d,u00002,4,0,7140,1800,cancelled,application_1000000000000_14200\n"
                "3,vc0a1b,u00001,1,0,124200,600,failed,application_1000000000000_14203\n");
    expect_out("import philly: 5 jobs read, 3 imported");
    expect_out("dropped 2: never ran or unfinished");
    assert_int_equal(run("import philly '%s' --philly-duration last --out '%s'", fx("philly_cluster_job_log.json"),
                         tmp("pl")), 0);
    char *jobs = file_in("pl", "jobs.csv");
    assert_non_null(strstr(jobs, "\n1,vc0a1b,u00001,8,0,4200,7200,completed,"));
    free(jobs);
    assert_int_equal(run("import philly '%s' --tenant-by user --out '%s'", fx("philly_cluster_job_log.json"), tmp("pu")), 0);
    expect_file("pu", "tenants.csv", "tenant,quota_gpus\nu00001,8\nu00002,8\n");
}

static void test_pai(void **st)
{
    (void)st;
    NEED_BIN();
    assert_int_equal(run("import pai '%s' '%s' --out '%s'", fx("pai_job_table.csv"), fx("pai_task_table.csv"),
                         tmp("q")), 0);
    /* af72: a PS without GPUs and 4 workers at 200%% = 8 GPUs, 6 + 4*4 CPUs, tasks from 1739010 to 1744990;
     * 4f05: 100%% of a GPU; 4b3f: 50%% rounds up to one GPU; c0ffee is still running and deadbeef uses no GPU */
    expect_file("q", "jobs.csv",
                "job_id,tenant,user,gpus,cpus,submit,duration,state,orig_id\n"
                "1,user0000bbbb,user0000bbbb,8,22,11000,5980,completed,job000000000000000000003\n"
                "2,user0000aaaa,user0000aaaa,1,6,11100,50,failed,job000000000000000000002\n"
                "3,user0000aaaa,user0000aaaa,1,6,2822800,500,completed,job000000000000000000001\n");
    expect_out("ignored 1 tasks whose job is not in the job table");
    expect_out("window:       1739000 s to 4550801 s");
    assert_int_equal(run("import pai '%s' '%s' '%s' --tenant-by group --out '%s'", fx("pai_job_table.csv"),
                         fx("pai_task_table.csv"), fx("pai_group_tag_table.csv"), tmp("qg")), 0);
    expect_file("qg", "tenants.csv",
                "tenant,quota_gpus\ngroup0000000000000000000000000001,8\ngroup0000000000000000000000000002,8\n");
    assert_int_equal(run("import pai '%s' '%s' --tenant-by gpu-type --out '%s'", fx("pai_job_table.csv"),
                         fx("pai_task_table.csv"), tmp("qt")), 0);
    expect_file("qt", "tenants.csv", "tenant,quota_gpus\nMISC,8\nT4,8\nV100,8\n"); /* job-table order */
    /* group without the group table is bad usage */
    assert_int_equal(run("import pai '%s' '%s' --tenant-by group --out '%s'", fx("pai_job_table.csv"),
                         fx("pai_task_table.csv"), tmp("qx")), 2);
    expect_err("pai_group_tag_table.csv");
    /* a header line copied from the trace's .header files is accepted */
    char *jt = tu_slurp(fx("pai_job_table.csv"), NULL);
    char *with_header = malloc(strlen(jt) + 100);
    sprintf(with_header, "job_name,inst_id,user,status,start_time,end_time\n%s", jt);
    const char *p = tu_write_temp("pai_jobs_h.csv", with_header);
    assert_int_equal(run("import pai '%s' '%s' --out '%s'", p, fx("pai_task_table.csv"), tmp("qh")), 0);
    expect_out("5 jobs read, 3 imported");
    free(jt);
    free(with_header);
}

static void test_filters(void **st)
{
    (void)st;
    NEED_BIN();
    const char *log = fx("helios_cluster_log.csv");
    assert_int_equal(run("import helios '%s' --states completed --out '%s'", log, tmp("f1")), 0);
    expect_out("8 jobs read, 2 imported");
    expect_out("dropped 4: state not in --states");
    assert_int_equal(run("import helios '%s' --states completed,failed,timeout,node_fail --out '%s'", log, tmp("f2")), 0);
    expect_out("8 jobs read, 5 imported");
    assert_int_equal(run("import helios '%s' --min-duration 301 --out '%s'", log, tmp("f3")), 0);
    expect_out("dropped 2: shorter than --min-duration");
    assert_int_equal(run("import helios '%s' --from 2020-09-01T12:00 --to '2020-09-03 08:30:00' --out '%s'", log,
                         tmp("f4")), 0);
    expect_file("f4", "jobs.csv",
                "job_id,tenant,user,gpus,cpus,submit,duration,state,orig_id\n"
                "1004,vcB,uCarol,16,64,82800,7200,cancelled,1004\n"
                "1006,vcC,uDave,4,16,201600,86400,timeout,1006\n");
    expect_out("dropped 4: outside the time window");
    expect_out("window:       2020-09-01 12:00:00 to 2020-09-03 08:30:00 (1.85 days)");
    /* day 2020-09-03 holds 96 + 8 GPU-hours, more than any other */
    assert_int_equal(run("import helios '%s' --busiest-days 1 --out '%s'", log, tmp("f5")), 0);
    expect_out("8 jobs read, 3 imported");
    expect_out("window:       2020-09-03 00:00:00 to 2020-09-04 00:00:00 (1.00 days)");
    /* more days than the trace spans: everything, in a window of that many days */
    assert_int_equal(run("import helios '%s' --busiest-days 30 --out '%s'", log, tmp("f6")), 0);
    expect_out("6 imported");
    /* --load: a low target needs more GPUs than the largest jobs; --gpus-per-node sets the rounding */
    assert_int_equal(run("import helios '%s' --load 0.01 --out '%s'", log, tmp("f7")), 0);
    /* window 258600 s (00:10 on the 1st to 23:59:59 on the 3rd); at load 0.01 vcB's 115230 GPU-seconds need
     * 44.6 GPUs, 6 nodes to the nearest; vcC's 374400 need 144.8, 18 nodes; vcA's 2.3 still its 8-GPU job */
    expect_file("f7", "tenants.csv", "tenant,quota_gpus\nvcA,8\nvcB,48\nvcC,144\n");
    assert_int_equal(run("import helios '%s' --gpus-per-node 2 --out '%s'", log, tmp("f8")), 0);
    expect_file("f8", "tenants.csv", "tenant,quota_gpus\nvcA,8\nvcB,16\nvcC,8\n");
    assert_int_equal(run("import helios '%s' --load 0.01 --gpus-per-node 2 --out '%s'", log, tmp("f9")), 0);
    expect_file("f9", "tenants.csv", "tenant,quota_gpus\nvcA,8\nvcB,44\nvcC,144\n"); /* 22 and 72 nodes of 2 */
    /* PAI's clock is plain seconds */
    assert_int_equal(run("import pai '%s' '%s' --from 1739050 --out '%s'", fx("pai_job_table.csv"),
                         fx("pai_task_table.csv"), tmp("f10")), 0);
    expect_out("5 jobs read, 2 imported");
    /* filters that leave nothing: an error, and the counts say why */
    assert_int_equal(run("import helios '%s' --min-duration 1000000 --out '%s'", log, tmp("f11")), 1);
    expect_err("no job is left to import");
    expect_err("6 shorter than --min-duration");
}

/* A malformed row stops the import with file:line:column; nothing is written, and what DIR held stays. */
static void test_errors_all_or_nothing(void **st)
{
    (void)st;
    NEED_BIN();
    assert_int_equal(run("import helios '%s' --out '%s'", fx("helios_cluster_log.csv"), tmp("e")), 0);
    const char *bad = tu_write_temp("bad_log.csv",
                                    "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
                                    "1,u,vcA,1,1,1,COMPLETED,2020-09-01 00:00:00,2020-09-01 00:00:00,2020-09-01 00:01:00,60,0\n"
                                    "2,u,vcA,two,1,1,COMPLETED,2020-09-01 00:00:00,2020-09-01 00:00:00,2020-09-01 00:01:00,60,0\n"
                                    "3,u,vcA,1,1,1,COMPLETED,2020-09-31 25:00:00,,,60,0\n"
                                    "4,u,vcA,1,1,1,COMPLETED,2020-09-01 00:00:00,2020-09-01 00:00:00,2020-09");
    char want[1400];
    assert_int_equal(run("import helios '%s' --out '%s'", bad, tmp("e")), 1);
    snprintf(want, sizeof want, "%s:3: column 'gpu_num': 'two' is not an integer", bad);
    expect_err(want);
    expect_file("e", "jobs.csv", helios_jobs); /* the earlier import is untouched */
    /* --skip-bad: the three bad rows (a word, a bad date, a truncated last line) are counted and reported */
    assert_int_equal(run("import helios '%s' --skip-bad --out '%s'", bad, tmp("e")), 0);
    expect_out("4 jobs read, 1 imported");
    snprintf(want, sizeof want, "skipped 3 malformed rows (--skip-bad); the first: %s:3: column 'gpu_num'", bad);
    expect_out(want);
    /* the truncated line alone */
    const char *trunc = tu_write_temp("trunc_log.csv",
                                      "job_id,user,vc,gpu_num,state,submit_time,duration\n"
                                      "1,u,vcA,1,COMPLETED,2020-09-01 00:00:00,60\n"
                                      "2,u,vcA,1,COMPL");
    assert_int_equal(run("import helios '%s' --out '%s'", trunc, tmp("e2")), 1);
    snprintf(want, sizeof want, "%s:3: expected 7 fields as in the header, found 5 (truncated line?)", trunc);
    expect_err(want);
    struct stat sb;
    assert_int_not_equal(stat(tmp("e2/jobs.csv"), &sb), 0);
    /* a missing column */
    const char *nocol = tu_write_temp("nocol.csv", "job_id,user,gpu_num,submit_time,duration\n1,u,1,0,5\n");
    assert_int_equal(run("import helios '%s' --out '%s'", nocol, tmp("e3")), 1);
    snprintf(want, sizeof want, "%s:1: column 'vc': missing required column", nocol);
    expect_err(want);
    /* a job that ends before it starts */
    const char *back = tu_write_temp("back.csv", "job_id,user,vc,gpu_num,submit_time,start_time,end_time\n"
                                                 "1,u,vcA,1,2020-09-01 00:00:00,2020-09-01 00:10:00,2020-09-01 00:00:00\n");
    assert_int_equal(run("import helios '%s' --out '%s'", back, tmp("e4")), 1);
    expect_err(":2: column 'end_time': ends before it starts");
}

static void test_philly_errors(void **st)
{
    (void)st;
    NEED_BIN();
    char want[1400];
    /* invalid JSON inside the second job: the line of the fault */
    const char *bad = tu_write_temp("philly_bad.json",
                                    "[\n"
                                    " {\"status\": \"Pass\", \"vc\": \"v1\", \"jobid\": \"a\", \"user\": \"u\",\n"
                                    "  \"submitted_time\": \"2017-10-07 01:00:00\",\n"
                                    "  \"attempts\": [{\"start_time\": \"2017-10-07 01:00:00\", \"end_time\": \"2017-10-07 02:00:00\",\n"
                                    "                \"detail\": [{\"ip\": \"m1\", \"gpus\": [\"gpu0\"]}]}]},\n"
                                    " {\"status\": \"Pass\", \"vc\": \"v1\", \"jobid\": \"b\", \"user\": \"u\",\n"
                                    "  \"submitted_time\": \"2017-10-07 01:00:00\" \"attempts\": []},\n"
                                    " {\"status\": \"Pass\", \"vc\": \"v1\", \"jobid\": \"c\", \"user\": \"u\",\n"
                                    "  \"submitted_time\": \"yesterday\", \"attempts\": []},\n"
                                    " {\"status\": \"Pass\", \"vc\": \"v1\", \"jobid\": \"d\", \"user\": \"u\",\n"
                                    "  \"submitted_time\": \"2017-10-07 03:00:00\",\n"
                                    "  \"attempts\": [{\"start_time\": \"2017-10-07 03:00:00\", \"end_time\": \"2017-10-07 04:00:00\",\n"
                                    "                \"detail\": [{\"ip\": \"m1\", \"gpus\": [\"gpu0\", \"gpu1\"]}]}]},\n"
                                    " {\"status\": \"Pass\", \"vc\": \"v1\", \"jobid\": \"e\", \"user\": \"u\",\n");
    assert_int_equal(run("import philly '%s' --out '%s'", bad, tmp("pe")), 1);
    snprintf(want, sizeof want, "%s:7: column ", bad);
    expect_err(want);
    /* --skip-bad: the bad JSON, the bad date and the cut-off last job are counted; a and d are imported */
    assert_int_equal(run("import philly '%s' --skip-bad --out '%s'", bad, tmp("pe")), 0);
    expect_out("5 jobs read, 2 imported");
    expect_out("skipped 3 malformed rows");
    /* a field error names the job's first line and the key */
    const char *f2 = tu_write_temp("philly_bad2.json",
                                   "[{\"status\": \"Pass\", \"vc\": \"v1\", \"jobid\": \"a\", \"user\": \"u\",\n"
                                   "  \"submitted_time\": \"2017-10-07 01:00:00\", \"attempts\": []},\n"
                                   " {\"status\": \"Pass\", \"jobid\": \"b\", \"user\": \"u\",\n"
                                   "  \"submitted_time\": \"2017-10-07 01:00:00\", \"attempts\": []}]\n");
    assert_int_equal(run("import philly '%s' --out '%s'", f2, tmp("pe2")), 1);
    snprintf(want, sizeof want, "%s:3: column 'vc': missing key", f2);
    expect_err(want);
    const char *f3 = tu_write_temp("philly_bad3.json",
                                   "[{\"status\": \"Pass\", \"vc\": \"v1\", \"jobid\": \"a\", \"user\": \"u\",\n"
                                   "  \"submitted_time\": \"2017-10-07 01:00:00\", \"attempts\": [\n"
                                   "  {\"start_time\": \"2017-10-07 01:00:00\", \"end_time\": \"soon\", \"detail\": []}]}]\n");
    assert_int_equal(run("import philly '%s' --out '%s'", f3, tmp("pe3")), 1);
    snprintf(want, sizeof want, "%s:1: column 'attempts[0].end_time': 'soon' is not a date", f3);
    expect_err(want);
    const char *f4 = tu_write_temp("philly_bad4.json", "{\"jobs\": []}\n");
    assert_int_equal(run("import philly '%s' --out '%s'", f4, tmp("pe4")), 1);
    expect_err("expected a JSON list of jobs");
}

static void test_pai_errors(void **st)
{
    (void)st;
    NEED_BIN();
    char want[1400];
    const char *jobs = tu_write_temp("pai_j.csv", "j1,i1,u1,Terminated,100.0,200.0\n"
                                                  "j2,i2,u1,Terminated,100.0\n"
                                                  "j3,i3,u1,Terminated,later,200.0\n"
                                                  "j1,i4,u2,Terminated,100.0,200.0\n");
    const char *tasks = tu_write_temp("pai_t.csv", "j1,worker,1.0,Terminated,110.0,190.0,600.0,29.3,100.0,T4\n"
                                                   "j1,worker,x,Terminated,110.0,190.0,600.0,29.3,100.0,T4\n");
    assert_int_equal(run("import pai '%s' '%s' --out '%s'", jobs, tasks, tmp("qe")), 1);
    snprintf(want, sizeof want, "%s:2: expected 6 fields (pai_job_table: job_name,inst_id,...), found 5", jobs);
    expect_err(want);
    assert_int_equal(run("import pai '%s' '%s' --skip-bad --out '%s'", jobs, tasks, tmp("qe")), 0);
    /* a short row, a bad time, a duplicate job name and a bad instance count */
    expect_out("skipped 4 malformed rows");
    expect_out("4 jobs read, 1 imported");
    const char *one = tu_write_temp("pai_j1.csv", "j1,i1,u1,Terminated,100.0,200.0\n");
    assert_int_equal(run("import pai '%s' '%s' --out '%s'", one, tasks, tmp("qe2")), 1);
    snprintf(want, sizeof want, "%s:2: column 'inst_num': 'x' is not a number", tasks);
    expect_err(want);
}

/* Issue 28: PAI's GPU types kept with its machine list (--machines pai_machine_spec.csv): each job asks for the
 * type of its largest task, the node types go to cluster.csv, each tenant's quota is split by its GPU-time per
 * type; a job whose type no machine has is dropped (counted); without the machine list the types are counted
 * only. simulate runs the result. */
static void test_pai_machines(void **st)
{
    (void)st;
    NEED_BIN();
    assert_int_equal(run("import pai '%s' '%s' --machines '%s' --out '%s'", fx("pai_job_table.csv"),
                         fx("pai_task_table.csv"), fx("pai_machine_spec.csv"), tmp("pm")), 0);
    expect_file("pm", "jobs.csv",
                "job_id,tenant,user,gpus,cpus,submit,duration,state,orig_id,gpu_type\n"
                "1,user0000bbbb,user0000bbbb,8,22,11000,5980,completed,job000000000000000000003,V100\n"
                "2,user0000aaaa,user0000aaaa,1,6,11100,50,failed,job000000000000000000002,T4\n"
                "3,user0000aaaa,user0000aaaa,1,6,2822800,500,completed,job000000000000000000001,MISC\n");
    /* aaaa's 8 GPUs: T4 50 GPU-s, MISC 500 -> 0.73 and 7.27, largest remainder to T4; bbbb all V100 */
    expect_file("pm", "tenants.csv", "tenant,quota_gpus,quota_V100,quota_T4,quota_MISC\n"
                                     "user0000aaaa,8,0,1,7\nuser0000bbbb,8,8,0,0\n");
    /* the CPU machine (cap_gpu 0) left out */
    expect_file("pm", "cluster.csv", "gpu_type,nodes,gpus_per_node,cpus_per_node,mem_mib\n"
                                     "V100,2,8,96,\nT4,1,2,96,\nMISC,1,8,96,\n");
    expect_out("(1 nodes without GPUs left out); 3 jobs ask for particular types");
    char cmd[4000];
    snprintf(cmd, sizeof cmd, "simulate --trace '%s/pm/jobs.csv' --vc-config '%s/pm/tenants.csv' --cluster "
             "'%s/pm/cluster.csv' --policy fifo", tmpdir, tmpdir, tmpdir);
    assert_int_equal(run("%s", cmd), 0);
    expect_out("3 jobs, 2 tenants");
    /* no T4 machine: the T4 job is dropped */
    const char *m = tu_write_temp("pai_m.csv", "machine,gpu_type,cap_cpu,cap_mem,cap_gpu\nm1,V100,96,512,8\nm2,MISC,96,512,8\n");
    assert_int_equal(run("import pai '%s' '%s' --machines '%s' --out '%s'", fx("pai_job_table.csv"),
                         fx("pai_task_table.csv"), m, tmp("pm2")), 0);
    expect_out("dropped 1: GPU types no node of the node list has");
    expect_out("5 jobs read, 2 imported");
    /* without the machine list: counted, not kept */
    assert_int_equal(run("import pai '%s' '%s' --out '%s'", fx("pai_job_table.csv"), fx("pai_task_table.csv"),
                         tmp("pm3")), 0);
    expect_out("3 jobs ask for a GPU type, not kept without the machines' types (--machines)");
    /* machine list errors name the file, line and field */
    char want[1400];
    const char *bad[][2] = {
        {"m1,V100,96,512\n", ":1: expected 5 fields (pai_machine_spec"},
        {"m1,V100,96,512,8\nm2,V 100,96,512,8\n", ":2: column 'gpu_type': 'V 100' is not a GPU type name"},
        {"m1,V100,96,512,eight\n", ":1: column 'cap_gpu'"},
        {"m1,V100,96,512,100\n", ":1: 100 GPUs on one node"},
        {"m1,CPU,96,512,0\n", "no machine with GPUs"},
        {"m1,a,1,1,1\nm2,b,1,1,1\nm3,c,1,1,1\nm4,d,1,1,1\nm5,e,1,1,1\nm6,f,1,1,1\nm7,g,1,1,1\nm8,h,1,1,1\nm9,i,1,1,1\n",
         ":9: column 'gpu_type': more than 8 GPU types"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *p = tu_write_temp("pai_mb.csv", bad[i][0]);
        assert_int_equal(run("import pai '%s' '%s' --machines '%s' --out '%s'", fx("pai_job_table.csv"),
                             fx("pai_task_table.csv"), p, tmp("pm4")), 1);
        snprintf(want, sizeof want, "%s%s", bad[i][1][0] == ':' ? p : "", bad[i][1]);
        expect_err(want);
    }
    assert_int_equal(run("import helios '%s' --machines '%s' --out '%s'", fx("helios_cluster_log.csv"), m, tmp("pm5")), 2);
}

/* Issue 28: Alibaba's GPU trace of 2023 in its published format: pods with num_gpu, gpu_milli, gpu_spec and
 * qos, nodes with their GPU model. Tenants are the QoS classes; a CPU-only pod, a pending one, one asking for a
 * type no node has (A100) and one asking for more T4s than whole T4 nodes give (6 on nodes of 4) are dropped;
 * a GPU share (gpu_milli 220) takes the GPU; gpu_spec 'V100M16|V100M32' keeps both types. */
static void test_alibaba(void **st)
{
    (void)st;
    NEED_BIN();
    assert_int_equal(run("import alibaba '%s' '%s' --out '%s'", fx("alibaba_pod_list.csv"), fx("alibaba_node_list.csv"),
                         tmp("al")), 0);
    expect_file("al", "jobs.csv",
                "job_id,tenant,user,gpus,cpus,submit,duration,state,orig_id,gpu_type\n"
                "1,LS,LS,2,8,14400,3500,completed,openb-pod-0004,T4\n"
                "2,Burstable,Burstable,8,88,451897,1332357,completed,openb-pod-0001,\n"
                "3,BE,BE,1,4,693575,294651,other,openb-pod-0002,\n"
                "4,LS,LS,1,16,981458,1512,other,openb-pod-0003,V100M32|V100M16\n");
    /* T4: two nodes, of 2 and 4 GPUs, modelled as 2 x 4 with the fewer CPUs and MiB */
    expect_file("al", "cluster.csv", "gpu_type,nodes,gpus_per_node,cpus_per_node,mem_mib\n"
                                     "V100M32,1,8,96,786432\nV100M16,1,8,96,786432\nT4,2,4,64,262144\n");
    /* LS: 7000 T4 GPU-s, 756 on each V100 type -> 6.58, 0.71, 0.71 of its 8; the untyped tenants by the
     * types' GPUs (8, 8, 6 listed) -> 3, 3, 2; Burstable's 8-GPU pod fits none of these: its largest type
     * quota is raised to 8, so partitioned mode can run it */
    expect_file("al", "tenants.csv", "tenant,quota_gpus,quota_V100M32,quota_V100M16,quota_T4\n"
                                     "Burstable,13,8,3,2\nBE,8,3,3,2\nLS,8,1,1,6\n");
    expect_out("1 tenants raised to fit their largest job");
    expect_out("8 jobs read, 4 imported");
    expect_out("dropped 2: GPU types no node of the node list has");
    expect_out("T4: 2 nodes x 4 GPUs (1 nodes have fewer: 6 GPUs listed, modelled as 8)");
    char cmd[4000];
    snprintf(cmd, sizeof cmd, "simulate --trace '%s/al/jobs.csv' --vc-config '%s/al/tenants.csv' --cluster "
             "'%s/al/cluster.csv' --policy deepshare", tmpdir, tmpdir, tmpdir);
    assert_int_equal(run("%s", cmd), 0);
    expect_out("4 jobs, 3 tenants");
    /* usage */
    assert_int_equal(run("import alibaba '%s' --out '%s'", fx("alibaba_pod_list.csv"), tmp("al2")), 2);
    assert_int_equal(run("import alibaba '%s' '%s' --tenant-by user --out '%s'", fx("alibaba_pod_list.csv"),
                         fx("alibaba_node_list.csv"), tmp("al2")), 2);
}

/* The 2023 readers' errors name the file, line and field; --skip-bad skips malformed pods. */
static void test_alibaba_errors(void **st)
{
    (void)st;
    NEED_BIN();
    char want[1400];
    static const char head[] =
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";
    static const char ok[] = "p1,1000,10,1,1000,nan,LS,Succeeded,100,200,110\n";
    static const char *const rows[][2] = {
        {"p2,1000,10,x,1000,nan,LS,Succeeded,100,200,110\n", ":3: column 'num_gpu'"},
        {"p2,1000,10,1,1000,V100 M16,LS,Succeeded,100,200,110\n", ":3: column 'gpu_spec': 'V100 M16' is not a GPU type name"},
        {"p2,1000,10,1,1000,nan,LS,Sleeping,100,200,110\n", ":3: column 'pod_phase': 'Sleeping' is not a pod phase"},
        {"p2,1000,10,1,1000,nan,LS,Succeeded,100,90,105\n", ":3: column 'deletion_time': deleted before it was scheduled"},
        {"p2,1000,10,1,1000,nan,LS,Succeeded,100,200,90\n", ":3: column 'scheduled_time': scheduled before its creation"},
        {"p2,1000,10,1,1001,nan,LS,Succeeded,100,200,110\n", ":3: column 'gpu_milli'"},
        {"p2,1000,10,1,1000,nan,LS,Succeeded,,200,110\n", ":3: column 'creation_time': no creation time"},
        {"p2,1000,10,1,1000,nan,,Succeeded,100,200,110\n", ":3: column 'qos'"},
        {"p2,1000,10,1\n", ":3:"},
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        char text[2000];
        snprintf(text, sizeof text, "%s%s%s", head, ok, rows[i][0]);
        const char *p = tu_write_temp("ali_pods.csv", text);
        assert_int_equal(run("import alibaba '%s' '%s' --out '%s'", p, fx("alibaba_node_list.csv"), tmp("ae")), 1);
        snprintf(want, sizeof want, "%s%s", p, rows[i][1]);
        expect_err(want);
        assert_int_equal(run("import alibaba '%s' '%s' --skip-bad --out '%s'", p, fx("alibaba_node_list.csv"), tmp("ae")), 0);
        expect_out("skipped 1 malformed rows");
    }
    const char *nohead = tu_write_temp("ali_pods2.csv", "name,num_gpu,qos\np1,1,LS\n");
    assert_int_equal(run("import alibaba '%s' '%s' --out '%s'", nohead, fx("alibaba_node_list.csv"), tmp("ae")), 1);
    snprintf(want, sizeof want, "%s:1: column 'pod_phase': missing required column", nohead);
    expect_err(want);
    static const char *const nodes[][2] = {
        {"sn,cpu_milli,memory_mib,gpu,model\nn1,1000,10,8,V100\nn2,1000,10,8,V|100\n", ":3: column 'model'"},
        {"sn,cpu_milli,memory_mib,gpu,model\nn1,1000,10,-8,V100\n", ":2: column 'gpu'"},
        {"sn,cpu_milli,memory_mib,gpu,model\nn1,1000,10,8,nan\n", ":2: column 'model': 'nan' is not a GPU type name"},
        {"sn,cpu_milli,memory_mib,gpu\nn1,1000,10,8\n", ":1: column 'model'"},
        {"sn,cpu_milli,memory_mib,gpu,model\nn1,1000,10,0,nan\n", "no node with GPUs"},
    };
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
        const char *p = tu_write_temp("ali_nodes.csv", nodes[i][0]);
        assert_int_equal(run("import alibaba '%s' '%s' --out '%s'", fx("alibaba_pod_list.csv"), p, tmp("ae")), 1);
        snprintf(want, sizeof want, "%s%s", nodes[i][1][0] == ':' ? p : "", nodes[i][1]);
        expect_err(want);
    }
}

/* Issue 24: what an importer keeps, simulate must take: every limit of the simulator (trace.h) is applied to
 * the rows kept, with the input's file, line and column, or the row is counted under --skip-bad; whole-trace
 * limits (span, tenants) name the first job beyond them; and simulate runs on every import that succeeds. */
static void test_simulator_limits(void **st)
{
    (void)st;
    NEED_BIN();
    char want[1400];
    static const char head[] = "job_id,user,vc,gpu_num,cpu_num,state,submit_time,duration\n";
    static const struct {
        const char *rows;
        long line;
        const char *field, *needle;
    } cases[] = {
        /* a double past int64 (undefined in the conversion: UBSan found it) */
        {"1,u,vcA,1,1,COMPLETED,0,1e300\n", 2, "duration", "above the maximum 4e+15"},
        {"1,u,vcA,1,1,COMPLETED,0,100\n2,u,vcA,1,1,COMPLETED,0,31622401\n", 3, "duration", "at most 31622400 s"},
        {"1,u,vcA,100001,1,COMPLETED,0,100\n", 2, "gpu_num", "at most 100000 GPUs"},
        {"1,u,vcA,32776,1,COMPLETED,0,100\n", 2, "gpu_num", "4096 whole nodes"}, /* 4097 nodes of 8 */
        {"1,u,vcA,1,100000001,COMPLETED,0,100\n", 2, "cpu_num", "at most 100000000"},
        {"1,u,vcA,1,1,COMPLETED,0,100\n2,u,vcA,1,1,COMPLETED,63244801,100\n", 3, "", "more than 732 days after"},
        {"1,u,vc\x01A,1,1,COMPLETED,0,100\n", 2, "vc", "control character"},
        {"1,u,\" \",1,1,COMPLETED,0,100\n", 2, "vc", "empty tenant name"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[2000];
        snprintf(text, sizeof text, "%s%s", head, cases[i].rows);
        const char *log = tu_write_temp("limits.csv", text);
        assert_int_equal(run("import helios '%s' --out '%s'", log, tmp("lim")), 1);
        if (cases[i].field[0])
            snprintf(want, sizeof want, "%s:%ld: column '%s': ", log, cases[i].line, cases[i].field);
        else
            snprintf(want, sizeof want, "%s:%ld: ", log, cases[i].line);
        expect_err(want);
        expect_err(cases[i].needle);
    }
    /* --skip-bad counts the rows beyond a job's limits; what is written reads back and runs */
    const char *mixed = tu_write_temp("mixed.csv", "job_id,user,vc,gpu_num,cpu_num,state,submit_time,duration\n"
                                                   "1,u,vcA,500000,1,COMPLETED,0,10\n"
                                                   "2,u,vcA,1,500000000,COMPLETED,0,10\n"
                                                   "3,u,vcA,1,1,COMPLETED,0,10000000000\n"
                                                   "4,u,\" vcA \",8,1,COMPLETED,60,3600\n"
                                                   "5,\"u\x02x\",vcA,4,1,COMPLETED,120,600\n");
    assert_int_equal(run("import helios '%s' --skip-bad --out '%s'", mixed, tmp("mix")), 0);
    expect_out("5 jobs read, 2 imported");
    expect_out("skipped 3 malformed rows");
    /* " vcA " is vcA, as simulate reads it; a control character in a user becomes a blank */
    expect_file("mix", "tenants.csv", "tenant,quota_gpus\nvcA,8\n");
    expect_file("mix", "jobs.csv", "job_id,tenant,user,gpus,cpus,submit,duration,state,orig_id\n"
                                   "4,vcA,u,8,1,60,3600,completed,4\n5,vcA,u x,4,1,120,600,completed,5\n");
    assert_int_equal(run("simulate --trace '%s' --vc-config '%s' --policy fifo", tmp("mix/jobs.csv"),
                         tmp("mix/tenants.csv")), 0);
    /* a NUL byte stops the reader even under --skip-bad (it once skipped the same line 20 million times) */
    FILE *f = fopen(tmp("nul.csv"), "w");
    static const char nul_rows[] = "job_id,user,vc,gpu_num,cpu_num,state,submit_time,duration\n"
                                   "1,u,vcA,1,1,COMPLETED,0,10\n2,u,vcA,1\0,1,COMPLETED,0,10\n3,u,vcA,1,1,COMPLETED,0,10\n";
    fwrite(nul_rows, 1, sizeof nul_rows - 1, f);
    fclose(f);
    assert_int_equal(run("import helios '%s' --skip-bad --out '%s'", tmp("nul.csv"), tmp("nul")), 1);
    snprintf(want, sizeof want, "%s:3: NUL byte in line (binary file?)", tmp("nul.csv"));
    expect_err(want);
    /* more tenants than simulate takes: named at the first job of the 1001st */
    f = fopen(tmp("many.csv"), "w");
    fputs(head, f);
    for (int i = 1; i <= 1001; i++) fprintf(f, "%d,u,t%d,1,1,COMPLETED,%d,10\n", i, i, i);
    fclose(f);
    assert_int_equal(run("import helios '%s' --out '%s'", tmp("many.csv"), tmp("many")), 1);
    snprintf(want, sizeof want, "%s:1002: tenant 't1001' is the 1001th with jobs: the simulator takes at most 1000",
             tmp("many.csv"));
    expect_err(want);
    /* a quota beyond one tenant's bound: derived from 34 simultaneous jobs of 30000 GPUs, or given */
    f = fopen(tmp("big.csv"), "w");
    fputs(head, f);
    for (int i = 1; i <= 34; i++) fprintf(f, "%d,u,vcA,30000,1,COMPLETED,0,3600\n", i);
    fclose(f);
    assert_int_equal(run("import helios '%s' --out '%s'", tmp("big.csv"), tmp("big")), 1);
    expect_err("tenant 'vcA' (first job here) would get a quota of");
    const char *sz = tu_write_temp("sizes.csv", "date,vcA,total\n2020-01-01,2000000,2000000\n");
    const char *one = tu_write_temp("one.csv", "job_id,user,vc,gpu_num,state,submit_time,duration\n"
                                               "1,u,vcA,1,COMPLETED,2020-01-01 00:00:00,10\n");
    assert_int_equal(run("import helios '%s' --vc-sizes '%s' --out '%s'", one, sz, tmp("sz")), 1);
    snprintf(want, sizeof want, "%s:2: column 'vcA': value 2000000 is above the maximum 1000000", sz);
    expect_err(want);
}

/* Issue 24: --busiest-days sized an array by the days between the first and last submission: 4e15 s of
 * span asked for 370 GB. Now one pass over the sorted jobs, whatever the span; and the window it picks
 * is simulate's to take. */
static void test_busiest_any_span(void **st)
{
    (void)st;
    NEED_BIN();
    const char *log = tu_write_temp("span.csv", "job_id,user,vc,gpu_num,cpu_num,state,submit_time,duration\n"
                                                "1,u,vcA,1,1,COMPLETED,-4000000000000000,100\n"
                                                "2,u,vcA,8,1,COMPLETED,0,100\n"
                                                "3,u,vcA,1,1,COMPLETED,86399,100\n"
                                                "4,u,vcA,1,1,COMPLETED,4000000000000000,100\n");
    assert_int_equal(run("import helios '%s' --out '%s'", log, tmp("sp")), 1);
    expect_err("more than 732 days after the first job");
    assert_int_equal(run("import helios '%s' --busiest-days 2 --out '%s'", log, tmp("sp")), 0);
    expect_out("4 jobs read, 2 imported");
    /* the two days ending on the busiest (the earliest such run, as before) */
    expect_out("window:       -86400 s to 86400 s (2.00 days)");
    assert_int_equal(run("simulate --trace '%s' --vc-config '%s' --policy fifo", tmp("sp/jobs.csv"),
                         tmp("sp/tenants.csv")), 0);
}

/* Issue 24: a window shorter than the jobs (here 1 s) derived 813,176 GPUs for a tenant with one 8-GPU job;
 * the work is now spread over the jobs' mean run time, with a warning. */
static void test_degenerate_window(void **st)
{
    (void)st;
    NEED_BIN();
    const char *log = tu_write_temp("burst.csv", "job_id,user,vc,gpu_num,cpu_num,state,submit_time,duration\n"
                                                 "1,u,vcA,8,1,COMPLETED,0,86400\n2,u,vcB,8,1,COMPLETED,0,86400\n");
    assert_int_equal(run("import helios '%s' --out '%s'", log, tmp("dw")), 0);
    expect_err("warning: the submission window (1 s) is shorter than the jobs' mean run time (86400 s");
    expect_file("dw", "tenants.csv", "tenant,quota_gpus\nvcA,8\nvcB,8\n");
    expect_out("offered load: 1.000 (GPU-time submitted / (quota GPUs x the jobs' mean run time");
    /* a window longer than the jobs: no warning */
    assert_int_equal(run("import helios '%s' --out '%s'", fx("helios_cluster_log.csv"), tmp("dw2")), 0);
    assert_null(strstr(err_text, "warning"));
}

/* Issue 24: Philly's log was loaded whole before its first byte was looked at, and a job had no bound; now
 * it is streamed, a job is at most 16 MiB, and binary input is named at once. Names with control characters
 * (JSON escapes) are refused for tenants and blanked for users and ids. */
static void test_philly_bounds(void **st)
{
    (void)st;
    NEED_BIN();
    FILE *f = fopen(tmp("zeros.json"), "w");
    static char zeros[1 << 16];
    for (int i = 0; i < 64; i++) fwrite(zeros, 1, sizeof zeros, f);
    fclose(f);
    assert_int_equal(run("import philly '%s' --out '%s'", tmp("zeros.json"), tmp("pz")), 1);
    expect_err("not Philly's cluster_job_log");
    f = fopen(tmp("long.json"), "w");
    fputs("[{\"jobid\": \"", f);
    static char a[1 << 16];
    memset(a, 'a', sizeof a);
    for (int i = 0; i < 272; i++) fwrite(a, 1, sizeof a, f); /* 17 MiB */
    fputs("\"}]", f);
    fclose(f);
    assert_int_equal(run("import philly '%s' --out '%s'", tmp("long.json"), tmp("pl")), 1);
    expect_err(":1: the job starting here is longer than 16777216 bytes");
    const char *ctl = tu_write_temp("ctl.json",
                                    "[{\"jobid\": \"a\\u0001b\", \"status\": \"Pass\", \"vc\": \"v1\", \"user\": \"u\\nv\",\n"
                                    "  \"submitted_time\": \"2017-10-07 01:00:00\", \"attempts\": [{\"start_time\": "
                                    "\"2017-10-07 01:00:00\", \"end_time\": \"2017-10-07 02:00:00\", \"detail\": [{\"gpus\": [\"g0\"]}]}]},\n"
                                    " {\"jobid\": \"b\", \"status\": \"Pass\", \"vc\": \"v\\u001b[31m\", \"user\": \"u\",\n"
                                    "  \"submitted_time\": \"2017-10-07 01:00:00\", \"attempts\": []}]\n");
    assert_int_equal(run("import philly '%s' --out '%s'", ctl, tmp("pc")), 1);
    expect_err(":3: column 'vc': tenant name 'v...' holds a control character (byte 2, 0x1B)");
    assert_int_equal(run("import philly '%s' --skip-bad --out '%s'", ctl, tmp("pc")), 0);
    expect_file("pc", "jobs.csv", "job_id,tenant,user,gpus,cpus,submit,duration,state,orig_id\n"
                                  "1,v1,u v,1,0,3600,3600,completed,a b\n");
    /* the date parser read past a zone of one letter (ASan, in jansson's exact-size strings) */
    const char *z = tu_write_temp("zone.json", "[{\"jobid\": \"a\", \"status\": \"Pass\", \"vc\": \"v1\", \"user\": \"u\",\n"
                                               "  \"submitted_time\": \"2017-10-07 01:00 X\", \"attempts\": []}]\n");
    assert_int_equal(run("import philly '%s' --out '%s'", z, tmp("pzz")), 1);
    expect_err(":1: column 'submitted_time': '2017-10-07 01:00 X' is not a date");
}

/* Issue 24: PAI's GPUs add up over tasks (inst_num x plan_gpu); a sum beyond the simulator's limit is named
 * at the job's line, or skipped. */
static void test_pai_limits(void **st)
{
    (void)st;
    NEED_BIN();
    const char *jobs = tu_write_temp("pl_j.csv", "j1,i1,u1,Terminated,0,100\nj2,i2,u1,Terminated,0,100\n");
    const char *tasks = tu_write_temp("pl_t.csv", "j1,w,1e300,Terminated,0,100,100,1,1e300,V100\n"
                                                  "j2,w,2,Terminated,0,100,100,1,50,V100\n");
    assert_int_equal(run("import pai '%s' '%s' --out '%s'", jobs, tasks, tmp("pl")), 1);
    char want[1400];
    snprintf(want, sizeof want, "%s:1: column 'plan_gpu (inst_num x plan_gpu of its tasks)': 2147483647 GPUs", jobs);
    expect_err(want);
    assert_int_equal(run("import pai '%s' '%s' --skip-bad --out '%s'", jobs, tasks, tmp("pl")), 0);
    expect_out("2 jobs read, 1 imported");
}

static void test_usage(void **st)
{
    (void)st;
    NEED_BIN();
    const char *log = fx("helios_cluster_log.csv");
    assert_int_equal(run("import"), 2);
    expect_err("which format?");
    assert_int_equal(run("import slurm '%s' --out '%s'", log, tmp("u")), 2);
    expect_err("unknown format 'slurm'");
    assert_int_equal(run("import helios '%s'", log), 2);
    expect_err("--out DIR is required");
    assert_int_equal(run("import helios '%s' '%s' --out '%s'", log, log, tmp("u")), 2);
    expect_err("helios takes one input file");
    assert_int_equal(run("import pai '%s' --out '%s'", log, tmp("u")), 2);
    expect_err("pai_job_table.csv pai_task_table.csv");
    assert_int_equal(run("import helios '%s' --tenant-by group --out '%s'", log, tmp("u")), 2);
    expect_err("option --tenant-by: 'group' is not one of vc, user for helios");
    assert_int_equal(run("import helios '%s' --states done --out '%s'", log, tmp("u")), 2);
    expect_err("option --states: 'done'");
    assert_int_equal(run("import helios '%s' --from yesterday --out '%s'", log, tmp("u")), 2);
    expect_err("option --from: 'yesterday'");
    assert_int_equal(run("import helios '%s' --from 2020-09-02 --to 2020-09-01 --out '%s'", log, tmp("u")), 2);
    expect_err("--to must be later than --from");
    assert_int_equal(run("import pai '%s' '%s' --from 2020-09-02 --out '%s'", fx("pai_job_table.csv"),
                         fx("pai_task_table.csv"), tmp("u")), 2);
    expect_err("PAI's clock is seconds");
    assert_int_equal(run("import helios '%s' --load 0 --out '%s'", log, tmp("u")), 2);
    expect_err("option --load");
    assert_int_equal(run("import helios '%s' --philly-duration max --out '%s'", log, tmp("u")), 2);
    expect_err("option --philly-duration: 'max'");
    assert_int_equal(run("import helios '%s' --bogus 1 --out '%s'", log, tmp("u")), 2);
    expect_err("unknown option --bogus");
    assert_int_equal(run("import helios /nonexistent/cluster_log.csv --out '%s'", tmp("u")), 1);
    expect_err("/nonexistent/cluster_log.csv: cannot open");
    /* 'deepshare --help' lists import; 'import --help' names every option the parser knows */
    assert_int_equal(run("--help"), 0);
    expect_out("import");
    assert_int_equal(run("import --help"), 0);
    expect_out("usage: deepshare import FORMAT INPUT... --out DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/src/cli/import.c", getenv("DS_SRC"));
    char *src = tu_slurp(path, NULL);
    assert_non_null(src);
    int n = 0;
    for (char *p = src; (p = strstr(p, "strcmp(name, \"")) != NULL; n++) {
        p += strlen("strcmp(name, \"");
        char flag[128];
        snprintf(flag, sizeof flag, "--%.*s", (int)(strchr(p, '"') - p), p);
        expect_out(flag);
    }
    assert_true(n >= 13);
    free(src);
}

/* What import writes is a trace simulate and compare run as they are. */
static void test_end_to_end(void **st)
{
    (void)st;
    NEED_BIN();
    assert_int_equal(run("import helios '%s' --out '%s'", fx("helios_cluster_log.csv"), tmp("x")), 0);
    assert_int_equal(run("simulate --trace '%s' --vc-config '%s' --policy fifo --mode partitioned --json '%s'",
                         tmp("x/jobs.csv"), tmp("x/tenants.csv"), tmp("x/sim.json")), 0);
    char *json = file_in("x", "sim.json");
    assert_non_null(json);
    assert_non_null(strstr(json, "\"jobs\": 6") ? json : strstr(json, "\"jobs\":6"));
    free(json);
    assert_int_equal(run("compare --trace '%s' --vc-config '%s' --policies fifo,sjf,deepshare --no-plots --quiet "
                         "--out '%s'", tmp("x/jobs.csv"), tmp("x/tenants.csv"), tmp("x/report")), 0);
    char *csv = file_in("x/report", "summary.csv");
    assert_non_null(csv);
    assert_non_null(strstr(csv, "fifo"));
    assert_non_null(strstr(csv, "deepshare"));
    free(csv);
    /* the other formats, in both cluster modes (lucid needs more tenants than a fixture has to lend its
     * profiler nodes; qssf needs estimates) */
    static const char *const fmts[][4] = {
        {"philly", "philly_cluster_job_log.json", "", ""},
        {"pai", "pai_job_table.csv", "pai_task_table.csv", ""},
        {"acme", "acme_trace_seren.csv", "", "--cpus-per-node 128"},
    };
    for (int k = 0; k < 3; k++) {
        char a[1100], b[1100];
        snprintf(a, sizeof a, "'%s'", fx(fmts[k][1]));
        snprintf(b, sizeof b, "%s%s%s", fmts[k][2][0] ? "'" : "", fmts[k][2][0] ? fx(fmts[k][2]) : "",
                 fmts[k][2][0] ? "'" : "");
        assert_int_equal(run("import %s %s %s --out '%s'", fmts[k][0], a, b, tmp(fmts[k][0])), 0);
        for (int p = 0; p < 4; p++) {
            static const char *const pol[] = {"fifo", "sjf", "tiresias", "deepshare"};
            char j[1100], t[1100];
            snprintf(j, sizeof j, "%s/jobs.csv", tmp(fmts[k][0]));
            snprintf(t, sizeof t, "%s/tenants.csv", tmp(fmts[k][0]));
            assert_int_equal(run("simulate --trace '%s' --vc-config '%s' --policy %s --mode both --quiet %s", j, t,
                                 pol[p], fmts[k][3]), 0);
        }
    }
}

/* The Venus trace as Lucid republishes it (plain-second clock, no start/end) with its vc_config: every job. */
static void test_venus_data(void **st)
{
    (void)st;
    NEED_BIN();
    char jobs[1024], vc[1024];
    const char *p = tu_data("venus/venus_sept_jobs.csv"); /* tu_data's buffer is reused: copy */
    if (!p) { skip(); return; }
    snprintf(jobs, sizeof jobs, "%s", p);
    if (!(p = tu_data("venus/vc_config.csv"))) { skip(); return; }
    snprintf(vc, sizeof vc, "%s", p);
    assert_int_equal(run("import helios '%s' --vc-sizes '%s' --out '%s'", jobs, vc, tmp("v")), 0);
    expect_out("23859 jobs read, 23859 imported");
    expect_out("quotas:       1080 GPUs (135 nodes of 8)");
}

/* Time stamps as the traces write them. */
static void test_parse_time(void **st)
{
    (void)st;
    int64_t t;
    int d;
    assert_int_equal(ds_imp_parse_time("2020-09-01 00:00:00", &t, &d), 0);
    assert_int_equal(t, 1598918400);
    assert_int_equal(d, 1);
    assert_int_equal(ds_imp_parse_time("2020-09-01T00:00:00Z", &t, &d), 0);
    assert_int_equal(t, 1598918400);
    assert_int_equal(ds_imp_parse_time("2020-09-01", &t, &d), 0);
    assert_int_equal(t, 1598918400);
    assert_int_equal(ds_imp_parse_time("2020-09-01 08:00:00+08:00", &t, &d), 0);
    assert_int_equal(t, 1598918400);
    assert_int_equal(ds_imp_parse_time("2020-08-31 17:00:00 PDT", &t, &d), 0);
    assert_int_equal(t, 1598918400);
    assert_int_equal(ds_imp_parse_time("2020-09-01 00:00:00.75", &t, &d), 0);
    assert_int_equal(t, 1598918400);
    assert_int_equal(ds_imp_parse_time("2000-02-29 12:00", &t, &d), 0);
    assert_int_equal(t, 951825600);
    assert_int_equal(ds_imp_parse_time("4550879.0", &t, &d), 0);
    assert_int_equal(t, 4550879);
    assert_int_equal(d, 0);
    assert_int_equal(ds_imp_parse_time("2020-13-01", &t, &d), -1);
    assert_int_equal(ds_imp_parse_time("2020-09-01 24:00:00", &t, &d), -1);
    assert_int_equal(ds_imp_parse_time("2020-09-01 00:00:00 CET", &t, &d), -1);
    assert_int_equal(ds_imp_parse_time("None", &t, &d), -1);
    assert_int_equal(ds_imp_parse_time("", &t, &d), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_time),
        cmocka_unit_test(test_helios),
        cmocka_unit_test(test_helios_sizes),
        cmocka_unit_test(test_helios_tenant_by_user),
        cmocka_unit_test(test_acme),
        cmocka_unit_test(test_philly),
        cmocka_unit_test(test_pai),
        cmocka_unit_test(test_filters),
        cmocka_unit_test(test_errors_all_or_nothing),
        cmocka_unit_test(test_philly_errors),
        cmocka_unit_test(test_simulator_limits),
        cmocka_unit_test(test_busiest_any_span),
        cmocka_unit_test(test_degenerate_window),
        cmocka_unit_test(test_philly_bounds),
        cmocka_unit_test(test_pai_limits),
        cmocka_unit_test(test_pai_errors),
        cmocka_unit_test(test_pai_machines),
        cmocka_unit_test(test_alibaba),
        cmocka_unit_test(test_alibaba_errors),
        cmocka_unit_test(test_usage),
        cmocka_unit_test(test_end_to_end),
        cmocka_unit_test(test_venus_data),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
