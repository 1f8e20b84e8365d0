/* test_rtmodel.c: deepshared's boosted runtime predictor (src/daemon/rtmodel.c): it learns what the
 * per-tenant means cannot (run time by GPU count within one user), from the journal at open as from the
 * jobs recorded after, keeps the time limits' cap, does not forget when the clock steps back, stays
 * bounded over a long life, and forwards batch evidence to the engine's slots through compactions. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "daemon/hist.h"
#include "daemon/rtmodel.h"

/* A daemon-like trace of one job (Slurm id, tenant t, user) to be predicted. */
static int32_t add_user_job(ds_trace_t *t, int64_t id, const char *user, int gpus, int64_t submit, int32_t limit)
{
    if (t->ntenants == 0) ds_trace_add_tenant(t, "t", 8);
    ds_job_t *j = ds_trace_add_job(t);
    j->id = id;
    j->tenant = 0;
    j->user = ds_strtab_intern(&t->users, user);
    j->gpus = gpus;
    j->cpus = 1;
    j->submit = submit;
    j->limit = limit;
    return t->njobs - 1;
}

static int32_t add_job(ds_trace_t *t, int64_t id, int gpus, int64_t submit, int32_t limit)
{
    return add_user_job(t, id, "u", gpus, submit, limit);
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
    rtmodel_init(&r, 3, 3600, 60, NULL, NULL);
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
    rtmodel_init(&r, 3, 3600, 60, NULL, NULL);
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
    rtmodel_init(&r, 3, 3600, 60, NULL, NULL);
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
    rtmodel_init(&r, 3, 3600, 60, NULL, NULL);
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

/* The slot of t holding Slurm id, -1 when none. */
static int32_t slot_of(const ds_trace_t *t, int64_t id)
{
    for (int32_t s = 0; s < t->njobs; s++)
        if (t->jobs[s].id == id) return s;
    return -1;
}

/* Whether batch_revised named exactly the slots of t holding ids[0..n). */
static void assert_revised(rtmodel_t *r, const ds_trace_t *t, int64_t finished, const int64_t *ids, int32_t n)
{
    int32_t got;
    const int32_t *v = rtmodel_batch_revised(r, t, slot_of(t, finished), &got);
    assert_int_equal(got, n);
    for (int32_t k = 0; k < n; k++) {
        int found = 0;
        for (int32_t x = 0; x < got; x++) found |= v[x] == slot_of(t, ids[k]);
        if (!found) fail_msg("job %lld's slot missing from the siblings of %lld", (long long)ids[k], (long long)finished);
    }
}

/* 30 batches of two 2-GPU jobs of user w, submitted a second apart and predicted then; the second starts when the
 * first ends and runs exactly as long: the batch's estimate beats the model's on (nearly) every one, which puts
 * the evidence in use (the record: at least 20 finishes, wins - n/2 > sqrt(n)). */
static void earn_record(rtmodel_t *r, ds_trace_t *t)
{
    for (int b = 0; b < 30; b++) {
        int64_t s0 = 10000 + 30000L * b;
        double d = 3000 + 250 * b;
        int32_t a = add_user_job(t, 50000 + 2 * b, "w", 2, s0, 0), c = add_user_job(t, 50001 + 2 * b, "w", 2, s0 + 1, 0);
        rtmodel_predict(r, t, a, s0 + 1);
        rtmodel_predict(r, t, c, s0 + 1);
        int64_t end_a = s0 + 10 + (int64_t)d;
        rtmodel_learn(r, 50000 + 2 * b, "t", "w", 2, d, end_a, s0, 0);
        rtmodel_learn(r, 50001 + 2 * b, "t", "w", 2, d, end_a + (int64_t)d, s0 + 1, 0);
    }
}

/* Batch evidence in deepshared (docs/deepshared.md, "Runtime prediction"), worked by hand: four 2-GPU jobs of
 * user u submitted 5 s apart are one batch; a finished sibling sets the others' estimate, on the engine's slots,
 * and the batch (its rows, finished durations and the record) survives a compaction and an engine rebuild that
 * renumbers the slots. */
static void test_batch_evidence(void **state)
{
    (void)state;
    rtmodel_t r;
    rtmodel_init(&r, 3, 3600, 60, NULL, NULL);
    ds_runtime_predictor_t p;
    rtmodel_predictor(&p, &r);
    assert_non_null(p.batch_total);
    assert_non_null(p.batch_revised);
    ds_trace_t t;
    ds_trace_init(&t);
    earn_record(&r, &t);
    assert_true(ds_runtime_model_batch_trusted(r.m));
    const int64_t S = 1000000;
    /* 9001-9004: the batch (9004 with a limit of 4,100 s); 9005: another GPU count; 9006: 185 s after 9004 */
    int32_t j1 = add_job(&t, 9001, 2, S, 0), j2 = add_job(&t, 9002, 2, S + 5, 0), j3 = add_job(&t, 9003, 2, S + 10, 0);
    int32_t j4 = add_job(&t, 9004, 2, S + 15, 4100), j5 = add_job(&t, 9005, 1, S + 5, 0), j6 = add_job(&t, 9006, 2, S + 200, 0);
    for (int32_t j = j1; j <= j6; j++) rtmodel_predict(&r, &t, j, S + 200);
    for (int32_t j = j1; j <= j6; j++) assert_true(p.batch_total(p.ctx, &t, j, 0) < 0); /* nothing finished */
    /* 9001 runs 4,000 s: the others are expected to run as long */
    rtmodel_learn(&r, 9001, "t", "u", 2, 4000, S + 4020, S, 0);
    assert_revised(&r, &t, 9001, (const int64_t[]){9002, 9003, 9004}, 3);
    assert_true(fabs(p.batch_total(p.ctx, &t, j2, 0) - 4000) < 1e-9);
    /* past every finished sibling: its elapsed time and 10% more (at least a minute) */
    assert_true(fabs(p.batch_total(p.ctx, &t, j2, 4100) - 4510) < 1e-9);
    assert_true(fabs(p.batch_total(p.ctx, &t, j4, 0) - 4000) < 1e-9);
    assert_true(p.batch_total(p.ctx, &t, j5, 0) < 0 && p.batch_total(p.ctx, &t, j6, 0) < 0);
    /* 9002 runs 5,000 s: the median of the two; 9004's limit caps it */
    rtmodel_learn(&r, 9002, "t", "u", 2, 5000, S + 5030, S + 5, 0);
    assert_revised(&r, &t, 9002, (const int64_t[]){9003, 9004}, 2);
    assert_revised(&r, &t, 9001, NULL, 0); /* only the latest finish names its siblings */
    assert_true(fabs(p.batch_total(p.ctx, &t, j3, 0) - 4500) < 1e-9);
    assert_true(fabs(p.batch_total(p.ctx, &t, j3, 4600) - 5000) < 1e-9); /* only 5,000 ran longer */
    assert_true(fabs(p.batch_total(p.ctx, &t, j4, 0) - 4100) < 1e-9);
    /* 30 more finishes of another user push 9001 and 9002 out of the latest 20, then a compaction (forced by a
     * small table) keeps them beside their waiting siblings, and keeps the record */
    for (int i = 0; i < 30; i++) rtmodel_learn(&r, 70000 + (uint32_t)i, "t", "x", 1, 50, S + 6000 + 100 * i, S + 5950 + 100 * i, 0);
    int32_t rows = r.t.njobs;
    r.max_rows = 40;
    rtmodel_predict(&r, &t, add_user_job(&t, 9100, "y", 1, S + 9000, 0), S + 9000);
    assert_int_equal(r.compactions, 1);
    assert_true(r.t.njobs < rows && r.t.njobs < r.max_rows);
    assert_true(ds_runtime_model_batch_trusted(r.m));
    assert_true(fabs(p.batch_total(p.ctx, &t, j3, 0) - 4500) < 1e-9);
    assert_true(fabs(p.batch_total(p.ctx, &t, j4, 0) - 4100) < 1e-9);
    assert_true(p.batch_total(p.ctx, &t, j6, 0) < 0);
    /* the engine is rebuilt: the same jobs in other slots (reversed, after two placeholders) */
    ds_trace_t t2;
    ds_trace_init(&t2);
    add_user_job(&t2, -1, "?", 1, 0, 0);
    add_user_job(&t2, -2, "?", 1, 0, 0);
    for (int32_t j = t.njobs - 1; j >= j1; j--) {
        const ds_job_t *o = &t.jobs[j];
        add_user_job(&t2, o->id, t.users.s[o->user], o->gpus, o->submit, o->limit);
    }
    int32_t k3 = slot_of(&t2, 9003), k4 = slot_of(&t2, 9004);
    assert_true(k3 != j3 && k4 != j4);
    assert_true(fabs(p.batch_total(p.ctx, &t2, k3, 0) - 4500) < 1e-9);
    /* 9003 runs 4,200 s: 9004, in its new slot, is revised to the median of 4,000, 4,200 and 5,000 */
    rtmodel_learn(&r, 9003, "t", "u", 2, 4200, S + 9100, S + 10, 0);
    assert_revised(&r, &t2, 9003, (const int64_t[]){9004}, 1);
    assert_true(fabs(p.batch_total(p.ctx, &t2, k4, 0) - 4100) < 1e-9);    /* capped at its limit */
    assert_true(fabs(p.batch_total(p.ctx, &t2, k4, 4150) - 4600) < 1e-9); /* past it: 4,200 and 5,000 ran longer */
    ds_trace_free(&t2);
    ds_trace_free(&t);
    rtmodel_free(&r);
}

/* A restarted daemon replays its journal in order of finish: the batch's finished members reach the table among
 * other jobs of the same user and GPU count (here one submitted half a day before), and the batch still forms
 * by submission, so a sibling still waiting gets the median of those that finished before the restart. */
static void test_batch_after_restart(void **state)
{
    (void)state;
    rtmodel_t r;
    rtmodel_init(&r, 3, 3600, 60, NULL, NULL);
    ds_trace_t t;
    ds_trace_init(&t);
    earn_record(&r, &t);
    const int64_t S = 1000000;
    rtmodel_learn(&r, 8001, "t", "u", 2, 3000, S + 3000, S, 0);
    rtmodel_learn(&r, 7001, "t", "u", 2, 40000, S + 3010, S - 50000, 0); /* a straggler between them */
    rtmodel_learn(&r, 8002, "t", "u", 2, 3200, S + 3203, S + 3, 0);
    int32_t j3 = add_job(&t, 8003, 2, S + 6, 0);
    rtmodel_predict(&r, &t, j3, S + 3300);
    assert_true(fabs(rtmodel_batch_total(&r, &t, j3, 0) - 3100) < 1e-9);
    ds_trace_free(&t);
    rtmodel_free(&r);
}

/* batch_gap = 0 (the daemon's config): no batch evidence at all, as --batch-gap 0 in the simulator. */
static void test_batch_evidence_off(void **state)
{
    (void)state;
    rtmodel_t r;
    rtmodel_init(&r, 3, 3600, 0, NULL, NULL);
    ds_runtime_predictor_t p;
    rtmodel_predictor(&p, &r);
    assert_null(p.batch_total);
    assert_null(p.batch_revised);
    ds_trace_t t;
    ds_trace_init(&t);
    int32_t a = add_job(&t, 1, 2, 1000, 0), b = add_job(&t, 2, 2, 1005, 0);
    rtmodel_predict(&r, &t, a, 1005);
    rtmodel_predict(&r, &t, b, 1005);
    rtmodel_learn(&r, 1, "t", "u", 2, 4000, 5000, 1000, 0);
    int32_t n;
    rtmodel_batch_revised(&r, &t, a, &n);
    assert_int_equal(n, 0);
    assert_true(rtmodel_batch_total(&r, &t, b, 0) < 0);
    ds_trace_free(&t);
    rtmodel_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_learns_what_means_cannot),
        cmocka_unit_test(test_limits_and_clock),
        cmocka_unit_test(test_bounded),
        cmocka_unit_test(test_journal_feeds_model),
        cmocka_unit_test(test_batch_evidence),
        cmocka_unit_test(test_batch_after_restart),
        cmocka_unit_test(test_batch_evidence_off),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
