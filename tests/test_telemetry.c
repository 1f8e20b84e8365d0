/* test_telemetry.c: deepshared's retention source (src/daemon/telemetry.c): its configuration keys, the
 * Prometheus answer in dcgm-exporter's labels, the progress-file protocol, the estimators, and that a
 * missing or stale sample is NaN (no sample). No Prometheus is needed: answers are given as text, and a
 * query to a port nobody listens on must fail with a message. */
#include "testutil.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "daemon/dconfig.h"
#include "daemon/telemetry.h"

static char dir[200];

static int setup(void **st)
{
    (void)st;
    tu_make_dir("ds_telemetry", dir, sizeof dir);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    return tu_remove_dir(dir);
}

static void test_config(void **st)
{
    (void)st;
    tel_config_t c;
    tel_config_default(&c);
    char err[256];
    assert_int_equal(c.kind, TEL_OFF);
    assert_string_equal(c.job_label, "hpc_job");
    assert_non_null(strstr(c.query, "DCGM_FI_PROF_SM_ACTIVE"));
    assert_int_equal(tel_config_set(&c, "telemetry", "prometheus", err, sizeof err), 0);
    assert_int_equal(c.kind, TEL_PROMETHEUS);
    assert_int_equal(tel_config_set(&c, "telemetry", "progress", err, sizeof err), 0);
    assert_int_equal(c.kind, TEL_PROGRESS);
    assert_int_equal(tel_config_set(&c, "telemetry", "dcgm", err, sizeof err), -1);
    assert_non_null(strstr(err, "not off, prometheus or progress"));
    assert_int_equal(tel_config_set(&c, "prometheus_url", "localhost:9090", err, sizeof err), -1);
    assert_non_null(strstr(err, "http://"));
    assert_int_equal(tel_config_set(&c, "prometheus_url", "http://prom:9090", err, sizeof err), 0);
    assert_string_equal(c.url, "http://prom:9090");
    assert_int_equal(tel_config_set(&c, "telemetry_job_label", "hpc job", err, sizeof err), -1);
    assert_int_equal(tel_config_set(&c, "telemetry_job_label", "slurm_job", err, sizeof err), 0);
    assert_int_equal(tel_config_set(&c, "progress_dir", "relative/dir", err, sizeof err), -1);
    assert_int_equal(tel_config_set(&c, "telemetry_stale", "0", err, sizeof err), -1);
    assert_int_equal(tel_config_set(&c, "telemetry_stale", "nan", err, sizeof err), -1);
    assert_int_equal(tel_config_set(&c, "telemetry_stale", "90", err, sizeof err), 0);
    assert_true(c.stale == 90);
    assert_int_equal(tel_config_set(&c, "telemetry_timeout", "2.5", err, sizeof err), 0);
    assert_true(c.timeout == 2.5);
    assert_int_equal(tel_config_set(&c, "prometheus_query", "", err, sizeof err), -1);
    char longq[2000];
    memset(longq, 'x', sizeof longq - 1);
    longq[sizeof longq - 1] = '\0';
    assert_int_equal(tel_config_set(&c, "prometheus_query", longq, err, sizeof err), -1);
    assert_non_null(strstr(err, "longer than"));
    assert_int_equal(tel_config_set(&c, "cycle", "60", err, sizeof err), 1);
}

/* How far back a sample may describe the GPU (measure.c's solo and pair rules): the query's window plus
 * telemetry_lag. */
static void test_span(void **st)
{
    (void)st;
    tel_config_t c;
    tel_config_default(&c);
    char err[256];
    assert_true(tel_query_window("avg by (hpc_job) (avg_over_time(DCGM_FI_PROF_SM_ACTIVE[1m]))") == 60);
    assert_true(tel_query_window("max by (hpc_job) (DCGM_FI_PROF_SM_ACTIVE)") == 0);
    assert_true(tel_query_window("avg_over_time(x[30s]) + rate(y[1h30m])") == 5400);
    assert_true(tel_query_window("max_over_time(avg_over_time(x[1m])[5m:30s])") == 300);
    assert_true(tel_query_window("avg_over_time(x[2m] offset 1m)") == 180);
    assert_true(tel_query_window("x offset -5m") == 0);        /* forward: no further back */
    assert_true(tel_query_window("my_offset_total[500ms]") == 0.5);
    assert_true(tel_query_window("x{gpu=~\"[0-3]\"}") == 0);  /* a regex's brackets are no window */
    assert_true(tel_query_window("x{l=\"a\\\"[\"}[10s]") == 10);  /* an escaped quote inside the string */
    assert_true(tel_query_window("x[5q]") == -1);
    assert_true(tel_query_window("x[$__rate_interval]") == -1);
    assert_int_equal(tel_config_set(&c, "prometheus_query", "avg_over_time(x[1x])", err, sizeof err), -1);
    assert_non_null(strstr(err, "malformed duration"));
    /* auto: 60 s of exporter and scrape lag for Prometheus, plus the default query's minute; 0 for reports */
    assert_true(c.lag == -1);
    c.kind = TEL_PROMETHEUS;
    assert_true(tel_span(&c) == 120);
    c.kind = TEL_PROGRESS;
    assert_true(tel_span(&c) == 0);
    assert_int_equal(tel_config_set(&c, "telemetry_lag", "-1", err, sizeof err), -1);
    assert_non_null(strstr(err, "telemetry_lag"));
    assert_int_equal(tel_config_set(&c, "telemetry_lag", "5s", err, sizeof err), -1);
    assert_int_equal(tel_config_set(&c, "telemetry_lag", "2.5", err, sizeof err), 0);
    assert_true(tel_span(&c) == 2.5);
    c.kind = TEL_PROMETHEUS;
    assert_int_equal(tel_config_set(&c, "prometheus_query", "max by (hpc_job) (DCGM_FI_DEV_GPU_UTIL) / 100", err,
                                    sizeof err), 0);
    assert_true(tel_span(&c) == 2.5);
    assert_int_equal(tel_config_set(&c, "telemetry_lag", "auto", err, sizeof err), 0);
    assert_true(tel_span(&c) == 60);
}

/* An instant-vector answer as Prometheus gives it for the default query over dcgm-exporter's series: one
 * per hpc_job; a GPU no job is mapped to has no hpc_job label and is skipped. */
static const char *ANSWER =
    "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
    "{\"metric\":{\"hpc_job\":\"101\"},\"value\":[1764600000.5,\"0.6\"]},"
    "{\"metric\":{\"hpc_job\":\"102\"},\"value\":[1764600000.5,\"0.5\"]},"
    "{\"metric\":{\"gpu\":\"3\",\"UUID\":\"GPU-x\",\"Hostname\":\"node1\"},\"value\":[1764600000.5,\"0.9\"]},"
    "{\"metric\":{\"hpc_job\":\"not-a-number\"},\"value\":[1764600000.5,\"0.1\"]},"
    "{\"metric\":{\"hpc_job\":\"103\"},\"value\":[1764600000.5,\"NaN\"]}]}}";

static void test_parse_prometheus(void **st)
{
    (void)st;
    tel_config_t c;
    tel_config_default(&c);
    c.kind = TEL_PROMETHEUS;
    telemetry_t t;
    tel_init(&t, &c);
    char err[256];
    assert_int_equal(tel_parse_prometheus(&t, ANSWER, strlen(ANSWER), err, sizeof err), 2);
    assert_int_equal(t.n, 2);
    assert_true(fabs(tel_age(&t, 101, 1764600010.5) - 10) < 1e-9);
    assert_true(tel_age(&t, 103, 1764600010.5) < 0); /* NaN value: no sample */
    assert_int_equal(t.rejected, 2);                 /* the bad id and the NaN */
    /* errors name what is wrong */
    const char *bad[][2] = {
        {"{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error at char 4\"}", "parse error at char 4"},
        {"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}", "not an instant vector"},
        {"<html>proxy error</html>", "not JSON"},
        {"{\"status\":\"success\"}", "not an instant vector"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        assert_int_equal(tel_parse_prometheus(&t, bad[i][0], strlen(bad[i][0]), err, sizeof err), -1);
        if (!strstr(err, bad[i][1])) fail_msg("answer %zu: got '%s'", i, err);
    }
    tel_free(&t);
}

/* Prometheus: job 101 alone shows activity 0.6, job 102 alone 0.5; sharing one GPU it shows 0.77: both
 * are estimated at 0.77 / 1.1 = 0.7. A pair that fits side by side (0.3 + 0.4 = 0.7 seen) keeps 1. */
static void test_prometheus_estimator(void **st)
{
    (void)st;
    tel_config_t c;
    tel_config_default(&c);
    c.kind = TEL_PROMETHEUS;
    telemetry_t t;
    tel_init(&t, &c);
    double now = 1000;
    tel_ingest(&t, 101, 0.6, now);
    tel_ingest(&t, 102, 0.5, now);
    /* no baseline yet: no estimate, whatever the sample */
    assert_true(isnan(tel_retention(&t, 101, 102, now, NAN, NAN)));
    tel_note_alone(&t, 101, 0, now);
    tel_note_alone(&t, 102, 0, now);
    now += 60;
    tel_ingest(&t, 101, 0.77, now);
    tel_ingest(&t, 102, 0.77, now);
    assert_true(fabs(tel_retention(&t, 101, 102, now, NAN, NAN) - 0.7) < 1e-9);
    assert_true(fabs(tel_retention(&t, 102, 101, now, NAN, NAN) - 0.7) < 1e-9);
    /* the exporter has not mapped the partner to the GPU yet (its series is not in this answer): 101's
     * activity is still its own, alone, and says nothing of the pair (0.6 / 1.1 would read as a slowdown) */
    tel_ingest(&t, 101, 0.6, now + 1);
    assert_true(isnan(tel_retention(&t, 101, 102, now + 1, NAN, NAN)));
    assert_true(isnan(tel_retention(&t, 102, 101, now + 1, NAN, NAN)));
    assert_true(isnan(tel_retention(&t, 101, 999, now + 1, NAN, 0.5))); /* a partner with no series at all */
    tel_ingest(&t, 101, 0.77, now + 2), tel_ingest(&t, 102, 0.77, now + 2);
    assert_true(fabs(tel_retention(&t, 101, 102, now + 2, NAN, NAN) - 0.7) < 1e-9);
    now += 2;
    /* stale: 181 s later with no new sample, nothing */
    assert_true(isnan(tel_retention(&t, 101, 102, now + 181, NAN, NAN)));
    /* a partner never seen alone: its profile's activity stands in when known, else no estimate */
    tel_ingest(&t, 201, 0.3, now), tel_note_alone(&t, 201, 0, now);
    tel_ingest(&t, 202, 0.7, now + 1);
    tel_ingest(&t, 201, 0.7, now + 1);
    assert_true(isnan(tel_retention(&t, 201, 202, now + 1, NAN, NAN)));
    assert_true(fabs(tel_retention(&t, 201, 202, now + 1, NAN, 0.4) - 1.0) < 1e-9);
    assert_true(t.missing >= 3);
    /* workloads: jobs of one workload that ran alone give a baseline to one of it that never did */
    uint32_t light = tel_workload_key("light", "synthetic", 32, 0), sly = tel_workload_key("sly", "synthetic", 32, 0);
    assert_true(light != 0 && sly != 0 && light != sly);
    assert_int_equal(tel_workload_key("", "x", 1, 0), 0);
    assert_true(isnan(tel_workload_base(&t, light)));
    tel_ingest(&t, 301, 0.4, now + 2), tel_note_alone(&t, 301, light, now + 2);
    tel_ingest(&t, 302, 0.6, now + 2), tel_note_alone(&t, 302, light, now + 2);
    tel_ingest(&t, 303, 0.5, now + 2), tel_note_alone(&t, 303, sly, now + 2);
    assert_true(fabs(tel_workload_base(&t, light) - 0.5) < 1e-9);
    assert_true(fabs(tel_workload_base(&t, sly) - 0.5) < 1e-9);
    /* 304 (light, never alone) beside 301 on one GPU at activity 0.65: 0.65 / (0.4 + 0.5) */
    tel_ingest(&t, 304, 0.65, now + 3), tel_ingest(&t, 301, 0.65, now + 3);
    assert_true(fabs(tel_retention(&t, 304, 301, now + 3, tel_workload_base(&t, light), NAN) - 0.65 / 0.9) < 1e-9);
    assert_true(fabs(tel_retention(&t, 301, 304, now + 3, NAN, tel_workload_base(&t, light)) - 0.65 / 0.9) < 1e-9);
    tel_free(&t);
}

static void write_rate(const char *name, const char *text, double age)
{
    char p[700];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    if (age > 0) {
        struct timespec ts[2];
        clock_gettime(CLOCK_REALTIME, &ts[0]);
        ts[0].tv_sec -= (time_t)age;
        ts[1] = ts[0];
        assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
    }
}

/* The progress protocol: DIR/<job id> holds the job's step rate; its mtime dates it. Retention is the
 * shared rate over the rate it had alone. */
static void test_progress_files(void **st)
{
    (void)st;
    tel_config_t c;
    tel_config_default(&c);
    c.kind = TEL_PROGRESS;
    snprintf(c.dir, sizeof c.dir, "%s", dir);
    telemetry_t t;
    tel_init(&t, &c);
    write_rate("301", "12.5\n", 0);
    write_rate("302", "8\n", 500);        /* stale: written 500 s ago */
    write_rate("303", "fast\n", 0);       /* not a number */
    write_rate(".301.tmp", "99\n", 0);    /* a writer's temporary file */
    assert_int_equal(tel_poll(&t, tel_now()), 0);
    double now = tel_now();
    assert_true(tel_age(&t, 301, now) >= 0 && tel_age(&t, 301, now) < 5);
    assert_true(tel_age(&t, 302, now) > 400);
    assert_true(tel_age(&t, 303, now) < 0);
    tel_note_alone(&t, 301, 0, now);
    tel_note_alone(&t, 302, 0, now); /* stale: teaches nothing */
    write_rate("301", "10\n", 0);
    assert_int_equal(tel_poll(&t, tel_now()), 0);
    now = tel_now();
    assert_true(fabs(tel_retention(&t, 301, 302, now, NAN, NAN) - 0.8) < 1e-9);
    assert_true(isnan(tel_retention(&t, 302, 301, now, NAN, NAN)));
    /* the folder vanishes: the poll fails with its name, the last samples age as usual */
    tel_config_t c2 = c;
    snprintf(c2.dir, sizeof c2.dir, "%s/none", dir);
    t.cfg = c2;
    assert_int_equal(tel_poll(&t, now), -1);
    assert_non_null(strstr(t.last_error, "cannot open the progress folder"));
    assert_int_equal(t.poll_errors, 1);
    assert_true(fabs(tel_retention(&t, 301, 302, now, NAN, NAN) - 0.8) < 1e-9);
    assert_true(isnan(tel_retention(&t, 301, 302, now + 200, NAN, NAN)));
    tel_free(&t);
}

/* A Prometheus that does not answer: the poll fails with a message naming the URL; no sample is made up. */
static void test_prometheus_down(void **st)
{
    (void)st;
    tel_config_t c;
    tel_config_default(&c);
    c.kind = TEL_PROMETHEUS;
    snprintf(c.url, sizeof c.url, "http://127.0.0.1:9"); /* discard port: nobody listens */
    c.timeout = 2;
    telemetry_t t;
    tel_init(&t, &c);
    assert_int_equal(tel_poll(&t, tel_now()), -1);
#ifdef DS_HAVE_CURL
    assert_non_null(strstr(t.last_error, "127.0.0.1:9"));
#else
    assert_non_null(strstr(t.last_error, "built without libcurl"));
#endif
    assert_int_equal(t.n, 0);
    tel_free(&t);
}

/* The keys in deepshared's config file: errors name the file, line and key; a reload keeps the running
 * source and names the keys that need a restart. */
static void test_daemon_config(void **st)
{
    (void)st;
    dconfig_t c, next;
    dconfig_default(&c);
    ds_error_t err;
    ds_error_clear(&err);
    const char *ok = tu_write_temp("tel.conf", "tenant a 4\ntelemetry = prometheus\nprometheus_url = http://127.0.0.1:9090\n"
                                               "prometheus_query = avg by (hpc_job) (DCGM_FI_DEV_GPU_UTIL) / 100\n"
                                               "telemetry_stale = 30\n");
    assert_int_equal(dconfig_read(&c, ok, &err), DS_OK);
    assert_int_equal(c.tel.kind, TEL_PROMETHEUS);
    assert_string_equal(c.tel.query, "avg by (hpc_job) (DCGM_FI_DEV_GPU_UTIL) / 100");
    assert_true(c.tel.stale == 30);
    dconfig_default(&next);
    const char *bad = tu_write_temp("tel-bad.conf", "tenant a 4\ntelemetry = progress\nprogress_dir = spool\n");
    assert_int_equal(dconfig_read(&next, bad, &err), DS_EPARSE);
    tu_expect_error(&err, "tel-bad.conf", 3, "progress_dir", "not an absolute path");
    dconfig_default(&next);
    ds_error_clear(&err);
    const char *other = tu_write_temp("tel2.conf", "tenant a 4\ntelemetry = progress\n");
    assert_int_equal(dconfig_read(&next, other, &err), DS_OK);
    char restart[256];
    dconfig_reload_merge(&c, &next, restart, sizeof restart);
    assert_non_null(strstr(restart, "telemetry"));
    assert_int_equal(next.tel.kind, TEL_PROMETHEUS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_span),
        cmocka_unit_test(test_parse_prometheus),
        cmocka_unit_test(test_prometheus_estimator),
        cmocka_unit_test(test_progress_files),
        cmocka_unit_test(test_prometheus_down),
        cmocka_unit_test(test_daemon_config),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
