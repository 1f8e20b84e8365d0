/* test_nodes.c: nodes out of service (ds_engine_set_node_down): no registered policy starts a job on a down
 * node, alone or beside another; its idle GPUs and those its jobs release leave the free counts; the jobs
 * running there are kept (a drain) or requeued by the driver (Slurm requeued them) and none is lost or
 * counted twice; back up, the node is offered again. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deepshare/policy.h"
#include "deepshare/synth.h"

static const char *const quirks[][2] = {{"lucid-reference", "0"}, {"tiresias-finish-lag", "0"}};

static ds_engine_t *open_engine(const ds_trace_t *t, const ds_policy_ops_t *ops, ds_mode_t mode, void **pc)
{
    ds_engine_config_t c;
    ds_engine_config_default(&c);
    c.mode = mode;
    *pc = ops->config_new ? ops->config_new() : NULL;
    for (size_t i = 0; *pc && ops->config_set && i < sizeof quirks / sizeof quirks[0]; i++) {
        ds_error_t qerr;
        int rc = ops->config_set(*pc, quirks[i][0], quirks[i][1], &qerr);
        assert_true(rc == DS_OK || rc == DS_ENOTFOUND);
    }
    ds_engine_t *e = NULL;
    ds_error_t err;
    ds_error_clear(&err);
    if (ds_engine_create(&e, t, &c, ops, *pc, &err)) fail_msg("%s: %s", ops->name, err.msg);
    return e;
}

static void close_engine(ds_engine_t *e, void *pc)
{
    const ds_policy_ops_t *ops = e->ops;
    ds_engine_destroy(e);
    if (pc && ops->config_free) ops->config_free(pc);
}

static int64_t finish_at(const ds_engine_t *e, int32_t j)
{
    const ds_jstate_t *s = ds_engine_job(e, j);
    double work = (double)e->trace->jobs[j].duration + s->overhead + s->finish_lag;
    int64_t left = (int64_t)ceil(work - (double)s->run_time);
    return s->last_start + (left > 1 ? left : 1);
}

static int on_down_node(const ds_engine_t *e, int32_t j)
{
    const int32_t *g = ds_engine_job_gpus(e, j);
    for (int32_t i = 0; i < ds_engine_job(e, j)->nplaced; i++)
        if (ds_engine_node_down(e, ds_engine_gpu(e, g[i])->node)) return 1;
    return 0;
}

typedef struct figures {
    int starts_while_down, kept, requeued, back_starts;
} figures_t;

/* Runs a policy on the trace; nodes in `down` (count nd) go down at t_down and come back at t_up. When they
 * go down, every other job running there is requeued by the driver (ds_engine_cancel_start, as the daemon
 * mirrors a job Slurm requeued on a node failure) and the rest keep running (a drain). After every pass: the engine's and the policy's
 * invariants, and no job started in it holds a GPU of a down node. */
static figures_t run_with_down(const ds_trace_t *t, const ds_policy_ops_t *ops, ds_mode_t mode, const int32_t *down,
                               int32_t nd, int64_t t_down, int64_t t_up)
{
    void *pc;
    ds_engine_t *e = open_engine(t, ops, mode, &pc);
    figures_t f = {0};
    int64_t now = t->jobs[0].submit;
    int32_t next_arr = 0, guard = 0;
    int is_down = 0, was_up = 0;
    int32_t *starts = ds_xcalloc((size_t)t->njobs, sizeof *starts), *cancels = ds_xcalloc((size_t)t->njobs, sizeof *cancels);
    while (1) {
        if (++guard > 2000000) fail_msg("%s: the run does not end (t=%lld, %d arrived)", ops->name, (long long)now, next_arr);
        if (!is_down && !was_up && now >= t_down) {
            is_down = 1;
            int k = 0;
            for (int32_t i = 0; i < nd; i++) ds_engine_set_node_down(e, down[i], 1);
            for (int32_t j = 0; j < t->njobs; j++)
                if (ds_engine_job(e, j)->status == DS_JS_RUNNING && on_down_node(e, j)) {
                    /* as the daemon mirrors a job Slurm requeued: the start is taken back (no policy preemption) */
                    if (k++ % 2) ds_engine_cancel_start(e, j, now), cancels[j]++, f.requeued++;
                    else f.kept++;
                }
        } else if (is_down && now >= t_up) {
            is_down = 0, was_up = 1;
            for (int32_t i = 0; i < nd; i++) ds_engine_set_node_down(e, down[i], 0);
        }
        for (int32_t j = 0; j < t->njobs; j++)
            if (ds_engine_job(e, j)->status == DS_JS_RUNNING && finish_at(e, j) <= now) ds_engine_finish(e, j, now);
        while (next_arr < t->njobs && t->jobs[next_arr].submit <= now) ds_engine_arrive(e, next_arr++, now);
        ds_engine_schedule(e, now, ds_engine_next_timer(e, now - 1) <= now);
        int32_t ndec;
        const ds_decision_t *dec = ds_engine_decisions(e, &ndec);
        for (int32_t i = 0; i < ndec; i++) {
            if (dec[i].type != DS_DEC_START) continue;
            int32_t j = dec[i].job;
            starts[j]++;
            if (ds_engine_job(e, j)->status != DS_JS_RUNNING) continue; /* stopped again in the same pass */
            if (is_down && on_down_node(e, j))
                fail_msg("%s (%s) at t=%lld: job %d started on a down node", ops->name,
                         mode == DS_MODE_POOLED ? "pooled" : "partitioned", (long long)now, j);
            if (was_up) {
                const int32_t *g = ds_engine_job_gpus(e, j);
                for (int32_t k = 0, hit = 0; k < ds_engine_job(e, j)->nplaced && !hit; k++)
                    for (int32_t q = 0; q < nd && !hit; q++)
                        if (ds_engine_gpu(e, g[k])->node == down[q]) hit = 1, f.back_starts++;
            }
        }
        ds_engine_clear_decisions(e);
        ds_engine_clear_rate_changes(e);
        char msg[200] = "";
        if (ds_engine_check(e, msg, sizeof msg) || (ops->check && ops->check(e, e->pstate, msg, sizeof msg)))
            fail_msg("%s at t=%lld: %s", ops->name, (long long)now, msg);
        if (is_down)
            for (int32_t i = 0; i < nd; i++) assert_int_equal(e->nodes[down[i]].nfree, 0);
        int done = next_arr == t->njobs;
        int64_t nx = ds_engine_next_timer(e, now);
        if (next_arr < t->njobs && t->jobs[next_arr].submit < nx) nx = t->jobs[next_arr].submit;
        if (!is_down && !was_up && t_down < nx) nx = t_down;
        if (is_down && t_up < nx) nx = t_up;
        for (int32_t j = 0; j < t->njobs; j++) {
            int st = ds_engine_job(e, j)->status;
            done &= st == DS_JS_DONE;
            if (st == DS_JS_RUNNING && finish_at(e, j) < nx) nx = finish_at(e, j);
        }
        if (done) break;
        now = nx > now ? nx : now + 1;
    }
    /* every job finished once; a requeued one started again, and no job started more often than it stopped */
    for (int32_t j = 0; j < t->njobs; j++) {
        const ds_jstate_t *s = ds_engine_job(e, j);
        assert_int_equal(s->status, DS_JS_DONE);
        if (starts[j] != s->preemptions + cancels[j] + 1)
            fail_msg("%s: job %d started %d times, preempted %d, requeued %d", ops->name, j, starts[j], s->preemptions, cancels[j]);
    }
    assert_int_equal(e->n_finished, t->njobs);
    free(starts);
    free(cancels);
    close_engine(e, pc);
    return f;
}

static void test_every_policy_keeps_off_down_nodes(void **st)
{
    (void)st;
    ds_synth_config_t sc;
    ds_synth_config_default(&sc);
    sc.jobs = 600;
    sc.nodes = 12;
    sc.tenants = 4;
    sc.load = 1.2;
    sc.be_share = 0.2;
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    assert_int_equal(ds_synth_generate(&t, &sc, &err), 0);
    int64_t span = t.jobs[t.njobs - 1].submit - t.jobs[0].submit;
    int64_t t_down = t.jobs[0].submit + span / 4, t_up = t.jobs[0].submit + span / 2;
    for (const ds_policy_ops_t *const *p = ds_policy_list(); *p; p++)
        for (int m = 0; m < 2; m++) {
            ds_mode_t mode = m ? DS_MODE_POOLED : DS_MODE_PARTITIONED;
            /* two nodes of the layout the policy made: one early, one late */
            void *pc;
            ds_engine_t *e = open_engine(&t, *p, mode, &pc);
            int32_t down[2] = {1, e->nnodes - 2};
            close_engine(e, pc);
            figures_t f = run_with_down(&t, *p, mode, down, 2, t_down, t_up);
            fprintf(stderr, "  %-10s %-11s down at %lld s: %d running there kept, %d requeued; %d starts there once back\n",
                    (*p)->name, m ? "pooled" : "partitioned", (long long)(t_down - t.jobs[0].submit), f.kept, f.requeued,
                    f.back_starts);
            assert_true(f.back_starts > 0);
        }
    ds_trace_free(&t);
}

/* By hand: a down node's idle GPUs are not free, a GPU its job releases stays withdrawn, the job that
 * would fit only there waits, and it starts there once the node is back. */
static void test_down_node_capacity(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:16", "1 A 8 0 100; 2 A 4 1 100; 3 A 8 2 100");
    for (int32_t j = 0; j < t.njobs; j++) t.jobs[j].gmem_mib = 20000; /* no two share a GPU */
    for (const char *const *name = (const char *const[]){"fifo", "deepshare", "kai", "kueue", NULL}; *name; name++) {
        void *pc;
        ds_engine_t *e = open_engine(&t, ds_policy_find(*name), DS_MODE_PARTITIONED, &pc);
        assert_int_equal(e->nnodes, 2);
        ds_engine_arrive(e, 0, 0);
        ds_engine_schedule(e, 0, 1);
        assert_int_equal(ds_engine_job(e, 0)->status, DS_JS_RUNNING);
        int32_t busy = ds_engine_gpu(e, ds_engine_job_gpus(e, 0)[0])->node, other = 1 - busy;
        ds_engine_set_node_down(e, other, 1);
        ds_engine_set_node_down(e, other, 1); /* twice changes nothing */
        assert_int_equal(e->parts[0].gpus_free, 0);
        assert_int_equal(ds_engine_max_node_free(e, 0, NULL), 0);
        int32_t out[8];
        assert_int_equal(ds_engine_node_free_gpus(e, other, 8, out), 0);
        ds_engine_arrive(e, 1, 1);
        ds_engine_schedule(e, 1, 1);
        assert_int_equal(ds_engine_job(e, 1)->status, DS_JS_PENDING);
        /* the busy node drains: its job ends, its GPUs stay out of the free counts */
        ds_engine_set_node_down(e, busy, 1);
        ds_engine_finish(e, 0, 100);
        ds_engine_arrive(e, 2, 100);
        ds_engine_schedule(e, 100, 1);
        assert_int_equal(e->parts[0].gpus_free, 0);
        assert_int_equal(ds_engine_job(e, 1)->status, DS_JS_PENDING);
        char msg[200];
        if (ds_engine_check(e, msg, sizeof msg)) fail_msg("%s: %s", *name, msg);
        /* one back: the 4-GPU job and then not the 8-GPU one (4 left) */
        ds_engine_set_node_down(e, other, 0);
        assert_int_equal(e->parts[0].gpus_free, 8);
        ds_engine_schedule(e, 101, 1);
        if (ds_engine_check(e, msg, sizeof msg)) fail_msg("%s: %s", *name, msg);
        int run1 = ds_engine_job(e, 1)->status == DS_JS_RUNNING, run2 = ds_engine_job(e, 2)->status == DS_JS_RUNNING;
        if (!run1 && !run2) fail_msg("%s: nothing started on the node back up", *name);
        for (int32_t j = 1; j <= 2; j++)
            if (ds_engine_job(e, j)->status == DS_JS_RUNNING)
                assert_int_equal(ds_engine_gpu(e, ds_engine_job_gpus(e, j)[0])->node, other);
        ds_engine_set_node_down(e, busy, 0);
        assert_int_equal(e->parts[0].gpus_free, 16 - (run1 ? 4 : 0) - (run2 ? 8 : 0));
        if (ds_engine_check(e, msg, sizeof msg)) fail_msg("%s: %s", *name, msg);
        close_engine(e, pc);
    }
    ds_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_down_node_capacity),
        cmocka_unit_test(test_every_policy_keeps_off_down_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
