/* test_rtmodel.c: deepshared's boosted runtime predictor (src/daemon/rtmodel.c): it learns what the
 * per-tenant means cannot (run time by GPU count within one user), from the journal at open as from the
 * jobs recorded after, keeps the time limits' cap, does not forget when the clock steps back, and stays
 * bounded over a long life. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "daemon/hist.h"
#include "daemon/rtmodel.h"

/* A daemon-like trace of one job (Slurm id, tenant t, user u) to be predicted. */
static int32_t add_job(ds_trace_t *t, int64_t id, int gpus, int64_t submit, int32_t limit)
{
    if (t->ntenants == 0) ds_trace_add_tenant(t, "t", 8);
    ds_job_t *j = ds_trace_add_job(t);
    j->id = id;
    j->tenant = 0;
    j->user = ds_strtab_intern(&t->users, "u");
    j->gpus = gpus;
    j->cpus = 1;
    j->submit = submit;
    j->limit = limit;
    return t->njobs - 1;
}

/* 1-GPU jobs of 100 s and 4-GPU jobs of 4,000 s of the same user, alternating, ending a minute apart. */
static void learn_sizes(rtmodel_t *r, int n, uint32_t first_id, int64_t t0)
{
    for (int i = 0; i < n; i++) {
        int big = i % 2;
        double secs = big ? 4000 : 100;
        int64_t end = t0 + 60 * i;
        rtmodel_learn(r, first_id + (uint32_t)i, "t", "u", big ? 4 : 1, secs, end, end - (int64_t)secs - 5, 0);
    }
}

static void test_learns_what_means_cannot(void **state)
{
    (void)state;
    rtmodel_t r;
    rtmodel_init(&r, 3, 3600, NULL, NULL);
    ds_trace_t t;
    ds_trace_init(&t);
    int32_t early = add_job(&t, 1, 4, 1000, 0);
    /* nothing finished yet: the configured default */
    assert_true(fabs(rtmodel_predict(&r, &t, early, 1000) - 3600) < 1e-9);
    learn_sizes(&r, 200, 100, 2000);
    int32_t small = add_job(&t, 1000, 1, 20000, 0), big = add_job(&t, 1001, 4, 20000, 0);
    double ps = rtmodel_predict(&r, &t, small, 20000), pb = rtmodel_predict(&r, &t, big, 20000);
    /* the geometric mean of both kinds is 632 s for every job; the model tells them apart (its few trees, at
     * 200 finishes, go part of the way from that mean to 4,000 s) */
    assert_true(ps < 300);
    assert_true(pb > 1000 && pb > 4 * ps);
    /* a job's prediction is stable from pass to pass */
    assert_true(fabs(rtmodel_predict(&r, &t, big, 20010) - pb) < 1e-9);
    /* the same job learned when it finishes becomes part of the history, not a second row */
    int32_t rows = r.t.njobs;
    rtmodel_learn(&r, 1001, "t", "u", 4, 4000, 24000, 20000, 0);
    assert_int_equal(r.t.njobs, rows);
    assert_int_equal(r.learned, 201);
    ds_trace_free(&t);
    rtmodel_free(&r);
}

static void test_limits_and_clock(void **state)
{
    (void)state;
    rtmodel_t r;
    rtmodel_init(&r, 3, 3600, NULL, NULL);
    learn_sizes(&r, 100, 1, 5000);
    ds_trace_t t;
    ds_trace_init(&t);
    /* Slurm ends the job at its limit: never predicted beyond it */
    int32_t capped = add_job(&t, 500, 4, 12000, 600);
    assert_true(rtmodel_predict(&r, &t, capped, 12000) <= 600);
    int32_t big = add_job(&t, 501, 4, 12000, 0);
    double pb = rtmodel_predict(&r, &t, big, 12000);
    /* the wall clock steps back an hour: the model keeps what it learned */
    int32_t again = add_job(&t, 502, 4, 8400, 0);
    double pa = rtmodel_predict(&r, &t, again, 8400);
    assert_int_equal(r.learned, 100);
    assert_true(pa > 1000 && pb > 1000);
    ds_trace_free(&t);
    rtmodel_free(&r);
}

static void test_bounded(void **state)
{
    (void)state;
    rtmodel_t r;
    rtmodel_init(&r, 3, 3600, NULL, NULL);
    r.max_rows = 400;
    ds_trace_t t;
    ds_trace_init(&t);
    /* jobs predicted and never learned (cancelled) besides the finished ones */
    for (int i = 0; i < 300; i++) rtmodel_predict(&r, &t, add_job(&t, 100000 + i, 1, 100 + i, 0), 100 + i);
    learn_sizes(&r, 1500, 1, 1000);
    assert_true(r.compactions > 0);
    assert_true(r.t.njobs < r.max_rows);
    int32_t small = add_job(&t, 900000, 1, 200000, 0), big = add_job(&t, 900001, 4, 200000, 0);
    assert_true(rtmodel_predict(&r, &t, small, 200000) < 300);
    assert_true(rtmodel_predict(&r, &t, big, 200000) > 1000);
    ds_trace_free(&t);
    rtmodel_free(&r);
}

static void hook(void *ctx, uint32_t id, const char *tenant, const char *user, int gpus, double seconds, int64_t end,
                 int64_t submit, double limit)
{
    rtmodel_learn(ctx, id, tenant, user, gpus, seconds, end, submit, limit);
}

/* The journal a restarted daemon opens teaches the model as it teaches the means, and so does each record. */
static void test_journal_feeds_model(void **state)
{
    (void)state;
    char text[64 * 1024];
    size_t n = (size_t)snprintf(text, sizeof text, "slurm_job_id,tenant,user,gpus,seconds,end,start,submit,limit\n");
    for (int i = 0; i < 120; i++) {
        int big = i % 2;
        int secs = big ? 4000 : 100;
        long end = 1700000000L + 60L * i;
        n += (size_t)snprintf(text + n, sizeof text - n, "%d,t,u,%d,%d,%ld,%ld,%ld,0\n", 10 + i, big ? 4 : 1, secs, end,
                              end - secs, end - secs - 5);
    }
    const char *path = tu_write_temp("rtmodel-journal.csv", text);
    hist_t h;
    rtmodel_t r;
    hist_init(&h, 3, 3600);
    rtmodel_init(&r, 3, 3600, NULL, NULL);
    h.on_learn = hook;
    h.on_learn_ctx = &r;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(hist_open(&h, path, NULL, &err), 0);
    assert_int_equal(h.records, 120);
    assert_int_equal(r.learned, 120);
    char msg[300];
    assert_int_equal(hist_record(&h, 5000, "t", "u", 4, 4000, 1700010000, 1700006000, 1700005990, 0, msg, sizeof msg), 0);
    assert_int_equal(r.learned, 121);
    /* a record already journaled is not learned twice */
    assert_int_equal(hist_record(&h, 5000, "t", "u", 4, 4000, 1700010000, 1700006000, 1700005990, 0, msg, sizeof msg), 0);
    assert_int_equal(r.learned, 121);
    ds_trace_t t;
    ds_trace_init(&t);
    int32_t small = add_job(&t, 6000, 1, 1700020000, 0), big = add_job(&t, 6001, 4, 1700020000, 0);
    ds_runtime_predictor_t p;
    rtmodel_predictor(&p, &r);
    assert_string_equal(p.name, "boosted");
    assert_true(p.predict(p.ctx, &t, small, 1700020000) < 300);
    assert_true(p.predict(p.ctx, &t, big, 1700020000) > 1000);
    /* the means see one tenant's mixture */
    double mean = hist_predict(&h, "t", "u");
    assert_true(mean > 300 && mean < 2000);
    ds_trace_free(&t);
    hist_free(&h);
    rtmodel_free(&r);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_learns_what_means_cannot),
        cmocka_unit_test(test_limits_and_clock),
        cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_journal_feeds_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
