/* test_deepshare.c: the DeepShare policy (docs/policy.md) on hand-made schedules worked out by hand, its
 * parameters, and its invariants (docs/policy.md §7) on every pass of synthetic and Venus runs. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deepshare/policy.h"
#include "deepshare/qad.h"
#include "deepshare/synth.h"
#include "policy/deepshare/ds_internal.h"

static const ds_policy_ops_t *ops(void)
{
    const ds_policy_ops_t *p = ds_policy_find("deepshare");
    assert_non_null(p);
    return p;
}

/* A parameter object with "k=v,k=v" applied. */
static void *cfg_with(const char *kv)
{
    void *c = ops()->config_new();
    char buf[512];
    snprintf(buf, sizeof buf, "%s", kv);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        char *eq = strchr(tok, '=');
        assert_non_null(eq);
        *eq = '\0';
        ds_error_t err;
        ds_error_clear(&err);
        assert_int_equal(ops()->config_set(c, tok, eq + 1, &err), DS_OK);
    }
    return c;
}

static void run_ds(const ds_trace_t *t, void *cfg, ds_mode_t mode, ds_sim_result_t *r)
{
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.engine.mode = mode;
    c.policy = ops();
    c.policy_config = cfg;
    tu_sim(t, &c, r);
}

static double stat_of(const ds_sim_result_t *r, const char *name)
{
    for (int32_t i = 0; i < r->npstats; i++)
        if (!strcmp(r->pstats[i].name, name)) return r->pstats[i].value;
    fail_msg("no stat %s", name);
    return -1;
}

/* An engine driven by hand: pooled, with the given node size and parameters. */
static ds_engine_t *engine_with(const ds_trace_t *t, int32_t gpn, void *cfg, const ds_predictors_t *pr)
{
    ds_engine_config_t ec;
    ds_engine_config_default(&ec);
    ec.mode = DS_MODE_POOLED;
    ec.gpus_per_node = gpn;
    ec.predictors = pr;
    ds_engine_t *e = NULL;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_engine_create(&e, t, &ec, ops(), cfg, &err), DS_OK);
    return e;
}

static ds_engine_t *engine_for(const ds_trace_t *t, int32_t gpn, void *cfg) { return engine_with(t, gpn, cfg, NULL); }

/* A's two 4-GPU jobs are G (its quota is 8) on node 0; its BE jobs fill node 1: j4 and j5 (2 GPUs)
 * and j3 (4 GPUs), in order of predicted remaining time. B's 2-GPU job arrives at 30; at the cycle
 * of t=60 B is under-served (S = 0.3 x 0 + 0.7 x 1 = 0.7). Victim costs at t=60, elapsed 60 s, no
 * prior preemptions (alpha d = 0): j4: 0.3 x 60/200000 = 9.0e-5; j5: 0.3 x 60/250000 = 7.2e-5;
 * j3: 0.3 x 60/300000 + 0.2 x (4 - 2)/4 = 0.10006. The cheapest set is {j5}: it alone is
 * preempted and B's job starts in its GPUs in that same pass. (Served reclaim is off: on, B's job, served at its
 * arrival, would take the same victim at t=30; test_preempt_cost.c.) */
static void test_cheapest_victim_same_pass(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8",
             "1 A 4 0 100000; 2 A 4 0 100001; 3 A 4 0 300000; 4 A 2 0 200000; 5 A 2 0 250000; 6 B 2 30 500");
    void *cfg = cfg_with("colocation=0,served-reclaim=0");
    ds_sim_result_t r;
    run_ds(&t, cfg, DS_MODE_POOLED, &r);
    for (int j = 0; j < 5; j++) assert_int_equal(r.start[j], 0);
    assert_int_equal(r.preempts[0], 0); /* G jobs are never victims */
    assert_int_equal(r.preempts[1], 0);
    assert_int_equal(r.preempts[2], 0);
    assert_int_equal(r.preempts[3], 0);
    assert_int_equal(r.preempts[4], 1);
    assert_int_equal(r.start[5], 60);
    assert_int_equal(r.end[5], 560);
    assert_int_equal(r.preemptions, 1);
    assert_int_equal((int)stat_of(&r, "preempt_reclaim"), 1);
    assert_int_equal((int)stat_of(&r, "gpus_reclaimed"), 2);
    ds_sim_result_free(&r);
    ops()->config_free(cfg);
    ds_trace_free(&t);
}

/* The same case with alpha = beta = 0: only the surplus share counts. j4 and j5 cost 0 and tie on
 * every tie-break, so one of them goes; never j3, whose eviction frees 2 surplus GPUs of 4 (0.5). */
static void test_surplus_weight(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8",
             "1 A 4 0 100000; 2 A 4 0 100001; 3 A 4 0 300000; 4 A 2 0 200000; 5 A 2 0 250000; 6 B 2 30 500");
    void *cfg = cfg_with("colocation=0,alpha=0,beta=0,served-reclaim=0");
    ds_sim_result_t r;
    run_ds(&t, cfg, DS_MODE_POOLED, &r);
    assert_int_equal(r.preempts[2], 0);
    assert_int_equal(r.preempts[3] + r.preempts[4], 1);
    assert_int_equal(r.start[5], 60);
    ds_sim_result_free(&r);
    ops()->config_free(cfg);
    ds_trace_free(&t);
}

/* BE jobs never preempt: A's second job is BE (A's quota is full) and finds no free GPU; it waits
 * for B's job to finish at 1000 instead of reclaiming anything. */
static void test_be_never_preempts(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", "1 B 8 0 1000; 2 A 8 0 2000; 3 A 8 5 300");
    void *cfg = cfg_with("colocation=0");
    ds_sim_result_t r;
    run_ds(&t, cfg, DS_MODE_POOLED, &r);
    ops()->config_free(cfg);
    assert_int_equal(r.start[0], 0);
    assert_int_equal(r.start[1], 0);
    assert_int_equal(r.start[2], 1000);
    assert_int_equal(r.preemptions, 0);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* A's shorter job (j2) is G, its longer one (j1) BE on B's idle share. With served-reclaim 0 (SPEC 4.4's rule)
 * a well-served tenant's G job cannot reclaim: with theta = 0 nobody is under-served and B's job waits for j2
 * to end at 1000. With it (the default) B's served job takes j1 at its arrival: A keeps its quota without j1,
 * which would hold the GPUs 4,970 s more against B's 500; never A's G job j2. */
static void test_no_reclaim_when_served(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", "1 A 8 0 5000; 2 A 8 0 1000; 3 B 8 30 500");
    void *cfg = cfg_with("theta=0,colocation=0,served-reclaim=0");
    ds_sim_result_t r;
    run_ds(&t, cfg, DS_MODE_POOLED, &r);
    assert_int_equal(r.preemptions, 0);
    assert_int_equal(r.start[2], 1000);
    ds_sim_result_free(&r);
    ops()->config_free(cfg);
    cfg = cfg_with("theta=0,colocation=0");
    run_ds(&t, cfg, DS_MODE_POOLED, &r);
    assert_int_equal(r.preempts[0], 1);
    assert_int_equal(r.preempts[1], 0);
    assert_int_equal(r.start[2], 30);
    assert_int_equal((int)stat_of(&r, "served_reclaims"), 1);
    ds_sim_result_free(&r);
    ops()->config_free(cfg);
    /* with the default theta (and no served reclaim) B reclaims A's BE job j1 at the t=60 cycle, never j2 */
    cfg = cfg_with("colocation=0,served-reclaim=0");
    run_ds(&t, cfg, DS_MODE_POOLED, &r);
    ops()->config_free(cfg);
    assert_int_equal(r.preempts[0], 1);
    assert_int_equal(r.preempts[1], 0);
    assert_int_equal(r.start[2], 60);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

static int count_dec(const ds_engine_t *e, int type, int32_t job)
{
    int n = 0, nd;
    const ds_decision_t *dec = ds_engine_decisions(e, &nd);
    for (int32_t i = 0; i < nd; i++) n += dec[i].type == type && dec[i].job == job;
    return n;
}

/* Promotion: A's second job runs BE on B's idle share; when A's G job finishes, the next cycle
 * promotes it to G and its GPUs move from A's BE count to A's G count. */
static void test_promotion(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", "1 A 8 0 100; 2 A 8 0 1000");
    ds_engine_t *e = engine_for(&t, 8, NULL);
    ds_engine_arrive(e, 0, 0);
    ds_engine_arrive(e, 1, 0);
    ds_engine_schedule(e, 0, 1);
    assert_int_equal(e->js[0].status, DS_JS_RUNNING);
    assert_int_equal(e->js[1].status, DS_JS_RUNNING);
    assert_int_equal(e->js[0].klass, DS_CLASS_G);
    assert_int_equal(e->js[1].klass, DS_CLASS_BE);
    assert_int_equal(e->tenant_g_gpus[0], 8);
    assert_int_equal(e->tenant_be_gpus[0], 8);
    ds_engine_clear_decisions(e);
    ds_engine_schedule(e, 60, 1); /* quota still full: no promotion */
    assert_int_equal(e->js[1].klass, DS_CLASS_BE);
    ds_engine_finish(e, 0, 100);
    ds_engine_schedule(e, 100, 0); /* promotion waits for the cycle */
    assert_int_equal(e->js[1].klass, DS_CLASS_BE);
    assert_int_equal(e->tenant_g_gpus[0], 0);
    ds_engine_clear_decisions(e);
    ds_engine_schedule(e, 120, 1);
    assert_int_equal(e->js[1].klass, DS_CLASS_G);
    assert_int_equal(e->tenant_g_gpus[0], 8);
    assert_int_equal(e->tenant_be_gpus[0], 0);
    assert_int_equal(count_dec(e, DS_DEC_PROMOTE, 1), 1);
    char msg[200];
    assert_int_equal(ds_engine_check(e, msg, sizeof msg), 0);
    assert_int_equal(ops()->check(e, e->pstate, msg, sizeof msg), 0);
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

/* CPU/memory reclamation: nodes of 2 GPUs and 10 CPUs. A's j1 (2 GPUs, 4 CPUs) fills node 0; its j2
 * (1 GPU, 8 CPUs) runs BE on node 1. B's j3 (1 GPU, 4 CPUs) finds node 1's free GPU short of CPUs
 * (8 + 4 > 10) and cannot share j2's GPU for the same reason; shrinking j2 to half its request
 * (4 CPUs) makes room, so j3 starts at once on node 1 and nobody is preempted. */
static void test_cpu_reclaim(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:2 B:2", "1 A 2 0 1000; 2 A 1 0 1000; 3 B 1 10 100");
    t.jobs[0].cpus = 4, t.jobs[1].cpus = 8, t.jobs[2].cpus = 4;
    ds_engine_config_t ec;
    ds_engine_config_default(&ec);
    ec.mode = DS_MODE_POOLED;
    ec.gpus_per_node = 2;
    ec.cpus_per_node = 10;
    ds_engine_t *e = NULL;
    ds_error_t err;
    assert_int_equal(ds_engine_create(&e, &t, &ec, ops(), NULL, &err), DS_OK);
    ds_engine_arrive(e, 0, 0);
    ds_engine_arrive(e, 1, 0);
    ds_engine_schedule(e, 0, 1);
    assert_int_equal(e->js[1].klass, DS_CLASS_BE);
    assert_int_equal(e->gpus[e->jgpus[e->jgpu_off[1]]].node, 1);
    ds_engine_arrive(e, 2, 10);
    ds_engine_schedule(e, 10, 0);
    assert_int_equal(e->js[2].status, DS_JS_RUNNING);
    assert_int_equal(e->gpus[e->jgpus[e->jgpu_off[2]]].node, 1);
    assert_int_equal(e->js[2].shared, 0);
    assert_int_equal(e->js[1].preemptions, 0);
    assert_true(e->js[1].cpu_scale > 0.49f && e->js[1].cpu_scale < 0.51f);
    assert_int_equal(e->nodes[1].cpus_used, 8);
    char msg[200];
    assert_int_equal(ds_engine_check(e, msg, sizeof msg), 0);
    ds_engine_finish(e, 1, 1000); /* the shrunk job releases exactly what it held */
    assert_int_equal(e->nodes[1].cpus_used, 4);
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

/* Adopted jobs (the daemon's restart) are bookkept like started ones: B, under-served at the first
 * cycle, reclaims A's adopted BE job, never A's adopted G job. */
static void test_adopt(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", "1 A 8 0 1000; 2 A 8 0 1000; 3 B 8 0 100");
    void *cfg = cfg_with("colocation=0");
    ds_engine_t *e = engine_for(&t, 8, cfg);
    int32_t n0[8], n1[8];
    for (int i = 0; i < 8; i++) n0[i] = i, n1[i] = 8 + i;
    ds_engine_adopt(e, 0, n0, DS_CLASS_G, 0);
    ds_engine_adopt(e, 1, n1, DS_CLASS_BE, 0);
    char msg[200];
    assert_int_equal(ops()->check(e, e->pstate, msg, sizeof msg), 0);
    ds_engine_arrive(e, 2, 0);
    ds_engine_schedule(e, 0, 1);
    assert_int_equal(e->js[2].status, DS_JS_RUNNING);
    assert_int_equal(e->js[1].status, DS_JS_PENDING);
    assert_int_equal(e->js[1].preemptions, 1);
    assert_int_equal(e->js[0].preemptions, 0);
    assert_int_equal(ops()->check(e, e->pstate, msg, sizeof msg), 0);
    ds_engine_finish(e, 2, 100);
    ds_engine_schedule(e, 100, 0);
    assert_int_equal(e->js[1].status, DS_JS_RUNNING);
    ds_engine_destroy(e);
    ops()->config_free(cfg);
    ds_trace_free(&t);
}

static double low_retention(void *ctx, int32_t job, int64_t now)
{
    (void)ctx, (void)job, (void)now;
    return 0.1;
}

/* Samples of a pair near the threshold 0.8 (rho-min = tau-max = 0.8): six at 0.95, then only 0.78. */
static double near_threshold(void *ctx, int32_t job, int64_t now)
{
    (void)ctx, (void)job;
    return now <= 6 * 60 ? 0.95 : 0.78;
}

/* Inside a band: j2 (8 GPUs x 100 s = 800 GPU-s) before j3 (1 GPU x 500 s) by remaining time, j3
 * first by remaining GPU-time (gpu-time-order). Both wait behind j1 until it ends at 1000. */
static void order_case(const char *kv, int32_t first, int32_t second)
{
    ds_trace_t t;
    tu_trace(&t, "A:8", "1 A 8 0 1000; 2 A 8 1 100; 3 A 1 1 500");
    void *cfg = cfg_with(kv);
    ds_engine_t *e = engine_for(&t, 8, cfg);
    ds_engine_arrive(e, 0, 0);
    ds_engine_schedule(e, 0, 1);
    ds_engine_arrive(e, 1, 1);
    ds_engine_arrive(e, 2, 1);
    ds_engine_schedule(e, 1, 0);
    assert_int_equal(e->js[1].status, DS_JS_PENDING);
    assert_int_equal(e->js[2].status, DS_JS_PENDING);
    ds_engine_finish(e, 0, 1000);
    ds_engine_schedule(e, 1000, 0);
    assert_int_equal(e->js[first].status, DS_JS_RUNNING);
    assert_int_equal(e->js[second].status, DS_JS_PENDING);
    ds_engine_destroy(e);
    ops()->config_free(cfg);
    ds_trace_free(&t);
}

static void test_gpu_time_order(void **st)
{
    (void)st;
    order_case("gpu-time-order=0,colocation=0,work-conserving=0", 1, 2);
    order_case("gpu-time-order=1,colocation=0,work-conserving=0", 2, 1);
}

static double pred_100(void *ctx, const ds_trace_t *t, int32_t job, int64_t now)
{
    (void)ctx, (void)t, (void)job, (void)now;
    return 100;
}

/* Overrun yield (docs/policy.md §2): every job is predicted to take 100 s. A's j0 (truly 10,000 s)
 * runs as G on node 0, B's j2 holds node 1, A's j1 (truly 100 s) waits from 10. At the cycle of 120
 * j0 has outlived its prediction while j1 waits: it yields its G class, A's quota goes to j1, and A,
 * under-served, takes the node back from j0, now BE (no G job is preempted). j0 is then expected to
 * run as long again as it has (120 s), and restarts when j1 ends. With overrun-yield=0, j1 waits
 * behind j0. A job yields only what the waiting work could use: with j1 asking 2 GPUs, j0's 8 stay G
 * (a reclaim would stop all 8 to start 2). rest >= 0 is what the predictor's errors say remains of
 * j0 (-1: it cannot say): under light tails (rest < elapsed) j0 yields only into idle quota, which
 * idle_c makes: tenant C's 8 GPUs, unused by C, lent to B's j3 (BE: B's quota is j2's), so j1 cannot start. */
static double rest_ctx(void *ctx, double pred, int64_t elapsed)
{
    (void)pred, (void)elapsed;
    return *(const double *)ctx;
}

static void yield_case(const char *kv, int yields, int j1_gpus, double rest, int idle_c)
{
    ds_trace_t t;
    char jobs[160];
    snprintf(jobs, sizeof jobs, "1 A 8 0 10000; 2 A %d 10 100; 3 B 8 0 100000%s", j1_gpus,
             idle_c ? "; 4 B 8 0 100000" : "");
    tu_trace(&t, idle_c ? "A:8 B:8 C:8" : "A:8 B:8", jobs);
    void *cfg = cfg_with(kv);
    ds_runtime_predictor_t rp = {.name = "test", .predict = pred_100, .ctx = &rest};
    if (rest >= 0) rp.beyond = rest_ctx;
    ds_predictors_t pr = {&rp, NULL, NULL};
    ds_engine_t *e = engine_with(&t, 8, cfg, &pr);
    ds_engine_arrive(e, 0, 0);
    ds_engine_arrive(e, 2, 0);
    if (idle_c) ds_engine_arrive(e, 3, 0);
    ds_engine_schedule(e, 0, 1);
    if (idle_c) assert_int_equal(e->js[3].status, DS_JS_RUNNING);
    ds_engine_arrive(e, 1, 10);
    ds_engine_schedule(e, 10, 0);
    ds_engine_schedule(e, 60, 1);
    assert_int_equal(e->js[0].klass, DS_CLASS_G); /* 60 s run, 100 predicted: not overrun yet */
    assert_int_equal(e->js[1].status, DS_JS_PENDING);
    ds_engine_schedule(e, 120, 1);
    char msg[200];
    assert_int_equal(ds_engine_check(e, msg, sizeof msg), 0);
    assert_int_equal(ops()->check(e, e->pstate, msg, sizeof msg), 0);
    dsp_t *s = e->pstate;
    if (yields) {
        assert_int_equal(e->js[1].status, DS_JS_RUNNING);
        assert_int_equal(e->js[1].klass, DS_CLASS_G);
        assert_int_equal(e->js[0].status, DS_JS_PENDING);
        assert_int_equal(s->st.yields, 1);
        assert_int_equal(s->st.g_preempted, 0);
        assert_true(dsp_remaining(e, s, 0, 120) == 120.0);
        ds_engine_finish(e, 1, 220);
        ds_engine_schedule(e, 220, 0);
        assert_int_equal(e->js[0].status, DS_JS_RUNNING);
    } else {
        assert_int_equal(e->js[1].status, DS_JS_PENDING);
        assert_int_equal(e->js[0].status, DS_JS_RUNNING);
        assert_int_equal(e->js[0].klass, DS_CLASS_G);
        assert_int_equal(s->st.yields, 0);
    }
    assert_int_equal(e->js[2].status, DS_JS_RUNNING); /* B's guarantee is untouched either way */
    ds_engine_destroy(e);
    ops()->config_free(cfg);
    ds_trace_free(&t);
}

static void test_overrun_yield(void **st)
{
    (void)st;
    yield_case("colocation=0,work-conserving=0", 1, 8, -1, 0); /* on by default */
    yield_case("overrun-yield=0,colocation=0,work-conserving=0", 0, 8, -1, 0);
    yield_case("colocation=0,work-conserving=0", 0, 2, -1, 0);
    yield_case("colocation=0,work-conserving=0", 1, 8, 500, 0); /* heavy tail: restarting j0 pays */
    yield_case("colocation=0,work-conserving=0", 0, 8, 5, 0);   /* light tail, no idle quota */
    yield_case("colocation=0,work-conserving=0", 1, 8, 5, 1);   /* light tail, C's idle quota */
}

static double pred_true(void *ctx, const ds_trace_t *t, int32_t job, int64_t now)
{
    (void)ctx, (void)now;
    return (double)t->jobs[job].duration;
}

/* Attained-service yield (docs/policy.md §2, attained-yield): runtimes exact, the typical run set to 25 s, so a G
 * run past 2 x 25 = 50 s (the default multiple) yields to its tenant's next job predicted to end before it. A's j0 (8 GPUs,
 * 10,000 s) runs as G on node 0, B's j2 holds node 1 and B's j3 (BE) C's idle node 2 (an event pass at 0: the
 * first cycle, at 60, finds them running, so every tenant starts served). A's j1 (8 GPUs, h s) waits from 10. At
 * the cycle of 60 j0 has run 60 > 50 s and j1 (h = 100 < 9,940 left) is predicted to end first: j0 yields its
 * class and runs on as BE, A's quota goes to j1, and A, served, reclaims B's j3 (B holds 16 GPUs on a quota of 8,
 * and j3 is predicted to outlast j1: served reclaim, §4.1). No yield when j1 is predicted to outlast j0 (h =
 * 20,000), with attained-yield 0 or 4 (60 < 100 s), or with auto and a predictor that is not exact (learned: the
 * overrun yield covers its misses). */
static void attained_case(const char *kv, int64_t h, const char *rp_name, int yields)
{
    ds_trace_t t;
    char jobs[160];
    snprintf(jobs, sizeof jobs, "1 A 8 0 10000; 2 A 8 10 %lld; 3 B 8 0 100000; 4 B 8 0 100000", (long long)h);
    tu_trace(&t, "A:8 B:8 C:8", jobs);
    void *cfg = cfg_with(kv);
    ds_runtime_predictor_t rp = {.name = rp_name, .predict = pred_true};
    ds_predictors_t pr = {&rp, NULL, NULL};
    ds_engine_t *e = engine_with(&t, 8, cfg, &pr);
    dsp_t *s = e->pstate;
    ds_engine_arrive(e, 0, 0);
    ds_engine_arrive(e, 2, 0);
    ds_engine_arrive(e, 3, 0);
    ds_engine_schedule(e, 0, 0);
    assert_int_equal(e->js[3].status, DS_JS_RUNNING);
    assert_int_equal(e->js[3].klass, DS_CLASS_BE);
    ds_engine_arrive(e, 1, 10);
    ds_engine_schedule(e, 10, 0);
    s->typical.median = 25, s->typical.n = DSP_TYPICAL_MIN;
    ds_engine_schedule(e, 60, 1);
    char msg[200];
    assert_int_equal(ds_engine_check(e, msg, sizeof msg), 0);
    assert_int_equal(ops()->check(e, e->pstate, msg, sizeof msg), 0);
    assert_int_equal(e->js[0].status, DS_JS_RUNNING);
    assert_int_equal(e->js[2].status, DS_JS_RUNNING); /* B's guarantee is untouched either way */
    if (yields) {
        assert_int_equal(e->js[0].klass, DS_CLASS_BE);
        assert_int_equal(e->js[1].status, DS_JS_RUNNING);
        assert_int_equal(e->js[1].klass, DS_CLASS_G);
        assert_int_equal(e->js[3].status, DS_JS_PENDING);
        assert_int_equal(s->st.yields, 1);
        assert_int_equal(s->st.attained_yields, 1);
        assert_int_equal(s->st.g_preempted, 0);
        assert_int_equal(s->st.quota_yields, 0);
        assert_int_equal(s->st.served_reclaims, 1);
        ds_buf_t b = {0};
        ops()->explain(e, e->pstate, 0, 60, &b);
        assert_non_null(b.s);
        assert_non_null(strstr(b.s, "(attained-yield)"));
        free(b.s);
    } else {
        assert_int_equal(e->js[0].klass, DS_CLASS_G);
        assert_int_equal(e->js[1].status, DS_JS_PENDING);
        assert_int_equal(e->js[3].status, DS_JS_RUNNING);
        assert_int_equal(s->st.attained_yields, 0);
    }
    ds_engine_destroy(e);
    ops()->config_free(cfg);
    ds_trace_free(&t);
}

static void test_attained_yield(void **st)
{
    (void)st;
    const char *kv = "colocation=0,work-conserving=0";
    attained_case(kv, 100, "oracle", 1); /* on by default */
    attained_case(kv, 100, "model", 1);
    attained_case(kv, 20000, "oracle", 0);   /* the head would outlast the run */
    attained_case("attained-yield=0,colocation=0,work-conserving=0", 100, "oracle", 0);
    attained_case("attained-yield=4,colocation=0,work-conserving=0", 100, "oracle", 0); /* 60 s < 4 x 25 */
}

/* Batch evidence (docs/policy.md §3): a finished sibling re-keys a waiting job. A's j0 holds node 0 and B's j3
 * node 1; A's j1 (predicted 100 s) and j2 (500 s) wait. j3 ends at 500 and, as the test predictor has it, is
 * j1's batch sibling: its batch now puts j1 at 5,000 s, so j2 takes the freed node. Without the evidence j1
 * does (both without the yields or preemption, which would move j0). With the overrun yield, a running job
 * inside its batch's evidence (j0, predicted 100 s, its batch saying 2,000) has not overrun at 120: it does
 * not yield to A's waiting work. */
typedef struct batch_fake {
    int finished; /* j3 has finished */
} batch_fake_t;

static double batch_pred(void *ctx, const ds_trace_t *t, int32_t job, int64_t now)
{
    (void)ctx, (void)t, (void)now;
    return job == 2 ? 500 : 100;
}

static double batch_total(void *ctx, const ds_trace_t *t, int32_t job, int64_t elapsed)
{
    (void)t, (void)elapsed;
    const batch_fake_t *f = ctx;
    if (job == 0) return 2000;
    return job == 1 && f->finished ? 5000 : -1;
}

static const int32_t *batch_revised(void *ctx, const ds_trace_t *t, int32_t job, int32_t *n)
{
    (void)ctx, (void)t;
    static const int32_t sib[] = {1};
    *n = job == 3 ? 1 : 0;
    return sib;
}

static void batch_observe(void *ctx, const ds_trace_t *t, int32_t job, int64_t now)
{
    (void)t, (void)now;
    if (job == 3) ((batch_fake_t *)ctx)->finished = 1;
}

static void batch_case(int on, int yield_only)
{
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", "1 A 8 0 10000; 2 A 8 10 3000; 3 A 8 10 3000; 4 B 8 0 500");
    char kv[160];
    snprintf(kv, sizeof kv, "batch-evidence=%d,overrun-yield=%d,quota-yield=0,preemption=0,colocation=0,work-conserving=0", on, yield_only);
    void *cfg = cfg_with(kv);
    batch_fake_t f = {0};
    ds_runtime_predictor_t rp = {.name = "test", .ctx = &f, .predict = batch_pred, .observe_finish = batch_observe,
                                 .batch_total = batch_total, .batch_revised = batch_revised};
    ds_predictors_t pr = {&rp, NULL, NULL};
    ds_engine_t *e = engine_with(&t, 8, cfg, &pr);
    dsp_t *s = e->pstate;
    ds_engine_arrive(e, 0, 0);
    ds_engine_arrive(e, 3, 0);
    ds_engine_schedule(e, 0, 1);
    ds_engine_arrive(e, 1, 10);
    ds_engine_arrive(e, 2, 10);
    ds_engine_schedule(e, 10, 0);
    ds_engine_schedule(e, 120, 1); /* j0 has run 120 s of a predicted 100 while A waits */
    assert_int_equal(s->st.yields, yield_only && !on ? 1 : 0);
    if (yield_only) goto done;
    ds_engine_finish(e, 3, 500);
    ds_engine_schedule(e, 500, 0);
    char msg[200];
    assert_int_equal(ds_engine_check(e, msg, sizeof msg), 0);
    assert_int_equal(ops()->check(e, e->pstate, msg, sizeof msg), 0);
    assert_int_equal(e->js[on ? 2 : 1].status, DS_JS_RUNNING);
    assert_int_equal(e->js[on ? 1 : 2].status, DS_JS_PENDING);
    if (on) assert_true(dsp_remaining(e, s, 1, 500) == 5000.0);
    assert_int_equal(s->st.batch_rekeyed, on ? 1 : 0);
    ds_buf_t b = {0};
    ops()->explain(e, e->pstate, 1, 500, &b); /* explain names where j1's estimate comes from */
    assert_non_null(b.s);
    assert_true((strstr(b.s, "from its batch") != NULL) == on);
    free(b.s);
done:
    ds_engine_destroy(e);
    ops()->config_free(cfg);
    ds_trace_free(&t);
}

static void test_batch_evidence(void **st)
{
    (void)st;
    batch_case(1, 0);
    batch_case(0, 0);
    batch_case(1, 1);
    batch_case(0, 1);
}

/* A yield lasts while its tenant's work waits (docs/policy.md §2). As in yield_case, A's j0 (predicted
 * 100 s, truly 10,000) holds node 0 as G and A's j1 waits from 10 behind B's node; without preemption
 * j1 cannot start, so j0 keeps running whatever its class. At 120 j0 yields to j1. The driver then
 * holds j1 (nothing of A waits any more): at the cycle of 180 j0 is promoted back to G, and once j1 is
 * released it yields again at 240. With j1 never held, j0 stays BE at 180. */
static void yield_back_case(int hold)
{
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", "1 A 8 0 10000; 2 A 8 10 100; 3 B 8 0 100000");
    /* the overrun yield alone: the quota yield, ahead of it in the cycle, would make the yield at 240 */
    void *cfg = cfg_with("colocation=0,work-conserving=0,preemption=0,quota-yield=0");
    ds_runtime_predictor_t rp = {.name = "test", .predict = pred_100};
    ds_predictors_t pr = {&rp, NULL, NULL};
    ds_engine_t *e = engine_with(&t, 8, cfg, &pr);
    dsp_t *s = e->pstate;
    char msg[200];
    ds_engine_arrive(e, 0, 0);
    ds_engine_arrive(e, 2, 0);
    ds_engine_schedule(e, 0, 1);
    ds_engine_arrive(e, 1, 10);
    ds_engine_schedule(e, 10, 0);
    ds_engine_schedule(e, 60, 1);
    ds_engine_schedule(e, 120, 1);
    assert_int_equal(e->js[0].klass, DS_CLASS_BE);
    assert_int_equal(s->yielded[0], DSP_YIELDED);
    assert_int_equal(s->ygpus[0], 8);
    assert_int_equal(e->js[1].status, DS_JS_PENDING);
    if (hold) ds_engine_hold(e, 1, 1);
    ds_engine_schedule(e, 180, 1);
    assert_int_equal(e->js[0].status, DS_JS_RUNNING);
    assert_int_equal(ds_engine_check(e, msg, sizeof msg), 0);
    assert_int_equal(ops()->check(e, e->pstate, msg, sizeof msg), 0);
    if (!hold) {
        assert_int_equal(e->js[0].klass, DS_CLASS_BE);
        assert_int_equal(s->yielded[0], DSP_YIELDED);
        assert_int_equal(s->st.yields_back, 0);
    } else {
        assert_int_equal(e->js[0].klass, DS_CLASS_G);
        assert_int_equal(s->yielded[0], DSP_YIELD_BACK);
        assert_int_equal(s->ygpus[0], 0);
        assert_int_equal(s->st.yields_back, 1);
        assert_true(dsp_remaining(e, s, 0, 180) == 180.0); /* still expected to run as long again */
        ds_engine_hold(e, 1, 0);
        ds_engine_schedule(e, 190, 0);
        ds_engine_schedule(e, 240, 1);
        assert_int_equal(e->js[0].klass, DS_CLASS_BE);
        assert_int_equal(s->yielded[0], DSP_YIELDED);
        assert_int_equal(s->st.yields, 2);
    }
    assert_int_equal(s->st.g_preempted, 0);
    assert_int_equal(ops()->check(e, e->pstate, msg, sizeof msg), 0);
    ds_engine_destroy(e);
    ops()->config_free(cfg);
    ds_trace_free(&t);
}

static void test_yield_back(void **st)
{
    (void)st;
    yield_back_case(0);
    yield_back_case(1);
}

static double pred_table(void *ctx, const ds_trace_t *t, int32_t job, int64_t now)
{
    (void)t, (void)now;
    return ((const double *)ctx)[job];
}

/* Quota yield (docs/policy.md §2), nodes of 4 GPUs: A (quota 8) runs j0 (4 GPUs, predicted 1,000 s) as G on
 * node 0, B (quota 4) j2 as G on node 1 and j3 as BE on node 2 (C's idle quota); node 3 is free. A's j1 (8
 * GPUs, predicted head_pred) arrives at 10: 4 + 8 > 8, so it is BE, does not fit, and A, holding 4 of the 8
 * it asks, is under-served at the cycle of 60 (S = 0.3 x 0.5 + 0.7 = 0.85). With quota-yield, j0, predicted
 * to run longer than j1 (940 s left against 100), gives up its G class: j1 is G and reclaims one node, the
 * cheapest: B's borrowed j3 (cost 0.3 x 60/100,000), not A's own j0 (0.3 x 60/1,000, as long again). j0 runs
 * on as BE, B's G job is untouched. Without it, or when j1 is predicted longer than j0 (5,000 s: by A's own
 * order j0 goes first), j1 waits for j0. */
static void quota_yield_case(const char *kv, double head_pred, int yields)
{
    ds_trace_t t;
    tu_trace(&t, "A:8 B:4 C:4", "1 A 4 0 10000; 2 A 8 10 100; 3 B 4 0 100000; 4 B 4 0 100000");
    void *cfg = cfg_with(kv);
    double preds[4] = {1000, head_pred, 100000, 100000};
    ds_runtime_predictor_t rp = {.name = "test", .predict = pred_table, .ctx = preds};
    ds_predictors_t pr = {&rp, NULL, NULL};
    ds_engine_t *e = engine_with(&t, 4, cfg, &pr);
    dsp_t *s = e->pstate;
    char msg[200];
    ds_engine_arrive(e, 0, 0);
    ds_engine_arrive(e, 2, 0);
    ds_engine_arrive(e, 3, 0);
    ds_engine_schedule(e, 0, 0);
    assert_int_equal(e->js[3].status, DS_JS_RUNNING);
    assert_int_equal(e->js[3].klass, DS_CLASS_BE);
    ds_engine_arrive(e, 1, 10);
    ds_engine_schedule(e, 10, 0);
    assert_int_equal(e->js[1].status, DS_JS_PENDING);
    ds_engine_schedule(e, 60, 1);
    assert_int_equal(ds_engine_check(e, msg, sizeof msg), 0);
    assert_int_equal(ops()->check(e, e->pstate, msg, sizeof msg), 0);
    assert_int_equal(e->js[0].status, DS_JS_RUNNING);
    assert_int_equal(e->js[2].status, DS_JS_RUNNING);
    assert_int_equal(e->js[2].klass, DS_CLASS_G);
    if (yields) {
        assert_int_equal(e->js[1].status, DS_JS_RUNNING);
        assert_int_equal(e->js[1].klass, DS_CLASS_G);
        assert_int_equal(e->js[0].klass, DS_CLASS_BE);
        assert_int_equal(s->yielded[0], DSP_YIELDED);
        assert_int_equal(s->qyield[0], 1);
        assert_int_equal(s->st.quota_yields, 1);
        assert_int_equal(e->js[3].status, DS_JS_PENDING); /* the borrower gave the node back */
        ds_buf_t b = {0};
        ops()->explain(e, e->pstate, 0, 60, &b);
        assert_non_null(b.s);
        assert_non_null(strstr(b.s, "quota-yield"));
        free(b.s);
    } else {
        assert_int_equal(e->js[1].status, DS_JS_PENDING);
        assert_int_equal(e->js[0].klass, DS_CLASS_G);
        assert_int_equal(s->st.quota_yields, 0);
        assert_int_equal(e->js[3].status, DS_JS_RUNNING);
    }
    assert_int_equal(s->st.g_preempted, 0);
    ds_engine_destroy(e);
    ops()->config_free(cfg);
    ds_trace_free(&t);
}

static void test_quota_yield(void **st)
{
    (void)st;
    quota_yield_case("colocation=0,work-conserving=0", 100, 1); /* on by default (revision 9) */
    quota_yield_case("quota-yield=0,colocation=0,work-conserving=0", 100, 0);
    quota_yield_case("colocation=0,work-conserving=0", 5000, 0);
}

static double const_rho(void *ctx, const ds_trace_t *t, int32_t a, int32_t b)
{
    (void)t, (void)a, (void)b;
    return *(const double *)ctx;
}

/* Admission at the floor (admit-floor): B's G job j3 must share the GPU of A's BE job j2 (one GPU per
 * node, both taken), under load, where the threshold is tau_max = 0.95. A model predicting 0.85 for
 * both admits the pair at the floor rho_min = 0.7 (the monitor then holds it to 0.95), but not with
 * admit-floor = 0; a prediction of 0.6 is vetoed either way (B then reclaims j2's GPU instead). */
static void floor_case(const char *kv, double rho, int shared)
{
    ds_trace_t t;
    tu_trace(&t, "A:1 B:1", "1 A 1 0 100000; 2 A 1 0 100000; 3 B 1 10 100000");
    char opts[128];
    snprintf(opts, sizeof opts, "%s,share-first=0", kv);
    void *cfg = cfg_with(opts);
    ds_interference_predictor_t ip = {.predict = const_rho, .ctx = &rho};
    ds_predictors_t pr = {NULL, &ip, NULL};
    ds_engine_t *e = engine_with(&t, 1, cfg, &pr);
    ds_engine_arrive(e, 0, 0);
    ds_engine_arrive(e, 1, 0);
    ds_engine_schedule(e, 0, 1);
    ds_engine_arrive(e, 2, 10);
    ds_engine_schedule(e, 10, 0);
    assert_int_equal(e->js[2].partner == 1, shared);
    assert_int_equal(e->js[1].partner == 2, shared);
    ds_engine_destroy(e);
    ops()->config_free(cfg);
    ds_trace_free(&t);
}

static void test_admit_floor(void **st)
{
    (void)st;
    floor_case("admit-floor=1", 0.85, 1);
    floor_case("admit-floor=0", 0.85, 0);
    floor_case("admit-floor=1", 0.6, 0);
    floor_case("admit-floor=0", 0.99, 1);
}

/* A model predicting 0.6 for every pair, unsure by *ctx. */
static double rho_06(void *ctx, const ds_trace_t *t, int32_t a, int32_t b)
{
    (void)ctx, (void)t, (void)a, (void)b;
    return 0.6;
}

static double unsure_by(void *ctx, const ds_trace_t *t, int32_t a, int32_t b)
{
    (void)t, (void)a, (void)b;
    return *(const double *)ctx;
}

static double measured_rho;

static double observe_measured(void *ctx, int32_t job, int64_t now)
{
    (void)ctx, (void)job, (void)now;
    return measured_rho;
}

/* Probing an unmeasured pair (docs/policy.md §5). One GPU per node: A's j0 (G) and BE j1, j2 hold all
 * three; B's G jobs j3 and j4 (one workload, A's jobs another) arrive at 10 and can only share, at the
 * floor rho_min = 0.7. The model says 0.6, unsure by u: with probe-z 3 a pair whose 0.6 + 3u reaches
 * 0.7 is probed once: j3 shares j1's GPU, and j4, of the same two workloads, waits for the measurement
 * instead of betting on the same guess. The monitor then measures `rho` every cycle: 0.9 and j4 shares
 * at the first sample (no probe: measured); 0.5 and j4 never shares, and the probe is revoked. */
static void probe_case(const char *kv, double u, int has_uncertainty, int probed, double rho)
{
    ds_trace_t t;
    tu_trace(&t, "A:1 B:2", "1 A 1 0 100000; 2 A 1 0 100000; 3 A 1 0 100000; 4 B 1 10 100000; 5 B 1 10 100000");
    int32_t ma = ds_strtab_intern(&t.models, "ModelA"), mb = ds_strtab_intern(&t.models, "ModelB");
    for (int32_t j = 0; j < t.njobs; j++) t.jobs[j].model = j < 3 ? ma : mb, t.jobs[j].batch = 32;
    char opts[160];
    snprintf(opts, sizeof opts, "%s,share-first=0,preemption=0,work-conserving=0", kv);
    void *cfg = cfg_with(opts);
    ds_interference_predictor_t ip = {.predict = rho_06, .ctx = &u};
    if (has_uncertainty) ip.uncertainty = unsure_by;
    ds_predictors_t pr = {NULL, &ip, NULL};
    ds_engine_t *e = engine_with(&t, 1, cfg, &pr);
    measured_rho = rho;
    ds_engine_set_hooks(e, &(ds_driver_hooks_t){.observe_retention = observe_measured});
    dsp_t *s = e->pstate;
    for (int32_t j = 0; j < 3; j++) ds_engine_arrive(e, j, 0);
    ds_engine_schedule(e, 0, 1);
    ds_engine_arrive(e, 3, 10);
    ds_engine_arrive(e, 4, 10);
    ds_engine_schedule(e, 10, 0);
    assert_int_equal(e->js[3].status, probed ? DS_JS_RUNNING : DS_JS_PENDING);
    assert_int_equal(e->js[4].status, DS_JS_PENDING);
    assert_int_equal(s->st.probes, probed);
    if (probed) {
        assert_int_equal(e->js[3].partner >= 1 && e->js[3].partner <= 2, 1);
        ds_engine_schedule(e, 60, 1);
        assert_int_equal(e->js[4].status, rho >= 0.7 ? DS_JS_RUNNING : DS_JS_PENDING);
        assert_int_equal(s->st.probes, 1);
        for (int64_t now = 120; now <= 600; now += 60) ds_engine_schedule(e, now, 1);
        assert_int_equal(e->js[4].status, rho >= 0.7 ? DS_JS_RUNNING : DS_JS_PENDING);
        /* measured bad, the A-B probe is revoked at the third sample (180); its BE member then shares
         * with A's other BE job, a probe of the A-A pair, revoked in turn (360): each pair once */
        assert_int_equal(e->n_revocations, rho >= 0.7 ? 0 : 2);
        assert_int_equal(s->st.probes, rho >= 0.7 ? 1 : 2);
    }
    char msg[200];
    assert_int_equal(ops()->check(e, e->pstate, msg, sizeof msg), 0);
    ds_engine_destroy(e);
    ops()->config_free(cfg);
    ds_trace_free(&t);
}

static void test_probe_unmeasured_pair(void **st)
{
    (void)st;
    probe_case("probe-z=3", 0.05, 1, 1, 0.9);  /* 0.6 + 0.15 >= 0.7: probed, measured good */
    probe_case("probe-z=3", 0.05, 1, 1, 0.5);  /* probed, measured bad: revoked, never again */
    probe_case("probe-z=3", 0.02, 1, 0, 0.9);  /* 0.66: the trees agree it falls short */
    probe_case("probe-z=0", 0.05, 1, 0, 0.9);  /* probing off */
    probe_case("probe-z=3", 0.05, 0, 0, 0.9);  /* a predictor that is never unsure (measurements) */
    probe_case("probe-z=3,learn-retention=0", 0.05, 1, 0, 0.9); /* nothing would learn from it */
}

/* Six samples at 0.95, then 0.7 for good. */
static double drops_to_07(void *ctx, int32_t job, int64_t now)
{
    (void)ctx, (void)job;
    return now <= 6 * 60 ? 0.95 : 0.7;
}

/* Revocation after exactly w low samples: one GPU per node; A's j1 is G, j2 BE on B's GPU; B's j3
 * (G) arrives at 10 and shares j2's GPU. The hook gives the observed retentions (samples at 60, 120,
 * ...); the colocation is revoked at `when` (0: not within `until`), and only the BE partner j2 stops. */
static void revoke_case(const char *kv, double (*hook)(void *, int32_t, int64_t), int64_t when, int64_t until)
{
    ds_trace_t t;
    tu_trace(&t, "A:1 B:1", "1 A 1 0 100000; 2 A 1 0 100000; 3 B 1 10 100000");
    char opts[128];
    snprintf(opts, sizeof opts, "%s,share-first=0", kv); /* j2 takes the free GPU, so j3 must share */
    void *cfg = cfg_with(opts);
    ds_engine_t *e = engine_for(&t, 1, cfg);
    ds_engine_set_hooks(e, &(ds_driver_hooks_t){.observe_retention = hook});
    ds_engine_arrive(e, 0, 0);
    ds_engine_arrive(e, 1, 0);
    ds_engine_schedule(e, 0, 1);
    ds_engine_arrive(e, 2, 10);
    ds_engine_schedule(e, 10, 0);
    assert_int_equal(e->js[2].status, DS_JS_RUNNING);
    assert_int_equal(e->js[2].partner, 1);
    assert_int_equal(e->js[1].partner, 2);
    int64_t last = when ? when : until;
    for (int64_t now = 60; now <= last; now += 60) {
        ds_engine_clear_decisions(e);
        ds_engine_schedule(e, now, 1);
        if (now < when || !when) {
            assert_int_equal(e->n_revocations, 0);
            assert_int_equal(e->js[1].preemptions, 0);
        }
    }
    if (!when) {
        assert_int_equal(e->js[1].partner, 2);
    } else {
        assert_int_equal(e->n_revocations, 1);
        assert_int_equal(count_dec(e, DS_DEC_REVOKE, 1), 1);
        assert_int_equal(e->js[1].preemptions, 1);
        assert_int_equal(e->js[2].preemptions, 0);
        assert_int_equal(e->js[0].preemptions, 0);
        assert_int_equal(e->js[2].status, DS_JS_RUNNING);
    }
    ds_engine_destroy(e);
    ops()->config_free(cfg);
    ds_trace_free(&t);
}

static void test_revoke_after_w(void **st)
{
    (void)st;
    revoke_case("w=3", low_retention, 180, 0);
    revoke_case("w=1", low_retention, 60, 0);
    revoke_case("w=2", low_retention, 120, 0);
}

/* The driver has no fresh measurement (deepshared's telemetry missing or stale: NaN). */
static double no_sample(void *ctx, int32_t job, int64_t now)
{
    (void)ctx, (void)job, (void)now;
    return NAN;
}

/* Low, then no sample at 120 and 180, then low again. */
static double low_with_gap(void *ctx, int32_t job, int64_t now)
{
    return now == 120 || now == 180 ? NAN : low_retention(ctx, job, now);
}

/* Missing telemetry revokes nothing however long it lasts, even with w = 1; a gap neither counts as a
 * low sample nor clears the count: w = 3 low samples at 60, 240 and 300 revoke at 300. */
static void test_missing_sample_never_revokes(void **st)
{
    (void)st;
    revoke_case("w=1", no_sample, 0, 20 * 60);
    revoke_case("w=3", low_with_gap, 300, 0);
}

/* Three samples just under the threshold after six well above it: the consecutive rule alone
 * (monitor-z = 0, SPEC 4.6 as written) revokes at the ninth sample; with the mean test (default z = 2)
 * the pair's mean is not confidently below 0.8 yet, so it stays until more low samples pull it down. */
static void test_revoke_needs_confident_mean(void **st)
{
    (void)st;
    revoke_case("rho-min=0.8,tau-max=0.8,monitor-z=0", near_threshold, 9 * 60, 0);
    revoke_case("rho-min=0.8,tau-max=0.8", near_threshold, 0, 12 * 60);
    /* a pair that stays well under the threshold is still revoked, once its mean says so: at the 24th
     * sample, where the mean of 6 x ln 0.95 and 18 x ln 0.7 plus two standard errors (noise pooled over
     * both jobs' deviations) falls under ln 0.8 */
    revoke_case("rho-min=0.8,tau-max=0.8", drops_to_07, 24 * 60, 0);
}

static double at_085(void *ctx, int32_t job, int64_t now)
{
    (void)ctx, (void)job, (void)now;
    return 0.85;
}

static void revoke_for_case(const char *kv, double (*rho)(void *, int32_t, int64_t), int64_t dur5, int64_t when);

/* What the monitor holds a pair to (monitor-threshold): the pair of revoke_for_case (below) measured at 0.85 for good,
 * while B's 2-GPU job waits with no GPU free (pressure: the threshold of the moment is tau-max = 0.95; B is
 * served, its G job running). current revokes it once the mean is confidently under 0.95 (the 4th sample);
 * floor (rho-min 0.7) and urgent (no under-served G member) keep it for good. Run with revoke-for any: nothing
 * here waits for the BE member's place, which revoke-for shorter (the default; test_revoke_for) asks for. */
static void monitor_case(const char *kv, int64_t when)
{
    char opts[128];
    snprintf(opts, sizeof opts, "%s,revoke-for=any", kv);
    revoke_for_case(opts, at_085, 0, when);
}

static void test_monitor_threshold(void **st)
{
    (void)st;
    monitor_case("monitor-threshold=current", 4 * 60);
    monitor_case("monitor-threshold=floor", 0);
    monitor_case("monitor-threshold=urgent", 0);
    /* below the floor, floor revokes too (a pair its estimate misjudged), once the mean of its samples plus
     * two standard errors (the prior noise 0.1 before 30 deviations) is under ln 0.9: at the 13th sample */
    monitor_case("monitor-threshold=floor,rho-min=0.9,tau-max=0.95", 13 * 60);
}

static double at_05(void *ctx, int32_t job, int64_t now)
{
    (void)ctx, (void)job, (void)now;
    return 0.5;
}

/* revoke-for shorter: the pair of monitor_case (measured at 0.85, threshold of the moment 0.95) is revoked only
 * while a waiting job of its GPU count, predicted to end before the BE member (job 2, 100,000 s), could take
 * that member's place beside B's job 3; job 5 (B, 1 GPU, arriving at 30) waits, A's G job 1 holding GPU 0 with
 * no memory to share. With job 5 of 500 s the pair goes at the 4th sample as with any, and job 5 takes the
 * place; with job 5 of 200,000 s, or none, the pair runs on. Measured at 0.5, under rho-min, it goes anyway. */
static void revoke_for_case(const char *kv, double (*rho)(void *, int32_t, int64_t), int64_t dur5, int64_t when)
{
    ds_trace_t t;
    char jobs[256];
    snprintf(jobs, sizeof jobs, "1 A 1 0 100000; 2 A 1 0 100000; 3 B 1 10 100000; 4 B 2 20 100000%s", dur5 ? "; 5 B 1 30 " : "");
    if (dur5) snprintf(jobs + strlen(jobs), sizeof jobs - strlen(jobs), "%lld", (long long)dur5);
    tu_trace(&t, "A:1 B:1", jobs);
    t.jobs[0].gmem_mib = 24576;
    if (dur5) t.jobs[4].gmem_mib = 1;
    char opts[128];
    snprintf(opts, sizeof opts, "%s,share-first=0", kv);
    void *cfg = cfg_with(opts);
    ds_engine_t *e = engine_for(&t, 1, cfg);
    ds_engine_set_hooks(e, &(ds_driver_hooks_t){.observe_retention = rho});
    ds_engine_arrive(e, 0, 0);
    ds_engine_arrive(e, 1, 0);
    ds_engine_schedule(e, 0, 1);
    ds_engine_arrive(e, 2, 10);
    ds_engine_schedule(e, 10, 0);
    assert_int_equal(e->js[2].partner, 1);
    ds_engine_arrive(e, 3, 20);
    ds_engine_schedule(e, 20, 0);
    if (dur5) {
        ds_engine_arrive(e, 4, 30);
        ds_engine_schedule(e, 30, 0);
        assert_int_equal(e->js[4].status, DS_JS_PENDING);
    }
    int64_t revoked = 0;
    for (int64_t now = 60; now <= 20 * 60 && !revoked; now += 60) {
        ds_engine_clear_decisions(e);
        ds_engine_schedule(e, now, 1);
        if (e->n_revocations) revoked = now;
    }
    assert_int_equal(revoked, when);
    if (when) {
        assert_int_equal(e->js[1].preemptions, 1);
        if (dur5 && dur5 < 100000) {
            assert_int_equal(e->js[4].status, DS_JS_RUNNING);
            assert_int_equal(e->js[4].partner, 2);
        }
    } else {
        assert_int_equal(e->js[2].partner, 1);
        assert_int_equal(e->js[1].preemptions, 0);
    }
    ds_engine_destroy(e);
    ops()->config_free(cfg);
    ds_trace_free(&t);
}

static void test_revoke_for(void **st)
{
    (void)st;
    revoke_for_case("revoke-for=any", at_085, 500, 4 * 60);
    revoke_for_case("revoke-for=shorter", at_085, 500, 4 * 60);
    revoke_for_case("revoke-for=shorter", at_085, 200000, 0);
    revoke_for_case("revoke-for=shorter", at_085, 0, 0);
    revoke_for_case("revoke-for=any", at_085, 0, 4 * 60);
    /* under rho-min (0.7): the mean plus two standard errors (prior noise 0.1) is under ln 0.7 at once */
    revoke_for_case("revoke-for=shorter", at_05, 0, 3 * 60);
}

/* QG order: band first. An under-served tenant's long job precedes a well-served tenant's short
 * one, and over random states the bands never decrease along the order. */
/* Only under-served tenants' G jobs go before best-effort work (served-g-in-qb, docs/policy.md §3, revision
 * 7). A is served, B under-served; A's and B's 1-GPU jobs are G, C's 8-GPU job takes C's quota (G) and C's
 * 1-GPU job is BE. By default QG holds B's job alone and QB the rest, each tenant's in its own order; with
 * served-g-in-qb=0 every G job is in QG. Classes are the same either way, and explain says which queue. */
static void sgq_case(const char *kv, int on)
{
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8 C:8", "1 A 1 0 100; 2 B 1 0 100; 3 C 8 0 100; 4 C 1 0 500");
    void *cfg = cfg_with(kv);
    ds_engine_t *e = engine_for(&t, 8, cfg);
    dsp_t *s = e->pstate;
    for (int32_t j = 0; j < 4; j++) ds_engine_arrive(e, j, 0);
    s->S[0] = 1.0, s->S[1] = 0.5, s->S[2] = 1.0;
    int32_t ng, nb;
    dsp_classify(e, s, s->pend[0].v, s->pend[0].n, 0, &ng, &nb);
    for (int32_t j = 0; j < 3; j++) assert_int_equal(e->js[j].klass, DS_CLASS_G);
    assert_int_equal(e->js[3].klass, DS_CLASS_BE);
    if (on) {
        assert_int_equal(ng, 1);
        assert_int_equal(s->qg[0], 1);
        assert_int_equal(nb, 3);
        int seen = 0;
        for (int32_t k = 0; k < nb; k++) seen |= 1 << s->qb[k];
        assert_int_equal(seen, 1 | 4 | 8);
    } else {
        assert_int_equal(ng, 3);
        assert_int_equal(nb, 1);
        assert_int_equal(s->qb[0], 3);
    }
    ds_buf_t b = {0};
    ops()->explain(e, e->pstate, 0, 0, &b);
    char *text = ds_bdone(&b);
    assert_non_null(strstr(text, on ? "placed in the best-effort queue's order" : "placed before best-effort work"));
    free(text);
    b = (ds_buf_t){0};
    ops()->explain(e, e->pstate, 1, 0, &b);
    text = ds_bdone(&b);
    assert_non_null(strstr(text, "placed before best-effort work (G queue)"));
    free(text);
    ds_engine_destroy(e);
    ops()->config_free(cfg);
    ds_trace_free(&t);
}

static void test_served_g_in_qb(void **st)
{
    (void)st;
    sgq_case("colocation=0", 1);
    sgq_case("colocation=0,served-g-in-qb=0", 0);
}

/* Quota backfill. A (quota 8) runs job 1 (4 GPUs, G, to end at 1000 or 400); at 10 its job 2 (8 GPUs, 100 s)
 * heads its order but lacks 4 quota GPUs, which job 1 frees in 990 (or 390) s; job 3 (4 GPUs, 500 s) comes
 * next and job 4 (4 GPUs, 2000 s) last. With the backfill job 3 is G in the quota the prefix closed when it
 * ends first (500 <= 990) and BE when it would not (500 > 390); job 4 finds that quota taken and is BE; without
 * the backfill both are BE (the G prefix). Job 2 is BE either way. */
static void qbf_case(const char *kv, int64_t d1, int backfilled)
{
    ds_trace_t t;
    char jobs[160];
    snprintf(jobs, sizeof jobs, "1 A 4 0 %lld; 2 A 8 10 100; 3 A 4 10 500; 4 A 4 10 2000", (long long)d1);
    tu_trace(&t, "A:8 B:8", jobs);
    void *cfg = cfg_with(kv);
    ds_engine_t *e = engine_for(&t, 8, cfg);
    dsp_t *s = e->pstate;
    ds_engine_arrive(e, 0, 0);
    ds_engine_schedule(e, 0, 1);
    assert_int_equal(e->js[0].status, DS_JS_RUNNING);
    assert_int_equal(e->js[0].klass, DS_CLASS_G);
    for (int32_t j = 1; j < 4; j++) ds_engine_arrive(e, j, 10);
    int32_t ng, nb;
    dsp_classify(e, s, s->pend[0].v, s->pend[0].n, 10, &ng, &nb);
    assert_int_equal(e->js[1].klass, DS_CLASS_BE);
    assert_int_equal(e->js[2].klass, backfilled ? DS_CLASS_G : DS_CLASS_BE);
    assert_int_equal(e->js[3].klass, DS_CLASS_BE);
    ds_buf_t b = {0};
    ops()->explain(e, e->pstate, 2, 10, &b);
    char *text = ds_bdone(&b);
    assert_true((strstr(text, "backfilled within quota") != NULL) == backfilled);
    if (backfilled) assert_non_null(strstr(text, "(in 990 s)"));
    free(text);
    ds_engine_destroy(e);
    ops()->config_free(cfg);
    ds_trace_free(&t);
}

static void test_quota_backfill(void **st)
{
    (void)st;
    qbf_case("colocation=0", 1000, 1);
    qbf_case("colocation=0", 400, 0);
    qbf_case("colocation=0,quota-backfill=0", 1000, 0);
}

static void test_prediction_never_lifts(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8 C:8", "1 A 1 0 1000000; 2 B 1 0 10; 3 C 1 0 5000");
    ds_engine_t *e = engine_for(&t, 8, NULL);
    dsp_t *s = e->pstate;
    for (int32_t j = 0; j < 3; j++) ds_engine_arrive(e, j, 0);
    s->S[0] = 0.5, s->S[1] = 1.0, s->S[2] = 0.949;
    int32_t v[3] = {1, 2, 0};
    dsp_sort_qg(e, s, v, 3, 0);
    assert_int_equal(v[0], 0);
    assert_int_equal(v[1], 2);
    assert_int_equal(v[2], 1);
    srand(7);
    for (int round = 0; round < 200; round++) {
        for (int i = 0; i < 3; i++) s->S[i] = (double)(rand() % 1001) / 1000.0;
        for (int j = 0; j < 3; j++) s->pred[j] = 1 + rand() % 100000;
        int32_t w[3] = {0, 1, 2};
        dsp_sort_qg(e, s, w, 3, 0);
        for (int k = 1; k < 3; k++) {
            int32_t a = t.jobs[w[k - 1]].tenant, b = t.jobs[w[k]].tenant;
            assert_true(dsp_band(s, a) <= dsp_band(s, b));
            if (dsp_underserved(s, b)) assert_true(s->S[a] < 0.95 || dsp_band(s, a) == dsp_band(s, b));
        }
    }
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

static void test_config(void **st)
{
    (void)st;
    void *c = ops()->config_new();
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ops()->config_set(c, "rho_min", "0.6", &err), DS_OK);
    assert_true(fabs(((dsp_config_t *)c)->rho_min - 0.6) < 1e-12);
    assert_int_equal(ops()->config_set(c, "rho-min", "1.5", &err), DS_EINVAL);
    assert_string_equal(err.field, "rho-min");
    assert_int_equal(ops()->config_set(c, "w", "2.5", &err), DS_EINVAL);
    assert_int_equal(ops()->config_set(c, "nonsense", "1", &err), DS_ENOTFOUND);
    assert_int_equal(ops()->config_set(c, "ablation", "hard-colocate", &err), DS_OK);
    assert_int_equal(((dsp_config_t *)c)->borrowing, 0);
    assert_int_equal(((dsp_config_t *)c)->colocation, 1);
    assert_int_equal(ops()->config_set(c, "ablation", "bogus", &err), DS_EINVAL);
    assert_int_equal(ops()->config_set(c, "alpha", "0.9", &err), DS_OK);
    ds_trace_t t;
    tu_trace(&t, "A:8", "1 A 1 0 10");
    ds_engine_config_t ec;
    ds_engine_config_default(&ec);
    ds_engine_t *e = NULL;
    assert_int_equal(ds_engine_create(&e, &t, &ec, ops(), c, &err), DS_EINVAL); /* alpha + beta > 1 */
    assert_null(e);
    ops()->config_free(c);
    ds_trace_free(&t);
}


/* The one QAD definition: min(q, held) / min(q, held + pending), 1 without demand, never above 1. */
static void test_qad_definition(void **st)
{
    (void)st;
    assert_true(ds_qad_ratio(0, 0, 8) == 1.0);
    assert_true(ds_qad_ratio(4, 4, 8) == 0.5);
    assert_true(ds_qad_ratio(12, 0, 8) == 1.0);
    assert_true(ds_qad_ratio(12, 20, 8) == 1.0);
    assert_true(ds_qad_ratio(2, 10, 8) == 0.25);
    assert_true(ds_qad_ratio(0, 5, 0) == 1.0);
    /* A holds 8 G GPUs and 8 BE GPUs with 8 pending: the reported QAD counts both classes, the policy's only G */
    ds_trace_t t;
    tu_trace(&t, "A:16 B:16", "1 A 8 0 1000; 2 A 8 0 1000; 3 A 8 0 1000; 4 A 8 0 1000");
    void *c = cfg_with("m=0.5,work-conserving=0");
    ds_engine_t *e = engine_for(&t, 8, c);
    for (int32_t j = 0; j < 4; j++) ds_engine_arrive(e, j, 0);
    ds_engine_schedule(e, 0, 1);
    /* G: jobs 1 and 2 (16); BE cap 8: job 3; job 4 waits (no work-conserving stage) */
    assert_int_equal(e->tenant_g_gpus[0], 16);
    assert_int_equal(e->tenant_be_gpus[0], 8);
    assert_true(ds_engine_qad(e, 0, DS_QAD_G) == 1.0);
    assert_true(ds_engine_qad(e, 0, DS_QAD_ALL) == 1.0);
    ds_engine_finish(e, 0, 10);
    /* G 8, BE 8, pending 8: G-only 8/16, reported min(16, 16)/min(16, 24) = 1 */
    assert_true(ds_engine_qad(e, 0, DS_QAD_G) == 0.5);
    assert_true(ds_engine_qad(e, 0, DS_QAD_ALL) == 1.0);
    assert_true(ds_engine_qad(e, 1, DS_QAD_ALL) == 1.0 && !ds_engine_qad_demand(e, 1, DS_QAD_ALL));
    ds_engine_destroy(e);
    ops()->config_free(c);
    ds_trace_free(&t);
}

/* Work conservation: A (quota 8) and B (quota 16) on four 8-GPU nodes, no BE class (m = 0). A's first job
 * and B's shorter one are G; A's second and B's 16-GPU job (it would overrun B's quota) are left over.
 * Two nodes stay free; the stage serves the tenant with the fewest GPUs per quota GPU first: B (8/16)
 * before A (8/8), so B's 16-GPU job takes both free nodes and A's waits. Without the stage both wait. */
static void test_work_conserving(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:16 C:8", "1 A 8 0 1000; 2 A 8 0 1000; 3 B 8 0 1000; 4 B 16 0 2000");
    for (int wc = 0; wc < 2; wc++) {
        void *c = cfg_with(wc ? "m=0" : "m=0,work-conserving=0");
        ds_sim_result_t r;
        run_ds(&t, c, DS_MODE_POOLED, &r);
        assert_int_equal(r.start[0], 0);
        assert_int_equal(r.start[2], 0);
        if (wc) {
            assert_int_equal(r.start[3], 0);  /* B's leftover job, as BE, beyond B's BE cap of 0 */
            assert_true(r.start[1] >= 1000);  /* A's waits for GPUs to free */
            assert_true(stat_of(&r, "work_conserving_starts") >= 1);
        } else {
            assert_true(r.start[3] > 0 && r.start[1] > 0);
            assert_int_equal(stat_of(&r, "work_conserving_starts"), 0);
        }
        ds_sim_result_free(&r);
        ops()->config_free(c);
    }
    ds_trace_free(&t);
}

/* A job larger than its tenant's quota: a clear error naming it in partitioned mode; in pooled mode it
 * runs as BE and finishes. */
static void test_oversize_job(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:16", "1 A 1 0 100; 7 A 16 5 100");
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.policy = ops();
    c.engine.mode = DS_MODE_PARTITIONED;
    ds_sim_result_t r;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_sim_run(&t, &c, &r, &err), DS_EINVAL);
    char msg[600];
    ds_error_format(&err, msg, sizeof msg);
    assert_non_null(strstr(msg, "job 7"));
    assert_non_null(strstr(msg, "16 GPUs"));
    assert_non_null(strstr(msg, "pooled"));
    ds_sim_result_free(&r);
    run_ds(&t, NULL, DS_MODE_POOLED, &r);
    assert_true(r.end[1] > r.start[1] && r.start[1] >= 5);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* Reservations with backfill, two 8-GPU nodes, true durations. Job 3 (16 GPUs, 50 s) arrives at 1 and
 * cannot start until jobs 1 (node 0, ends 1000) and 2 (node 1, ends 500) end. At t=10 it has waited
 * over reserve_after = 5: it reserves both nodes from t=1000. Job 5 (2 GPUs, 100 s) ends by then and
 * backfills node 1; job 4 (2 GPUs, 2000 s) would delay the reservation and waits for job 3. Without
 * reservations job 4 starts at once and job 3 waits until job 4 ends. */
static void test_reservation_backfill(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:16", "1 A 8 0 1000; 2 A 4 0 500; 3 A 16 1 50; 4 A 2 10 2000; 5 A 2 10 100");
    for (int rv = 0; rv < 2; rv++) {
        /* one tenant: with the quota yield its longer runs would give way to job 3 and be reclaimed by it,
         * the quota yield's own case (test_quota_yield), not the reservation's */
        void *c = cfg_with(rv ? "reserve-after=5,quota-yield=0" : "reserve-after=0,quota-yield=0");
        ds_sim_result_t r;
        run_ds(&t, c, DS_MODE_POOLED, &r);
        assert_int_equal(r.start[4], 10);
        if (rv) {
            assert_int_equal(r.start[2], 1000);
            assert_true(r.start[3] >= r.end[2]);
            assert_true(stat_of(&r, "reservations") >= 1);
            assert_true(stat_of(&r, "backfills") >= 1);
        } else {
            assert_int_equal(r.start[3], 10);
            assert_true(r.start[2] >= r.end[3]);
        }
        ds_sim_result_free(&r);
        ops()->config_free(c);
    }
    ds_trace_free(&t);
}

/* End-aligned placement, two 8-GPU nodes, true durations. Job 1 (6 GPUs, ends at 100) takes node 0, job 2
 * (4 GPUs, ends at 1000) node 1. Job 3 (1 GPU, 500 s) arrives at 10: the fullest node is node 0, whose
 * resident ends before it would; node 1's outlasts it, so with align-ends it goes there and node 0 frees
 * whole at 100 for job 4 (8 GPUs, arriving at 20). Without, job 3 takes node 0 and job 4 waits until 510. */
static void test_align_ends(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:16", "1 A 6 0 100; 2 A 4 0 1000; 3 A 1 10 500; 4 A 8 20 50");
    for (int al = 0; al < 2; al++) {
        void *c = cfg_with(al ? "align-ends=1,quota-yield=0" : "align-ends=0,quota-yield=0"); /* as above */
        ds_sim_result_t r;
        run_ds(&t, c, DS_MODE_POOLED, &r);
        assert_int_equal(r.start[0], 0);
        assert_int_equal(r.start[1], 0);
        assert_int_equal(r.start[2], 10);
        assert_int_equal(r.start[3], al ? 100 : 510);
        assert_int_equal(r.preemptions, 0);
        ds_sim_result_free(&r);
        ops()->config_free(c);
    }
    ds_trace_free(&t);
}

/* Fair division of the pool (fair-share), 24 GPUs: A (quota 8) holds 16 GPUs, 8 of them borrowed, B (quota 8) its 8
 * and asks for 4 more at t=10; C asks for nothing. The shares: 8 each, and the 8 left split equally (fair-weight
 * equal) or by quota (alike here): 12 and 12. Off, or ordering only (1), B's four wait for the first GPUs to free
 * at t=1000; with reclaim (2, 3) they take four of A's borrowed GPUs at once, and A keeps its share of 12. */
static void test_fair_share(void **st)
{
    (void)st;
    ds_trace_t t;
    char jobs[1024];
    int n = 0;
    for (int k = 1; k <= 16; k++) n += snprintf(jobs + n, sizeof jobs - (size_t)n, "%d A 1 0 1000; ", k);
    for (int k = 17; k <= 24; k++) n += snprintf(jobs + n, sizeof jobs - (size_t)n, "%d B 1 0 1000; ", k);
    for (int k = 25; k <= 28; k++) n += snprintf(jobs + n, sizeof jobs - (size_t)n, "%d B 1 10 100%s", k, k < 28 ? "; " : "");
    tu_trace(&t, "A:8 B:8 C:8", jobs);
    /* no GPU sharing: the trace has no footprints, and the pairs would take the GPUs this is about */
    const char *variants[] = {"colocation=0,fair-share=0", "colocation=0,fair-share=1", "colocation=0,fair-share=2",
                              "colocation=0,fair-share=3", "colocation=0,fair-share=3,fair-weight=equal"};
    for (int v = 0; v < 5; v++) {
        void *c = cfg_with(variants[v]);
        ds_sim_result_t r;
        run_ds(&t, c, DS_MODE_POOLED, &r);
        int reclaim = v >= 2;
        for (int j = 24; j < 28; j++) assert_int_equal(r.start[j], reclaim ? 10 : 1000);
        assert_int_equal(r.preemptions, reclaim ? 4 : 0);
        if (reclaim) assert_int_equal((int)stat_of(&r, "fair_share_reclaims"), 4);
        /* B's own jobs ran from the start and were never victims */
        for (int j = 16; j < 24; j++) assert_int_equal(r.start[j], 0);
        ds_sim_result_free(&r);
        ops()->config_free(c);
    }
    ds_trace_free(&t);
}

/* Workload knobs: arrival scaling keeps the first submit and the order; the noisy neighbour offers far
 * more than its quota, in the first half of each day; the large-jobs mix holds the asked share. */
static void test_workload_knobs(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8", "1 A 1 100 10; 2 A 1 130 10; 3 A 1 130 10; 4 A 1 190 10");
    ds_trace_scale_arrivals(&t, 1.5);
    assert_int_equal(t.jobs[0].submit, 100);
    assert_int_equal(t.jobs[1].submit, 120);
    assert_int_equal(t.jobs[2].submit, 120);
    assert_int_equal(t.jobs[3].submit, 160);
    ds_trace_free(&t);

    ds_synth_config_t sc;
    ds_synth_config_default(&sc);
    sc.noisy = 4;
    ds_error_t err;
    ds_trace_init(&t);
    assert_int_equal(ds_synth_generate(&t, &sc, &err), DS_OK);
    int32_t nz = t.ntenants - 1;
    double off[64] = {0};
    int64_t in_half = 0, nzj = 0;
    for (int32_t j = 0; j < t.njobs; j++) {
        off[t.jobs[j].tenant] += (double)t.jobs[j].gpus * (double)t.jobs[j].duration;
        if (t.jobs[j].tenant == nz) nzj++, in_half += t.jobs[j].submit % 86400 < 43200 + 3600;
    }
    double other = 0, oq = 0;
    for (int32_t i = 0; i < nz; i++) other += off[i], oq += t.tenants[i].quota_gpus;
    double rel = (off[nz] / t.tenants[nz].quota_gpus) / (other / oq);
    assert_true(rel > 1.8);               /* designed: (4 / 2) / 0.8 = 2.5 */
    assert_true(in_half >= nzj * 95 / 100);
    ds_trace_free(&t);

    ds_synth_config_default(&sc);
    sc.large_share = 0.33;
    ds_trace_init(&t);
    assert_int_equal(ds_synth_generate(&t, &sc, &err), DS_OK);
    double big = 0, all = 0;
    for (int32_t j = 0; j < t.njobs; j++) {
        double w = (double)t.jobs[j].gpus * (double)t.jobs[j].duration;
        all += w;
        if (t.jobs[j].gpus >= 16) big += w;
        assert_true(t.jobs[j].gpus <= t.tenants[t.jobs[j].tenant].quota_gpus);
    }
    assert_true(big / all >= 0.33 && big / all < 0.45);
    ds_trace_free(&t);
}

/* Invariants (docs/policy.md §7) after every pass (ops->check included) on synthetic workloads in both modes,
 * with explicit BE jobs, under every ablation. */
static void test_invariants_synthetic(void **st)
{
    (void)st;
    const char *variants[] = {"ablation=none", "ablation=no-prediction", "ablation=interference-blind",
                              "ablation=no-colocation", "ablation=no-borrowing", "ablation=hard-colocate",
                              "m=0.5,rho-min=0.5,monitor-threshold=admit", "m=1,work-conserving=0",
                              "g-prefix=0", "reserve-after=600,reserve-max=2", "m=0,tau-max=1",
                              "served-g-in-qb=0", "fair-share=3,fair-weight=equal", "fair-share=1"};
    for (int seed = 1; seed <= 4; seed++) {
        ds_synth_config_t sc;
        ds_synth_config_default(&sc);
        sc.seed = (uint64_t)seed;
        if (seed == 3) sc.noisy = 4;        /* the suite's noisy-neighbour and large-jobs mixes */
        if (seed == 4) sc.large_share = 0.33;
        sc.jobs = 1500;
        sc.nodes = 8;
        sc.be_share = 0.2;
        ds_trace_t t;
        ds_trace_init(&t);
        ds_error_t err;
        assert_int_equal(ds_synth_generate(&t, &sc, &err), DS_OK);
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++)
            for (int mode = 0; mode < 2; mode++) {
                void *cfg = cfg_with(variants[v]);
                ds_sim_result_t r;
                run_ds(&t, cfg, mode ? DS_MODE_POOLED : DS_MODE_PARTITIONED, &r);
                int64_t done = 0;
                for (int32_t j = 0; j < t.njobs; j++) done += r.end[j] >= r.start[j] && r.start[j] >= t.jobs[j].submit;
                assert_int_equal(done, t.njobs);
                for (int64_t k = 0; k < r.nseries * r.ntenants; k++) {
                    assert_true(r.qad[k] >= 0 && r.qad[k] <= 1);
                    assert_true(r.qad_smooth[k] >= 0 && r.qad_smooth[k] <= 1.0001);
                }
                if (strstr(variants[v], "no-colocation") || strstr(variants[v], "no-borrowing"))
                    assert_int_equal(r.colocations, 0);
                ds_sim_result_free(&r);
                ops()->config_free(cfg);
            }
        ds_trace_free(&t);
    }
}

static void test_invariants_venus(void **st)
{
    (void)st;
    ds_trace_t t;
    if (!tu_venus(&t)) skip();
    ds_error_t err;
    const char *cp = tu_data("colocation/colocate_info.csv");
    ds_coloc_t coloc;
    int have = cp && ds_coloc_read(&coloc, cp, &err) == DS_OK;
    if (have) ds_coloc_bind(&coloc, &t);
    ds_interference_predictor_t ip;
    ds_interference_oracle(&ip, have ? &coloc : NULL);
    ds_predictors_t pr = {NULL, &ip, NULL};
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.engine.mode = DS_MODE_POOLED;
    c.engine.predictors = &pr;
    c.coloc = have ? &coloc : NULL;
    c.policy = ops();
    c.check_invariants = 1;
    c.keep_series = 0;
    /* the suite's venus and venus-x1.5 workloads (arrivals 1.5x as dense: the overloaded one) */
    for (int pass = 0; pass < 2; pass++) {
        if (pass) ds_trace_scale_arrivals(&t, 1.5);
        ds_sim_result_t r;
        assert_int_equal(ds_sim_run(&t, &c, &r, &err), DS_OK);
        assert_int_equal(r.jobs, 23859);
        for (int32_t j = 0; j < t.njobs; j++) assert_true(r.end[j] > 0);
        assert_true(r.qad_compliance >= 0 && r.qad_compliance <= 1);
        ds_sim_result_free(&r);
    }
    if (have) ds_coloc_free(&coloc);
    ds_trace_free(&t);
}

/* What explain says comes from the policy's own parameters: the BE cap is m x quota with the m the
 * policy applies (4 by default), and theta and the band are the policy's. A (quota 2) runs a 2-GPU G
 * job and a 6-GPU BE job; its 4-GPU job would bring its BE GPUs to 10: over the default cap of 8, within
 * a cap of 10 with m = 5. */
/* An engine on t (8-GPU nodes) after every job arrived at 0 and the first pass (a cycle) ran. */
static ds_engine_t *after_first_pass(const ds_trace_t *t, void *cfg)
{
    ds_engine_t *e = engine_for(t, 8, cfg);
    for (int32_t j = 0; j < t->njobs; j++) ds_engine_arrive(e, j, 0);
    ds_engine_schedule(e, 0, 1);
    return e;
}

/* What the policy explains of job at t=0 (printed, so a failure shows it); free it. */
static char *explain_now(ds_engine_t *e, int32_t job)
{
    ds_buf_t b = {0};
    e->ops->explain(e, e->pstate, job, 0, &b);
    char *x = ds_bdone(&b);
    print_message("%s", x);
    return x;
}

static char *explain_of(const char *params, int32_t job)
{
    ds_trace_t t;
    tu_trace(&t, "A:2 B:8", "1 B 8 0 1000; 2 A 2 0 1000; 3 A 6 0 1000; 4 A 4 0 1000");
    void *cfg = params ? cfg_with(params) : NULL;
    ds_engine_t *e = after_first_pass(&t, cfg);
    assert_int_equal(e->js[2].status, DS_JS_RUNNING);
    assert_int_equal(e->js[2].klass, DS_CLASS_BE);
    char *x = explain_now(e, job);
    ds_engine_destroy(e);
    if (cfg) ops()->config_free(cfg);
    ds_trace_free(&t);
    return x;
}

static void test_explain_true_parameters(void **st)
{
    (void)st;
    char *x = explain_of(NULL, 3);
    assert_non_null(strstr(x, "  quota: over its quota and its BE cap (BE held or claimed ahead of it 6 + 4 > BE cap 8 = m 4 x quota 2)"));
    assert_non_null(strstr(x, "smoothed 0.00 (under-served, theta 0.95), band 0 of width 0.05"));
    free(x);
    x = explain_of("m=5,theta=0.9,band=0.1", 3);
    assert_non_null(strstr(x, "so it can only borrow as best effort (BE cap 10 = m 5 x quota; 6 held or claimed ahead of it)"));
    assert_non_null(strstr(x, "  no fit: no node has 4 free GPUs"));
    assert_non_null(strstr(x, "  preemption: none, best-effort work never preempts"));
    assert_non_null(strstr(x, "(under-served, theta 0.90), band 0 of width 0.1\n"));
    free(x);
    /* fair share (A asks for 12, B for 8, 16 GPUs): A's share is its quota 2 and the 6 the quotas leave */
    x = explain_of("m=5,fair-share=3,fair-weight=equal", 3);
    assert_non_null(strstr(x, "  fair share: 8.0 GPUs of the pool at the last pass (up to its quota what it asks for, and a "
                              "part of what the quotas leave by equal weight); it holds 8, asks for 12\n"));
    assert_non_null(strstr(x, "  queue: best-effort queue, where jobs that keep their tenant within its fair share go "
                              "first: this one does not\n"));
    assert_non_null(strstr(x, "  preemption: none, it would take its tenant past its fair share\n"));
    free(x);
    x = explain_of(NULL, 2);
    assert_non_null(strstr(x, "  class: runs as best effort (BE): borrowing beyond its tenant's quota"));
    free(x);
    x = explain_of(NULL, 1);
    assert_non_null(strstr(x, "  class: runs as guaranteed (G), within its tenant's quota: never preempted"));
    free(x);
}

/* Explain says when a served tenant's G job may reclaim (served-reclaim) and from whom (theta 0: everyone is served,
 * whatever its QAD): B's job (8 GPUs, 5,000 s) waits behind A's best-effort job 1 of the same length, which does
 * not outlast it, so nothing is requeued. */
static void test_explain_served_reclaim(void **st)
{
    (void)st;
    const char *params[] = {"theta=0,colocation=0", "theta=0,colocation=0,served-reclaim=0"};
    for (int k = 0; k < 2; k++) {
        ds_trace_t t;
        tu_trace(&t, "A:8 B:8", "1 A 8 0 5000; 2 A 8 0 1000; 3 B 8 0 5000");
        void *cfg = cfg_with(params[k]);
        ds_engine_t *e = after_first_pass(&t, cfg);
        assert_int_equal(e->js[0].status, DS_JS_RUNNING);
        assert_int_equal(e->js[2].status, DS_JS_PENDING);
        char *x = explain_now(e, 2);
        if (k == 0)
            assert_non_null(strstr(x, "  preemption: its tenant is served (smoothed QAD 0.00 >= theta 0.00), so it may requeue "
                                      "only best-effort runs of tenants above their quota (each left at or above it) that are "
                                      "predicted to run longer than its own 5000 s, cheapest first (served-reclaim)\n"));
        else
            assert_non_null(strstr(x, "  preemption: none, its tenant is served (smoothed QAD 0.00 >= theta 0.00)\n"));
        free(x);
        ds_engine_destroy(e);
        ops()->config_free(cfg);
        ds_trace_free(&t);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cheapest_victim_same_pass),
        cmocka_unit_test(test_surplus_weight),
        cmocka_unit_test(test_be_never_preempts),
        cmocka_unit_test(test_no_reclaim_when_served),
        cmocka_unit_test(test_promotion),
        cmocka_unit_test(test_cpu_reclaim),
        cmocka_unit_test(test_adopt),
        cmocka_unit_test(test_revoke_after_w),
        cmocka_unit_test(test_missing_sample_never_revokes),
        cmocka_unit_test(test_revoke_needs_confident_mean),
        cmocka_unit_test(test_monitor_threshold),
        cmocka_unit_test(test_revoke_for),
        cmocka_unit_test(test_admit_floor),
        cmocka_unit_test(test_gpu_time_order),
        cmocka_unit_test(test_overrun_yield),
        cmocka_unit_test(test_attained_yield),
        cmocka_unit_test(test_batch_evidence),
        cmocka_unit_test(test_yield_back),
        cmocka_unit_test(test_quota_yield),
        cmocka_unit_test(test_probe_unmeasured_pair),
        cmocka_unit_test(test_prediction_never_lifts),
        cmocka_unit_test(test_served_g_in_qb),
        cmocka_unit_test(test_explain_served_reclaim),
        cmocka_unit_test(test_quota_backfill),
        cmocka_unit_test(test_config),
        cmocka_unit_test(test_qad_definition),
        cmocka_unit_test(test_work_conserving),
        cmocka_unit_test(test_oversize_job),
        cmocka_unit_test(test_reservation_backfill),
        cmocka_unit_test(test_align_ends),
        cmocka_unit_test(test_fair_share),
        cmocka_unit_test(test_workload_knobs),
        cmocka_unit_test(test_invariants_synthetic),
        cmocka_unit_test(test_invariants_venus),
        cmocka_unit_test(test_explain_true_parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
