/* test_slurm.c: the simulated Slurm (slurm-quota, slurm-borrow) on small hand-computed cases: Fair Tree
 * ranks and their ties, job priorities, GrpTRES caps, backfill's reservations and starts (whole nodes, time
 * limits), job_submit.lua's routing, and preempt/qos legality (only QOS borrow is ever a victim, oldest
 * first, PreemptExemptTime, GraceTime, the requeue's begin time). */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deepshare/policy.h"
#include "deepshare/strbuf.h"
#include "policy/slurm/slurm_internal.h"

/* ---- Fair Tree ---- */

static void test_fairtree_ranks(void **st)
{
    (void)st;
    /* accounts A (shares 2), B (1), C (1); users a1 a2 | b1 b2 | c1 */
    double shares[3] = {2, 1, 1};
    int32_t user_acct[5] = {0, 0, 1, 1, 2};
    slm_tree_t t;
    slm_tree_init(&t, 3, shares, 5, user_acct);
    /* no usage anywhere: every level fair share is infinite and tied, so everyone shares rank 5 */
    slm_tree_rank(&t);
    for (int u = 0; u < 5; u++) assert_true(fabs(t.fs[u] - 1.0) < 1e-12);
    /* usage: a1 10, c1 10; root 20. A: S 0.5 / U 0.5 = 1; B: S 0.25 / U 0 = inf; C: 0.25 / 0.5 = 0.5.
     * Order B, A, C. B's users both infinite (its usage is 0): tied at rank 5. A: a2 (no usage, inf) rank 3,
     * a1 (S 0.5 / U 1 = 0.5) rank 2. C: c1 rank 1. */
    slm_tree_charge(&t, 0, 10);
    slm_tree_charge(&t, 4, 10);
    slm_tree_rank(&t);
    const double want[5] = {2.0 / 5, 3.0 / 5, 1.0, 1.0, 1.0 / 5};
    for (int u = 0; u < 5; u++) {
        if (fabs(t.fs[u] - want[u]) > 1e-12) fprintf(stderr, "user %d: fs %g, want %g\n", u, t.fs[u], want[u]);
        assert_true(fabs(t.fs[u] - want[u]) < 1e-12);
    }
    assert_true(isinf((double)t.acct_lf[1]));
    assert_true(fabs((double)t.acct_lf[0] - 1.0) < 1e-12 && fabs((double)t.acct_lf[2] - 0.5) < 1e-12);
    /* decay scales every usage alike: the ranks stay */
    slm_tree_decay(&t, 0.5L);
    slm_tree_rank(&t);
    for (int u = 0; u < 5; u++) assert_true(fabs(t.fs[u] - want[u]) < 1e-12);
    slm_tree_free(&t);
}

static void test_fairtree_tied_accounts(void **st)
{
    (void)st;
    /* A and B tie at LF 1 (same shares, same usage): B starts its walk tied, so b1 shares a1's rank 3 of 3,
     * and C (usage 0: LF infinite) comes first with rank 3 too; then a2 (LF inf within A) ... */
    double shares[3] = {1, 1, 1};
    int32_t user_acct[3] = {0, 1, 2};
    slm_tree_t t;
    slm_tree_init(&t, 3, shares, 3, user_acct);
    slm_tree_charge(&t, 0, 5);
    slm_tree_charge(&t, 1, 5);
    slm_tree_rank(&t);
    /* C: S 1/3, U 0 -> inf, rank 3 (1.0). A and B: S 1/3, U 1/2 -> 2/3, tied: A's user rank 2 (not tied with C),
     * B's user tied with A's: rank 2 as well. */
    assert_true(fabs(t.fs[2] - 1.0) < 1e-12);
    assert_true(fabs(t.fs[0] - 2.0 / 3) < 1e-12);
    assert_true(fabs(t.fs[1] - 2.0 / 3) < 1e-12);
    /* a user with no shares-worth of usage beats its busy sibling inside the same account */
    slm_tree_free(&t);
}

/* ---- engine-level cases ---- */

typedef struct env {
    ds_trace_t t;
    ds_engine_t *e;
    void *cfg;
    const ds_policy_ops_t *ops;
} env_t;

static void env_open(env_t *v, const char *policy, const char *tenants, const char *jobs, int gpn, int nodes,
                     const char *const *kv)
{
    tu_trace(&v->t, tenants, jobs);
    v->ops = ds_policy_find(policy);
    assert_non_null(v->ops);
    v->cfg = v->ops->config_new();
    ds_error_t err;
    for (int i = 0; kv && kv[i]; i += 2) assert_int_equal(v->ops->config_set(v->cfg, kv[i], kv[i + 1], &err), DS_OK);
    ds_engine_config_t c;
    ds_engine_config_default(&c);
    c.mode = DS_MODE_POOLED;
    c.gpus_per_node = gpn;
    c.pool_nodes = nodes;
    c.k = 1;
    c.enforce_cpu = 0;
    ds_error_clear(&err);
    int rc = ds_engine_create(&v->e, &v->t, &c, v->ops, v->cfg, &err);
    if (rc) fprintf(stderr, "engine: %s\n", err.msg);
    assert_int_equal(rc, 0);
}

static void env_close(env_t *v)
{
    ds_engine_destroy(v->e);
    v->ops->config_free(v->cfg);
    ds_trace_free(&v->t);
}

static slm_state_t *S(env_t *v) { return (slm_state_t *)v->e->pstate; }

/* Arrives every job submitted at now, runs a pass, forgets the decisions. */
static void at(env_t *v, int64_t now)
{
    for (int32_t j = 0; j < v->t.njobs; j++)
        if (v->t.jobs[j].submit == now) ds_engine_arrive(v->e, j, now);
    ds_engine_schedule(v->e, now, 1);
    char msg[256] = "";
    if (ds_engine_check(v->e, msg, sizeof msg) || v->ops->check(v->e, v->e->pstate, msg, sizeof msg))
        fail_msg("invariant at %lld: %s", (long long)now, msg);
    ds_engine_clear_decisions(v->e);
}

static int running(env_t *v, int32_t j) { return v->e->js[j].status == DS_JS_RUNNING; }

static int explains(env_t *v, int32_t j, int64_t now, const char *needle)
{
    ds_buf_t b = {0};
    v->ops->explain(v->e, v->e->pstate, j, now, &b);
    char *buf = ds_bdone(&b);
    int ok = strstr(buf, needle) != NULL;
    if (!ok) fprintf(stderr, "explain job %d: wanted '%s' in:\n%s", j, needle, buf);
    free(buf);
    return ok;
}

static void test_priority_and_limits(void **st)
{
    (void)st;
    env_t v;
    /* two accounts, one user each; nothing used yet: fairshare 1.0 for both, so priority = 10000 at submit */
    env_open(&v, "slurm-quota", "A:4 B:4", "1 A 1 0 1000; 2 B 1 0 100", 4, 2, NULL);
    at(&v, 0);
    slm_state_t *s = S(&v);
    assert_int_equal(slm_prio(s, 0), 10000);
    /* time limit: 2 x (run time + 40 s restart overhead), rounded up to whole minutes */
    assert_int_equal(s->limit[0], 2100); /* 2 x 1040 = 2080 -> 2100 */
    assert_int_equal(s->limit[1], 300);  /* 2 x 140 = 280 -> 300 */
    assert_true(running(&v, 0) && running(&v, 1));
    env_close(&v);
}

static void test_grptres_cap(void **st)
{
    (void)st;
    env_t v;
    /* A's quota is 4 GPUs on an 8-GPU node: the third 2-GPU job waits though GPUs are free */
    env_open(&v, "slurm-quota", "A:4 B:4", "1 A 2 0 100; 2 A 2 0 100; 3 A 2 0 100", 8, 1, NULL);
    at(&v, 0);
    assert_true(running(&v, 0) && running(&v, 1));
    assert_false(running(&v, 2));
    assert_true(explains(&v, 2, 0, "account A at GrpTRES gres/gpu=4 (it holds 4 GPUs; this job needs 2)"));
    ds_engine_finish(v.e, 0, 100);
    at(&v, 100);
    assert_true(running(&v, 2));
    env_close(&v);
    /* slurm-borrow has no cap: all three run at once */
    env_open(&v, "slurm-borrow", "A:4 B:4", "1 A 2 0 100; 2 A 2 0 100; 3 A 2 0 100", 8, 1, NULL);
    at(&v, 0);
    assert_true(running(&v, 0) && running(&v, 1) && running(&v, 2));
    assert_int_equal(S(&v)->qos[2], SLM_QOS_BORROW); /* beyond the quota in QOS normal: routed to borrow */
    assert_int_equal(S(&v)->qos[1], SLM_QOS_NORMAL);
    env_close(&v);
}

/* The queue's groups are split by size class: a walk still yields every pending job in slm_prio_cmp's order,
 * one that passes by capped classes yields exactly the jobs its account's GrpTRES has room for, and the jobs
 * it passed by are counted in queue order (what a depth-limited main pass counts). */
static void test_walk_size_classes(void **st)
{
    (void)st;
    env_t v;
    /* 3 nodes of 4 GPUs, full at t=0: A holds 4 (left 0), B 6 (left 2), C 2 (left 2) */
    env_open(&v, "slurm-quota", "A:4 B:8 C:4",
             "1 A 4 0 5000; 2 B 4 0 5000; 3 B 2 0 5000; 4 C 2 0 5000; 5 A 1 1 100; 6 B 4 1 100; 7 B 2 1 100; "
             "8 B 1 1 100; 9 C 2 1 100; 10 C 4 1 100; 11 A 2 1 100; 12 B 1 1 200; 13 C 1 1 100; 14 B 3 1 100",
             4, 3, NULL);
    at(&v, 0);
    at(&v, 1);
    slm_state_t *s = S(&v);
    for (int32_t j = 0; j < 4; j++) assert_true(running(&v, j));
    int32_t pend[32], np = 0, out[32];
    for (int32_t j = 0; j < v.t.njobs; j++)
        if (v.e->js[j].status == DS_JS_PENDING) pend[np++] = j;
    assert_int_equal(np, 10);
    for (int32_t i = 1; i < np; i++) /* the reference order: a plain sort by the queue's comparison */
        for (int32_t k = i; k > 0 && slm_prio_cmp(s, pend[k], pend[k - 1]) < 0; k--) {
            int32_t x = pend[k];
            pend[k] = pend[k - 1], pend[k - 1] = x;
        }
    assert_int_equal(v.ops->pending_order(v.e, s, out, 32), np);
    for (int32_t i = 0; i < np; i++) assert_int_equal(out[i], pend[i]);
    slm_walk_t w;
    slm_walk_begin(s, 0, &w);
    w.skip_capped = 1;
    int32_t i = 0, passed = 0, yielded = 0;
    for (int32_t j; (j = slm_walk_next(s, &w)) >= 0; yielded++) {
        /* the reference: every job before j that its account has no room for was passed by */
        for (; i < np && pend[i] != j; i++) {
            const ds_job_t *jb = &v.t.jobs[pend[i]];
            assert_true(s->ten_run[jb->tenant] + jb->gpus > v.e->tenant_quota[jb->tenant]);
            passed++;
        }
        assert_true(i < np);
        const ds_job_t *jb = &v.t.jobs[j];
        assert_true(s->ten_run[jb->tenant] + jb->gpus <= v.e->tenant_quota[jb->tenant]);
        assert_int_equal(slm_walk_capped_before(s, &w, j, 1000), passed);
        i++;
    }
    for (; i < np; i++) passed++;
    assert_int_equal(slm_walk_capped_before(s, &w, -1, 1000), passed);
    /* B has room for its 1- and 2-GPU jobs (7, 8, 12), C for its 1- and 2-GPU ones (9, 13), A for none */
    assert_int_equal(yielded, 5);
    assert_int_equal(passed, 5);
    slm_walk_end(s, &w);
    env_close(&v);
}

static void test_backfill_reservation(void **st)
{
    (void)st;
    env_t v;
    /* one 4-GPU node (A's quota 8 is no cap here). R (2 GPUs, 1000 s, limit 2100) runs; B (4 GPUs) waits for it and reserves the node
     * from R's expected end 2100; C (1 GPU, limit 300) ends before that and is backfilled on the free GPUs
     * at the next backfill pass (bf_interval 30 after the pass at 1); D (1 GPU, limit 6120) would run into
     * B's reservation: it waits, its reason names B, and it plans its own start after B's (3180). */
    env_open(&v, "slurm-quota", "A:8", "1 A 2 0 1000; 2 A 4 1 500; 3 A 1 2 100; 4 A 1 3 3000", 4, 1, NULL);
    at(&v, 0);
    assert_true(running(&v, 0));
    at(&v, 1);
    assert_false(running(&v, 1));
    at(&v, 2);
    at(&v, 3);
    assert_false(running(&v, 2)); /* the main scheduler stopped at B; backfill waits for its interval */
    assert_true(explains(&v, 2, 3, "the main scheduler stopped at job 2"));
    int64_t t = ds_engine_next_timer(v.e, 3);
    assert_int_equal(t, 31);
    at(&v, 31);
    assert_int_equal(S(&v)->bf_start[1], 2100); /* B's reservation: R's start + limit */
    assert_true(running(&v, 2));
    assert_false(running(&v, 3));
    assert_int_equal(S(&v)->reason[3], SLM_W_RESERVED);
    assert_int_equal(S(&v)->blocker[3], 1);
    assert_int_equal(S(&v)->bf_start[3], 3180); /* after B's reservation [2100, 3180) */
    assert_true(explains(&v, 3, 31, "reserved for job 2"));
    /* C ends at 131, R at 1000: the main scheduler starts B, D only when B is done */
    ds_engine_finish(v.e, 2, 131);
    at(&v, 131);
    assert_false(running(&v, 3));
    ds_engine_finish(v.e, 0, 1000);
    at(&v, 1000);
    assert_true(running(&v, 1));
    assert_false(running(&v, 3));
    ds_engine_finish(v.e, 1, 1500);
    at(&v, 1500);
    assert_true(running(&v, 3));
    env_close(&v);

    /* A reservation takes the whole node: B needs 2 GPUs, but while R holds 3 of 4 until 2100, D (1 GPU,
     * long) may not use the free GPU, though after R both would fit. Without backfill (sched/builtin) C too
     * would wait for B. */
    env_open(&v, "slurm-quota", "A:8", "1 A 3 0 1000; 2 A 2 1 500; 3 A 1 2 3000", 4, 1, NULL);
    at(&v, 0);
    at(&v, 1);
    at(&v, 2);
    at(&v, 31);
    assert_false(running(&v, 2));
    assert_int_equal(S(&v)->reason[2], SLM_W_RESERVED);
    env_close(&v);
    static const char *const nobf[] = {"slurm-backfill", "0", NULL};
    env_open(&v, "slurm-quota", "A:8", "1 A 2 0 1000; 2 A 4 1 500; 3 A 1 2 100", 4, 1, nobf);
    at(&v, 0);
    at(&v, 1);
    at(&v, 2);
    at(&v, 31);
    assert_false(running(&v, 2));
    assert_int_equal(ds_engine_next_timer(v.e, 31), 300); /* only the next priority update */
    env_close(&v);
}

static void test_backfill_starts_in_sim(void **st)
{
    (void)st;
    /* the same first case through the simulator: starts at 0, 1000, 31, 1500 */
    ds_trace_t t;
    tu_trace(&t, "A:8", "1 A 2 0 1000; 2 A 4 1 500; 3 A 1 2 100; 4 A 1 3 3000");
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.engine.mode = DS_MODE_POOLED;
    c.engine.gpus_per_node = 4;
    c.engine.pool_nodes = 1;
    c.engine.k = 1;
    c.engine.enforce_cpu = 0;
    c.policy = ds_policy_find("slurm-quota");
    ds_sim_result_t r;
    tu_sim(&t, &c, &r);
    assert_int_equal(r.start[0], 0);
    assert_int_equal(r.start[1], 1000);
    assert_int_equal(r.start[2], 31);
    assert_int_equal(r.start[3], 1500);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

static void test_qos_preemption(void **st)
{
    (void)st;
    env_t v;
    /* one 4-GPU node. A (quota 2) submits four 1-GPU jobs at 0: 1-2 in QOS normal, 3-4 routed to borrow;
     * all run. B (quota 2) submits one at 10: normal, no free GPU: it preempts the oldest borrow job (3),
     * never A's normal jobs, and starts on its GPU at once (GraceTime 0). */
    env_open(&v, "slurm-borrow", "A:2 B:2", "1 A 1 0 5000; 2 A 1 0 5000; 3 A 1 0 5000; 4 A 1 0 5000; 5 B 1 10 100",
             4, 1, NULL);
    at(&v, 0);
    for (int j = 0; j < 4; j++) assert_true(running(&v, j));
    assert_int_equal(S(&v)->qos[0], SLM_QOS_NORMAL);
    assert_int_equal(S(&v)->qos[2], SLM_QOS_BORROW);
    at(&v, 10);
    assert_true(running(&v, 4));
    assert_false(running(&v, 2));
    assert_true(running(&v, 0) && running(&v, 1) && running(&v, 3));
    assert_int_equal(v.e->js[2].preemptions, 1);
    /* the victim is requeued with a begin time cred_expire + 1 s later (121) and starts no earlier */
    assert_int_equal(S(&v)->eligible[2], 10 + 121);
    assert_true(explains(&v, 2, 10, "requeued, may start from 131"));
    ds_engine_finish(v.e, 4, 110);
    at(&v, 110);
    assert_false(running(&v, 2)); /* a GPU is free, but not before its begin time */
    at(&v, 131);
    at(&v, 170); /* the periodic full pass after the begin time (sched_interval 60 from 0: 180) */
    assert_false(running(&v, 2));
    at(&v, 180);
    assert_true(running(&v, 2));
    assert_int_equal(S(&v)->n_bad_victims, 0);
    env_close(&v);

    /* two normal jobs of B need both borrow GPUs: both borrow jobs go, none of A's normal ones */
    env_open(&v, "slurm-borrow", "A:2 B:2", "1 A 1 0 5000; 2 A 1 0 5000; 3 A 1 0 5000; 4 A 1 0 5000; 5 B 2 10 100",
             4, 1, NULL);
    at(&v, 0);
    at(&v, 10);
    assert_true(running(&v, 4) && running(&v, 0) && running(&v, 1));
    assert_false(running(&v, 2) || running(&v, 3));
    env_close(&v);

    /* with only normal jobs running, a normal job waits: nothing is preemptable */
    env_open(&v, "slurm-borrow", "A:2 B:2 C:2", "1 A 2 0 5000; 2 B 2 0 5000; 3 C 1 10 100", 4, 1, NULL);
    at(&v, 0);
    at(&v, 10);
    assert_false(running(&v, 2));
    assert_int_equal(v.e->n_preemptions, 0);
    env_close(&v);

    /* PreemptExemptTime 100: the borrow jobs started at 0 are exempt at 10, so B waits; the periodic pass
     * after 100 (sched_interval 60: at 120) preempts */
    static const char *const exempt[] = {"slurm-preempt-exempt-time", "100", NULL};
    env_open(&v, "slurm-borrow", "A:2 B:2", "1 A 1 0 5000; 2 A 1 0 5000; 3 A 1 0 5000; 4 A 1 0 5000; 5 B 1 10 100",
             4, 1, exempt);
    at(&v, 0);
    at(&v, 10);
    assert_false(running(&v, 4));
    assert_int_equal(v.e->n_preemptions, 0);
    assert_int_equal(ds_engine_next_timer(v.e, 10), 120);
    at(&v, 100);
    assert_false(running(&v, 4));
    at(&v, 120);
    assert_true(running(&v, 4));
    assert_int_equal(v.e->n_preemptions, 1);
    env_close(&v);

    /* GraceTime 50: the victim runs on until 60, then is requeued and B starts */
    static const char *const grace[] = {"slurm-grace-time", "50", NULL};
    env_open(&v, "slurm-borrow", "A:2 B:2", "1 A 1 0 5000; 2 A 1 0 5000; 3 A 1 0 5000; 4 A 1 0 5000; 5 B 1 10 100",
             4, 1, grace);
    at(&v, 0);
    at(&v, 10);
    assert_false(running(&v, 4));
    assert_true(running(&v, 2));
    assert_true(explains(&v, 2, 10, "being preempted: requeued at 60"));
    assert_int_equal(ds_engine_next_timer(v.e, 10) <= 60, 1);
    at(&v, 60);
    assert_false(running(&v, 2));
    assert_true(running(&v, 4));
    env_close(&v);
}

static void test_routing_returns_to_normal(void **st)
{
    (void)st;
    env_t v;
    /* A (quota 1): job 1 normal, job 2 borrow (submitted while 1 runs); once 1 is done, job 3 is normal again,
     * while job 2 stays in borrow (the routing is decided at submission) */
    env_open(&v, "slurm-borrow", "A:1 B:3", "1 A 1 0 100; 2 A 1 1 1000; 3 A 1 200 100", 4, 1, NULL);
    at(&v, 0);
    at(&v, 1);
    ds_engine_finish(v.e, 0, 100);
    at(&v, 100);
    at(&v, 200);
    assert_int_equal(S(&v)->qos[0], SLM_QOS_NORMAL);
    assert_int_equal(S(&v)->qos[1], SLM_QOS_BORROW);
    assert_int_equal(S(&v)->qos[2], SLM_QOS_NORMAL);
    env_close(&v);
}

static void test_oversize_refused(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:2 B:6", "1 A 4 0 100");
    const ds_policy_ops_t *ops = ds_policy_find("slurm-quota");
    ds_engine_config_t c;
    ds_engine_config_default(&c);
    c.mode = DS_MODE_POOLED;
    c.gpus_per_node = 8;
    ds_engine_t *e;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_not_equal(ds_engine_create(&e, &t, &c, ops, NULL, &err), 0);
    assert_non_null(strstr(err.msg, "GrpTRES=gres/gpu=2"));
    assert_string_equal(err.field, "gpus");
    ds_trace_free(&t);
}

static void test_config_errors(void **st)
{
    (void)st;
    const ds_policy_ops_t *ops = ds_policy_find("slurm-borrow");
    void *c = ops->config_new();
    ds_error_t err;
    assert_int_equal(ops->config_set(c, "slurm-bf-interval", "abc", &err), DS_EINVAL);
    assert_string_equal(err.field, "slurm-bf-interval");
    assert_int_equal(ops->config_set(c, "slurm-billing", "gpus", &err), DS_EINVAL);
    assert_int_equal(ops->config_set(c, "slurm_billing", "gpu", &err), DS_OK);
    assert_int_equal(ops->config_set(c, "slurm-preempt-exempt-time", "-2", &err), DS_EINVAL);
    assert_int_equal(ops->config_set(c, "no-such", "1", &err), DS_ENOTFOUND);
    ops->config_free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fairtree_ranks),
        cmocka_unit_test(test_fairtree_tied_accounts),
        cmocka_unit_test(test_priority_and_limits),
        cmocka_unit_test(test_grptres_cap),
        cmocka_unit_test(test_walk_size_classes),
        cmocka_unit_test(test_backfill_reservation),
        cmocka_unit_test(test_backfill_starts_in_sim),
        cmocka_unit_test(test_qos_preemption),
        cmocka_unit_test(test_routing_returns_to_normal),
        cmocka_unit_test(test_oversize_refused),
        cmocka_unit_test(test_config_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
