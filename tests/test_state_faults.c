/* test_state_faults.c: the daemon soak (tests/soak_daemon.sh) replayed against the in-memory Slurm, many
 * seeds a second: bursts of shard, whole-GPU and best-effort jobs while deepshared restarts, a slurmctld
 * restart that takes shards from GPUs and leaves others with shards no job holds, dispatches Slurm never
 * starts; then the operator's remedy (shards back with nothing running); every job must finish, and
 * none may bounce more than twice. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "fake_slurm.h"
#include "daemon/daemon.h"

static daemon_t D; /* large (latency samples): static */
static uint64_t rng;
static char failure[2000];
/* what the seeds went through, so that a run that passes shows it met the faults */
static struct { int64_t remedied, bounces, undone, shardless, moves, max_bounce, over2; } totals;

static unsigned rnd(unsigned n)
{
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(rng >> 33) % n;
}

static const char *const nodes[] = {"n1", "n2", "n3", "n4"};
#define NNODES 4
#define GPN 4

static void boot(void)
{
    memset(&D, 0, sizeof D);
    dconfig_default(&D.cfg);
    snprintf(D.cfg.policy, sizeof D.cfg.policy, "deepshare");
    D.cfg.journal[0] = 0;
    D.cfg.listen_port = 0;
    D.cfg.k = 2;
    D.cfg.gpu_sharing = 1;
    D.cfg.cycle = 2;
    D.cfg.dispatch_timeout = 0.5;
    for (int i = 0; i < 4; i++) {
        snprintf(D.cfg.tenants[i].name, sizeof D.cfg.tenants[i].name, "t%d", i + 1);
        D.cfg.tenants[i].quota = 4;
    }
    D.cfg.ntenants = 4;
    const char *param = getenv("DS_FAULT_PARAM"); /* a policy parameter "key=value" to soak under */
    if (param && strchr(param, '=')) {
        snprintf(D.cfg.pkeys[0], sizeof D.cfg.pkeys[0], "%.*s", (int)(strchr(param, '=') - param), param);
        snprintf(D.cfg.pvals[0], sizeof D.cfg.pvals[0], "%s", strchr(param, '=') + 1);
        D.cfg.nparams = 1;
    }
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(daemon_setup(&D, &err), DS_OK);
    sl_jobs_reset();
}

/* One poll of the daemon: sync (a full read every other call, as every cycle does) and a pass. A
 * dispatch Slurm has not started by the next poll counts as never started (dispatch_timeout passed, the
 * soak's 10 s compressed); Slurm's credential settle time after a requeue (D_REQUEUE_SETTLE) is taken as
 * passed: the fake has no slurmd. */
static void tick(int step)
{
    char err[300];
    for (int32_t s = 0; s < D.nslots; s++)
        if (D.slot[s].t_dispatch > 0) D.slot[s].t_dispatch -= 2 * D.cfg.dispatch_timeout;
    if (daemon_sync(&D, step % 2 == 0, err, sizeof err) < 0) fail_msg("sync: %s", err);
    for (int32_t s = 0; s < D.nslots; s++) D.slot[s].t_requeue = 0;
    D.now++;
    daemon_pass(&D, 1);
    char msg[200] = "";
    if (D.e && D.e->ops->check && D.e->ops->check(D.e, D.e->pstate, msg, sizeof msg)) fail_msg("policy check: %s", msg);
    if (D.e && ds_engine_check(D.e, msg, sizeof msg)) fail_msg("engine check: %s", msg);
}

static uint32_t next_id;

static void submit(int gpus_only)
{
    static const char *const kinds[] = {"gpus=2", "gpus=1 class=BE", "gpus=1"};
    int k = gpus_only ? 2 : rnd(20) < 3 ? 0 : rnd(20) < 4 ? 1 : 2;
    char acct[8];
    snprintf(acct, sizeof acct, "t%u", 1 + rnd(4));
    fs_add_job(next_id++, acct, "staging", kinds[k]);
}

/* Ends running jobs at random (each with probability pct %). */
static void finish_some(unsigned pct)
{
    for (uint32_t id = 1; id < next_id; id++) {
        sl_job_t *j = fs_job(id);
        if (j->state != SL_RUNNING || rnd(100) >= pct) continue;
        j->state = SL_COMPLETED;
        j->end = j->start + 5;
        fs_touch();
    }
}

static int count(int state, int shard_only)
{
    int n = 0;
    for (uint32_t id = 1; id < next_id; id++) {
        const sl_job_t *j = fs_job(id);
        n += j->state == state && (!shard_only || j->on_shard);
    }
    return n;
}

/* slurmctld restarts while shard jobs run: Slurm 22.05 recovers some of the GPUs those jobs hold with
 * shard:gN:0, and leaves a shard allocated to no job on some others. */
static void slurmctld_restart(void)
{
    for (uint32_t id = 1; id < next_id; id++) {
        const sl_job_t *j = fs_job(id);
        if (j->state != SL_RUNNING || !j->on_shard) continue;
        if (rnd(2)) fs_set_shards(j->nodes, j->gpu_idx[0], 0);
        else fs_set_phantom(j->nodes, j->gpu_idx[0], 1);
    }
    sl_jobs_reset();
}

/* The remedy: slurmctld restarted with nothing running gives every GPU its shards back. */
static void remedy(void)
{
    for (int n = 0; n < NNODES; n++)
        for (int g = 0; g < GPN; g++) fs_set_shards(nodes[n], g, 2), fs_set_phantom(nodes[n], g, 0);
    fs_touch();
}

/* One soak; returns 0 when every job finished, else describes the jobs left in failure. */
static int soak(uint64_t seed)
{
    rng = seed * 2654435761ULL + 1;
    fs_reset();
    fs_model_gpus(1);
    for (int n = 0; n < NNODES; n++) fs_add_node(nodes[n], 8, GPN);
    next_id = 1;
    boot();
    int step = 0;
    /* 1. a burst, with deepshared killed and restarted now and then */
    for (int i = 0; i < 40; i++, step++) {
        submit(0);
        if (rnd(10) == 0) {
            daemon_teardown(&D);
            boot();
        }
        tick(step);
        fs_run_dispatched("staging");
        finish_some(15);
    }
    /* 2. slurmctld restarts under shard jobs; a second wave of one-GPU jobs */
    slurmctld_restart();
    for (int i = 0; i < 16; i++) submit(1);
    /* 3. every job must finish; the remedy once nothing ran for a while */
    int idle = 0, remedied = 0;
    for (int i = 0; i < 400 && count(SL_PENDING, 0) + count(SL_RUNNING, 0); i++, step++) {
        tick(step);
        fs_run_dispatched("staging");
        finish_some(30);
        idle = count(SL_RUNNING, 0) ? 0 : idle + 1;
        if (!remedied && idle >= 15) {
            remedy();
            remedied = 1;
        }
    }
    int left = count(SL_PENDING, 0) + count(SL_RUNNING, 0);
    totals.remedied += remedied;
    totals.bounces += D.bounces;
    totals.undone += D.undone;
    totals.shardless += D.nshardless;
    totals.moves += D.shard_moves;
    for (int32_t i = 0; i < D.nbounce; i++) {
        totals.max_bounce = DS_MAX(totals.max_bounce, D.bounce[i].n);
        totals.over2 += D.bounce[i].n > 2;
    }
    if (left) {
        size_t off = (size_t)snprintf(failure, sizeof failure, "seed %llu: %d jobs left (remedied %d):",
                                      (unsigned long long)seed, left, remedied);
        for (uint32_t id = 1; id < next_id && off < sizeof failure; id++) {
            const sl_job_t *j = fs_job(id);
            if (j->state != SL_PENDING && j->state != SL_RUNNING) continue;
            int32_t s = daemon_slot_of(&D, id);
            off += (size_t)snprintf(failure + off, sizeof failure - off, " %u(%s %s %s pin %d shard %d engine %d why '%s')",
                                    id, j->state == SL_PENDING ? "pending" : "running", j->partition, j->req_nodes,
                                    j->ngpu_idx ? j->gpu_idx[0] : -1, j->on_shard,
                                    s >= 0 ? (int)D.e->js[s].status : -1, s >= 0 ? D.slot[s].why : "");
        }
    }
    daemon_teardown(&D);
    return left;
}

static void test_soak_jobs_finish_few_bounces(void **state)
{
    (void)state;
    int seeds = getenv("DS_FAULT_SEEDS") ? atoi(getenv("DS_FAULT_SEEDS")) : 1000, bad = 0;
    int first = getenv("DS_FAULT_SEED") ? atoi(getenv("DS_FAULT_SEED")) : 1; /* one seed again: SEED=n SEEDS=1 */
    for (int s = first; s < first + seeds; s++) {
        if (!soak((uint64_t)s)) continue;
        if (bad++ < 5) print_message("%s\n", failure);
    }
    print_message("%d seeds: remedy applied in %lld, %lld bounces (%lld jobs bounced more than twice, at most %lld "
                  "times), %lld starts taken back, %lld shard moves\n", seeds, (long long)totals.remedied,
                  (long long)totals.bounces, (long long)totals.over2, (long long)totals.max_bounce,
                  (long long)totals.undone, (long long)totals.moves);
    if (bad) fail_msg("%d of %d seeds left jobs unfinished", bad, seeds);
    /* as the soak: no job goes back and forth between staging and a partition more than twice (bounces
     * are counted per daemon process: those before a restart of it in the burst are not seen) */
    if (totals.over2) fail_msg("%lld jobs bounced more than twice (at most %lld times)", (long long)totals.over2,
                               (long long)totals.max_bounce);
}

int main(void)
{
    dlog_verbose = getenv("DS_FAULT_VERBOSE") ? 1 : -1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_soak_jobs_finish_few_bounces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
