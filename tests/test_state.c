/* test_state.c: deepshared's core (the ds_daemon library: mirror.c, dispatch.c, gpumap.c, ...) against the
 * in-memory Slurm of fake_slurm.c: explain in the policy's words, squeue priorities in its order,
 * rebuilding after a restart, a pinned GPU that is busy and the start taken back, requeue then restage,
 * slurmctld errors, GPUs that lost their shards or keep shards of no job after a slurmctld restart,
 * pinned shard jobs the policy would pair where Slurm cannot run them, and batch evidence from a finish. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "fake_slurm.h"
#include "daemon_testutil.h"
#include "daemon/daemon.h"
#include "policy/deepshare/ds_internal.h"

static daemon_t D; /* large (latency samples): static, reset by boot */
static const char *boot_param; /* one policy parameter "key=value" for the next boot, NULL none */
static const char *boot_journal; /* the journal of the next boot, NULL none */
static char journal_path[512];

/* A fresh daemon on a fresh fake cluster of one node with four GPUs and the given tenants. */
static void boot_daemon(const char *policy, const char *const *tenants, const int *quotas, int nt)
{
    memset(&D, 0, sizeof D);
    dconfig_default(&D.cfg);
    snprintf(D.cfg.policy, sizeof D.cfg.policy, "%s", policy);
    snprintf(D.cfg.journal, sizeof D.cfg.journal, "%s", boot_journal ? boot_journal : "");
    D.cfg.listen_port = 0;
    D.cfg.k = 1; /* no colocation: these tests are about pins, requeues and errors */
    D.cfg.gpu_sharing = 0;
    D.cfg.pin_whole_gpus = 1; /* pinned as on a cluster that shares GPUs; test_unpinned_* unpin them */
    for (int i = 0; i < nt; i++) {
        snprintf(D.cfg.tenants[i].name, sizeof D.cfg.tenants[i].name, "%s", tenants[i]);
        D.cfg.tenants[i].quota = quotas[i];
    }
    D.cfg.ntenants = nt;
    if (boot_param) {
        const char *eq = strchr(boot_param, '=');
        snprintf(D.cfg.pkeys[0], sizeof D.cfg.pkeys[0], "%.*s", (int)(eq - boot_param), boot_param);
        snprintf(D.cfg.pvals[0], sizeof D.cfg.pvals[0], "%s", eq + 1);
        D.cfg.nparams = 1;
    }
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(daemon_setup(&D, &err), DS_OK);
}

static void boot(const char *policy)
{
    static const char *const t[] = {"a", "b"};
    static const int q[] = {2, 2};
    boot_daemon(policy, t, q, 2);
}

/* A pass some seconds later: DeepShare updates its smoothed QAD once a cycle (a second in deepshared). */
static void pass_later(int64_t seconds)
{
    D.now += seconds;
    daemon_pass(&D, 1);
}

static int sync_now(void)
{
    char err[300];
    return daemon_sync(&D, 0, err, sizeof err);
}

/* A sync that also reads the nodes again, as the daemon does every cycle. */
static int sync_nodes(void)
{
    char err[300];
    return daemon_sync(&D, 1, err, sizeof err);
}

/* The engine GPU index of a job's first GPU. */
static int32_t engine_gpu(uint32_t id)
{
    int32_t s = daemon_slot_of(&D, id);
    return D.e->jgpus[D.e->jgpu_off[s]];
}

/* The policy's own invariants, as a driver that checks them after a pass would. */
static void assert_policy_ok(void)
{
    char msg[200] = "";
    if (D.e->ops->check && D.e->ops->check(D.e, D.e->pstate, msg, sizeof msg)) fail_msg("policy check: %s", msg);
    if (ds_engine_check(D.e, msg, sizeof msg)) fail_msg("engine check: %s", msg);
}

/* A job of tenant acct running in partition part on node n0, GPU idx, as deepshared dispatched it. */
static sl_job_t *running_on(uint32_t id, const char *acct, const char *part, const char *klass, int idx)
{
    sl_job_t *j = fs_add_job(id, acct, part, "gpus=1");
    fs_pin(j, "n0", &idx, 1);
    snprintf(j->admin_comment, sizeof j->admin_comment, "deepshare class=%s gres=gpu pin=%d", klass, idx);
    j->state = SL_RUNNING;
    j->start = j->submit + 1;
    snprintf(j->nodes, sizeof j->nodes, "n0");
    return j;
}

/* A G job of tenant acct on n GPUs (a shard of one when shard is set), back in staging after a requeue,
 * pinned at its first dispatch to the GPU indices pins (Slurm 22.05 can restart it only there). */
static void requeued_pinned(uint32_t id, const char *acct, int shard, const int *pins, int n)
{
    char comment[16], ac[sizeof ((sl_job_t *)0)->admin_comment];
    snprintf(comment, sizeof comment, "gpus=%d", n);
    sl_job_t *j = fs_add_job(id, acct, "staging", comment);
    j->on_shard = shard;
    fs_pin(j, "", pins, n);
    size_t off = (size_t)snprintf(ac, sizeof ac, "deepshare class=G gres=%s pin=", shard ? "shard" : "gpu");
    for (int i = 0; i < n; i++) off += (size_t)snprintf(ac + off, sizeof ac - off, "%s%d", i ? "," : "", pins[i]);
    snprintf(j->admin_comment, sizeof j->admin_comment, "%s", ac);
    j->restarts = 1;
}

/* Job id of tenant a, one GPU, requeued, its shard pinned to GPU index 0 for life. */
static void requeued_pinned_to_0(uint32_t id)
{
    static const int zero = 0;
    requeued_pinned(id, "a", 1, &zero, 1);
}

static int setup(void **state)
{
    (void)state;
    fs_reset();
    fs_add_node("n0", 32, 4);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    daemon_teardown(&D);
    return 0;
}

/* After a restart the engine is rebuilt from Slurm alone: running and dispatched jobs are adopted on
 * their pinned GPUs with the class of their admin comment, staged ones wait. */
static void test_rebuild_adopts(void **state)
{
    (void)state;
    running_on(1, "a", "prod", "G", 2);
    running_on(2, "b", "batch", "BE", 0)->restarts = 3;
    fs_add_job(3, "b", "staging", "gpus=1");
    fs_add_job(4, "nobody", "staging", "gpus=1");
    boot("deepshare");
    assert_int_equal(sync_now(), 1);
    assert_int_equal(D.rebuilds, 1);
    assert_int_equal(dt_jstate(&D, 1)->status, DS_JS_RUNNING);
    assert_int_equal(dt_jstate(&D, 1)->klass, DS_CLASS_G);
    assert_int_equal(engine_gpu(1), 2);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_RUNNING);
    assert_int_equal(dt_jstate(&D, 2)->klass, DS_CLASS_BE);
    assert_int_equal(dt_jstate(&D, 2)->preemptions, 3);
    assert_int_equal(engine_gpu(2), 0);
    assert_int_equal(dt_jstate(&D, 3)->status, DS_JS_PENDING);
    assert_int_equal(daemon_slot_of(&D, 4), -1); /* not a tenant: left alone */
    daemon_pass(&D, 1);
    assert_policy_ok();
    assert_int_equal(fs_calls(FS_DISPATCH), 1);
    assert_int_equal(fs_last_id(FS_DISPATCH), 3);
    assert_string_equal(fs_job(3)->partition, "prod");

    /* deepshared restarts: job 3 is dispatched, not running yet, and still holds its GPU */
    daemon_teardown(&D);
    boot("deepshare");
    sl_jobs_reset();
    assert_int_equal(sync_now(), 1);
    assert_int_equal(D.rebuilds, 1);
    assert_int_equal(dt_jstate(&D, 3)->status, DS_JS_RUNNING);
    assert_int_equal(engine_gpu(3), fs_job(3)->gpu_idx[0]);
    assert_int_equal(D.e->n_preemptions, 0);
    daemon_pass(&D, 1);
    assert_policy_ok();
    assert_int_equal(fs_calls(FS_DISPATCH), 1); /* nothing more to start */
}

/* A pending job cancelled (ended in Slurm), held by its owner, moved to another partition or gone from Slurm
 * leaves the engine by ds_engine_withdraw: no rebuild, the same engine, every tenant's smoothed QAD bit for
 * bit as it was (a rebuild warm-starts it at Q now); a held job released in staging queues again and runs. */
static void test_pending_leaves_without_rebuild(void **state)
{
    (void)state;
    running_on(1, "a", "prod", "G", 0);
    running_on(2, "a", "prod", "G", 1);
    running_on(3, "b", "prod", "G", 2);
    running_on(4, "b", "prod", "G", 3);
    for (uint32_t id = 5; id <= 9; id++) fs_add_job(id, id % 2 ? "a" : "b", "staging", "gpus=1");
    boot("deepshare");
    assert_int_equal(sync_now(), 1);
    for (int k = 0; k < 5; k++) pass_later(60); /* QAD cycles */
    assert_policy_ok();
    const ds_engine_t *e0 = D.e;
    int64_t rebuilds = D.rebuilds;
    const dsp_t *p = D.e->pstate;
    double S[2];
    memcpy(S, p->S, sizeof S);
    /* 5 cancelled (scancel: Slurm shows it ended), 6 held by its owner, 7 moved to another partition,
     * 9 purged from Slurm's list at once */
    fs_job(5)->state = SL_ENDED;
    fs_job(6)->held = 1;
    snprintf(fs_job(7)->partition, sizeof fs_job(7)->partition, "debug");
    fs_job(9)->state = SL_ENDED;
    fs_touch();
    assert_int_equal(sync_now(), 1);
    assert_ptr_equal(D.e, e0);
    assert_int_equal(D.rebuilds, rebuilds);
    assert_int_equal(D.withdrawals, 4);
    assert_memory_equal(S, p->S, sizeof S);
    for (uint32_t id = 5; id <= 9; id++) assert_int_equal(dt_jstate(&D, id)->status, id == 8 ? DS_JS_PENDING : DS_JS_FUTURE);
    assert_true(dt_explain_has(&D, 5, "withdrawn: it ended"));
    assert_true(dt_explain_has(&D, 6, "withdrawn: held by its owner"));
    assert_int_equal(dt_metric(&D, "deepshare_withdrawals_total"), 4);
    assert_int_equal(dt_metric(&D, "deepshare_rebuilds_total"), (double)rebuilds);
    int32_t order[8];
    assert_int_equal(ds_engine_pending_order(D.e, order, 8), 1);
    pass_later(60);
    assert_policy_ok();
    /* 6 released in staging: queued again; 7 back in staging: too; the cluster frees two GPUs and both run */
    fs_job(6)->held = 0;
    snprintf(fs_job(7)->partition, sizeof fs_job(7)->partition, "staging");
    fs_touch();
    assert_int_equal(sync_now(), 1);
    assert_int_equal(dt_jstate(&D, 6)->status, DS_JS_PENDING);
    assert_int_equal(dt_jstate(&D, 7)->status, DS_JS_PENDING);
    fs_end_script(1, 0);
    fs_end_script(3, 0);
    fs_job(1)->completing = fs_job(3)->completing = 0; /* and done completing */
    fs_touch();
    assert_int_equal(sync_nodes(), 1);
    pass_later(60);
    assert_policy_ok();
    assert_int_equal(D.rebuilds, rebuilds);
    assert_ptr_equal(D.e, e0);
    int started = 0;
    for (uint32_t id = 6; id <= 8; id++) started += dt_jstate(&D, id)->status == DS_JS_RUNNING;
    assert_int_equal(started, 2);
    assert_int_equal(dt_jstate(&D, 5)->status, DS_JS_FUTURE); /* a cancelled job never comes back */
}

/* A node out of service in Slurm (drained, then down, then back): no job placed there, the job running there
 * kept while Slurm runs it, the one Slurm requeued from it back in staging and run elsewhere, nothing lost
 * or started twice; /explain, /metrics and the status JSON say so; back in service it is offered again. */
static void test_node_out_of_service(void **state)
{
    (void)state;
    fs_add_node("n1", 32, 4);
    for (uint32_t id = 1; id <= 2; id++) {
        int idx = (int)id - 1;
        sl_job_t *j = fs_add_job(id, "a", "prod", "gpus=1");
        fs_pin(j, "n1", &idx, 1);
        snprintf(j->admin_comment, sizeof j->admin_comment, "deepshare class=G gres=gpu pin=%d", idx);
        j->state = SL_RUNNING;
        j->start = j->submit + 1;
        snprintf(j->nodes, sizeof j->nodes, "n1");
    }
    boot("fifo");
    assert_int_equal(sync_now(), 1);
    assert_int_equal(D.e->nnodes, 2);
    assert_int_equal(D.nodes_down, 0);
    fs_set_node_down("n1", "drained");
    assert_int_equal(sync_nodes(), 1);
    assert_int_equal(D.nodes_down, 1);
    assert_true(ds_engine_node_down(D.e, 1));
    assert_int_equal(D.e->parts[0].gpus_free, 4); /* n0's four; n1's two idle ones withdrawn */
    for (uint32_t id = 10; id < 16; id++) fs_add_job(id, id % 2 ? "a" : "b", "staging", "gpus=1");
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    fs_run_dispatched("staging");
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    assert_policy_ok();
    int on_n0 = 0;
    for (uint32_t id = 10; id < 16; id++) {
        const sl_job_t *j = fs_job(id);
        if (j->state == SL_RUNNING) on_n0++, assert_string_equal(j->nodes, "n0");
        else assert_string_equal(j->partition, "staging");
    }
    assert_int_equal(on_n0, 4);
    assert_int_equal(dt_jstate(&D, 1)->status, DS_JS_RUNNING); /* a drain lets it run */
    assert_true(dt_explain_has(&D, 15, "out of service (no placements): n1 (drained)"));
    assert_true(dt_explain_has(&D, 15, "n1:-"));
    assert_int_equal(dt_metric(&D, "deepshare_nodes_unavailable"), 1);
    assert_int_equal(dt_metric(&D, "deepshare_node_unavailable{node=\"n1\",state=\"drained\"}"), 1);
    char *html = NULL, *json = NULL;
    status_render(&D, &html, &json);
    assert_non_null(strstr(json, "\"name\":\"n1\",\"unavailable\":\"drained\""));
    free(html);
    free(json);
    /* the node goes down: Slurm requeues job 2 (pending in prod, still asking for n1) and job 1 ends */
    fs_set_node_down("n1", "down");
    sl_job_t *j2 = fs_job(2);
    j2->state = SL_PENDING;
    j2->restarts = 1;
    j2->nodes[0] = 0;
    fs_job(1)->state = SL_ENDED;
    fs_touch();
    int64_t fin = D.finished;
    assert_int_equal(sync_nodes(), 1);
    assert_string_equal(fs_job(2)->partition, "staging"); /* it would wait for n1: back to staging */
    assert_int_equal(D.finished, fin + 1);
    assert_int_equal(sync_now(), 1);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_PENDING);
    /* back in service: n1 is offered again; the waiting jobs run there */
    fs_set_node_down("n1", NULL);
    assert_int_equal(sync_nodes(), 1);
    assert_int_equal(D.nodes_down, 0);
    assert_false(ds_engine_node_down(D.e, 1));
    /* job 2, requeued by Slurm seconds ago, waits out the settle time first (a launch in the second its old
     * credential was revoked in is refused), and FIFO keeps the others behind it */
    pass_later(1);
    assert_true(dt_explain_has(&D, 2, "held"));
    assert_string_equal(fs_job(14)->partition, "staging");
    D.slot[daemon_slot_of(&D, 2)].t_requeue -= D_REQUEUE_SETTLE; /* the settle time has passed */
    pass_later(1);
    fs_run_dispatched("staging");
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    assert_policy_ok();
    int on_n1 = 0;
    for (uint32_t id = 2; id < 16; id++) {
        const sl_job_t *j = fs_job(id);
        if (!j) continue;
        if (j->state == SL_RUNNING && !strcmp(j->nodes, "n1")) on_n1++;
        if (id >= 10 && j->state != SL_RUNNING) fail_msg("job %u: state %d in %s", id, j->state, j->partition);
    }
    /* 14 and 15 run there; job 2, which Slurm 22.05 can restart only on GPU index 1 (its pin; repin is off), is
     * pending in the engine's queue until that index frees: not lost */
    assert_int_equal(on_n1, 2);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_PENDING);
    assert_string_equal(fs_job(2)->partition, "staging");
    assert_int_equal(dt_metric(&D, "deepshare_node_outages_total"), 1);
    assert_int_equal(dt_metric(&D, "deepshare_nodes_unavailable"), 0);
}

/* Fencing with the leader lease (no etcd here: the lease's state is set by hand): a leader's dispatch carries
 * its epoch; once its lease has lapsed (paused past valid_until) every write is refused and counted, none
 * reaches Slurm; a new leader (a higher epoch) sends a dispatch of the older epoch that it finds pending
 * back to staging, and schedules the job itself, with no rebuild. */
static void test_lease_fence(void **state)
{
    (void)state;
    boot("fifo");
    snprintf(D.lease.url, sizeof D.lease.url, "http://127.0.0.1:9");
    D.lease.leading = 1;
    D.lease.epoch = 7;
    D.lease.valid_until = daemon_now_mono() + 100;
    sl_set_fence(daemon_may_write, &D);
    fs_add_job(1, "a", "staging", "gpus=1");
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    assert_string_equal(fs_job(1)->partition, "prod");
    assert_non_null(strstr(fs_job(1)->admin_comment, " epoch=7"));
    assert_int_equal(dt_metric(&D, "deepshare_leader"), 1);
    assert_int_equal(dt_metric(&D, "deepshare_lease_epoch"), 7);
    /* paused past its lease: nothing is written */
    D.lease.valid_until = daemon_now_mono() - 1;
    fs_add_job(2, "b", "staging", "gpus=1");
    assert_int_equal(sync_now(), 1);
    int64_t fenced = D.fenced_writes;
    pass_later(1);
    assert_string_equal(fs_job(2)->partition, "staging");
    assert_true(D.fenced_writes > fenced);
    assert_int_equal(dt_metric(&D, "deepshare_leader"), 0);
    /* a new leader: the old one's dispatch of job 3, made after the takeover, goes back to staging */
    D.lease.epoch = 9;
    D.lease.valid_until = daemon_now_mono() + 100;
    fs_add_job(3, "b", "staging", "gpus=1");
    assert_int_equal(sync_now(), 1);
    int64_t rebuilds = D.rebuilds;
    sl_job_t *j3 = fs_job(3);
    static const int one = 1;
    snprintf(j3->partition, sizeof j3->partition, "prod");
    fs_pin(j3, "n0", &one, 1);
    snprintf(j3->admin_comment, sizeof j3->admin_comment, "deepshare class=G gres=gpu pin=1 epoch=7");
    fs_touch();
    assert_int_equal(sync_now(), 1);
    assert_string_equal(fs_job(3)->partition, "staging");
    assert_int_equal(D.stale_rejected, 1);
    assert_int_equal(D.rebuilds, rebuilds);
    assert_int_equal(dt_metric(&D, "deepshare_stale_dispatches_total"), 1);
    /* and this leader dispatches job 2 and 3 itself, under its own epoch */
    pass_later(1);
    for (uint32_t id = 2; id <= 3; id++) {
        assert_string_equal(fs_job(id)->partition, "prod");
        assert_non_null(strstr(fs_job(id)->admin_comment, " epoch=9"));
    }
    assert_policy_ok();
}

/* /explain speaks the policy's own words from its state and the parameters it applies (ops->explain):
 * with no policy.m line the BE cap is DeepShare's default 4 x quota (the daemon once assumed 1 x), with
 * policy.m = 0.5 it is half the quota; under fifo there is no G, BE or cap, only its queue. Tenant a
 * (quota 2) holds its quota as G and one GPU as BE; its next one-GPU job can only borrow, and no GPU is
 * free. */
static void explain_cluster(void)
{
    running_on(1, "a", "prod", "G", 0);
    running_on(2, "a", "prod", "G", 1);
    running_on(3, "a", "batch", "BE", 2);
    running_on(4, "b", "prod", "G", 3);
    fs_add_job(5, "a", "staging", "gpus=1");
}

static void test_explain_from_policy(void **state)
{
    (void)state;
    explain_cluster();
    boot("deepshare");
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_int_equal(dt_jstate(&D, 5)->status, DS_JS_PENDING);
    assert_true(dt_explain_has(&D, 5, "job 5: tenant a, user ua, 1 GPU, pending under policy deepshare; requeued 0 times\n"));
    assert_true(dt_explain_has(&D, 5, "so it can only borrow as best effort (BE cap 8 = m 4 x quota; 1 held or claimed ahead of it)"));
    assert_true(dt_explain_has(&D, 5, "smoothed 1.00 (served, theta 0.95), band 20 of width 0.05\n"));
    assert_true(dt_explain_has(&D, 5, "  free GPUs per node: n0:0\n"));
    assert_true(dt_explain_has(&D, 3, "  class: runs as best effort (BE)"));
    assert_true(dt_explain_has(&D, 3, "  runs on n0 GPU 2\n"));
    daemon_teardown(&D);
    fs_reset();
    fs_add_node("n0", 32, 4);
    explain_cluster();
    boot_param = "m=0.5";
    boot("deepshare");
    boot_param = NULL;
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_true(dt_explain_has(&D, 5, "over its quota and its BE cap (BE held or claimed ahead of it 1 + 1 > BE cap 1 = m 0.5 x quota 2)"));
    daemon_teardown(&D);
    fs_reset();
    fs_add_node("n0", 32, 4);
    explain_cluster();
    boot("fifo");
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_true(dt_explain_has(&D, 5, "pending under policy fifo"));
    assert_true(dt_explain_has(&D, 5, "  order: first in, first out (submit time); 1 of 1 waiting\n"));
    assert_true(dt_explain_has(&D, 5, "  no fit: no node has 1 free GPU"));
    char *x = daemon_explain(&D, 5);
    assert_null(strstr(x, "BE"));
    assert_null(strstr(x, "cap"));
    assert_null(strstr(x, "guaranteed"));
    assert_null(strstr(x, "QAD"));
    free(x);
}

/* squeue shows the policy's order, whatever the policy: the first pending jobs get priorities 2000, 1999,
 * ... in the order the policy's next pass considers them (under fifo: submit order), the others keep 1000. */
static void test_priorities_follow_policy_order(void **state)
{
    (void)state;
    explain_cluster();
    fs_add_job(6, "b", "staging", "gpus=1");
    fs_add_job(7, "a", "staging", "gpus=2");
    boot("fifo");
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    daemon_cycle_figures(&D);
    assert_int_equal(fs_job(5)->priority, 2000);
    assert_int_equal(fs_job(6)->priority, 1999);
    assert_int_equal(fs_job(7)->priority, 1998);
}

/* Regression: a shard job pinned to a GPU index at its first start (Slurm 22.05 never starts it on another)
 * finds that GPU busy. deepshared holds it out of the policy's pass (before, the policy chose it, the daemon took the
 * start back and the GPUs stayed idle for the pass): the job queued behind it gets the free GPUs in the
 * same pass; no preemption is heard of or counted. */
static void test_pin_busy_held(void **state)
{
    (void)state;
    running_on(1, "a", "prod", "G", 0);
    requeued_pinned_to_0(2);
    fs_add_job(4, "a", "staging", "gpus=3");
    boot("deepshare");
    assert_int_equal(sync_now(), 1);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_PENDING);
    daemon_pass(&D, 1);
    int32_t s = daemon_slot_of(&D, 2);
    assert_int_equal(D.undone, 0);
    assert_int_equal(D.nheld, 1);
    assert_true(dt_metric(&D, "deepshare_jobs_held") == 1);
    assert_int_equal(fs_calls(FS_DISPATCH), 1); /* job 4, on the 3 GPUs left */
    assert_int_equal(fs_last_id(FS_DISPATCH), 4);
    assert_int_equal(dt_jstate(&D, 4)->status, DS_JS_RUNNING);
    assert_non_null(strstr(D.slot[s].why, "pinned at its first start"));
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_PENDING);
    assert_int_equal(dt_jstate(&D, 2)->preemptions, 1); /* Slurm's restart count, nothing added */
    assert_true(dt_jstate(&D, 2)->overhead == 0);
    assert_int_equal(D.e->n_preemptions, 0);
    assert_policy_ok(); /* DeepShare: "a G job was preempted" on the code that preempted here */

    /* the pinned GPU frees up: the job goes there, and its pin is not sent again */
    fs_job(1)->state = SL_COMPLETED;
    fs_job(1)->end = 10;
    fs_touch();
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_policy_ok();
    assert_int_equal(D.nheld, 0);
    assert_int_equal(fs_calls(FS_DISPATCH), 2);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_RUNNING);
    assert_int_equal(engine_gpu(2), 0);
    assert_int_equal(fs_job(2)->ngpu_idx, 1);
    assert_string_equal(fs_job(2)->req_nodes, "n0");
    assert_int_equal(D.e->n_preemptions, 0);
}

/* A start Slurm refuses (here the dispatch call fails) is taken back and its job held for the rest of
 * the pass; the policy runs again, so the job behind it starts in the same pass, and the first one is
 * tried again in the next. */
static void test_refused_start_gpus_go_to_next_job(void **state)
{
    (void)state;
    for (uint32_t id = 1; id <= 3; id++) fs_add_job(id, "a", "staging", "gpus=2");
    boot("deepshare");
    assert_int_equal(sync_now(), 1);
    fs_fail(FS_DISPATCH, 1);
    daemon_pass(&D, 1);
    assert_policy_ok();
    assert_int_equal(D.undone, 1);
    uint32_t refused = 0;
    for (uint32_t id = 1; id <= 3; id++)
        if (dt_jstate(&D, id)->status == DS_JS_PENDING) refused = id;
    assert_true(refused > 0);
    /* two jobs fill the 4 GPUs: the one the failed dispatch offered went to the third job */
    assert_int_equal(fs_calls(FS_DISPATCH), 3);
    assert_int_equal(D.dispatches, 2);
    assert_int_equal(D.e->n_preemptions, 0);
    assert_false(dt_jstate(&D, refused)->held); /* held for that pass only */
    assert_true(dt_explain_has(&D, refused, "last dispatch failed"));
    assert_true(dt_metric(&D, "deepshare_starts_taken_back_total") == 1);
    /* tried again once GPUs free up */
    fs_run_dispatched("staging");
    for (uint32_t id = 1; id <= 3; id++)
        if (id != refused) fs_job(id)->state = SL_COMPLETED, fs_job(id)->end = 10;
    fs_touch();
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    assert_policy_ok();
    assert_int_equal(dt_jstate(&D, refused)->status, DS_JS_RUNNING);
    assert_int_equal(fs_calls(FS_DISPATCH), 4);
}

/* The same pinned shard job with a second node whose GPU 0 is free: instead of taking the start back (and
 * leaving the GPUs it was offered idle for the pass), deepshared starts it there. */
static void test_pin_busy_moves_to_free_index(void **state)
{
    (void)state;
    fs_add_node("n1", 32, 4);
    running_on(1, "a", "prod", "G", 0);
    running_on(3, "a", "prod", "G", 1);
    snprintf(fs_job(3)->nodes, sizeof fs_job(3)->nodes, "n1");
    snprintf(fs_job(3)->req_nodes, sizeof fs_job(3)->req_nodes, "n1");
    requeued_pinned_to_0(2);
    boot("deepshare");
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_policy_ok();
    assert_int_equal(D.undone, 0);
    assert_int_equal(fs_calls(FS_DISPATCH), 1);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_RUNNING);
    assert_string_equal(fs_job(2)->req_nodes, "n1");
    assert_int_equal(engine_gpu(2), 4); /* n1's GPU 0 */
}

/* A requeued whole-GPU job whose GPU indices of its last start are busy (issue #26: requeued best-effort
 * jobs waited for their exact indices): with repin = 0 it waits; with repin = 1 it is not held; it starts on
 * the GPUs the policy gives it, its old
 * pins cleared first and the new ones sent (Slurm 22.05 adds a request to the job's earlier one), and the
 * engine, the fake Slurm and the admin comment agree on the new indices. */
static void test_repin_whole_gpu_job(void **state)
{
    (void)state;
    static const int pins[] = {0, 1};
    running_on(1, "a", "prod", "G", 0);
    requeued_pinned(2, "b", 0, pins, 2);
    /* repin = 0: it waits for its indices, held out of the pass */
    boot("deepshare");
    D.cfg.repin = 0;
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_int_equal(D.nheld, 1);
    assert_int_equal(fs_calls(FS_DISPATCH), 0);
    assert_true(dt_explain_has(&D, 2, "pinned at its first start"));
    daemon_teardown(&D);
    fs_touch();
    boot("deepshare");
    D.cfg.repin = 1;
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_policy_ok();
    assert_int_equal(D.nheld, 0);
    assert_int_equal(D.undone, 0);
    assert_int_equal(fs_calls(FS_DISPATCH), 1);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_RUNNING);
    const sl_job_t *j = fs_job(2);
    assert_int_equal(j->ngpu_idx, 2); /* cleared, then the two new pins: not four */
    int32_t s = daemon_slot_of(&D, 2);
    const int32_t *g = ds_engine_job_gpus(D.e, s);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(j->gpu_idx[i], g[i]); /* one node: engine GPU = index */
        assert_int_equal(D.slot[s].pin[i], g[i]);
        assert_true(g[i] != 0); /* job 1's GPU */
    }
    char want[64];
    snprintf(want, sizeof want, "pin=%d,%d", g[0], g[1]);
    assert_non_null(strstr(j->admin_comment, want));
    assert_true(dt_metric(&D, "deepshare_repins_total") == 1);
    assert_int_equal(fs_run_dispatched("staging"), 1);
    assert_int_equal(sync_now(), 1);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_RUNNING);
    assert_int_equal(engine_gpu(2), g[0]);
    assert_policy_ok();
}


/* repin = 2: a requeued whole-GPU job whose first indices are busy is left in the pass; started
 * as guaranteed (its tenant's quota has room) it is pinned anew where the policy puts it; started as best
 * effort (over its quota) the start is taken back and it waits for its indices, as with repin = 0. */
/* Nothing shares a GPU (gpu_sharing = 0, pin_whole_gpus = 0): a whole-GPU job asks Slurm for N GPUs of its
 * node, once in its life, and Slurm picks them; requeued, it restarts on whatever GPUs are free, where a
 * pinned one would wait for its first indices (test_repin_*), and the engine follows Slurm's pick. */
static void test_unpinned_first_dispatch(void **state)
{
    (void)state;
    running_on(1, "a", "prod", "G", 0);
    fs_add_job(2, "b", "staging", "gpus=2");
    boot("deepshare");
    D.cfg.pin_whole_gpus = 0;
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_policy_ok();
    assert_int_equal(fs_calls(FS_DISPATCH), 1);
    const sl_job_t *j = fs_job(2);
    assert_string_equal(j->tres_per_node, "gres:gpu:2");
    assert_int_equal(j->untyped_gpus, 2);
    assert_int_equal(j->ngpu_idx, 0);
    assert_non_null(strstr(j->admin_comment, "gres=gpu pin="));
    assert_null(strstr(j->admin_comment, "pin=1"));
    assert_int_equal(fs_run_dispatched("staging"), 1);
    assert_int_equal(j->ngpu_idx, 2);
    assert_int_equal(j->gpu_idx[0], 1); /* Slurm's pick: the lowest free indices */
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_policy_ok();
    int32_t s = daemon_slot_of(&D, 2);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_RUNNING);
    assert_int_equal(ds_engine_job_gpus(D.e, s)[0] - D.e->nodes[0].gpu0, 1);
    assert_int_equal(ds_engine_job_gpus(D.e, s)[1] - D.e->nodes[0].gpu0, 2);
}

static void test_unpinned_requeued_restarts_anywhere(void **state)
{
    (void)state;
    running_on(1, "a", "prod", "G", 0);
    running_on(3, "a", "prod", "G", 1);
    /* job 2 ran on indices 0 and 1 before its requeue; they are busy now */
    sl_job_t *r = fs_add_job(2, "b", "staging", "gpus=2");
    fs_request_gpus(r, NULL, 2);
    snprintf(r->admin_comment, sizeof r->admin_comment, "deepshare class=BE gres=gpu pin=");
    r->restarts = 1;
    boot("deepshare");
    D.cfg.pin_whole_gpus = 0;
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_policy_ok();
    assert_int_equal(D.nheld, 0);
    assert_int_equal(fs_calls(FS_DISPATCH), 1);
    const sl_job_t *j = fs_job(2);
    assert_string_equal(j->tres_per_node, "gres:gpu:2"); /* asked once: not asked again */
    assert_int_equal(j->gres_gpus, 2);
    assert_int_equal(fs_run_dispatched("staging"), 1);
    assert_int_equal(j->gpu_idx[0], 2);
    assert_int_equal(j->gpu_idx[1], 3);
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_policy_ok();
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_RUNNING);
    assert_true(dt_metric(&D, "deepshare_repins_total") == 0);
}

/* Slurm starts two jobs sent to one node in the other order than deepshared placed them (on the local cluster:
 * a prod job before a batch job dispatched a pass earlier, as prod's priority tier is higher), so each holds
 * GPUs the engine gave the other. The sync moves both at once; before, the first move found its GPUs taken
 * and the engine was rebuilt from Slurm (2-3 times a live replay, each resetting the policy's smoothed QAD). */
static void test_unpinned_swapped_starts(void **state)
{
    (void)state;
    fs_add_job(2, "a", "staging", "gpus=1");
    boot("deepshare");
    D.cfg.pin_whole_gpus = 0;
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_int_equal(fs_calls(FS_DISPATCH), 1);
    int32_t g0 = D.e->nodes[0].gpu0;
    assert_int_equal(engine_gpu(2) - g0, 0);
    fs_add_job(3, "b", "staging", "gpus=2");
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_int_equal(fs_calls(FS_DISPATCH), 2);
    assert_int_equal(engine_gpu(3) - g0, 1);
    double rebuilds = dt_metric(&D, "deepshare_rebuilds_total");
    assert_int_equal(fs_run_job(3, "staging"), 1);
    assert_int_equal(fs_run_job(2, "staging"), 1);
    assert_int_equal(fs_job(3)->gpu_idx[0], 0);
    assert_int_equal(fs_job(3)->gpu_idx[1], 1);
    assert_int_equal(fs_job(2)->gpu_idx[0], 2);
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_policy_ok();
    assert_true(dt_metric(&D, "deepshare_rebuilds_total") == rebuilds);
    int32_t s3 = daemon_slot_of(&D, 3);
    assert_int_equal(ds_engine_job_gpus(D.e, s3)[0] - g0, 0);
    assert_int_equal(ds_engine_job_gpus(D.e, s3)[1] - g0, 1);
    assert_int_equal(engine_gpu(2) - g0, 2);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_RUNNING);
    assert_int_equal(dt_jstate(&D, 3)->status, DS_JS_RUNNING);
}

/* A job that asked typed GPUs itself (--gres=gpu:g1:1,gpu:g2:1) is pinned as before: 22.05 keeps its types
 * through a clear and refuses an untyped request beside them (seen on the local cluster). */
static void test_unpinned_typed_request_pinned(void **state)
{
    (void)state;
    sl_job_t *r = fs_add_job(2, "b", "staging", "");
    static const int idx[] = {1, 2};
    fs_pin(r, "", idx, 2);
    r->gres_gpus = 2; /* as sl_parse_tres counts it */
    boot("deepshare");
    D.cfg.pin_whole_gpus = 0;
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_policy_ok();
    assert_int_equal(D.errors, 0);
    assert_int_equal(fs_calls(FS_DISPATCH), 1);
    assert_int_equal(fs_run_dispatched("staging"), 1);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_RUNNING);
}

/* pin_whole_gpus = 1 keeps the pins (the same job waits for its first indices, as with sharing on). */
static void test_unpinned_off_keeps_pins(void **state)
{
    (void)state;
    static const int pins[] = {0, 1};
    running_on(1, "a", "prod", "G", 0);
    requeued_pinned(2, "b", 0, pins, 2);
    boot("deepshare");
    assert_int_equal(D.cfg.pin_whole_gpus, 1);
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_int_equal(fs_calls(FS_DISPATCH), 0);
    assert_int_equal(D.nheld, 1);
}

static void test_repin_guaranteed_only(void **state)
{
    (void)state;
    static const int pins[] = {0, 1};
    running_on(1, "a", "prod", "G", 0);
    requeued_pinned(2, "b", 0, pins, 2);
    boot("deepshare"); /* b's quota 2: job 2 is G */
    D.cfg.repin = 2;
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_policy_ok();
    assert_int_equal(D.nheld, 0);
    assert_int_equal(fs_calls(FS_DISPATCH), 1);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_RUNNING);
    int32_t s = daemon_slot_of(&D, 2);
    assert_true(ds_engine_job_gpus(D.e, s)[0] != 0);
    assert_non_null(strstr(fs_job(2)->admin_comment, "class=G"));
    assert_true(dt_metric(&D, "deepshare_repins_total") == 1);
}

static void test_repin_not_best_effort(void **state)
{
    (void)state;
    static const int pins[] = {0, 1};
    running_on(1, "a", "prod", "G", 0);
    requeued_pinned(2, "b", 0, pins, 2);
    /* b's quota 1: job 2 (2 GPUs) can only be best effort: not sent anywhere but its indices */
    static const char *const t[] = {"a", "b"};
    static const int q[] = {2, 1};
    boot_daemon("deepshare", t, q, 2);
    D.cfg.repin = 2;
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_policy_ok();
    assert_int_equal(fs_calls(FS_DISPATCH), 0);
    assert_true(D.undone >= 1);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_PENDING);
    assert_true(dt_explain_has(&D, 2, "pinned at its first start"));
}

/* The same job after a restart of deepshared: the rebuild reads its new pins from Slurm (its GRES and the
 * admin comment), so the engine holds the GPUs Slurm runs it on. Requeued again, it is sent back onto its
 * latest indices without a new pin when they are free (nothing to clear then). */
static void test_repin_survives_rebuild(void **state)
{
    (void)state;
    static const int pins[] = {0, 1};
    running_on(1, "a", "prod", "G", 0);
    requeued_pinned(2, "b", 0, pins, 2);
    boot("deepshare");
    D.cfg.repin = 1;
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_int_equal(fs_run_dispatched("staging"), 1);
    int32_t s = daemon_slot_of(&D, 2);
    int32_t g0 = ds_engine_job_gpus(D.e, s)[0], g1 = ds_engine_job_gpus(D.e, s)[1];
    daemon_teardown(&D);
    fs_touch();
    boot("deepshare");
    D.cfg.repin = 1;
    assert_int_equal(sync_now(), 1);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_RUNNING);
    s = daemon_slot_of(&D, 2);
    assert_int_equal(ds_engine_job_gpus(D.e, s)[0], g0);
    assert_int_equal(ds_engine_job_gpus(D.e, s)[1], g1);
    assert_int_equal(D.slot[s].npin, 2);
    assert_int_equal(D.slot[s].pin[0], g0);
    assert_policy_ok();
    /* Slurm requeues it (a node failure, say) and deepshared sends it again: its indices are free */
    sl_job_t *j = fs_job(2);
    j->state = SL_PENDING;
    j->nodes[0] = 0;
    j->restarts++;
    snprintf(j->partition, sizeof j->partition, "staging");
    j->req_nodes[0] = 0;
    fs_touch();
    assert_int_equal(sync_now(), 1);
    D.slot[daemon_slot_of(&D, 2)].t_requeue -= D_REQUEUE_SETTLE; /* past the settle time of its requeue */
    int before = fs_calls(FS_DISPATCH);
    pass_later(1);
    assert_policy_ok();
    assert_int_equal(fs_calls(FS_DISPATCH), before + 1);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_RUNNING);
    assert_int_equal(fs_job(2)->ngpu_idx, 2);
    assert_int_equal(fs_run_dispatched("staging"), 1);
    assert_int_equal(sync_now(), 1);
    s = daemon_slot_of(&D, 2);
    const int32_t *g = ds_engine_job_gpus(D.e, s);
    for (int i = 0; i < 2; i++) assert_int_equal(fs_job(2)->gpu_idx[i], g[i]);
}

/* Tenant a borrows b's idle GPUs; b's jobs arrive and DeepShare reclaims them: the borrowers are
 * requeued held in Slurm, moved back to staging on the next sync, and b's jobs are dispatched. */
static void test_requeue_then_restage(void **state)
{
    (void)state;
    for (uint32_t id = 1; id <= 4; id++) fs_add_job(id, "a", "staging", "gpus=1");
    boot("deepshare");
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_int_equal(fs_calls(FS_DISPATCH), 4);
    assert_int_equal(fs_run_dispatched("staging"), 4);
    assert_int_equal(sync_now(), 1);
    int nbe = 0;
    for (uint32_t id = 1; id <= 4; id++) nbe += dt_jstate(&D, id)->klass == DS_CLASS_BE;
    assert_int_equal(nbe, 2);
    fs_add_job(5, "b", "staging", "gpus=1");
    fs_add_job(6, "b", "staging", "gpus=1");
    assert_int_equal(sync_now(), 1);
    pass_later(5);
    assert_policy_ok();
    assert_int_equal(fs_calls(FS_REQUEUE), 2);
    assert_int_equal(D.requeues, 2);
    for (uint32_t id = 1; id <= 4; id++) {
        if (dt_jstate(&D, id)->status != DS_JS_PENDING) continue;
        assert_int_equal(dt_jstate(&D, id)->klass, DS_CLASS_BE);
        assert_int_equal(fs_job(id)->held, 1);
        assert_string_equal(fs_job(id)->partition, "batch");
    }
    /* the requeue has completed in Slurm: back to staging, released */
    assert_int_equal(sync_now(), 1);
    assert_int_equal(fs_calls(FS_RESTAGE), 2);
    int staged = 0;
    for (uint32_t id = 1; id <= 4; id++)
        if (!strcmp(fs_job(id)->partition, "staging")) staged++, assert_int_equal(fs_job(id)->held, 0);
    assert_int_equal(staged, 2);
    /* b's jobs were started in the pass that made room for them */
    assert_int_equal(dt_jstate(&D, 5)->status, DS_JS_RUNNING);
    assert_int_equal(dt_jstate(&D, 6)->status, DS_JS_RUNNING);
    assert_int_equal(fs_calls(FS_DISPATCH), 6);
    assert_policy_ok();

    /* b's jobs end at once: the GPUs are free, but a start within seconds of a requeue is killed by Slurm
     * (job credential revoked, seen in tests/soak_daemon.sh), so the requeued jobs wait a moment */
    fs_run_dispatched("staging");
    for (uint32_t id = 5; id <= 6; id++) fs_job(id)->state = SL_COMPLETED, fs_job(id)->end = 20;
    fs_touch();
    assert_int_equal(sync_now(), 1);
    int64_t undone = D.undone;
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), 6);
    assert_int_equal(D.undone, undone); /* held out of the pass, not started and taken back */
    assert_int_equal(D.nheld, 2);
    for (uint32_t id = 1; id <= 4; id++) {
        if (strcmp(fs_job(id)->partition, "staging")) continue;
        assert_int_equal(dt_jstate(&D, id)->status, DS_JS_PENDING);
        assert_true(dt_explain_has(&D, id, "job credential revoked"));
        D.slot[daemon_slot_of(&D, id)].t_requeue -= D_REQUEUE_SETTLE; /* the seconds pass */
    }
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), 8);
    assert_policy_ok();
}

/* A borrowed job whose script ends between the daemon's last load and its requeue: Slurm would requeue
 * it as readily as a running job and run it again (seen once in the soak, 9 ms after the end). The
 * daemon asks slurmctld first and leaves it to finish when slurmctld has heard of the end (race 0);
 * when slurmctld has not heard of it yet either (race 1) the requeue still lands: that window is
 * Slurm's own, and its preempt/qos REQUEUE has it too. */
static void requeue_race_case(int race)
{
    fs_reset();
    fs_add_node("n0", 32, 4);
    for (uint32_t id = 1; id <= 4; id++) fs_add_job(id, "a", "staging", "gpus=1");
    boot("deepshare");
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_int_equal(fs_run_dispatched("staging"), 4);
    assert_int_equal(sync_now(), 1);
    uint32_t be[2];
    int nbe = 0;
    for (uint32_t id = 1; id <= 4; id++)
        if (dt_jstate(&D, id)->klass == DS_CLASS_BE) be[nbe++] = id;
    assert_int_equal(nbe, 2);
    fs_add_job(5, "b", "staging", "gpus=1");
    fs_add_job(6, "b", "staging", "gpus=1");
    assert_int_equal(sync_now(), 1);
    fs_end_script(be[0], race); /* after the load the pass works from */
    pass_later(5);
    assert_int_equal(fs_calls(FS_LOAD_JOB), 2);
    assert_int_equal(fs_calls(FS_REQUEUE), race ? 2 : 1);
    assert_int_equal(D.requeues, race ? 2 : 1);
    assert_int_equal(D.ended_before_requeue, race ? 0 : 1);
    assert_true(dt_metric(&D, "deepshare_requeues_skipped_total") == (race ? 0 : 1));
    assert_int_equal(fs_reruns(), race);
    if (!race) assert_int_equal(fs_job(be[0])->restarts, 0);
    /* the next sync sees the end (or the requeue) and b's two jobs run */
    fs_touch();
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    fs_run_dispatched("staging");
    assert_int_equal(sync_now(), 1);
    assert_policy_ok();
    for (uint32_t id = 5; id <= 6; id++) assert_int_equal(fs_job(id)->state, SL_RUNNING);
    daemon_teardown(&D);
}

static void test_requeue_of_ended_job(void **state)
{
    (void)state;
    requeue_race_case(0);
    requeue_race_case(1);
}

/* slurmctld errors: a failed load leaves the state as it was; a refused dispatch is taken back and
 * retried; a failed requeue leaves the job running in Slurm, which the next sync adopts again. */
static void test_slurmctld_errors(void **state)
{
    (void)state;
    fs_add_job(1, "a", "staging", "gpus=1");
    boot("deepshare");
    char err[300];
    fs_fail(FS_LOAD_NODES, 1);
    assert_int_equal(daemon_sync(&D, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "Unable to contact"));
    assert_null(D.e);
    fs_fail(FS_LOAD_JOBS, 1);
    assert_int_equal(daemon_sync(&D, 0, err, sizeof err), -1);
    assert_null(D.e);
    assert_int_equal(sync_now(), 1);
    assert_int_equal(dt_jstate(&D, 1)->status, DS_JS_PENDING);

    fs_fail(FS_DISPATCH, 1);
    daemon_pass(&D, 1);
    assert_int_equal(D.errors, 1);
    assert_int_equal(D.undone, 1);
    assert_int_equal(dt_jstate(&D, 1)->status, DS_JS_PENDING);
    assert_non_null(strstr(D.slot[daemon_slot_of(&D, 1)].why, "last dispatch failed"));
    assert_int_equal(D.e->n_preemptions, 0);
    assert_policy_ok();
    daemon_pass(&D, 1);
    assert_int_equal(fs_calls(FS_DISPATCH), 2);
    assert_int_equal(dt_jstate(&D, 1)->status, DS_JS_RUNNING);
    assert_int_equal(fs_run_dispatched("staging"), 1);
    assert_int_equal(sync_now(), 1);

    /* a borrower that cannot be requeued: Slurm still runs it, so the next sync adopts it again */
    fs_add_job(2, "a", "staging", "gpus=1");
    fs_add_job(3, "a", "staging", "gpus=1");
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_int_equal(fs_run_dispatched("staging"), 2);
    assert_int_equal(sync_now(), 1);
    fs_add_job(4, "b", "staging", "gpus=1");
    fs_add_job(5, "b", "staging", "gpus=1");
    assert_int_equal(sync_now(), 1);
    fs_fail(FS_REQUEUE, 99);
    int64_t errors = D.errors, rebuilds = D.rebuilds;
    pass_later(5);
    assert_true(D.errors > errors);
    assert_int_equal(D.requeues, 0);
    fs_touch();
    assert_int_equal(sync_now(), 1);
    assert_int_equal(D.rebuilds, rebuilds + 1);
    for (uint32_t id = 1; id <= 3; id++) assert_int_equal(dt_jstate(&D, id)->status, DS_JS_RUNNING);
    /* one of b's jobs took the free GPU; the other was dispatched onto the GPU the borrower still holds:
     * back to staging, pending here (it used to be adopted there too: two residents on a GPU of k = 1) */
    int staged = 0;
    for (uint32_t id = 4; id <= 5; id++) {
        if (dt_jstate(&D, id)->status == DS_JS_RUNNING) continue;
        staged++;
        assert_int_equal(dt_jstate(&D, id)->status, DS_JS_PENDING);
        assert_string_equal(fs_job(id)->partition, "staging");
    }
    assert_int_equal(staged, 1);
    assert_policy_ok();
}

/* Class 7 of issue 13: Slurm 22.05 comes back from a slurmctld restart with shard:g1:0 on n0. A one-GPU
 * shard job never goes there (it used to wait in Slurm and bounce between partitions every
 * dispatch_timeout), explain and the metrics say why, and the GPU takes shard jobs again once its shards
 * are back. */
static void test_shardless_gpu(void **state)
{
    (void)state;
    fs_add_node("n1", 32, 4);
    static const char *const t[] = {"a", "b"};
    static const int q[] = {4, 4};
    boot_daemon("deepshare", t, q, 2);
    D.cfg.gpu_sharing = 1;
    /* n0 g0..g2 busy with whole-GPU jobs, n1 full: the free GPUs are n0 g3 and nothing else */
    for (uint32_t id = 1; id <= 3; id++) running_on(id, "a", "prod", "G", (int)id - 1);
    for (int g = 0; g < 4; g++) {
        sl_job_t *j = running_on(10 + (uint32_t)g, "b", "prod", "G", g);
        snprintf(j->nodes, sizeof j->nodes, "n1");
        snprintf(j->req_nodes, sizeof j->req_nodes, "n1");
    }
    fs_set_shards("n0", 3, 0);
    assert_int_equal(sync_nodes(), 1);
    assert_int_equal(D.nshardless, 1);
    assert_true(dt_metric(&D, "deepshare_gpus_shardless") == 1);
    assert_true(dt_metric(&D, "deepshare_gpu_shardless{node=\"n0\",gpu=\"g3\"}") == 1);

    /* a requeued shard job pinned to g3 (its first start): g3 of n0 has no shards, n1's g3 is busy: it waits */
    int three = 3;
    sl_job_t *p = fs_add_job(20, "b", "staging", "gpus=1");
    p->on_shard = 1;
    fs_pin(p, "", &three, 1);
    snprintf(p->admin_comment, sizeof p->admin_comment, "deepshare class=BE gres=shard pin=3");
    p->restarts = 1;
    assert_int_equal(sync_nodes(), 1);
    int calls = fs_calls(FS_DISPATCH);
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), calls);
    assert_int_equal(dt_jstate(&D, 20)->status, DS_JS_PENDING);
    assert_true(dt_explain_has(&D, 20, "GPU n0:g3 lost its shards after a slurmctld restart: no shard jobs placed there"));
    assert_true(dt_explain_has(&D, 20, "shards: GPU n0:g3 lost its shards"));
    assert_policy_ok();

    /* n1's g3 frees up: the pinned job goes there (same index, other node), not onto n0 g3 */
    fs_job(13)->state = SL_COMPLETED;
    fs_job(13)->end = 30;
    fs_touch();
    assert_int_equal(sync_nodes(), 1);
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), calls + 1);
    assert_string_equal(fs_job(20)->req_nodes, "n1");
    assert_int_equal(fs_run_dispatched("staging"), 1);
    assert_int_equal(sync_now(), 1);
    assert_int_equal(dt_jstate(&D, 20)->status, DS_JS_RUNNING);

    /* an unpinned one-GPU job: the only free GPU is n0 g3, so it takes that GPU whole (gpu:g3:1, no shard) */
    fs_add_job(21, "a", "staging", "gpus=1");
    assert_int_equal(sync_nodes(), 1);
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), calls + 2);
    assert_string_equal(fs_job(21)->req_nodes, "n0");
    assert_int_equal(fs_job(21)->gpu_idx[0], 3);
    assert_int_equal(fs_job(21)->on_shard, 0);
    assert_non_null(strstr(fs_job(21)->admin_comment, "gres=gpu"));
    assert_int_equal(fs_run_dispatched("staging"), 1);
    assert_int_equal(sync_now(), 1);
    assert_true(dt_explain_has(&D, 21, "runs on the whole GPU"));
    assert_true(dt_metric(&D, "deepshare_shard_moves_total") >= 1);
    assert_policy_ok();

    /* shards come back (logged once); the gauge drops; the next one-GPU job on n0 g3 goes onto a shard */
    fs_job(21)->state = SL_COMPLETED;
    fs_job(21)->end = 40;
    fs_set_shards("n0", 3, 2);
    fs_touch();
    assert_int_equal(sync_nodes(), 1);
    assert_int_equal(D.nshardless, 0);
    assert_true(dt_metric(&D, "deepshare_gpus_shardless") == 0);
    assert_true(dt_metric(&D, "deepshare_gpu_shardless{node=\"n0\",gpu=\"g3\"}") == -1);
    fs_add_job(22, "a", "staging", "gpus=1");
    assert_int_equal(sync_nodes(), 1);
    pass_later(1);
    assert_string_equal(fs_job(22)->req_nodes, "n0");
    assert_int_equal(fs_job(22)->gpu_idx[0], 3);
    assert_int_equal(fs_job(22)->on_shard, 1);
    assert_int_equal(fs_run_dispatched("staging"), 1);
    assert_policy_ok();
}

/* A shard dispatch waiting on a GPU whose shards vanish after it was sent goes back to staging at once
 * (not after dispatch_timeout). A dispatch Slurm never starts is taken back after dispatch_timeout, and
 * the job is not sent to that GPU again: no job bounces between partitions forever. */
static void test_dispatch_bounce_bounded(void **state)
{
    (void)state;
    boot("deepshare");
    D.cfg.gpu_sharing = 1;
    D.cfg.dispatch_timeout = 0.001;
    fs_add_job(1, "a", "staging", "gpus=1");
    assert_int_equal(sync_nodes(), 1);
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), 1);
    int first = fs_job(1)->gpu_idx[0];
    assert_int_equal(fs_job(1)->on_shard, 1);
    /* slurmctld restarts and that GPU's shards are gone: the waiting dispatch comes back right away */
    fs_set_shards("n0", first, 0);
    fs_touch();
    assert_int_equal(sync_nodes(), 1);
    assert_int_equal(fs_calls(FS_RESTAGE), 1);
    assert_string_equal(fs_job(1)->partition, "staging");
    assert_true(dt_metric(&D, "deepshare_dispatch_bounces_total") == 1);
    /* it keeps its shard pin (Slurm 22.05: once per life), and the one node has no shards on that index:
     * it waits, and says why */
    fs_touch();
    assert_int_equal(sync_nodes(), 1);
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), 1);
    assert_true(dt_explain_has(&D, 1, "lost its shards"));
    /* the shards come back (slurmctld restarted with nothing running): that GPU is tried again at once,
     * though the job bounced from it */
    fs_set_shards("n0", first, 2);
    fs_touch();
    assert_int_equal(sync_nodes(), 1);
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), 2);
    assert_int_equal(fs_job(1)->gpu_idx[0], first);
    daemon_teardown(&D);

    /* a dispatch that never starts (Slurm keeps it pending for a reason of its own, e.g. shards a
     * slurmctld restart left allocated): back to staging after dispatch_timeout, then kept off that GPU */
    fs_reset();
    fs_add_node("n0", 32, 4);
    fs_add_node("n1", 32, 4);
    boot("deepshare");
    D.cfg.dispatch_timeout = 0.001;
    D.cfg.gpu_sharing = 1; /* a shard job: Slurm 22.05 starts it only on the index of its first shard pin */
    fs_add_job(2, "a", "staging", "gpus=1");
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), 1);
    assert_string_equal(fs_job(2)->partition, "prod");
    char node1[sizeof fs_job(2)->req_nodes];
    snprintf(node1, sizeof node1, "%s", fs_job(2)->req_nodes);
    int gpu = fs_job(2)->gpu_idx[0];
    usleep(2000);
    fs_touch();
    assert_int_equal(sync_now(), 1); /* past dispatch_timeout: back to staging */
    assert_string_equal(fs_job(2)->partition, "staging");
    fs_touch();
    assert_int_equal(sync_now(), 1);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_PENDING);
    assert_int_equal(D.bounces, 1);
    /* pinned to that index at its first dispatch: the same index of the other node */
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), 2);
    assert_int_equal(fs_job(2)->gpu_idx[0], gpu);
    assert_string_not_equal(fs_job(2)->req_nodes, node1);
    usleep(2000);
    fs_touch();
    assert_int_equal(sync_now(), 1);
    fs_touch();
    assert_int_equal(sync_now(), 1);
    assert_int_equal(D.bounces, 2);
    /* both GPUs of its index bounced it: it waits, and explain says why */
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), 2);
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_PENDING);
    assert_true(dt_explain_has(&D, 2, "came back to staging without a start"));
    assert_true(dt_metric(&D, "deepshare_dispatch_bounces_total") == 2);
    /* bounces are forgotten after a while: Slurm may have been repaired */
    for (int i = 0; i < D.nbounce; i++)
        for (int k = 0; k < D_BOUNCE_GPUS; k++) D.bounce[i].t[k] -= D_BOUNCE_FORGET;
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), 3);
    assert_policy_ok();
}

/* The soak's stuck jobs (issue 13): two shard jobs pinned to GPU indices 1 and 3 at their first start
 * wait in staging with nothing running. The policy starts the guaranteed one on a free GPU and the
 * best-effort one beside it (a BE job shares first when retention is predicted free), but neither index
 * is that GPU's and a shared start cannot be moved: both starts used to be taken back, and the same
 * pairing came back every pass, for good. Both must be dispatched, each on its own index. */
static void pinned_pair(void)
{
    for (int n = 1; n <= 3; n++) {
        char name[8];
        snprintf(name, sizeof name, "n%d", n);
        fs_add_node(name, 32, 4);
    }
    static const char *const t[] = {"a", "b"};
    static const int q[] = {4, 4};
    static const int pins[] = {1, 3};
    static const char *const comments[] = {"gpus=1 class=BE", "gpus=1"};
    for (int i = 0; i < 2; i++) {
        sl_job_t *j = fs_add_job(20 + (uint32_t)i, t[i], "staging", comments[i]);
        j->on_shard = 1;
        fs_pin(j, "", &pins[i], 1);
        snprintf(j->admin_comment, sizeof j->admin_comment, "deepshare class=%s gres=shard pin=%d", i ? "G" : "BE", pins[i]);
        j->req_nodes[0] = 0;
    }
    boot_daemon("deepshare", t, q, 2);
    D.cfg.k = 2;
    D.cfg.gpu_sharing = 1;
    assert_int_equal(sync_nodes(), 1);
    /* the pairing used to come back every pass: a few passes are as good as forever */
    for (int k = 0; k < 5 && fs_calls(FS_DISPATCH) < 2; k++) {
        pass_later(1);
        assert_policy_ok();
    }
    for (int i = 0; i < 2; i++) {
        uint32_t id = 20 + (uint32_t)i;
        if (dt_jstate(&D, id)->status != DS_JS_RUNNING) print_message("job %u: %s\n", id, D.slot[daemon_slot_of(&D, id)].why);
        assert_int_equal(dt_jstate(&D, id)->status, DS_JS_RUNNING);
        assert_int_equal(dt_jstate(&D, id)->shared, 0);
        assert_int_equal(fs_job(id)->gpu_idx[0], pins[i]);
        assert_int_equal(fs_job(id)->ngpu_idx, 1); /* the pin is not sent again */
        assert_int_equal(engine_gpu(id) % 4, pins[i]);
    }
    assert_int_equal(fs_calls(FS_DISPATCH), 2);
    assert_int_equal(fs_run_dispatched("staging"), 2);
}

static void test_pinned_pair_dispatched(void **state)
{
    (void)state;
    pinned_pair();
}

/* The same with colocation on memory fit alone (policy.interference-aware = 0), where the policy shares
 * only when no GPU is free: each job gets a GPU of its own. */
static void test_pinned_pair_dispatched_unaware(void **state)
{
    (void)state;
    boot_param = "interference-aware=0";
    pinned_pair();
    boot_param = NULL;
}

/* A slurmctld restart can leave shards allocated to no job (sinfo GresUsed "shard:g0:1(IDX:0)" on an idle
 * node), and Slurm then starts no job on that GPU, whole or shard. The soak saw a two-GPU job pinned to
 * indices 0 and 1 sent to four nodes in turn, 10 s each, all with such a shard on index 0 or 1 (4
 * bounces), and a shard job sent to two GPUs with one such shard of two. The daemon reads GresUsed: the
 * job goes to the one node without, at once; a shard job with no such GPU left waits, and explain and
 * the metrics say why. Nodes of two GPUs here, so that a two-GPU job needs a node's both (a whole-GPU
 * job is pinned anew wherever it restarts). */
static void test_leftover_shards_avoided(void **state)
{
    (void)state;
    fs_reset();
    fs_add_node("n0", 32, 2);
    for (int n = 1; n <= 3; n++) {
        char name[8];
        snprintf(name, sizeof name, "n%d", n);
        fs_add_node(name, 32, 2);
        if (n < 3) fs_set_phantom(name, 0, 1);
    }
    fs_set_phantom("n0", 0, 1);
    fs_set_phantom("n1", 1, 1);
    fs_model_gpus(1);
    static const int pins[] = {0, 1};
    sl_job_t *j = fs_add_job(30, "a", "staging", "gpus=2");
    fs_pin(j, "", pins, 2);
    j->req_nodes[0] = 0;
    snprintf(j->admin_comment, sizeof j->admin_comment, "deepshare class=G gres=gpu pin=0,1");
    j->restarts = 1;
    static const char *const t[] = {"a", "b"};
    static const int q[] = {4, 4};
    boot_daemon("deepshare", t, q, 2);
    D.cfg.k = 2;
    D.cfg.gpu_sharing = 1;
    assert_int_equal(sync_nodes(), 1);
    assert_int_equal(D.nleftover, 4);
    assert_true(dt_metric(&D, "deepshare_gpus_leftover_shards") == 4);
    pass_later(1);
    assert_policy_ok();
    assert_int_equal(fs_calls(FS_DISPATCH), 1);
    assert_string_equal(fs_job(30)->req_nodes, "n3");
    assert_int_equal(fs_job(30)->ngpu_idx, 2);
    assert_int_equal(fs_run_dispatched("staging"), 1);
    assert_int_equal(sync_nodes(), 1);
    assert_int_equal(dt_jstate(&D, 30)->status, DS_JS_RUNNING);
    assert_int_equal(D.nleftover, 4);

    /* a shard job pinned to index 0: every other GPU 0 has a leftover shard, or the job above: it waits */
    static const int zero = 0;
    requeued_pinned(31, "b", 1, &zero, 1);
    assert_int_equal(sync_nodes(), 1);
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), 1);
    assert_int_equal(dt_jstate(&D, 31)->status, DS_JS_PENDING);
    assert_true(dt_explain_has(&D, 31, "of no job since a slurmctld restart"));

    /* a second two-GPU job pinned to 0,1 has nowhere to go either */
    requeued_pinned(32, "b", 0, pins, 2);
    assert_int_equal(sync_nodes(), 1);
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), 1);
    assert_true(dt_explain_has(&D, 32, "of no job since a slurmctld restart"));

    /* job 30 ends: its GPUs (its shards were no leftovers) go to one of them, the only place either fits */
    fs_job(30)->state = SL_COMPLETED;
    fs_job(30)->end = 40;
    fs_touch();
    assert_int_equal(sync_now(), 1);
    assert_int_equal(D.nleftover, 4);
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), 2);
    assert_string_equal(fs_job(fs_last_id(FS_DISPATCH))->req_nodes, "n3");
    assert_int_equal(fs_run_dispatched("staging"), 1);
    assert_int_equal(sync_now(), 1);

    /* the leftovers go (slurmctld restarted with nothing on them): logged, and the job is placed */
    for (int n = 0; n <= 2; n++) {
        char name[8];
        snprintf(name, sizeof name, "n%d", n);
        for (int g = 0; g < 4; g++) fs_set_phantom(name, g, 0);
    }
    fs_touch();
    assert_int_equal(sync_nodes(), 1);
    assert_int_equal(D.nleftover, 0);
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), 3);
    assert_int_equal(fs_run_dispatched("staging"), 1);
    assert_int_equal(fs_job(31)->state, SL_RUNNING);
    assert_int_equal(fs_job(32)->state, SL_RUNNING);
    assert_int_equal(D.bounces, 0);
    assert_policy_ok();
}

/* A job that ended is finished in the engine at once, but Slurm holds its GPUs until it has completed:
 * the next job waits for that (explain says so) and is dispatched there once the GPU is released. */
static void test_completing_gpu_not_offered(void **state)
{
    (void)state;
    for (uint32_t id = 1; id <= 4; id++) running_on(id, id <= 2 ? "a" : "b", "prod", "G", (int)id - 1);
    fs_add_job(5, "a", "staging", "gpus=1");
    boot("deepshare");
    assert_int_equal(sync_nodes(), 1);
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), 0);
    fs_job(3)->state = SL_COMPLETED;
    fs_job(3)->completing = 1;
    fs_job(3)->end = 20;
    fs_touch();
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), 0);
    assert_true(dt_explain_has(&D, 5, "still completing in Slurm"));
    fs_job(3)->completing = 0;
    fs_touch();
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    assert_int_equal(fs_calls(FS_DISPATCH), 1);
    assert_int_equal(fs_job(5)->gpu_idx[0], 2);
    assert_policy_ok();
}

/* Batch evidence in deepshared, end to end (docs/deepshared.md, "Runtime prediction"): a journal of sweeps (pairs
 * of a user's jobs submitted a second apart, the second run after the first as long as it) earns the evidence
 * its record at start; then six jobs user ua submits seconds apart are one batch, and when the first of them
 * completes in Slurm, the policy's estimates of its siblings, running and waiting, become its run time, and the
 * waiting ones are re-keyed. */
static void test_batch_evidence_in_daemon(void **state)
{
    (void)state;
    char text[16 * 1024];
    size_t n = (size_t)snprintf(text, sizeof text, "slurm_job_id,tenant,user,gpus,seconds,end,start,submit,limit\n");
    for (int b = 0; b < 30; b++) {
        long s0 = 10000 + 30000L * b, d = 3000 + 250 * b;
        n += (size_t)snprintf(text + n, sizeof text - n, "%d,a,ua,1,%ld,%ld,%ld,%ld,0\n%d,a,ua,1,%ld,%ld,%ld,%ld,0\n",
                              1000 + 2 * b, d, s0 + 10 + d, s0 + 10, s0, 1001 + 2 * b, d, s0 + 10 + 2 * d, s0 + 10 + d,
                              s0 + 1);
    }
    boot_journal = tu_write_temp("batch-journal.csv", text);
    for (uint32_t id = 101; id <= 106; id++) fs_add_job(id, "a", "staging", "gpus=1")->submit = 2000000 + id;
    boot("deepshare");
    boot_journal = NULL;
    assert_int_equal(D.hist.records, 60);
    assert_non_null(D.rt.batch_total);
    assert_true(ds_runtime_model_batch_trusted(D.rtm.m));
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_int_equal(fs_run_dispatched(D.cfg.staging), 4);
    fs_touch();
    assert_int_equal(sync_now(), 1);
    const dsp_t *p = D.e->pstate;
    uint32_t done = 0, waiting = 0;
    for (uint32_t id = 101; id <= 106; id++) {
        int32_t s = daemon_slot_of(&D, id);
        if (dt_jstate(&D, id)->status == DS_JS_RUNNING && !done) done = id;
        if (dt_jstate(&D, id)->status == DS_JS_PENDING) waiting = id;
        assert_true(D.rt.batch_total(D.rt.ctx, &D.trace, s, 0) < 0); /* none has finished */
    }
    assert_true(done && waiting);
    /* the first to run completes after 500 s */
    sl_job_t *j = fs_job(done);
    fs_end_script(done, 0);
    j->completing = 0;
    j->end = j->start + 500;
    fs_touch();
    assert_int_equal(sync_now(), 1);
    assert_int_equal(D.hist.records, 61);
    assert_int_equal(dt_jstate(&D, done)->status, DS_JS_DONE);
    assert_int_equal(p->st.batch_revised, 5);
    assert_int_equal(p->st.batch_rekeyed, 2);
    for (uint32_t id = 101; id <= 106; id++) {
        if (id == done) continue;
        int32_t s = daemon_slot_of(&D, id);
        assert_true(fabs(p->pred[s] - 500) < 1e-9);
        assert_true(fabs(D.rt.batch_total(D.rt.ctx, &D.trace, s, 0) - 500) < 1e-9);
    }
    assert_true(dt_explain_has(&D, waiting, "  prediction: 500 s in all, 500 s left, from its batch"));
    assert_policy_ok();
}

/* Writes the daemon's config file (private: it may hold a token). */
static const char *conf(const char *text)
{
    char full[1024];
    snprintf(full, sizeof full, "journal = %s\nlisten = off\nk = 1\ngpu_sharing = 0\n%s%s", journal_path,
             strstr(text, "trust_accounts") ? "" : "trust_accounts = yes\n", text);
    const char *p = tu_write_temp("reload.conf", full);
    chmod(p, 0600);
    return p;
}

/* SIGHUP's reload (daemon_reload): a quota change reaches the engine at once and the policy at its next
 * pass, with no rebuild and no running job disturbed; an invalid file is rejected whole and the running
 * configuration stays; a key that needs a restart keeps its running value; a new tenant rebuilds the
 * engine from Slurm and the others keep their figures; a tenant with jobs in flight cannot be removed. */
static void test_reload(void **state)
{
    (void)state;
    snprintf(journal_path, sizeof journal_path, "%s", tu_write_temp("reload-journal.csv", ""));
    const char *p = conf("tenant a 2\ntenant b 2\n");
    memset(&D, 0, sizeof D);
    dconfig_default(&D.cfg);
    ds_error_t err;
    assert_int_equal(dconfig_read(&D.cfg, p, &err), DS_OK);
    assert_int_equal(daemon_setup(&D, &err), DS_OK);
    for (uint32_t id = 1; id <= 4; id++) fs_add_job(id, "a", "staging", "gpus=1");
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_int_equal(fs_run_dispatched("staging"), 4);
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    daemon_cycle_figures(&D);
    assert_int_equal(D.e->tenant_g_gpus[0], 2);
    assert_int_equal(D.e->tenant_be_gpus[0], 2);
    int64_t rebuilds = D.rebuilds, dispatches = fs_calls(FS_DISPATCH);
    const ds_engine_t *e0 = D.e;

    /* a's quota 2 -> 4: in the engine now, its BE jobs become G at the next pass; nothing restarts */
    conf("tenant a 4\ntenant b 2\n");
    assert_int_equal(daemon_reload(&D), 0);
    assert_int_equal(D.cfg.tenants[0].quota, 4);
    assert_int_equal(ds_engine_quota(D.e, 0), 4);
    assert_ptr_equal(D.e, e0);
    assert_int_equal(D.rebuilds, rebuilds);
    pass_later(1);
    assert_policy_ok();
    assert_int_equal(D.e->tenant_g_gpus[0], 4);
    assert_int_equal(D.e->tenant_be_gpus[0], 0);
    assert_int_equal(fs_calls(FS_REQUEUE), 0);
    assert_int_equal(fs_calls(FS_DISPATCH), dispatches);
    assert_int_equal(fs_calls(FS_ADMIN_COMMENT), 2); /* the promotions, recorded in Slurm */
    for (uint32_t id = 1; id <= 4; id++) assert_int_equal(dt_jstate(&D, id)->status, DS_JS_RUNNING);

    /* an invalid file: rejected whole (its valid quota line too), the running configuration stays */
    conf("tenant a 1\ntenant b 2\ncycle = fast\n");
    assert_int_equal(daemon_reload(&D), -1);
    assert_int_equal(D.cfg.tenants[0].quota, 4);
    assert_int_equal(ds_engine_quota(D.e, 0), 4);
    assert_true(D.cfg.cycle == 60);
    conf("tenant a 4\ntenant b 2\npolicy.no-such-knob = 1\n");
    assert_int_equal(daemon_reload(&D), -1);
    assert_int_equal(D.cfg.nparams, 0);

    /* k needs a restart: cycle applies, k keeps its running value */
    conf("tenant a 4\ntenant b 2\ncycle = 9\nk = 2\n");
    assert_int_equal(daemon_reload(&D), 0);
    assert_true(D.cfg.cycle == 9);
    assert_int_equal(D.cfg.k, 1);

    /* accounts trusted no more and a tenant without members: rejected (Slurm does not check accounts here) */
    conf("tenant a 4 users=ua\ntenant b 2\ntrust_accounts = no\n");
    assert_int_equal(daemon_reload(&D), -1);
    assert_int_equal(D.cfg.trust_accounts, 1);
    /* both with members: applied, and the jobs in staging are screened again (a rebuild) */
    conf("tenant a 4 users=ua\ntenant b 2 users=ub\ntrust_accounts = no\ncycle = 9\n");
    assert_int_equal(daemon_reload(&D), 0);
    assert_string_equal(D.cfg.tenants[0].members, "ua");
    assert_null(D.e);
    sl_jobs_reset();
    assert_int_equal(sync_now(), 1);
    rebuilds++;
    for (uint32_t id = 1; id <= 4; id++) assert_int_equal(dt_jstate(&D, id)->status, DS_JS_RUNNING);
    conf("tenant a 4\ntenant b 2\ncycle = 9\n");
    assert_int_equal(daemon_reload(&D), 0);
    sl_jobs_reset();
    assert_int_equal(sync_now(), 1);
    rebuilds++;

    /* a tenant with running jobs cannot be removed */
    conf("tenant b 2\n");
    assert_int_equal(daemon_reload(&D), -1);
    assert_int_equal(D.cfg.ntenants, 2);

    /* a new tenant: the engine is rebuilt from Slurm; a keeps its figures and its running jobs */
    double S_a = D.ten[0].S;
    D.ten[0].preempted = 7;
    conf("tenant c 1\ntenant a 4\ntenant b 2\n");
    assert_int_equal(daemon_reload(&D), 0);
    assert_int_equal(D.cfg.ntenants, 3);
    assert_null(D.e); /* rebuilt by the next sync, from a fresh read of Slurm */
    sl_jobs_reset();
    assert_int_equal(sync_now(), 1);
    assert_int_equal(D.rebuilds, rebuilds + 1);
    assert_string_equal(D.cfg.tenants[1].name, "a");
    assert_true(D.ten[1].S == S_a);
    assert_int_equal(D.ten[1].preempted, 7);
    assert_int_equal(D.ten[0].preempted, 0);
    for (uint32_t id = 1; id <= 4; id++) assert_int_equal(dt_jstate(&D, id)->status, DS_JS_RUNNING);
    assert_int_equal(D.e->tenant_g_gpus[1], 4);
    fs_add_job(9, "c", "staging", "gpus=1");
    assert_int_equal(sync_now(), 1);
    pass_later(1);
    assert_policy_ok();
    assert_int_equal(dt_jstate(&D, 9)->status, DS_JS_PENDING); /* no GPU free, and G work is never preempted */

    /* a's quota 4 -> 1: its newest jobs become BE (none stopped); c's job then takes one back */
    conf("tenant c 1\ntenant a 1\ntenant b 2\n");
    assert_int_equal(daemon_reload(&D), 0);
    pass_later(1);
    assert_policy_ok();
    assert_int_equal(dt_jstate(&D, 9)->status, DS_JS_RUNNING);
    assert_int_equal(fs_calls(FS_REQUEUE), 1);
    assert_int_equal(D.e->tenant_g_gpus[1], 1);
    daemon_teardown(&D);
    memset(&D, 0, sizeof D);
    unlink(journal_path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rebuild_adopts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pending_leaves_without_rebuild, setup, teardown),
        cmocka_unit_test_setup_teardown(test_node_out_of_service, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lease_fence, setup, teardown),
        cmocka_unit_test_setup_teardown(test_explain_from_policy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_priorities_follow_policy_order, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_start_gpus_go_to_next_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pin_busy_held, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pin_busy_moves_to_free_index, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repin_whole_gpu_job, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unpinned_first_dispatch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unpinned_requeued_restarts_anywhere, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unpinned_swapped_starts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unpinned_off_keeps_pins, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unpinned_typed_request_pinned, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repin_guaranteed_only, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repin_not_best_effort, setup, teardown),
        cmocka_unit_test_setup_teardown(test_repin_survives_rebuild, setup, teardown),
        cmocka_unit_test_setup_teardown(test_requeue_then_restage, setup, teardown),
        cmocka_unit_test_setup_teardown(test_slurmctld_errors, setup, teardown),
        cmocka_unit_test(test_requeue_of_ended_job),
        cmocka_unit_test_setup_teardown(test_shardless_gpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_dispatch_bounce_bounded, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pinned_pair_dispatched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_pinned_pair_dispatched_unaware, setup, teardown),
        cmocka_unit_test_setup_teardown(test_leftover_shards_avoided, setup, teardown),
        cmocka_unit_test_setup_teardown(test_completing_gpu_not_offered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_batch_evidence_in_daemon, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reload, setup, NULL),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
