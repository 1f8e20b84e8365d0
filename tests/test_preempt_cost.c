/* test_preempt_cost.c: checkpoint-aware preemption (issue #30): the trace's ckpt column, the work a
 * preemption puts at risk, the simulator's rollback and GPU-hours lost, and DeepShare's victim cost and
 * min-runtime, young victims and served reclaims on schedules worked out by hand. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deepshare/policy.h"
#include "deepshare/policy_config.h"

static const char *TEN = "tenant,quota_gpus\nA,16\nB,8\n";

static int read_jobs(ds_trace_t *t, const char *jobs, ds_error_t *err)
{
    ds_trace_init(t);
    ds_error_clear(err);
    assert_int_equal(ds_trace_read_tenants(t, tu_write_temp("ten.csv", TEN), 8, err), 0);
    return ds_trace_read_jobs(t, tu_write_temp("jobs.csv", jobs), err);
}

/* The column is optional, empty or 0 means none declared, and a bad value names its line and field. */
static void test_ckpt_column(void **st)
{
    (void)st;
    ds_trace_t t;
    ds_error_t err;
    assert_int_equal(read_jobs(&t, "job_id,tenant,gpus,submit,duration,ckpt\n1,A,1,0,100,600\n2,A,1,1,100,\n3,B,1,2,10,0\n",
                               &err), 0);
    assert_int_equal(t.jobs[0].ckpt, 600);
    assert_int_equal(t.jobs[1].ckpt, 0);
    assert_int_equal(t.jobs[2].ckpt, 0);
    ds_trace_free(&t);
    assert_int_equal(read_jobs(&t, "job_id,tenant,gpus,submit,duration,checkpoint_interval\n1,A,1,0,100,30\n", &err), 0);
    assert_int_equal(t.jobs[0].ckpt, 30);
    ds_trace_free(&t);
    assert_true(read_jobs(&t, "job_id,tenant,gpus,submit,duration,ckpt\n1,A,1,0,100,60\n2,A,1,0,100,-5\n", &err) < 0);
    tu_expect_error(&err, "jobs.csv", 3, "ckpt", "below the minimum");
    ds_trace_free(&t);
    assert_true(read_jobs(&t, "job_id,tenant,gpus,submit,duration,ckpt\n1,A,1,0,100,ten\n", &err) < 0);
    tu_expect_error(&err, "jobs.csv", 2, "ckpt", "not an integer");
    ds_trace_free(&t);
    assert_true(read_jobs(&t, "job_id,tenant,gpus,submit,duration,ckpt\n1,A,1,0,100,99999999999\n", &err) < 0);
    tu_expect_error(&err, "jobs.csv", 2, "ckpt", "above the maximum");
    ds_trace_free(&t);
}

/* ds_engine_at_risk: the time since the last checkpoint with an interval (declared, else the default),
 * everything run so far without one. */
static void test_at_risk(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8", "1 A 1 0 1000; 2 A 1 0 1000");
    t.jobs[0].ckpt = 100;
    ds_engine_config_t ec;
    ds_engine_config_default(&ec);
    ds_engine_t *e = NULL;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_engine_create(&e, &t, &ec, ds_policy_find("fifo"), NULL, &err), DS_OK);
    ds_engine_arrive(e, 0, 0);
    ds_engine_arrive(e, 1, 0);
    assert_int_equal(ds_engine_at_risk(e, 0, 0), 0); /* pending: nothing runs, nothing at risk */
    ds_engine_schedule(e, 0, 0);
    assert_int_equal(ds_engine_job(e, 0)->status, DS_JS_RUNNING);
    assert_int_equal(ds_engine_ckpt_interval(e, 0), 100);
    assert_int_equal(ds_engine_ckpt_interval(e, 1), 0);
    assert_int_equal(ds_engine_at_risk(e, 0, 250), 50);
    assert_int_equal(ds_engine_at_risk(e, 0, 300), 0);
    assert_int_equal(ds_engine_at_risk(e, 1, 250), 250);
    /* after a preemption the run starts again from a checkpoint: at risk counts from the restart; the
     * job without an interval keeps all it ever ran at risk */
    ds_engine_preempt(e, 0, 250, 0);
    ds_engine_preempt(e, 1, 250, 0);
    ds_engine_schedule(e, 400, 0);
    assert_int_equal(ds_engine_at_risk(e, 0, 430), 30);
    assert_int_equal(ds_engine_at_risk(e, 1, 430), 280);
    ds_engine_destroy(e);
    ec.ckpt_default = 60;
    assert_int_equal(ds_engine_create(&e, &t, &ec, ds_policy_find("fifo"), NULL, &err), DS_OK);
    assert_int_equal(ds_engine_ckpt_interval(e, 0), 100); /* a declared interval wins */
    assert_int_equal(ds_engine_ckpt_interval(e, 1), 60);
    ds_engine_arrive(e, 1, 0);
    ds_engine_schedule(e, 0, 0);
    assert_int_equal(ds_engine_at_risk(e, 1, 250), 10);
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

static const ds_policy_ops_t *ds_ops(void)
{
    const ds_policy_ops_t *p = ds_policy_find("deepshare");
    assert_non_null(p);
    return p;
}

static void *cfg_with(const char *const *kv)
{
    void *c = ds_ops()->config_new();
    for (int i = 0; kv && kv[i]; i += 2) {
        ds_error_t err;
        ds_error_clear(&err);
        assert_int_equal(ds_policy_config_set(ds_ops(), c, kv[i], kv[i + 1], &err), DS_OK);
    }
    return c;
}

/* Setting key to value fails with DS_EINVAL naming the key. */
static void refused_by_name(const char *key, const char *value)
{
    void *c = ds_ops()->config_new();
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_policy_config_set(ds_ops(), c, key, value, &err), DS_EINVAL);
    assert_string_equal(err.field, key);
    ds_ops()->config_free(c);
}

static int64_t run_grace;            /* the grace of the next run_ds */
static int64_t run_grace_save = -1;  /* and its victims' save on the signal (-1: none) */

static void run_ds(const ds_trace_t *t, const char *const *kv, int32_t ckpt_default, ds_sim_result_t *r)
{
    void *cfg = cfg_with(kv);
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.engine.mode = DS_MODE_POOLED;
    c.engine.ckpt_default = ckpt_default;
    c.grace = run_grace;
    c.grace_save = run_grace_save;
    c.policy = ds_ops();
    c.policy_config = cfg;
    tu_sim(t, &c, r);
    ds_ops()->config_free(cfg);
}

/* test_deepshare's cheapest-victim case: A's G jobs 1-2 fill node 0, its BE jobs 3 (4 GPUs), 4 and 5
 * (2 GPUs) node 1; B's 2-GPU job arrives at 30 and reclaims at the cycle of t=60. Victim costs there
 * (elapsed 60 s, oracle runtimes, no prior preemption): beta x at-risk / (elapsed + remaining) plus the
 * surplus share. Nothing declared: at risk is all 60 s, so j4 costs 0.3 x 60/200000 = 9.0e-5 and j5
 * 0.3 x 60/250000 = 7.2e-5: j5 goes (as before checkpoint-aware costs). */
static const char *CASE = "1 A 4 0 100000; 2 A 4 0 100001; 3 A 4 0 300000; 4 A 2 0 200000; 5 A 2 0 250000; 6 B 2 30 500";
/* The schedules below were worked out for an under-served tenant's reclaim (at the cycle after the arrival); a
 * served reclaim (test_served_reclaim) would come at the arrival itself, so it is off here. */
static const char *const NOCOLOC[] = {"colocation", "0", "served-reclaim", "0", NULL};

static void test_cost_unchanged_without_ckpt(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", CASE);
    ds_sim_result_t r;
    run_ds(&t, NOCOLOC, 0, &r);
    assert_int_equal(r.preempts[3], 0);
    assert_int_equal(r.preempts[4], 1);
    assert_int_equal(r.start[5], 60);
    /* the reference model keeps the progress: a preemption costs the restart overhead alone, 40 s x 2 GPUs */
    assert_true(fabs(r.lost_gpu_hours - 80.0 / 3600.0) < 1e-9);
    assert_true(fabs(r.rollback_gpu_hours) < 1e-12);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* j4 checkpoints every 30 s (it just did at 60): nothing of it is at risk, it costs 0 and is the victim
 * instead of j5, which declares none. The simulator rolls j4 back by 60 mod 30 = 0 s. */
static void test_cost_prefers_fresh_checkpoint(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", CASE);
    t.jobs[3].ckpt = 30;
    ds_sim_result_t r;
    run_ds(&t, NOCOLOC, 0, &r);
    assert_int_equal(r.preempts[3], 1);
    assert_int_equal(r.preempts[4], 0);
    assert_int_equal(r.start[5], 60);
    assert_true(fabs(r.lost_gpu_hours - 80.0 / 3600.0) < 1e-9);
    assert_true(fabs(r.rollback_gpu_hours) < 1e-12);
    ds_sim_result_free(&r);
    /* ckpt-aware 0 (the cost before checkpoints counted): j5 again, and j4 is not rolled back */
    const char *const blind[] = {"colocation", "0", "ckpt-aware", "0", NULL};
    run_ds(&t, blind, 0, &r);
    assert_int_equal(r.preempts[3], 0);
    assert_int_equal(r.preempts[4], 1);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* Every job checkpoints every 50 s (the default): at t=60 j4 and j5 each have 10 s at risk; j4's share is
 * the larger (10/200000 > 10/250000), so j5 goes again. The simulator rolls it back 10 s of work (it ran
 * alone at rate 1): lost = (10 + 40) x 2 GPU-s, rollback = 10 x 2, and j5 ends 10 s later than with its
 * progress kept. */
static void test_rollback_in_simulator(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", CASE);
    ds_sim_result_t keep, r;
    run_ds(&t, NOCOLOC, 0, &keep);
    run_ds(&t, NOCOLOC, 50, &r);
    assert_int_equal(r.preempts[4], 1);
    assert_int_equal(r.preemptions, 1);
    assert_true(fabs(r.lost_gpu_hours - 100.0 / 3600.0) < 1e-9);
    assert_true(fabs(r.rollback_gpu_hours - 20.0 / 3600.0) < 1e-9);
    assert_int_equal(r.end[4], keep.end[4] + 10);
    ds_sim_result_free(&keep);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* The same with a grace of 30 s: j5, signalled at t=60, runs on to t=90 on its GPUs, so B's job starts
 * at 90, not 60, and j5 not before; j5 leaves 90 s into its run, 40 s past its checkpoint at 50: rollback
 * 40 x 2 GPU-s, lost (40 + 40) x 2. */
static void test_grace_in_simulator(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", CASE);
    ds_sim_result_t keep, r;
    run_ds(&t, NOCOLOC, 50, &keep);
    assert_int_equal(keep.start[5], 60);
    run_grace = 30;
    run_ds(&t, NOCOLOC, 50, &r);
    run_grace = 0;
    assert_int_equal(r.preempts[4], 1);
    assert_int_equal(r.start[5], 90);
    assert_true(fabs(r.rollback_gpu_hours - 80.0 / 3600.0) < 1e-9);
    assert_true(fabs(r.lost_gpu_hours - 160.0 / 3600.0) < 1e-9);
    assert_true(r.end[4] >= keep.end[4] + 30);
    ds_sim_result_free(&keep);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* The same grace, j5 saving on the signal in 5 s: it leaves at 65 with its progress as of 60 (nothing rolled
 * back), so B's job starts at 65; lost = (restart overhead 40 + the save's 5) x 2 GPU-s. A save longer than
 * the grace does not finish: as without one. */
static void test_grace_save_in_simulator(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", CASE);
    ds_sim_result_t keep, r, slow;
    run_ds(&t, NOCOLOC, 50, &keep);
    run_grace = 30, run_grace_save = 5;
    run_ds(&t, NOCOLOC, 50, &r);
    run_grace_save = 31;
    run_ds(&t, NOCOLOC, 50, &slow);
    run_grace = 0, run_grace_save = -1;
    assert_int_equal(r.preempts[4], 1);
    assert_int_equal(r.start[5], 65);
    assert_true(fabs(r.rollback_gpu_hours) < 1e-12);
    assert_true(fabs(r.lost_gpu_hours - 90.0 / 3600.0) < 1e-9);
    /* against the immediate requeue (rolled back 10 s to its checkpoint at 50, B's job from 60): it restarts
     * 5 s later (B's job started at 65) with 10 s less to do again */
    if (r.end[4] != keep.end[4] - 5) fail_msg("j5 ends at %lld, the immediate requeue's at %lld", (long long)r.end[4], (long long)keep.end[4]);
    assert_int_equal(slow.start[5], 90);
    assert_true(fabs(slow.rollback_gpu_hours - 80.0 / 3600.0) < 1e-9);
    ds_sim_result_free(&keep);
    ds_sim_result_free(&r);
    ds_sim_result_free(&slow);
    ds_trace_free(&t);
}

/* min-runtime 120: no BE job may be preempted in its first 120 s, so B's job cannot reclaim at 60 and
 * does at the cycle of t=120, taking j5's GPUs then. */
static void test_min_runtime(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", CASE);
    const char *const kv[] = {"colocation", "0", "min-runtime", "120", NULL};
    ds_sim_result_t r;
    run_ds(&t, kv, 0, &r);
    assert_int_equal(r.start[5], 120);
    assert_int_equal(r.preempts[4], 1);
    assert_int_equal(r.preemptions, 1);
    ds_sim_result_free(&r);
    refused_by_name("min-runtime", "-1"); /* and a bad value is refused by name */
    ds_trace_free(&t);
}

/* Young victims: 16 one-GPU jobs of 100 s finish at t=100, so the typical run is 100 s. Then A runs X and Y
 * (4 GPUs each) as G on node 0, Z1 (4 GPUs, from 101) and Z2 (4 GPUs, from 400) as BE on node 1, all 100,000 s
 * long. B's 4-GPU job arrives at 450 and reclaims at the cycle of t=480: Z2 has run 80 s, younger than the
 * typical run, Z1 379 s. By the work term alone Z2 is the cheaper victim (0.3 x 80/100000 against 0.3 x
 * 379/100000); young, it costs 1 more, so Z1 goes. With young-victim 0, Z2 goes. */
static void test_young_victim(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8",
             "1 A 1 0 100; 2 A 1 0 100; 3 A 1 0 100; 4 A 1 0 100; 5 A 1 0 100; 6 A 1 0 100; 7 A 1 0 100; 8 A 1 0 100; "
             "9 B 1 0 100; 10 B 1 0 100; 11 B 1 0 100; 12 B 1 0 100; 13 B 1 0 100; 14 B 1 0 100; 15 B 1 0 100; "
             "16 B 1 0 100; 17 A 4 101 100000; 18 A 4 101 100000; 19 A 4 101 100000; 20 A 4 400 100000; "
             "21 B 4 450 500");
    ds_sim_result_t r;
    run_ds(&t, NOCOLOC, 0, &r);
    assert_int_equal(r.start[18], 101);
    assert_int_equal(r.start[19], 400);
    assert_int_equal(r.start[20], 480);
    assert_int_equal(r.preempts[18], 1); /* Z1, the older */
    assert_int_equal(r.preempts[19], 0);
    assert_int_equal(r.preemptions, 1);
    ds_sim_result_free(&r);
    const char *const off[] = {"colocation", "0", "served-reclaim", "0", "young-victim", "0", NULL};
    run_ds(&t, off, 0, &r);
    assert_int_equal(r.start[20], 480);
    assert_int_equal(r.preempts[18], 0);
    assert_int_equal(r.preempts[19], 1); /* Z2, the cheapest by the work term */
    ds_sim_result_free(&r);
    /* fewer than 16 finishes: no typical run yet, so no run is young and the work term decides (Z2) */
    ds_trace_t t2;
    tu_trace(&t2, "A:8 B:8",
             "1 A 1 0 100; 2 A 1 0 100; 3 A 1 0 100; 4 A 1 0 100; 5 A 1 0 100; 6 A 1 0 100; 7 A 1 0 100; "
             "8 B 1 0 100; 9 B 1 0 100; 10 B 1 0 100; 11 B 1 0 100; 12 B 1 0 100; 13 B 1 0 100; 14 B 1 0 100; "
             "15 B 1 0 100; 17 A 4 101 100000; 18 A 4 101 100000; 19 A 4 101 100000; 20 A 4 400 100000; "
             "21 B 4 450 500");
    run_ds(&t2, NOCOLOC, 0, &r);
    assert_int_equal(r.preempts[17], 0);
    assert_int_equal(r.preempts[18], 1);
    ds_sim_result_free(&r);
    refused_by_name("young-victim", "-1"); /* and a bad value is refused by name */
    ds_trace_free(&t2);
    ds_trace_free(&t);
}

/* Served reclaim (docs/policy.md §4.1): theta 0.5 keeps B served (QAD 6/8 with its 2-GPU job 6 waiting) on a full
 * cluster: A runs job 1 (8 GPUs, G) and job 2 (8, BE, above its quota), B jobs 3-4 (6 GPUs, G), C job 5 (2, G).
 * Job 6 (B, 2 GPUs, 500 s) arrives at 30: a served tenant's G job may take job 2, whose tenant keeps its quota
 * without it and which would hold its GPUs for 99,970 s more; not job 2 when A's jobs run 300 s (270 s left: it
 * waits for their end), nor with served-reclaim 0 (it waits for the first end, at 100,000). */
static void test_served_reclaim(void **st)
{
    (void)st;
    ds_trace_t t;
    const char *const kv[] = {"colocation", "0", "theta", "0.5", NULL};
    const char *const off[] = {"colocation", "0", "theta", "0.5", "served-reclaim", "0", NULL};
    ds_sim_result_t r;
    tu_trace(&t, "A:8 B:8 C:8", "1 A 8 0 100000; 2 A 8 0 100000; 3 B 4 0 100000; 4 B 2 0 100000; 5 C 2 0 100000; 6 B 2 30 500");
    run_ds(&t, kv, 0, &r);
    assert_int_equal(r.preempts[1], 1);
    assert_int_equal(r.preemptions, 1);
    assert_true(r.start[5] <= 60);
    ds_sim_result_free(&r);
    run_ds(&t, off, 0, &r);
    assert_int_equal(r.preemptions, 0);
    assert_int_equal(r.start[5], 100000);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
    tu_trace(&t, "A:8 B:8 C:8", "1 A 8 0 300; 2 A 8 0 300; 3 B 4 0 100000; 4 B 2 0 100000; 5 C 2 0 100000; 6 B 2 30 500");
    run_ds(&t, kv, 0, &r);
    assert_int_equal(r.preemptions, 0);
    assert_int_equal(r.start[5], 300);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
    refused_by_name("served-reclaim", "2");
}

/* ...and never from a tenant its victim would leave under its quota: A holds 12 GPUs of 8 (job 1, 4 G; job 2,
 * 8 BE), so job 2 may not go for served B's job 7, which waits for the first end; under-served (theta 0.95, B's
 * smoothed QAD 0.93 at the cycle of t=60), B's job may take any best-effort run, and takes job 2 then. */
static void test_served_reclaim_leaves_quota(void **st)
{
    (void)st;
    ds_trace_t t;
    const char *const served[] = {"colocation", "0", "theta", "0.5", NULL};
    ds_sim_result_t r;
    tu_trace(&t, "A:8 B:8 C:8",
             "1 A 4 0 100000; 2 A 8 0 100000; 3 B 4 0 100000; 4 B 2 0 100000; 5 C 4 0 100000; 6 C 2 0 100000; 7 B 2 30 500");
    run_ds(&t, served, 0, &r);
    assert_int_equal(r.preemptions, 0);
    assert_int_equal(r.start[6], 100000);
    ds_sim_result_free(&r);
    run_ds(&t, NOCOLOC, 0, &r);
    assert_int_equal(r.preempts[1], 1);
    assert_int_equal(r.start[6], 60);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* Every policy's run is accounted the same way: lost >= rollback >= 0, and lost > 0 exactly when
 * something was preempted (each preemption costs at least its restart overhead). */
static void test_lost_accounting_all_policies(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8",
             "1 A 4 0 5000; 2 A 4 0 5001; 3 A 4 0 9000; 4 A 2 0 7000; 5 A 2 0 8000; 6 B 2 30 500; 7 B 8 90 3000;"
             " 8 A 8 100 2000; 9 B 4 400 100");
    int ran = 0, preempted = 0;
    for (const ds_policy_ops_t *const *p = ds_policy_list(); *p; p++) {
        for (int mode = 0; mode < 8; mode++) {
            ds_sim_config_t c;
            ds_sim_config_default(&c);
            c.engine.mode = mode % 2 ? DS_MODE_POOLED : DS_MODE_PARTITIONED;
            c.grace = mode >= 2 ? 60 : 0; /* and with a grace: victims hold their GPUs a minute longer */
            if (mode >= 4) c.restart_pinned = 1, c.requeue_settle = 3; /* and the live cluster's restart rules */
            if (mode >= 6) c.grace_save = 20; /* and victims that save on the signal */
            c.engine.ckpt_default = 45;
            c.policy = *p;
            void *cfg = (*p)->config_new ? (*p)->config_new() : NULL;
            c.policy_config = cfg;
            if (!strcmp((*p)->name, "replay")) {
                if (cfg && (*p)->config_free) (*p)->config_free(cfg);
                continue; /* replays a recorded schedule: needs its own inputs */
            }
            ds_sim_result_t r;
            ds_error_t err;
            ds_error_clear(&err);
            c.check_invariants = 1;
            int rc = ds_sim_run(&t, &c, &r, &err);
            if (rc != DS_OK) {
                char m[400];
                ds_error_format(&err, m, sizeof m);
                print_message("%s mode %d: %s\n", (*p)->name, mode, m);
            }
            if (rc == DS_OK) {
                assert_true(r.rollback_gpu_hours >= 0);
                assert_true(r.lost_gpu_hours >= r.rollback_gpu_hours);
                assert_int_equal(r.lost_gpu_hours > 0, r.preemptions > 0);
                ran++, preempted += r.preemptions > 0;
                ds_sim_result_free(&r);
            }
            if (cfg && (*p)->config_free) (*p)->config_free(cfg);
        }
    }
    assert_true(ran >= 30);
    assert_true(preempted >= 1);
    ds_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ckpt_column),
        cmocka_unit_test(test_at_risk),
        cmocka_unit_test(test_cost_unchanged_without_ckpt),
        cmocka_unit_test(test_cost_prefers_fresh_checkpoint),
        cmocka_unit_test(test_rollback_in_simulator),
        cmocka_unit_test(test_grace_in_simulator),
        cmocka_unit_test(test_grace_save_in_simulator),
        cmocka_unit_test(test_min_runtime),
        cmocka_unit_test(test_young_victim),
        cmocka_unit_test(test_served_reclaim),
        cmocka_unit_test(test_served_reclaim_leaves_quota),
        cmocka_unit_test(test_lost_accounting_all_policies),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
