/* test_gres_parse.c: the GRES strings of Slurm's job and node records as deepshared parses them
 * (src/slurm/gres_parse.c), fed the strings the local Slurm 22.05.8 cluster showed: index types (gN), GPUs
 * typed by model (gpu:v100:4, Slurm picks), per-GPU types with the model (gpu:v100_g0:1, shard:v100_gN:2),
 * socket and index suffixes, and job requests and pins of each kind. */
#include <string.h>

#include "testutil.h"
#include "slurm/gres_parse.h"

static void test_pin_type(void **state)
{
    (void)state;
    int idx = -1;
    char m[32];
    assert_int_equal(sl_pin_type("g0:1", &idx, m, sizeof m), 1);
    assert_int_equal(idx, 0);
    assert_string_equal(m, "");
    assert_int_equal(sl_pin_type("v100_g12:1", &idx, m, sizeof m), 1);
    assert_int_equal(idx, 12);
    assert_string_equal(m, "v100");
    assert_int_equal(sl_pin_type("a100-80gb_g3(S:0)", &idx, m, sizeof m), 1);
    assert_string_equal(m, "a100-80gb");
    assert_int_equal(idx, 3);
    /* models, not GPUs: a type that merely ends in digits, a g without its model, too many digits */
    assert_int_equal(sl_pin_type("v100:4", &idx, m, sizeof m), 0);
    assert_int_equal(sl_pin_type("gtx1080:1", &idx, m, sizeof m), 0);
    assert_int_equal(sl_pin_type("_g1:1", &idx, m, sizeof m), 0);
    assert_int_equal(sl_pin_type("xg1:1", &idx, m, sizeof m), 0);
    assert_int_equal(sl_pin_type("g1234:1", &idx, m, sizeof m), 0);
    assert_int_equal(sl_pin_type("v1 0_g1:1", &idx, m, sizeof m), 0);
    assert_int_equal(sl_pin_type("averyveryverylongmodelnameindeed_g1:1", &idx, m, 8), 0);
}

static void node_of(const char *gres, sl_node_t *nd)
{
    memset(nd, 0, sizeof *nd);
    for (int k = 0; k < SL_MAX_GPUS; k++) nd->shards[k] = -1;
    nd->gpus = sl_scan_gres(gres, nd->shards, nd);
}

static void test_node_gres(void **state)
{
    (void)state;
    sl_node_t nd;
    /* deploy/slurm/variants/typed-shared, as sinfo %G showed it */
    node_of("gpu:v100_g0:1,gpu:v100_g1:1,gpu:v100_g2:1,gpu:v100_g3:1,shard:v100_g0:2,shard:v100_g1:2,"
            "shard:v100_g2:2,shard:v100_g3:2", &nd);
    assert_int_equal(nd.gpus, 4);
    assert_string_equal(nd.gpu_type, "v100");
    assert_int_equal(nd.types, 1);
    assert_int_equal(nd.model_pins, 1);
    assert_int_equal(nd.model_picks, 0);
    for (int k = 0; k < 4; k++) assert_int_equal(nd.shards[k], 2);
    assert_int_equal(nd.shards[4], -1);
    node_of("gpu:k80_g0:1(S:0),gpu:k80_g1:1(S:0),shard:k80_g0:2(S:0),shard:k80_g1:0(S:0)", &nd);
    assert_int_equal(nd.gpus, 2);
    assert_string_equal(nd.gpu_type, "k80");
    assert_int_equal(nd.shards[1], 0); /* lost in a slurmctld restart */
    /* deepshared's index types: no model */
    node_of("gpu:g0:1,gpu:g1:1,gpu:g2:1,gpu:g3:1,shard:g0:2,shard:g1:2,shard:g2:2,shard:g3:2", &nd);
    assert_int_equal(nd.gpus, 4);
    assert_string_equal(nd.gpu_type, "");
    assert_int_equal(nd.model_pins + nd.model_picks + nd.types, 0);
    assert_int_equal(nd.shards[3], 2);
    /* typed by model: Slurm picks */
    node_of("gpu:v100:4(S:0)", &nd);
    assert_int_equal(nd.gpus, 4);
    assert_string_equal(nd.gpu_type, "v100");
    assert_int_equal(nd.model_picks, 1);
    assert_int_equal(nd.model_pins, 0);
    node_of("gpu:v100:2,gpu:k80:2", &nd);
    assert_int_equal(nd.types, 2);
    node_of("gpu:v100_g0:1,gpu:v100:1", &nd);
    assert_int_equal(nd.model_pins, 1);
    assert_int_equal(nd.model_picks, 1);
    /* GresUsed: the shards allocated per GPU */
    int used[SL_MAX_GPUS] = {0};
    assert_int_equal(sl_scan_gres("gpu:v100_g0:0(IDX:N/A),gpu:v100_g1:1(IDX:1),gpu:v100_g2:0(IDX:N/A),"
                                  "gpu:v100_g3:0(IDX:N/A),shard:v100_g0:0(IDX:N/A),shard:v100_g3:2(IDX:3)", used, NULL), 1);
    assert_int_equal(used[0], 0);
    assert_int_equal(used[3], 2);
}

static void test_job_tres(void **state)
{
    (void)state;
    sl_job_t j;
    memset(&j, 0, sizeof j);
    sl_parse_tres("gres:gpu:v100_g1:1,gres:gpu:v100_g2:1", &j);
    assert_int_equal(j.ngpu_idx, 2);
    assert_int_equal(j.gpu_idx[0], 1);
    assert_int_equal(j.gpu_idx[1], 2);
    assert_int_equal(j.gres_gpus, 2);
    assert_int_equal(j.on_shard, 0);
    assert_string_equal(j.gpu_type, "");
    memset(&j, 0, sizeof j);
    sl_parse_tres("gres:shard:v100_g0:1", &j);
    assert_int_equal(j.on_shard, 1);
    assert_int_equal(j.ngpu_idx, 1);
    assert_int_equal(j.gpu_idx[0], 0);
    assert_int_equal(j.gres_shards, 1);
    assert_int_equal(j.gres_gpus, 0);
    memset(&j, 0, sizeof j);
    sl_parse_tres("gres:gpu:v100:2", &j);
    assert_string_equal(j.gpu_type, "v100");
    assert_int_equal(j.gres_gpus, 2);
    assert_int_equal(j.untyped_gpus, 0);
    assert_int_equal(j.ngpu_idx, 0);
    memset(&j, 0, sizeof j);
    sl_parse_tres("gres:gpu:2", &j); /* what job_submit.lua makes of gpu:v100:2 */
    assert_int_equal(j.untyped_gpus, 2);
    assert_string_equal(j.gpu_type, "");
    memset(&j, 0, sizeof j);
    sl_parse_tres("gres:gpu:g3:1", &j);
    assert_int_equal(j.gpu_idx[0], 3);
    memset(&j, 0, sizeof j);
    sl_parse_idx_list("0-2,5)", &j);
    assert_int_equal(j.ngpu_idx, 4);
    assert_int_equal(j.gpu_idx[3], 5);
    /* an untyped gpu:2 on GPUs typed per index, as 22.05.8 showed it (the first entry is empty) */
    memset(&j, 0, sizeof j);
    sl_parse_gres_detail("gpu:g0:0(IDX:),gpu:g1:1(IDX:1),gpu:g2:1(IDX:2),gpu:g3:0(IDX:)", &j);
    assert_int_equal(j.ngpu_idx, 2);
    assert_int_equal(j.gpu_idx[0], 1);
    assert_int_equal(j.gpu_idx[1], 2);
    memset(&j, 0, sizeof j);
    sl_parse_gres_detail("gpu:v100:2(IDX:0-1)", &j);
    assert_int_equal(j.ngpu_idx, 2);
    assert_int_equal(j.gpu_idx[1], 1);
    memset(&j, 0, sizeof j);
    sl_parse_gres_detail("gpu:g1:1(IDX:1),gpu:g0:1(IDX:0),gpu:g0:0(IDX:0)", &j); /* order, no repeats */
    assert_int_equal(j.ngpu_idx, 2);
    assert_int_equal(j.gpu_idx[0], 0);
    memset(&j, 0, sizeof j);
    sl_parse_gres_detail("gpu:g0:0(IDX:)", &j);
    assert_int_equal(j.ngpu_idx, 0);
    sl_parse_gres_detail(NULL, &j);
    assert_int_equal(j.ngpu_idx, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pin_type),
        cmocka_unit_test(test_node_gres),
        cmocka_unit_test(test_job_tres),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
