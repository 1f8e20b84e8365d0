/* test_lucid.c: the Lucid baseline on small hand-made traces (profiler, packing rules, sharing
 * switch, the reference simulator's pairing and timing), its input readers, and Venus against the
 * reference figures when the data set is present. */
#include "testutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deepshare/policy_config.h"
#include "deepshare/lucid.h"
#include "deepshare/policy.h"

/* Jobs as CSV rows "id,tenant,gpus,submit,duration,model,gmem,estimate" (dataset "D", batch 32, amp 0). */
static void mk_trace(ds_trace_t *t, const char *tenants, const char *rows)
{
    char buf[8192];
    snprintf(buf, sizeof buf, "tenant,quota_gpus\n%s", tenants);
    const char *tp = tu_write_temp("tenants.csv", buf);
    char jobs[8192] = "job_id,tenant,gpus,submit,duration,model,dataset,batchsize,amp,gmem\n";
    char est[8192] = "job_id,priority\n";
    char row[8192];
    snprintf(row, sizeof row, "%s", rows);
    for (char *save = NULL, *r = strtok_r(row, ";", &save); r; r = strtok_r(NULL, ";", &save)) {
        long long id, gpus, sub, dur, gmem;
        char model[32];
        double e;
        assert_int_equal(sscanf(r, " %lld,%*[^,],%lld,%lld,%lld,%31[^,],%lld,%lf", &id, &gpus, &sub, &dur, model, &gmem, &e), 7);
        char ten[32];
        assert_int_equal(sscanf(r, " %*d,%31[^,]", ten), 1);
        size_t n = strlen(jobs);
        snprintf(jobs + n, sizeof jobs - n, "%lld,%s,%lld,%lld,%lld,%s,D,32,0,%lld\n", id, ten, gpus, sub, dur, model, gmem);
        n = strlen(est);
        snprintf(est + n, sizeof est - n, "%lld,%g\n", id, e);
    }
    const char *jp = tu_write_temp("jobs.csv", jobs);
    const char *ep = tu_write_temp("est.csv", est);
    ds_trace_init(t);
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_trace_read_tenants(t, tp, 8, &err), 0);
    assert_int_equal(ds_trace_read_jobs(t, jp, &err), 0);
    assert_int_equal(ds_trace_read_estimates(t, ep, 1000.0, NULL, &err), 0);
}

static void *cfg_new(const char *const *kv)
{
    const ds_policy_ops_t *p = ds_policy_find("lucid");
    assert_non_null(p);
    void *c = p->config_new();
    for (int i = 0; kv && kv[i]; i += 2) {
        ds_error_t err;
        ds_error_clear(&err);
        int rc = ds_policy_config_set(p, c, kv[i], kv[i + 1], &err);
        if (rc) fprintf(stderr, "%s: %s\n", kv[i], err.msg);
        assert_int_equal(rc, 0);
    }
    return c;
}

static void run(const ds_trace_t *t, void *cfg, const ds_coloc_t *coloc, ds_sim_result_t *r)
{
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.policy = ds_policy_find("lucid");
    c.policy_config = cfg;
    c.coloc = coloc;
    tu_sim(t, &c, r);
}

/* Sharing scores: model M0 scores 0, M1 1, M2 2 (dataset D, batch 32, amp 0). */
static const char *labels_file(void)
{
    return tu_write_temp("single.csv", "model,dataset,batchsize,amp,speed,gpu_util,gmem_util,gmem,label\n"
                                       "M0,D,32,0,1,10,10,1000,0\nM1,D,32,0,1,10,10,1000,1\nM2,D,32,0,1,10,10,1000,2\n");
}

/* ---- profiler ---- */

static void test_profiler(void **st)
{
    (void)st;
    ds_trace_t t;
    /* A has 3 nodes and lends one to the profiler (8 GPUs). At t=0 j1 (4 GPUs, 100 s) and j2 (8 GPUs)
     * arrive: least GPUs first, j1 is profiled, j2 does not fit and blocks. At t=1 j3 (2 GPUs) is
     * profiled ahead of j2 (least GPUs first). j2 is profiled when j1 leaves at 100, for 200 s: it
     * does not finish there. j4 (16 GPUs) is too large for the profiler. */
    mk_trace(&t, "A,24\n", "1,A,4,0,100,M0,1000,50; 2,A,8,0,1000,M0,1000,50; 3,A,2,1,50,M0,1000,50; 4,A,16,2,30,M0,1000,50");
    const char *kv[] = {"lucid-prof-nodes", "1", "lucid-prof-lenders", "A", "lucid-prof-scale-tenant", "none", NULL};
    void *cfg = cfg_new(kv);
    ds_lucid_prof_t p;
    ds_lucid_profile(&p, &t, cfg, 8, 0, NULL);
    assert_int_equal(p.start[0], 0);
    assert_int_equal(p.start[2], 1);
    assert_int_equal(p.start[1], 100);
    assert_int_equal(p.queue[1], 100);
    assert_int_equal(p.start[3], -1);
    assert_true(p.done[0] && p.done[2] && !p.done[1] && !p.done[3]);
    assert_int_equal(p.profiled, 3);
    assert_int_equal(p.finished, 2);
    ds_lucid_prof_free(&p);

    ds_sim_result_t r;
    run(&t, cfg, NULL, &r);
    /* finished in the profiler: they end there and never reach A */
    assert_int_equal(r.end[0], 100);
    assert_int_equal(r.end[2], 51);
    assert_int_equal(r.queued[0], 0);
    /* j2 queues in A from its submission (the reference runs the profiler as a separate pass) and
     * starts at once on A's 2 nodes; its queueing delay still counts the 100 s profiler wait, and it
     * completes a second after its work (the reference steps work before it checks for ends) */
    assert_int_equal(r.start[1], 0);
    assert_int_equal(r.queued[1], 100);
    assert_int_equal(r.end[1], 1001);
    /* j4 waits for j2's node: A has 2 nodes left */
    assert_int_equal(r.start[3], 1001);
    assert_int_equal(r.end[3], 1032);
    assert_int_equal(r.total_gpus, 16); /* the profiler's node is left out of utilization */
    ds_sim_result_free(&r);
    ds_lucid_config_free(cfg);
    ds_trace_free(&t);
}

static void test_profiler_scales_up(void **st)
{
    (void)st;
    ds_trace_t t;
    /* One profiler node (8 GPUs). At t=0, 8 jobs of 8 GPUs (300 s each): one runs, 7 wait... more than
     * 10 waiting needs 12 jobs: the 12th arrival leaves 11 waiting, so the profiler borrows a node at
     * t=0 (a multiple of 10) and places the next job on it one second later. */
    char rows[4096] = "";
    for (int i = 1; i <= 12; i++) {
        size_t n = strlen(rows);
        snprintf(rows + n, sizeof rows - n, "%s%d,A,8,0,300,M0,1000,50", i > 1 ? ";" : "", i);
    }
    size_t n = strlen(rows);
    snprintf(rows + n, sizeof rows - n, ";13,B,8,0,5000,M0,1000,50");
    mk_trace(&t, "A,24\nB,24\n", rows);
    const char *kv[] = {"lucid-prof-nodes", "1", "lucid-prof-lenders", "A", "lucid-prof-scale-tenant", "B", NULL};
    void *cfg = cfg_new(kv);
    ds_lucid_prof_t p;
    ds_lucid_profile(&p, &t, cfg, 8, 1, NULL);
    assert_true(p.nscale >= 2);
    assert_int_equal(p.scale_time[0], 0);
    assert_int_equal(p.scale_delta[0], 1);
    assert_int_equal(p.start[0], 0);
    assert_int_equal(p.start[1], 1);  /* on the borrowed node, a second later */
    assert_int_equal(p.start[2], 200); /* the profiling slots free up after 200 s */
    assert_int_equal(p.scale_delta[p.nscale - 1], -1); /* the node goes back once quiet */
    ds_lucid_prof_free(&p);
    /* B lends its idle node at t=0 (B's job arrives then but is placed before the echo) */
    ds_sim_result_t r;
    run(&t, cfg, NULL, &r);
    assert_int_equal(r.start[12], 0);
    assert_int_equal(r.npstats > 0, 1);
    double lent = -1;
    for (int i = 0; i < r.npstats; i++)
        if (!strcmp(r.pstats[i].name, "scale_tenant_nodes_lent")) lent = r.pstats[i].value;
    assert_true(lent >= 1);
    ds_sim_result_free(&r);
    ds_lucid_config_free(cfg);
    ds_trace_free(&t);
}

/* ---- packing ---- */

/* Host h (1 GPU) starts at 0 on a one-node tenant; candidate c arrives at 1. Returns whether c was
 * packed onto h's GPU. */
static int packs(const char *host, const char *cand, int use_labels)
{
    char rows[512];
    snprintf(rows, sizeof rows, "1,A,%s; 2,A,%s", host, cand);
    ds_trace_t t;
    mk_trace(&t, "A,8\n", rows);
    const char *kv[] = {"lucid-profiler", "0", "lucid-single", labels_file(), NULL};
    if (!use_labels) kv[2] = NULL;
    void *cfg = cfg_new(kv);
    ds_sim_result_t r;
    run(&t, cfg, NULL, &r);
    int packed = r.colocated[1];
    assert_int_equal(r.start[1], 1); /* packed or not, it starts at once: free GPUs remain */
    ds_sim_result_free(&r);
    ds_lucid_config_free(cfg);
    ds_trace_free(&t);
    return packed;
}

static void test_packing_rules(void **st)
{
    (void)st;
    /* fields after the tenant: gpus,submit,duration,model,gmem,estimate (priority = estimate x gpus) */
    assert_true(packs("1,0,500,M0,10000,100", "1,1,50,M1,10000,100", 1));   /* all rules hold: packed first */
    assert_false(packs("1,0,500,M0,10000,100", "1,1,50,M1,14576,100", 1));  /* 24576 MiB together: no */
    assert_true(packs("1,0,500,M0,10000,100", "1,1,50,M1,14575,100", 1));   /* one MiB less: yes */
    assert_false(packs("1,0,500,M1,1000,100", "1,1,50,M2,1000,100", 1));    /* scores 1 + 2 > 2 */
    assert_true(packs("1,0,500,M0,1000,100", "1,1,50,M2,1000,100", 1));     /* scores 0 + 2 */
    assert_true(packs("1,0,500,M2,1000,100", "1,1,50,M2,1000,100", 0));     /* no scores file: all score 1 */
    assert_false(packs("1,0,500,M0,1000,100", "1,1,50,M0,1000,201", 1));    /* priority > 2 x the host's */
    assert_true(packs("1,0,500,M0,1000,100", "1,1,50,M0,1000,200", 1));     /* exactly twice: yes */
    assert_false(packs("1,0,500,M0,1000,100", "2,1,50,M0,1000,50", 1));     /* GPU counts differ */
}

static void test_packing_picks_first_started(void **st)
{
    (void)st;
    ds_trace_t t;
    /* j1 and j2 (score 2 each: they never pair) start at 0 and 1. j3 fits beside both and packs onto
     * the first started, j1. j4 fits beside j1 only (memory): j1 is taken, so j4 gets a free GPU. Had
     * j3 picked j2, j4 would have packed onto j1. */
    mk_trace(&t, "A,8\n", "1,A,1,0,900,M2,1000,100; 2,A,1,1,900,M2,20000,100; 3,A,1,2,100,M0,1000,100;"
                          "4,A,1,3,100,M0,5000,100");
    const char *kv[] = {"lucid-profiler", "0", "lucid-single", labels_file(), NULL};
    void *cfg = cfg_new(kv);
    ds_sim_result_t r;
    run(&t, cfg, NULL, &r);
    assert_int_equal(r.colocations, 1);
    assert_true(r.colocated[0] && r.colocated[2]);
    assert_false(r.colocated[1] || r.colocated[3]);
    assert_int_equal(r.start[3], 3);
    ds_sim_result_free(&r);
    ds_lucid_config_free(cfg);
    ds_trace_free(&t);
}

/* ---- the reference simulator's pairing and timing ---- */

static void test_reference_pairing(void **st)
{
    (void)st;
    /* Guest G packed at t=1 on host H: G runs at 0.5, H at 0.8. H (100 s of work) ends at
     * 1 + ceil(99 / 0.8) = 125 (+1 reference second = 126). With the reference's pairing G stays at 0.5
     * and is never a host: X (arriving at 200) takes a free GPU. Without it, G is restored to full
     * speed and hosts X. */
    const char *prof = tu_write_temp("coloc.csv", ",model1,dataset1,gpu_num1,batchsize1,amp1,speed1,model2,dataset2,"
                                                  "gpu_num2,batchsize2,amp2,speed2,gpu_util,gmem_util,gmem\n"
                                                  "0,G,D,1,32,0,0.5,H,D,1,32,0,0.8,50,50,5000\n");
    for (int ref = 1; ref >= 0; ref--) {
        ds_trace_t t;
        mk_trace(&t, "A,8\n", "1,A,1,0,100,H,1000,100; 2,A,1,1,300,G,1000,100; 3,A,1,200,50,G,1000,100");
        ds_coloc_t c;
        ds_error_t err;
        ds_error_clear(&err);
        assert_int_equal(ds_coloc_read(&c, prof, &err), 0);
        ds_coloc_bind(&c, &t);
        const char *kv[] = {"lucid-profiler", "0", "lucid-reference-pairing", ref ? "1" : "0",
                            "lucid-reference-timing", ref ? "1" : "0", NULL};
        void *cfg = cfg_new(kv);
        ds_sim_result_t r;
        run(&t, cfg, &c, &r);
        assert_int_equal(r.start[1], 1);
        assert_true(r.colocated[1]);
        assert_int_equal(r.end[0], 125 + ref);
        if (ref) {
            /* G: 124 s at 0.5 = 62 done, 238 left at 0.5 = 476 s: 125 + 476 (+1) */
            assert_int_equal(r.end[1], 125 + 476 + 1);
            assert_false(r.colocated[2]);
        } else {
            assert_true(r.colocated[2]);
            assert_true(r.end[1] < 125 + 476);
        }
        ds_sim_result_free(&r);
        ds_lucid_config_free(cfg);
        ds_coloc_free(&c);
        ds_trace_free(&t);
    }
}

/* ---- sharing switch ---- */

/* j1 holds 6 of 8 GPUs; j2 (4 GPUs, first by priority) cannot fit; j3 (1 GPU) can. */
static void switch_case(const char *series, int64_t want_j3_start)
{
    ds_trace_t t;
    mk_trace(&t, "A,8\n", "1,A,6,0,5000,M0,1000,100; 2,A,4,1,50,M0,1000,1; 3,A,1,2,50,M0,1000,1000");
    const char *kv[] = {"lucid-profiler", "0", "lucid-reference-timing", "0", series ? "lucid-throughput" : NULL,
                        series ? tu_write_temp("tp.csv", series) : NULL, NULL};
    void *cfg = cfg_new(kv);
    ds_sim_result_t r;
    run(&t, cfg, NULL, &r);
    assert_int_equal(r.start[2], want_j3_start);
    assert_int_equal(r.start[1], 5000);
    ds_sim_result_free(&r);
    ds_lucid_config_free(cfg);
    ds_trace_free(&t);
}

static void test_sharing_switch(void **st)
{
    (void)st;
    /* No prediction: sharing on, no blocking: j3 starts at once. */
    switch_case(NULL, 2);
    /* Predicted GPU jobs average 2 or less over the next 5 bins: sharing off, and the reference then
     * stops at the first job that does not fit: j3 waits behind j2 until j1 ends. */
    switch_case("time,submit_gpu_job,submit_gpu_num,pred_gpu_job,pred_gpu_num\n"
                "0,0,0,2,0\n600,0,0,2,0\n1200,0,0,2,0\n1800,0,0,2,0\n2400,0,0,2,0\n3000,0,0,2,0\n"
                "3600,0,0,2,0\n4200,0,0,2,0\n4800,0,0,2,0\n5400,0,0,2,0\n6000,0,0,2,0\n",
                5000);
    /* Low until the bins after t=600 average (4 x 1 + 11) / 5 = 3 > 2: sharing turns on at 600 (a
     * switch check), and j3 starts then. */
    switch_case("time,submit_gpu_job,submit_gpu_num,pred_gpu_job,pred_gpu_num\n"
                "0,0,0,1,0\n600,0,0,1,0\n1200,0,0,1,0\n1800,0,0,1,0\n2400,0,0,1,0\n3000,0,0,1,0\n3600,0,0,11,0\n",
                600);
}

static void test_future_mean(void **st)
{
    (void)st;
    const char *kv[] = {"lucid-throughput",
                        tu_write_temp("tp2.csv", "time,pred_gpu_job,pred_gpu_num\n"
                                                 "2020-04-01 00:00:00,1,10\n2020-04-01 00:10:00,3,20\n"
                                                 "2020-04-01 00:20:00,5,30\n"),
                        NULL};
    ds_lucid_config_t *c = cfg_new(kv);
    assert_true(c->series.is_datetime);
    assert_int_equal(ds_lucid_series_time(c, 1), 600); /* the Venus clock starts 2020-04-01 */
    assert_true(fabs(ds_lucid_future_mean(c, 0, 0, -1) - 4.0) < 1e-9);   /* bins strictly after t */
    assert_true(fabs(ds_lucid_future_mean(c, 599, 1, -1) - 25.0) < 1e-9);
    assert_true(ds_lucid_future_mean(c, 1200, 0, -7) == -7);              /* none left: fallback */
    ds_lucid_config_free(c);
}

/* ---- inputs ---- */

/* The two tables are the policy's declared inputs: a driver reads them (ds_policy_config_set, through the
 * io layer) and errors name the file, line and column; the policy's own config_set never opens a file. */
static int set(const ds_policy_ops_t *p, void *c, const char *key, const char *value, ds_error_t *err)
{
    return ds_policy_config_set(p, c, key, value, err);
}

static void test_input_errors(void **st)
{
    (void)st;
    const ds_policy_ops_t *p = ds_policy_find("lucid");
    void *c = p->config_new();
    ds_error_t err;
    ds_error_clear(&err);
    assert_non_null(p->inputs);
    assert_int_equal(p->config_set(c, "lucid-single", "/etc/passwd", &err), DS_EINVAL); /* no file opened here */
    ds_error_clear(&err);
    const char *bad = tu_write_temp("bad_single.csv", "model,dataset,batchsize,amp,label\nM0,D,32,0,1\nM1,D,32,0,x\n");
    assert_int_equal(set(p, c, "lucid-single", bad, &err), DS_EPARSE);
    assert_int_equal(err.line, 3);
    assert_string_equal(err.field, "label");
    ds_error_clear(&err);
    const char *three = tu_write_temp("three.csv", "model,dataset,batchsize,amp,label\nM0,D,32,0,3\n");
    assert_int_equal(set(p, c, "lucid-single", three, &err), DS_EPARSE);
    assert_string_equal(err.field, "label");
    ds_error_clear(&err);
    const char *back = tu_write_temp("back.csv", "time,pred_gpu_job,pred_gpu_num\n10,1,1\n5,1,1\n");
    assert_int_equal(set(p, c, "lucid-throughput", back, &err), DS_EPARSE);
    assert_int_equal(err.line, 3);
    ds_error_clear(&err);
    const char *nocol = tu_write_temp("nocol.csv", "time,pred_gpu_num\n10,1\n");
    assert_int_equal(set(p, c, "lucid-throughput", nocol, &err), DS_EPARSE);
    assert_string_equal(err.field, "pred_gpu_job");
    ds_error_clear(&err);
    assert_int_not_equal(set(p, c, "lucid-throughput", "/nonexistent/tp.csv", &err), DS_OK);
    assert_int_equal(set(p, c, "lucid-default-score", "3", &err), DS_EINVAL);
    assert_int_equal(set(p, c, "no-such-key", "1", &err), DS_ENOTFOUND);
    p->config_free(c);
}

static void test_needs_estimates(void **st)
{
    (void)st;
    ds_trace_t t;
    tu_trace(&t, "A:8", "1 A 1 0 100");
    t.jobs[0].estimate = NAN;
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.policy = ds_policy_find("lucid");
    const char *kv[] = {"lucid-profiler", "0", NULL};
    void *cfg = cfg_new(kv);
    c.policy_config = cfg;
    ds_sim_result_t r;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_sim_run(&t, &c, &r, &err), DS_EINVAL);
    assert_string_equal(err.field, "estimate");
    ds_lucid_config_free(cfg);
    ds_trace_free(&t);
}

/* ---- Venus against the reference simulator's figures ---- */

static void test_venus_reference(void **st)
{
    (void)st;
    const char *paths[6] = {"venus/venus_sept_jobs.csv", "venus/vc_config.csv", "estimates/Venus_Sept_ebm_weekly_updated.csv",
                            "colocation/colocate_info.csv", "colocation/single_data.csv", "venus/Venus_throughput_pred.csv"};
    char full[6][1024];
    for (int i = 0; i < 6; i++) {
        const char *p = tu_data(paths[i]);
        if (!p) skip();
        snprintf(full[i], sizeof full[i], "%s", p);
    }
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_trace_read_tenants(&t, full[1], 8, &err), 0);
    assert_int_equal(ds_trace_read_jobs(&t, full[0], &err), 0);
    assert_int_equal(ds_trace_read_estimates(&t, full[2], 1000.0, NULL, &err), 0);
    ds_coloc_t c;
    assert_int_equal(ds_coloc_read(&c, full[3], &err), 0);
    ds_coloc_bind(&c, &t);
    const char *kv[] = {"lucid-single", full[4], "lucid-throughput", full[5], NULL};
    void *cfg = cfg_new(kv);
    ds_sim_result_t r;
    run(&t, cfg, &c, &r);
    /* reference: avg JCT 12,886 s, avg queueing delay 915 s, 3,619 jobs colocated */
    assert_true(fabs(r.jct.avg / 12886.0 - 1) < 0.05);
    assert_true(fabs(r.queue.avg / 915.0 - 1) < 0.05);
    double guests_first = -1;
    for (int i = 0; i < r.npstats; i++)
        if (!strcmp(r.pstats[i].name, "guests_ending_before_host")) guests_first = r.pstats[i].value;
    assert_true(fabs(guests_first / 3619.0 - 1) < 0.10);
    ds_sim_result_free(&r);
    ds_lucid_config_free(cfg);
    ds_coloc_free(&c);
    ds_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profiler),
        cmocka_unit_test(test_profiler_scales_up),
        cmocka_unit_test(test_packing_rules),
        cmocka_unit_test(test_packing_picks_first_started),
        cmocka_unit_test(test_reference_pairing),
        cmocka_unit_test(test_sharing_switch),
        cmocka_unit_test(test_future_mean),
        cmocka_unit_test(test_input_errors),
        cmocka_unit_test(test_needs_estimates),
        cmocka_unit_test(test_venus_reference),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
