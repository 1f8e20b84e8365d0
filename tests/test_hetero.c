/* test_hetero.c: heterogeneous accelerators (docs/heterogeneous.md): Gavel's tables converted, node types and
 * per-type quotas read, a job's speed per type, typed placement (one type per job, the type a job asks for,
 * type-blind and fastest-first), per-type quota accounting and QAD, and SPEC 6's invariants on a mixed
 * cluster under every policy. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deepshare/import.h"
#include "deepshare/policy.h"
#include "deepshare/predictor.h"
#include "deepshare/qad.h"
#include "deepshare/speeds.h"
#include "deepshare/synth.h"

static char dir[512];

static int setup(void **st)
{
    (void)st;
    tu_make_dir("ds_hetero", dir, sizeof dir);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    return tu_remove_dir(dir);
}

static const char *src_file(const char *rel, char *buf, size_t n)
{
    const char *src = getenv("DS_SRC");
    snprintf(buf, n, "%s/%s", src ? src : "..", rel);
    return buf;
}

/* ---- Gavel's tables ---- */

static void test_gavel_conversion(void **st)
{
    (void)st;
    char in[1024], p[1200];
    ds_gavel_summary_t sum;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_import_gavel(src_file("tests/fixtures/gavel/tiny.json", in, sizeof in), NULL, dir, &sum, &err), 0);
    assert_int_equal(sum.types, 2);
    assert_int_equal(sum.skipped_types, 1); /* k80_unconsolidated */
    assert_int_equal(sum.speeds, 5);
    assert_int_equal(sum.pairs, 4);
    assert_int_equal(sum.unfit, 1);
    snprintf(p, sizeof p, "%s/speeds.csv", dir);
    char *s = tu_slurp(p, NULL);
    assert_non_null(s);
    assert_string_equal(s, "model,dataset,batchsize,amp,gpus,gpu_type,throughput\n"
                           "ResNet-50,ImageNet,64,0,1,v100,4\n"
                           "A3C,Pong,0,0,1,v100,8\n"
                           "ResNet-50,ImageNet,64,0,2,v100,7.5\n"
                           "ResNet-50,ImageNet,64,0,1,k80,1\n"
                           "A3C,Pong,0,0,1,k80,4\n");
    free(s);
    snprintf(p, sizeof p, "%s/pairs.csv", dir);
    s = tu_slurp(p, NULL);
    assert_non_null(s);
    /* a pair's two throughputs over each job's own alone; listed once though the table has both sides; the
     * [0, 0] A3C pair on v100 left out (unprofiled) */
    assert_string_equal(s, "model1,dataset1,batchsize1,amp1,speed1,model2,dataset2,batchsize2,amp2,speed2,gpu_util,"
                           "gmem_util,gmem,gpu_type\n"
                           "ResNet-50,ImageNet,64,0,0.500000,ResNet-50,ImageNet,64,0,0.500000,0,0,0,v100\n"
                           "ResNet-50,ImageNet,64,0,0.750000,A3C,Pong,0,0,0.750000,0,0,0,v100\n"
                           "ResNet-50,ImageNet,64,0,0.500000,ResNet-50,ImageNet,64,0,0.500000,0,0,0,k80\n"
                           "ResNet-50,ImageNet,64,0,0.250000,A3C,Pong,0,0,0.750000,0,0,0,k80\n");
    free(s);
    /* the converted files read back: the pairs as a typed colocation profile */
    ds_coloc_t c;
    assert_int_equal(ds_coloc_read(&c, p, &err), 0);
    assert_int_equal(c.npairs, 4);
    assert_true(c.typed);
    assert_string_equal(c.pairs[3].gtype, "k80");
    ds_coloc_free(&c);
}

static void test_gavel_bad_input(void **st)
{
    (void)st;
    ds_gavel_summary_t sum;
    ds_error_t err;
    ds_error_clear(&err);
    const char *bad = tu_write_temp("gavel_bad.json", "{\"v100\": {\"ResNet-50, 1\": {\"null\": 2}}}");
    assert_int_not_equal(ds_import_gavel(bad, NULL, dir, &sum, &err), 0);
    tu_expect_error(&err, "gavel_bad.json", 0, "ResNet-50, 1", "not a Gavel job type");
    ds_error_clear(&err);
    const char *syntax = tu_write_temp("gavel_syntax.json", "{\"v100\":\n {\"('A3C', 1)\": [}");
    assert_int_not_equal(ds_import_gavel(syntax, NULL, dir, &sum, &err), 0);
    tu_expect_error(&err, "gavel_syntax.json", 2, "", "column");
    /* two spellings of one workload (a fuzzer's find): refused, not written as two rows of it */
    ds_error_clear(&err);
    const char *twice = tu_write_temp("gavel_twice.json", "{\"v100\": {\"('A3C', 1)\": {\"null\": 2}, "
                                                          "\"('A3C', 01)\": {\"null\": 3}}}");
    assert_int_not_equal(ds_import_gavel(twice, NULL, dir, &sum, &err), 0);
    tu_expect_error(&err, "gavel_twice.json", 0, "('A3C', 01)", "names the same workload");
}

/* The shipped data/gavel files are Gavel's own, converted: speeds from the physical cluster's table, pairs
 * from the simulator's (where their throughputs alone were measured with them). */
static void test_shipped_tables_reproduce(void **st)
{
    (void)st;
    char p1[1024], p2[1024]; /* tu_data's buffer is reused by the next call */
    const char *phys = tu_data("gavel/physical_cluster_throughputs.json");
    snprintf(p1, sizeof p1, "%s", phys ? phys : "");
    const char *sim = tu_data("gavel/simulation_throughputs.json");
    snprintf(p2, sizeof p2, "%s", sim ? sim : "");
    if (!phys || !sim) {
        fprintf(stderr, "skipped: ../shared/data/gavel absent\n");
        return;
    }
    ds_gavel_summary_t sum;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_import_gavel(p1, p2, dir, &sum, &err), 0);
    const char *names[] = {"speeds.csv", "pairs.csv"};
    for (int k = 0; k < 2; k++) {
        char a[1200], b[1200], rel[64];
        snprintf(a, sizeof a, "%s/%s", dir, names[k]);
        snprintf(rel, sizeof rel, "data/gavel/%s", names[k]);
        char *x = tu_slurp(a, NULL), *y = tu_slurp(src_file(rel, b, sizeof b), NULL);
        assert_non_null(x);
        assert_non_null(y);
        assert_string_equal(x, y);
        free(x);
        free(y);
    }
}

/* ---- reading node types, quotas, jobs ---- */

static void read_typed(ds_trace_t *t, const char *cluster, const char *tenants, const char *jobs)
{
    ds_trace_init(t);
    ds_error_t err;
    ds_error_clear(&err);
    if (cluster) assert_int_equal(ds_trace_read_cluster(t, tu_write_temp("cl.csv", cluster), &err), 0);
    int rc = ds_trace_read_tenants(t, tu_write_temp("tn.csv", tenants), 8, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    rc = ds_trace_read_jobs(t, tu_write_temp("jb.csv", jobs), &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
}

static void test_cluster_and_typed_quotas(void **st)
{
    (void)st;
    ds_trace_t t;
    read_typed(&t, "gpu_type,nodes,gpus_per_node,gmem_mib\nv100,,8,16384\nk80,3,4,12288\n",
               "tenant,quota_v100,quota_k80\na,16,4\nb,0,8\n",
               "job_id,tenant,gpus,submit,duration,gpu_type\n1,a,2,0,10,v100\n2,b,1,0,10,\n3,b,4,1,10,any\n4,a,1,2,5,K80\n");
    assert_int_equal(t.ngtypes, 2);
    assert_int_equal(t.gtypes[1].gpus_per_node, 4);
    assert_int_equal(t.gtypes[1].nodes, 3);
    assert_int_equal(t.tenants[0].quota_gpus, 20);
    assert_int_equal(t.tenants[0].quota_t[0], 16);
    assert_int_equal(t.tenants[0].quota_t[1], 4);
    assert_int_equal(t.tenants[1].quota_gpus, 8);
    assert_int_equal(t.jobs[0].gtype, 0);
    assert_int_equal(t.jobs[0].ref_gtype, 0); /* timed where it had to run */
    assert_int_equal(t.jobs[1].gtype, -1);
    assert_int_equal(t.jobs[2].gtype, -1);
    assert_int_equal(t.jobs[3].gtype, 1); /* names are case-insensitive */
    assert_int_equal(t.jobs[3].gmask, 2);
    assert_int_equal(t.jobs[1].gmask, 0);
    ds_trace_free(&t);
    /* a set of types (Alibaba's gpu_spec "V100M16|V100M32"): any of them */
    read_typed(&t, "gpu_type\nv100\nt4\nk80\n", "tenant,quota_v100,quota_t4,quota_k80\na,8,8,8\n",
               "job_id,tenant,gpus,submit,duration,gpu_type\n1,a,2,0,10,v100|k80\n");
    assert_int_equal(t.jobs[0].gtype, -1);
    assert_int_equal(t.jobs[0].gmask, 5);
    assert_int_equal(t.jobs[0].ref_gtype, -1);
    ds_trace_free(&t);
    /* types from the tenant file's columns alone, with the run's default shape */
    read_typed(&t, NULL, "tenant,quota_gpus,quota_a100,quota_t4\nx,12,8,4\n",
               "job_id,tenant,gpus,submit,duration,gpu_type,ref_gpu_type\n1,x,1,0,10,t4,a100\n");
    assert_int_equal(t.ngtypes, 2);
    assert_string_equal(t.gtypes[0].name, "a100");
    assert_int_equal(t.gtypes[0].gpus_per_node, 0);
    assert_int_equal(t.jobs[0].gtype, 1);
    assert_int_equal(t.jobs[0].ref_gtype, 0);
    ds_trace_free(&t);
}

static void expect_read_error(const char *cluster, const char *tenants, const char *jobs, const char *file, long line,
                              const char *field, const char *needle)
{
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    ds_error_clear(&err);
    int rc = 0;
    if (cluster) rc = ds_trace_read_cluster(&t, tu_write_temp("cl.csv", cluster), &err);
    if (!rc && tenants) rc = ds_trace_read_tenants(&t, tu_write_temp("tn.csv", tenants), 8, &err);
    if (!rc && jobs) rc = ds_trace_read_jobs(&t, tu_write_temp("jb.csv", jobs), &err);
    assert_int_not_equal(rc, 0);
    tu_expect_error(&err, file, line, field, needle);
    ds_trace_free(&t);
}

static void test_typed_read_errors(void **st)
{
    (void)st;
    expect_read_error("gpu_type,gpus_per_node\nv100,8\nv100,4\n", NULL, NULL, "cl.csv", 3, "gpu_type", "duplicate GPU type");
    expect_read_error("gpu_type,gpus_per_node\nv1 00,8\n", NULL, NULL, "cl.csv", 2, "gpu_type", "not a GPU type name");
    expect_read_error("gpu_type,gpus_per_node\nany,8\n", NULL, NULL, "cl.csv", 2, "gpu_type", "reserved");
    expect_read_error("gpu_type,gpus_per_node\nv100,65\n", NULL, NULL, "cl.csv", 2, "gpus_per_node", "above the maximum");
    expect_read_error("gpu_type,gpus_per_node\nv100,8\n", "tenant,quota_v100,quota_k80\na,8,8\n", NULL, "tn.csv", 1,
                      "quota_k80", "unknown GPU type 'k80'");
    expect_read_error("gpu_type\nv100\nk80\n", "tenant,quota_gpus\na,8\n", NULL, "tn.csv", 1, "", "quota per type");
    expect_read_error(NULL, "tenant,quota_gpus,quota_v100,quota_k80\na,9,4,4\n", NULL, "tn.csv", 2, "quota_gpus",
                      "not the sum");
    expect_read_error(NULL, "tenant,quota_v100\na,8\n", "job_id,tenant,gpus,submit,duration,gpu_type\n1,a,1,0,5,h100\n",
                      "jb.csv", 2, "gpu_type", "unknown GPU type 'h100'");
    expect_read_error(NULL, "tenant,quota_gpus\na,8\n", "job_id,tenant,gpus,submit,duration,gpu_type\n1,a,1,0,5,v100\n",
                      "jb.csv", 2, "gpu_type", "no node types");
    expect_read_error(NULL, "tenant,quota_v100,quota_k80\na,8,8\n", "job_id,tenant,gpus,submit,duration,gpu_type\n1,a,1,0,5,v100|\n",
                      "jb.csv", 2, "gpu_type", "unknown GPU type ''");
    expect_read_error(NULL, "tenant,quota_v100,quota_k80\na,8,8\n",
                      "job_id,tenant,gpus,submit,duration,ref_gpu_type\n1,a,1,0,5,v100|k80\n", "jb.csv", 2, "ref_gpu_type",
                      "one GPU type expected");
}

static void test_speed_of_a_job(void **st)
{
    (void)st;
    char p[1024];
    ds_speeds_t s;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_speeds_read(&s, src_file("data/gavel/speeds.csv", p, sizeof p), &err), 0);
    ds_trace_t t;
    read_typed(&t, NULL, "tenant,quota_v100,quota_p100,quota_k80\na,8,8,8\n",
               "job_id,tenant,gpus,submit,duration,model,dataset,batchsize,gpu_type,ref_gpu_type\n"
               "1,a,1,0,100,ResNet-50,ImageNet,64,,\n2,a,2,0,100,ResNet-50,ImageNet,64,,\n"
               "3,a,1,0,100,ResNet-50,ImageNet,64,,k80\n4,a,1,0,100,unknown,x,1,,\n"
               "5,a,3,0,100,ResNet-50,ImageNet,64,,\n");
    ds_speeds_bind(&s, &t);
    /* physical cluster: ResNet-50 (batch 64) at 4.53 steps/s on a V100, 0.75 on a K80 */
    double v = 0, k = 0, v2 = 0, p2 = 0;
    for (int32_t i = 0; i < s.nrows; i++) {
        const ds_speed_row_t *r = &s.rows[i];
        if (strcmp(r->model, "ResNet-50") || r->batch != 64) continue;
        if (r->gpus == 1 && !strcmp(r->gtype, "v100")) v = r->thr;
        if (r->gpus == 1 && !strcmp(r->gtype, "k80")) k = r->thr;
        if (r->gpus == 2 && !strcmp(r->gtype, "v100")) v2 = r->thr;
        if (r->gpus == 2 && !strcmp(r->gtype, "p100")) p2 = r->thr;
    }
    assert_true(v > 0 && k > 0 && v2 > 0 && p2 > 0);
    assert_true(fabs(ds_speeds_rate(&s, &t, 0, 0) - 1.0) < 1e-12); /* its reference type, the first */
    assert_true(fabs(ds_speeds_rate(&s, &t, 0, 2) - k / v) < 1e-12);
    assert_true(fabs(ds_speeds_rate(&s, &t, 1, 1) - p2 / v2) < 1e-12); /* two GPUs: the 2-GPU measurement */
    assert_true(fabs(ds_speeds_rate(&s, &t, 4, 1) - p2 / v2) < 1e-12); /* three: the 2-GPU one below it */
    assert_true(fabs(ds_speeds_rate(&s, &t, 2, 0) - v / k) < 1e-12); /* timed on a K80: faster on a V100 */
    assert_true(fabs(ds_speeds_rate(&s, &t, 3, 2) - 1.0) < 1e-12);   /* not in the table */
    assert_false(ds_speeds_known(&s, 3, 2));
    /* effective GPUs: the harmonic mean of the types' speeds, about 0.2 for a K80 */
    double w = ds_speeds_type_weight(&s, &t, 2);
    assert_true(w > 0.1 && w < 0.3);
    assert_true(fabs(ds_speeds_type_weight(&s, &t, 0) - 1.0) < 1e-12);
    ds_trace_free(&t);
    ds_speeds_free(&s);
}

/* ---- engine: layout, placement, accounting ---- */

/* v100 nodes of 8 GPUs and k80 nodes of 4; tenant a: 16 v100 + 4 k80, b: 8 k80. */
static void small_cluster(ds_trace_t *t, const char *jobs)
{
    read_typed(t, "gpu_type,gpus_per_node,cpus_per_node\nv100,8,64\nk80,4,32\n",
               "tenant,quota_v100,quota_k80\na,16,4\nb,0,8\n", jobs);
}

static ds_engine_t *engine(const ds_trace_t *t, ds_mode_t mode, int order, const ds_predictors_t *pr)
{
    ds_engine_config_t c;
    ds_engine_config_default(&c);
    c.mode = mode;
    c.type_order = order;
    c.predictors = pr;
    ds_engine_t *e;
    ds_error_t err;
    ds_error_clear(&err);
    int rc = ds_engine_create(&e, t, &c, ds_policy_find("fifo"), NULL, &err);
    if (rc) fprintf(stderr, "%s\n", err.msg);
    assert_int_equal(rc, 0);
    return e;
}

static void test_typed_layout(void **st)
{
    (void)st;
    ds_trace_t t;
    small_cluster(&t, "job_id,tenant,gpus,submit,duration\n1,a,1,0,10\n");
    ds_engine_t *e = engine(&t, DS_MODE_POOLED, DS_TYPES_BLIND, NULL);
    assert_int_equal(e->nparts, 1);
    assert_int_equal(e->parts[0].tnnodes[0], 2);
    assert_int_equal(e->parts[0].tnnodes[1], 3); /* 1 of a's + 2 of b's K80 nodes */
    assert_int_equal(e->ngpus, 2 * 8 + 3 * 4);
    assert_int_equal(e->nodes[2].gtype, 1);
    assert_int_equal(e->nodes[2].ngpus, 4);
    assert_int_equal(e->nodes[2].cpus_total, 32);
    assert_int_equal(e->nodes[2].gpu0, 16);
    assert_int_equal(e->cfg.gpus_per_node, 8);
    ds_engine_destroy(e);
    e = engine(&t, DS_MODE_PARTITIONED, DS_TYPES_BLIND, NULL);
    assert_int_equal(e->nparts, 2);
    assert_int_equal(e->parts[0].tnnodes[0], 2);
    assert_int_equal(e->parts[0].tnnodes[1], 1);
    assert_int_equal(e->parts[1].tnnodes[0], 0);
    assert_int_equal(e->parts[1].tnnodes[1], 2);
    assert_int_equal(e->parts[1].gpus_total, 8);
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

static int32_t type_of(const ds_engine_t *e, int32_t j) { return ds_engine_job_type(e, j); }

static void test_typed_placement(void **st)
{
    (void)st;
    ds_trace_t t;
    /* 0: 3 GPUs any; 1: 4 K80; 2: 8 any; 3: 6 any (a K80 node holds 4: two nodes); 4: 2 v100 */
    small_cluster(&t, "job_id,tenant,gpus,submit,duration,gpu_type\n1,a,3,0,10,\n2,a,4,0,10,k80\n3,a,8,0,10,\n"
                      "4,b,6,0,10,k80\n5,a,2,0,10,v100\n");
    ds_engine_t *e = engine(&t, DS_MODE_POOLED, DS_TYPES_BLIND, NULL);
    for (int32_t j = 0; j < t.njobs; j++) ds_engine_arrive(e, j, 0);
    /* type-blind: the fullest node that fits over both types: all empty, so the fullest is a K80 node (4) */
    assert_true(ds_engine_place(e, 0, 0));
    assert_int_equal(type_of(e, 0), 1);
    assert_true(ds_engine_place(e, 1, 0)); /* asks for K80: a whole empty K80 node */
    assert_int_equal(type_of(e, 1), 1);
    assert_true(ds_engine_place(e, 2, 0)); /* 8 GPUs fit one node of V100 only */
    assert_int_equal(type_of(e, 2), 0);
    /* 6 K80 GPUs: more than a K80 node, and one K80 node left with 4 and one with 1: no room on K80 */
    assert_false(ds_engine_place(e, 3, 0));
    assert_true(ds_engine_place(e, 4, 0));
    assert_int_equal(type_of(e, 4), 0);
    char msg[200];
    assert_int_equal(ds_engine_check(e, msg, sizeof msg), 0);
    /* per-type counters: tenant a holds 3 + 4 on K80 and 8 + 2 on V100, all G for a classless policy */
    assert_int_equal(e->tenant_g_gpus_t[0 * 2 + 0], 10);
    assert_int_equal(e->tenant_g_gpus_t[0 * 2 + 1], 7);
    assert_int_equal(e->tenant_pend_t[1 * 2 + 1], 6); /* b's 6 K80 GPUs wait */
    ds_engine_finish(e, 0, 5);
    ds_engine_finish(e, 1, 5);
    assert_true(ds_engine_place(e, 3, 5)); /* two K80 nodes now: 4 + 2 */
    assert_int_equal(type_of(e, 3), 1);
    const int32_t *g = ds_engine_job_gpus(e, 3);
    for (int32_t i = 0; i < 6; i++) assert_int_equal(ds_engine_gpu_type(e, g[i]), 1);
    assert_int_equal(ds_engine_check(e, msg, sizeof msg), 0);
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

static void test_type_set(void **st)
{
    (void)st;
    ds_trace_t t;
    read_typed(&t, "gpu_type,gpus_per_node\nv100,8\nt4,4\nk80,4\n", "tenant,quota_v100,quota_t4,quota_k80\na,8,4,4\n",
               "job_id,tenant,gpus,submit,duration,gpu_type\n1,a,4,0,10,v100|k80\n2,a,4,0,10,v100|k80\n3,a,4,0,10,v100|k80\n"
               "4,a,4,0,10,v100|k80\n");
    ds_engine_t *e = engine(&t, DS_MODE_POOLED, DS_TYPES_BLIND, NULL);
    for (int32_t j = 0; j < t.njobs; j++) ds_engine_arrive(e, j, 0);
    /* the fullest node that fits of the two types it accepts: the K80 node (4 GPUs), never the T4 one */
    assert_true(ds_engine_place(e, 0, 0));
    assert_int_equal(type_of(e, 0), 2);
    assert_true(ds_engine_place(e, 1, 0));
    assert_int_equal(type_of(e, 1), 0);
    assert_true(ds_engine_place(e, 2, 0));
    assert_int_equal(type_of(e, 2), 0);
    assert_false(ds_engine_place(e, 3, 0)); /* the T4 node is free but not one of its types */
    /* a job of several types waits as work of any type (the QAD's P_any): entitled to 12 + 4 */
    assert_true(fabs(ds_engine_qad(e, 0, DS_QAD_ALL) - 12.0 / 16.0) < 1e-12);
    char msg[200];
    assert_int_equal(ds_engine_check(e, msg, sizeof msg), 0);
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

static double fake_rate(void *ctx, const ds_trace_t *t, int32_t job, int32_t gtype)
{
    (void)ctx, (void)t;
    /* job 0 runs 3x faster on a K80 than a V100 (Gavel's tables have such cases); others the other way */
    if (job == 0) return gtype == 1 ? 3.0 : 1.0;
    return gtype == 1 ? 0.25 : 1.0;
}

static void test_fastest_first(void **st)
{
    (void)st;
    ds_trace_t t;
    small_cluster(&t, "job_id,tenant,gpus,submit,duration\n1,a,2,0,10\n2,a,2,0,10\n");
    ds_speed_predictor_t sp = {"fake", NULL, fake_rate};
    ds_predictors_t pr = {NULL, NULL, &sp};
    ds_engine_t *e = engine(&t, DS_MODE_POOLED, DS_TYPES_FASTEST, &pr);
    for (int32_t j = 0; j < t.njobs; j++) ds_engine_arrive(e, j, 0);
    int32_t order[DS_MAX_GPU_TYPES];
    assert_int_equal(ds_engine_type_order(e, 1, order), 2);
    assert_int_equal(order[0], 0);
    assert_int_equal(order[1], 1);
    assert_true(ds_engine_place(e, 0, 0));
    assert_int_equal(type_of(e, 0), 1);
    assert_true(ds_engine_place(e, 1, 0));
    assert_int_equal(type_of(e, 1), 0);
    ds_engine_destroy(e);
    /* type-blind: the K80 node is fuller (4 GPUs) than an empty V100 one: job 1 lands there */
    e = engine(&t, DS_MODE_POOLED, DS_TYPES_BLIND, &pr);
    for (int32_t j = 0; j < t.njobs; j++) ds_engine_arrive(e, j, 0);
    assert_true(ds_engine_place(e, 1, 0));
    assert_int_equal(type_of(e, 1), 1);
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

static void test_never_runs_on_its_type(void **st)
{
    (void)st;
    ds_trace_t t;
    small_cluster(&t, "job_id,tenant,gpus,submit,duration,gpu_type\n1,b,16,0,10,k80\n");
    ds_engine_config_t c;
    ds_engine_config_default(&c);
    c.mode = DS_MODE_POOLED;
    ds_engine_t *e;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_not_equal(ds_engine_create(&e, &t, &c, ds_policy_find("fifo"), NULL, &err), 0);
    tu_expect_error(&err, "jb.csv", 2, "gpu_type", "16 GPUs of type k80");
    ds_trace_free(&t);
}

/* ---- per-type QAD ---- */

static void test_typed_qad(void **st)
{
    (void)st;
    int64_t q[2] = {4, 4}, none[2] = {0, 0};
    /* one type: the untyped definition */
    for (int64_t h = 0; h <= 10; h++)
        for (int64_t p = 0; p <= 10; p++) {
            int64_t hq[1] = {h}, pq[1] = {0}, qq[1] = {6};
            assert_true(fabs(ds_qad_ratio_typed(hq, pq, p, qq, 1) - ds_qad_ratio(h, p, 6)) < 1e-12);
        }
    /* 8 K80 held by jobs of any type, 4 more wanted: its V100 quota idles while it waits */
    int64_t h1[2] = {0, 8};
    assert_true(fabs(ds_qad_ratio_typed(h1, none, 4, q, 2) - 0.5) < 1e-12);
    /* the same holding, nothing wanted: served (nothing more it could be given) */
    assert_true(fabs(ds_qad_ratio_typed(h1, none, 0, q, 2) - 1.0) < 1e-12);
    /* 4 V100 wanted by jobs that ask for V100, 4 K80 held: entitled to 8, served 4 */
    int64_t p2[2] = {4, 0}, h2[2] = {0, 4};
    assert_true(fabs(ds_qad_ratio_typed(h2, p2, 0, q, 2) - 0.5) < 1e-12);
    /* wanting only V100 beyond its V100 quota: entitled to 4 of them, which it holds */
    int64_t h3[2] = {4, 0}, p3[2] = {12, 0};
    assert_true(fabs(ds_qad_ratio_typed(h3, p3, 0, q, 2) - 1.0) < 1e-12);
    /* no demand, or no quota: 1 */
    assert_true(fabs(ds_qad_ratio_typed(none, none, 0, q, 2) - 1.0) < 1e-12);
    assert_true(fabs(ds_qad_ratio_typed(h1, none, 5, none, 2) - 1.0) < 1e-12);

    /* the engine's live accounting feeds the same definition */
    ds_trace_t t;
    small_cluster(&t, "job_id,tenant,gpus,submit,duration,gpu_type\n1,b,4,0,10,k80\n2,b,4,0,10,k80\n3,b,4,0,10,\n"
                      "4,a,8,0,10,v100\n5,a,4,0,10,k80\n");
    ds_engine_t *e = engine(&t, DS_MODE_POOLED, DS_TYPES_BLIND, NULL);
    for (int32_t j = 0; j < t.njobs; j++) ds_engine_arrive(e, j, 0);
    assert_true(fabs(ds_engine_qad(e, 1, DS_QAD_ALL) - 0.0) < 1e-12);
    assert_true(ds_engine_place(e, 0, 0));
    /* b: 4 of its 8 K80 held, 8 more wanted (4 of K80, 4 of any): entitled to its 8 K80 quota */
    assert_true(fabs(ds_engine_qad(e, 1, DS_QAD_ALL) - 0.5) < 1e-12);
    assert_true(ds_engine_place(e, 2, 0)); /* any type: the fullest node that fits, a K80 one */
    assert_int_equal(type_of(e, 2), 1);
    assert_true(ds_engine_place(e, 1, 0));
    assert_true(fabs(ds_engine_qad(e, 1, DS_QAD_ALL) - 1.0) < 1e-12);
    /* a: 8 V100 pending; its K80 job finds no K80 left */
    assert_false(ds_engine_place(e, 4, 0));
    assert_true(ds_engine_place(e, 3, 0));
    assert_true(fabs(ds_engine_qad(e, 0, DS_QAD_ALL) - 8.0 / 12.0) < 1e-12);
    char msg[200];
    assert_int_equal(ds_engine_check(e, msg, sizeof msg), 0);
    ds_engine_destroy(e);
    ds_trace_free(&t);
}

/* ---- the simulator on a mixed cluster ---- */

/* A job alone runs at its speed on the type it got; the trace duration is on its reference type. */
static void test_sim_speed(void **st)
{
    (void)st;
    char p[1024];
    ds_speeds_t s;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_speeds_read(&s, src_file("data/gavel/speeds.csv", p, sizeof p), &err), 0);
    ds_trace_t t;
    read_typed(&t, "gpu_type,gpus_per_node\nv100,8\nk80,4\n", "tenant,quota_v100,quota_k80\na,0,4\n",
               "job_id,tenant,gpus,submit,duration,model,dataset,batchsize,gpu_type\n1,a,1,0,1000,ResNet-50,ImageNet,64,k80\n"
               "2,a,1,0,1000,ResNet-50,ImageNet,64,\n");
    ds_speeds_bind(&s, &t);
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.engine.mode = DS_MODE_PARTITIONED;
    c.policy = ds_policy_find("fifo");
    c.speeds = &s;
    ds_sim_result_t r;
    tu_sim(&t, &c, &r);
    /* job 1 was timed on its K80; job 2 on the reference V100, and runs on a K80 (a's only type) */
    assert_int_equal(r.end[0] - r.start[0], 1000);
    double rate = ds_speeds_rate(&s, &t, 1, 1);
    assert_true(rate < 0.5);
    assert_int_equal(r.end[1] - r.start[1], (int64_t)ceil(1000.0 / rate - 1e-9));
    ds_sim_result_free(&r);
    ds_trace_free(&t);
    ds_speeds_free(&s);
}

/* SPEC 6 on a mixed cluster, every policy that takes one, both modes, type-blind and fastest-first: the
 * engine's and the policy's invariants after every pass (with the typed ones: one type per job, the type it
 * asks for, per-type counters), every job finishing once, and the work identity per job: what a job never
 * sharing a GPU progressed, its run time on each type times its speed there, is its work and restart
 * overheads. */
/* A run the policy refuses before it starts, with why in its message. */
static void assert_refused(const ds_trace_t *t, const char *policy, ds_mode_t mode, const char *why)
{
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.policy = ds_policy_find(policy);
    c.engine.mode = mode;
    ds_sim_result_t r;
    ds_error_t err;
    ds_error_clear(&err);
    int rc = ds_sim_run(t, &c, &r, &err);
    if (rc == 0) ds_sim_result_free(&r);
    if (rc == 0 || !strstr(err.msg, why)) fprintf(stderr, "%s: rc %d, %s\n", policy, rc, err.msg);
    assert_int_not_equal(rc, 0);
    assert_non_null(strstr(err.msg, why));
}

/* KAI on two types (docs/peers.md): a queue's quota counts GPUs of every type alike, and a reclaim frees a
 * node of a type the reclaiming job accepts. a owns 8 V100s and b 8 K80s (KAI sees 8 each); a's G job holds the
 * K80 node and its over-quota (preemptible) job the V100 node. b's K80 job cannot take the V100 node: it waits
 * for the K80 node, evicting nothing; b's job of any type reclaims the V100 node from a's preemptible job. */
static void test_kai_typed_reclaim(void **st)
{
    (void)st;
    ds_trace_t t;
    read_typed(&t, "gpu_type,gpus_per_node,cpus_per_node\nv100,8,64\nk80,8,64\n",
               "tenant,quota_v100,quota_k80\na,8,0\nb,0,8\n",
               "job_id,tenant,gpus,submit,duration,gpu_type\n1,a,8,0,1000,k80\n2,a,8,1,1000,\n3,b,8,10,100,k80\n"
               "4,b,8,20,100,\n");
    ds_sim_result_t r;
    tu_run_kv(&t, "kai", DS_MODE_POOLED, NULL, &r);
    assert_int_equal(r.gtype[0], 1);
    assert_int_equal(r.gtype[1], 0);
    assert_int_equal(r.gtype[2], 1);            /* the K80 job ran on the K80 node, */
    assert_true(r.start[2] >= r.end[0]);        /* once a's G job left it */
    assert_int_equal(r.gtype[3], 0);            /* the job of any type reclaimed the V100 node */
    assert_true(r.start[3] < r.end[0]);
    assert_int_equal(r.preempts[1], 1);         /* from a's preemptible job, once */
    assert_int_equal(r.preempts[0], 0);
    ds_sim_result_free(&r);
    /* nodes of two sizes: refused, with the reason */
    ds_trace_free(&t);
    read_typed(&t, "gpu_type,gpus_per_node,cpus_per_node\nv100,8,64\nk80,4,32\n", "tenant,quota_v100,quota_k80\na,8,4\n",
               "job_id,tenant,gpus,submit,duration\n1,a,1,0,10\n");
    assert_refused(&t, "kai", DS_MODE_PARTITIONED, "nodes of one size");
    ds_trace_free(&t);
}

/* The Slurm models on two types (docs/peers.md, "Slurm on several GPU types"): typed GRES requests and typed
 * GrpTRES. a's untyped 8-GPU job lands on a V100 node (the select plugin's best fit, the lower node); a's
 * V100 job then waits under GrpTRES=gres/gpu:v100=8 (the untyped job's V100s count: allocated TRES carry the
 * type) although V100s and a's total quota are free, while a's K80 job starts at once, and b's untyped job
 * takes the free V100 node. Without the typed limit a's V100 job starts at once. */
static void test_slurm_typed_grptres(void **st)
{
    (void)st;
    ds_trace_t t;
    const char *jobs = "job_id,tenant,gpus,submit,duration,gpu_type\n1,a,8,0,1000,\n2,a,8,1,100,v100\n3,a,8,2,100,k80\n"
                       "4,b,8,3,100,\n";
    read_typed(&t, "gpu_type,gpus_per_node,cpus_per_node\nv100,8,64\nk80,8,64\n", "tenant,quota_v100,quota_k80\na,8,8\nb,8,8\n",
               jobs);
    ds_sim_result_t r;
    tu_run_kv(&t, "slurm-quota", DS_MODE_POOLED, NULL, &r);
    assert_int_equal(r.gtype[0], 0);
    assert_int_equal(r.gtype[1], 0);
    assert_true(r.start[1] >= r.end[0]);       /* held by gres/gpu:v100 until the untyped job left */
    assert_int_equal(r.gtype[2], 1);
    assert_true(r.start[2] < 100);             /* the K80 job: within both of a's limits */
    assert_int_equal(r.gtype[3], 0);
    assert_true(r.start[3] < 100);
    ds_sim_result_free(&r);
    static const char *const off[] = {"slurm-grp-tres-types", "0", NULL};
    tu_run_kv(&t, "slurm-quota", DS_MODE_POOLED, off, &r);
    assert_int_equal(r.gtype[1], 0);
    assert_true(r.start[1] < 100);             /* only gres/gpu=16: it starts on the free V100 node */
    ds_sim_result_free(&r);
    ds_trace_free(&t);
    /* a job naming a type beyond its account's typed GrpTRES would pend forever: refused with the reason */
    read_typed(&t, "gpu_type,nodes,gpus_per_node,cpus_per_node\nv100,1,8,64\nk80,2,8,64\n",
               "tenant,quota_v100,quota_k80\na,8,8\n", "job_id,tenant,gpus,submit,duration,gpu_type\n1,a,16,0,10,k80\n");
    assert_refused(&t, "slurm-quota", DS_MODE_POOLED, "GrpTRES=gres/gpu:k80=8");
    ds_trace_free(&t);
    /* nodes of two sizes: refused, with the reason */
    read_typed(&t, "gpu_type,gpus_per_node,cpus_per_node\nv100,8,64\nk80,4,32\n", "tenant,quota_v100,quota_k80\na,8,4\n",
               "job_id,tenant,gpus,submit,duration\n1,a,1,0,10\n");
    assert_refused(&t, "slurm-borrow", DS_MODE_POOLED, "nodes of one size");
    ds_trace_free(&t);
}

/* slurm-borrow's job_submit.lua on two types: a job naming a type beyond its account's quota of that type
 * goes to QOS borrow (a has no K80 quota), so b's K80 job, within its K80 quota, preempts it; a's untyped job
 * stays in QOS normal (within a's total) and runs on the V100 node. Without the typed routing a's K80 job is
 * within a's total quota, in QOS normal, and b's job waits for it to end. */
static void test_slurm_typed_borrow(void **st)
{
    (void)st;
    ds_trace_t t;
    read_typed(&t, "gpu_type,gpus_per_node,cpus_per_node\nv100,8,64\nk80,8,64\n", "tenant,quota_v100,quota_k80\na,8,0\nb,0,8\n",
               "job_id,tenant,gpus,submit,duration,gpu_type\n1,a,8,0,1000,k80\n2,b,8,10,100,k80\n3,a,8,20,100,\n");
    ds_sim_result_t r;
    tu_run_kv(&t, "slurm-borrow", DS_MODE_POOLED, NULL, &r);
    assert_int_equal(r.gtype[0], 1);
    assert_int_equal(r.gtype[1], 1);
    assert_true(r.start[1] < r.end[0] && r.start[1] < 200); /* b's normal job requeued a's borrowed K80s */
    assert_int_equal(r.preempts[0], 1);
    assert_int_equal(r.gtype[2], 0);
    assert_int_equal(r.preempts[2], 0);
    assert_true(r.start[2] < 100);
    ds_sim_result_free(&r);
    static const char *const off[] = {"slurm-route-types", "0", NULL};
    tu_run_kv(&t, "slurm-borrow", DS_MODE_POOLED, off, &r);
    assert_int_equal(r.preempts[0], 0);
    assert_true(r.start[1] >= r.end[0]);
    ds_sim_result_free(&r);
    ds_trace_free(&t);
}

static void test_invariants_mixed_cluster(void **st)
{
    (void)st;
    char p[1024], q[1024];
    ds_speeds_t s;
    ds_coloc_t coloc;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(ds_speeds_read(&s, src_file("data/gavel/speeds.csv", p, sizeof p), &err), 0);
    assert_int_equal(ds_coloc_read(&coloc, src_file("data/gavel/pairs.csv", q, sizeof q), &err), 0);
    ds_synth_config_t sc;
    ds_synth_config_default(&sc);
    sc.jobs = 1500;
    sc.gpu_types = "v100:12,p100:8,k80:4";
    sc.speeds = &s;
    ds_trace_t t;
    ds_trace_init(&t);
    assert_int_equal(ds_synth_generate(&t, &sc, &err), 0);
    assert_int_equal(t.ngtypes, 3);
    ds_speeds_bind(&s, &t);
    ds_coloc_bind(&coloc, &t);
    ds_speed_predictor_t sp;
    ds_speed_from_table(&sp, &s);
    ds_runtime_predictor_t rp;
    ds_runtime_oracle(&rp);
    ds_interference_predictor_t ip;
    ds_interference_oracle(&ip, &coloc);
    ds_predictors_t pr = {&rp, &ip, &sp};
    int typed = 0;
    for (const ds_policy_ops_t *const *pol = ds_policy_list(); *pol; pol++) {
        if (!((*pol)->props & DS_POLICY_TYPED) || !strcmp((*pol)->name, "replay")) continue;
        typed++;
        for (int mode = 0; mode < 2; mode++)
            for (int order = 0; order < 2; order++) {
                ds_sim_config_t c;
                ds_sim_config_default(&c);
                c.engine.mode = mode ? DS_MODE_POOLED : DS_MODE_PARTITIONED;
                c.engine.type_order = order;
                c.engine.predictors = &pr;
                c.policy = *pol;
                c.speeds = &s;
                c.coloc = &coloc;
                void *cfg = (*pol)->config_new ? (*pol)->config_new() : NULL;
                c.policy_config = cfg;
                ds_sim_result_t r;
                tu_sim(&t, &c, &r);
                int64_t checked = 0;
                for (int32_t j = 0; j < t.njobs; j++) {
                    assert_true(r.end[j] >= r.start[j] && r.start[j] >= r.submit[j]);
                    if (r.colocated[j] || r.preempts[j] || !((*pol)->props & DS_POLICY_EXACT_HOLD)) continue;
                    /* one run on one type: its length is its work at its speed there, rounded up once */
                    int64_t held = r.end[j] - r.submit[j] - r.queued[j];
                    assert_true(r.gtype[j] >= 0 && r.gtype[j] < 3);
                    assert_true(t.jobs[j].gtype < 0 || t.jobs[j].gtype == r.gtype[j]);
                    double rate = ds_speeds_rate(&s, &t, j, r.gtype[j]);
                    int64_t want = (int64_t)ceil((double)t.jobs[j].duration / rate - 1e-9);
                    /* Tiresias holds its GPUs one second past its work, as the reference (its finish lag) */
                    if (!strcmp((*pol)->name, "tiresias")) want++;
                    if (held != want)
                        fprintf(stderr, "%s job %d: held %lld, work %lld at rate %g: %lld\n", (*pol)->name, j,
                                (long long)held, (long long)t.jobs[j].duration, rate, (long long)want);
                    assert_int_equal(held, want);
                    checked++;
                }
                fprintf(stderr, "%s %s %s: avg queue %.0f s, %lld jobs' holds checked\n", (*pol)->name,
                        mode ? "pooled" : "partitioned", order ? "fastest" : "blind", r.queue.avg, (long long)checked);
                ds_sim_result_free(&r);
                if (cfg) (*pol)->config_free(cfg);
            }
    }
    assert_true(typed >= 5);
    ds_coloc_free(&coloc);
    ds_trace_free(&t);
    ds_speeds_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gavel_conversion),
        cmocka_unit_test(test_gavel_bad_input),
        cmocka_unit_test(test_shipped_tables_reproduce),
        cmocka_unit_test(test_cluster_and_typed_quotas),
        cmocka_unit_test(test_typed_read_errors),
        cmocka_unit_test(test_speed_of_a_job),
        cmocka_unit_test(test_typed_layout),
        cmocka_unit_test(test_typed_placement),
        cmocka_unit_test(test_fastest_first),
        cmocka_unit_test(test_type_set),
        cmocka_unit_test(test_never_runs_on_its_type),
        cmocka_unit_test(test_typed_qad),
        cmocka_unit_test(test_sim_speed),
        cmocka_unit_test(test_kai_typed_reclaim),
        cmocka_unit_test(test_slurm_typed_grptres),
        cmocka_unit_test(test_slurm_typed_borrow),
        cmocka_unit_test(test_invariants_mixed_cluster),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
