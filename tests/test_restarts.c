/* test_restarts.c: the simulator's model of the live cluster's restart rules (src/sim/restarts.c): a
 * requeued job restarts only on the GPU indices of its first start, of any node, and not within the
 * settle time of its requeue; starts that break them are moved or taken back, as deepshared does. A
 * scripted policy puts jobs on chosen GPUs and preempts one, so each rule is seen at work. */
#include "testutil.h"

#include "deepshare/engine.h"
#include "deepshare/policy.h"
#include "deepshare/strbuf.h"
#include "deepshare/synth.h"

#include <string.h>

/* 2 nodes x 2 GPUs (engine GPUs n0g0 = 0, n0g1 = 1, n1g0 = 2, n1g1 = 3). Job 0 (A) starts on first[0],
 * is preempted at PREEMPT_AT, and the policy then wants it on again[0]; the other jobs go on first[j]
 * (else the first free GPU) as soon as they are pending. */
#define PREEMPT_AT 50
typedef struct {
    int32_t first[8], again[8];
    int preempted;
    int again_class; /* the class A restarts in (0: none set, as policies without classes) */
} script_t;

static script_t g_script;
static int g_again_class; /* run() copies it into the script */

static void sp_enqueue(ds_engine_t *e, void *st, int32_t j, int64_t now) { (void)e, (void)st, (void)j, (void)now; }
static void sp_withdraw(ds_engine_t *e, void *st, int32_t j, int64_t now) { (void)e, (void)st, (void)j, (void)now; }
static void sp_explain(const ds_engine_t *e, const void *st, int32_t j, int64_t now, ds_buf_t *out)
{
    (void)e, (void)st, (void)j, (void)now;
    ds_bputs(out, "  order: scripted\n");
}

static void sp_schedule(ds_engine_t *e, void *st, int32_t part, int64_t now, int timer)
{
    (void)st, (void)part, (void)timer;
    script_t *s = &g_script;
    if (now >= PREEMPT_AT && !s->preempted && ds_engine_job(e, 0)->status == DS_JS_RUNNING) {
        s->preempted = 1;
        ds_engine_preempt(e, 0, now, 1);
    }
    for (int32_t j = (int32_t)e->trace->njobs - 1; j >= 0; j--) { /* A last: the others take their GPUs first */
        if (!ds_engine_startable(e, j)) continue;
        int32_t want = j == 0 && s->preempted ? s->again[0] : s->first[j];
        if (j == 0 && s->preempted && s->again_class) ds_engine_set_class(e, 0, s->again_class);
        if (e->gpus[want].nres) {
            want = -1;
            for (int32_t g = 0; g < e->ngpus && want < 0; g++)
                if (!e->gpus[g].nres) want = g;
        }
        if (want >= 0) ds_engine_start(e, j, &want, now);
    }
}

static int64_t sp_next_timer(const ds_engine_t *e, const void *st, int64_t now)
{
    (void)e, (void)st;
    return now < PREEMPT_AT ? PREEMPT_AT : DS_TIME_NEVER;
}

static const ds_policy_ops_t script_ops = {
    .name = "script",
    .summary = "test script",
    .enqueue = sp_enqueue,
    .withdraw = sp_withdraw,
    .schedule = sp_schedule,
    .explain = sp_explain,
    .next_timer = sp_next_timer,
};

/* What job A did after its preemption: the time of its first pass running again and its GPU then. */
typedef struct {
    int64_t back_at;
    int32_t gpu;
    int seen_early;  /* running before the settle time was up */
    int64_t settle_end;
} watch_t;

static void watch(void *ctx, const ds_engine_t *e, int64_t now)
{
    watch_t *w = ctx;
    const ds_jstate_t *a = ds_engine_job(e, 0);
    if (!g_script.preempted || a->status != DS_JS_RUNNING || w->back_at >= 0) return;
    w->back_at = now;
    w->gpu = ds_engine_job_gpus(e, 0)[0];
    if (now < w->settle_end) w->seen_early = 1;
}

static void run(const char *jobs, int pinned, int64_t settle, const int32_t *first, int32_t again, watch_t *w,
                ds_sim_result_t *r)
{
    ds_trace_t t;
    tu_trace(&t, "a:4", jobs);
    memset(&g_script, 0, sizeof g_script);
    for (int i = 0; i < 8; i++) g_script.first[i] = first[i];
    g_script.again[0] = again;
    g_script.again_class = g_again_class;
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.engine.mode = DS_MODE_POOLED;
    c.engine.gpus_per_node = 2;
    c.engine.pool_nodes = 2;
    c.engine.k = 1;
    c.engine.enforce_cpu = 0;
    c.policy = &script_ops;
    c.restart_pinned = pinned;
    c.requeue_settle = settle;
    memset(w, 0, sizeof *w);
    w->back_at = -1;
    w->settle_end = PREEMPT_AT + settle;
    c.after_pass = watch;
    c.after_pass_ctx = w;
    tu_sim(&t, &c, r);
    ds_trace_free(&t);
}

/* A ran on n0g1 (index 1); the policy restarts it on n1g0: pinned, it is moved to n1g1, the index of its
 * first start on the node the policy chose; unpinned it runs where the policy put it. */
static void test_pinned_restart_moves_to_its_index(void **st)
{
    (void)st;
    const char *jobs = "0 a 1 0 1000\n1 a 1 0 100\n";
    const int32_t first[8] = {1, 0};
    watch_t w;
    ds_sim_result_t r;
    run(jobs, 0, 0, first, 2, &w, &r);
    assert_int_equal(w.back_at, PREEMPT_AT);
    assert_int_equal(w.gpu, 2);
    assert_int_equal(r.starts_taken_back, 0);
    ds_sim_result_free(&r);
    run(jobs, 1, 0, first, 2, &w, &r);
    assert_int_equal(w.back_at, PREEMPT_AT);
    assert_int_equal(w.gpu, 3);
    assert_int_equal(r.preemptions, 1);
    assert_int_equal(r.starts_taken_back, 0);
    ds_sim_result_free(&r);
}

/* Index 1 busy on both nodes when A is requeued (job 3 takes A's old GPU n0g1, job 2 holds n1g1 until
 * t = 300): pinned, A is taken back and held until n1g1 is free, and restarts there; unpinned it takes
 * the free n1g0 at once. */
static void test_pinned_restart_waits_for_its_index(void **st)
{
    (void)st;
    const char *jobs = "0 a 1 0 1000\n1 a 1 0 1000\n2 a 1 0 300\n3 a 1 50 1000\n";
    const int32_t first[8] = {1, 0, 3, 1};
    watch_t w;
    ds_sim_result_t r;
    run(jobs, 0, 0, first, 2, &w, &r);
    assert_int_equal(w.back_at, PREEMPT_AT);
    assert_int_equal(w.gpu, 2);
    ds_sim_result_free(&r);
    for (int pinned = 1; pinned <= 2; pinned++) { /* 2: one-GPU jobs only, and A is one */
        run(jobs, pinned, 0, first, 2, &w, &r);
        assert_int_equal(w.back_at, 300);
        assert_int_equal(w.gpu, 3);
        assert_true(r.starts_taken_back >= 1);
        assert_int_equal(r.preemptions, 1);
        ds_sim_result_free(&r);
    }
}


/* Pinned = 3 (deepshared's repin = 2): the same scene, A restarting as guaranteed takes the free n1g0 at
 * once and keeps it (pinned anew there); restarting as best effort it waits for its index as under 1. */
static void test_pinned_only_as_best_effort(void **st)
{
    (void)st;
    const char *jobs = "0 a 1 0 1000\n1 a 1 0 1000\n2 a 1 0 300\n3 a 1 50 1000\n";
    const int32_t first[8] = {1, 0, 3, 1};
    watch_t w;
    ds_sim_result_t r;
    static const int cls[2] = {DS_CLASS_G, DS_CLASS_BE};
    for (int k = 0; k < 2; k++) {
        g_again_class = cls[k];
        run(jobs, 3, 0, first, 2, &w, &r);
        g_again_class = 0;
        assert_int_equal(w.back_at, k == 0 ? PREEMPT_AT : 300);
        assert_int_equal(w.gpu, k == 0 ? 2 : 3);
        assert_int_equal(r.preemptions, 1);
        if (k == 0) assert_int_equal(r.starts_taken_back, 0);
        else assert_true(r.starts_taken_back >= 1);
        ds_sim_result_free(&r);
    }
}

/* Pinned = 2 (deepshared since it sends a whole-GPU job's pins anew): a job of more than one GPU is not
 * pinned: DeepShare keeps its invariants and its jobs all run, and over the synthetic workload fewer starts
 * are taken back than with every job pinned (1). */
static void test_only_one_gpu_jobs_pinned(void **st)
{
    (void)st;
    ds_synth_config_t sc;
    ds_synth_config_default(&sc);
    sc.jobs = 400;
    sc.nodes = 4;
    sc.tenants = 4;
    sc.load = 1.1;
    sc.be_share = 0.2;
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    assert_int_equal(ds_synth_generate(&t, &sc, &err), 0);
    int64_t back[3] = {0, 0, 0};
    /* Without the quota yield: with it (the default since revision 9) this small, overloaded workload's
     * one-GPU runs yield to their tenants' heads and are reclaimed by them three times as often (21 -> 59
     * preemptions unpinned), and their pinned restarts are taken back 200 times against 36 with every job
     * pinned: what pinning one-GPU jobs only saves is the restarts of multi-GPU jobs. The attained-service yield
     * (on with these exact runtimes) does the same: 321 taken back against 59. */
    const ds_policy_ops_t *ops = ds_policy_find("deepshare");
    void *pc = tu_policy_config(ops, (const char *const[]){"quota-yield", "0", "attained-yield", "0", NULL});
    for (int pinned = 0; pinned <= 2; pinned++) {
        ds_sim_config_t c;
        ds_sim_config_default(&c);
        c.engine.mode = DS_MODE_POOLED;
        c.policy = ops;
        c.policy_config = pc;
        c.keep_series = 0;
        c.check_invariants = 1;
        c.restart_pinned = pinned;
        ds_sim_result_t r;
        tu_sim(&t, &c, &r);
        assert_int_equal(r.jobs, t.njobs);
        for (int32_t j = 0; j < t.njobs; j++) assert_true(r.end[j] >= r.start[j] && r.start[j] >= t.jobs[j].submit);
        back[pinned] = r.starts_taken_back;
        ds_sim_result_free(&r);
    }
    print_message("starts taken back: unpinned %lld, every job pinned %lld, one-GPU jobs pinned %lld\n",
                  (long long)back[0], (long long)back[1], (long long)back[2]);
    assert_int_equal(back[0], 0);
    assert_true(back[1] > back[2]); /* (the scripted tests above see a one-GPU job pinned under 2) */
    ops->config_free(pc);
    ds_trace_free(&t);
}

/* With a settle time A's restart in the pass of its requeue is taken back, and it starts again exactly
 * when the settle time is up (the simulator wakes for it: nothing else happens then). */
static void test_settle_delays_the_restart(void **st)
{
    (void)st;
    const char *jobs = "0 a 1 0 1000\n1 a 1 0 1000\n";
    const int32_t first[8] = {1, 0};
    watch_t w;
    ds_sim_result_t r;
    run(jobs, 0, 70, first, 2, &w, &r);
    assert_int_equal(w.back_at, PREEMPT_AT + 70);
    assert_false(w.seen_early);
    assert_int_equal(w.gpu, 2);
    assert_int_equal(r.starts_taken_back, 1);
    /* its queueing delay: the settle time, on top of nothing (it started at once at t = 0) */
    assert_int_equal(r.queued[0], 70);
    ds_sim_result_free(&r);
}

/* Every registered policy under both rules on a contended synthetic workload: its invariants hold after every
 * round (a start taken back reaches the policy as cancel_start, or enqueue), every job finishes, and the
 * preemptive policies do see starts taken back. */
static void test_every_policy_keeps_its_invariants(void **st)
{
    (void)st;
    ds_synth_config_t sc;
    ds_synth_config_default(&sc);
    sc.jobs = 400;
    sc.nodes = 4;
    sc.tenants = 4;
    sc.load = 1.1;
    sc.be_share = 0.2;
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    assert_int_equal(ds_synth_generate(&t, &sc, &err), 0);
    int64_t taken_back = 0;
    for (const ds_policy_ops_t *const *p = ds_policy_list(); *p; p++) {
        ds_sim_config_t c;
        ds_sim_config_default(&c);
        c.engine.mode = DS_MODE_POOLED;
        c.policy = *p;
        c.keep_series = 0;
        c.restart_pinned = 1;
        c.requeue_settle = 120;
        ds_sim_result_t r;
        tu_sim(&t, &c, &r);
        assert_int_equal(r.jobs, t.njobs);
        for (int32_t j = 0; j < t.njobs; j++) assert_true(r.end[j] >= r.start[j] && r.start[j] >= t.jobs[j].submit);
        if ((*p)->props & DS_POLICY_PREEMPTIVE) taken_back += r.starts_taken_back;
        ds_sim_result_free(&r);
    }
    assert_true(taken_back > 0);
    ds_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pinned_restart_moves_to_its_index),
        cmocka_unit_test(test_pinned_restart_waits_for_its_index),
        cmocka_unit_test(test_pinned_only_as_best_effort),
        cmocka_unit_test(test_settle_delays_the_restart),
        cmocka_unit_test(test_every_policy_keeps_its_invariants),
        cmocka_unit_test(test_only_one_gpu_jobs_pinned),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
