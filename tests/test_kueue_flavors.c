/* test_kueue_flavors.c: the Kueue models (kueue, kueue-fs) on clusters of several GPU types, one ResourceFlavor
 * per type, on hand-computed small schedules: the flavor order, flavorFungibility both ways (whenCanBorrow,
 * whenCanPreempt), borrowing and reclaim counted per flavor, a job that asks for a type, the configuration's
 * errors, and the policies' accounts of their workloads (docs/peers.md, "Kueue on several GPU types"). */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "deepshare/policy.h"

static void read_typed(ds_trace_t *t, const char *cluster, const char *tenants, const char *jobs)
{
    ds_trace_init(t);
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_trace_read_cluster(t, tu_write_temp("cl.csv", cluster), &err), 0);
    int rc = ds_trace_read_tenants(t, tu_write_temp("tn.csv", tenants), 8, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    rc = ds_trace_read_jobs(t, tu_write_temp("jb.csv", jobs), &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
}

static const char *const both[] = {"kueue", "kueue-fs", NULL};
enum { V100 = 0, K80 = 1 };

/* a: 8 V100 + 8 K80 of nominal quota, b: 8 K80; one V100 node and two K80 nodes of 8 GPUs (pooled). a submits
 * two 8-GPU jobs of any type.
 * - Flavor list v100,k80 (the cluster's order): job 1 fits V100; job 2 finds V100 full with no candidate (a's
 *   own job has its priority), so it tries K80 and fits there within a's nominal quota.
 * - Flavor list k80,v100: job 1 takes K80; job 2 fits K80 by borrowing b's unused quota, and whenCanBorrow
 *   MayStopSearch (Kueue's default) stops the search there: K80 again, borrowed, with the V100 node idle.
 * - The same with whenCanBorrow TryNextFlavor: K80 needs borrowing, so V100 is tried and fits without: V100. */
static void test_flavor_order_and_borrow(void **st)
{
    (void)st;
    ds_trace_t t;
    read_typed(&t, "gpu_type,gpus_per_node,cpus_per_node\nv100,8,64\nk80,8,64\n", "tenant,quota_v100,quota_k80\na,8,8\nb,0,8\n",
               "job_id,tenant,gpus,submit,duration\n1,a,8,0,1000\n2,a,8,1,1000\n");
    for (const char *const *p = both; *p; p++) {
        ds_sim_result_t r;
        tu_run_kv(&t, *p, DS_MODE_POOLED, NULL, &r);
        assert_int_equal(r.gtype[0], V100);
        assert_int_equal(r.gtype[1], K80);
        assert_int_equal(r.start[1], 1);
        ds_sim_result_free(&r);
        static const char *const k80_first[] = {"kueue-flavor-order", "k80,v100", NULL};
        tu_run_kv(&t, *p, DS_MODE_POOLED, k80_first, &r);
        assert_int_equal(r.gtype[0], K80);
        assert_int_equal(r.gtype[1], K80);
        assert_int_equal(r.start[1], 1);
        ds_sim_result_free(&r);
        static const char *const try_next[] = {"kueue-flavor-order", "K80,V100", "kueue-when-can-borrow", "TryNextFlavor", NULL};
        tu_run_kv(&t, *p, DS_MODE_POOLED, try_next, &r);
        assert_int_equal(r.gtype[0], K80);
        assert_int_equal(r.gtype[1], V100);
        assert_int_equal(r.start[1], 1);
        ds_sim_result_free(&r);
    }
    ds_trace_free(&t);
}

/* a: 8 V100, b: 8 K80; one node of each. b's job asking for V100 borrows a's idle V100 quota. At t=10 a's job
 * of any type arrives: on V100 it is within a's nominal quota and could reclaim b's job (Reclaim); on K80 it
 * fits at once by borrowing b's unused quota (Fit).
 * - whenCanPreempt TryNextFlavor (Kueue's default): V100 needs preemption, so K80 is tried; Fit there (borrowing,
 *   and whenCanBorrow MayStopSearch stops): a runs on K80 at 10 and nobody is evicted.
 * - whenCanPreempt MayStopSearch (v1beta1: Preempt): the search stops at V100; b's job is evicted (its GPUs free
 *   at once), a's starts there at 10, and b's job, which may only use V100, waits for it to end.
 * - preference PreemptionOverBorrowing with both TryNextFlavor: Reclaim within nominal beats Fit by borrowing. */
static void test_when_can_preempt(void **st)
{
    (void)st;
    ds_trace_t t;
    read_typed(&t, "gpu_type,gpus_per_node,cpus_per_node\nv100,8,64\nk80,8,64\n", "tenant,quota_v100,quota_k80\na,8,0\nb,0,8\n",
               "job_id,tenant,gpus,submit,duration,gpu_type\n1,b,8,0,1000,v100\n2,a,8,10,100,\n");
    for (const char *const *p = both; *p; p++) {
        ds_sim_result_t r;
        tu_run_kv(&t, *p, DS_MODE_POOLED, NULL, &r);
        assert_int_equal(r.gtype[0], V100);
        assert_int_equal(r.gtype[1], K80);
        assert_int_equal(r.start[1], 10);
        assert_int_equal(r.preempts[0], 0);
        ds_sim_result_free(&r);
        static const char *const stop[] = {"kueue-when-can-preempt", "MayStopSearch", NULL};
        static const char *const stop1[] = {"kueue-when-can-preempt", "Preempt", NULL};
        static const char *const pref[] = {"kueue-when-can-borrow", "TryNextFlavor", "kueue-flavor-preference",
                                           "PreemptionOverBorrowing", NULL};
        const char *const *const kv[] = {stop, stop1, pref};
        for (int k = 0; k < 3; k++) {
            tu_run_kv(&t, *p, DS_MODE_POOLED, kv[k], &r);
            assert_int_equal(r.gtype[1], V100);
            assert_int_equal(r.preempts[0], 1);
            assert_int_equal(r.start[1], 10);
            assert_int_equal(r.gtype[0], V100);
            assert_true(r.end[0] > r.end[1]); /* b's V100-only job ran again after a's */
            ds_sim_result_free(&r);
        }
    }
    ds_trace_free(&t);
}

/* Borrowing and reclaim per flavor. a and b: 8 V100 + 8 K80 each; two nodes of each type. b runs a 16-GPU V100
 * job (8 borrowed from a) and an 8-GPU K80 job (its own); a an 8-GPU K80 job: every GPU busy.
 * - a's second K80 job (asks for K80) would borrow K80 quota, and b is within its K80 quota: b's borrowing on
 *   V100 does not expose its K80 job (candidates come from CQs borrowing on the flavor that needs preemption),
 *   so it waits for K80s to free at 1000 and never takes a V100.
 * - a's job of any type, within a's V100 quota, reclaims the V100s b borrows: b's 16-GPU job is evicted and
 *   a's starts on V100 at 20 (its K80 quota would need borrowing and has no candidate). */
static void test_reclaim_per_flavor(void **st)
{
    (void)st;
    ds_trace_t t;
    read_typed(&t, "gpu_type,gpus_per_node,cpus_per_node\nv100,8,64\nk80,8,64\n", "tenant,quota_v100,quota_k80\na,8,8\nb,8,8\n",
               "job_id,tenant,gpus,submit,duration,gpu_type\n1,b,16,0,1000,v100\n2,b,8,0,1000,k80\n3,a,8,0,1000,k80\n"
               "4,a,8,10,100,k80\n5,a,8,20,100,\n");
    for (const char *const *p = both; *p; p++) {
        ds_sim_result_t r;
        tu_run_kv(&t, *p, DS_MODE_POOLED, NULL, &r);
        assert_int_equal(r.gtype[0], V100);
        assert_int_equal(r.gtype[1], K80);
        assert_int_equal(r.gtype[2], K80);
        assert_int_equal(r.gtype[3], K80);
        assert_true(r.start[3] >= 1000);            /* a's K80 job waited for K80s */
        assert_int_equal(r.preempts[1], 0);         /* b's K80 job, within b's K80 quota, stayed */
        assert_int_equal(r.preempts[2], 0);
        assert_int_equal(r.gtype[4], V100);         /* a reclaimed its V100 quota */
        assert_int_equal(r.start[4], 20);
        assert_int_equal(r.preempts[0], 1);
        ds_sim_result_free(&r);
    }
    ds_trace_free(&t);
}

/* A job asking for a type takes only that flavor: b holds both K80 nodes (8 its own, 8 borrowed from a) and
 * the V100 node is idle. a's K80 job is within a's K80 quota: it reclaims b's borrowed K80s (the more recently
 * admitted of b's jobs, its low-priority one) at 10 rather than take the free V100s; a's job of any type then
 * takes V100 at once. */
static void test_typed_request(void **st)
{
    (void)st;
    ds_trace_t t;
    read_typed(&t, "gpu_type,gpus_per_node,cpus_per_node\nv100,8,64\nk80,8,64\n", "tenant,quota_v100,quota_k80\na,8,8\nb,0,8\n",
               "job_id,tenant,gpus,submit,duration,gpu_type\n1,b,8,0,1000,k80\n2,b,8,1,1000,k80\n3,a,8,10,100,k80\n"
               "4,a,8,20,100,\n");
    for (const char *const *p = both; *p; p++) {
        ds_sim_result_t r;
        tu_run_kv(&t, *p, DS_MODE_POOLED, NULL, &r);
        assert_int_equal(r.gtype[2], K80);
        assert_int_equal(r.start[2], 10);
        assert_int_equal(r.preempts[1], 1);         /* b's borrowing job, the later one */
        assert_int_equal(r.preempts[0], 0);
        assert_int_equal(r.gtype[3], V100);
        assert_int_equal(r.start[3], 20);
        ds_sim_result_free(&r);
    }
    ds_trace_free(&t);
}

static void expect_error(const ds_trace_t *t, const char *policy, const char *const *kv, const char *why)
{
    const ds_policy_ops_t *ops = ds_policy_find(policy);
    void *pc = ops->config_new();
    ds_error_t err;
    for (int i = 0; kv[i]; i += 2) assert_int_equal(ops->config_set(pc, kv[i], kv[i + 1], &err), DS_OK);
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.engine.mode = DS_MODE_POOLED;
    c.policy = ops;
    c.policy_config = pc;
    ds_sim_result_t r;
    ds_error_clear(&err);
    int rc = ds_sim_run(t, &c, &r, &err);
    if (rc == 0) ds_sim_result_free(&r);
    if (rc == 0 || !strstr(err.msg, why)) fprintf(stderr, "%s: rc %d, '%s', wanted '%s'\n", policy, rc, err.msg, why);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err.msg, why));
    ops->config_free(pc);
}

/* The flavor list must name every type of the cluster once; a preference needs both TryNextFlavor (the API's
 * validation rule); a bad value is refused at once with the values it may take. */
static void test_config_errors(void **st)
{
    (void)st;
    ds_trace_t t;
    read_typed(&t, "gpu_type,gpus_per_node,cpus_per_node\nv100,8,64\nk80,8,64\n", "tenant,quota_v100,quota_k80\na,8,8\n",
               "job_id,tenant,gpus,submit,duration\n1,a,8,0,100\n");
    expect_error(&t, "kueue", (const char *const[]){"kueue-flavor-order", "v100,a100", NULL}, "'a100' is not a GPU type");
    expect_error(&t, "kueue", (const char *const[]){"kueue-flavor-order", "v100,v100", NULL}, "'v100' is listed twice");
    expect_error(&t, "kueue-fs", (const char *const[]){"kueue-flavor-order", "k80", NULL}, "lists 1 of the cluster's 2");
    expect_error(&t, "kueue", (const char *const[]){"kueue-flavor-preference", "PreemptionOverBorrowing", NULL},
                 "both whenCanBorrow and whenCanPreempt are TryNextFlavor");
    const ds_policy_ops_t *ops = ds_policy_find("kueue");
    void *pc = ops->config_new();
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_not_equal(ops->config_set(pc, "kueue-when-can-borrow", "Preempt", &err), DS_OK);
    assert_non_null(strstr(err.msg, "MayStopSearch, TryNextFlavor, Borrow"));
    ops->config_free(pc);
    ds_trace_free(&t);
    /* one flavor on an untyped cluster: a flavor list has nothing to name */
    ds_trace_t u;
    tu_trace(&u, "A:8", "1 A 8 0 100");
    expect_error(&u, "kueue", (const char *const[]){"kueue-flavor-order", "v100", NULL}, "no GPU types");
    ds_trace_free(&u);
}

/* Every pass, the model explains a pending and a running workload: the flavor lines name the flavor assigned
 * or the ones the node selector allows, in Kueue's terms. */
typedef struct probe {
    int flavor_lines, assigned;
} probe_t;

static void explain_pass(void *ctx, const ds_engine_t *e, int64_t now)
{
    probe_t *x = ctx;
    for (int32_t j = 0; j < e->trace->njobs; j++) {
        int st = ds_engine_job(e, j)->status;
        if (st != DS_JS_PENDING && st != DS_JS_RUNNING) continue;
        ds_buf_t b = {0};
        e->ops->explain(e, e->pstate, j, now, &b);
        char *text = ds_bdone(&b);
        for (const char *l = text; (l = strstr(l, "  flavor ")); l++) x->flavor_lines++;
        if (strstr(text, ", assigned)")) x->assigned++;
        if (st == DS_JS_PENDING && e->trace->jobs[j].gmask == 2) assert_null(strstr(text, "flavor v100"));
        free(text);
    }
}

static void test_explain(void **st)
{
    (void)st;
    ds_trace_t t;
    read_typed(&t, "gpu_type,gpus_per_node,cpus_per_node\nv100,8,64\nk80,8,64\n", "tenant,quota_v100,quota_k80\na,8,0\nb,0,8\n",
               "job_id,tenant,gpus,submit,duration,gpu_type\n1,b,8,0,1000,v100\n2,a,8,10,100,\n3,b,8,11,100,k80\n");
    for (const char *const *p = both; *p; p++) {
        probe_t x = {0, 0};
        ds_sim_config_t c;
        ds_sim_config_default(&c);
        c.engine.mode = DS_MODE_POOLED;
        c.policy = ds_policy_find(*p);
        c.after_pass = explain_pass;
        c.after_pass_ctx = &x;
        ds_sim_result_t r;
        tu_sim(&t, &c, &r);
        assert_true(x.flavor_lines > 0);
        assert_true(x.assigned > 0);
        ds_sim_result_free(&r);
    }
    ds_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flavor_order_and_borrow),
        cmocka_unit_test(test_when_can_preempt),
        cmocka_unit_test(test_reclaim_per_flavor),
        cmocka_unit_test(test_typed_request),
        cmocka_unit_test(test_config_errors),
        cmocka_unit_test(test_explain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
