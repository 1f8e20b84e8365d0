/* test_policies.c: baseline policies on small hand-made traces whose schedules are worked out by hand. */
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

#include "deepshare/policy.h"

/* One tenant with one 8-GPU node. Jobs: id tenant gpus submit duration. */
static void test_fifo_blocks(void **st)
{
    (void)st;
    ds_trace_t t;
    /* j1 takes 6 GPUs [0,100); j2 needs 4: waits until 100; j3 needs 1 and would fit at 1, but FIFO
     * blocks behind j2, so it starts at 100 too (2+... 4+1 <= 8). */
    tu_trace(&t, "A:8", "1 A 6 0 100; 2 A 4 1 50; 3 A 1 2 10");
    ds_sim_result_t r;
    tu_run(&t, "fifo", DS_MODE_PARTITIONED, &r);
    assert_int_equal(r.start[0], 0);
    assert_int_equal(r.start[1], 100);
    assert_int_equal(r.start[2], 100);
    assert_int_equal(r.end[2], 110);
    assert_int_equal(r.queued[1], 99);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

static void test_sjf_order(void **st)
{
    (void)st;
    ds_trace_t t;
    /* All wait behind j1 (8 GPUs until 100); then the shortest (j3) goes first, then j2 and j4 (same
     * duration, arrival order), each needing the whole node. */
    tu_trace(&t, "A:8", "1 A 8 0 100; 2 A 8 1 50; 3 A 8 2 10; 4 A 8 3 50");
    ds_sim_result_t r;
    tu_run(&t, "sjf", DS_MODE_PARTITIONED, &r);
    assert_int_equal(r.start[2], 100);
    assert_int_equal(r.start[1], 110);
    assert_int_equal(r.start[3], 160);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

static void test_tiresias_preempts(void **st)
{
    (void)st;
    ds_trace_t t;
    /* j1 (8 GPUs) runs from t=0; at t=2280 its attained service is 18,240 GPU-s > 18,000: it drops to the
     * low queue. j2 arrived at 100 and waits in the high queue; at the tick t=2280 j2 takes the node and
     * j1 is preempted (progress 2280 s kept, +40 s restart). j2's work is done at 2280+500=2780 and, with
     * the reference's one-second finish lag, it ends at 2781; j1 restarts at the next tick 2820 with
     * 5000-2280+40 = 2760 s left: work done at 5580, end 5581. */
    tu_trace(&t, "A:8", "1 A 8 0 5000; 2 A 8 100 500");
    ds_sim_result_t r;
    tu_run(&t, "tiresias", DS_MODE_PARTITIONED, &r);
    assert_int_equal(r.start[0], 0);
    assert_int_equal(r.start[1], 2280);
    assert_int_equal(r.end[1], 2781);
    assert_int_equal(r.preempts[0], 1);
    assert_int_equal(r.end[0], 5581);
    assert_int_equal(r.queued[0], 2820 - 2280);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}


/* FIFO keeps trace order among jobs submitted in the same second, whatever their ids. */
static void test_fifo_ties_keep_trace_order(void **st)
{
    (void)st;
    ds_trace_t t;
    /* Rows: id 9 then id 3, both 8 GPUs at t=5 on one node. Row order wins: 9 runs [5,105), 3 [105,125). */
    tu_trace(&t, "A:8", "9 A 8 5 100; 3 A 8 5 20");
    ds_sim_result_t r;
    tu_run(&t, "fifo", DS_MODE_PARTITIONED, &r);
    assert_int_equal(r.start[0], 5);
    assert_int_equal(r.start[1], 105);
    assert_int_equal(r.end[1], 125);
    assert_int_equal(r.queued[1], 100);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* SJF is non-preemptive and blocks at the head: a short job behind a long one that does not fit waits. */
static void test_sjf_head_of_line(void **st)
{
    (void)st;
    ds_trace_t t;
    /* j1 6 GPUs [0,100). At 1, j2 (4 GPUs, 50 s) and at 2, j3 (1 GPU, 60 s) wait: SJF order j2 (50) before
     * j3 (60); j2 does not fit (2 free), so j3 is blocked although it would fit. At 100 both start:
     * j2 on 4 GPUs, j3 on 1. */
    tu_trace(&t, "A:8", "1 A 6 0 100; 2 A 4 1 50; 3 A 1 2 60");
    ds_sim_result_t r;
    tu_run(&t, "sjf", DS_MODE_PARTITIONED, &r);
    assert_int_equal(r.start[1], 100);
    assert_int_equal(r.start[2], 100);
    assert_int_equal(r.end[2], 160);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* QSSF: a queue holding only this second's arrivals is ordered by GPU count; one second later the
 * estimate order (estimate x GPUs) takes over. The test traces use estimate = duration. */
static void test_qssf_fresh_arrivals_by_gpus(void **st)
{
    (void)st;
    ds_trace_t t;
    /* At t=0 only fresh arrivals wait: GPU order puts j1 (4 GPUs, 4 x 1000 = 4000 GPU-s) before j2
     * (8 GPUs, 8 x 10 = 80 GPU-s). j1 starts at 0; j2 does not fit and blocks. From t=1 the estimate
     * order has j2 first, but it cannot fit until j1 ends at 1000. Estimate order alone would have run
     * j2 at 0 and j1 at 10. */
    tu_trace(&t, "A:8", "1 A 4 0 1000; 2 A 8 0 10");
    ds_sim_result_t r;
    tu_run(&t, "qssf", DS_MODE_PARTITIONED, &r);
    assert_int_equal(r.start[0], 0);
    assert_int_equal(r.start[1], 1000);
    assert_int_equal(r.end[1], 1010);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

static void test_qssf_estimate_order_takes_over(void **st)
{
    (void)st;
    ds_trace_t t;
    /* j1 8 GPUs [0,100). At 10, j2 (8 GPUs, 8 x 10 = 80) and j3 (1 GPU, 1 x 5000) arrive together: fresh,
     * so GPU order tries j3 first; nothing fits. From 11 on the estimate order rules. At 100, when j1
     * ends, j2 (80 GPU-s) goes first and takes the node; j3 waits until 110. Had the GPU order stayed,
     * j3 would start at 100 and j2 would wait until 5100. */
    tu_trace(&t, "A:8", "1 A 8 0 100; 2 A 8 10 10; 3 A 1 10 5000");
    ds_sim_result_t r;
    tu_run(&t, "qssf", DS_MODE_PARTITIONED, &r);
    assert_int_equal(r.start[1], 100);
    assert_int_equal(r.start[2], 110);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

static void test_qssf_mixed_queue_uses_estimates(void **st)
{
    (void)st;
    ds_trace_t t;
    /* j1 8 GPUs [0,100); j2 (1 GPU, 3000 s) waits from 5. At 100 j1 ends and j3 (8 GPUs, 1 s: 8 GPU-s)
     * arrives in the same second. The queue holds more than the fresh arrival, so it is sorted by
     * estimate at once: j3 runs [100,101), then j2 starts at 101. GPU order would have run j2 at 100
     * and blocked j3 until 3100. */
    tu_trace(&t, "A:8", "1 A 8 0 100; 2 A 1 5 3000; 3 A 8 100 1");
    ds_sim_result_t r;
    tu_run(&t, "qssf", DS_MODE_PARTITIONED, &r);
    assert_int_equal(r.start[2], 100);
    assert_int_equal(r.end[2], 101);
    assert_int_equal(r.start[1], 101);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}


static void test_qssf_wakes_one_second_later(void **st)
{
    (void)st;
    ds_trace_t t;
    /* One node, 96 CPUs. j1 (2 GPUs, 10 CPUs) runs [0,1000). At 10 two fresh jobs arrive: j2 (1 GPU,
     * 90 CPUs, 1 x 5000 GPU-s) and j3 (4 GPUs, 4 CPUs, 4 x 10). GPU order tries j2 first: 10 + 90 CPUs
     * > 96, it does not fit and blocks j3. QSSF wakes the partition at 11, now in estimate order: j3
     * first, and it fits: j3 runs [11,21). j2 waits for j1's CPUs until 1000. */
    tu_trace(&t, "A:8", "1 A 2 0 1000; 2 A 1 10 5000; 3 A 4 10 10");
    t.jobs[0].cpus = 10;
    t.jobs[1].cpus = 90;
    t.jobs[2].cpus = 4;
    ds_sim_result_t r;
    tu_run(&t, "qssf", DS_MODE_PARTITIONED, &r);
    assert_int_equal(r.start[2], 11);
    assert_int_equal(r.end[2], 21);
    assert_int_equal(r.start[1], 1000);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* Tiresias decides only on its 60 s ticks, and skips (does not block on) a waiting job that does not fit. */
static void test_tiresias_ticks_and_skips(void **st)
{
    (void)st;
    ds_trace_t t;
    /* t=0 is a tick: j1 (6 GPUs, 1000 s) starts. j2 (4 GPUs) arrives at 10 and j3 (2 GPUs, 30 s) at 20.
     * Tick 60: walk in submit order: j1 keeps 6 GPUs, j2 needs 4 of the 2 left: skipped; j3 takes the
     * last 2 and works [60,90), ending at 91 (one-second finish lag). j1 (attained 6 x 1000 < 18,000
     * GPU-s, high queue) ends at 1001; j2 starts at the next tick, 1020. */
    tu_trace(&t, "A:8", "1 A 6 0 1000; 2 A 4 10 100; 3 A 2 20 30");
    ds_sim_result_t r;
    tu_run(&t, "tiresias", DS_MODE_PARTITIONED, &r);
    assert_int_equal(r.start[0], 0);
    assert_int_equal(r.start[2], 60);
    assert_int_equal(r.end[2], 91);
    assert_int_equal(r.start[1], 1020);
    assert_int_equal(r.queued[1], 1010);
    assert_int_equal(r.preemptions, 0);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* Partitioned: each tenant only on its own nodes. Pooled: one cluster, first come first served. */
static void test_partitioned_vs_pooled(void **st)
{
    (void)st;
    ds_trace_t t;
    /* A and B own one 8-GPU node each. A submits two 8-GPU jobs at 0 (100 s each); B one at 10 (50 s).
     * Partitioned: A's second job waits for A's node until 100; B runs at once on its node [10,60).
     * Pooled (FIFO over both nodes): A's two jobs take both nodes at 0; B waits until 100. */
    tu_trace(&t, "A:8 B:8", "1 A 8 0 100; 2 A 8 0 100; 3 B 8 10 50");
    ds_sim_result_t r;
    tu_run(&t, "fifo", DS_MODE_PARTITIONED, &r);
    assert_int_equal(r.start[0], 0);
    assert_int_equal(r.start[1], 100);
    assert_int_equal(r.start[2], 10);
    assert_int_equal(r.total_gpus, 16);
    ds_sim_result_free(&r);
    tu_run(&t, "fifo", DS_MODE_POOLED, &r);
    assert_int_equal(r.start[0], 0);
    assert_int_equal(r.start[1], 0);
    assert_int_equal(r.start[2], 100);
    assert_int_equal(r.total_gpus, 16);
    assert_int_equal(r.tenants[1].jobs, 1);
    assert_true(r.tenants[1].queue.avg == 90.0);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* ---- placement, on the engine directly ---- */

static ds_engine_t *engine_for(ds_trace_t *t, int enforce_cpu)
{
    ds_engine_t *e;
    ds_error_t err;
    ds_engine_config_t c;
    ds_engine_config_default(&c);
    c.enforce_cpu = enforce_cpu;
    assert_int_equal(ds_engine_create(&e, t, &c, ds_policy_find("fifo"), NULL, &err), 0);
    for (int32_t j = 0; j < t->njobs; j++) ds_engine_arrive(e, j, 0);
    return e;
}

static void assert_gpus(const ds_engine_t *e, int32_t j, const int32_t *want, int32_t n)
{
    assert_int_equal(e->js[j].nplaced, n);
    const int32_t *g = &e->jgpus[e->jgpu_off[j]];
    for (int32_t i = 0; i < n; i++) assert_int_equal(g[i], want[i]);
}

static void test_consolidated_placement(void **st)
{
    (void)st;
    ds_trace_t t;
    /* Three 8-GPU nodes (GPUs 0-7, 8-15, 16-23). j1 (6): all nodes empty, tie -> node 0, GPUs 0-5.
     * j2 (4): node 0 has 2 free: no; nodes 1 and 2 tie -> node 1, GPUs 8-11. j3 (2): the fullest node
     * that fits is node 0 (2 free) -> GPUs 6-7. j4 (3): node 1 (4 free) before node 2 (8) -> 12-14.
     * j5 (1): node 1's last GPU, 15. j6 (1): only node 2 -> 16. */
    tu_trace(&t, "A:24", "1 A 6 0 9; 2 A 4 0 9; 3 A 2 0 9; 4 A 3 0 9; 5 A 1 0 9; 6 A 1 0 9; 7 A 4 0 9");
    ds_engine_t *e = engine_for(&t, 1);
    for (int32_t j = 0; j < 6; j++) assert_true(ds_engine_place(e, j, 0));
    assert_gpus(e, 0, (int32_t[]){0, 1, 2, 3, 4, 5}, 6);
    assert_gpus(e, 1, (int32_t[]){8, 9, 10, 11}, 4);
    assert_gpus(e, 2, (int32_t[]){6, 7}, 2);
    assert_gpus(e, 3, (int32_t[]){12, 13, 14}, 3);
    assert_gpus(e, 4, (int32_t[]){15}, 1);
    assert_gpus(e, 5, (int32_t[]){16}, 1);
    /* freeing j2 leaves node 1 with 4 free: j7 (4) prefers it (fullest fit) over node 2 (7 free) */
    ds_engine_finish(e, 1, 5);
    assert_true(ds_engine_place(e, 6, 5));
    assert_gpus(e, 6, (int32_t[]){8, 9, 10, 11}, 4);
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

static void test_multi_node_placement(void **st)
{
    (void)st;
    ds_trace_t t;
    /* Three nodes. j1 (2 GPUs) on node 0 (0-1). j2 (16 GPUs) takes whole free nodes 1 and 2 (8-23).
     * j2 ends; j3 (12 GPUs) takes whole node 1 and the remaining 4 on the node with the most free GPUs:
     * node 2 (8 free, before node 0 with 6), GPUs 16-19. j4 (16) finds only one whole free node: no. */
    tu_trace(&t, "A:24", "1 A 2 0 9; 2 A 16 0 9; 3 A 12 0 9; 4 A 16 0 9");
    ds_engine_t *e = engine_for(&t, 1);
    assert_true(ds_engine_place(e, 0, 0));
    assert_true(ds_engine_place(e, 1, 0));
    assert_gpus(e, 1, (int32_t[]){8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23}, 16);
    ds_engine_finish(e, 1, 1);
    assert_true(ds_engine_place(e, 2, 1));
    assert_gpus(e, 2, (int32_t[]){8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19}, 12);
    int32_t out[16];
    assert_false(ds_engine_find_free(e, 3, 0, out));
    assert_false(ds_engine_place(e, 3, 1));
    assert_int_equal(e->js[3].status, DS_JS_PENDING);
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

static void test_cpu_aware_placement(void **st)
{
    (void)st;
    ds_trace_t t;
    /* Two nodes of 96 CPUs. j1: 1 GPU, 90 CPUs -> node 0. j2: 1 GPU, 10 CPUs: node 0 is fullest, but
     * 90 + 10 > 96 CPUs, so it goes to node 1 (GPU 8). With CPU checks off it joins node 0 (GPU 1). */
    tu_trace(&t, "A:16", "1 A 1 0 9; 2 A 1 0 9");
    t.jobs[0].cpus = 90;
    t.jobs[1].cpus = 10;
    ds_engine_t *e = engine_for(&t, 1);
    assert_true(ds_engine_place(e, 0, 0));
    assert_true(ds_engine_place(e, 1, 0));
    assert_gpus(e, 1, (int32_t[]){8}, 1);
    assert_int_equal(e->nodes[0].cpus_used, 90);
    ds_engine_destroy(e);
    e = engine_for(&t, 0);
    assert_true(ds_engine_place(e, 0, 0));
    assert_true(ds_engine_place(e, 1, 0));
    assert_gpus(e, 1, (int32_t[]){1}, 1);
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

/* A job larger than its partition can never run: one clear error, not a hang. */
static void test_job_too_big(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8 B:8", "1 A 16 0 10");
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.policy = ds_policy_find("fifo");
    ds_sim_result_t r;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_sim_run(&t, &c, &r, &err), DS_EINVAL);
    assert_non_null(strstr(err.msg, "needs 16 GPUs but its partition 'A' has only 8"));
    /* pooled, the same job fits the 16-GPU pool */
    c.engine.mode = DS_MODE_POOLED;
    assert_int_equal(ds_sim_run(&t, &c, &r, &err), 0);
    assert_int_equal(r.end[0], 10);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

/* FIFO explains a waiting job by its own rule: its place in the queue and the head that blocks it, with
 * none of DeepShare's words (classes, caps). */
static void test_fifo_explain(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8", "1 A 6 0 100; 2 A 4 1 50; 3 A 1 2 10");
    ds_engine_t *e = engine_for(&t, 1);
    ds_engine_schedule(e, 2, 0);
    assert_int_equal(e->js[0].status, DS_JS_RUNNING);
    ds_buf_t b = {0};
    e->ops->explain(e, e->pstate, 2, 2, &b);
    char *x = ds_bdone(&b);
    print_message("%s", x);
    assert_non_null(strstr(x, "  order: first in, first out (submit time); 2 of 2 waiting\n"));
    assert_non_null(strstr(x, "  blocked: job 2 (4 GPUs) heads the queue and does not fit yet: fifo starts no job past"));
    assert_non_null(strstr(x, "  fit: 1 node could take it now"));
    assert_null(strstr(x, "BE"));
    assert_null(strstr(x, "cap"));
    assert_null(strstr(x, "guaranteed"));
    free(x);
    e->ops->explain(e, e->pstate, 1, 2, &b);
    x = ds_bdone(&b);
    assert_non_null(strstr(x, "  head: it is next"));
    assert_non_null(strstr(x, "  no fit: no node has 4 free GPUs with room for"));
    free(x);
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_blocks),
        cmocka_unit_test(test_sjf_order),
        cmocka_unit_test(test_tiresias_preempts),
        cmocka_unit_test(test_fifo_ties_keep_trace_order),
        cmocka_unit_test(test_sjf_head_of_line),
        cmocka_unit_test(test_qssf_fresh_arrivals_by_gpus),
        cmocka_unit_test(test_qssf_estimate_order_takes_over),
        cmocka_unit_test(test_qssf_mixed_queue_uses_estimates),
        cmocka_unit_test(test_qssf_wakes_one_second_later),
        cmocka_unit_test(test_tiresias_ticks_and_skips),
        cmocka_unit_test(test_partitioned_vs_pooled),
        cmocka_unit_test(test_consolidated_placement),
        cmocka_unit_test(test_multi_node_placement),
        cmocka_unit_test(test_cpu_aware_placement),
        cmocka_unit_test(test_job_too_big),
        cmocka_unit_test(test_fifo_explain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
