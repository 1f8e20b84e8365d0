/* test_trace.c: trace and tenant parsing, including every error the readers report. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deepshare/csv.h"
#include "deepshare/datetime.h"
#include "deepshare/lines.h"

static const char *TEN = "tenant,quota_gpus\nA,16\nB,8\n";

static void expect_error(const char *jobs, long line, const char *field, const char *needle)
{
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_trace_read_tenants(&t, tu_write_temp("ten.csv", TEN), 8, &err), 0);
    int rc = ds_trace_read_jobs(&t, tu_write_temp("jobs.csv", jobs), &err);
    assert_true(rc < 0);
    tu_expect_error(&err, "jobs.csv", line, field, needle);
    ds_trace_free(&t);
}

/* Reads TEN and jobs into t, which must read. */
static void read_ok(ds_trace_t *t, const char *jobs)
{
    ds_trace_init(t);
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_trace_read_tenants(t, tu_write_temp("ten.csv", TEN), 8, &err), 0);
    assert_int_equal(ds_trace_read_jobs(t, tu_write_temp("jobs.csv", jobs), &err), 0);
}

static void test_generic_ok(void **st)
{
    (void)st;
    ds_trace_t t;
    read_ok(&t, "job_id,tenant,gpus,submit,duration,class\n7,A,2,10,100,G\n5,B,1,10,50,BE\n9,A,1,5,20,\n");
    assert_int_equal(t.njobs, 3);
    /* sorted by submit, ties keep row order */
    assert_int_equal(t.jobs[0].id, 9);
    assert_int_equal(t.jobs[1].id, 7);
    assert_int_equal(t.jobs[2].id, 5);
    assert_int_equal(t.jobs[2].klass, DS_CLASS_BE);
    assert_int_equal(t.jobs[1].tenant, 0);
    assert_true(isnan(t.jobs[0].estimate));
    ds_trace_free(&t);
}

static void test_errors(void **st)
{
    (void)st;
    const char *H = "job_id,tenant,gpus,submit,duration\n";
    char b[512];
    expect_error("job_id,tenant,gpus,submit\n1,A,1,0\n", 1, "duration", "missing required column");
    snprintf(b, sizeof b, "%s1,A,x,0,10\n", H);
    expect_error(b, 2, "gpus", "not an integer");
    snprintf(b, sizeof b, "%s1,A,1,0,10\n2,A,1,-5,10\n", H);
    expect_error(b, 3, "submit", "below the minimum");
    snprintf(b, sizeof b, "%s1,Z,1,0,10\n", H);
    expect_error(b, 2, "tenant", "unknown tenant 'Z'");
    snprintf(b, sizeof b, "%s1,A,1,0,10\n1,B,1,0,10\n", H);
    expect_error(b, 3, "job_id", "duplicate job id 1");
    snprintf(b, sizeof b, "%s1,A,1,0,10\n2,A,1", H);
    expect_error(b, 3, "", "truncated");
    expect_error("", 0, "", "empty file");
    expect_error(H, 0, "", "no jobs");
    snprintf(b, sizeof b, "%s1,A,0,0,10\n", H);
    expect_error(b, 2, "gpus", "below the minimum");
    snprintf(b, sizeof b, "job_id,tenant,gpus,submit,duration,class\n1,A,1,0,10,urgent\n");
    expect_error(b, 2, "class", "not G, BE or auto");
}

static void test_tenant_errors(void **st)
{
    (void)st;
    ds_trace_t t;
    ds_error_t err;
    ds_trace_init(&t);
    assert_true(ds_trace_read_tenants(&t, tu_write_temp("t1.csv", "tenant,quota_gpus\nA,8\nA,8\n"), 8, &err) < 0);
    assert_int_equal(err.line, 3);
    assert_non_null(strstr(err.msg, "duplicate tenant"));
    ds_trace_free(&t);
    ds_trace_init(&t);
    assert_true(ds_trace_read_tenants(&t, tu_write_temp("t2.csv", "tenant,quota_gpus\nA,-8\n"), 8, &err) < 0);
    assert_string_equal(err.field, "quota_gpus");
    ds_trace_free(&t);
    ds_trace_init(&t);
    assert_true(ds_trace_read_tenants(&t, tu_write_temp("t3.csv", "name,size\nA,8\n"), 8, &err) < 0);
    assert_non_null(strstr(err.msg, "quota column"));
    ds_trace_free(&t);
    ds_trace_init(&t);
    assert_int_equal(ds_trace_read_tenants(&t, tu_write_temp("t4.csv", ",num\nvcA,2\nvcB,3\n"), 8, &err), 0);
    assert_int_equal(t.ntenants, 2);
    assert_int_equal(t.tenants[1].quota_gpus, 24);
    ds_trace_free(&t);
}


/* Every numeric column rejects text and out-of-range values, naming the line and the column. */

/* The time_limit column (sbatch --time, in seconds): read, empty is none, bad values named. */
static void test_time_limit(void **st)
{
    (void)st;
    ds_trace_t t;
    read_ok(&t, "job_id,tenant,gpus,submit,duration,time_limit\n1,A,1,0,100,3600\n2,A,1,1,100,\n3,B,1,2,10,0\n");
    assert_int_equal(t.jobs[0].limit, 3600);
    assert_int_equal(t.jobs[1].limit, 0);
    assert_int_equal(t.jobs[2].limit, 0);
    ds_trace_free(&t);
    expect_error("job_id,tenant,gpus,submit,duration,time_limit\n1,A,1,0,100,-60\n", 2, "time_limit", "below the minimum");
    expect_error("job_id,tenant,gpus,submit,duration,timelimit\n1,A,1,0,100,1.5\n", 2, "timelimit", "not an integer");
    expect_error("job_id,tenant,gpus,submit,duration,time_limit\n1,A,1,0,100,99999999999\n", 2, "time_limit", "above");
}

static void test_field_errors(void **st)
{
    (void)st;
    const char *H = "job_id,tenant,user,gpus,cpus,mem_mib,submit,duration,class,model,dataset,batchsize,amp,"
                    "gpu_util,gmem_util,gmem\n";
    const char *OK = "1,A,u,1,4,100,0,10,G,m,d,32,0,50,20,1000\n";
    static const struct { const char *row, *field, *needle; } cases[] = {
        {"x,A,u,1,4,100,0,10,G,m,d,32,0,50,20,1000", "job_id", "not an integer"},
        {"2,A,u,1.5,4,100,0,10,G,m,d,32,0,50,20,1000", "gpus", "not an integer"},
        {"2,A,u,,4,100,0,10,G,m,d,32,0,50,20,1000", "gpus", "empty value"},
        {"2,A,u,1,-4,100,0,10,G,m,d,32,0,50,20,1000", "cpus", "below the minimum"},
        {"2,A,u,1,four,100,0,10,G,m,d,32,0,50,20,1000", "cpus", "not an integer"},
        {"2,A,u,1,4,-1,0,10,G,m,d,32,0,50,20,1000", "mem_mib", "below the minimum"},
        {"2,A,u,1,4,100,1e3x,10,G,m,d,32,0,50,20,1000", "submit", "not an integer"},
        {"2,A,u,1,4,100,0,-10,G,m,d,32,0,50,20,1000", "duration", "below the minimum"},
        {"2,A,u,1,4,100,0,ten,G,m,d,32,0,50,20,1000", "duration", "not an integer"},
        {"2,A,u,1,4,100,0,99999999999999,G,m,d,32,0,50,20,1000", "duration", "above the maximum"},
        {"2,A,u,1,4,100,0,10,X,m,d,32,0,50,20,1000", "class", "not G, BE or auto"},
        {"2,A,u,1,4,100,0,10,G,m,d,-32,0,50,20,1000", "batchsize", "below the minimum"},
        {"2,A,u,1,4,100,0,10,G,m,d,32,2,50,20,1000", "amp", "expected 0 or 1"},
        {"2,A,u,1,4,100,0,10,G,m,d,32,yes,50,20,1000", "amp", "not an integer"},
        {"2,A,u,1,4,100,0,10,G,m,d,32,0,hot,20,1000", "gpu_util", "not a number"},
        {"2,A,u,1,4,100,0,10,G,m,d,32,0,-5,20,1000", "gpu_util", "below the minimum"},
        {"2,A,u,1,4,100,0,10,G,m,d,32,0,50,nan,1000", "gmem_util", "not a number"},
        {"2,A,u,1,4,100,0,10,G,m,d,32,0,50,20,-1", "gmem", "below the minimum"},
        {"2,A,u,2000000,4,100,0,10,G,m,d,32,0,50,20,1000", "gpus", "above the maximum"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char b[1024];
        snprintf(b, sizeof b, "%s%s%s\n", H, OK, cases[i].row);
        expect_error(b, 3, cases[i].field, cases[i].needle);
    }
    /* wrong field counts: too few in the middle of the file, too many, and a quoted field left open */
    char b[1024];
    snprintf(b, sizeof b, "%s%s2,A,u,1\n", H, OK);
    expect_error(b, 3, "", "expected 16 fields");
    snprintf(b, sizeof b, "%s%s%s", H, "1,A,u,1,4,100,0,10,G,m,d,32,0,50,20,1000,extra\n", OK);
    expect_error(b, 2, "", "found 17");
    snprintf(b, sizeof b, "%s1,\"A,u,1,4,100,0,10,G,m,d,32,0,50,20,1000\n", H);
    expect_error(b, 2, "", "unterminated quoted field");
    /* Venus alias names are checked under the name the file uses */
    expect_error("job_id,vc,gpu_num,submit_time,duration\n1,A,x,0,10\n", 2, "gpu_num", "not an integer");
    expect_error("job_id,vc,gpu_num,submit_time,duration\n1,Q,1,0,10\n", 2, "vc", "unknown tenant 'Q'");
    expect_error("job_id,vc,gpu_num,duration\n1,A,1,10\n", 1, "submit", "missing required column (or 'submit_time')");
    expect_error("id,tenant,gpus,submit\n1,A,1,0\n", 1, "duration", "missing required column");
    expect_error("job_id,gpus,submit,duration\n1,1,0,10\n", 1, "tenant", "missing required column (or 'vc')");
    /* blank lines only: still an empty file */
    expect_error("\n\n", 0, "", "empty file");
}

/* The error record formats as one line naming file, line and column. */
static void test_error_format(void **st)
{
    (void)st;
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_trace_read_tenants(&t, tu_write_temp("ten.csv", TEN), 8, &err), 0);
    const char *path = tu_write_temp("fmt.csv", "job_id,tenant,gpus,submit,duration\n1,A,1,0,10\n2,A,1,5,abc\n");
    assert_int_equal(ds_trace_read_jobs(&t, path, &err), DS_EPARSE);
    char buf[1200], want[1200];
    ds_error_format(&err, buf, sizeof buf);
    snprintf(want, sizeof want, "%s:3: column 'duration': 'abc' is not an integer", path);
    assert_string_equal(buf, want);
    /* a failed read leaves no half-read jobs behind */
    assert_int_equal(t.njobs, 0);
    ds_trace_free(&t);
    ds_trace_init(&t);
    assert_int_equal(ds_trace_read_tenants(&t, "/nonexistent/ds.csv", 8, &err), DS_EIO);
    assert_non_null(strstr(err.msg, "cannot open"));
    ds_trace_free(&t);
}

/* Jobs with no user (an empty field or the importers' "-") belong to their tenant's anonymous user, never to one
 * user shared by every tenant: the runtime model's user histories and the batch rule key on it. */
static void test_anonymous_users(void **st)
{
    (void)st;
    ds_trace_t t;
    read_ok(&t, "job_id,tenant,user,gpus,submit,duration\n1,A,,1,0,10\n2,B,-,1,1,10\n3,A,-,1,2,10\n4,B,ann,1,3,10\n"
                "5,A,ann,1,4,10\n");
    assert_int_equal(t.njobs, 5);
    assert_string_equal(t.users.s[t.jobs[0].user], "-@A");
    assert_string_equal(t.users.s[t.jobs[1].user], "-@B");
    assert_int_equal(t.jobs[2].user, t.jobs[0].user);
    assert_true(t.jobs[0].user != t.jobs[1].user);
    /* a named user stays one user whatever the tenant */
    assert_string_equal(t.users.s[t.jobs[3].user], "ann");
    assert_int_equal(t.jobs[4].user, t.jobs[3].user);
    ds_trace_free(&t);
}

/* Optional columns take documented defaults; Venus names are accepted; pandas-style "12.0" integers too. */
static void test_defaults_and_aliases(void **st)
{
    (void)st;
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_trace_read_tenants(&t, tu_write_temp("ten.csv", TEN), 8, &err), 0);
    const char *jobs = "job_id,tenant,gpus,submit,duration\n1,A,2,0,10.0\n";
    assert_int_equal(ds_trace_read_jobs(&t, tu_write_temp("d.csv", jobs), &err), 0);
    const ds_job_t *j = &t.jobs[0];
    assert_int_equal(j->duration, 10);
    assert_int_equal(j->cpus, 0);
    assert_int_equal(j->mem_mib, 0);
    assert_int_equal(j->gmem_mib, 24576); /* unknown footprint: the whole GPU */
    assert_true(j->gpu_util == 100.0f && j->gmem_util == 100.0f);
    assert_int_equal(j->klass, DS_CLASS_AUTO);
    assert_int_equal(j->model, -1);
    assert_string_equal(t.users.s[j->user], "-@A"); /* no user column: the tenant's anonymous user */
    ds_trace_free(&t);

    ds_trace_init(&t);
    assert_int_equal(ds_trace_read_tenants(&t, tu_write_temp("vc.csv", ",num\nvcA,1\n"), 8, &err), 0);
    const char *venus = "job_id,user,vc,gpu_num,cpu_num,state,submit_time,duration,dataset,model,batchsize,amp,speed,"
                        "gpu_util,gmem_util,gmem\n"
                        "11,uX,vcA,4,24,COMPLETED,100,50,CIFAR-10,VGG,64,1,300.5,88.5,40.25,5000\n"
                        "\"10\",uY,vcA,1,6,FAILED,100,5,ImageNet,BERT,32,0,1,12,8,9000\n";
    assert_int_equal(ds_trace_read_jobs(&t, tu_write_temp("v.csv", venus), &err), 0);
    assert_int_equal(t.njobs, 2);
    assert_int_equal(t.jobs[0].id, 11); /* same second: row order kept, not id order */
    assert_int_equal(t.jobs[0].gpus, 4);
    assert_int_equal(t.jobs[0].cpus, 24);
    assert_int_equal(t.jobs[0].batch, 64);
    assert_int_equal(t.jobs[0].amp, 1);
    assert_int_equal(t.jobs[0].gmem_mib, 5000);
    assert_true(fabsf(t.jobs[0].gpu_util - 88.5f) < 1e-4f);
    assert_string_equal(ds_trace_model_name(&t, &t.jobs[0]), "VGG");
    assert_string_equal(ds_trace_dataset_name(&t, &t.jobs[1]), "ImageNet");
    assert_string_equal(t.users.s[t.jobs[1].user], "uY");
    ds_trace_free(&t);
}

/* Rows out of submit order are sorted stably: ties keep the file's order. */
static void test_sorting_keeps_ties(void **st)
{
    (void)st;
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    assert_int_equal(ds_trace_read_tenants(&t, tu_write_temp("ten.csv", TEN), 8, &err), 0);
    const char *jobs = "job_id,tenant,gpus,submit,duration\n1,A,1,50,1\n2,A,1,10,1\n3,A,1,50,1\n4,A,1,10,1\n5,A,1,50,1\n";
    assert_int_equal(ds_trace_read_jobs(&t, tu_write_temp("s.csv", jobs), &err), 0);
    int64_t want[] = {2, 4, 1, 3, 5};
    for (int i = 0; i < 5; i++) assert_int_equal(t.jobs[i].id, want[i]);
    ds_trace_free(&t);
}

static void tenant_error(const char *text, long line, const char *field, const char *needle)
{
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    ds_error_clear(&err);
    assert_true(ds_trace_read_tenants(&t, tu_write_temp("tenerr.csv", text), 8, &err) < 0);
    tu_expect_error(&err, "tenerr.csv", line, field, needle);
    ds_trace_free(&t);
}

static void test_tenant_errors_more(void **st)
{
    (void)st;
    static const struct { const char *text; long line; const char *field, *needle; } cases[] = {
        {"", 0, "", "empty file"},
        {"tenant,quota_gpus\n", 0, "", "no tenants"},
        {"tenant,quota_gpus\nA,eight\n", 2, "quota_gpus", "not an integer"},
        {",num\nvcA,1.5\n", 2, "num", "not an integer"},
        {",num\nvcA,-1\n", 2, "num", "below the minimum"},
        {"tenant,quota_gpus\nA,8\nB\n", 3, "", "expected 2 fields"},
        {"tenant,quota_gpus\n,8\n", 2, "tenant", "empty tenant name"},
        {"tenant,quota_gpus\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA,8\n", 2, "tenant", "longer than"},
        {"tenant,quota_gpus\nA,999999999999\n", 2, "quota_gpus", "above the maximum"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        tenant_error(cases[i].text, cases[i].line, cases[i].field, cases[i].needle);
    /* 'quota' and 'nodes' headers are accepted too */
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    assert_int_equal(ds_trace_read_tenants(&t, tu_write_temp("tq.csv", "quota,tenant\n12,A\n"), 8, &err), 0);
    assert_string_equal(t.tenants[0].name, "A");
    assert_int_equal(t.tenants[0].quota_gpus, 12);
    ds_trace_free(&t);
    ds_trace_init(&t);
    assert_int_equal(ds_trace_read_tenants(&t, tu_write_temp("tn.csv", "vc,nodes\nA,3\n"), 4, &err), 0);
    assert_int_equal(t.tenants[0].quota_gpus, 12);
    ds_trace_free(&t);
}

static void estimates_error(const char *text, long line, const char *field, const char *needle)
{
    ds_trace_t t;
    tu_trace(&t, "A:8", "1 A 1 0 10; 2 A 1 0 20");
    ds_error_t err;
    ds_error_clear(&err);
    assert_true(ds_trace_read_estimates(&t, tu_write_temp("esterr.csv", text), 1000, NULL, &err) < 0);
    tu_expect_error(&err, "esterr.csv", line, field, needle);
    ds_trace_free(&t);
}

static void test_estimates(void **st)
{
    (void)st;
    static const struct { const char *text; long line; const char *field, *needle; } cases[] = {
        {"", 0, "", "empty file"},
        {"id,priority\n1,5\n", 1, "job_id", "expected a header"},
        {"job_id\n1\n", 1, "job_id", "expected a header"},
        {"job_id,priority\n1,5\nx,6\n", 3, "job_id", "not an integer"},
        {"job_id,priority\n1,soon\n", 2, "priority", "not a number"},
        {"job_id,priority\n1,5\n2\n", 3, "", "expected 2 fields"},
        {"job_id,priority\n1,5\n2,", 3, "priority", "not a number"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        estimates_error(cases[i].text, cases[i].line, cases[i].field, cases[i].needle);
    /* negatives become the floor (Lucid's 1000); unknown ids are ignored; the first row wins */
    ds_trace_t t;
    tu_trace(&t, "A:8", "1 A 1 0 10; 2 A 1 0 20; 3 A 1 0 30");
    t.jobs[2].estimate = NAN;
    ds_error_t err;
    int32_t matched = -1;
    const char *p = tu_write_temp("est.csv", "priority,job_id\n-5,1\n7.5,2\n9,2\n1,99\n");
    assert_int_equal(ds_trace_read_estimates(&t, p, 1000, &matched, &err), 0);
    assert_int_equal(matched, 2);
    assert_true(t.jobs[0].estimate == 1000.0);
    assert_true(t.jobs[1].estimate == 7.5);
    assert_true(isnan(t.jobs[2].estimate));
    /* with no floor, negatives are kept */
    assert_int_equal(ds_trace_read_estimates(&t, tu_write_temp("est2.csv", "job_id,e\n1,-5\n"), 0, NULL, &err), 0);
    assert_true(t.jobs[0].estimate == -5.0);
    ds_trace_free(&t);
}

static void test_venus(void **st)
{
    (void)st;
    const char *vc = tu_data("venus/vc_config.csv");
    if (!vc) { skip(); return; }
    char vcp[1024];
    snprintf(vcp, sizeof vcp, "%s", vc);
    const char *jobs = tu_data("venus/venus_sept_jobs.csv");
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    assert_int_equal(ds_trace_read_tenants(&t, vcp, 8, &err), 0);
    assert_int_equal(ds_trace_read_jobs(&t, jobs, &err), 0);
    assert_int_equal(t.njobs, 23859);
    assert_int_equal(t.ntenants, 15);
    assert_int_equal(ds_trace_total_quota(&t), 1080);
    ds_trace_free(&t);
}

/* Issue 24: the date parser read p[4] of a zone name when the text ended after one or two letters, past the
 * end of a string the size of its text (jansson's strings in Philly's log); the ASan build catches a relapse. */
static void test_datetime_bounds(void **st)
{
    (void)st;
    static const struct {
        const char *s;
        int ok;
        int64_t t;
    } cases[] = {
        {"2020-01-01 10:00 X", 0, 0},    {"2020-01-01 10:00 UT", 0, 0},   {"2020-01-01 10:00 U", 0, 0},
        {"2020-01-01 10:00 UTCX", 0, 0}, {"2020-01-01 10:00 ", 1, 1577872800}, {"2020-01-01 10:00 PST", 1, 1577901600},
        {"2020-01-01 10:00:00+08", 1, 1577844000}, {"2020-01-01 10:00:00+", 0, 0}, {"2020-01-01 1", 0, 0},
        {"2020-01-0", 0, 0},             {"2020-01-01T10:00:00.", 1, 1577872800},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = strlen(cases[i].s) + 1;
        char *exact = malloc(n); /* no slack after the NUL for an overread to hide in */
        memcpy(exact, cases[i].s, n);
        int64_t t = 0;
        int rc = ds_datetime_parse(exact, &t);
        if ((rc == 0) != cases[i].ok || (rc == 0 && t != cases[i].t))
            fail_msg("'%s': rc %d t %lld", cases[i].s, rc, (long long)t);
        free(exact);
    }
}

/* Issue 24: the line reader stops at its bound while reading (a line of max bytes is one line, one more byte
 * is refused), and a NUL byte is named in the line that holds it. */
static void test_bounded_lines(void **st)
{
    (void)st;
    size_t max = 100;
    char text[400];
    memset(text, 'a', 99);
    text[99] = '\n';            /* line 1: exactly max bytes with its newline */
    memset(text + 100, 'b', 100); /* line 2: max bytes without a newline yet */
    text[200] = 'b';
    text[201] = '\n';
    FILE *f = fopen(tu_write_temp("lines.txt", ""), "w+");
    fwrite(text, 1, 202, f);
    rewind(f);
    ds_lines_t l;
    ds_lines_init(&l, f, max);
    assert_int_equal(ds_lines_next(&l), DS_LINE_OK);
    assert_int_equal(l.len, 100);
    assert_int_equal(ds_lines_next(&l), DS_LINE_LONG);
    assert_int_equal(ds_lines_next(&l), DS_LINE_LONG); /* stays at the error */
    assert_true(l.cap <= max + 1);
    ds_lines_free(&l);
    fclose(f);
    /* a last line without a newline, then a NUL on line 2 */
    f = fopen(tu_write_temp("lines2.txt", ""), "w+");
    fwrite("x\ny\0z\n", 1, 6, f);
    rewind(f);
    ds_lines_init(&l, f, max);
    assert_int_equal(ds_lines_next(&l), DS_LINE_OK);
    assert_string_equal(l.line, "x\n");
    assert_int_equal(ds_lines_next(&l), DS_LINE_NUL);
    ds_lines_free(&l);
    fclose(f);
    f = fopen(tu_write_temp("lines3.txt", "last"), "r");
    ds_lines_init(&l, f, max);
    assert_int_equal(ds_lines_next(&l), DS_LINE_OK);
    assert_string_equal(l.line, "last");
    assert_int_equal(ds_lines_next(&l), DS_LINE_EOF);
    ds_lines_free(&l);
    fclose(f);
    /* the CSV reader names the line */
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_trace_read_tenants(&t, tu_write_temp("ten.csv", TEN), 8, &err), 0);
    const char *path = tu_write_temp("nul.csv", "");
    f = fopen(path, "w");
    static const char rows[] = "job_id,tenant,gpus,submit,duration\n1,A,1,0,1\n2,A\0,1,0,1\n";
    fwrite(rows, 1, sizeof rows - 1, f);
    fclose(f);
    assert_int_not_equal(ds_trace_read_jobs(&t, path, &err), 0);
    tu_expect_error(&err, "nul.csv", 3, "", "NUL byte");
    ds_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generic_ok),
        cmocka_unit_test(test_time_limit),
        cmocka_unit_test(test_anonymous_users),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_tenant_errors),
        cmocka_unit_test(test_field_errors),
        cmocka_unit_test(test_error_format),
        cmocka_unit_test(test_defaults_and_aliases),
        cmocka_unit_test(test_sorting_keeps_ties),
        cmocka_unit_test(test_tenant_errors_more),
        cmocka_unit_test(test_estimates),
        cmocka_unit_test(test_venus),
        cmocka_unit_test(test_datetime_bounds),
        cmocka_unit_test(test_bounded_lines),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
