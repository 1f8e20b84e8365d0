/* replay_live.c: 'deepshare replay-live': replays a trace on a live Slurm cluster, compressed in time,
 * under one configuration (the native baselines slurm-quota and slurm-borrow, or deepshared), reads what
 * happened (the jobs' own start/stop/end log, sacct), and scores it with the simulator's metric code
 * (observed.c): the same table and JSON as 'simulate'. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "deepshare/strbuf.h"
#include "cli/observed.h"
#include "cli/runner.h"
#include "deepshare/idmap.h"
#include "deepshare/report.h"

extern char **environ;

static void help(FILE *f)
{
    fprintf(f,
            "usage: deepshare replay-live --trace FILE --vc-config FILE --variant V --out DIR [--compress X]\n"
            "                             [--json FILE|-] [options]\n"
            "       deepshare replay-live --trace FILE --vc-config FILE --score --out DIR [--json FILE|-]\n"
            "\n"
            "Replays a trace (or the synthetic workload) on the live Slurm cluster that SLURM_CONF names, time\n"
            "compressed: job j is submitted X times sooner than in the trace, as its tenant's account, and runs\n"
            "a script that sleeps for its duration / X (keeping its remaining work when it is requeued, like a\n"
            "checkpointing job, and paying --restart-overhead / X on each restart). When every job has ended,\n"
            "its runs are read from the jobs' own log (start, stop and end to the microsecond, node) and from\n"
            "sacct (final state, QOS, partition), mapped back to trace seconds, and scored by replaying them\n"
            "through the simulator's engine: the table and JSON of 'deepshare simulate', in trace seconds.\n"
            "Ctrl-C (SIGINT, SIGTERM) cancels every job the replay submitted.\n"
            "\n"
            "configuration (--variant, deploy/slurm/variants/; start it with deploy/slurm/start.sh --variant V):\n"
            "  slurm-quota, slurm-borrow   native Slurm: sbatch -A TENANT --gres=gpu:N -t LIMIT (LIMIT: twice the\n"
            "                      compressed run time, in whole minutes)\n"
            "  deepshared          sbatch -p staging -A TENANT --comment=gpus=N (deepshared must be running)\n"
            "\n"
            "options:\n"
            "  --compress X        trace seconds per wall second (60: one trace minute per second)\n"
            "  --out DIR           the replay's folder: job.sh, run/events, submitted.csv, sacct.txt, live.csv\n"
            "                      (runs in wall seconds), observed.csv (runs in trace seconds), summary.json,\n"
            "                      live.json (latencies), jobs.csv, timeseries.csv, qad.csv, tenants.csv\n"
            "  --score             do not run anything: score DIR/observed.csv again (no cluster needed)\n"
            "  --restart-overhead S  trace seconds a requeued job spends before its work resumes (40: the\n"
            "                      simulator's restart overhead for jobs of up to 8 GPUs)\n"
            "  --nodes N           nodes of the cluster (4); each of --gpus-per-node GPUs (4). Slurm node nK is\n"
            "                      node K-1 of the score\n"
            "  --partition P       native variants: submit into P (default: the cluster's default partition)\n"
            "  --drain S           give up S wall seconds after the last submit, cancelling what is left\n"
            "                      (default: 3 x the compressed span + 600)\n"
            "  --allow-busy        run even when the cluster has jobs of others queued or running\n"
            "  --label NAME        the result's policy name (default live:VARIANT)\n"
            "  --json FILE|-       the summary JSON (as simulate --json; DIR/summary.json is always written)\n"
            "  --quiet             no table on stdout, no progress on stderr\n"
            "  --cycle S, --window A:B   QAD sampling period and utilization window, trace seconds (as simulate)\n"
            "\n"
            "Workload options (--trace, --vc-config, --seed, --synth-*, --arrival-scale) are simulate's. Tenant\n"
            "names are Slurm accounts (lower-cased); each must exist (deploy/slurm/accounting.sh tenants FILE).\n"
            "Needs root (or a user whose jobs' log directory DIR is writable by the jobs) and accounting\n"
            "(sacct).\n"
            "\n"
            "exit status: 0 success; 1 a failure (Slurm refused a job, jobs did not complete, write error); 2 bad\n"
            "usage; 130 interrupted (the submitted jobs are cancelled).\n");
}

/* ---- running Slurm's commands ---- */

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { g_stop = sig; }

static double now_wall(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Sleeps until wall time t or a signal. */
static void sleep_until(double t)
{
    while (!g_stop) {
        double d = t - now_wall();
        if (d <= 0) return;
        struct timespec ts = {(time_t)d, (long)((d - floor(d)) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* Runs argv (looked up in PATH) with stdin from /dev/null; stdout into out (may be NULL), stderr into
 * err. Returns its exit status, 127 when it cannot run, 128 + N when killed by signal N. */
static int run_cmd(char *const argv[], ds_buf_t *out, ds_buf_t *err)
{
    int po[2], pe[2];
    if (pipe(po)) return 127;
    if (pipe(pe)) {
        close(po[0]), close(po[1]);
        return 127;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, po[1], 1);
    posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
    posix_spawn_file_actions_addclose(&fa, po[0]);
    posix_spawn_file_actions_addclose(&fa, pe[0]);
    pid_t pid;
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(po[1]);
    close(pe[1]);
    if (rc) {
        close(po[0]), close(pe[0]);
        if (err) {
            char m[300];
            int k = snprintf(m, sizeof m, "cannot run %s: %s", argv[0], strerror(rc));
            ds_bput(err, m, (size_t)k);
        }
        return 127;
    }
    struct pollfd fds[2] = {{po[0], POLLIN, 0}, {pe[0], POLLIN, 0}};
    int open_n = 2;
    char tmp[4096];
    while (open_n) {
        if (poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            break;
        }
        for (int i = 0; i < 2; i++) {
            if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
            ssize_t k = read(fds[i].fd, tmp, sizeof tmp);
            if (k > 0) {
                ds_buf_t *b = i == 0 ? out : err;
                if (b) ds_bput(b, tmp, (size_t)k);
            } else if (k == 0 || errno != EINTR) {
                close(fds[i].fd);
                fds[i].fd = -1;
                open_n--;
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (fds[i].fd >= 0) close(fds[i].fd);
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return 127;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The first line of a command's stderr, for messages. */
static const char *first_line(ds_buf_t *b)
{
    if (!b->s) return "";
    char *nl = strchr(b->s, '\n');
    if (nl) *nl = '\0';
    return b->s;
}

/* ---- the replay ---- */

typedef struct lj {
    int64_t slurm_id;
    double t_target, t_submit;  /* wall seconds */
    int completed;              /* sacct says COMPLETED */
    char state[48], qos[32], part[32], nodes[64];
    double sacct_start, sacct_end;
} lj_t;

typedef struct ev {
    int64_t id;
    int rc;      /* Slurm restart count of the run */
    int kind;    /* 0 start, 1 stop (requeued), 2 end (work done) */
    double t;
    int node;
} ev_t;

typedef struct wspell { /* a run in wall seconds */
    int32_t job;
    double start, end;
    int node, last, be;
} wspell_t;

static int cmp_ev(const void *a, const void *b)
{
    const ev_t *x = a, *y = b;
    if (x->id != y->id) return x->id < y->id ? -1 : 1;
    if (x->rc != y->rc) return x->rc < y->rc ? -1 : 1;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    return (x->t > y->t) - (x->t < y->t);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int node_index(const char *name, int nnodes)
{
    const char *p = name + strlen(name);
    while (p > name && p[-1] >= '0' && p[-1] <= '9') p--;
    if (!*p || p == name || strchr(name, '[')) return -1;
    int k = atoi(p) - 1;
    return k >= 0 && k < nnodes ? k : -1;
}

/* sacct's local "YYYY-MM-DDTHH:MM:SS", or NAN ("Unknown", "None") */
static double parse_sacct_time(const char *s)
{
    struct tm tm;
    memset(&tm, 0, sizeof tm);
    const char *e = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!e || *e) return NAN;
    tm.tm_isdst = -1;
    return (double)mktime(&tm);
}

static int mkdir_p(const char *dir)
{
    char p[1024];
    snprintf(p, sizeof p, "%s", dir);
    for (char *s = p + 1; *s; s++) {
        if (*s != '/') continue;
        *s = '\0';
        if (mkdir(p, 0755) && errno != EEXIST) return -1;
        *s = '/';
    }
    return mkdir(p, 0755) && errno != EEXIST ? -1 : 0;
}

static const char job_script[] =
    "#!/bin/bash\n"
    "# job.sh WORK_US OVERHEAD_US DIR: one job of a live replay (deepshare replay-live). It sleeps for its\n"
    "# remaining work, logs each run to DIR/events (start, stop when Slurm requeues it, end; microseconds),\n"
    "# and keeps its remaining work in DIR/progress/<jobid> when stopped, as a checkpointing job would; a\n"
    "# restarted run pays OVERHEAD_US first.\n"
    "work=$1 oh=$2 dir=$3\n"
    "id=$SLURM_JOB_ID rc=${SLURM_RESTART_COUNT:-0}\n"
    "t0=${EPOCHREALTIME/[.,]/}\n"
    "echo \"start $id $rc $t0 ${SLURMD_NODENAME:--}\" >> \"$dir/events\"\n"
    "rem=$work\n"
    "[ -s \"$dir/progress/$id\" ] && read -r rem < \"$dir/progress/$id\"\n"
    "[ \"$rc\" -gt 0 ] && rem=$((rem + oh))\n"
    "sp=\n"
    "stop() {\n"
    "  local t=${EPOCHREALTIME/[.,]/}\n"
    "  local r=$((rem - (t - t0)))\n"
    "  [ \"$r\" -lt 0 ] && r=0\n"
    "  echo \"$r\" > \"$dir/progress/$id.tmp\" && mv \"$dir/progress/$id.tmp\" \"$dir/progress/$id\"\n"
    "  echo \"stop $id $rc $t\" >> \"$dir/events\"\n"
    "  [ -n \"$sp\" ] && kill \"$sp\" 2>/dev/null\n"
    "  exit 143\n"
    "}\n"
    "trap stop TERM INT\n"
    "sleep \"$((rem / 1000000)).$(printf '%06d' $((rem % 1000000)))\" & sp=$!\n"
    "wait \"$sp\"\n"
    "echo \"end $id $rc ${EPOCHREALTIME/[.,]/}\" >> \"$dir/events\"\n";

typedef struct opts {
    const char *variant, *out, *json, *label, *partition;
    double compress, restart_overhead, drain;
    int32_t nodes;
    int score_only, allow_busy, quiet;
} opts_t;

/* Cancels every job of the replay (by its unique name). */
static void cancel_all(const char *name)
{
    char arg[160];
    snprintf(arg, sizeof arg, "--name=%s", name);
    char *argv[] = {"scancel", arg, NULL};
    run_cmd(argv, NULL, NULL);
}

/* Active (pending, running, completing) jobs of the replay; -1 when squeue fails. */
static int count_active(const char *name, int *pending, int *running)
{
    char arg[160];
    snprintf(arg, sizeof arg, "--name=%s", name);
    char *argv[] = {"squeue", "-h", arg, "-o", "%T", NULL};
    ds_buf_t out = {0}, err = {0};
    int rc = run_cmd(argv, &out, &err);
    int n = -1;
    *pending = *running = 0;
    if (rc == 0) {
        n = 0;
        for (char *s = out.s, *save = NULL, *tok = s ? strtok_r(s, "\n", &save) : NULL; tok; tok = strtok_r(NULL, "\n", &save)) {
            n++;
            if (!strcmp(tok, "PENDING")) (*pending)++;
            else if (!strcmp(tok, "RUNNING")) (*running)++;
        }
    }
    free(out.s);
    free(err.s);
    return n;
}

/* sacct rows of the replay's jobs into J (by Slurm id); returns how many jobs have a final state. */
static int read_sacct(const opts_t *o, lj_t *J, int32_t n, ds_idmap_t *byid, FILE *raw)
{
    int final = 0;
    for (int32_t a = 0; a < n; a += 200) {
        ds_buf_t ids = {0};
        for (int32_t j = a; j < n && j < a + 200; j++) {
            if (!J[j].slurm_id) continue;
            char x[32];
            int k = snprintf(x, sizeof x, "%s%lld", ids.n ? "," : "", (long long)J[j].slurm_id);
            ds_bput(&ids, x, (size_t)k);
        }
        if (!ids.n) continue;
        char *argv[] = {"sacct", "-n", "-P", "-D", "-X", "-j", ids.s, "-o",
                        "JobIDRaw,State,Submit,Start,End,NodeList,QOS,Partition", NULL};
        ds_buf_t out = {0}, err = {0};
        int rc = run_cmd(argv, &out, &err);
        if (rc) {
            fprintf(stderr, "deepshare replay-live: sacct failed: %s\n", first_line(&err));
        } else if (out.s) {
            if (raw) fputs(out.s, raw);
            for (char *save = NULL, *line = strtok_r(out.s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *f[8];
                int nf = 0;
                for (char *p = line; nf < 8;) {
                    f[nf++] = p;
                    char *bar = strchr(p, '|');
                    if (!bar) break;
                    *bar = '\0';
                    p = bar + 1;
                }
                if (nf < 8) continue;
                int32_t j = ds_idmap_get(byid, strtoll(f[0], NULL, 10));
                if (j < 0) continue;
                lj_t *x = &J[j];
                /* runs come oldest first: the last row is the job's final state */
                snprintf(x->state, sizeof x->state, "%s", f[1]);
                snprintf(x->nodes, sizeof x->nodes, "%s", f[5]);
                snprintf(x->qos, sizeof x->qos, "%s", f[6]);
                snprintf(x->part, sizeof x->part, "%s", f[7]);
                if (!strcmp(f[1], "COMPLETED")) {
                    x->completed = 1;
                    x->sacct_start = parse_sacct_time(f[3]);
                    x->sacct_end = parse_sacct_time(f[4]);
                }
            }
        }
        free(out.s);
        free(err.s);
        free(ids.s);
    }
    (void)o;
    for (int32_t j = 0; j < n; j++) {
        const char *s = J[j].state;
        if (!J[j].slurm_id || !*s) continue;
        if (J[j].completed || !strncmp(s, "CANCELLED", 9) || !strcmp(s, "FAILED") || !strcmp(s, "TIMEOUT") ||
            !strcmp(s, "NODE_FAIL") || !strcmp(s, "OUT_OF_MEMORY") || !strcmp(s, "BOOT_FAIL") || !strcmp(s, "DEADLINE"))
            final++;
    }
    return final;
}

/* The jobs' own log: DIR/run/events. */
static ev_t *read_events(const char *path, int nnodes, int64_t *nev)
{
    FILE *f = fopen(path, "r");
    *nev = 0;
    if (!f) return NULL;
    ev_t *v = NULL;
    int64_t n = 0, cap = 0;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        char kind[16], node[64] = "-";
        long long id, us;
        int rc;
        int k = sscanf(line, "%15s %lld %d %lld %63s", kind, &id, &rc, &us, node);
        if (k < 4) continue;
        ev_t e = {id, rc, -1, (double)us * 1e-6, -1};
        if (!strcmp(kind, "start")) e.kind = 0, e.node = node_index(node, nnodes);
        else if (!strcmp(kind, "stop")) e.kind = 1;
        else if (!strcmp(kind, "end")) e.kind = 2;
        else continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            v = ds_xrealloc(v, (size_t)cap * sizeof *v);
        }
        v[n++] = e;
    }
    fclose(f);
    qsort(v, (size_t)n, sizeof *v, cmp_ev);
    *nev = n;
    return v;
}

static void wsp_add(wspell_t **v, int64_t *n, int64_t *cap, wspell_t s)
{
    if (*n == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        *v = ds_xrealloc(*v, (size_t)*cap * sizeof **v);
    }
    (*v)[(*n)++] = s;
}

/* The runs of every job in wall seconds, from the log, completed by sacct where the log lacks a line
 * (a run killed before it could write). */
static wspell_t *build_runs(const opts_t *o, const ds_trace_t *t, lj_t *J, ev_t *ev, int64_t nev, ds_idmap_t *byid,
                            int64_t *nout)
{
    wspell_t *v = NULL;
    int64_t n = 0, cap = 0;
    int variant_dsd = !strcmp(o->variant, "deepshared"), variant_borrow = !strcmp(o->variant, "slurm-borrow");
    int64_t i = 0;
    uint8_t *seen = ds_xcalloc((size_t)(t->njobs ? t->njobs : 1), 1);
    while (i < nev) {
        int64_t a = i;
        while (i < nev && ev[i].id == ev[a].id) i++;
        int32_t j = ds_idmap_get(byid, ev[a].id);
        if (j < 0) continue;
        seen[j] = 1;
        lj_t *x = &J[j];
        int be = (variant_dsd && !strcmp(x->part, "batch")) || (variant_borrow && !strcmp(x->qos, "borrow"));
        int64_t first = n;
        for (int64_t k = a; k < i;) {
            int64_t r0 = k;
            while (k < i && ev[k].rc == ev[r0].rc) k++;
            /* one run: its first start, its stop or end */
            double s = NAN, e = NAN;
            int node = -1, last = 0;
            for (int64_t q = r0; q < k; q++) {
                if (ev[q].kind == 0 && isnan(s)) s = ev[q].t, node = ev[q].node;
                if (ev[q].kind == 1 && isnan(e)) e = ev[q].t;
                if (ev[q].kind == 2) e = ev[q].t, last = 1;
            }
            if (isnan(s)) continue;
            if (isnan(e)) {
                /* no line at its end: the next run's start, or sacct's end for the final run */
                if (k < i) e = ev[k].t;
                else if (x->completed && !isnan(x->sacct_end)) e = x->sacct_end, last = 1;
                else e = s;
            }
            if (e < s) e = s;
            wsp_add(&v, &n, &cap, (wspell_t){j, s, e, node, last, be});
        }
        /* only the final run can be the completing one, and only for a job Slurm completed */
        for (int64_t q = first; q < n; q++) v[q].last = q == n - 1 && v[q].last && x->completed;
    }
    /* completed jobs the log never saw (their script could not write): sacct's times */
    for (int32_t j = 0; j < t->njobs; j++) {
        lj_t *x = &J[j];
        if (seen[j] || !x->completed || isnan(x->sacct_start) || isnan(x->sacct_end)) continue;
        int be = (variant_dsd && !strcmp(x->part, "batch")) || (variant_borrow && !strcmp(x->qos, "borrow"));
        wsp_add(&v, &n, &cap, (wspell_t){j, x->sacct_start, x->sacct_end, node_index(x->nodes, o->nodes), 1, be});
    }
    free(seen);
    *nout = n;
    return v;
}

/* p-quantile (nearest rank) of v[0..n), sorted in place; NAN when empty. */
static double quant(double *v, int64_t n, double p)
{
    if (n <= 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_dbl);
    int64_t r = (int64_t)ceil(p * (double)n);
    if (r < 1) r = 1;
    return v[r - 1];
}

typedef struct lat {
    int64_t n_lag, n_room;
    double lag_p50, lag_max, room_p50, room_p90, room_max;
} lat_t;

/* Submit lag (sbatch returned - when the trace says), and dispatch latency: submit to first start of the
 * jobs that had room at their submit (their tenant under quota with them, and a node with their GPUs
 * free), which every configuration starts at once but for its own latency. Wall seconds. */
static void latencies(const opts_t *o, const ds_trace_t *t, const lj_t *J, const wspell_t *w, int64_t nw, int32_t gpn,
                      lat_t *L)
{
    memset(L, 0, sizeof *L);
    double *lag = ds_xmalloc((size_t)(t->njobs ? t->njobs : 1) * sizeof *lag);
    double *room = ds_xmalloc((size_t)(t->njobs ? t->njobs : 1) * sizeof *room);
    double *first = ds_xmalloc((size_t)(t->njobs ? t->njobs : 1) * sizeof *first);
    int32_t nn = o->nodes;
    int64_t *node_busy = ds_xcalloc((size_t)nn + 1, sizeof *node_busy);
    int64_t *ten = ds_xcalloc((size_t)t->ntenants, sizeof *ten);
    for (int32_t j = 0; j < t->njobs; j++) first[j] = NAN;
    for (int64_t k = 0; k < nw; k++)
        if (isnan(first[w[k].job]) || w[k].start < first[w[k].job]) first[w[k].job] = w[k].start;
    for (int32_t j = 0; j < t->njobs; j++) {
        if (!J[j].slurm_id) continue;
        lag[L->n_lag++] = J[j].t_submit - J[j].t_target;
        if (isnan(first[j])) continue;
        double at = J[j].t_submit;
        memset(node_busy, 0, ((size_t)nn + 1) * sizeof *node_busy);
        memset(ten, 0, (size_t)t->ntenants * sizeof *ten);
        int64_t busy = 0;
        for (int64_t k = 0; k < nw; k++) {
            if (w[k].start > at || w[k].end <= at || w[k].job == j) continue;
            int32_t g = t->jobs[w[k].job].gpus;
            busy += g;
            ten[t->jobs[w[k].job].tenant] += g;
            node_busy[w[k].node >= 0 ? w[k].node : nn] += g;
        }
        int32_t g = t->jobs[j].gpus, te = t->jobs[j].tenant;
        if (ten[te] + g > t->tenants[te].quota_gpus || busy + g > (int64_t)nn * gpn) continue;
        int fits = node_busy[nn] > 0; /* runs on unknown nodes: trust the total */
        for (int32_t q = 0; q < nn && !fits; q++) fits = node_busy[q] + g <= gpn;
        if (fits) room[L->n_room++] = first[j] - at;
    }
    L->lag_p50 = quant(lag, L->n_lag, 0.5);
    L->lag_max = quant(lag, L->n_lag, 1.0);
    L->room_p50 = quant(room, L->n_room, 0.5);
    L->room_p90 = quant(room, L->n_room, 0.9);
    L->room_max = quant(room, L->n_room, 1.0);
    free(lag);
    free(room);
    free(first);
    free(node_busy);
    free(ten);
}

static int write_outputs(const opts_t *o, const ds_trace_t *t, const ds_sim_config_t *sc, const lat_t *L,
                         double t0, int live)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/observed.csv", o->out);
    ds_observed_t ob;
    ds_error_t err;
    ds_error_clear(&err);
    if (ds_observed_read(&ob, t, path, &err)) {
        ds_die_error(&err);
        return 1;
    }
    char label[64];
    if (o->label) snprintf(label, sizeof label, "%s", o->label);
    else snprintf(label, sizeof label, "live:%s", o->variant ? o->variant : "replay");
    ds_sim_config_t c = *sc;
    c.engine.pool_nodes = o->nodes;
    c.engine.mode = DS_MODE_POOLED;
    ds_sim_result_t res;
    if (ds_fits_run(&ob.trace, &c, 1, &err) || ds_observed_score(&ob, &c, label, &res, &err)) {
        ds_die_error(&err);
        ds_observed_free(&ob);
        return 1;
    }
    int failed = 0;
    if (ob.dropped)
        fprintf(stderr, "deepshare replay-live: %d of %d jobs did not complete and are left out of the score\n",
                ob.dropped, t->njobs);
    ds_report_meta_t meta = {NULL, t->source, NULL};
    if (!o->quiet) {
        printf("replay: %s, %d of %d jobs completed, %lld runs (%lld requeues)\n", t->source, ob.trace.njobs, t->njobs,
               (long long)ob.runs, (long long)ob.requeues);
        const ds_sim_result_t *r1 = &res;
        ds_report_table(stdout, &r1, 1);
        printf("\n%s per tenant:\n", res.policy);
        ds_report_tenant_table(stdout, &res);
        if (live && L)
            printf("\nlatencies (wall seconds): submit lag p50 %.3f max %.3f (%lld jobs); dispatch (submit to start of "
                   "the %lld jobs that had room) p50 %.3f p90 %.3f max %.3f\n",
                   L->lag_p50, L->lag_max, (long long)L->n_lag, (long long)L->n_room, L->room_p50, L->room_p90,
                   L->room_max);
    }
    snprintf(path, sizeof path, "%s/summary.json", o->out);
    FILE *f = fopen(path, "w");
    if (!f || ds_report_json(f, &res, &meta) || fclose(f)) {
        fprintf(stderr, "deepshare replay-live: %s: cannot write: %s\n", path, strerror(errno));
        failed = 1;
    }
    if (o->json) {
        f = strcmp(o->json, "-") ? fopen(o->json, "w") : stdout;
        if (!f || ds_report_json(f, &res, &meta) || (f != stdout && fclose(f))) {
            fprintf(stderr, "deepshare replay-live: %s: cannot write: %s\n", o->json, strerror(errno));
            failed = 1;
        }
    }
    ds_error_clear(&err);
    if (ds_report_write_csv(o->out, &ob.trace, &res, &err)) {
        ds_die_error(&err);
        failed = 1;
    }
    if (live && L) {
        snprintf(path, sizeof path, "%s/live.json", o->out);
        f = fopen(path, "w");
        if (f) {
            fprintf(f,
                    "{\n  \"variant\": \"%s\",\n  \"compress\": %.6g,\n  \"restart_overhead\": %.6g,\n  \"t0\": %.6f,\n"
                    "  \"jobs\": %d,\n  \"completed\": %d,\n  \"runs\": %lld,\n  \"requeues\": %lld,\n"
                    "  \"submit_lag_p50_s\": %.6f,\n  \"submit_lag_max_s\": %.6f,\n  \"dispatch_jobs\": %lld,\n"
                    "  \"dispatch_p50_s\": %.6f,\n  \"dispatch_p90_s\": %.6f,\n  \"dispatch_max_s\": %.6f\n}\n",
                    o->variant, o->compress, o->restart_overhead, t0, t->njobs, ob.trace.njobs, (long long)ob.runs,
                    (long long)ob.requeues, isnan(L->lag_p50) ? 0 : L->lag_p50, isnan(L->lag_max) ? 0 : L->lag_max,
                    (long long)L->n_room, isnan(L->room_p50) ? 0 : L->room_p50, isnan(L->room_p90) ? 0 : L->room_p90,
                    isnan(L->room_max) ? 0 : L->room_max);
            if (fclose(f)) failed = 1;
        } else {
            failed = 1;
        }
    }
    /* more than 5% of the jobs lost is not a run to compare */
    if (ob.dropped * 20 > t->njobs) failed = 1;
    ds_sim_result_free(&res);
    ds_observed_free(&ob);
    return failed;
}

static int64_t to_trace(double w, double t0, double c, int64_t origin)
{
    return origin + (int64_t)llround((w - t0) * c);
}

/* One live replay, as its sections share it. */
typedef struct live {
    const opts_t *o;
    const ds_trace_t *t;
    char name[96];                              /* the jobs' name: dsr-VARIANT-PID, unique per replay */
    char run_dir[1000], events[1100], script[1100];
    lj_t *J;                                    /* per trace job: its Slurm job */
    ds_idmap_t byid;                            /* Slurm id -> trace job */
    int64_t origin;                             /* trace time of the first submit */
    double t0, span_wall, last_note;            /* wall time of the first submit, the span, the last note */
} live_t;

/* Checks that need no cluster: every job fits a node, every tenant can be a Slurm account. 0 or 2. */
static int live_check_workload(const live_t *L, int32_t gpn)
{
    const ds_trace_t *t = L->t;
    for (int32_t j = 0; j < t->njobs; j++) {
        if (t->jobs[j].gpus > gpn) {
            fprintf(stderr,
                    "deepshare replay-live: %s:%ld: job %lld asks %d GPUs, more than a node's %d: the cluster cannot run "
                    "it (deepshared keeps such jobs in staging)\n",
                    t->source, t->jobs[j].line, (long long)t->jobs[j].id, t->jobs[j].gpus, gpn);
            return 2;
        }
    }
    for (int32_t i = 0; i < t->ntenants; i++) {
        for (const char *p = t->tenants[i].name; *p; p++)
            if (!(isalnum((unsigned char)*p) || *p == '_' || *p == '-' || *p == '.')) {
                fprintf(stderr, "deepshare replay-live: tenant '%s' cannot be a Slurm account name\n", t->tenants[i].name);
                return 2;
            }
    }
    return 0;
}

/* The cluster answers, has the tenants' accounts, and is free. 0 or 1. */
static int live_check_cluster(const live_t *L)
{
    const opts_t *o = L->o;
    const ds_trace_t *t = L->t;
    ds_buf_t out = {0}, err = {0};
    char *sq[] = {"squeue", "-h", "-o", "%i %u %T", NULL};
    if (run_cmd(sq, &out, &err)) {
        fprintf(stderr, "deepshare replay-live: Slurm does not answer (squeue: %s); start the cluster: "
                        "deploy/slurm/start.sh --variant %s, and export SLURM_CONF\n", first_line(&err), o->variant);
        free(out.s), free(err.s);
        return 1;
    }
    int busy = 0;
    for (char *p = out.s; p && *p; p++) busy += *p == '\n';
    free(out.s), free(err.s);
    if (busy && !o->allow_busy) {
        fprintf(stderr, "deepshare replay-live: the cluster has %d jobs queued or running; a replay needs it to itself "
                        "(--allow-busy runs anyway)\n", busy);
        return 1;
    }
    struct passwd *pw = getpwuid(geteuid());
    char ucond[128];
    snprintf(ucond, sizeof ucond, "user=%s", pw ? pw->pw_name : "root");
    char *sa[] = {"sacctmgr", "-n", "-P", "show", "assoc", "where", ucond, "format=account", NULL};
    out = (ds_buf_t){0}, err = (ds_buf_t){0};
    if (run_cmd(sa, &out, &err)) {
        fprintf(stderr, "deepshare replay-live: no accounting (sacctmgr: %s): replays read outcomes from sacct; start "
                        "the cluster with a variant: deploy/slurm/start.sh --variant %s\n", first_line(&err), o->variant);
        free(out.s), free(err.s);
        return 1;
    }
    /* the accounts, one per line, each wrapped in newlines for an exact search */
    ds_buf_t accts = {0};
    ds_bput(&accts, "\n", 1);
    if (out.s) ds_bput(&accts, out.s, out.n);
    ds_bput(&accts, "\n", 1);
    for (int32_t i = 0; i < t->ntenants; i++) {
        char acct[80];
        snprintf(acct, sizeof acct, "\n%s\n", t->tenants[i].name);
        for (char *p = acct; *p; p++) *p = (char)tolower((unsigned char)*p);
        if (!strstr(accts.s, acct)) {
            acct[strlen(acct) - 1] = '\0';
            fprintf(stderr, "deepshare replay-live: tenant %s has no Slurm account for user %s (register the tenants: "
                            "deploy/slurm/accounting.sh tenants FILE)\n", acct + 1, pw ? pw->pw_name : "root");
            free(out.s), free(err.s), free(accts.s);
            return 1;
        }
    }
    free(accts.s);
    free(out.s), free(err.s);
    return 0;
}

/* The replay's folder (DIR/run, its progress checkpoints emptied, open to the jobs) and the job script. */
static int live_prepare(live_t *L)
{
    const opts_t *o = L->o;
    char path[1200];
    snprintf(path, sizeof path, "%s/run/progress", o->out);
    if (mkdir_p(path)) {
        fprintf(stderr, "deepshare replay-live: %s: cannot create: %s\n", path, strerror(errno));
        return 1;
    }
    snprintf(path, sizeof path, "%s/run", o->out);
    char *abs = realpath(path, NULL);
    if (!abs || strlen(abs) >= sizeof L->run_dir - 1) {
        fprintf(stderr, "deepshare replay-live: %s: cannot resolve, or its path is too long\n", path);
        free(abs);
        return 1;
    }
    snprintf(L->run_dir, sizeof L->run_dir, "%s", abs);
    free(abs);
    snprintf(L->events, sizeof L->events, "%s/events", L->run_dir);
    unlink(L->events);
    {
        char cmd[1100];
        snprintf(cmd, sizeof cmd, "%s/progress", L->run_dir);
        /* a previous replay's checkpoints must not feed this one (Slurm reuses ids after a clean start) */
        char *rm[] = {"find", cmd, "-mindepth", "1", "-delete", NULL};
        run_cmd(rm, NULL, NULL);
    }
    snprintf(L->script, sizeof L->script, "%s/job.sh", L->run_dir);
    FILE *f = fopen(L->script, "w");
    if (!f || fputs(job_script, f) < 0 || fclose(f) || chmod(L->script, 0755)) {
        fprintf(stderr, "deepshare replay-live: %s: cannot write\n", L->script);
        return 1;
    }
    chmod(L->run_dir, 0777);
    {
        char pd[1100];
        snprintf(pd, sizeof pd, "%s/progress", L->run_dir);
        chmod(pd, 0777);
    }
    snprintf(L->name, sizeof L->name, "dsr-%s-%ld", o->variant, (long)getpid());
    return 0;
}

/* Signals stop the replay: what was submitted is cancelled (live()). */
static void live_catch_signals(void)
{
    struct sigaction sa_int;
    memset(&sa_int, 0, sizeof sa_int);
    sa_int.sa_handler = on_signal;
    sigaction(SIGINT, &sa_int, NULL);
    sigaction(SIGTERM, &sa_int, NULL);
    sigaction(SIGHUP, &sa_int, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* Submits each job at its compressed time (sbatch, three tries), writing DIR/submitted.csv. 0; 1 when
 * Slurm refused a job; -1 when nothing was submitted (the file cannot be written). */
static int live_submit(live_t *L)
{
    const opts_t *o = L->o;
    const ds_trace_t *t = L->t;
    char path[1200];
    int is_dsd = !strcmp(o->variant, "deepshared");
    snprintf(path, sizeof path, "%s/submitted.csv", o->out);
    FILE *subf = fopen(path, "w");
    if (!subf) {
        fprintf(stderr, "deepshare replay-live: %s: cannot write: %s\n", path, strerror(errno));
        return -1;
    }
    fprintf(subf, "job_id,slurm_id,tenant,gpus,target_wall,submit_wall\n");
    if (!o->quiet)
        fprintf(stderr, "replay-live: %d jobs over %.0f s of wall time (x%g), variant %s, jobs named %s\n", t->njobs,
                L->span_wall, o->compress, o->variant, L->name);
    int rc = 0;
    lj_t *J = L->J;
    for (int32_t j = 0; j < t->njobs && !g_stop; j++) {
        const ds_job_t *jb = &t->jobs[j];
        J[j].t_target = L->t0 + (double)(jb->submit - L->origin) / o->compress;
        sleep_until(J[j].t_target);
        if (g_stop) break;
        double work = (double)jb->duration / o->compress, oh = o->restart_overhead / o->compress;
        /* the trace's own time limit where it carries one, else twice the run time and overhead */
        long limit_min = jb->limit > 0 ? (long)ceil((double)jb->limit / o->compress / 60.0)
                                       : (long)ceil(2.0 * (work + oh) / 60.0);
        if (limit_min < 1) limit_min = 1;
        char acct[80], a_acct[100], a_gpu[64], a_time[32], a_name[128], a_work[32], a_oh[32], a_part[100], a_dir[1200];
        snprintf(acct, sizeof acct, "%s", t->tenants[jb->tenant].name);
        for (char *p = acct; *p; p++) *p = (char)tolower((unsigned char)*p);
        snprintf(a_acct, sizeof a_acct, "--account=%s", acct);
        snprintf(a_time, sizeof a_time, "--time=%ld", limit_min);
        snprintf(a_name, sizeof a_name, "--job-name=%s", L->name);
        snprintf(a_work, sizeof a_work, "%lld", (long long)llround(work * 1e6));
        snprintf(a_oh, sizeof a_oh, "%lld", (long long)llround(oh * 1e6));
        snprintf(a_dir, sizeof a_dir, "--chdir=%s", L->run_dir);
        char *argv[24];
        int k = 0;
        argv[k++] = "sbatch";
        argv[k++] = "--parsable";
        argv[k++] = a_name;
        argv[k++] = a_acct;
        argv[k++] = "--cpus-per-task=1";
        argv[k++] = a_time;
        argv[k++] = "--output=/dev/null";
        argv[k++] = a_dir;
        if (is_dsd) {
            snprintf(a_gpu, sizeof a_gpu, "--comment=gpus=%d", jb->gpus);
            argv[k++] = "--partition=staging";
        } else {
            snprintf(a_gpu, sizeof a_gpu, "--gres=gpu:%d", jb->gpus);
            if (o->partition) {
                snprintf(a_part, sizeof a_part, "--partition=%s", o->partition);
                argv[k++] = a_part;
            }
        }
        argv[k++] = a_gpu;
        argv[k++] = L->script;
        argv[k++] = a_work;
        argv[k++] = a_oh;
        argv[k++] = L->run_dir;
        argv[k] = NULL;
        int ok = 0;
        for (int attempt = 0; attempt < 3 && !ok && !g_stop; attempt++) {
            ds_buf_t so = {0}, se = {0};
            int r = run_cmd(argv, &so, &se);
            long long id = so.s ? strtoll(so.s, NULL, 10) : 0;
            if (r == 0 && id > 0) {
                J[j].slurm_id = id;
                J[j].t_submit = now_wall();
                ds_idmap_put(&L->byid, id, j);
                ok = 1;
            } else if (attempt == 2) {
                fprintf(stderr, "deepshare replay-live: sbatch refused job %lld (tenant %s, %d GPUs): %s\n",
                        (long long)jb->id, acct, jb->gpus, first_line(&se));
            } else {
                struct timespec ts = {0, 500000000};
                nanosleep(&ts, NULL);
            }
            free(so.s), free(se.s);
        }
        if (!ok) {
            rc = 1;
            break;
        }
        fprintf(subf, "%lld,%lld,%s,%d,%.6f,%.6f\n", (long long)jb->id, (long long)J[j].slurm_id, acct, jb->gpus,
                J[j].t_target, J[j].t_submit);
        fflush(subf);
        if (!o->quiet && now_wall() - L->last_note >= 30) {
            int pd, rn;
            count_active(L->name, &pd, &rn);
            fprintf(stderr, "replay-live: %.0f s: %d of %d submitted, %d pending, %d running\n", now_wall() - L->t0,
                    j + 1, t->njobs, pd, rn);
            L->last_note = now_wall();
        }
    }
    fclose(subf);
    return rc;
}

/* Waits until no job of the replay is queued or running, at most --drain seconds. 0 or 1. */
static int live_drain(live_t *L)
{
    const opts_t *o = L->o;
    double limit = o->drain > 0 ? o->drain : 3 * L->span_wall + 600;
    double drain_from = now_wall();
    while (!g_stop) {
        int pd, rn;
        int n = count_active(L->name, &pd, &rn);
        if (n == 0) break;
        if (now_wall() - drain_from > limit) {
            fprintf(stderr, "deepshare replay-live: %d jobs still queued or running %.0f s after the last submit: "
                            "cancelling them\n", n, limit);
            return 1;
        }
        if (!o->quiet && now_wall() - L->last_note >= 30) {
            fprintf(stderr, "replay-live: %.0f s: all submitted, %d pending, %d running\n", now_wall() - L->t0, pd, rn);
            L->last_note = now_wall();
        }
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
    return 0;
}

/* What happened: sacct (slurmdbd takes a moment to hear of the last ends) and the jobs' log, as
 * DIR/live.csv (wall seconds) and DIR/observed.csv (trace seconds), then scored (write_outputs). */
static int live_outcome(live_t *L, const ds_sim_config_t *sc, int rc)
{
    const opts_t *o = L->o;
    const ds_trace_t *t = L->t;
    lj_t *J = L->J;
    char path[1200];
    int32_t submitted = 0;
    for (int32_t j = 0; j < t->njobs; j++) submitted += J[j].slurm_id != 0;
    snprintf(path, sizeof path, "%s/sacct.txt", o->out);
    for (int tries = 0; tries < 30 && !g_stop; tries++) {
        FILE *raw = fopen(path, "w");
        int final = read_sacct(o, J, t->njobs, &L->byid, raw);
        if (raw) fclose(raw);
        if (final >= submitted) break;
        struct timespec ts = {1, 0};
        nanosleep(&ts, NULL);
    }
    int64_t nev = 0, nw = 0;
    ev_t *ev = read_events(L->events, o->nodes, &nev);
    wspell_t *w = build_runs(o, t, J, ev, nev, &L->byid, &nw);
    snprintf(path, sizeof path, "%s/live.csv", o->out);
    FILE *lf = fopen(path, "w");
    snprintf(path, sizeof path, "%s/observed.csv", o->out);
    FILE *of = fopen(path, "w");
    if (!lf || !of) {
        fprintf(stderr, "deepshare replay-live: %s: cannot write\n", o->out);
        if (lf) fclose(lf);
        if (of) fclose(of);
        free(ev), free(w);
        return 1;
    }
    fprintf(lf, "job_id,slurm_id,state,submit,start,end,node,class,last\n");
    fprintf(of, "job_id,submit,start,end,node,class,last,slurm_id\n");
    for (int64_t k = 0; k < nw; k++) {
        const wspell_t *x = &w[k];
        const lj_t *y = &J[x->job];
        int64_t id = t->jobs[x->job].id;
        int64_t sub = to_trace(y->t_submit, L->t0, o->compress, L->origin);
        int64_t s = to_trace(x->start, L->t0, o->compress, L->origin), e = to_trace(x->end, L->t0, o->compress, L->origin);
        if (s < sub) s = sub;
        if (e < s) e = s;
        fprintf(lf, "%lld,%lld,%s,%.6f,%.6f,%.6f,%d,%s,%d\n", (long long)id, (long long)y->slurm_id, y->state,
                y->t_submit, x->start, x->end, x->node, x->be ? "BE" : "G", x->last);
        fprintf(of, "%lld,%lld,%lld,%lld,%d,%s,%d,%lld\n", (long long)id, (long long)sub, (long long)s, (long long)e,
                x->node, x->be ? "BE" : "G", x->last, (long long)y->slurm_id);
    }
    int werr = fclose(lf) | fclose(of);
    int notdone = 0;
    for (int32_t j = 0; j < t->njobs; j++)
        if (J[j].slurm_id && !J[j].completed) {
            if (notdone < 5)
                fprintf(stderr, "deepshare replay-live: job %lld (Slurm %lld) did not complete: %s\n",
                        (long long)t->jobs[j].id, (long long)J[j].slurm_id, J[j].state[0] ? J[j].state : "no sacct record");
            notdone++;
        }
    lat_t lat;
    latencies(o, t, J, w, nw, sc->engine.gpus_per_node, &lat);
    free(ev);
    free(w);
    if (werr) return 1;
    int r = write_outputs(o, t, sc, &lat, L->t0, 1);
    return rc || r ? 1 : 0;
}

/* The replay, section by section: checks, the folder, submit, drain (cancelling what is left on a signal
 * or a failure), the outcome. */
static int live(const opts_t *o, const ds_trace_t *t, const ds_sim_config_t *sc)
{
    live_t L = {.o = o, .t = t};
    int rc = live_check_workload(&L, sc->engine.gpus_per_node);
    if (!rc) rc = live_check_cluster(&L);
    if (!rc) rc = live_prepare(&L);
    if (rc) return rc;
    live_catch_signals();
    L.J = ds_xcalloc((size_t)(t->njobs ? t->njobs : 1), sizeof *L.J);
    ds_idmap_init(&L.byid);
    L.origin = t->jobs[0].submit;
    L.t0 = now_wall() + 2.0;
    L.span_wall = (double)(t->jobs[t->njobs - 1].submit - L.origin) / o->compress;
    L.last_note = now_wall();
    rc = live_submit(&L);
    if (rc < 0) {
        free(L.J);
        ds_idmap_free(&L.byid);
        return 1;
    }
    if (!rc && !g_stop) rc = live_drain(&L);
    if (g_stop || rc) {
        cancel_all(L.name);
        if (g_stop) {
            fprintf(stderr, "deepshare replay-live: interrupted: the replay's jobs (%s) are cancelled\n", L.name);
            rc = 130;
        }
    }
    if (rc != 130) rc = live_outcome(&L, sc, rc);
    free(L.J);
    ds_idmap_free(&L.byid);
    return rc;
}

int ds_cmd_replay_live(int argc, char **argv)
{
    ds_workload_opts_t wo;
    ds_workload_opts_default(&wo);
    ds_sim_config_t sc;
    ds_sim_config_default(&sc);
    sc.engine.gpus_per_node = 4;
    opts_t o = {0};
    o.compress = 60;
    o.restart_overhead = 40;
    o.nodes = 4;
    for (int i = 1; i < argc; i++) {
        char name[128];
        const char *val;
        int k = ds_cli_split("replay-live", argv[i], name, sizeof name, &val);
        if (k == 0) {
            help(stdout);
            return 0;
        }
        if (k < 0) return 2;
        if (!strcmp(name, "score")) { o.score_only = 1; continue; }
        if (!strcmp(name, "allow-busy")) { o.allow_busy = 1; continue; }
        if (!strcmp(name, "quiet")) { o.quiet = 1; continue; }
        if (ds_cli_value("replay-live", argc, argv, &i, name, &val)) return 2;
        int64_t v;
        if (!strcmp(name, "variant")) {
            if (strcmp(val, "slurm-quota") && strcmp(val, "slurm-borrow") && strcmp(val, "deepshared")) {
                fprintf(stderr, "deepshare replay-live: option --variant: '%s' is not slurm-quota, slurm-borrow or "
                                "deepshared\n", val);
                return 2;
            }
            o.variant = val;
        } else if (!strcmp(name, "compress")) {
            if (ds_parse_f64("--compress", val, 0.001, 1e6, &o.compress)) return 2;
        } else if (!strcmp(name, "restart-overhead")) {
            if (ds_parse_f64("--restart-overhead", val, 0, 86400, &o.restart_overhead)) return 2;
        } else if (!strcmp(name, "drain")) {
            if (ds_parse_f64("--drain", val, 1, 30 * 86400, &o.drain)) return 2;
        } else if (!strcmp(name, "nodes") || !strcmp(name, "pool-nodes")) {
            if (ds_parse_i64("--nodes", val, 1, 100000, &v)) return 2;
            o.nodes = (int32_t)v;
        } else if (!strcmp(name, "out")) o.out = val;
        else if (!strcmp(name, "json")) o.json = val;
        else if (!strcmp(name, "label")) o.label = val;
        else if (!strcmp(name, "partition")) o.partition = val;
        else if (!strcmp(name, "mode") || !strcmp(name, "k")) {
            fprintf(stderr, "deepshare replay-live: option --%s does not apply (a live run is scored pooled, one job per "
                            "GPU)\n", name);
            return 2;
        } else {
            int w = ds_workload_opt(&wo, name, val);
            if (w == 0) w = ds_run_opt(&sc, "replay-live", name, val);
            if (w < 0) return 2;
            if (w == 0) {
                fprintf(stderr, "deepshare replay-live: unknown option --%s (see --help)\n", name);
                return 2;
            }
        }
    }
    if (!o.out) {
        fprintf(stderr, "deepshare replay-live: --out DIR is required (see --help)\n");
        return 2;
    }
    if (!o.score_only && !o.variant) {
        fprintf(stderr, "deepshare replay-live: --variant is required to run (slurm-quota, slurm-borrow or deepshared); "
                        "--score rescores a finished replay\n");
        return 2;
    }
    sc.engine.k = 1;
    sc.engine.enforce_cpu = 0;
    ds_trace_t trace;
    ds_coloc_t coloc;
    int have_coloc = 0;
    if (ds_workload_open(&wo, &trace, &coloc, &have_coloc)) {
        return 1;
    }
    if (have_coloc) ds_coloc_free(&coloc);
    if (trace.njobs == 0) {
        fprintf(stderr, "deepshare replay-live: the trace has no jobs\n");
        ds_trace_free(&trace);
        return 1;
    }
    if (ds_trace_total_quota(&trace) > (int64_t)o.nodes * sc.engine.gpus_per_node)
        fprintf(stderr, "deepshare replay-live: warning: the tenants' quotas add up to %lld GPUs, more than the "
                        "cluster's %d\n", (long long)ds_trace_total_quota(&trace), o.nodes * sc.engine.gpus_per_node);
    int rc;
    if (o.score_only) {
        if (mkdir_p(o.out)) {
            fprintf(stderr, "deepshare replay-live: %s: cannot create: %s\n", o.out, strerror(errno));
            rc = 1;
        } else {
            rc = write_outputs(&o, &trace, &sc, NULL, 0, 0);
        }
    } else {
        if (mkdir_p(o.out)) {
            fprintf(stderr, "deepshare replay-live: %s: cannot create: %s\n", o.out, strerror(errno));
            rc = 1;
        } else {
            rc = live(&o, &trace, &sc);
        }
    }
    ds_trace_free(&trace);
    return rc;
}
