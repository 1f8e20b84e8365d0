/* test_state_types.c: deepshared on nodes of two GPU types (issue #28) against the in-memory Slurm of
 * fake_slurm.c with GPUs typed by model (Gres=gpu:TYPE:N): the per-type inventory from the nodes' Gres,
 * typed requests (--gres=gpu:TYPE:N) placed on their type and dispatched as gres=gpu:TYPE:N (Slurm picks
 * the GPUs), per-type quotas from the config, the state rebuilt from Slurm's picks after a restart, and
 * the refusals (a type no node has, a mix of typed and untyped nodes, an untyped quota), and the speed
 * table (config key speeds: the policy sees each workload's speed per type, the journal learns run times on
 * the reference type); and nodes whose per-GPU types carry the model (gpu:v100_g0:1, ...), where deepshared
 * pins and shares the GPUs (gpu:v100_gN:1, shard:v100_gN:1) and reads a request typed by model from a
 * constraint naming the model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "daemon_testutil.h"
#include "fake_slurm.h"
#include "daemon/daemon.h"

static daemon_t D; /* large (latency samples): static, reset by boot */
static const char *boot_speeds, *boot_journal; /* config keys speeds and journal of the next boot ("" none) */

/* A fresh daemon with tenants given as "name quota" config lines' values ("v100:4,k80:2"). */
static int boot_typed(const char *policy, const char *const *names, const char *const *quotas, int nt)
{
    memset(&D, 0, sizeof D);
    dconfig_default(&D.cfg);
    snprintf(D.cfg.policy, sizeof D.cfg.policy, "%s", policy);
    snprintf(D.cfg.journal, sizeof D.cfg.journal, "%s", boot_journal ? boot_journal : "");
    snprintf(D.cfg.speeds, sizeof D.cfg.speeds, "%s", boot_speeds ? boot_speeds : "");
    D.cfg.listen_port = 0;
    D.cfg.k = 1;
    D.cfg.gpu_sharing = 0;
    snprintf(D.cfg.path, sizeof D.cfg.path, "test.conf");
    for (int i = 0; i < nt; i++) {
        dc_tenant_t *t = &D.cfg.tenants[i];
        snprintf(t->name, sizeof t->name, "%s", names[i]);
        t->line = i + 1;
        char buf[128], *save = NULL;
        snprintf(buf, sizeof buf, "%s", quotas[i]);
        for (char *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
            char *c = strchr(it, ':');
            if (!c) { t->quota = atoi(it); continue; }
            *c = 0;
            snprintf(t->tq_name[t->ntq], sizeof t->tq_name[0], "%s", it);
            t->tq[t->ntq] = atoi(c + 1);
            t->quota += t->tq[t->ntq++];
        }
    }
    D.cfg.ntenants = nt;
    ds_error_t err;
    ds_error_clear(&err);
    return daemon_setup(&D, &err);
}

static void boot2(void)
{
    static const char *const n[] = {"a", "b"};
    static const char *const q[] = {"v100:4,k80:2", "v100:4"};
    assert_int_equal(boot_typed("deepshare", n, q, 2), DS_OK);
}

static int sync_now(void)
{
    char err[300];
    return daemon_sync(&D, 0, err, sizeof err);
}

/* The engine node of a running job's first GPU. */
static int32_t engine_node(uint32_t id)
{
    int32_t s = daemon_slot_of(&D, id);
    return D.e->gpus[D.e->jgpus[D.e->jgpu_off[s]]].node;
}

static void check_ok(void)
{
    char msg[200] = "";
    if (D.e->ops->check && D.e->ops->check(D.e, D.e->pstate, msg, sizeof msg)) fail_msg("policy check: %s", msg);
    if (ds_engine_check(D.e, msg, sizeof msg)) fail_msg("engine check: %s", msg);
}

/* Two V100 nodes of 4 GPUs listed first by Slurm, one K80 node of 2 after them. */
static int setup(void **state)
{
    (void)state;
    fs_reset();
    fs_add_typed_node("n1", 16, 4, "v100");
    fs_add_typed_node("n2", 16, 4, "v100");
    fs_add_typed_node("n3", 8, 2, "k80");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    daemon_teardown(&D);
    boot_speeds = boot_journal = NULL;
    return 0;
}

/* The inventory per type from the nodes' Gres: types by name (k80, v100), the nodes sorted by type as the
 * engine lays them out, each type's own node size, and the tenants' per-type quotas. */
static void test_inventory(void **state)
{
    (void)state;
    boot2();
    assert_int_equal(sync_now(), 1);
    assert_int_equal(D.typed, 1);
    assert_int_equal(D.ntypes, 2);
    assert_string_equal(D.tname[0], "k80");
    assert_string_equal(D.tname[1], "v100");
    assert_int_equal(D.tnodes[0], 1);
    assert_int_equal(D.tnodes[1], 2);
    assert_int_equal(D.tgpn[0], 2);
    assert_int_equal(D.tgpn[1], 4);
    assert_string_equal(D.nodes[0].name, "n3");
    assert_string_equal(D.nodes[1].name, "n1");
    assert_int_equal(D.e->ntypes, 2);
    assert_int_equal(D.e->nnodes, 3);
    assert_int_equal(D.e->ngpus, 10);
    assert_int_equal(D.e->nodes[0].gtype, 0);
    assert_int_equal(D.e->nodes[0].ngpus, 2);
    assert_int_equal(D.e->nodes[2].gtype, 1);
    assert_int_equal(ds_engine_quota_t(D.e, 0, 0), 2); /* a: k80 2 */
    assert_int_equal(ds_engine_quota_t(D.e, 0, 1), 4); /* a: v100 4 */
    assert_int_equal(ds_engine_quota_t(D.e, 1, 0), 0);
    assert_int_equal(ds_engine_quota_t(D.e, 1, 1), 4);
    /* a node refresh keeps the order */
    char err[300];
    assert_true(daemon_sync(&D, 1, err, sizeof err) >= 0);
    assert_string_equal(D.nodes[0].name, "n3");
}

/* A typed request runs on its type, dispatched as gpu:TYPE:N with no pin; Slurm picks the GPUs and the
 * engine follows without a rebuild; an untyped request takes either type, dispatched with the type of the
 * node the policy chose. */
static void test_typed_dispatch(void **state)
{
    (void)state;
    fs_request_gpus(fs_add_job(10, "a", "staging", ""), "k80", 2);
    fs_request_gpus(fs_add_job(11, "b", "staging", ""), "v100", 3);
    fs_add_job(12, "b", "staging", "gpus=1");
    boot2();
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    check_ok();
    assert_int_equal(fs_calls(FS_DISPATCH), 3);
    const sl_job_t *j10 = fs_job(10), *j11 = fs_job(11), *j12 = fs_job(12);
    assert_string_equal(j10->partition, "prod");
    assert_string_equal(j10->req_nodes, "n3");
    assert_string_equal(j10->tres_per_node, "gres:gpu:k80:2");
    assert_null(strstr(j10->admin_comment, "pin=0"));
    assert_non_null(strstr(j10->admin_comment, "gres=gpu:k80"));
    assert_string_equal(j11->tres_per_node, "gres:gpu:v100:3");
    assert_true(!strcmp(j11->req_nodes, "n1") || !strcmp(j11->req_nodes, "n2"));
    /* the untyped one-GPU job: a node of some type, the node's type asked */
    const sl_node_t *nd = NULL;
    for (int i = 0; i < D.nnodes; i++)
        if (!strcmp(D.nodes[i].name, j12->req_nodes)) nd = &D.nodes[i];
    assert_non_null(nd);
    char want[64];
    snprintf(want, sizeof want, "gres:gpu:%s:1", nd->gpu_type);
    assert_string_equal(j12->tres_per_node, want);
    assert_int_equal(D.e->nodes[engine_node(10)].gtype, 0);
    assert_int_equal(D.e->nodes[engine_node(11)].gtype, 1);
    /* Slurm starts them on GPUs it picks (the lowest free), reported as gres_detail IDX */
    int64_t rebuilds = D.rebuilds;
    assert_int_equal(fs_run_dispatched("staging"), 3);
    assert_int_equal(j10->ngpu_idx, 2);
    assert_int_equal(sync_now(), 1);
    assert_int_equal(D.rebuilds, rebuilds);
    assert_int_equal(dt_jstate(&D, 10)->status, DS_JS_RUNNING);
    assert_int_equal(dt_jstate(&D, 11)->status, DS_JS_RUNNING);
    check_ok();
    /* deepshared restarts: the running jobs are adopted on the GPUs Slurm reports */
    daemon_teardown(&D);
    boot2();
    sl_jobs_reset();
    assert_int_equal(sync_now(), 1);
    assert_int_equal(D.rebuilds, 1);
    assert_int_equal(dt_jstate(&D, 10)->status, DS_JS_RUNNING);
    assert_int_equal(dt_jstate(&D, 10)->nplaced, 2);
    assert_int_equal(D.e->nodes[engine_node(10)].gtype, 0);
    assert_int_equal(dt_jstate(&D, 11)->nplaced, 3);
    assert_int_equal(dt_jstate(&D, 12)->status, DS_JS_RUNNING);
    check_ok();
}

/* Per-type quotas: tenant b has none of the K80s, so its K80 job runs best-effort (preemptible), while
 * a's K80 job of its quota is guaranteed; a typed request the nodes cannot serve is refused with the
 * reason. */
static void test_typed_quota_and_refusals(void **state)
{
    (void)state;
    fs_request_gpus(fs_add_job(20, "b", "staging", ""), "k80", 1);
    fs_request_gpus(fs_add_job(21, "a", "staging", ""), "k80", 1);
    fs_request_gpus(fs_add_job(22, "a", "staging", ""), "a100", 1);
    fs_request_gpus(fs_add_job(23, "a", "staging", ""), "k80", 4);
    boot2();
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    check_ok();
    assert_string_equal(fs_job(20)->partition, "batch");
    assert_string_equal(fs_job(21)->partition, "prod");
    assert_int_equal(dt_jstate(&D, 20)->klass, DS_CLASS_BE);
    assert_int_equal(dt_jstate(&D, 21)->klass, DS_CLASS_G);
    assert_int_equal(daemon_slot_of(&D, 22), -1);
    assert_int_equal(daemon_slot_of(&D, 23), -1);
    assert_string_equal(fs_job(22)->partition, "staging");
    char why[300];
    assert_true(screen_job(&D, fs_job(22), why, sizeof why) < 0);
    assert_non_null(strstr(why, "type a100 (--gres=gpu:a100:N), which no node has (types: k80"));
    assert_true(screen_job(&D, fs_job(23), why, sizeof why) < 0);
    assert_non_null(strstr(why, "asks for 4 GPUs of type k80 but a node of it has 2"));
    assert_true(dt_explain_has(&D, 21, "running"));
}

/* Nodes whose per-GPU types carry the model (deploy/slurm/variants/typed-shared: gpu:v100_g0:1,...,
 * shard:v100_gN:2, Features=v100): two V100 nodes of 4 GPUs, one K80 node of 2. */
static int setup_pins(void **state)
{
    (void)state;
    fs_reset();
    fs_add_model_pinned_node("n1", 16, 4, "v100");
    fs_add_model_pinned_node("n2", 16, 4, "v100");
    fs_add_model_pinned_node("n3", 8, 2, "k80");
    return 0;
}

/* The node of a dispatched job as the daemon sorted them; its model. */
static const char *model_of(const sl_job_t *j)
{
    for (int i = 0; i < D.nnodes; i++)
        if (!strcmp(D.nodes[i].name, j->req_nodes)) return D.nodes[i].gpu_type;
    return "?";
}

/* On per-GPU model types the models are read from the type names; a request typed by model (what
 * job_submit.lua makes of --gres=gpu:k80:2: --gres=gpu:2 --constraint=k80) runs on its model, pinned as
 * gpu:k80_gN:1 each; per-type quotas hold (b has no K80 quota: best effort); a one-GPU job that asks in its
 * comment goes onto a shard of its model's GPU (shard:v100_gN:1); a constraint that is no model is refused;
 * after a restart the running jobs are adopted on the GPUs their pins name. */
static void test_pinned_models(void **state)
{
    (void)state;
    fs_request_model(fs_add_job(30, "a", "staging", ""), "k80", 1);
    fs_request_model(fs_add_job(31, "b", "staging", ""), "k80", 1);
    fs_request_model(fs_add_job(32, "b", "staging", ""), "v100", 3);
    fs_request_model(fs_add_job(33, "a", "staging", "gpus=1"), "v100", 0);
    fs_request_model(fs_add_job(34, "a", "staging", "gpus=1"), "p100", 0);
    boot2();
    D.cfg.gpu_sharing = 1;
    assert_int_equal(sync_now(), 1);
    assert_int_equal(D.typed, 1);
    assert_int_equal(D.model_pins, 1);
    assert_int_equal(D.ntypes, 2);
    assert_string_equal(D.tname[0], "k80");
    assert_string_equal(D.tname[1], "v100");
    assert_int_equal(D.tgpn[0], 2);
    assert_int_equal(D.tgpn[1], 4);
    assert_int_equal(D.nodes[0].shards[1], 2);
    daemon_pass(&D, 1);
    check_ok();
    const sl_job_t *j30 = fs_job(30), *j31 = fs_job(31), *j32 = fs_job(32), *j33 = fs_job(33);
    assert_string_equal(j30->req_nodes, "n3");
    assert_string_equal(j30->partition, "prod");
    assert_non_null(strstr(j30->tres_per_node, "gres:gpu:k80_g"));
    assert_string_equal(j31->req_nodes, "n3");
    assert_string_equal(j31->partition, "batch"); /* beyond b's K80 quota (none) */
    assert_int_equal(dt_jstate(&D, 31)->klass, DS_CLASS_BE);
    assert_int_equal(j30->ngpu_idx + j31->ngpu_idx, 2);
    assert_true(j30->gpu_idx[0] != j31->gpu_idx[0]);
    assert_string_equal(model_of(j32), "v100");
    assert_int_equal(j32->ngpu_idx, 3);
    char want[64];
    snprintf(want, sizeof want, "gres:gpu:v100_g%d:1", j32->gpu_idx[0]);
    assert_non_null(strstr(j32->tres_per_node, want));
    assert_string_equal(model_of(j33), "v100");
    snprintf(want, sizeof want, "gres:shard:v100_g%d:1", j33->gpu_idx[0]);
    assert_string_equal(j33->tres_per_node, want);
    assert_int_equal(j33->on_shard, 1);
    assert_non_null(strstr(j33->admin_comment, "gres=shard pin="));
    /* --constraint=p100 names no model: refused, with the reason */
    assert_int_equal(daemon_slot_of(&D, 34), -1);
    char why[300];
    assert_true(screen_job(&D, &D.sj[4], why, sizeof why) < 0);
    assert_non_null(strstr(why, "--constraint: deepshared chooses the node and would not honour it (a GPU model alone"));
    int64_t rebuilds = D.rebuilds;
    assert_int_equal(fs_run_dispatched("staging"), 4);
    assert_int_equal(sync_now(), 1);
    assert_int_equal(D.rebuilds, rebuilds);
    for (uint32_t id = 30; id <= 33; id++) assert_int_equal(dt_jstate(&D, id)->status, DS_JS_RUNNING);
    check_ok();
    /* deepshared restarts: the running jobs are adopted where their pins say */
    daemon_teardown(&D);
    boot2();
    sl_jobs_reset();
    assert_int_equal(sync_now(), 1);
    assert_int_equal(D.rebuilds, 1);
    for (uint32_t id = 30; id <= 33; id++) assert_int_equal(dt_jstate(&D, id)->status, DS_JS_RUNNING);
    assert_int_equal(D.e->nodes[engine_node(30)].gtype, 0);
    assert_int_equal(D.e->nodes[engine_node(32)].gtype, 1);
    assert_int_equal(dt_jstate(&D, 32)->nplaced, 3);
    assert_int_equal(D.slot[daemon_slot_of(&D, 33)].shareable, 1);
    check_ok();
}

/* Colocation on per-GPU model types: with every V100 held by a shareable one-GPU job (each on its own
 * shard:v100_gN:1) and the K80s full, one more such job for a V100 is placed on a shard of a V100 another
 * shard job holds, so two jobs share one GPU as on index types. */
static void test_pinned_models_shared(void **state)
{
    (void)state;
    boot2();
    D.cfg.gpu_sharing = 1;
    D.cfg.k = 2; /* two jobs to a GPU */
    assert_int_equal(sync_now(), 1);
    fs_request_model(fs_add_job(40, "a", "staging", ""), "k80", 2);
    for (uint32_t id = 41; id <= 48; id++)
        fs_request_model(fs_add_job(id, id < 45 ? "a" : "b", "staging", "gpus=1"), "v100", 0);
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    assert_int_equal(fs_run_dispatched("staging"), 9);
    assert_int_equal(sync_now(), 1);
    for (uint32_t id = 41; id <= 48; id++) {
        assert_int_equal(fs_job(id)->on_shard, 1);
        assert_string_equal(model_of(fs_job(id)), "v100");
    }
    fs_request_model(fs_add_job(49, "b", "staging", "gpus=1 class=BE"), "v100", 0);
    assert_int_equal(sync_now(), 1);
    for (int k = 0; k < 5 && dt_jstate(&D, 49)->status != DS_JS_RUNNING; k++) {
        D.now += 1;
        daemon_pass(&D, 1);
    }
    check_ok();
    const sl_job_t *j = fs_job(49);
    if (dt_jstate(&D, 49)->status != DS_JS_RUNNING) print_message("job 49: %s\n", D.slot[daemon_slot_of(&D, 49)].why);
    assert_int_equal(dt_jstate(&D, 49)->status, DS_JS_RUNNING);
    assert_int_equal(dt_jstate(&D, 49)->shared, 1);
    assert_string_equal(model_of(j), "v100");
    char want[64];
    snprintf(want, sizeof want, "gres:shard:v100_g%d:1", j->gpu_idx[0]);
    assert_string_equal(j->tres_per_node, want);
    int mates = 0;
    for (uint32_t id = 41; id <= 48; id++)
        mates += !strcmp(fs_job(id)->req_nodes, j->req_nodes) && fs_job(id)->gpu_idx[0] == j->gpu_idx[0];
    assert_int_equal(mates, 1);
    assert_int_equal(fs_run_dispatched("staging"), 1);
    assert_int_equal(sync_now(), 1);
    check_ok();
}

/* Nodes mixing per-GPU model types with GPUs typed by model are refused, naming both. */
static void test_pinned_models_mixed(void **state)
{
    (void)state;
    fs_add_typed_node("n4", 16, 4, "a100");
    boot2();
    char err[600];
    assert_int_equal(daemon_sync(&D, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "has per-GPU types with the model (gpu:v100_g0:1,...) while node n4 has GPUs typed by model (gpu:a100:N)"));
}

/* The configurations deepshared refuses on typed nodes, with the file, line and reason: an untyped quota
 * where there are several types, a type no node has; and Slurm nodes mixing typed and untyped GPUs. */
static void test_typed_config_errors(void **state)
{
    (void)state;
    static const char *const n[] = {"a", "b"};
    static const char *const q1[] = {"v100:4,k80:2", "6"};
    assert_int_equal(boot_typed("deepshare", n, q1, 2), DS_OK);
    char err[600];
    assert_int_equal(daemon_sync(&D, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "tenant 'b': a quota of 6 GPUs without GPU types"));
    assert_non_null(strstr(err, "test.conf"));
    daemon_teardown(&D);
    static const char *const q2[] = {"v100:4,h100:2", "v100:2"};
    assert_int_equal(boot_typed("deepshare", n, q2, 2), DS_OK);
    assert_int_equal(daemon_sync(&D, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "GPU type 'h100' is no model type of Slurm's nodes"));
    daemon_teardown(&D);
    fs_add_node("n4", 16, 4); /* GPUs typed by index (g0..g3) beside typed ones */
    static const char *const q3[] = {"v100:4,k80:2", "v100:4"};
    assert_int_equal(boot_typed("deepshare", n, q3, 2), DS_OK);
    assert_int_equal(daemon_sync(&D, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "node n4 has GPUs without a model type while others have one"));
}

/* The shipped Gavel speed table (data/gavel/speeds.csv) of this source tree. */
static const char *gavel_speeds(void)
{
    static char path[600];
    const char *src = getenv("DS_SRC");
    snprintf(path, sizeof path, "%s/data/gavel/speeds.csv", src ? src : "..");
    return path;
}

/* Two untyped one-GPU jobs on the idle cluster; gives the engine type each is placed on. */
static void place_two(int32_t *t_resnet, int32_t *t_transformer)
{
    fs_add_job(30, "a", "staging", "gpus=1 model=ResNet-18 dataset=CIFAR-10 batch=256");
    fs_add_job(31, "a", "staging", "gpus=1 model=Transformer dataset=Multi30k batch=16");
    static const char *const n[] = {"a", "b"};
    static const char *const q[] = {"v100:4,k80:2", "v100:4"};
    assert_int_equal(boot_typed("deepshare", n, q, 2), DS_OK);
    assert_int_equal(sync_now(), 1);
    daemon_pass(&D, 1);
    check_ok();
    assert_int_equal(dt_jstate(&D, 30)->status, DS_JS_RUNNING);
    assert_int_equal(dt_jstate(&D, 31)->status, DS_JS_RUNNING);
    *t_resnet = D.e->nodes[engine_node(30)].gtype;
    *t_transformer = D.e->nodes[engine_node(31)].gtype;
}

/* The speed table (config key speeds). ResNet-18 on CIFAR-10 at batch 256 runs 12.7x faster on a V100 than
 * on a K80, the Transformer at batch 16 only 2.0x (Gavel's measurements), and a V100 delivers about 4 K80s
 * of work on average: with the table DeepShare sends each where it loses least against the type's average
 * (docs/heterogeneous.md), the ResNet to a V100 and the Transformer to a K80, as in the simulator; without
 * it every type counts as equally fast and both take the first type (the K80s). explain shows the speeds
 * the policy sees; a finished job's run time is journaled in seconds of the reference type (the K80). */
static void test_speeds(void **state)
{
    (void)state;
    int32_t tr, tt;
    place_two(&tr, &tt);
    assert_int_equal(tr, 0);
    assert_int_equal(tt, 0);
    assert_true(dt_explain_has(&D, 30, "speed: no speed table (config key speeds)"));
    daemon_teardown(&D);

    setup(NULL);
    boot_speeds = gavel_speeds();
    boot_journal = tu_write_temp("types-journal.csv", "");
    place_two(&tr, &tt);
    assert_int_equal(tr, 1); /* v100 */
    assert_int_equal(tt, 0); /* k80 */
    assert_true(D.have_speeds);
    assert_true(D.trace.gtypes[1].weight > 3 && D.trace.gtypes[1].weight < 6);
    assert_true(fabs(ds_engine_speed(D.e, daemon_slot_of(&D, 30), 1) - 12.70) < 0.01);
    assert_true(dt_explain_has(&D, 30, "speed: relative to k80"));
    assert_true(dt_explain_has(&D, 30, "v100 x12.70"));
    assert_true(dt_explain_has(&D, 31, "v100 x2.00"));
    /* a job named after the bind (a new slot) finds its workload; an unknown workload runs at 1 everywhere */
    fs_add_job(32, "b", "staging", "gpus=1 model=ResNet-50 dataset=ImageNet batch=64");
    fs_add_job(33, "b", "staging", "gpus=1 model=mystery");
    fs_touch();
    assert_int_equal(sync_now(), 1);
    assert_true(fabs(ds_engine_speed(D.e, daemon_slot_of(&D, 32), 1) - 6.07) < 0.01);
    assert_true(ds_engine_speed(D.e, daemon_slot_of(&D, 33), 1) == 1.0);
    assert_true(dt_explain_has(&D, 33, "is not in"));
    /* the ResNet ran 100 s on its V100: 1,270 s of K80 work in the journal */
    assert_int_equal(fs_run_dispatched("staging"), 2);
    sl_job_t *j30 = fs_job(30);
    j30->state = SL_COMPLETED;
    j30->start = 1000;
    j30->end = 1100;
    fs_touch();
    assert_true(sync_now() >= 0);
    FILE *f = fopen(boot_journal, "r");
    assert_non_null(f);
    char line[256] = "";
    int found = 0;
    while (fgets(line, sizeof line, f)) found |= !strncmp(line, "30,a,", 5) && strstr(line, ",1270,1100") != NULL;
    fclose(f);
    if (!found) fail_msg("journal has no line '30,a,...,1270,1100'");
    unlink(boot_journal);
}

/* A speed table that does not read stops the daemon at setup with the file, line and field. */
static void test_speeds_bad_file(void **state)
{
    (void)state;
    boot_speeds = tu_write_temp("types-speeds.csv", "model,batchsize,gpu_type,throughput\nResNet-18,64,k80,fast\n");
    memset(&D, 0, sizeof D);
    dconfig_default(&D.cfg);
    snprintf(D.cfg.speeds, sizeof D.cfg.speeds, "%s", boot_speeds);
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_not_equal(daemon_setup(&D, &err), DS_OK);
    char m[600];
    ds_error_format(&err, m, sizeof m);
    assert_non_null(strstr(m, "types-speeds.csv"));
    assert_non_null(strstr(m, ":2"));
    assert_non_null(strstr(m, "throughput"));
    unlink(boot_speeds);
}

/* The config's typed quota line: parsed, written back as given, and refused when malformed. */
static void test_config_typed_quota(void **state)
{
    (void)state;
    char path[] = "/tmp/ds-typed-conf-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    const char *text = "tenant vision v100:4,K80:2 users=root\ntenant speech 8 users=root\n";
    assert_int_equal(write(fd, text, strlen(text)), (int)strlen(text));
    close(fd);
    dconfig_t c;
    dconfig_default(&c);
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(dconfig_read(&c, path, &err), DS_OK);
    assert_int_equal(c.ntenants, 2);
    assert_int_equal(c.tenants[0].quota, 6);
    assert_int_equal(c.tenants[0].ntq, 2);
    assert_string_equal(c.tenants[0].tq_name[1], "K80");
    assert_int_equal(c.tenants[0].tq[1], 2);
    assert_int_equal(c.tenants[1].ntq, 0);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    dconfig_print(f, &c);
    fclose(f);
    assert_non_null(strstr(buf, "tenant vision v100:4,K80:2 users=root\n"));
    assert_non_null(strstr(buf, "tenant speech 8 users=root\n"));
    free(buf);
    static const char *const bad[] = {"tenant x v100:4,v100:2\n", "tenant x v100:\n", "tenant x :4\n",
                                      "tenant x v100:4,,k80:1\n", "tenant x v1 00:4\n", "tenant x v100:-1\n"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        FILE *w = fopen(path, "w");
        fputs(bad[i], w);
        fclose(w);
        dconfig_default(&c);
        ds_error_clear(&err);
        if (dconfig_read(&c, path, &err) == DS_OK) fail_msg("accepted: %s", bad[i]);
        char m[400];
        ds_error_format(&err, m, sizeof m);
        assert_non_null(strstr(m, ":1"));
    }
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_inventory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_typed_dispatch, setup, teardown),
        cmocka_unit_test_setup_teardown(test_typed_quota_and_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_typed_config_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_speeds, setup, teardown),
        cmocka_unit_test_setup_teardown(test_speeds_bad_file, setup, teardown),
        cmocka_unit_test(test_config_typed_quota),
        cmocka_unit_test_setup_teardown(test_pinned_models, setup_pins, teardown),
        cmocka_unit_test_setup_teardown(test_pinned_models_shared, setup_pins, teardown),
        cmocka_unit_test_setup_teardown(test_pinned_models_mixed, setup_pins, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
