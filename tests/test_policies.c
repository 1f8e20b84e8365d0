/* test_policies.c: baseline policies on small hand-made traces whose schedules are worked out by hand. */
#include "testutil.h"

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
     * j1 is preempted (progress 2280 s kept, +40 s restart). j2 ends at 2280+500=2780; j1 restarts at the
     * next tick 2820 with 5000-2280+40 = 2760 s left and ends at 5580. */
    tu_trace(&t, "A:8", "1 A 8 0 5000; 2 A 8 100 500");
    ds_sim_result_t r;
    tu_run(&t, "tiresias", DS_MODE_PARTITIONED, &r);
    assert_int_equal(r.start[0], 0);
    assert_int_equal(r.start[1], 2280);
    assert_int_equal(r.end[1], 2780);
    assert_int_equal(r.preempts[0], 1);
    assert_int_equal(r.end[0], 5580);
    assert_int_equal(r.queued[0], 2820 - 2280);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_blocks),
        cmocka_unit_test(test_sjf_order),
        cmocka_unit_test(test_tiresias_preempts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
