/* test_kueue.c: the Kueue models on hand-computed cases: Classic preemption's candidate order, validity and
 * fill-back, Fair Sharing's DRS and its two strategies, and small schedules where quota admission and node
 * placement part ways (docs/peers.md, "Kueue"). */
#include "testutil.h"

#include <math.h>
#include <string.h>

#include "deepshare/policy.h"
#include "policy/kueue/kueue.h"

/* ---- a hand-made cohort ---- */

typedef struct wl {
    int32_t cq, gpus, cls;
    int64_t adm;
} wl_t;

typedef struct ctx {
    const wl_t *w;
    int32_t n;
} ctx_t;

/* most recently admitted first */
static int32_t t_next(void *c, int32_t cq, int cls, int32_t *it)
{
    const ctx_t *x = c;
    int64_t below = *it < 0 ? INT64_MAX : x->w[*it].adm;
    int32_t best = -1;
    for (int32_t i = 0; i < x->n; i++)
        if (x->w[i].cq == cq && x->w[i].cls == cls && x->w[i].adm < below && (best < 0 || x->w[i].adm > x->w[best].adm))
            best = i;
    if (best >= 0) *it = best;
    return best;
}
static int32_t t_gpus(void *c, int32_t i) { return ((const ctx_t *)c)->w[i].gpus; }
static int32_t t_cq(void *c, int32_t i) { return ((const ctx_t *)c)->w[i].cq; }
static int t_cls(void *c, int32_t i) { return ((const ctx_t *)c)->w[i].cls; }
static int64_t t_adm(void *c, int32_t i) { return ((const ctx_t *)c)->w[i].adm; }
static int32_t t_min(void *c, int32_t cq, int cls)
{
    const ctx_t *x = c;
    int32_t m = 0;
    for (int32_t i = 0; i < x->n; i++)
        if (x->w[i].cq == cq && x->w[i].cls == cls && (m == 0 || x->w[i].gpus < m)) m = x->w[i].gpus;
    return m;
}
static int64_t t_use(void *c, int32_t cq, int cls)
{
    const ctx_t *x = c;
    int64_t u = 0;
    for (int32_t i = 0; i < x->n; i++)
        if (x->w[i].cq == cq && x->w[i].cls == cls) u += x->w[i].gpus;
    return u;
}
static int32_t t_max(void *c, int32_t cq, int cls)
{
    const ctx_t *x = c;
    int32_t m = 0;
    for (int32_t i = 0; i < x->n; i++)
        if (x->w[i].cq == cq && x->w[i].cls == cls && x->w[i].gpus > m) m = x->w[i].gpus;
    return m;
}

typedef struct cohort {
    ctx_t ctx;
    int64_t nominal[4], usage[4];
    int32_t cur[4], first[4], phase[4], retry[4];
    int64_t cur_adm[4];
    kq_snap_t s;
} cohort_t;

static void cohort(cohort_t *c, const int64_t *nominal, int32_t ncq, const wl_t *w, int32_t n)
{
    memset(c, 0, sizeof *c);
    c->ctx = (ctx_t){w, n};
    for (int32_t i = 0; i < ncq; i++) c->nominal[i] = nominal[i];
    for (int32_t i = 0; i < n; i++) c->usage[w[i].cq] += w[i].gpus;
    c->s = (kq_snap_t){ncq, c->nominal, c->usage, t_next, t_gpus, t_cq, t_cls, t_min, t_max, t_use, t_adm, &c->ctx, 1, 2, 0, 0,
                       c->cur, c->first, c->phase, c->retry, c->cur_adm, NULL, 0};
    for (int32_t i = 0; i < ncq; i++) c->s.tot_nominal += nominal[i], c->s.tot_usage += c->usage[i];
}

static void expect_targets(const int32_t *got, int32_t n, const int32_t *want, int32_t nw)
{
    if (n != nw) fprintf(stderr, "got %d targets, wanted %d\n", n, nw);
    assert_int_equal(n, nw);
    for (int32_t i = 0; i < nw; i++) {
        int found = 0;
        for (int32_t k = 0; k < n; k++) found |= got[k] == want[i];
        if (!found) fprintf(stderr, "target %d missing\n", want[i]);
        assert_true(found);
    }
}

/* CQs A, B, C, 8 GPUs of nominal quota each; B and C borrow 2 each; 2 GPUs unused. */
static const int64_t nom888[3] = {8, 8, 8};
static const wl_t w1[] = {
    {1, 4, 1, 1}, /* 0: B, BE, admitted first */
    {2, 8, 1, 2}, /* 1: C, BE */
    {1, 4, 0, 3}, /* 2: B, G */
    {2, 2, 1, 4}, /* 3: C, BE */
    {1, 2, 1, 5}, /* 4: B, BE, the most recent in B */
    {0, 2, 1, 6}, /* 5: A, BE */
};

/* A G-class workload of 6 GPUs in A (2 used): within A's nominal quota with it, so B's and C's workloads are
 * hierarchy candidates. Lower priority first, then the most recently admitted across CQs: 4 (B, adm 5), then
 * 3 (C, adm 4), and 2 + 2 + 2 unused fit the 6. */
static void test_classic_order(void **st)
{
    (void)st;
    cohort_t c;
    cohort(&c, nom888, 3, w1, 6);
    int32_t out[8];
    int32_t n = kq_classic_targets(&c.s, 0, 6, 0, out);
    expect_targets(out, n, (int32_t[]){4, 3}, 2);
    assert_int_equal(c.usage[1], 10); /* the search restores the snapshot */
    assert_int_equal(c.usage[2], 10);
}

/* 8 GPUs would take A over its nominal quota: the other CQs' workloads can then only be taken if A ends up
 * not borrowing (borrowWithinCohort unset), so the run without borrowing comes first. B and C are taken down to
 * their nominal quota (4, 3), after which their other workloads are no candidates any more (valid only while
 * their CQ borrows), and A's own lower-priority workload 5 completes the room. Fill-back keeps all three. */
static void test_classic_validity_and_own_queue(void **st)
{
    (void)st;
    cohort_t c;
    cohort(&c, nom888, 3, w1, 6);
    int32_t out[8];
    int32_t n = kq_classic_targets(&c.s, 0, 8, 0, out);
    expect_targets(out, n, (int32_t[]){4, 3, 5}, 3);
    /* a BE preemptor has no lower-priority workload in its own CQ: no way to 8 without borrowing */
    n = kq_classic_targets(&c.s, 0, 8, 1, out);
    assert_int_equal(n, 0);
}

/* Fill-back: A (nominal 8, 2 used) wants 4; B (nominal 4) holds 1 + 1 + 8 (newest first: 0, 1, 2); nothing
 * unused. Greedy takes 0, 1, then 2 (B still borrowing before each); the workload fits with 2 alone, so
 * fill-back puts 1 back, then 0. */
static void test_classic_fill_back(void **st)
{
    (void)st;
    static const int64_t nom[2] = {8, 4};
    static const wl_t w[] = {{1, 1, 1, 9}, {1, 1, 1, 8}, {1, 8, 1, 1}, {0, 2, 1, 2}};
    cohort_t c;
    cohort(&c, nom, 2, w, 4);
    int32_t out[8];
    int32_t n = kq_classic_targets(&c.s, 0, 4, 0, out);
    expect_targets(out, n, (int32_t[]){2}, 1);
    /* reclaimWithinCohort Never: nothing of B may go */
    c.s.reclaim_cohort = 0;
    assert_int_equal(kq_classic_targets(&c.s, 0, 4, 0, out), 0);
}

/* DRS: GPUs above nominal x 1000 / the cohort's lendable GPUs (24). */
static void test_drs(void **st)
{
    (void)st;
    static const wl_t w[] = {{1, 12, 1, 1}, {0, 4, 1, 2}};
    cohort_t c;
    cohort(&c, nom888, 3, w, 2);
    assert_true(fabs(kq_drs(&c.s, 1) - 4000.0 / 24) < 1e-9);
    assert_true(kq_drs(&c.s, 0) == 0);
    assert_true(kq_drs(&c.s, 2) == 0);
}

static const int both[2] = {KQ_FS_LTE_FINAL, KQ_FS_LT_INITIAL};
static const int lte_only[2] = {KQ_FS_LTE_FINAL, 0};

/* A (8 of 8 used) wants 4 more; B borrows 8 (16 of 8, four workloads of 4). A would borrow 4: share 166.7
 * after; B's share after losing its newest workload is 166.7 too: LessThanOrEqualToFinalShare holds. With B
 * borrowing only 4 (share 166.7 before, 0 after), neither strategy holds: equal shares preempt nothing. */
static void test_fs_strategies(void **st)
{
    (void)st;
    static const wl_t w[] = {{1, 4, 1, 1}, {1, 4, 1, 2}, {1, 4, 1, 3}, {1, 4, 1, 4}, {0, 8, 1, 5}};
    cohort_t c;
    cohort(&c, nom888, 3, w, 5);
    int32_t out[8];
    int32_t n = kq_fs_targets(&c.s, 0, 4, 1, both, 1, out);
    expect_targets(out, n, (int32_t[]){3}, 1);
    static const wl_t w2[] = {{1, 4, 1, 1}, {1, 4, 1, 2}, {1, 4, 1, 3}, {0, 8, 1, 5}, {2, 4, 1, 6}};
    cohort(&c, nom888, 3, w2, 5);
    assert_int_equal(kq_fs_targets(&c.s, 0, 4, 1, both, 1, out), 0);
}

/* Rule S2-b: A (4 of 8) wants 8: share after 166.7. B (14 of 8, share 250) holds 8 (newest) and 6; after
 * losing either it stops borrowing (share 0 < 166.7): S2-a fails for both. S2-b, preemptor's share after below
 * the target's share before (166.7 < 250), takes B's first candidate, 8 GPUs, which is enough. With
 * LessThanOrEqualToFinalShare alone, nothing. */
static void test_fs_second_strategy(void **st)
{
    (void)st;
    static const wl_t w[] = {{1, 6, 1, 1}, {1, 8, 1, 2}, {0, 4, 1, 3}, {2, 6, 1, 4}};
    cohort_t c;
    cohort(&c, nom888, 3, w, 4);
    int32_t out[8];
    int32_t n = kq_fs_targets(&c.s, 0, 8, 1, both, 1, out);
    expect_targets(out, n, (int32_t[]){1}, 1);
    assert_int_equal(kq_fs_targets(&c.s, 0, 8, 1, lte_only, 1, out), 0);
}

/* Fair sharing over two flavors: the snapshot is the K80 flavor's, and the DRS adds what a CQ borrows on the
 * other flavor (fair_sharing.go sums borrowing per resource name). A (8 of 8 K80) wants 4 more: its share after
 * counts 4 borrowed. B borrows 2 K80 (10 of 8, five workloads of 2) and 6 V100: 8 in all. C holds 6 of 8; the
 * cohort's 24 K80 are in use. LessThanOrEqualToFinalShare: B's newest 2-GPU workload leaves B at 6 >= 4; B,
 * now within its K80 quota, still borrows V100 and stays a target (IsBorrowing over all flavors), and its
 * next workload leaves it at 6 again: 4 GPUs freed, A fits. With one flavor (B borrowing 2 in all) neither
 * strategy lets A take anything. */
static void test_fs_two_flavors(void **st)
{
    (void)st;
    static const wl_t w[] = {{1, 2, 1, 1}, {1, 2, 1, 2}, {1, 2, 1, 3}, {1, 2, 1, 4}, {1, 2, 1, 5}, {0, 8, 1, 6}, {2, 6, 1, 7}};
    cohort_t c;
    cohort(&c, nom888, 3, w, 7);
    int32_t out[8];
    assert_int_equal(kq_fs_targets(&c.s, 0, 4, 1, both, 1, out), 0);
    static const int64_t xb[3] = {0, 6, 0};
    c.s.xborrow = xb;
    c.s.lendable = 48;
    assert_true(fabs(kq_drs(&c.s, 1) - 8000.0 / 48) < 1e-9);
    int32_t n = kq_fs_targets(&c.s, 0, 4, 1, both, 1, out);
    expect_targets(out, n, (int32_t[]){4, 3}, 2);
    assert_int_equal(c.usage[1], 10); /* restored */
}

/* A preemptor that stays within its nominal quota preempts without any strategy (FairSharingPreemptWithinNominal):
 * A (0 of 8) wants 8; B holds two workloads of 8 (borrowing 8), C 8 of 8. */
static void test_fs_within_nominal(void **st)
{
    (void)st;
    static const wl_t w[] = {{1, 8, 1, 1}, {1, 8, 1, 2}, {2, 8, 1, 3}};
    cohort_t c;
    cohort(&c, nom888, 3, w, 3);
    int32_t out[8];
    /* B's newest workload goes; A ends within nominal, so no share is compared */
    int32_t n = kq_fs_targets(&c.s, 0, 8, 1, both, 1, out);
    expect_targets(out, n, (int32_t[]){1}, 1);
    /* A wanting 16 (over its nominal): share after 8000/24 = 333; B's after 0: no strategy holds, nor S2-b
     * (333 < 333 is false) */
    assert_int_equal(kq_fs_targets(&c.s, 0, 16, 1, both, 1, out), 0);
}

/* ---- schedules ---- */

static void run(const ds_trace_t *t, const char *policy, const char *const *kv, ds_sim_result_t *r)
{
    tu_run_kv(t, policy, DS_MODE_POOLED, kv, r);
}

static double stat_of(const ds_sim_result_t *r, const char *name)
{
    for (int32_t i = 0; i < r->npstats; i++)
        if (!strcmp(r->pstats[i].name, name)) return r->pstats[i].value;
    fail_msg("no stat %s", name);
    return 0;
}

/* Admission is by quota, placement after it. Two 8-GPU nodes, A and B 8 each. Four 3-GPU jobs leave 2 GPUs
 * free on each node; A's 4-GPU job at 10 fits the cohort's unused quota (16 - 12) and is admitted, but no node
 * has 4 free GPUs: it waits, holding its quota, until job 1 ends at 100 (node 0: 5 free). */
static void test_admitted_waits_for_nodes(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", "1 B 3 0 100; 2 A 3 0 1000; 3 B 3 0 1000; 4 A 3 0 1000; 5 A 4 10 100");
    ds_sim_result_t r;
    run(&t, "kueue", NULL, &r);
    assert_int_equal(r.start[4], 100);
    assert_true(stat_of(&r, "admitted_not_placed_gpu_s") >= 4 * 90);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
    /* B's 2-GPU job at 20 finds 2 free GPUs on a node but no unused quota: within its nominal quota (6 + 2 <= 8)
     * it reclaims from A, which borrows (10 > 8); A's most recently admitted workload, the one not placed,
     * is evicted, B's job starts at once, and A's waits on. */
    tu_trace(&t, "A:8 B:8", "1 B 3 0 100; 2 A 3 0 1000; 3 B 3 0 1000; 4 A 3 0 1000; 5 A 4 10 100; 6 B 2 20 50");
    run(&t, "kueue", NULL, &r);
    assert_int_equal(r.start[5], 20);
    assert_int_equal(stat_of(&r, "evictions_not_placed"), 1);
    assert_int_equal(r.preempts[1] + r.preempts[3], 0);
    assert_true(r.start[4] >= 70);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* Reclaim of running work: B's two 8-GPU jobs take both nodes at 0 (the second borrows); A's job at 10 is within
 * A's nominal quota, so B's most recently admitted workload is evicted (10 s done, +40 s restart) and A runs.
 * B's evicted job is inadmissible until B's first job ends at 1000; the requeuer returns it a batch period
 * (1 s) later: it restarts at 1001 and ends at 2031. */
static void test_reclaim_running(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", "1 B 8 0 1000; 2 B 8 0 1000; 3 A 8 10 1000");
    ds_sim_result_t r;
    const char *const policies[] = {"kueue", "kueue-fs"};
    for (int k = 0; k < 2; k++) {
        run(&t, policies[k], NULL, &r);
        assert_int_equal(r.start[2], 10);
        assert_int_equal(r.preempts[1], 1);
        assert_int_equal(r.preempts[0], 0);
        assert_int_equal(r.end[1], 2031);
        ds_sim_result_free(&r);
    }
    /* with reclaimWithinCohort Never, A waits for B's first job and the requeue at 1001, where it goes first
     * (within nominal quota, before B's borrowing workload) */
    run(&t, "kueue", (const char *const[]){"kueue-reclaim-within-cohort", "Never", NULL}, &r);
    assert_int_equal(r.start[2], 1001);
    assert_int_equal(r.preemptions, 0);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* BestEffortFIFO: A's head (8 GPUs) cannot be admitted while B holds a node and nothing can be preempted
 * for it (it would borrow); the job behind it (2 GPUs) is admitted at once instead of waiting behind the head.
 * The head is requeued a second after B's job ends. */
static void test_best_effort_fifo(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", "1 B 8 0 1000; 2 A 4 0 1000; 3 A 8 5 100; 4 A 2 6 100");
    ds_sim_result_t r;
    run(&t, "kueue", (const char *const[]){"kueue-classes", "all-be", NULL}, &r);
    assert_int_equal(r.start[3], 6);
    assert_int_equal(r.start[2], 1001);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

static void test_config_errors(void **st)
{
    (void)st;
    const ds_policy_ops_t *ops = ds_policy_find("kueue-fs");
    void *pc = ops->config_new();
    ds_error_t err;
    assert_int_equal(ops->config_set(pc, "kueue-fs-strategies", "Fastest", &err), DS_EINVAL);
    assert_non_null(strstr(err.msg, "LessThanInitialShare"));
    assert_int_equal(ops->config_set(pc, "kueue-reclaim-within-cohort", "Sometimes", &err), DS_EINVAL);
    assert_int_equal(ops->config_set(pc, "kueue-fs-strategies", "LessThanInitialShare", &err), DS_OK);
    assert_int_equal(ops->config_set(pc, "kueue-eviction-latency", "5", &err), DS_OK);
    ops->config_free(pc);
    /* the Classic model does not take fair sharing's options */
    ops = ds_policy_find("kueue");
    pc = ops->config_new();
    assert_int_equal(ops->config_set(pc, "kueue-fs-strategies", "LessThanInitialShare", &err), DS_ENOTFOUND);
    ops->config_free(pc);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classic_order),
        cmocka_unit_test(test_classic_validity_and_own_queue),
        cmocka_unit_test(test_classic_fill_back),
        cmocka_unit_test(test_drs),
        cmocka_unit_test(test_fs_strategies),
        cmocka_unit_test(test_fs_second_strategy),
        cmocka_unit_test(test_fs_two_flavors),
        cmocka_unit_test(test_fs_within_nominal),
        cmocka_unit_test(test_admitted_waits_for_nodes),
        cmocka_unit_test(test_reclaim_running),
        cmocka_unit_test(test_best_effort_fifo),
        cmocka_unit_test(test_config_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
