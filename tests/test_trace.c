/* test_trace.c: trace and tenant parsing, including every error the readers report. */
#include "testutil.h"

#include <math.h>
#include <string.h>

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
    if (err.line != line || strcmp(err.field, field) || !strstr(err.msg, needle))
        fprintf(stderr, "got line %ld field '%s' msg '%s'\n", err.line, err.field, err.msg);
    assert_int_equal(err.line, line);
    assert_string_equal(err.field, field);
    assert_non_null(strstr(err.msg, needle));
    assert_non_null(strstr(err.file, "jobs.csv"));
    ds_trace_free(&t);
}

static void test_generic_ok(void **st)
{
    (void)st;
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_trace_read_tenants(&t, tu_write_temp("ten.csv", TEN), 8, &err), 0);
    const char *jobs = "job_id,tenant,gpus,submit,duration,class\n7,A,2,10,100,G\n5,B,1,10,50,BE\n9,A,1,5,20,\n";
    assert_int_equal(ds_trace_read_jobs(&t, tu_write_temp("jobs.csv", jobs), &err), 0);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_generic_ok),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_tenant_errors),
        cmocka_unit_test(test_venus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
