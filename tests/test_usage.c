/* test_usage.c: 'deepshare usage': its readers (journal, a run's jobs.csv and tenant_usage.csv) refuse bad
 * input naming file, line and field; the report's figures on hand-computed inputs; a simulated run read back
 * agrees with the simulator's own accounting. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deepshare/report.h"
#include "deepshare/synth.h"
#include "deepshare/usage.h"

static const ds_usage_row_t *row(const ds_usage_report_t *r, const char *name)
{
    for (int32_t i = 0; i < r->nrows; i++)
        if (!strcmp(r->rows[i].name, name)) return &r->rows[i];
    fail_msg("no row %s", name);
    return NULL;
}

static void test_journal_figures(void **st)
{
    (void)st;
    /* job 1: 2 GPUs for 3600 s ending at 7200; job 2: 1 GPU 1800 s ending at 9000; job 3 (user u2) 4 GPUs,
     * 7200 s ending at 14400: half of it inside [0, 10800); a duplicate line of job 1 counts once */
    const char *p = tu_write_temp("journal.csv", "slurm_job_id,tenant,user,gpus,seconds,end\n"
                                                 "1,ta,u1,2,3600,7200\n2,ta,u1,1,1800,9000\n3,tb,u2,4,7200,14400\n"
                                                 "1,ta,u1,2,3600,7200\n");
    ds_usage_data_t d;
    ds_usage_init(&d);
    ds_error_t err;
    int64_t torn = -1;
    assert_int_equal(ds_usage_read_journal(&d, p, &torn, &err), 0);
    assert_int_equal(torn, 0);
    assert_int_equal(d.njobs, 3);
    ds_usage_report_t r;
    ds_usage_compute(&d, 0, 10800, 0, 0.95, &r);
    assert_int_equal(r.nrows, 3);
    const ds_usage_row_t *a = row(&r, "ta"), *b = row(&r, "tb"), *all = row(&r, "all");
    assert_int_equal(a->jobs, 2);
    assert_true(fabs(a->gpu_h - 2.5) < 1e-9);  /* 2 x 1 h + 1 x 0.5 h */
    assert_int_equal(b->jobs, 0);              /* ends after the window */
    assert_true(fabs(b->gpu_h - 4.0) < 1e-9);  /* 4 GPUs x the hour inside */
    assert_true(fabs(all->gpu_h - 6.5) < 1e-9);
    /* a journal says nothing of classes, queueing or QAD */
    assert_true(isnan(a->g_h) && isnan(a->compliance) && isnan(a->q_p50) && isnan(a->preemptions));
    ds_usage_report_free(&r);
    /* quotas from a tenants file: quota x the window's 3 h; tc has no jobs but a row */
    ds_trace_t tt;
    ds_trace_init(&tt);
    assert_int_equal(ds_trace_read_tenants(&tt, tu_write_temp("q.csv", "tenant,quota_gpus\nta,4\ntc,2\n"), 8, &err), 0);
    ds_usage_set_quotas(&d, &tt);
    ds_trace_free(&tt);
    ds_usage_compute(&d, 0, 10800, 0, 0.95, &r);
    assert_true(fabs(row(&r, "ta")->quota_h - 12.0) < 1e-9);
    assert_true(fabs(row(&r, "tc")->quota_h - 6.0) < 1e-9);
    assert_true(isnan(row(&r, "tb")->quota_h)); /* not in the file */
    assert_true(isnan(row(&r, "all")->quota_h));
    ds_usage_report_free(&r);
    ds_usage_compute(&d, 0, 20000, 1, 0.95, &r);
    assert_true(fabs(row(&r, "u2")->gpu_h - 8.0) < 1e-9);
    assert_int_equal(row(&r, "u1")->jobs, 2);
    ds_usage_report_free(&r);
    ds_usage_free(&d);
}

/* deepshared's 8-field records: GPU-hours from the wall clock (start..end) even when the journaled seconds are on
 * the speed table's reference type, and queueing delay from Slurm's submit time; 6-field and 8-field records mix
 * in one journal (a daemon upgraded in place), and a submit of 0 is unknown. */
static void test_journal_wall_times(void **st)
{
    (void)st;
    const char *p = tu_write_temp("journal8.csv", "slurm_job_id,tenant,user,gpus,seconds,end\n"
                                                  "1,ta,u1,2,3600,7200\n"                 /* old record */
                                                  "2,ta,u1,1,45720,9000,5400,5000\n"      /* V100 x12.7 */
                                                  "3,ta,u1,1,600,9600,9000,8000\n"
                                                  "4,tb,u2,4,60,9600,9540,0\n");          /* no submit */
    ds_usage_data_t d;
    ds_usage_init(&d);
    ds_error_t err;
    int64_t torn = -1;
    assert_int_equal(ds_usage_read_journal(&d, p, &torn, &err), 0);
    assert_int_equal(d.njobs, 4);
    ds_usage_report_t r;
    ds_usage_compute(&d, 0, 10800, 0, 0.95, &r);
    const ds_usage_row_t *a = row(&r, "ta"), *b = row(&r, "tb");
    assert_int_equal(a->jobs, 3);
    /* 2 x 1 h + 1 x 1 h (3600 wall s, not 45720) + 1 x 600 s */
    assert_true(fabs(a->gpu_h - (2.0 + 1.0 + 600.0 / 3600)) < 1e-9);
    assert_true(fabs(b->gpu_h - 4.0 * 60 / 3600) < 1e-9);
    /* queueing known for jobs 2 (400 s) and 3 (1000 s) only */
    assert_false(isnan(a->q_p50));
    assert_true(a->q_p50 >= 400 && a->q_p50 <= 1000 && fabs(a->q_p99 - 1000) < 1e-6);
    assert_true(isnan(b->q_p50));
    ds_usage_report_free(&r);
    ds_usage_free(&d);
}

static void expect_journal_error(const char *text, long line, const char *field, const char *needle)
{
    const char *p = tu_write_temp("bad_journal.csv", text);
    ds_usage_data_t d;
    ds_usage_init(&d);
    ds_error_t err;
    ds_error_clear(&err);
    int64_t torn;
    assert_int_not_equal(ds_usage_read_journal(&d, p, &torn, &err), 0);
    tu_expect_error(&err, "bad_journal.csv", line, field, needle);
    ds_usage_free(&d);
}

static void test_journal_errors(void **st)
{
    (void)st;
    expect_journal_error("1,ta,u1,2,3600,7200\n2,ta,u1,x,1,9000\n", 2, "gpus", "GPU count");
    expect_journal_error("1,ta,u1,2,3600,7200\n0,ta,u1,1,1,9000\n", 2, "slurm_job_id", "job id");
    expect_journal_error("1,ta,u1,2,-5,7200\n", 1, "seconds", "run time");
    expect_journal_error("1,ta,u1,2,inf,7200\n", 1, "seconds", "run time");
    expect_journal_error("1,ta,u1,2,5,-1\n", 1, "end", "Unix time");
    expect_journal_error("1,ta,u1,2,5\n", 1, "", "expected 6, 8 or 9 fields");
    expect_journal_error("1,ta,u1,2,5,6,7\n", 1, "", "expected 6, 8 or 9 fields");
    expect_journal_error("1,ta,u1,2,5,6,1,0,9,9\n", 1, "", "more than 9");
    expect_journal_error("1,ta,u1,2,5,7200,7000,0,-60\n", 1, "limit", "time limit");
    expect_journal_error("1,ta,u1,2,5,7200,7000,0,1.5\n", 1, "limit", "time limit");
    expect_journal_error("1,ta,u1,2,5,7200,7300,0\n", 1, "start", "at most the end");
    expect_journal_error("1,ta,u1,2,5,7200,7000,7100\n", 1, "submit", "at most the start");
    expect_journal_error("1,ta,u1,2,5,7200,7000,-3\n", 1, "submit", "at most the start");
    expect_journal_error("1,,u1,2,5,6\n", 1, "tenant", "empty");
    /* a torn last record is what a crash leaves: counted, not an error */
    const char *p = tu_write_temp("torn.csv", "1,ta,u1,2,3600,7200\n2,ta,u1,1,18");
    ds_usage_data_t d;
    ds_usage_init(&d);
    ds_error_t err;
    int64_t torn = 0;
    assert_int_equal(ds_usage_read_journal(&d, p, &torn, &err), 0);
    assert_int_equal(torn, 1);
    assert_int_equal(d.njobs, 1);
    ds_usage_free(&d);
}

/* Two tenants of quota 4 over three 60 s cycles: B borrows 2 GPUs in cycle 2 from A's idle quota; A waits
 * (smoothed QAD 0.5) in cycle 3. */
static void test_run_figures(void **st)
{
    (void)st;
    char dir[256];
    tu_make_dir("ds_usage_run", dir, sizeof dir);
    char path[512];
    snprintf(path, sizeof path, "%s/jobs.csv", dir);
    FILE *f = fopen(path, "w");
    fprintf(f, "job_id,tenant,user,gpus,submit,start,end,queue,jct,duration,preemptions,colocated\n"
               "1,A,ua,2,0,0,180,0,180,180,0,0\n2,B,ub,6,0,60,120,60,120,60,1,0\n3,A,ua,4,100,170,300,70,200,130,0,0\n");
    fclose(f);
    snprintf(path, sizeof path, "%s/tenant_usage.csv", dir);
    f = fopen(path, "w");
    fprintf(f, "time,tenant,quota_gpus,g_gpus,be_gpus,pending_gpus,qad,qad_smoothed\n"
               "0,A,4,2,0,0,1,1\n0,B,4,0,0,6,0,0\n"
               "60,A,4,2,0,0,1,1\n60,B,4,4,2,0,1,1\n"
               "120,A,4,2,0,4,0.5,0.5\n120,B,4,0,0,0,1,1\n");
    fclose(f);
    ds_usage_data_t d;
    ds_usage_init(&d);
    ds_error_t err;
    if (ds_usage_read_run(&d, dir, &err)) fail_msg("%s", err.msg);
    assert_int_equal(d.step, 60);
    ds_usage_report_t r;
    ds_usage_compute(&d, 0, 180, 0, 0.95, &r);
    const ds_usage_row_t *a = row(&r, "A"), *b = row(&r, "B");
    double h = 60.0 / 3600.0;
    assert_true(fabs(a->g_h - 6 * h) < 1e-9);
    assert_true(fabs(b->g_h - 4 * h) < 1e-9 && fabs(b->be_h - 2 * h) < 1e-9);
    assert_true(fabs(b->borrowed_h - 2 * h) < 1e-9);
    assert_true(fabs(a->lent_h - 2 * h) < 1e-9); /* A's 2 idle GPUs were all B borrowed */
    assert_true(fabs(a->quota_h - 12 * h) < 1e-9);
    assert_true(fabs(a->under_h - h) < 1e-9);           /* cycle 3 */
    assert_true(fabs(a->compliance - 2.0 / 3.0) < 1e-9);
    assert_true(fabs(b->compliance - 0.5) < 1e-9); /* cycle 1: demand, S = 0; cycle 3: no demand */
    assert_int_equal(a->jobs, 0); /* job 1 ends at 180, the window's (open) end; job 3 at 300 */
    assert_int_equal(b->jobs, 1);
    assert_true(b->preemptions == 1 && b->q_p50 == 60);
    ds_usage_report_free(&r);
    /* the outputs: CSV has a header and a row per tenant plus the total; JSON parses */
    ds_usage_compute(&d, 0, 400, 0, 0.95, &r);
    snprintf(path, sizeof path, "%s/u.csv", dir);
    f = fopen(path, "w");
    ds_usage_print_csv(f, &r);
    fclose(f);
    char *csv = tu_slurp(path, NULL);
    assert_non_null(strstr(csv, "tenant,jobs,gpu_hours,g_gpu_hours"));
    assert_non_null(strstr(csv, "\nall,3,"));
    free(csv);
    snprintf(path, sizeof path, "%s/u.json", dir);
    f = fopen(path, "w");
    assert_int_equal(ds_usage_print_json(f, &r, "simulation"), 0);
    fclose(f);
    char *js = tu_slurp(path, NULL);
    assert_non_null(strstr(js, "\"lent_gpu_hours\""));
    free(js);
    snprintf(path, sizeof path, "%s/plot", dir);
    assert_int_equal(ds_usage_write_plot(path, &r, &err), 0);
    ds_usage_report_free(&r);
    ds_usage_free(&d);
    tu_remove_dir(dir);
}

static void expect_file_error(const char *name, const char *text, int samples, long line, const char *field, const char *needle)
{
    const char *p = tu_write_temp(name, text);
    ds_usage_data_t d;
    ds_usage_init(&d);
    ds_error_t err;
    ds_error_clear(&err);
    int rc = samples ? ds_usage_read_samples_csv(&d, p, &err) : ds_usage_read_jobs_csv(&d, p, &err);
    assert_int_not_equal(rc, 0);
    tu_expect_error(&err, name, line, field, needle);
    ds_usage_free(&d);
}

static void test_run_errors(void **st)
{
    (void)st;
    const char *jh = "job_id,tenant,user,gpus,submit,start,end,queue,jct,duration,preemptions,colocated\n";
    char buf[512];
    snprintf(buf, sizeof buf, "%s1,A,u,2,100,50,200,0,100,100,0,0\n", jh);
    expect_file_error("j1.csv", buf, 0, 2, "start", "");
    snprintf(buf, sizeof buf, "%s1,A,u,2,0,10,200,500,200,100,0,0\n", jh);
    expect_file_error("j2.csv", buf, 0, 2, "queue", "");
    snprintf(buf, sizeof buf, "%s1,A,u,2,0,10,200,0,200\n", jh);
    expect_file_error("j3.csv", buf, 0, 2, "", "expected 12 fields");
    expect_file_error("j4.csv", "job_id,tenant\n1,A\n", 0, 1, "user", "missing required column");
    const char *sh = "time,tenant,quota_gpus,g_gpus,be_gpus,pending_gpus,qad,qad_smoothed\n";
    snprintf(buf, sizeof buf, "%s60,A,4,1,0,0,1,1.5\n", sh);
    expect_file_error("s1.csv", buf, 1, 2, "qad_smoothed", "");
    snprintf(buf, sizeof buf, "%s60,A,4,1,0,0,1,1\n0,A,4,1,0,0,1,1\n", sh);
    expect_file_error("s2.csv", buf, 1, 3, "time", "out of time order");
    snprintf(buf, sizeof buf, "%s0,A,4,1,0,0,1,1\n60,A,4,1,0,0,1,1\n90,A,4,1,0,0,1,1\n", sh);
    expect_file_error("s3.csv", buf, 1, 4, "time", "step");
    snprintf(buf, sizeof buf, "%s0,A,4,-1,0,0,1,1\n", sh);
    expect_file_error("s4.csv", buf, 1, 2, "g_gpus", "");
}

/* A simulated run written with --out and read back: the G + BE GPU-hours of the samples are the busy GPU
 * integral of the run (up to the sampling), and the jobs are all there. */
static void test_simulated_run_reads_back(void **st)
{
    (void)st;
    ds_synth_config_t sc;
    ds_synth_config_default(&sc);
    sc.jobs = 800;
    sc.nodes = 8;
    sc.tenants = 4;
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    assert_int_equal(ds_synth_generate(&t, &sc, &err), 0);
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.engine.mode = DS_MODE_POOLED;
    c.policy = ds_policy_find("deepshare");
    c.keep_series = 1;
    ds_sim_result_t r;
    tu_sim(&t, &c, &r);
    char dir[256];
    tu_make_dir("ds_usage_sim", dir, sizeof dir);
    assert_int_equal(ds_report_write_csv(dir, &t, &r, &err), 0);
    ds_usage_data_t d;
    ds_usage_init(&d);
    if (ds_usage_read_run(&d, dir, &err)) fail_msg("%s", err.msg);
    assert_int_equal(d.njobs, t.njobs);
    assert_int_equal(d.nsamples, r.nseries * t.ntenants);
    ds_usage_report_t u;
    ds_usage_compute(&d, INT64_MIN / 4, INT64_MAX / 4, 0, 0.95, &u);
    const ds_usage_row_t *all = row(&u, "all");
    assert_int_equal(all->jobs, t.njobs);
    double held_jobs = 0;
    int64_t pre = 0;
    for (int32_t j = 0; j < t.njobs; j++) held_jobs += (double)t.jobs[j].gpus * (double)(r.end[j] - r.submit[j] - r.queued[j]) / 3600.0;
    for (int32_t j = 0; j < t.njobs; j++) pre += r.preempts[j];
    fprintf(stderr, "  sampled G+BE %.1f GPU-h (G %.1f, BE %.1f, borrowed %.1f, lent %.1f), held by jobs %.1f GPU-h\n",
            all->gpu_h, all->g_h, all->be_h, all->borrowed_h, all->lent_h, held_jobs);
    /* sampling every 60 s: each job's hold is counted to within a cycle at each end */
    assert_true(fabs(all->gpu_h - held_jobs) <= 0.02 * held_jobs + 1);
    assert_true(fabs(all->g_h + all->be_h - all->gpu_h) < 1e-6);
    assert_true(all->lent_h <= all->borrowed_h + 1e-9);
    assert_int_equal((int64_t)all->preemptions, pre);
    assert_true(all->compliance >= 0 && all->compliance <= 1);
    ds_usage_report_free(&u);
    ds_usage_free(&d);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
    tu_remove_dir(dir);
}


/* --metrics: Prometheus query_range answers as the reader sees them */
static const char *matrix(char *buf, size_t n, const char *series)
{
    snprintf(buf, n, "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[%s]}}", series);
    return buf;
}

static void test_prom_figures(void **st)
{
    (void)st;
    ds_usage_data_t d;
    ds_usage_init(&d);
    ds_usage_prom_t p;
    ds_usage_prom_init(&p);
    ds_error_t err;
    char b[2000];
    /* tenant t: quota 4, 2 G GPUs at 0, 60 and 120 (120 is outside [0, 120)); the pieces of a long window
     * share end points, so 60 comes twice; a NaN point is skipped; u has no BE series at 60: incomplete */
    const char *gauge[DS_PROM_NGAUGES] = {"\"4\"", "\"2\"", "\"0\"", "\"1\"", "\"0.5\"", "\"0.5\""};
    for (int f = 0; f < DS_PROM_NGAUGES; f++) {
        char ser[900];
        snprintf(ser, sizeof ser,
                 "{\"metric\":{\"tenant\":\"t\"},\"values\":[[0,%s],[60,%s],[60,%s],[120,%s],[90,\"NaN\"]]},"
                 "{\"metric\":{\"tenant\":\"u\"},\"values\":[[60,%s]%s]}",
                 gauge[f], gauge[f], gauge[f], gauge[f], gauge[f], f == DS_PROM_BE ? "" : ",[0,\"1\"]");
        ds_error_clear(&err);
        matrix(b, sizeof b, ser); /* before strlen(b): argument order is unspecified */
        int rc = ds_usage_prom_add(&p, &d, f, b, strlen(b), &err);
        if (rc) fail_msg("%s: %s", err.msg, b);
        assert_int_equal(ds_usage_prom_add(&p, &d, f, matrix(b, sizeof b, ser), strlen(b), &err), 0);
    }
    /* the counter: instance x 2 -> 5, instance y 3 -> 0 (restart) -> 1; a point outside the window ignored */
    matrix(b, sizeof b,
           "{\"metric\":{\"tenant\":\"t\",\"instance\":\"x\"},\"values\":[[0,\"2\"],[60,\"5\"],[60,\"5\"]]},"
           "{\"metric\":{\"tenant\":\"t\",\"instance\":\"y\"},\"values\":[[0,\"3\"],[60,\"0\"],[120,\"1\"],[500,\"9\"]]}");
    assert_int_equal(ds_usage_prom_add(&p, &d, DS_PROM_PREEMPTIONS, b, strlen(b), &err), 0);
    int64_t incomplete = 0;
    assert_int_equal(ds_usage_prom_finish(&p, &d, 60, 0, 120, &incomplete, &err), 0);
    assert_int_equal(incomplete, 1); /* u at 0 lacks its BE point */
    ds_usage_prom_free(&p);
    ds_usage_report_t r;
    ds_usage_compute(&d, 0, 120, 0, 0.95, &r);
    const ds_usage_row_t *t = row(&r, "t");
    assert_true(fabs(t->g_h - 2 * 2.0 / 60) < 1e-9);  /* two samples of 2 GPUs x 60 s */
    assert_true(fabs(t->quota_h - 4 * 2.0 / 60) < 1e-9);
    assert_true(fabs(t->under_h - 2.0 / 60) < 1e-9);   /* demand, smoothed 0.5 < 0.95 */
    assert_true(fabs(t->compliance) < 1e-9);
    assert_true(fabs(t->preemptions - 4) < 1e-9);     /* x: 3; y: restart (0), then 1 */
    assert_true(fabs(row(&r, "u")->g_h - 2.0 / 60) < 1e-9); /* its sample at 60 only */
    ds_usage_report_free(&r);
    ds_usage_free(&d);
}

static void expect_prom_error(int field, const char *answer, const char *needle)
{
    ds_usage_data_t d;
    ds_usage_init(&d);
    ds_usage_prom_t p;
    ds_usage_prom_init(&p);
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_not_equal(ds_usage_prom_add(&p, &d, field, answer, strlen(answer), &err), 0);
    char msg[600];
    ds_error_format(&err, msg, sizeof msg);
    if (!strstr(msg, needle) || !strstr(msg, ds_usage_prom_metric[field])) fail_msg("'%s' lacks '%s'", msg, needle);
    ds_usage_prom_free(&p);
    ds_usage_free(&d);
}

static void test_prom_errors(void **st)
{
    (void)st;
    char b[600];
    expect_prom_error(DS_PROM_G, "<html>nope</html>", "not JSON");
    expect_prom_error(DS_PROM_G, "{\"status\":\"error\",\"errorType\":\"bad_data\",\"error\":\"parse error\"}", "parse error");
    expect_prom_error(DS_PROM_G, "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":[]}}", "matrix");
    expect_prom_error(DS_PROM_G, "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\"}}", "array of series");
    expect_prom_error(DS_PROM_G, matrix(b, sizeof b, "{\"metric\":{},\"values\":[[0,\"1\"]]}"), "tenant");
    expect_prom_error(DS_PROM_G, matrix(b, sizeof b, "{\"metric\":{\"tenant\":\"\"},\"values\":[[0,\"1\"]]}"), "empty");
    expect_prom_error(DS_PROM_G, matrix(b, sizeof b, "{\"metric\":{\"tenant\":\"a\"},\"values\":[[0,1]]}"), "points");
    expect_prom_error(DS_PROM_G, matrix(b, sizeof b, "{\"metric\":{\"tenant\":\"a\"},\"values\":[[\"0\",\"1\"]]}"), "points");
    expect_prom_error(DS_PROM_G, matrix(b, sizeof b, "{\"metric\":{\"tenant\":\"a\"},\"values\":[[0,\"1x\"]]}"), "points");
    expect_prom_error(DS_PROM_G, matrix(b, sizeof b, "{\"metric\":{\"tenant\":\"a\"},\"values\":[[0,\"-1\"]]}"), "out of range");
    expect_prom_error(DS_PROM_G, matrix(b, sizeof b, "{\"metric\":{\"tenant\":\"a\"},\"values\":[[0,\"+Inf\"]]}"), "out of range");
    expect_prom_error(DS_PROM_SMOOTHED, matrix(b, sizeof b, "{\"metric\":{\"tenant\":\"a\"},\"values\":[[0,\"1.5\"]]}"), "out of range");
    expect_prom_error(DS_PROM_G, matrix(b, sizeof b, "{\"metric\":{\"tenant\":\"a\"},\"values\":[[1e300,\"1\"]]}"), "points");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_journal_figures),
        cmocka_unit_test(test_journal_wall_times),
        cmocka_unit_test(test_journal_errors),
        cmocka_unit_test(test_run_figures),
        cmocka_unit_test(test_run_errors),
        cmocka_unit_test(test_simulated_run_reads_back),
        cmocka_unit_test(test_prom_figures),
        cmocka_unit_test(test_prom_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
