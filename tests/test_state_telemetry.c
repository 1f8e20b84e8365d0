/* test_state_telemetry.c: deepshared's retention source wired to the policy's monitor (measure.c), on the
 * in-memory Slurm of fake_slurm.c with the progress-file backend: a pair whose guaranteed job falls to 40%
 * of the step rate it had alone is revoked after w = 3 cycles (its best-effort partner requeued, the
 * guaranteed job running on); a pair at 95% is kept; a stale or missing file revokes nothing however long
 * it lasts, nor does a report from before the partner ran; explain and the metrics say what the source gives;
 * a Prometheus answer that still shows a broken pair is not taken as the job's solo activity. */
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

static void sync_now(void)
{
    char err[300];
    assert_true(daemon_sync(&D, 1, err, sizeof err) >= 0);
}

/* Reports by HTTP (progress_post.c) instead of files: a stand-in for munge_decode that takes the credential
 * "BAD..." as refused and any other as the payload itself, made by post_uid post_age s ago. */
static int via_post, post_uid;
static double post_age;

static int fake_verify(const char *cred, char *payload, size_t n, uint32_t *uid, double *t, char *err, size_t errn)
{
    if (!strncmp(cred, "BAD", 3)) {
        snprintf(err, errn, "munge credential refused: Replayed credential");
        return -1;
    }
    snprintf(payload, n, "%s", cred);
    *uid = (uint32_t)post_uid;
    *t = tel_now() - post_age;
    return 0;
}

static int post(const char *body, char *msg, size_t n)
{
    daemon_progress_verify = fake_verify;
    return daemon_progress_post(&D, body, strlen(body), msg, n);
}

/* The job's step rate, written as a training script would (temporary file, then rename), dated age s ago;
 * with via_post, POSTed instead. */
static void rate(uint32_t id, double steps, double age)
{
    if (via_post) {
        char body[100], msg[300];
        snprintf(body, sizeof body, "job=%u rate=%g", id, steps);
        post_age = age;
        sync_now(); /* the daemon checks the job against its latest read of Slurm */
        assert_int_equal(post(body, msg, sizeof msg), 200);
        return;
    }
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
    if (via_post) D.cfg.tel.dir[0] = 0; /* progress_dir = off: HTTP reports only */
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
    if (shared_rate >= 0) rate(1, shared_rate, age); /* else its last report is the solo one, still fresh */
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
        /* alone again, its last report is still the slowed one from the pair's time: not its solo speed
         * (the baseline keeps its 3 samples of 10: two alone, one at the cycle job 2 was placed) */
        cycle();
        cycle();
        assert_true(dt_explain_has(&D, 1, "exclusive baseline 10 (3 samples alone)"));
        assert_int_equal(dt_jstate(&D, 2)->preemptions, 1);
        assert_int_equal(fs_calls(FS_REQUEUE), 1);
    } else {
        assert_int_equal(dt_jstate(&D, 2)->status, DS_JS_RUNNING);
        assert_int_equal(fs_calls(FS_REQUEUE), 0);
        if (shared_rate < 0) {
            /* 10 steps/s from before job 2 ran would read as retention 1 and reset the count: no sample */
            assert_true(dt_explain_has(&D, 1, "the last sample is from before both jobs ran"));
            assert_false(dt_explain_has(&D, 1, "measured retention"));
            assert_true(dt_metric(&D, "deepshare_telemetry_retention_missing_total") >= 2 * cycles);
        } else if (age > D.cfg.tel.stale) {
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

/* No report since the partner started: the fresh file is job 1's solo rate, no sample of the pair. */
static void test_solo_sample_not_the_pairs(void **st)
{
    (void)st;
    pair_case(-1, 0, 4, 0);
}

/* The same pair reported by HTTP POST (progress_dir = off): revoked at the 3rd cycle. */
static void test_post_reports_revoke(void **st)
{
    (void)st;
    via_post = 1;
    pair_case(4, 0, 6, 3);
    via_post = 0;
}

/* What a POSTed report must be: a good credential, of the job's own user (or root), for a running job,
 * with telemetry = progress. */
static void test_post_refused(void **st)
{
    (void)st;
    fs_reset();
    fs_add_node("n0", 32, 1);
    fs_add_job(1, "a", "staging", "gpus=1")->uid = 1000;
    memset(&D, 0, sizeof D);
    dconfig_default(&D.cfg);
    D.cfg.journal[0] = 0;
    D.cfg.listen_port = 0;
    snprintf(D.cfg.tenants[0].name, sizeof D.cfg.tenants[0].name, "a");
    D.cfg.tenants[0].quota = 1;
    D.cfg.ntenants = 1;
    D.cfg.tel.kind = TEL_PROGRESS;
    D.cfg.tel.dir[0] = 0;
    ds_error_t err;
    ds_error_clear(&err);
    assert_int_equal(daemon_setup(&D, &err), DS_OK);
    cycle();
    sync_now();
    assert_int_equal(dt_jstate(&D, 1)->status, DS_JS_RUNNING);
    char msg[300];
    post_age = 0;
    post_uid = 1001;
    assert_int_equal(post("job=1 rate=5", msg, sizeof msg), 403); /* another user */
    assert_non_null(strstr(msg, "not yours"));
    post_uid = 1000;
    assert_int_equal(post("job=2 rate=5", msg, sizeof msg), 404); /* no such job */
    assert_int_equal(post("job=1 rate=-5", msg, sizeof msg), 400);
    assert_int_equal(post("job=1 rate=nan", msg, sizeof msg), 400);
    assert_int_equal(post("job=1 rate=5 job=2", msg, sizeof msg), 400);
    assert_int_equal(post("rate=5 job=1", msg, sizeof msg), 400);
    assert_int_equal(post("BAD credential", msg, sizeof msg), 401);
    assert_non_null(strstr(msg, "Replayed"));
    assert_int_equal(daemon_progress_post(&D, "", 0, msg, sizeof msg), 400);
    assert_int_equal(D.tel.samples, 0);
    assert_int_equal(post("job=1 rate=5", msg, sizeof msg), 200); /* its own user */
    post_uid = 0;
    assert_int_equal(post("job=1 rate=6", msg, sizeof msg), 200); /* root, the operator */
    assert_int_equal(D.tel.samples, 2);
    assert_true(dt_explain_has(&D, 1, "last sample 6"));
    assert_true(dt_metric(&D, "deepshare_progress_reports_total{result=\"taken\"}") == 2);
    assert_true(dt_metric(&D, "deepshare_progress_reports_total{result=\"not_owner\"}") == 1);
    assert_true(dt_metric(&D, "deepshare_progress_reports_total{result=\"malformed\"}") == 5);
    assert_true(dt_metric(&D, "deepshare_progress_reports_total{result=\"credential\"}") == 1);
    assert_true(dt_metric(&D, "deepshare_progress_reports_total{result=\"not_running\"}") == 1);
    D.cfg.tel.kind = TEL_PROMETHEUS;
    assert_int_equal(post("job=1 rate=5", msg, sizeof msg), 409);
    daemon_teardown(&D);
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

/* Prometheus: after a pair breaks, the next answer still shows the GPU as it was while both ran (the
 * exporter's collect interval, the scrape interval, the query's window): the job's series carries the
 * pair's activity, stamped with the answer's time, after the daemon found the job alone. It is not the
 * job's solo activity until its span (telemetry_lag 30 s here, the query has no window) lies after the
 * break; nor while the partner is still ending in Slurm. */
static void test_prometheus_lagging_sample_not_solo(void **st)
{
    (void)st;
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
    char err[200];
    assert_int_equal(tel_config_set(&D.cfg.tel, "telemetry", "prometheus", err, sizeof err), 0);
    /* nobody listens there: each poll fails at once, the samples given below are all there is */
    assert_int_equal(tel_config_set(&D.cfg.tel, "prometheus_url", "http://127.0.0.1:1", err, sizeof err), 0);
    assert_int_equal(tel_config_set(&D.cfg.tel, "prometheus_query", "max by (hpc_job) (DCGM_FI_PROF_SM_ACTIVE)", err,
                                    sizeof err), 0);
    assert_int_equal(tel_config_set(&D.cfg.tel, "telemetry_lag", "30", err, sizeof err), 0);
    assert_true(tel_span(&D.cfg.tel) == 30);
    ds_error_t e;
    ds_error_clear(&e);
    assert_int_equal(daemon_setup(&D, &e), DS_OK);
    cycle();
    assert_int_equal(dt_jstate(&D, 1)->status, DS_JS_RUNNING);
    tel_ingest(&D.tel, 1, 0.5, tel_now()); /* alone: the GPU busy at 0.5 */
    cycle();
    cycle();
    assert_true(dt_explain_has(&D, 1, "exclusive baseline 0.5 (2 samples alone)"));
    fs_add_job(2, "a", "staging", "gpus=1 class=BE");
    fs_touch();
    cycle(); /* measured alone once more, then job 2 placed beside it */
    cycle();
    sync_now();
    assert_int_equal(dt_jstate(&D, 2)->partner, daemon_slot_of(&D, 1));
    double t = tel_now(); /* both jobs' series: the GPU at 0.9 */
    tel_ingest(&D.tel, 1, 0.9, t);
    tel_ingest(&D.tel, 2, 0.9, t);
    cycle();
    /* the pair breaks: job 2 ends; while Slurm is still ending it, job 1 is not alone on its GPU */
    fs_end_script(2, 0);
    cycle();
    assert_int_equal(dt_jstate(&D, 1)->partner, -1);
    /* Slurm takes its time (KillWait, an epilog): as if 31 s had passed since the engine had job 1 alone,
     * a sample whose span lies after that still shows job 2's work on the GPU */
    D.slot[daemon_slot_of(&D, 1)].t_alone_wall -= 31;
    tel_ingest(&D.tel, 1, 0.9, tel_now());
    cycle();
    assert_true(dt_explain_has(&D, 1, "exclusive baseline 0.5 (3 samples alone)"));
    fs_job(2)->completing = 0;
    fs_touch();
    cycle(); /* now alone in Slurm too: the first measure that finds it so */
    /* the next answer, after that measure, still carries the pair's 0.9 (scrape and query lag) */
    tel_ingest(&D.tel, 1, 0.9, tel_now());
    cycle();
    cycle();
    assert_true(dt_explain_has(&D, 1, "exclusive baseline 0.5 (3 samples alone)"));
    /* once the span of a sample lies after the break, it is the job's own activity again */
    D.slot[daemon_slot_of(&D, 1)].t_alone_wall -= 31;
    tel_ingest(&D.tel, 1, 0.5, tel_now());
    cycle();
    assert_true(dt_explain_has(&D, 1, "exclusive baseline 0.5 (4 samples alone)"));
    daemon_teardown(&D);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_degraded_pair_revoked),
        cmocka_unit_test(test_good_pair_kept),
        cmocka_unit_test(test_stale_revokes_nothing),
        cmocka_unit_test(test_solo_sample_not_the_pairs),
        cmocka_unit_test(test_source_down),
        cmocka_unit_test(test_post_reports_revoke),
        cmocka_unit_test(test_post_refused),
        cmocka_unit_test(test_prometheus_lagging_sample_not_solo),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
