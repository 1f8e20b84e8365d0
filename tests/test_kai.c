/* test_kai.c: the KAI-Scheduler model on hand-computed cases: the fair-share division with its rounding and
 * leftovers, the reclaim strategies and saturation check, and small schedules whose reclaims, in-queue
 * preemptions and min-runtime protections are worked out by hand (docs/peers.md, "KAI"). */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "deepshare/policy.h"
#include "policy/kai/kai.h"

/* ---- fair-share division ---- */

static void divide(const kai_share_in_t *q, int32_t n, double total, const double *want)
{
    double fair[8];
    kai_share_divide(q, n, total, 1.0, fair);
    for (int32_t i = 0; i < n; i++) {
        if (fair[i] != want[i]) fprintf(stderr, "queue %d: fair share %g, wanted %g\n", i, fair[i], want[i]);
        assert_true(fair[i] == want[i]);
    }
}

/* 10 GPUs, three queues without quota wanting 10 each: shares of 3.33 are handed out as 3 each, and the one
 * GPU left goes to the queue created first (equal remainders of 0.33). */
static void test_share_rounding(void **st)
{
    (void)st;
    kai_share_in_t q[3] = {{0, 10, -1, 1, 0, 0}, {0, 10, -1, 1, 0, 1}, {0, 10, -1, 1, 0, 2}};
    divide(q, 3, 10, (double[]){4, 3, 3});
    /* the same with the first queue created last: the leftover goes to the older queue 1 */
    q[0].created = 5;
    divide(q, 3, 10, (double[]){3, 4, 3});
}

/* Deserved first (capped at the request), then the rest by weight: A (quota 4) wants 2 and gets 2; B (quota
 * 4) and C (none) split the 10 left as 5 + 5, B ending at 9 and C at 5. */
static void test_share_deserved_then_weight(void **st)
{
    (void)st;
    kai_share_in_t q[3] = {{4, 2, -1, 1, 0, 0}, {4, 10, -1, 1, 0, 1}, {0, 10, -1, 1, 0, 2}};
    divide(q, 3, 16, (double[]){2, 9, 5});
}

/* Weights 1, 2, 4 over 10 GPUs: shares 1.43, 2.86, 5.71 give 1, 2, 5; the two left go one each to the largest
 * remainders (0.86, then 0.71), not to the largest weight twice. */
static void test_share_leftover_one_unit_each(void **st)
{
    (void)st;
    kai_share_in_t q[3] = {{0, 20, -1, 1, 0, 0}, {0, 20, -1, 2, 0, 1}, {0, 20, -1, 4, 0, 2}};
    divide(q, 3, 10, (double[]){1, 3, 6});
    /* weight 0: nothing over quota, even with GPUs idle */
    kai_share_in_t z[2] = {{2, 20, -1, 0, 0, 0}, {0, 3, -1, 1, 0, 1}};
    divide(z, 2, 10, (double[]){2, 3});
}

/* Rounds repeat while a queue took less than its share: A wants 2 of a 6.67 share, B and C get 6 each (6.67
 * rounded down), and the second round splits the 6 left as 3 + 3. */
static void test_share_rounds_repeat(void **st)
{
    (void)st;
    kai_share_in_t q[3] = {{0, 2, -1, 1, 0, 0}, {0, 10, -1, 1, 0, 1}, {0, 10, -1, 1, 0, 2}};
    divide(q, 3, 20, (double[]){2, 9, 9});
    /* a limit caps the requestable share: A (limit 3) is satisfied at 3, B takes the rest */
    kai_share_in_t l[2] = {{0, 10, 3, 1, 0, 0}, {0, 10, -1, 1, 0, 1}};
    divide(l, 2, 10, (double[]){3, 7});
}

/* ---- reclaim legality ---- */

static void test_reclaim_strategies(void **st)
{
    (void)st;
    int why;
    /* reclaimer R (quota 8, nothing allocated) wants 8; V (quota 8, fair share 8) holds 12 */
    kai_qview_t r = {8, 8, -1, 0, 0}, v = {8, 8, -1, 12, 0};
    int32_t vof[2] = {0, 0};
    double one[1] = {4}, two[2] = {4, 4};
    assert_true(kai_can_reclaim(&r, 8, 1));
    /* first 4-GPU victim: V at 12 is above its allocatable share 8 (MaintainFairShare) */
    assert_true(kai_reclaim_legal(&r, 8, 0, &v, 1, vof, one, 1, 1.0, &why));
    /* the second one would be taken at 8, not above 8: neither strategy holds */
    assert_false(kai_reclaim_legal(&r, 8, 0, &v, 1, vof, two, 2, 1.0, &why));
    assert_int_equal(why, KAI_NO_STRATEGY);
    /* GuaranteeDeservedQuota: V (quota 4) holds its fair share 10, so MaintainFairShare fails, but R stays
     * within its quota (0 + 4 <= 8) and V is above its quota: legal */
    kai_qview_t v2 = {4, 10, -1, 10, 0};
    assert_true(kai_reclaim_legal(&r, 4, 0, &v2, 1, vof, one, 1, 1.0, &why));
    /* ... unless R would go over its quota with the job (6 + 4 > 8) */
    kai_qview_t r2 = {8, 12, -1, 6, 0};
    assert_false(kai_reclaim_legal(&r2, 4, 0, &v2, 1, vof, one, 1, 1.0, &why));
    /* a non-preemptible job must fit in the deserved quota: 6 + 4 > 8 */
    kai_qview_t r3 = {8, 12, -1, 6, 6};
    assert_false(kai_can_reclaim(&r3, 4, 1));
    assert_true(kai_can_reclaim(&r3, 4, 0));
    /* and over the fair share no job can reclaim */
    kai_qview_t r4 = {8, 8, -1, 6, 0};
    assert_false(kai_can_reclaim(&r4, 4, 0));
}

/* The saturation check: R would be at (4+2)/4 = 1.5 of its fair share; V, after losing 2 of its 12, at 10/6 =
 * 1.67. With multiplier 1, 1.5 < 1.67 keeps the order: legal; with 1.2, 1.8 >= 1.67: refused. */
static void test_reclaim_saturation(void **st)
{
    (void)st;
    int why;
    kai_qview_t r = {4, 4, -1, 4, 0}, v = {4, 6, -1, 12, 0};
    int32_t vof[1] = {0};
    double x[1] = {2};
    assert_true(kai_reclaim_legal(&r, 2, 0, &v, 1, vof, x, 1, 1.0, &why));
    assert_false(kai_reclaim_legal(&r, 2, 0, &v, 1, vof, x, 1, 1.2, &why));
    assert_int_equal(why, KAI_SATURATION);
    /* within its fair share (saturation <= 1) the check never refuses */
    kai_qview_t r2 = {4, 8, -1, 4, 0};
    assert_true(kai_reclaim_legal(&r2, 2, 0, &v, 1, vof, x, 1, 100.0, &why));
}

/* ---- schedules ---- */

static void run_kai(const ds_trace_t *t, const char *const *kv, ds_sim_result_t *r)
{
    tu_run_kv(t, "kai", DS_MODE_POOLED, kv, r);
}

/* Two 8-GPU nodes, A and B 8 each. B's two jobs take both nodes at 0 (the second over B's quota, so
 * preemptible). A's job at 10: fair shares 8 and 8; A may reclaim (0 + 8 <= 8), B is above its allocatable
 * share (16 > 8): B's preemptible job goes at 10 (10 s done, 40 s restart), A starts at 10. B's first job
 * ends at 1000, where its second restarts with 990 + 40 s left: end 2030. */
static void test_reclaim_schedule(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", "1 B 8 0 1000; 2 B 8 0 1000; 3 A 8 10 1000");
    ds_sim_result_t r;
    run_kai(&t, NULL, &r);
    assert_int_equal(r.start[2], 10);
    assert_int_equal(r.preempts[0], 0);
    assert_int_equal(r.preempts[1], 1);
    assert_int_equal(r.end[1], 2030);
    assert_int_equal(r.queued[1], 990);
    ds_sim_result_free(&r);
    /* with a reclaim min runtime of 100 s, B's job is protected until 100: A starts then */
    run_kai(&t, (const char *const[]){"kai-reclaim-min-runtime", "100", NULL}, &r);
    assert_int_equal(r.start[2], 100);
    assert_int_equal(r.preempts[1], 1);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* With every job non-preemptible (all-g), A's second 8-GPU job may not use B's idle node: non-preemptible
 * work consumes in-quota resources only. It waits for A's first job (end 100). Preemptible (all-be), it runs
 * on B's node at once. */
static void test_nonpreemptible_in_quota_only(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", "1 A 8 0 100; 2 A 8 0 100");
    ds_sim_result_t r;
    run_kai(&t, (const char *const[]){"kai-classes", "all-g", NULL}, &r);
    assert_int_equal(r.start[1], 100);
    ds_sim_result_free(&r);
    run_kai(&t, (const char *const[]){"kai-classes", "all-be", NULL}, &r);
    assert_int_equal(r.start[1], 0);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* In-queue preemption: A's job 2 is over A's quota at submit (preemptible) and runs on the second node; B takes
 * the first at 150 after A's job 1 ends at 100. A's job 3 at 200 is within quota (build, 100): over its fair
 * share A cannot reclaim, but it preempts its own lower-priority job 2. */
static void test_in_queue_preempt(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", "1 A 8 0 100; 2 A 8 0 1000; 4 B 8 150 1000; 3 A 8 200 500");
    ds_sim_result_t r;
    run_kai(&t, NULL, &r);
    assert_int_equal(r.start[1], 0);
    assert_int_equal(r.start[2], 150);
    assert_int_equal(r.start[3], 200);
    assert_int_equal(r.preempts[1], 1);
    assert_int_equal(r.preempts[2], 0);
    ds_sim_result_free(&r);
    /* with a preempt min runtime of 300 s, job 2 (started at 0) is protected until 300 */
    run_kai(&t, (const char *const[]){"kai-preempt-min-runtime", "5m", NULL}, &r);
    assert_int_equal(r.start[3], 300);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* Victim order: four 8-GPU nodes; B and C (all train) each run two 8-GPU jobs. A's job at 10: fair shares A 8,
 * B 12, C 12; B and C tie on every rule of the queue order but age, so the younger queue, C, gives first,
 * and within C the newest job (C2). */
static void test_reclaim_victim_order(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8 C:8 D:8", "1 B 8 0 1000; 2 B 8 1 1000; 3 C 8 2 1000; 4 C 8 3 1000; 5 A 8 10 100");
    ds_sim_result_t r;
    run_kai(&t, (const char *const[]){"kai-classes", "all-be", NULL}, &r);
    assert_int_equal(r.start[4], 10);
    assert_int_equal(r.preempts[3], 1);
    assert_int_equal(r.preempts[0] + r.preempts[1] + r.preempts[2], 0);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

static void test_config_errors(void **st)
{
    (void)st;
    const ds_policy_ops_t *ops = ds_policy_find("kai");
    void *pc = ops->config_new();
    ds_error_t err;
    assert_int_equal(ops->config_set(pc, "kai-classes", "some", &err), DS_EINVAL);
    assert_non_null(strstr(err.msg, "kai-classes"));
    assert_int_equal(ops->config_set(pc, "kai-saturation-multiplier", "0.5", &err), DS_EINVAL);
    assert_int_equal(ops->config_set(pc, "kai-limit-factor", "0.5", &err), DS_EINVAL);
    assert_int_equal(ops->config_set(pc, "kai-reclaim-min-runtime", "10x", &err), DS_EINVAL);
    assert_int_equal(ops->config_set(pc, "kai-reclaim-min-runtime", "2h", &err), DS_OK);
    assert_int_equal(ops->config_set(pc, "rho-min", "0.7", &err), DS_ENOTFOUND);
    ops->config_free(pc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_share_rounding),
        cmocka_unit_test(test_share_deserved_then_weight),
        cmocka_unit_test(test_share_leftover_one_unit_each),
        cmocka_unit_test(test_share_rounds_repeat),
        cmocka_unit_test(test_reclaim_strategies),
        cmocka_unit_test(test_reclaim_saturation),
        cmocka_unit_test(test_reclaim_schedule),
        cmocka_unit_test(test_nonpreemptible_in_quota_only),
        cmocka_unit_test(test_in_queue_preempt),
        cmocka_unit_test(test_reclaim_victim_order),
        cmocka_unit_test(test_config_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
