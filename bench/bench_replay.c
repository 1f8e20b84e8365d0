/* bench_replay.c: wall time and peak memory of replaying a workload under each policy, each run in a
 * child process so that its peak resident set is its own. Prints one row per policy, and one more
 * for DeepShare with the learned online runtime model (the others run on the traces' estimates). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "deepshare/policy_config.h"
#include "deepshare/coloc.h"
#include "deepshare/models.h"
#include "deepshare/policy.h"
#include "deepshare/sim.h"
#include "deepshare/synth.h"

typedef struct job_spec {
    const char *policy;
    const char *estimates;  /* file, or NULL */
    const char *label;
    int model;              /* 1: the learned online runtime model (measured retention), else none */
} job_spec_t;

typedef struct opts {
    const char *data;       /* Venus data directory (venus mode) */
    ds_synth_config_t synth;
    int venus;
    const char *only;       /* comma-separated policies, NULL: all */
    ds_mode_t mode;         /* partitioned (default) or pooled */
} opts_t;

typedef struct child_out {
    int ok;
    double load_s, sim_s;
    int64_t jobs, gpus, preemptions;
    double avg_jct, avg_queue;
    char msg[256];
} child_out_t;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int load(const opts_t *o, const char *estimates, ds_trace_t *t, ds_coloc_t *coloc, int *have_coloc,
                ds_error_t *err)
{
    ds_trace_init(t);
    *have_coloc = 0;
    if (!o->venus) return ds_synth_generate(t, &o->synth, err);
    char p[1024];
    int rc;
    snprintf(p, sizeof p, "%s/venus/vc_config.csv", o->data);
    if ((rc = ds_trace_read_tenants(t, p, 8, err))) return rc;
    snprintf(p, sizeof p, "%s/venus/venus_sept_jobs.csv", o->data);
    if ((rc = ds_trace_read_jobs(t, p, err))) return rc;
    if (estimates) {
        snprintf(p, sizeof p, "%s/estimates/%s", o->data, estimates);
        if ((rc = ds_trace_read_estimates(t, p, 1000.0, NULL, err))) return rc;
    }
    snprintf(p, sizeof p, "%s/colocation/colocate_info.csv", o->data);
    if (access(p, R_OK) == 0) {
        if ((rc = ds_coloc_read(coloc, p, err))) return rc;
        ds_coloc_bind(coloc, t);
        *have_coloc = 1;
    }
    return DS_OK;
}

/* The child: load, replay, report through the pipe. */
static void child(const opts_t *o, const job_spec_t *js, int fd)
{
    child_out_t r;
    memset(&r, 0, sizeof r);
    ds_trace_t t;
    ds_coloc_t coloc;
    int have_coloc;
    ds_error_t err;
    ds_error_clear(&err);
    double t0 = now_s();
    int rc = load(o, js->estimates, &t, &coloc, &have_coloc, &err);
    double t1 = now_s();
    if (rc == DS_OK) {
        ds_sim_config_t c;
        ds_sim_config_default(&c);
        c.policy = ds_policy_find(js->policy);
        c.engine.mode = o->mode;
        c.coloc = have_coloc ? &coloc : NULL;
        void *pc = c.policy->config_new ? c.policy->config_new() : NULL;
        c.policy_config = pc;
        /* Venus inputs some policies take as parameters (a policy that does not know a name ignores it) */
        static const char *const venus_params[][2] = {{"lucid-single", "colocation/single_data.csv"},
                                                      {"lucid-throughput", "venus/Venus_throughput_pred.csv"}};
        for (size_t k = 0; o->venus && pc && k < sizeof venus_params / sizeof *venus_params; k++) {
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", o->data, venus_params[k][1]);
            ds_error_t e2;
            ds_error_clear(&e2);
            int r2 = access(p, R_OK) == 0 ? ds_policy_config_set(c.policy, pc, venus_params[k][0], p, &e2) : DS_ENOTFOUND;
            if (r2 != DS_OK && r2 != DS_ENOTFOUND && rc == DS_OK) {
                err = e2;
                rc = r2;
            }
        }
        if (o->venus) c.window_start = 13219200, c.window_end = 15465600;
        ds_runtime_model_config_t mc;
        ds_runtime_model_config_default(&mc);
        ds_runtime_model_t *rm = js->model ? ds_runtime_model_create(&t, &mc) : NULL;
        ds_runtime_predictor_t rp;
        ds_interference_predictor_t ip;
        ds_predictors_t set = {&rp, &ip, NULL};
        if (rm) {
            ds_runtime_model_as_predictor(rm, &rp);
            rp.remaining = NULL; /* DeepShare's default, as in simulate */
            ds_interference_oracle(&ip, have_coloc ? &coloc : NULL);
            c.engine.predictors = &set;
        }
        ds_sim_result_t res;
        if (rc == DS_OK) rc = ds_sim_run(&t, &c, &res, &err);
        double t2 = now_s();
        if (rc == DS_OK) {
            r.ok = 1;
            r.load_s = t1 - t0;
            r.sim_s = t2 - t1;
            r.jobs = res.jobs;
            r.gpus = res.total_gpus;
            r.preemptions = res.preemptions;
            r.avg_jct = res.jct.avg;
            r.avg_queue = res.queue.avg;
            ds_sim_result_free(&res);
        }
        if (pc && c.policy->config_free) c.policy->config_free(pc);
        ds_runtime_model_destroy(rm);
    }
    if (!r.ok) ds_error_format(&err, r.msg, sizeof r.msg);
    ssize_t w = write(fd, &r, sizeof r);
    _exit(w == (ssize_t)sizeof r ? 0 : 1);
}

static int selected(const opts_t *o, const char *name)
{
    if (!o->only) return 1;
    size_t n = strlen(name);
    for (const char *p = o->only; (p = strstr(p, name)) != NULL; p += n)
        if ((p == o->only || p[-1] == ',') && (p[n] == ',' || p[n] == '\0')) return 1;
    return 0;
}

static void run_one(const opts_t *o, const job_spec_t *js)
{
    int fds[2];
    if (pipe(fds)) { perror("pipe"); exit(1); }
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) { perror("fork"); exit(1); }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a killed benchmark leaves no replay running */
        close(fds[0]);
        child(o, js, fds[1]);
    }
    close(fds[1]);
    child_out_t r;
    memset(&r, 0, sizeof r);
    ssize_t got = read(fds[0], &r, sizeof r);
    close(fds[0]);
    int st;
    struct rusage ru;
    wait4(pid, &st, 0, &ru);
    if (got != (ssize_t)sizeof r || !WIFEXITED(st)) {
        printf("%-24s  child failed\n", js->label);
        return;
    }
    if (!r.ok) {
        printf("%-24s  skipped: %s\n", js->label, r.msg);
        return;
    }
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
                 (double)ru.ru_stime.tv_usec * 1e-6;
    printf("%-24s %8lld %6lld %9.3f %9.3f %9.3f %9.1f %11.0f %10.0f %8lld\n", js->label, (long long)r.jobs,
           (long long)r.gpus, r.load_s, r.sim_s, cpu, (double)ru.ru_maxrss / 1024.0, r.avg_jct, r.avg_queue,
           (long long)r.preemptions);
}

static void usage(void)
{
    fprintf(stderr,
            "usage: bench_replay venus DATA_DIR [--policy LIST] [--mode partitioned|pooled]\n"
            "       bench_replay synth [--jobs N] [--nodes N] [--tenants N] [--load X] [--seed N] [--policy LIST]\n"
            "                          [--mode partitioned|pooled]\n"
            "Replays the workload once per policy, each in its own process; prints load and simulation wall\n"
            "seconds, the process's CPU seconds (load + replay) and its peak resident memory (ru_maxrss).\n");
}

int main(int argc, char **argv)
{
    opts_t o;
    memset(&o, 0, sizeof o);
    ds_synth_config_default(&o.synth);
    if (argc < 2) { usage(); return 2; }
    int i = 2;
    if (!strcmp(argv[1], "venus")) {
        if (argc < 3) { usage(); return 2; }
        o.venus = 1;
        o.data = argv[2];
        i = 3;
    } else if (strcmp(argv[1], "synth")) {
        usage();
        return 2;
    }
    for (; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) { usage(); return 2; }
        if (!strcmp(a, "--policy")) o.only = v;
        else if (!strcmp(a, "--jobs")) o.synth.jobs = atoll(v);
        else if (!strcmp(a, "--nodes")) o.synth.nodes = atoi(v);
        else if (!strcmp(a, "--tenants")) o.synth.tenants = atoi(v);
        else if (!strcmp(a, "--load")) o.synth.load = atof(v);
        else if (!strcmp(a, "--seed")) o.synth.seed = (uint64_t)atoll(v);
        else if (!strcmp(a, "--mode") && (!strcmp(v, "pooled") || !strcmp(v, "partitioned")))
            o.mode = !strcmp(v, "pooled") ? DS_MODE_POOLED : DS_MODE_PARTITIONED;
        else { usage(); return 2; }
        i++;
    }
    if (o.venus) {
        char p[1024];
        snprintf(p, sizeof p, "%s/venus/venus_sept_jobs.csv", o.data);
        if (access(p, R_OK) != 0) {
            printf("Venus data not found under %s: skipping the Venus replay\n", o.data);
            return 0;
        }
        printf("Venus September trace, %s, from %s\n", o.mode == DS_MODE_POOLED ? "pooled" : "partitioned", o.data);
    } else {
        printf("synthetic: %lld jobs, %d tenants, %d nodes (%d GPUs), load %.2f, seed %llu, %s\n",
               (long long)o.synth.jobs, o.synth.tenants, o.synth.nodes, o.synth.nodes * o.synth.gpus_per_node,
               o.synth.load, (unsigned long long)o.synth.seed, o.mode == DS_MODE_POOLED ? "pooled" : "partitioned");
    }
    printf("%-24s %8s %6s %9s %9s %9s %9s %11s %10s %8s\n", "policy", "jobs", "gpus", "load_s", "sim_s", "cpu_s",
           "peak_MB", "avg_jct", "avg_queue", "preempt");
    for (const ds_policy_ops_t *const *p = ds_policy_list(); *p; p++) {
        const char *name = (*p)->name;
        if (!selected(&o, name)) continue;
        char label[64];
        if (o.venus && !strcmp(name, "qssf")) {
            /* QSSF once with each shipped estimate file */
            job_spec_t a = {name, "Venus_Sept_lgb.csv", "qssf (lgb)", 0};
            job_spec_t b = {name, "Venus_Sept_ebm_weekly_updated.csv", "qssf (ebm)", 0};
            run_one(&o, &a);
            run_one(&o, &b);
            continue;
        }
        snprintf(label, sizeof label, "%s", name);
        /* Other policies get Lucid's default estimate file (the ones that do not predict ignore it). */
        job_spec_t s = {name, o.venus ? "Venus_Sept_ebm_weekly_updated.csv" : NULL, label, 0};
        run_one(&o, &s);
        if ((*p)->props & DS_POLICY_USES_PREDICTORS) {
            /* again with the learned runtime model (simulate's default predictor, less the forest) */
            char ml[64];
            snprintf(ml, sizeof ml, "%s (model)", name);
            job_spec_t m = {name, NULL, ml, 1};
            run_one(&o, &m);
        }
    }
    return 0;
}
