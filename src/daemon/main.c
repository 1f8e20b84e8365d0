/* main.c: deepshared, the controller that makes a Slurm cluster schedule with a deepshare policy: it
 * polls Slurm, runs the engine every cycle and whenever jobs change, and applies the decisions. */
#include "daemon/daemon.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile sig_atomic_t stop, reload;

static void on_signal(int sig)
{
    if (sig == SIGHUP) reload = 1;
    else stop = 1;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: deepshared [-c CONFIG] [-v] [--check | --check-config FILE | --probe-telemetry]\n"
            "\n"
            "Schedules the jobs users submit to Slurm's staging partition with a deepshare policy: tenants are\n"
            "Slurm accounts with GPU quotas from CONFIG (default /etc/deepshare/deepshared.conf; see\n"
            "deepshared.conf(5) or docs/deepshared.conf.sample). Runs in the foreground, logs to stderr;\n"
            "needs root or SlurmUser. Serves a status page, /metrics and /explain on 'listen'.\n"
            "  -c CONFIG             configuration file\n"
            "  -v                    log every dispatch, requeue and finish (-vv: every pass)\n"
            "  --check-config FILE   check FILE as start would (every key, the policy and its parameters, the\n"
            "                        journal, one bind of the listen address), print the effective\n"
            "                        configuration (every key, defaults included; the read token is not shown)\n"
            "                        and exit: 0 when it is valid, 1 with file, line and key when it is not\n"
            "  --check               the same for CONFIG\n"
            "  --probe-telemetry     poll CONFIG's retention source once (telemetry = prometheus or progress),\n"
            "                        print each job's sample and exit: 0 when the source answered\n"
            "SIGHUP reloads CONFIG: tenants and quotas (from the next pass), cycle, poll, dispatch_timeout,\n"
            "grace, preempt_signal,\n"
            "default_job_gpu_mem_mib, qad_lambda, qad_theta, verbose and the read token apply at once; other keys\n"
            "changed are logged as needing a restart. An invalid file is rejected (logged with file, line and\n"
            "key) and the running configuration stays. SIGTERM or SIGINT: exit.\n");
}

/* --probe-telemetry: one poll of the source, as the daemon makes every cycle (is dcgm-exporter's job
 * mapping reaching Prometheus? are the progress files readable here?). */
static int probe_telemetry(const dconfig_t *c, const char *path)
{
    if (c->tel.kind == TEL_OFF) {
        fprintf(stderr, "deepshared: %s: telemetry = off: no retention source to probe\n", path);
        return 1;
    }
    telemetry_t t;
    tel_init(&t, &c->tel);
    double now = tel_now();
    int rc = tel_poll(&t, now);
    if (rc) fprintf(stderr, "deepshared: telemetry (%s): %s\n", tel_kind_name(c->tel.kind), t.last_error);
    else {
        printf("# telemetry (%s): %d job%s with a sample\n", tel_kind_name(c->tel.kind), t.n, t.n == 1 ? "" : "s");
        for (int32_t k = 0; k < t.n; k++)
            printf("job %u %g (%.0f s old)\n", t.job[k].id, t.job[k].v, now - t.job[k].t);
    }
    tel_free(&t);
    return rc ? 1 : 0;
}

static void sleep_s(double s)
{
    if (s <= 0) return;
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) && errno == EINTR && !stop && !reload) {}
}

int main(int argc, char **argv)
{
    const char *path = "/etc/deepshare/deepshared.conf";
    int check = 0, verbose = 0, probe = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-c") && i + 1 < argc) path = argv[++i];
        else if (!strcmp(argv[i], "-v")) verbose++;
        else if (!strcmp(argv[i], "-vv")) verbose += 2;
        else if (!strcmp(argv[i], "--check")) check = 1;
        else if (!strcmp(argv[i], "--probe-telemetry")) probe = 1;
        else if (!strcmp(argv[i], "--check-config") && i + 1 < argc) check = 1, path = argv[++i];
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { usage(stdout); return 0; }
        else { usage(stderr); return 2; }
    }
    static daemon_t d;
    ds_error_t err;
    ds_error_clear(&err);
    char msg[800];
    dconfig_default(&d.cfg);
    if (dconfig_read(&d.cfg, path, &err) || dconfig_check(&d.cfg, &err)) {
        ds_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "deepshared: %s\n", msg);
        return 1;
    }
    if (probe) return probe_telemetry(&d.cfg, path);
    daemon_cli_verbose = verbose;
    dlog_verbose = verbose > d.cfg.verbose ? verbose : d.cfg.verbose;
    if (daemon_setup(&d, &err)) {
        ds_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "deepshared: %s\n", msg);
        daemon_teardown(&d);
        return 1;
    }
    if (check) {
        int b = dconfig_check_bind(&d.cfg, &err);
        if (b < 0) {
            ds_error_format(&err, msg, sizeof msg);
            fprintf(stderr, "deepshared: %s\n", msg);
            daemon_teardown(&d);
            return 1;
        }
        if (b > 0)
            fprintf(stderr, "deepshared: warning: %s: %s:%d is in use now (a running deepshared?): start needs it free\n",
                    path, d.cfg.listen_addr, d.cfg.listen_port);
        dconfig_print(stdout, &d.cfg);
        printf("# deepshared: %s: ok (policy %s, %d tenants)\n", path, d.ops->name, d.cfg.ntenants);
        daemon_teardown(&d);
        return 0;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    sl_init(d.cfg.slurm_conf[0] ? d.cfg.slurm_conf : NULL);
    /* who may charge a tenant: Slurm's own account check, or the config's members (docs/deepshared.md,
     * Access and threat model) */
    char e1[300];
    d.acct_enforced = sl_accounts_enforced(e1, sizeof e1);
    if (d.acct_enforced < 0) {
        fprintf(stderr, "deepshared: %s: cannot tell whether Slurm checks accounts; start again once slurmctld "
                "answers\n", e1);
        sl_fini();
        daemon_teardown(&d);
        return 1;
    }
    if (dconfig_check_identity(&d.cfg, d.acct_enforced, &err)) {
        ds_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "deepshared: %s\n", msg);
        sl_fini();
        daemon_teardown(&d);
        return 1;
    }
    dlog(0, "accounts: %s", d.acct_enforced ? "Slurm enforces associations: a job's account is one its user may use"
                          : d.cfg.trust_accounts ? "trust_accounts = yes: every job is charged to the account it names, "
                                                   "whoever submitted it"
                                                 : "each tenant's members (users=) are checked");
    http_set_token(d.cfg.read_token);
    if (d.cfg.listen_port && http_start(&d, &err)) {
        ds_error_format(&err, msg, sizeof msg);
        fprintf(stderr, "deepshared: %s\n", msg);
        sl_fini();
        daemon_teardown(&d);
        return 1;
    }
    dlog(0, "started: policy %s, %d tenants, cycle %g s, poll %g s%s%s%s", d.ops->name, d.cfg.ntenants, d.cfg.cycle,
         d.cfg.poll, d.cfg.listen_port ? ", http " : "", d.cfg.listen_port ? d.cfg.listen_addr : "",
         d.cfg.listen_port ? (d.cfg.read_token[0] ? " (read token required)" : " (no read token)") : "");
    double next_cycle = 0, backoff = 0, published = -1e9;
    int was_down = 0;
    /* active/standby: every Slurm write passes the lease's fence; a standby reads and writes nothing */
    sl_set_fence(daemon_may_write, &d);
    if (d.lease.url[0])
        dlog(0, "leader lease: etcd %s, key %s, %d s, as %s: standing by until it is ours", d.lease.url, d.lease.key,
             d.lease.ttl, d.lease.holder);
    double t_standby = daemon_now_mono(), t_took = -1;
    while (!stop) {
        if (d.lease.url[0]) {
            char le[400];
            int was = d.lease.leading, store_was_down = d.lease.store_down;
            int lead = lease_tick(&d.lease, daemon_now_mono(), le, sizeof le);
            if (d.lease.store_down && !store_was_down) dlog(0, "leader lease: %s", le);
            else if (!d.lease.store_down && store_was_down) dlog(0, "leader lease: etcd answers again");
            if (lead && !was) {
                pthread_mutex_lock(&d.lock);
                dlog(0, "leading: took the lease (epoch %lld) %.3f s after standing by; rebuilding from Slurm",
                     (long long)d.lease.epoch, daemon_now_mono() - t_standby);
                daemon_take_lead(&d);
                pthread_mutex_unlock(&d.lock);
                t_took = daemon_now_mono();
                sl_jobs_reset();
                next_cycle = 0;
            } else if (!lead && was) {
                pthread_mutex_lock(&d.lock);
                dlog(0, "lost the lease (%s): standing by; nothing is written to Slurm", le[0] ? le : "not renewed in time");
                daemon_stand_by(&d);
                pthread_mutex_unlock(&d.lock);
                t_standby = daemon_now_mono();
            }
            if (!lead) {
                if (d.cfg.listen_port) {
                    pthread_mutex_lock(&d.lock);
                    http_publish(&d, lead != was); /* a standby's state changes only when it gives up the lead */
                    pthread_mutex_unlock(&d.lock);
                }
                sleep_s(DS_MIN(d.cfg.poll, lease_poll_interval(&d.lease)));
                continue;
            }
        }
        double t0 = daemon_now_mono();
        int timer = t0 >= next_cycle;
        char e2[600] = "";
        pthread_mutex_lock(&d.lock);
        int reloaded = 0;
        if (reload) {
            reload = 0;
            dlog(0, "SIGHUP: reloading %s", d.cfg.path);
            if (daemon_reload(&d) == 0) {
                reloaded = 1;
                http_set_token(d.cfg.read_token);
            }
        }
        int rc = daemon_sync(&d, timer || reloaded, e2, sizeof e2), passed = 0;
        if (rc >= 0) {
            d.slurm_up = 1;
            /* after a reload, a pass at once: a changed quota classifies and reclaims from this pass on */
            if (timer) daemon_measure(&d); /* the cycle's pass samples colocated pairs (the policy's monitor) */
            /* a victim whose grace is over is requeued at once, not at the next cycle */
            if (rc > 0 || timer || reloaded || daemon_grace_due(&d)) {
                daemon_pass(&d, timer);
                passed = 1;
            }
            if (timer) {
                daemon_cycle_figures(&d);
                status_sample(&d);
            }
            if (rc > 0 || timer) daemon_observe_latency(&d, daemon_now_mono() - t0);
        } else {
            d.slurm_up = 0;
        }
        /* /metrics and /healthz serve this snapshot: requests never wait on the lock held above. Rendered
         * when the state changed, and at least once a second: a poll that found nothing new (most of them,
         * at a short poll) renders nothing */
        if (d.cfg.listen_port) {
            int changed = rc > 0 || passed || was_down;
            if (rc >= 0 && (changed || t0 - published >= 1.0)) {
                http_publish(&d, changed);
                published = t0;
                /* where a takeover's time goes: the lease (logged above), then the rebuild and this pass */
                if (t_took >= 0 && timer)
                    dlog(0, "leading: first pass published %.3f s after taking the lease", daemon_now_mono() - t_took);
                if (timer) t_took = -1;
            } else if (rc < 0) {
                http_publish_health(0);
            }
        }
        pthread_mutex_unlock(&d.lock);
        if (rc < 0) {
            /* slurmctld down or restarting: keep the state, retry with backoff, resync on return */
            backoff = backoff ? DS_MIN(backoff * 2, 30.0) : d.cfg.poll;
            dlog(0, "%s; retrying in %.1f s", e2, backoff);
            was_down = 1;
            sleep_s(backoff);
            continue;
        }
        if (was_down) {
            dlog(0, "slurmctld answers again; resuming");
            was_down = 0;
            backoff = 0;
            sl_jobs_reset();
        }
        if (timer) next_cycle = t0 + d.cfg.cycle;
        double wait = DS_MIN(d.cfg.poll, next_cycle - daemon_now_mono());
        sleep_s(wait);
    }
    dlog(0, "stopping");
    lease_release(&d.lease); /* a standby takes over at once, not a lease period later */
    http_stop();
    sl_fini();
    status_free(&d);
    daemon_teardown(&d);
    return 0;
}
