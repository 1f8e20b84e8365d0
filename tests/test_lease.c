/* test_lease.c: deepshared's leader lease (src/daemon/lease.c) against a real etcd (Debian's etcd-server,
 * started here on a private port; skipped when it is not installed): one of two instances leads, the other
 * stands by; when the leader stops renewing (killed or paused) the standby leads within one lease period
 * with a higher epoch, and the old leader, woken, finds it lost the lease and may not write; a clean stop
 * hands over at once. Six takeovers, the leader stopped at a random point of its renewal interval, give
 * min/median/max; every one must be within the period. */
#include "testutil.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "daemon/lease.h"

static pid_t etcd_pid;
static char dir[64], url[64];

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void nap(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static int start_etcd(void **state)
{
    (void)state;
    const char *bin = access("/usr/bin/etcd", X_OK) == 0 ? "/usr/bin/etcd" : NULL;
    if (!bin) return 0;
    snprintf(dir, sizeof dir, "/tmp/ds_test_lease_XXXXXX");
    if (!mkdtemp(dir)) return -1;
    int port = 20000 + (int)(getpid() % 20000);
    char client[64], peer[64], data[128], logf[128];
    snprintf(url, sizeof url, "http://127.0.0.1:%d", port);
    snprintf(client, sizeof client, "http://127.0.0.1:%d", port);
    snprintf(peer, sizeof peer, "http://127.0.0.1:%d", port + 1);
    snprintf(data, sizeof data, "%s/data", dir);
    snprintf(logf, sizeof logf, "%s/etcd.log", dir);
    etcd_pid = fork();
    if (etcd_pid == 0) {
        if (!freopen(logf, "w", stdout) || !freopen(logf, "a", stderr)) _exit(127);
        execl(bin, bin, "--data-dir", data, "--listen-client-urls", client, "--advertise-client-urls", client,
              "--listen-peer-urls", peer, (char *)NULL);
        _exit(127);
    }
    return 0;
}

static int stop_etcd(void **state)
{
    (void)state;
    if (etcd_pid > 0) {
        kill(etcd_pid, SIGTERM);
        waitpid(etcd_pid, NULL, 0);
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        if (system(cmd)) return -1;
    }
    return 0;
}

static void open_lease(lease_t *l, const char *name)
{
    lease_default(l);
    snprintf(l->url, sizeof l->url, "%s", url);
    snprintf(l->key, sizeof l->key, "/deepshared/test-%d", (int)getpid());
    snprintf(l->holder, sizeof l->holder, "%s", name);
    l->ttl = 3;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void test_lease_takeover(void **state)
{
    (void)state;
    if (etcd_pid <= 0) skip(); /* etcd-server not installed */
    lease_t a, b;
    open_lease(&a, "instance-a");
    open_lease(&b, "instance-b");
    char err[400];
    /* etcd takes a moment to start */
    int lead = 0;
    for (int i = 0; i < 100 && !(lead = lease_tick(&a, mono(), err, sizeof err)); i++) nap(0.1), a.t_attempt = 0;
    if (!lead) fail_msg("instance a never led: %s", err);
    assert_true(a.epoch > 0);
    assert_true(lease_valid(&a, mono()));
    b.t_attempt = 0;
    assert_int_equal(lease_tick(&b, mono(), err, sizeof err), 0);
    assert_string_equal(b.leader, "instance-a");
    assert_false(lease_valid(&b, mono()));
    /* a renews for 3 lease periods... */
    double t0 = mono();
    while (mono() - t0 < 3 * a.ttl) {
        assert_int_equal(lease_tick(&a, mono(), err, sizeof err), 1);
        assert_int_equal(lease_tick(&b, mono(), err, sizeof err), 0);
        nap(0.05);
    }
    /* ...then stops (killed, or paused): b leads within one lease period, with a higher epoch */
    double stopped = mono(), took = -1;
    int64_t ea = a.epoch;
    while (mono() - stopped < 3 * b.ttl) {
        if (lease_tick(&b, mono(), err, sizeof err)) { took = mono() - stopped; break; }
        nap(0.02);
    }
    print_message("  standby led %.3f s after the leader stopped (period %d s, etcd lease %d s)\n", took, b.ttl,
                  b.granted);
    assert_true(took >= 0 && took <= b.ttl);
    assert_true(b.epoch > ea);
    /* a, woken: its fence is already shut, and its next step finds the lease lost */
    assert_false(lease_valid(&a, mono()));
    assert_int_equal(lease_tick(&a, mono(), err, sizeof err), 0);
    assert_int_equal(a.lost, 1);
    assert_int_equal(a.epoch, 0);
    assert_false(lease_valid(&a, mono()));
    /* a clean stop of b hands over at once */
    lease_release(&b);
    assert_false(lease_valid(&b, mono()));
    double rel = mono(), got = -1;
    while (mono() - rel < 2.0) {
        a.t_attempt = 0;
        if (lease_tick(&a, mono(), err, sizeof err)) { got = mono() - rel; break; }
        nap(0.02);
    }
    assert_true(got >= 0 && got < 1.0);
    print_message("  after a clean stop the other led %.3f s later\n", got);
    /* six more takeovers, each leader stopped at a random point after its last renewal */
    lease_t *ldr = &a, *sby = &b;
    double t[6];
    srand((unsigned)getpid());
    for (int k = 0; k < 6; k++) {
        double t1 = mono(), phase = (double)rand() / RAND_MAX * ldr->ttl / 3.0;
        while (mono() - t1 < 1.0 + phase) {
            assert_int_equal(lease_tick(ldr, mono(), err, sizeof err), 1);
            assert_int_equal(lease_tick(sby, mono(), err, sizeof err), 0);
            nap(0.01);
        }
        double s0 = mono();
        t[k] = -1;
        while (mono() - s0 < 3 * sby->ttl) {
            if (lease_tick(sby, mono(), err, sizeof err)) { t[k] = mono() - s0; break; }
            nap(0.01);
        }
        assert_true(t[k] >= 0);
        assert_int_equal(lease_tick(ldr, mono(), err, sizeof err), 0); /* woken: lost */
        lease_t *x = ldr;
        ldr = sby;
        sby = x;
    }
    qsort(t, 6, sizeof t[0], cmp_d);
    print_message("  6 takeovers (period %d s): min %.3f s, median %.3f s, max %.3f s after the leader stopped\n",
                  a.ttl, t[0], (t[2] + t[3]) / 2, t[5]);
    for (int k = 0; k < 6; k++) assert_true(t[k] <= a.ttl);
    lease_release(ldr);
}

static void test_lease_store_down(void **state)
{
    (void)state;
    lease_t l;
    open_lease(&l, "alone");
    snprintf(l.url, sizeof l.url, "http://127.0.0.1:9"); /* nothing listens there */
    char err[400];
    assert_int_equal(lease_tick(&l, mono(), err, sizeof err), 0);
    assert_true(l.store_down);
    assert_non_null(strstr(err, "etcd"));
    assert_false(lease_valid(&l, mono()));
    assert_int_equal(lease_comment_epoch("deepshare class=G gres=gpu pin=1,2 epoch=42"), 42);
    assert_int_equal(lease_comment_epoch("deepshare class=G gres=gpu pin=1"), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lease_takeover),
        cmocka_unit_test(test_lease_store_down),
    };
    return cmocka_run_group_tests(tests, start_etcd, stop_etcd);
}
