/* test_state_telemetry.c: deepshared's retention source wired to the policy's monitor (measure.c), on the
 * in-memory Slurm of fake_slurm.c with the progress-file backend: a pair whose guaranteed job falls to 40%
 * of the step rate it had alone is revoked after w = 3 cycles (its best-effort partner requeued, the
 * guaranteed job running on); a pair at 95% is kept; a stale or missing file revokes nothing however long
 * it lasts; explain and the metrics say what the source gives. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "fake_slurm.h"
#include "daemon_testutil.h"
#include "daemon/daemon.h"

static daemon_t D;
static char dir[200];

static int setup(void **st)
{
    (void)st;
    tu_make_dir("ds_state_tel", dir, sizeof dir);
    return 0;
}

static int teardown(void **st)
{
    (void)st;
    return tu_remove_dir(dir);
}

/* The job's step rate, written as a training script would (temporary file, then rename), dated age s ago. */
static void rate(uint32_t id, double steps, double age)
{
    char tmp[300], p[300];
    snprintf(tmp, sizeof tmp, "%s/.%u.tmp", dir, id);
    snprintf(p, sizeof p, "%s/%u", dir, id);
    FILE *f = fopen(tmp, "w");
    assert_non_null(f);
    fprintf(f, "%g\n", steps);
    fclose(f);
    if (age > 0) {
        struct timespec ts[2];
        clock_gettime(CLOCK_REALTIME, &ts[0]);
        ts[0].tv_sec -= (time_t)age;
        ts[1] = ts[0];
        assert_int_equal(utimensat(AT_FDCWD, tmp, ts, 0), 0);
    }
    assert_int_equal(rename(tmp, p), 0);
}

static void sync_now(void)
{
    char err[300];
    assert_true(daemon_sync(&D, 1, err, sizeof err) >= 0);
}

/* One cycle as deepshared's loop runs it: read Slurm, poll the source, the cycle's pass, Slurm starts
 * what was dispatched. */
static void cycle(void)
{
    sync_now();
    daemon_measure(&D);
    D.now += 60;
    daemon_pass(&D, 1);
    fs_run_dispatched("staging");
}

/* One node with one GPU (two shards); tenant a's job 1 runs alone (G) and reports 10 steps/s, which
 * becomes its baseline; then a's best-effort job 2 shares its GPU (the profile-less prediction is 1).
 * Job 1 then reports shared_rate; job 2 never reports (it has no baseline anyway). */
static void pair_case(double shared_rate, double age, int cycles, int revoked_at)
{
    fs_reset();
    fs_add_node("n0", 32, 1);
    fs_add_job(1, "a", "staging", "gpus=1");
    memset(&D, 0, sizeof D);
    dconfig_default(&D.cfg);
    D.cfg.journal[0] = 0;
    D.cfg.listen_port = 0;
    D.cfg.k = 2;
    D.cfg.gpu_sharing = 1;
    snprintf(D.cfg.tenants[0].name, sizeof D.cfg.tenants[0].name, "a");
    D.cfg.tenants[0].quota = 1;
    D.cfg.ntenants = 1;
    D.cfg.tel.kind = TEL_PROGRESS;
    snprintf(D.cfg.tel.dir, sizeof D.cfg.tel.dir, "%s", dir);
    D.cfg.tel.stale = 120;
    char p[300];
    snprintf(p, sizeof p, "%s/1", dir);
    unlink(p);
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(daemon_setup(&D, &err), DS_OK);
    cycle();
    assert_int_equal(dt_jstate(&D, 1)->status, DS_JS_RUNNING);
    rate(1, 10, 0);
    cycle(); /* alone: its baseline */
    cycle();
    assert_true(dt_explain_has(&D, 1, "exclusive baseline 10 (2 samples alone)"));
    fs_add_job(2, "a", "staging", "gpus=1 class=BE");
    fs_touch();
    cycle();
    sync_now();
    assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_RUNNING);
    assert_int_equal(dt_jstate(&D, 2)->partner, daemon_slot_of(&D, 1));
    int64_t requeues = D.requeues;
    rate(1, shared_rate, age);
    if (age > 0) /* as if that long had passed since the last fresh sample too */
        for (int32_t k = 0; k < D.tel.n; k++) D.tel.job[k].t -= age;
    int at = 0;
    for (int c = 1; c <= cycles && !at; c++) {
        cycle();
        if (D.requeues > requeues) at = c;
    }
    assert_int_equal(at, revoked_at);
    sync_now();
    if (revoked_at) {
        assert_int_equal(dt_jstate(&D, 1)->status, DS_JS_RUNNING); /* the guaranteed job runs on */
        assert_int_equal(dt_jstate(&D, 2)->preemptions, 1);
        assert_int_equal(fs_calls(FS_REQUEUE), 1);
    } else {
        assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_RUNNING);
        assert_int_equal(fs_calls(FS_REQUEUE), 0);
        if (age > D.cfg.tel.stale) {
            assert_true(dt_explain_has(&D, 1, "stale: no sample"));
            assert_true(dt_explain_has(&D, 2, "no retention estimate for the pair now"));
            assert_true(dt_explain_has(&D, 2, "no fresh retention sample of the pair"));
            assert_true(dt_metric(&D, "deepshare_telemetry_retention_missing_total") >= 2 * cycles);
        } else {
            assert_true(dt_explain_has(&D, 1, "measured retention 0.95"));
        }
    }
    assert_true(dt_metric(&D, "deepshare_telemetry_up{source=\"progress\"}") == 1);
    assert_true(dt_metric(&D, "deepshare_telemetry_samples_total") > 0);
    daemon_teardown(&D);
}

static void test_degraded_pair_revoked(void **st)
{
    (void)st;
    pair_case(4, 0, 6, 3); /* 0.4 of its speed alone: w = 3 low samples */
}

static void test_good_pair_kept(void **st)
{
    (void)st;
    pair_case(9.5, 0, 8, 0);
}

static void test_stale_revokes_nothing(void **st)
{
    (void)st;
    pair_case(4, 500, 8, 0); /* the file says 0.4, but it was written 500 s ago (stale after 120) */
}

/* The source fails (its folder is gone): logged, telemetry_up 0, nothing revoked. */
static void test_source_down(void **st)
{
    (void)st;
    fs_reset();
    fs_add_node("n0", 32, 1);
    fs_add_job(1, "a", "staging", "gpus=1");
    memset(&D, 0, sizeof D);
    dconfig_default(&D.cfg);
    D.cfg.journal[0] = 0;
    D.cfg.listen_port = 0;
    snprintf(D.cfg.tenants[0].name, sizeof D.cfg.tenants[0].name, "a");
    D.cfg.tenants[0].quota = 1;
    D.cfg.ntenants = 1;
    D.cfg.tel.kind = TEL_PROGRESS;
    snprintf(D.cfg.tel.dir, sizeof D.cfg.tel.dir, "%s/absent", dir);
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(daemon_setup(&D, &err), DS_OK);
    cycle();
    cycle();
    assert_true(dt_metric(&D, "deepshare_telemetry_up{source=\"progress\"}") == 0);
    assert_true(dt_metric(&D, "deepshare_telemetry_poll_errors_total") == 2);
    assert_true(dt_explain_has(&D, 1, "cannot open the progress folder"));
    daemon_teardown(&D);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_degraded_pair_revoked),
        cmocka_unit_test(test_good_pair_kept),
        cmocka_unit_test(test_stale_revokes_nothing),
        cmocka_unit_test(test_source_down),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
