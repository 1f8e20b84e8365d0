/* test_tiresias.c: the incremental Tiresias (src/policy/tiresias.c) against a plain one that sorts
 * every job of a partition at every round, kept here as the oracle: same starts, ends and preemptions
 * for every job on synthetic workloads, partitioned and pooled, and on Venus when present. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "deepshare/policy.h"
#include "deepshare/synth.h"

/* ---- the oracle: the straightforward implementation ---- */
#define NAIVE_PERIOD 60
#define NAIVE_THRESHOLD 18000.0

typedef struct tiresias {
    int32_t **active;    /* per partition: running and pending jobs */
    int32_t *nactive, *capactive;
    uint8_t *listed;
    int64_t *run_seq;    /* order jobs entered the running list (ties among running jobs) */
    int64_t seq;
    int32_t *order, *prerun, *victims;
    double *attained;
    int64_t npending_total;
    int32_t nparts;
} naive_t;

static _Thread_local const ds_engine_t *naive_cmp_e; /* qsort has no context argument */
static _Thread_local const naive_t *naive_cmp_s;

static int naive_cmp_walk(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    const ds_engine_t *e = naive_cmp_e;
    int la = naive_cmp_s->attained[a] > NAIVE_THRESHOLD, lb = naive_cmp_s->attained[b] > NAIVE_THRESHOLD;
    if (la != lb) return la - lb;
    int64_t sa = e->trace->jobs[a].submit, sb = e->trace->jobs[b].submit;
    if (sa != sb) return sa < sb ? -1 : 1;
    /* The reference walks running jobs before pending ones, each list in insertion order. */
    int pa = e->js[a].status == DS_JS_PENDING, pb = e->js[b].status == DS_JS_PENDING;
    if (pa != pb) return pa - pb;
    int64_t qa = pa ? e->js[a].arrival_seq : naive_cmp_s->run_seq[a], qb = pb ? e->js[b].arrival_seq : naive_cmp_s->run_seq[b];
    return (qa > qb) - (qa < qb);
}

static int naive_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    (void)config;
    (void)err;
    naive_t *s = ds_xcalloc(1, sizeof *s);
    int32_t nj = e->trace->njobs ? e->trace->njobs : 1;
    s->nparts = e->nparts;
    s->active = ds_xcalloc((size_t)e->nparts, sizeof *s->active);
    s->nactive = ds_xcalloc((size_t)e->nparts, sizeof *s->nactive);
    s->capactive = ds_xcalloc((size_t)e->nparts, sizeof *s->capactive);
    s->listed = ds_xcalloc((size_t)nj, 1);
    s->run_seq = ds_xcalloc((size_t)nj, sizeof *s->run_seq);
    s->order = ds_xmalloc((size_t)nj * sizeof *s->order);
    s->prerun = ds_xmalloc((size_t)nj * sizeof *s->prerun);
    s->victims = ds_xmalloc((size_t)nj * sizeof *s->victims);
    s->attained = ds_xcalloc((size_t)nj, sizeof *s->attained);
    *state = s;
    return DS_OK;
}

static void naive_fini(void *state)
{
    naive_t *s = state;
    for (int32_t p = 0; p < s->nparts; p++) free(s->active[p]);
    free(s->active);
    free(s->nactive);
    free(s->capactive);
    free(s->listed);
    free(s->run_seq);
    free(s->order);
    free(s->prerun);
    free(s->victims);
    free(s->attained);
    free(s);
}

static void naive_enqueue(ds_engine_t *e, void *state, int32_t job, int64_t now)
{
    (void)now;
    naive_t *s = state;
    s->npending_total++;
    if (s->listed[job]) return;
    int32_t p = e->js[job].part;
    if (s->nactive[p] == s->capactive[p]) {
        s->capactive[p] = s->capactive[p] ? s->capactive[p] * 2 : 64;
        s->active[p] = ds_xrealloc(s->active[p], (size_t)s->capactive[p] * sizeof **s->active);
    }
    s->active[p][s->nactive[p]++] = job;
    s->listed[job] = 1;
}

static void naive_schedule(ds_engine_t *e, void *state, int32_t part, int64_t now, int timer)
{
    naive_t *s = state;
    if (!timer || now % NAIVE_PERIOD != 0 || e->parts[part].npending == 0) return;
    /* Drop finished jobs, compute attained service. */
    int32_t n = 0, *act = s->active[part];
    for (int32_t i = 0; i < s->nactive[part]; i++) {
        int32_t j = act[i];
        if (e->js[j].status == DS_JS_DONE) { s->listed[j] = 0; continue; }
        act[n++] = j;
        s->attained[j] = (double)e->trace->jobs[j].gpus * (double)ds_engine_elapsed(e, j, now);
    }
    s->nactive[part] = n;
    for (int32_t i = 0; i < n; i++) s->order[i] = act[i];
    naive_cmp_e = e;
    naive_cmp_s = s;
    qsort(s->order, (size_t)n, sizeof *s->order, naive_cmp_walk);
    int64_t quota = e->parts[part].gpus_total;
    int32_t npre = 0, nvic = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t j = s->order[i], g = e->trace->jobs[j].gpus;
        if (g <= quota) {
            quota -= g;
            if (e->js[j].status == DS_JS_PENDING) s->prerun[npre++] = j;
        } else if (e->js[j].status == DS_JS_RUNNING) {
            s->victims[nvic++] = j;
        }
    }
    for (int32_t i = 0; i < nvic; i++) ds_engine_preempt(e, s->victims[i], now, 0);
    for (int32_t i = 0; i < npre; i++) {
        int32_t j = s->prerun[i];
        if (ds_engine_place(e, j, now)) {
            e->js[j].finish_lag = 1; /* the reference's timing, as the policy's default */
            s->run_seq[j] = ++s->seq;
            s->npending_total--;
        }
    }
}

static int64_t naive_next_timer(const ds_engine_t *e, const void *state, int64_t now)
{
    (void)e;
    const naive_t *s = state;
    if (s->npending_total <= 0) return DS_TIME_NEVER;
    int64_t r = ((now % NAIVE_PERIOD) + NAIVE_PERIOD) % NAIVE_PERIOD; /* floor, also for now < 0 */
    return now - r + NAIVE_PERIOD;
}


static const ds_policy_ops_t naive_ops = {
    .name = "tiresias",
    .summary = "oracle",
    .init = naive_init,
    .fini = naive_fini,
    .enqueue = naive_enqueue,
    .schedule = naive_schedule,
    .next_timer = naive_next_timer,
};

static void compare_runs(const ds_trace_t *t, ds_mode_t mode)
{
    ds_sim_result_t a, b;
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.engine.mode = mode;
    c.keep_series = 0;
    c.check_invariants = 1;
    ds_error_t err;
    c.policy = ds_policy_find("tiresias");
    assert_int_equal(ds_sim_run(t, &c, &a, &err), 0);
    c.policy = &naive_ops;
    assert_int_equal(ds_sim_run(t, &c, &b, &err), 0);
    assert_true(a.preemptions > 0);
    assert_int_equal(a.preemptions, b.preemptions);
    for (int32_t j = 0; j < t->njobs; j++) {
        if (a.start[j] != b.start[j] || a.end[j] != b.end[j] || a.preempts[j] != b.preempts[j])
            fprintf(stderr, "job %lld: start %lld/%lld end %lld/%lld preempts %d/%d\n", (long long)t->jobs[j].id,
                    (long long)a.start[j], (long long)b.start[j], (long long)a.end[j], (long long)b.end[j],
                    a.preempts[j], b.preempts[j]);
        assert_int_equal(a.start[j], b.start[j]);
        assert_int_equal(a.end[j], b.end[j]);
        assert_int_equal(a.queued[j], b.queued[j]);
        assert_int_equal(a.preempts[j], b.preempts[j]);
    }
    ds_sim_result_free(&a);
    ds_sim_result_free(&b);
}

static void test_same_as_oracle_synthetic(void **st)
{
    (void)st;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        ds_synth_config_t sc;
        ds_synth_config_default(&sc);
        sc.seed = seed;
        sc.jobs = 3000;
        sc.nodes = 16;
        sc.tenants = 4;
        sc.load = 0.9;
        ds_trace_t t;
        ds_trace_init(&t);
        ds_error_t err;
        assert_int_equal(ds_synth_generate(&t, &sc, &err), 0);
        compare_runs(&t, DS_MODE_PARTITIONED);
        compare_runs(&t, DS_MODE_POOLED);
        ds_trace_free(&t);
    }
}

static void test_same_as_oracle_venus(void **st)
{
    (void)st;
    const char *p = tu_data("venus/vc_config.csv");
    if (!p) { skip(); return; }
    char vc[1024];
    snprintf(vc, sizeof vc, "%s", p);
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    assert_int_equal(ds_trace_read_tenants(&t, vc, 8, &err), 0);
    assert_int_equal(ds_trace_read_jobs(&t, tu_data("venus/venus_sept_jobs.csv"), &err), 0);
    compare_runs(&t, DS_MODE_PARTITIONED);
    ds_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_as_oracle_synthetic),
        cmocka_unit_test(test_same_as_oracle_venus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
