/* test_invariants.c: the invariant checks (docs/policy.md, "Invariants"): broken engine states are
 * reported, and every policy keeps them (and the execution model's accounting identities) on whole synthetic and Venus runs. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deepshare/policy.h"
#include "deepshare/synth.h"

/* An engine over one tenant of two 8-GPU nodes running FIFO, with jobs pending (not placed). */
static ds_engine_t *make_engine(ds_trace_t *t, const ds_engine_config_t *cfg)
{
    ds_engine_t *e;
    ds_error_t err;
    ds_error_clear(&err);
    ds_engine_config_t c;
    if (cfg) c = *cfg;
    else ds_engine_config_default(&c);
    assert_int_equal(ds_engine_create(&e, t, &c, ds_policy_find("fifo"), NULL, &err), 0);
    for (int32_t j = 0; j < t->njobs; j++) ds_engine_arrive(e, j, 0);
    return e;
}

static void expect_broken(const ds_engine_t *e, const char *needle)
{
    char msg[200] = "";
    int rc = ds_engine_check(e, msg, sizeof msg);
    if (rc == 0 || !strstr(msg, needle)) fprintf(stderr, "check said %d '%s', wanted '%s'\n", rc, msg, needle);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(msg, needle));
}

static void expect_ok(const ds_engine_t *e)
{
    char msg[200] = "";
    int rc = ds_engine_check(e, msg, sizeof msg);
    if (rc) fprintf(stderr, "unexpected: %s\n", msg);
    assert_int_equal(rc, 0);
}

static void test_consistent_state_passes(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:16", "1 A 3 0 10; 2 A 8 0 10; 3 A 1 0 10");
    ds_engine_t *e = make_engine(&t, NULL);
    expect_ok(e);
    for (int32_t j = 0; j < 3; j++) assert_true(ds_engine_place(e, j, 0));
    expect_ok(e);
    ds_engine_finish(e, 1, 10);
    ds_engine_preempt(e, 0, 10, 0);
    expect_ok(e);
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

static void test_gpu_over_k(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8", "1 A 1 0 10; 2 A 1 0 10; 3 A 1 0 10");
    for (int i = 0; i < 3; i++) t.jobs[i].gmem_mib = 1000;
    ds_engine_config_t c;
    ds_engine_config_default(&c);
    c.k = 2;
    ds_engine_t *e = make_engine(&t, &c);
    int32_t g0 = 0;
    ds_engine_start(e, 0, &g0, 0);
    ds_engine_start(e, 1, &g0, 0); /* two residents: allowed */
    expect_ok(e);
    ds_engine_start(e, 2, &g0, 0); /* a third: over k */
    expect_broken(e, "residents > k=2");
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

static void test_gpu_memory(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8", "1 A 1 0 10; 2 A 1 0 10; 3 A 1 0 10");
    t.jobs[0].gmem_mib = 30000; /* alone, a job over the profile limit is its own business */
    t.jobs[1].gmem_mib = 14000;
    t.jobs[2].gmem_mib = 12000;
    ds_engine_t *e = make_engine(&t, NULL);
    int32_t g0 = 0, g1 = 1;
    ds_engine_start(e, 0, &g0, 0);
    expect_ok(e);
    ds_engine_start(e, 1, &g1, 0);
    ds_engine_start(e, 2, &g1, 0); /* 26000 MiB shared on one 24576 MiB GPU */
    expect_broken(e, "GPU 1 memory 26000 MiB over 24576");
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

static void test_node_cpu_and_memory(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8", "1 A 1 0 10; 2 A 1 0 10");
    t.jobs[0].cpus = 60;
    t.jobs[1].cpus = 40;
    ds_engine_t *e = make_engine(&t, NULL);
    int32_t g0 = 0, g1 = 1;
    ds_engine_start(e, 0, &g0, 0);
    ds_engine_start(e, 1, &g1, 0); /* start does not check: 100 CPUs on a 96-CPU node */
    expect_broken(e, "node 0 uses 100 CPUs of 96");
    ds_engine_destroy(e);
    /* with CPU enforcement off (the reference's setting) the same state is accepted */
    ds_engine_config_t c;
    ds_engine_config_default(&c);
    c.enforce_cpu = 0;
    e = make_engine(&t, &c);
    ds_engine_start(e, 0, &g0, 0);
    ds_engine_start(e, 1, &g1, 0);
    expect_ok(e);
    ds_engine_destroy(e);
    /* host memory, when nodes declare it */
    t.jobs[0].cpus = t.jobs[1].cpus = 1;
    t.jobs[0].mem_mib = 3000;
    t.jobs[1].mem_mib = 2000;
    ds_engine_config_default(&c);
    c.mem_per_node = 4096;
    e = make_engine(&t, &c);
    ds_engine_start(e, 0, &g0, 0);
    expect_ok(e);
    ds_engine_start(e, 1, &g1, 0);
    expect_broken(e, "node 0 uses 5000 MiB of 4096");
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

static void test_bookkeeping_mismatch(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:16", "1 A 2 0 10; 2 A 1 0 10");
    ds_engine_t *e = make_engine(&t, NULL);
    assert_true(ds_engine_place(e, 0, 0));
    expect_ok(e);
    e->nodes[0].nfree++;
    expect_broken(e, "node 0 free count 7 != 6");
    e->nodes[0].nfree--;
    e->parts[0].gpus_free--;
    expect_broken(e, "partition A free count 13 != 14");
    e->parts[0].gpus_free++;
    expect_ok(e);
    /* a GPU that names a job which is no longer running */
    e->js[0].status = DS_JS_DONE;
    expect_broken(e, "holds a job that is not running");
    e->js[0].status = DS_JS_RUNNING;
    expect_ok(e);
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

/* ---- whole runs ---- */

/* Parameters that reproduce a reference simulator's accounting quirks (Lucid: a completion one second
 * after the work, the profiler wait counted as queueing; Tiresias: GPUs kept one second after the
 * work). Turned off wherever a policy has them: the invariants are those of the clean model. */
static const char *const quirks[][2] = {{"lucid-reference", "0"}, {"tiresias-finish-lag", "0"}};

/* After every pass, the policy explains a few jobs (ops->explain): a rotating one and the head of its
 * pending order. Each account is lines "  topic: text\n", a pending or running job gets at least one. */
typedef struct explain_probe {
    int64_t passes, explained;
    char bad[300];
} explain_probe_t;

static void explain_one(const ds_engine_t *e, int32_t j, int64_t now, explain_probe_t *x)
{
    int st = ds_engine_job(e, j)->status;
    if (st != DS_JS_PENDING && st != DS_JS_RUNNING) return;
    ds_buf_t b = {0};
    e->ops->explain(e, e->pstate, j, now, &b);
    char *text = ds_bdone(&b);
    x->explained++;
    int lines = 0;
    for (const char *l = text; *l && !x->bad[0];) {
        const char *nl = strchr(l, '\n'), *colon = strchr(l, ':');
        if (!nl || strncmp(l, "  ", 2) || l[2] == ' ' || !colon || colon > nl)
            snprintf(x->bad, sizeof x->bad, "%s: job %d at %lld: not a '  topic: text' line: %.200s", e->ops->name, j,
                     (long long)now, l);
        lines++;
        l = nl ? nl + 1 : l + strlen(l);
    }
    if (!lines && !x->bad[0]) snprintf(x->bad, sizeof x->bad, "%s: job %d at %lld: no explanation", e->ops->name, j, (long long)now);
    free(text);
}

static void explain_pass(void *ctx, const ds_engine_t *e, int64_t now)
{
    explain_probe_t *x = ctx;
    int32_t head;
    x->passes++;
    explain_one(e, (int32_t)((x->passes * 7919) % e->trace->njobs), now, x);
    if (ds_engine_pending_order(e, &head, 1) > 0) explain_one(e, head, now, x);
}

/* Runs one policy with invariants checked after every pass and a utilization window that covers the
 * whole run, then checks what must hold of any finished run, by the policy's declared properties. With
 * explain set, the policy explains jobs after every pass, and the schedule must be the one of the run
 * without (explaining is read-only). */
static void run_and_check_ex(const ds_trace_t *t, const ds_policy_ops_t *ops, ds_mode_t mode, const char *what,
                             int explain)
{
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.engine.mode = mode;
    c.policy = ops;
    c.check_invariants = 1;
    c.keep_series = 0;
    c.window_start = 0;
    c.window_end = INT64_MAX / 4;
    void *pc = ops->config_new ? ops->config_new() : NULL;
    c.policy_config = pc;
    for (size_t i = 0; pc && ops->config_set && i < sizeof quirks / sizeof quirks[0]; i++) {
        ds_error_t qerr;
        int rc = ops->config_set(pc, quirks[i][0], quirks[i][1], &qerr);
        assert_true(rc == DS_OK || rc == DS_ENOTFOUND);
    }
    ds_sim_result_t r;
    ds_error_t err;
    ds_error_clear(&err);
    int rc = ds_sim_run(t, &c, &r, &err);
    if (rc) fail_msg("%s on %s: %s", ops->name, what, err.msg);
    if (explain) {
        assert_non_null(ops->explain);
        explain_probe_t x = {0};
        c.after_pass = explain_pass;
        c.after_pass_ctx = &x;
        ds_sim_result_t r2;
        rc = ds_sim_run(t, &c, &r2, &err);
        if (rc) fail_msg("%s on %s with explain: %s", ops->name, what, err.msg);
        if (x.bad[0]) fail_msg("%s", x.bad);
        assert_true(x.explained > 0);
        for (int32_t j = 0; j < t->njobs; j++)
            if (r.start[j] != r2.start[j] || r.end[j] != r2.end[j])
                fail_msg("%s on %s: explaining changed job %d's schedule", ops->name, what, j);
        ds_sim_result_free(&r2);
    }
    if (pc && ops->config_free) ops->config_free(pc);
    assert_int_equal(r.jobs, t->njobs);
    double gpu_run = 0, gpu_work = 0;
    int64_t pre = 0;
    for (int32_t j = 0; j < t->njobs; j++) {
        const ds_job_t *job = &t->jobs[j];
        /* finished exactly once, in order: submit <= first start <= end */
        assert_true(r.start[j] >= job->submit);
        assert_true(r.end[j] >= r.start[j]);
        assert_true(r.queued[j] >= r.start[j] - job->submit);
        assert_true(r.queued[j] <= r.end[j] - job->submit);
        int64_t ran = r.end[j] - job->submit - r.queued[j]; /* wall seconds holding GPUs */
        int32_t oh = job->gpus <= c.engine.gpus_per_node ? c.engine.restart_small : c.engine.restart_large;
        int64_t work = job->duration + (int64_t)r.preempts[j] * oh;
        int exact = (ops->props & DS_POLICY_EXACT_HOLD) != 0;
        if (!r.colocated[j]) {
            /* Alone on its GPUs a job progresses at rate 1: under an exact-hold policy it holds them
             * exactly for its duration plus one restart overhead per preemption. Other policies may hold
             * GPUs longer on purpose (Lucid's profiler), never less. */
            if (exact ? ran != work : ran < work)
                fprintf(stderr, "%s on %s: job %lld ran %lld s, work %lld s\n", ops->name, what, (long long)job->id,
                        (long long)ran, (long long)work);
            if (exact) assert_int_equal(ran, work);
            else assert_true(ran >= work);
        }
        gpu_run += (double)job->gpus * (double)ran;
        gpu_work += (double)job->gpus * (double)work;
        pre += r.preempts[j];
    }
    assert_int_equal(pre, r.preemptions);
    /* GPU-seconds delivered (the busy integral, a shared GPU counted once) equal the GPU-seconds the
     * jobs held; with no sharing, both equal the work required plus overheads (restarts, finish lag). */
    double busy = r.gpu_alloc * (double)(r.window_end - r.window_start) * (double)r.total_gpus;
    if (r.colocated_jobs == 0 && (ops->props & DS_POLICY_EXACT_HOLD)) {
        assert_true(fabs(busy - gpu_work) <= 1e-9 * gpu_work + 1);
        assert_true(fabs(gpu_run - gpu_work) < 0.5);
    } else {
        /* shared GPUs count once, and a policy's own nodes (Lucid's profiler) may be left out */
        assert_true(busy <= gpu_run + 1);
    }
    if (!(ops->props & DS_POLICY_COLOCATES)) assert_int_equal(r.colocated_jobs, 0);
    if (!(ops->props & DS_POLICY_PREEMPTIVE)) assert_int_equal(r.preemptions, 0);
    ds_sim_result_free(&r);
}

static void run_and_check(const ds_trace_t *t, const ds_policy_ops_t *ops, ds_mode_t mode, const char *what)
{
    run_and_check_ex(t, ops, mode, what, 0);
}

/* The whole-trace tests run every registered policy (src/policy/registry.c): a policy added there is
 * checked here with no edit. The reference policies must be among them. */
static void assert_registry_has_baselines(void)
{
    static const char *const baselines[] = {"fifo", "sjf", "qssf", "tiresias", "lucid", "deepshare"};
    for (size_t i = 0; i < sizeof baselines / sizeof baselines[0]; i++)
        if (!ds_policy_find(baselines[i])) fail_msg("policy %s is not registered", baselines[i]);
}

static void test_all_policies_synthetic(void **st)
{
    (void)st;
    ds_synth_config_t sc;
    ds_synth_config_default(&sc);
    sc.jobs = 1500;
    sc.nodes = 12;
    sc.tenants = 4;
    sc.load = 0.8;
    sc.be_share = 0.2;
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    assert_int_equal(ds_synth_generate(&t, &sc, &err), 0);
    /* 12 runs: every policy in both modes */
    assert_registry_has_baselines();
    for (const ds_policy_ops_t *const *p = ds_policy_list(); *p; p++) {
        run_and_check_ex(&t, *p, DS_MODE_PARTITIONED, "synthetic/partitioned", 1);
        run_and_check_ex(&t, *p, DS_MODE_POOLED, "synthetic/pooled", 1);
    }
    ds_trace_free(&t);
}

static void test_all_policies_venus(void **st)
{
    (void)st;
    ds_trace_t t;
    if (!tu_venus(&t)) { skip(); return; }
    const char *est = tu_data("estimates/Venus_Sept_lgb.csv");
    ds_error_t err;
    if (est) assert_int_equal(ds_trace_read_estimates(&t, est, 1000, NULL, &err), 0);
    /* 6 runs, partitioned: every policy (5 without the estimates file: not qssf, which needs them) */
    assert_registry_has_baselines();
    for (const ds_policy_ops_t *const *p = ds_policy_list(); *p; p++) {
        const ds_policy_ops_t *ops = *p;
        if (!est && (ops->props & DS_POLICY_NEEDS_ESTIMATES)) {
            fprintf(stderr, "note: %s not checked on venus: no estimates in DS_DATA_DIR\n", ops->name);
            continue;
        }
        run_and_check(&t, ops, DS_MODE_PARTITIONED, "venus");
    }
    ds_trace_free(&t);
}

/* The production models in the setting that matters for them: pooled, one shared cluster, quotas enforced by
 * the model (docs/peers.md). */
static void test_production_models_venus_pooled(void **st)
{
    (void)st;
    ds_trace_t t;
    if (!tu_venus(&t)) { skip(); return; }
    int n = 0;
    for (const ds_policy_ops_t *const *p = ds_policy_list(); *p; p++)
        if ((*p)->props & DS_POLICY_PRODUCTION) run_and_check_ex(&t, *p, DS_MODE_POOLED, "venus/pooled", 1), n++;
    assert_true(n >= 5); /* kai, kueue, kueue-fs, slurm-quota, slurm-borrow */
    ds_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_consistent_state_passes),
        cmocka_unit_test(test_gpu_over_k),
        cmocka_unit_test(test_gpu_memory),
        cmocka_unit_test(test_node_cpu_and_memory),
        cmocka_unit_test(test_bookkeeping_mismatch),
        cmocka_unit_test(test_all_policies_synthetic),
        cmocka_unit_test(test_all_policies_venus),
        cmocka_unit_test(test_production_models_venus_pooled),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
