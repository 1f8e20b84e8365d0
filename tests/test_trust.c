/* test_trust.c: deepshared's trust boundary against the in-memory Slurm of fake_slurm.c: which jobs it
 * takes (screen.c) -- a tenant's members, arrays, several nodes, --exclusive, constraints, --gpus, shards,
 * a comment that does not parse, a GPU count that disagrees with Slurm's -- each refused with one log line
 * however many passes run; the GPUs Slurm allocates counted; begin times and dependencies waited for; a
 * job it did not dispatch left alone with its GPUs; a dispatch Slurm keeps refusing held instead of sent
 * every pass; control characters escaped in the log. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "fake_slurm.h"
#include "daemon_testutil.h"
#include "daemon/daemon.h"

static daemon_t D; /* large (latency samples): static */
static char log_path[512];
static int saved_stderr = -1;

/* stderr (dlog's) into a file, so a test can count the lines the daemon logged */
static void capture_log(void)
{
    snprintf(log_path, sizeof log_path, "%s", tu_write_temp("trust.log", ""));
    fflush(stderr);
    saved_stderr = dup(2);
    int fd = open(log_path, O_WRONLY | O_TRUNC);
    assert_true(fd >= 0);
    dup2(fd, 2);
    close(fd);
}

static void release_log(void)
{
    if (saved_stderr < 0) return;
    fflush(stderr);
    dup2(saved_stderr, 2);
    close(saved_stderr);
    saved_stderr = -1;
}

/* Lines of the captured log that contain both a and b. */
static int logged(const char *a, const char *b)
{
    fflush(stderr);
    FILE *f = fopen(log_path, "r");
    assert_non_null(f);
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f)) n += strstr(line, a) && strstr(line, b);
    fclose(f);
    return n;
}

/* Tenants a (members: users ua and the group of gid 0 by name, root) and b (no list), quota 2 each. */
static void boot(void)
{
    memset(&D, 0, sizeof D);
    dconfig_default(&D.cfg);
    D.cfg.journal[0] = 0;
    D.cfg.listen_port = 0;
    D.cfg.k = 1;
    D.cfg.gpu_sharing = 0;
    snprintf(D.cfg.path, sizeof D.cfg.path, "test.conf");
    snprintf(D.cfg.tenants[0].name, sizeof D.cfg.tenants[0].name, "a");
    snprintf(D.cfg.tenants[0].members, sizeof D.cfg.tenants[0].members, "ua,@root");
    D.cfg.tenants[0].quota = 2;
    D.cfg.tenants[0].line = 7;
    snprintf(D.cfg.tenants[1].name, sizeof D.cfg.tenants[1].name, "b");
    D.cfg.tenants[1].quota = 2;
    D.cfg.ntenants = 2;
    D.cfg.trust_accounts = 1;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(daemon_setup(&D, &err), DS_OK);
}

static void passes(int n)
{
    char err[300];
    for (int i = 0; i < n; i++) {
        assert_true(daemon_sync(&D, i % 3 == 0, err, sizeof err) >= 0);
        D.now += 1;
        daemon_pass(&D, 1);
        fs_run_dispatched("staging");
    }
}

static int setup(void **state)
{
    (void)state;
    fs_reset();
    fs_add_node("n0", 32, 4);
    boot();
    capture_log();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    release_log();
    daemon_teardown(&D);
    return 0;
}

/* Every class of request deepshared cannot schedule as Slurm would run it: refused, left in staging,
 * logged once in 30 passes, counted, and explained; a job asking well beside them runs. */
static void test_refusals_once(void **state)
{
    (void)state;
    struct { uint32_t id; const char *acct, *comment, *why; } c[] = {
        {10, "a", "gpus=1", "not a member of tenant a"},
        {11, "nobody", "gpus=1", "is not a tenant"},
        {12, "b", "gpus=1", "a job array"},
        {13, "b", "gpus=1", "asks for 2 nodes"},
        {14, "b", "gpus=1", "--exclusive"},
        {15, "b", "gpus=1", "--constraint"},
        {16, "b", "gpus=1", "--gpus, --gpus-per-task"},
        {17, "b", "gpus=1", "asks for shards"},
        {18, "b", "gpus=1 gpus=2", "gpus given twice"},
        {19, "b", "gpus=99999999999999999999", "gpus=99999999999999999999 is not a whole number"},
        {20, "b", "gpus=1 colour=red", "unknown key 'colour'"},
        {21, "b", "gpus=-1", "is not a whole number"},
        {22, "b", "gpus=1", "gpus=1 in its comment but Slurm allocates 2"},
        {23, "b", "gpus=1 model=a\033b", "model= takes"},
        {24, "b", "gpus=5", "asks for 5 GPUs but a node has 4"},
        {25, "b", "gpus=1", "asks for 64 CPUs"},
        {26, "b", "", "asks for no GPU"},
        {27, "b", "gpus=1", "can never be satisfied"},
    };
    int n = (int)(sizeof c / sizeof c[0]);
    for (int i = 0; i < n; i++) fs_add_job(c[i].id, c[i].acct, "staging", c[i].comment);
    snprintf(fs_job(10)->user, sizeof fs_job(10)->user, "mallory");
    fs_job(12)->array = 1;
    fs_job(13)->min_nodes = 2;
    fs_job(14)->exclusive = 1;
    fs_job(15)->has_features = 1;
    fs_job(16)->other_gpus = 1;
    fs_job(17)->gres_shards = 2;
    sl_job_t *j = fs_job(22);
    snprintf(j->tres_per_node, sizeof j->tres_per_node, "gres:gpu:2");
    j->untyped_gpus = j->gres_gpus = 2;
    fs_job(25)->cpus = 64;
    fs_job(27)->dep_never = 1;
    /* a member of a (user ua) and a job of b: both run */
    fs_add_job(30, "a", "staging", "gpus=1 model=resnet50 batch=64");
    fs_add_job(31, "b", "staging", "gpus=1");
    passes(30);
    for (int i = 0; i < n; i++) {
        sl_job_t *r = fs_job(c[i].id);
        if (strcmp(r->partition, "staging") || r->state != SL_PENDING) fail_msg("job %u was dispatched", c[i].id);
        char key[32];
        snprintf(key, sizeof key, "job %u: ", c[i].id);
        int lines = logged(key, c[i].why);
        if (lines != 1) fail_msg("job %u: %d log lines with '%s'", c[i].id, lines, c[i].why);
        assert_true(dt_explain_has(&D, c[i].id, c[i].why));
        assert_true(daemon_slot_of(&D, c[i].id) < 0);
    }
    assert_int_equal(fs_job(30)->state, SL_RUNNING);
    assert_int_equal(fs_job(31)->state, SL_RUNNING);
    assert_true(dt_metric(&D, "deepshare_jobs_refused") == n);
    /* the escape sequence in job 23's comment never reached the log raw */
    assert_int_equal(logged("\033", ""), 0);
    assert_int_equal(logged("job 23: ", "a\\x1bb"), 0); /* nor its value at all: the key is named */
}

/* The GPUs Slurm will allocate are the job's: a typed GRES of any type name counts, the comment agrees or
 * the job is refused; at dispatch the GRES asked at submit is cleared before the pins. */
static void test_typed_gres_counted(void **state)
{
    (void)state;
    sl_job_t *j = fs_add_job(40, "b", "staging", "");
    snprintf(j->tres_per_node, sizeof j->tres_per_node, "gres:gpu:a100:2");
    j->gres_gpus = 2;
    j = fs_add_job(41, "b", "staging", "gpus=2 model=bert");
    snprintf(j->tres_per_node, sizeof j->tres_per_node, "gres:gpu:a100:2");
    j->gres_gpus = 2;
    passes(5);
    for (uint32_t id = 40; id <= 41; id++) {
        int32_t s = daemon_slot_of(&D, id);
        assert_true(s >= 0);
        assert_int_equal(D.trace.jobs[s].gpus, 2);
        assert_int_equal(fs_job(id)->state, SL_RUNNING);
        assert_int_equal(fs_job(id)->ngpu_idx, 2); /* pinned to two GPUs, the submit's GRES gone */
        assert_int_equal(D.slot[s].shareable, 0);
    }
    assert_true(dt_metric(&D, "deepshare_tenant_guaranteed_gpus{tenant=\"b\"}") + dt_metric(&D, "deepshare_tenant_best_effort_gpus{tenant=\"b\"}") == 4);
}

/* A begin time and a dependency: not offered to the policy (not dispatched, not counted pending) until
 * Slurm would start the job, then scheduled; one log line each. */
static void test_begin_and_dependency_wait(void **state)
{
    (void)state;
    sl_job_t *b = fs_add_job(50, "b", "staging", "gpus=1");
    b->eligible = (int64_t)time(NULL) + 1000000; /* set below, once D.now is the daemon's clock */
    sl_job_t *d = fs_add_job(51, "b", "staging", "gpus=1");
    d->wait_dep = 1;
    char err[300];
    assert_true(daemon_sync(&D, 1, err, sizeof err) >= 0);
    b->eligible = D.now + 20;
    fs_touch();
    passes(10);
    assert_string_equal(fs_job(50)->partition, "staging");
    assert_string_equal(fs_job(51)->partition, "staging");
    assert_true(daemon_slot_of(&D, 50) < 0 && daemon_slot_of(&D, 51) < 0);
    assert_true(dt_metric(&D, "deepshare_jobs_waiting_slurm") == 2);
    assert_true(dt_explain_has(&D, 50, "waits for its begin time"));
    assert_true(dt_explain_has(&D, 51, "waits for its dependency"));
    /* Slurm's clock passes the begin time; the dependency is fulfilled */
    D.now = fs_job(50)->eligible;
    fs_job(51)->wait_dep = 0;
    fs_touch();
    passes(3);
    assert_int_equal(fs_job(50)->state, SL_RUNNING);
    assert_int_equal(fs_job(51)->state, SL_RUNNING);
    assert_int_equal(logged("job 50: ", "begin time"), 1);
    assert_int_equal(logged("job 51: ", "dependency"), 1);
    assert_true(dt_metric(&D, "deepshare_jobs_waiting_slurm") == 0);
}

/* A job running in prod that deepshared did not dispatch (no admin comment of ours: only root and
 * SlurmUser set one) is not adopted, re-pinned or classified; its GPU goes to no other job. */
static void test_foreign_job_left_alone(void **state)
{
    (void)state;
    sl_job_t *f = fs_add_job(60, "b", "prod", "gpus=1");
    int idx = 0;
    fs_pin(f, "n0", &idx, 1);
    f->state = SL_RUNNING;
    snprintf(f->nodes, sizeof f->nodes, "n0");
    for (uint32_t id = 61; id <= 63; id++) fs_add_job(id, "b", "staging", "gpus=1");
    fs_add_job(64, "b", "staging", "gpus=1");
    passes(8);
    assert_true(daemon_slot_of(&D, 60) < 0);
    assert_string_equal(fs_job(60)->admin_comment, "");
    assert_int_equal(fs_job(60)->priority, 1000); /* untouched */
    int running = 0;
    for (uint32_t id = 61; id <= 64; id++) {
        const sl_job_t *j = fs_job(id);
        if (j->state != SL_RUNNING) continue;
        running++;
        assert_true(j->gpu_idx[0] != 0);
    }
    assert_int_equal(running, 3); /* GPUs 1-3; the fourth job waits for GPU 0 */
    assert_true(dt_metric(&D, "deepshare_jobs_foreign") == 1);
    assert_int_equal(logged("job 60: ", "not dispatched by deepshared"), 1);
    assert_true(dt_explain_has(&D, 60, "not dispatched by deepshared"));
}

/* A dispatch Slurm refuses is logged once per error, and after D_FAILS_HOLD refusals in a row the job is
 * held out of the policy's pass instead of being sent again every pass. */
static void test_refused_dispatch_held(void **state)
{
    (void)state;
    fs_add_job(70, "b", "staging", "gpus=1");
    fs_fail(FS_DISPATCH, 1000);
    passes(40);
    assert_int_equal(fs_calls(FS_DISPATCH), D_FAILS_HOLD);
    assert_int_equal(logged("operation", "job 70"), 1);
    assert_int_equal(logged("job 70: ", "refused its dispatch"), 1);
    assert_true(dt_explain_has(&D, 70, "refused its dispatch"));
    assert_true(dt_metric(&D, "deepshare_jobs_held") == 1);
}

/* The log escapes control characters: an account name cannot clear the terminal or forge a line. */
static void test_log_escapes(void **state)
{
    (void)state;
    fs_add_job(80, "b\033[2J\nforged line", "staging", "gpus=1");
    passes(2);
    assert_int_equal(logged("\033", ""), 0);
    assert_int_equal(logged("job 80: account 'b\\x1b[2J\\x0aforged line' is not a tenant", ""), 1);
    assert_int_equal(logged("forged line", ""), 1); /* on the job's own line, not a line of its own */
    assert_true(dt_explain_has(&D, 80, "b\\x1b[2J\\x0aforged line"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_refusals_once, setup, teardown),
        cmocka_unit_test_setup_teardown(test_typed_gres_counted, setup, teardown),
        cmocka_unit_test_setup_teardown(test_begin_and_dependency_wait, setup, teardown),
        cmocka_unit_test_setup_teardown(test_foreign_job_left_alone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_refused_dispatch_held, setup, teardown),
        cmocka_unit_test_setup_teardown(test_log_escapes, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
