/* test_withdraw.c: ds_engine_withdraw and every registered policy's withdraw hook: a pending job leaves
 * (a cancel, a hold by its owner, a partition change) and nothing else moves -- every other job's run state,
 * every tenant's counters and DeepShare's smoothed QAD stay bit-identical -- with no new engine; a withdrawn
 * job may arrive again and finish; a rebuild, the daemon's old answer to a cancel, would have reset S. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deepshare/policy.h"
#include "deepshare/qad.h"
#include "deepshare/speeds.h"
#include "deepshare/synth.h"
#include "policy/deepshare/ds_internal.h"

/* Reference-simulator quirks off, as in test_invariants: the clean model. */
static const char *const quirks[][2] = {{"lucid-reference", "0"}, {"tiresias-finish-lag", "0"}};

static void synth_trace(ds_trace_t *t, int32_t jobs)
{
    ds_synth_config_t sc;
    ds_synth_config_default(&sc);
    sc.jobs = jobs;
    sc.nodes = 12;
    sc.tenants = 4;
    sc.load = 1.2; /* enough contention that jobs wait */
    sc.be_share = 0.2;
    ds_trace_init(t);
    ds_error_t err;
    assert_int_equal(ds_synth_generate(t, &sc, &err), 0);
}

/* A minimal driver: jobs run at rate 1 (sharing or not) and finish when their work and restart overheads
 * are done; decisions are taken as made. */
typedef struct drv {
    const ds_trace_t *t;
    ds_engine_t *e;
    void *pc;
    int64_t next_arr;
    uint8_t *gone;      /* withdrawn for good */
    int64_t *back_at;   /* withdrawn, arrives again then (-1: not waiting to) */
} drv_t;

static void drv_open(drv_t *d, const ds_trace_t *t, const ds_policy_ops_t *ops, ds_mode_t mode)
{
    memset(d, 0, sizeof *d);
    d->t = t;
    ds_engine_config_t c;
    ds_engine_config_default(&c);
    c.mode = mode;
    d->pc = ops->config_new ? ops->config_new() : NULL;
    for (size_t i = 0; d->pc && ops->config_set && i < sizeof quirks / sizeof quirks[0]; i++) {
        ds_error_t qerr;
        int rc = ops->config_set(d->pc, quirks[i][0], quirks[i][1], &qerr);
        assert_true(rc == DS_OK || rc == DS_ENOTFOUND);
    }
    ds_error_t err;
    ds_error_clear(&err);
    if (ds_engine_create(&d->e, t, &c, ops, d->pc, &err)) fail_msg("%s: %s", ops->name, err.msg);
    d->gone = ds_xcalloc((size_t)t->njobs, 1);
    d->back_at = ds_xmalloc((size_t)t->njobs * sizeof *d->back_at);
    for (int32_t j = 0; j < t->njobs; j++) d->back_at[j] = -1;
}

static void drv_close(drv_t *d)
{
    const ds_policy_ops_t *ops = d->e->ops;
    ds_engine_destroy(d->e);
    if (d->pc && ops->config_free) ops->config_free(d->pc);
    free(d->gone);
    free(d->back_at);
}

static int64_t finish_at(const ds_engine_t *e, int32_t j)
{
    const ds_jstate_t *s = ds_engine_job(e, j);
    double work = (double)e->trace->jobs[j].duration + s->overhead + s->finish_lag;
    int64_t left = (int64_t)ceil(work - (double)s->run_time);
    return s->last_start + (left > 1 ? left : 1);
}

static void check_all(const drv_t *d, int64_t now)
{
    char msg[200] = "";
    if (ds_engine_check(d->e, msg, sizeof msg) || (d->e->ops->check && d->e->ops->check(d->e, d->e->pstate, msg, sizeof msg)))
        fail_msg("%s at t=%lld: %s", d->e->ops->name, (long long)now, msg);
}

/* One event time in two halves: finishes and arrivals (and re-arrivals), then the pass. drv_pass returns
 * the next event time. */
static void drv_events(drv_t *d, int64_t t)
{
    ds_engine_t *e = d->e;
    for (int32_t j = 0; j < d->t->njobs; j++)
        if (ds_engine_job(e, j)->status == DS_JS_RUNNING && finish_at(e, j) <= t) ds_engine_finish(e, j, t);
    while (d->next_arr < d->t->njobs && d->t->jobs[d->next_arr].submit <= t) ds_engine_arrive(e, (int32_t)d->next_arr++, t);
    for (int32_t j = 0; j < d->t->njobs; j++)
        if (d->back_at[j] >= 0 && d->back_at[j] <= t) d->back_at[j] = -1, ds_engine_arrive(e, j, t);
}

static int64_t drv_pass(drv_t *d, int64_t t)
{
    ds_engine_t *e = d->e;
    ds_engine_schedule(e, t, ds_engine_next_timer(e, t - 1) <= t);
    ds_engine_clear_decisions(e);
    ds_engine_clear_rate_changes(e);
    check_all(d, t);
    int64_t nx = ds_engine_next_timer(e, t);
    if (d->next_arr < d->t->njobs && d->t->jobs[d->next_arr].submit < nx) nx = d->t->jobs[d->next_arr].submit;
    for (int32_t j = 0; j < d->t->njobs; j++) {
        if (ds_engine_job(e, j)->status == DS_JS_RUNNING && finish_at(e, j) < nx) nx = finish_at(e, j);
        if (d->back_at[j] >= 0 && d->back_at[j] < nx) nx = d->back_at[j];
    }
    return nx > t ? nx : t + 1;
}

static int64_t drv_step(drv_t *d, int64_t t)
{
    drv_events(d, t);
    return drv_pass(d, t);
}

static int drv_done(const drv_t *d)
{
    for (int32_t j = 0; j < d->t->njobs; j++)
        if (!d->gone[j] && ds_engine_job(d->e, j)->status != DS_JS_DONE) return 0;
    return 1;
}

/* What a withdrawal must leave as it was: every job's run state, every tenant's counters (its own pending
 * GPUs less the job's), the policy's order of the others, DeepShare's S. */
typedef struct snap {
    ds_jstate_t *js;
    int64_t *cnt;       /* 5 counters per tenant */
    int32_t *order, norder;
    double *S;
} snap_t;

static void snap_take(snap_t *s, const ds_engine_t *e)
{
    int32_t nj = e->trace->njobs, nt = e->trace->ntenants;
    s->js = ds_xmalloc((size_t)nj * sizeof *s->js);
    memcpy(s->js, e->js, (size_t)nj * sizeof *s->js);
    s->cnt = ds_xmalloc((size_t)nt * 5 * sizeof *s->cnt);
    for (int32_t i = 0; i < nt; i++) {
        int64_t *c = &s->cnt[i * 5];
        c[0] = e->tenant_g_gpus[i], c[1] = e->tenant_be_gpus[i], c[2] = e->tenant_pending_gpus[i];
        c[3] = e->tenant_running[i], c[4] = e->tenant_quota[i];
    }
    s->order = ds_xmalloc((size_t)(nj ? nj : 1) * sizeof *s->order);
    s->norder = ds_engine_pending_order(e, s->order, nj);
    s->S = NULL;
    if (!strcmp(e->ops->name, "deepshare")) {
        const dsp_t *p = e->pstate;
        s->S = ds_xmalloc((size_t)nt * sizeof *s->S);
        memcpy(s->S, p->S, (size_t)nt * sizeof *s->S);
    }
}

static void snap_free(snap_t *s)
{
    free(s->js);
    free(s->cnt);
    free(s->order);
    free(s->S);
}

static void snap_compare(const snap_t *s, const ds_engine_t *e, int32_t gone)
{
    const char *name = e->ops->name;
    int32_t nj = e->trace->njobs, nt = e->trace->ntenants, ten = e->trace->jobs[gone].tenant;
    for (int32_t j = 0; j < nj; j++)
        if (j != gone && memcmp(&s->js[j], &e->js[j], sizeof s->js[j]))
            fail_msg("%s: withdrawing job %d changed job %d's run state", name, gone, j);
    for (int32_t i = 0; i < nt; i++) {
        int64_t now[5] = {e->tenant_g_gpus[i], e->tenant_be_gpus[i], e->tenant_pending_gpus[i], e->tenant_running[i],
                          e->tenant_quota[i]};
        if (i == ten) now[2] += e->trace->jobs[gone].gpus;
        if (memcmp(now, &s->cnt[i * 5], sizeof now)) fail_msg("%s: withdrawing job %d changed tenant %d's counters", name, gone, i);
    }
    if (s->S && memcmp(s->S, ((const dsp_t *)e->pstate)->S, (size_t)nt * sizeof *s->S))
        fail_msg("%s: withdrawing job %d changed a smoothed QAD", name, gone);
    /* the policy's order of the others is the order it had, the withdrawn job left out */
    int32_t *o = ds_xmalloc((size_t)(nj ? nj : 1) * sizeof *o);
    int32_t n = ds_engine_pending_order(e, o, nj), k = 0;
    assert_int_equal(n, s->norder - 1);
    for (int32_t i = 0; i < s->norder; i++) {
        if (s->order[i] == gone) continue;
        if (o[k] != s->order[i]) fail_msg("%s: withdrawing job %d moved job %d in the pending order", name, gone, s->order[i]);
        k++;
    }
    free(o);
    const ds_jstate_t *g = ds_engine_job(e, gone);
    assert_int_equal(g->status, DS_JS_FUTURE);
    assert_int_equal(g->held, 0);
}

/* Runs a policy with a withdrawal every `every` seconds of the run (the pending job at a rotating place
 * of the policy's order; every third one held by the driver first), checking each against the state
 * before it; every other withdrawn job arrives again 900 s later. Returns the withdrawals made. */
static int run_with_withdrawals(const ds_trace_t *t, const ds_policy_ops_t *ops, ds_mode_t mode, int64_t every)
{
    drv_t d;
    drv_open(&d, t, ops, mode);
    ds_engine_t *e = d.e;
    const ds_engine_t *created = e;
    int64_t tnow = t->jobs[0].submit, next_w = tnow + every;
    int nw = 0, guard = 0;
    int32_t *order = ds_xmalloc((size_t)t->njobs * sizeof *order);
    while (!drv_done(&d)) {
        if (++guard > 2000000) fail_msg("%s: the run does not end", ops->name);
        int64_t nx = drv_step(&d, tnow);
        if (nx >= next_w) {
            int32_t n = ds_engine_pending_order(e, order, t->njobs);
            if (n > 0) {
                int32_t j = order[(int32_t)(((int64_t)nw * 7919) % n)];
                if (nw % 3 == 2 && !ds_engine_job(e, j)->held) ds_engine_hold(e, j, 1);
                snap_t s;
                snap_take(&s, e);
                int64_t queued = ds_engine_job(e, j)->queued, since = ds_engine_job(e, j)->pend_since;
                ds_engine_withdraw(e, j, tnow);
                snap_compare(&s, e, j);
                assert_true(ds_engine_job(e, j)->queued == queued + (tnow - since));
                snap_free(&s);
                check_all(&d, tnow);
                /* explaining the others still works: the head of the order, and the withdrawn job says nothing */
                int32_t head;
                if (ds_engine_pending_order(e, &head, 1) > 0) {
                    ds_buf_t b = {0};
                    ops->explain(e, e->pstate, head, tnow, &b);
                    free(ds_bdone(&b));
                }
                if (nw % 2) d.gone[j] = 1;
                else d.back_at[j] = tnow + 900;
                nw++;
            }
            next_w += every;
        }
        tnow = nx;
    }
    assert_ptr_equal(d.e, created); /* one engine all along: nothing was rebuilt */
    for (int32_t j = 0; j < t->njobs; j++) {
        int st = ds_engine_job(e, j)->status;
        if (d.gone[j]) assert_int_equal(st, DS_JS_FUTURE);
        else assert_int_equal(st, DS_JS_DONE);
    }
    free(order);
    drv_close(&d);
    return nw;
}

static void test_every_policy_has_withdraw(void **st)
{
    (void)st;
    for (const ds_policy_ops_t *const *p = ds_policy_list(); *p; p++)
        if (!(*p)->withdraw) fail_msg("policy %s has no withdraw hook (policy.h: required)", (*p)->name);
}

static void test_every_policy_withdraws(void **st)
{
    (void)st;
    ds_trace_t t;
    synth_trace(&t, 600);
    for (const ds_policy_ops_t *const *p = ds_policy_list(); *p; p++)
        for (int m = 0; m < 2; m++) {
            int nw = run_with_withdrawals(&t, *p, m ? DS_MODE_POOLED : DS_MODE_PARTITIONED, 1800);
            fprintf(stderr, "  %-10s %-11s %d withdrawals, each against the state before it\n", (*p)->name,
                    m ? "pooled" : "partitioned", nw);
            assert_true(nw >= 10);
        }
    ds_trace_free(&t);
}

/* The same on a mixed cluster (v100, p100, k80): FIFO for the engine's per-type pending GPUs (a withdrawn job
 * that asks for a type leaves them), the Kueue models for their own per-flavor books (an admitted workload
 * counts in its flavor's quota until it leaves; docs/peers.md). */
static void test_typed_withdraws(void **st)
{
    (void)st;
    char path[1024];
    const char *src = getenv("DS_SRC");
    snprintf(path, sizeof path, "%s/data/gavel/speeds.csv", src ? src : "..");
    ds_speeds_t sp;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_speeds_read(&sp, path, &err), 0);
    ds_synth_config_t sc;
    ds_synth_config_default(&sc);
    sc.jobs = 500;
    sc.tenants = 4;
    sc.load = 1.2;
    sc.gpu_types = "v100:4,p100:4,k80:4";
    sc.speeds = &sp;
    ds_trace_t t;
    ds_trace_init(&t);
    assert_int_equal(ds_synth_generate(&t, &sc, &err), 0);
    assert_int_equal(t.ngtypes, 3);
    for (const char *const *name = (const char *const[]){"fifo", "kueue", "kueue-fs", NULL}; *name; name++)
        for (int m = 0; m < 2; m++) {
            int nw = run_with_withdrawals(&t, ds_policy_find(*name), m ? DS_MODE_POOLED : DS_MODE_PARTITIONED, 1800);
            fprintf(stderr, "  %-10s %-11s typed: %d withdrawals\n", *name, m ? "pooled" : "partitioned", nw);
            assert_true(nw >= 10);
        }
    ds_trace_free(&t);
    ds_speeds_free(&sp);
}

/* A job that waits behind a full cluster is withdrawn by hand: it is gone from the policy's queue and the
 * job behind it takes the GPUs it would have had. */
static void test_withdraw_frees_the_head(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8", "1 A 8 0 100; 2 A 8 1 100; 3 A 4 2 100");
    for (int32_t j = 0; j < t.njobs; j++) t.jobs[j].gmem_mib = 20000; /* no two share a GPU */
    for (const char *const *name = (const char *const[]){"fifo", "deepshare", "kai", "kueue", NULL}; *name; name++) {
        drv_t d;
        drv_open(&d, &t, ds_policy_find(*name), DS_MODE_PARTITIONED);
        int64_t now = 0;
        while (now < 3) now = drv_step(&d, now);
        assert_int_equal(ds_engine_job(d.e, 0)->status, DS_JS_RUNNING);
        assert_int_equal(ds_engine_job(d.e, 1)->status, DS_JS_PENDING);
        ds_engine_withdraw(d.e, 1, 3);
        d.gone[1] = 1;
        while (!drv_done(&d)) now = drv_step(&d, now);
        /* job 3 starts once job 1 ends (Kueue: after its requeue period), not at 200 behind job 2 */
        int64_t fs = ds_engine_job(d.e, 2)->first_start;
        if (fs < 100 || fs > 110) fail_msg("%s: job 3 started at %lld, wanted 100 (+ a requeue period)", *name, (long long)fs);
        assert_int_equal(ds_engine_job(d.e, 1)->first_start, -1);
        drv_close(&d);
    }
    ds_trace_free(&t);
}

/* DeepShare, pooled, under load: a cancel leaves every tenant's smoothed QAD bit-identical, and at the cycle
 * that follows, the other tenants' S is bit for bit that of a twin engine fed the same events without the
 * cancel, while the cancelling tenant's S goes on smoothing from where it was (lambda Q + (1 - lambda) S).
 * The rebuild the daemon used to answer a cancel with (a new engine: running jobs adopted, pending ones
 * arrived again) warm-starts S at the current Q: the test counts the tenants it would have reset. Cancels at
 * six points of the run, one pair of twins each. */
static int twin_cancel(const ds_trace_t *t, int64_t at, int *reset, int *own)
{
    const ds_policy_ops_t *ops = ds_policy_find("deepshare");
    drv_t a, b;
    drv_open(&a, t, ops, DS_MODE_POOLED);
    drv_open(&b, t, ops, DS_MODE_POOLED);
    int64_t now = t->jobs[0].submit;
    int checked = 0;
    int32_t *order = ds_xmalloc((size_t)t->njobs * sizeof *order);
    const dsp_t *sa = a.e->pstate, *sb = b.e->pstate;
    int32_t nt = t->ntenants;
    while (!drv_done(&a)) {
        drv_events(&a, now);
        drv_events(&b, now);
        int32_t n = ds_engine_pending_order(b.e, order, t->njobs);
        /* a cycle instant after `at`, with work waiting: cancel in b just before the cycle's pass */
        if (now >= at && now % 60 == 0 && sb->s_init && n >= 2 && ds_engine_next_timer(b.e, now - 1) <= now) {
            int32_t j = order[n / 2], ten = t->jobs[j].tenant;
            double before[64], prev_own = sb->S[ten];
            assert_true(nt <= 64);
            memcpy(before, sb->S, (size_t)nt * sizeof *before);
            ds_engine_withdraw(b.e, j, now);
            assert_memory_equal(before, sb->S, (size_t)nt * sizeof *before);
            double q_own = dsp_qad_now(b.e, sb, ten);
            int64_t last = sb->last_cycle;
            int64_t na = drv_pass(&a, now), nb = drv_pass(&b, now);
            (void)na, (void)nb;
            assert_int_equal(sa->last_cycle, now);
            assert_int_equal(sb->last_cycle, now);
            for (int32_t i = 0; i < nt; i++) {
                if (i == ten) continue;
                if (memcmp(&sa->S[i], &sb->S[i], sizeof sa->S[i]))
                    fail_msg("tenant %d's smoothed QAD %.17g != %.17g after a cancel in tenant %d", i, sa->S[i], sb->S[i], ten);
                checked++;
            }
            /* the cancelling tenant's S goes on from where it was: lambda Q + (1 - lambda) S, Q without the job */
            if (last == now - 60) {
                double want = ds_qad_smooth(prev_own, q_own, sb->cfg.lambda);
                if (memcmp(&want, &sb->S[ten], sizeof want)) fail_msg("tenant %d's S %.17g, want %.17g", ten, sb->S[ten], want);
                (*own)++;
            }
            /* a rebuild would have started S again at Q now */
            for (int32_t i = 0; i < nt; i++) *reset += dsp_qad_now(b.e, sb, i) != sb->S[i];
            break;
        }
        int64_t na = drv_pass(&a, now), nb = drv_pass(&b, now);
        assert_int_equal(na, nb); /* twins: same events, same decisions */
        now = na;
    }
    free(order);
    drv_close(&a);
    drv_close(&b);
    return checked;
}

static void test_deepshare_qad_bit_identical(void **st)
{
    (void)st;
    ds_trace_t t;
    synth_trace(&t, 600);
    int checked = 0, reset = 0, cancels = 0, own = 0;
    for (int k = 0; k < 6; k++) {
        int c = twin_cancel(&t, t.jobs[0].submit + (11 + 3 * k) * 3600, &reset, &own);
        cancels += c > 0;
        checked += c;
    }
    fprintf(stderr, "  deepshare: %d cancels; %d tenant S compared bit for bit with the twin without the cancel; a "
                    "rebuild would have reset %d tenant S; the cancelling tenant's S smoothed on %d times\n", cancels, checked, reset, own);
    assert_int_equal(cancels, 6);
    assert_true(checked >= 6 * (t.ntenants - 1));
    assert_true(reset >= 1);
    ds_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_policy_has_withdraw),
        cmocka_unit_test(test_withdraw_frees_the_head),
        cmocka_unit_test(test_every_policy_withdraws),
        cmocka_unit_test(test_typed_withdraws),
        cmocka_unit_test(test_deepshare_qad_bit_identical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
