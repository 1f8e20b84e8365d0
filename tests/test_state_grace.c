/* test_state_grace.c: graceful preemption in deepshared's core (grace.c with mirror.c and dispatch.c) on
 * the in-memory Slurm of fake_slurm.c: a victim is signalled, not requeued; while it runs on in its grace
 * the engine has it pending, no rebuild happens, its GPU is refused to the job that preempted it and the
 * victim itself is held; it is requeued as soon as it ends non-zero (once Slurm has released it), when it
 * requeued itself (back to staging), or when its grace is over; one that ends with exit 0 is left done; a
 * rebuild in the grace keeps all that;
 * the config keys grace and preempt_signal. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "fake_slurm.h"
#include "daemon_testutil.h"
#include "daemon/daemon.h"

static daemon_t D;

static double metric(const char *line) { return dt_metric(&D, line); }
static int explain_has(uint32_t id, const char *text) { return dt_explain_has(&D, id, text); }
static const ds_jstate_t *jstate(uint32_t id) { return dt_jstate(&D, id); }

static int sync_now(void)
{
    char err[300];
    return daemon_sync(&D, 1, err, sizeof err);
}

static void pass_later(int64_t seconds)
{
    D.now += seconds;
    daemon_pass(&D, 1);
}

static void assert_ok(void)
{
    char msg[200] = "";
    if (D.e->ops->check && D.e->ops->check(D.e, D.e->pstate, msg, sizeof msg)) fail_msg("policy check: %s", msg);
    if (ds_engine_check(D.e, msg, sizeof msg)) fail_msg("engine check: %s", msg);
}

/* One node of four GPUs; tenant a (quota 2) fills them, two of its jobs borrowing b's quota (BE); then b
 * submits two jobs and DeepShare reclaims b's quota from a's BE jobs, whose ids go to be[]. */
static void reclaim(double grace, int sig, uint32_t be[2])
{
    fs_reset();
    fs_add_node("n0", 32, 4);
    for (uint32_t id = 1; id <= 4; id++) fs_add_job(id, "a", "staging", "gpus=1");
    memset(&D, 0, sizeof D);
    dconfig_default(&D.cfg);
    snprintf(D.cfg.policy, sizeof D.cfg.policy, "deepshare");
    D.cfg.journal[0] = 0;
    D.cfg.listen_port = 0;
    D.cfg.k = 1;
    D.cfg.gpu_sharing = 0;
    D.cfg.grace = grace;
    if (sig) D.cfg.preempt_signal = sig;
    snprintf(D.cfg.tenants[0].name, sizeof D.cfg.tenants[0].name, "a");
    snprintf(D.cfg.tenants[1].name, sizeof D.cfg.tenants[1].name, "b");
    D.cfg.tenants[0].quota = D.cfg.tenants[1].quota = 2;
    D.cfg.ntenants = 2;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(daemon_setup(&D, &err), DS_OK);
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_int_equal(fs_run_dispatched("staging"), 4);
    assert_int_equal(sync_now(), 1);
    int nbe = 0;
    for (uint32_t id = 1; id <= 4; id++)
        if (jstate(id)->klass == DS_CLASS_BE) be[nbe++] = id;
    assert_int_equal(nbe, 2);
    fs_add_job(5, "b", "staging", "gpus=1");
    fs_add_job(6, "b", "staging", "gpus=1");
    assert_int_equal(sync_now(), 1);
    pass_later(5);
    assert_ok();
}

/* The two victims are signalled, not requeued; they run on in Slurm, pending for the engine, with no
 * rebuild; b's jobs wait for their GPUs; the first victim ends (checkpointed) and is requeued once Slurm has
 * released it, b's first job then starts; the second is requeued when its grace is over. */
static void test_signal_then_requeue(void **state)
{
    (void)state;
    uint32_t be[2];
    reclaim(30, SIGUSR1, be);
    int64_t rebuilds = D.rebuilds;
    assert_int_equal(fs_calls(FS_SIGNAL), 2);
    assert_int_equal(fs_calls(FS_REQUEUE), 0);
    assert_int_equal(fs_calls(FS_DISPATCH), 4);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(fs_signal_of(be[i]), SIGUSR1);
        assert_int_equal(fs_job(be[i])->state, SL_RUNNING);
        assert_int_equal(jstate(be[i])->status, DS_JS_PENDING);
    }
    assert_int_equal(D.ngrace, 2);
    assert_true(metric("deepshare_grace_victims") == 2);
    assert_true(metric("deepshare_preempt_signals_total") == 2);
    /* b's jobs were offered the victims' GPUs and taken back: those GPUs are still busy in Slurm */
    for (uint32_t id = 5; id <= 6; id++) {
        assert_int_equal(jstate(id)->status, DS_JS_PENDING);
        assert_true(explain_has(id, "in its grace"));
    }
    /* the victims run on in Slurm: expected, no surprise; they are held, and say why */
    fs_touch();
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    assert_int_equal(D.rebuilds, rebuilds);
    assert_int_equal(fs_calls(FS_DISPATCH), 4);
    assert_true(explain_has(be[0], "signalled (10) to checkpoint"));
    assert_ok();

    /* victim 0 checkpoints and exits non-zero: Slurm is completing it (no requeue yet), then has released it */
    fs_end_script(be[0], 0);
    fs_job(be[0])->state = SL_ENDED;
    fs_touch();
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    assert_int_equal(fs_calls(FS_REQUEUE), 0);
    assert_int_equal(D.rebuilds, rebuilds);
    assert_int_equal(fs_calls(FS_DISPATCH), 4);
    fs_job(be[0])->completing = 0;
    fs_touch();
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    assert_int_equal(fs_calls(FS_REQUEUE), 1);
    assert_int_equal(fs_job(be[0])->state, SL_PENDING);
    assert_int_equal(fs_job(be[0])->restarts, 1);
    assert_int_equal(D.ngrace, 1);
    assert_int_equal(D.grace_ended, 1);
    /* its GPU went to one of b's jobs in the same pass */
    assert_int_equal(fs_calls(FS_DISPATCH), 5);
    assert_int_equal(fs_run_dispatched("staging"), 1);
    assert_int_equal(D.rebuilds, rebuilds);

    /* victim 1 runs on to the end of its grace: requeued then */
    assert_int_equal(daemon_grace_due(&D), 0);
    D.grace[0].t_signal -= 30;
    assert_int_equal(daemon_grace_due(&D), 1);
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    assert_int_equal(fs_calls(FS_REQUEUE), 2);
    assert_int_equal(D.grace_expired, 1);
    assert_int_equal(D.ngrace, 0);
    assert_int_equal(fs_calls(FS_DISPATCH), 6);
    assert_true(metric("deepshare_grace_requeues_total{after=\"ended\"}") == 1);
    assert_true(metric("deepshare_grace_requeues_total{after=\"grace\"}") == 1);
    assert_true(metric("deepshare_grace_seconds_count") == 2);
    assert_true(metric("deepshare_preemptions_total") == 2);
    /* both requeued and held in Slurm: back to staging, released, as after any requeue */
    fs_run_dispatched("staging");
    assert_int_equal(sync_now(), 1);
    for (int i = 0; i < 2; i++) {
        assert_string_equal(fs_job(be[i])->partition, "staging");
        assert_int_equal(fs_job(be[i])->held, 0);
    }
    for (uint32_t id = 5; id <= 6; id++) assert_int_equal(fs_job(id)->state, SL_RUNNING);
    assert_int_equal(D.rebuilds, rebuilds);
    assert_ok();
    daemon_teardown(&D);
}

/* A victim that requeues itself in its grace (scontrol requeue from its trap) goes back to staging at once,
 * before Slurm can start it again on its own; a rebuild in the grace keeps the other victim in it. */
static void test_requeued_itself_and_rebuild(void **state)
{
    (void)state;
    uint32_t be[2];
    reclaim(600, 0, be);
    assert_int_equal(fs_signal_of(be[0]), SIGTERM);
    sl_job_t *j = fs_job(be[0]);
    j->state = SL_PENDING, j->restarts++, j->nodes[0] = 0; /* requeued by itself: pending, not held, in batch */
    fs_touch();
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    assert_int_equal(fs_calls(FS_REQUEUE), 0);
    assert_string_equal(fs_job(be[0])->partition, "staging");
    assert_int_equal(D.grace_self, 1);
    assert_int_equal(D.ngrace, 1);
    assert_int_equal(fs_calls(FS_DISPATCH), 5); /* its GPU went to one of b's jobs */
    /* a surprise elsewhere rebuilds the engine: victim 1 is still in its grace, pending, its GPU refused */
    int64_t rebuilds = D.rebuilds;
    D.need_rebuild = 1;
    snprintf(D.rebuild_why, sizeof D.rebuild_why, "test");
    assert_int_equal(sync_now(), 1);
    assert_int_equal(D.rebuilds, rebuilds + 1);
    assert_int_equal(D.ngrace, 1);
    assert_int_equal(jstate(be[1])->status, DS_JS_PENDING);
    pass_later(5);
    assert_int_equal(fs_job(be[1])->state, SL_RUNNING);
    assert_int_equal(fs_calls(FS_REQUEUE), 0);
    /* b's other job still waits for victim 1's GPU */
    assert_int_equal(fs_calls(FS_DISPATCH), 5);
    assert_true(explain_has(be[1], "to checkpoint"));
    assert_ok();
    daemon_teardown(&D);
}

/* A victim that ends with exit 0 in its grace had finished its work: not requeued, not run again. */
static void test_completed_in_grace(void **state)
{
    (void)state;
    uint32_t be[2];
    reclaim(60, 0, be);
    fs_end_script(be[0], 0);
    fs_job(be[0])->completing = 0;
    fs_touch();
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    assert_int_equal(fs_calls(FS_REQUEUE), 0);
    assert_int_equal(fs_job(be[0])->state, SL_COMPLETED);
    assert_int_equal(fs_job(be[0])->restarts, 0);
    assert_true(metric("deepshare_grace_completed_total") == 1);
    assert_int_equal(D.ngrace, 1);
    assert_int_equal(fs_calls(FS_DISPATCH), 5); /* its GPU went to one of b's jobs */
    assert_int_equal(sync_now(), 1);
    assert_int_equal(jstate(be[0])->status, DS_JS_FUTURE); /* withdrawn: gone */
    assert_ok();
    daemon_teardown(&D);
}

/* grace = 0 (the default): requeued at once, no signal, as before. */
static void test_no_grace(void **state)
{
    (void)state;
    uint32_t be[2];
    reclaim(0, 0, be);
    assert_int_equal(fs_calls(FS_SIGNAL), 0);
    assert_int_equal(fs_calls(FS_REQUEUE), 2);
    assert_int_equal(D.ngrace, 0);
    daemon_teardown(&D);
}

static void test_config_keys(void **state)
{
    (void)state;
    dconfig_t c;
    ds_error_t err;
    dconfig_default(&c);
    assert_true(c.grace == 0 && c.preempt_signal == SIGTERM);
    const char *p = tu_write_temp("grace.conf", "grace = 45\npreempt_signal = SIGUSR1\ntenant a 1\n");
    ds_error_clear(&err);
    assert_int_equal(dconfig_read(&c, p, &err), DS_OK);
    assert_true(c.grace == 45 && c.preempt_signal == SIGUSR1);
    dconfig_default(&c);
    p = tu_write_temp("grace2.conf", "tenant a 1\npreempt_signal = KILL\n");
    ds_error_clear(&err);
    assert_int_not_equal(dconfig_read(&c, p, &err), DS_OK);
    tu_expect_error(&err, "grace2.conf", 2, "preempt_signal", "USR1");
    dconfig_default(&c);
    p = tu_write_temp("grace3.conf", "grace = -1\n");
    ds_error_clear(&err);
    assert_int_not_equal(dconfig_read(&c, p, &err), DS_OK);
    tu_expect_error(&err, "grace3.conf", 1, "grace", "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_signal_then_requeue),
        cmocka_unit_test(test_requeued_itself_and_rebuild),
        cmocka_unit_test(test_completed_in_grace),
        cmocka_unit_test(test_no_grace),
        cmocka_unit_test(test_config_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
