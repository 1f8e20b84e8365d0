/* bench_sched.c: the cost of DeepShare's scheduling passes: each pass of a replay is timed (the
 * policy's schedule call only, cycle work included) and divided by the jobs it started. Prints the
 * distribution per pass and per placed job for Venus (1,080 GPUs, when the data is present) and for
 * a synthetic cluster of 10,000 GPUs overloaded until about 10,000 jobs wait.
 * Usage: bench_sched [DATA_DIR] [--jobs N] [--load X] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "deepshare/coloc.h"
#include "deepshare/policy.h"
#include "deepshare/predictor.h"
#include "deepshare/sim.h"
#include "deepshare/synth.h"

typedef struct pass {
    double us;
    int32_t placed, pending;
} pass_t;

static const ds_policy_ops_t *real;
static pass_t *passes;
static int64_t npass, cappass;

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static void timed_schedule(ds_engine_t *e, void *state, int32_t part, int64_t now, int timer)
{
    int32_t d0, nd, pending = e->parts[part].npending;
    ds_engine_decisions(e, &d0);
    double t0 = now_us();
    real->schedule(e, state, part, now, timer);
    double us = now_us() - t0;
    int32_t placed = 0;
    const ds_decision_t *dec = ds_engine_decisions(e, &nd);
    for (int32_t i = d0; i < nd; i++) placed += dec[i].type == DS_DEC_START;
    if (npass == cappass) {
        cappass = cappass ? cappass * 2 : 65536;
        passes = realloc(passes, (size_t)cappass * sizeof *passes);
        if (!passes) abort();
    }
    passes[npass++] = (pass_t){us, placed, pending};
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double pct(const double *v, int64_t n, double q)
{
    if (n == 0) return 0;
    int64_t r = (int64_t)ceil(q * (double)n);
    return v[(r < 1 ? 1 : r) - 1];
}

static void report(const char *label, int64_t gpus, double wall_s, int min_pending)
{
    double *all = malloc((size_t)(npass ? npass : 1) * sizeof *all), *per = malloc((size_t)(npass ? npass : 1) * sizeof *per);
    int64_t na = 0, np = 0, placed = 0, maxpend = 0;
    double total = 0;
    for (int64_t i = 0; i < npass; i++) {
        if (passes[i].pending < min_pending) continue;
        all[na++] = passes[i].us;
        total += passes[i].us;
        if (passes[i].placed > 0) per[np++] = passes[i].us / passes[i].placed;
        placed += passes[i].placed;
        if (passes[i].pending > maxpend) maxpend = passes[i].pending;
    }
    qsort(all, (size_t)na, sizeof *all, cmp_d);
    qsort(per, (size_t)np, sizeof *per, cmp_d);
    printf("%s: %lld GPUs, replay %.2f s, %lld passes with >= %d pending (max pending %lld), %lld jobs placed\n",
           label, (long long)gpus, wall_s, (long long)na, min_pending, (long long)maxpend, (long long)placed);
    printf("  per pass (us):        mean %.1f  p50 %.1f  p99 %.1f  max %.1f\n", na ? total / (double)na : 0,
           pct(all, na, 0.5), pct(all, na, 0.99), na ? all[na - 1] : 0);
    printf("  per placed job (us):  mean %.1f  p50 %.1f  p99 %.1f  max %.1f  (passes that placed: %lld)\n",
           placed ? total / (double)placed : 0, pct(per, np, 0.5), pct(per, np, 0.99), np ? per[np - 1] : 0,
           (long long)np);
    free(all);
    free(per);
}

static int run(const char *label, const ds_trace_t *t, const ds_coloc_t *coloc, const int *min_pending, int nmin)
{
    static ds_policy_ops_t wrapped;
    real = ds_policy_find("deepshare");
    if (!real) return 1;
    wrapped = *real;
    wrapped.schedule = timed_schedule;
    ds_interference_predictor_t ip;
    ds_interference_oracle(&ip, coloc);
    ds_predictors_t pr = {NULL, &ip, NULL};
    ds_sim_config_t c;
    ds_sim_config_default(&c);
    c.engine.mode = DS_MODE_POOLED;
    c.engine.predictors = &pr;
    c.coloc = coloc;
    c.policy = &wrapped;
    c.keep_series = 0;
    ds_sim_result_t r;
    ds_error_t err;
    ds_error_clear(&err);
    npass = 0;
    double t0 = now_us();
    if (ds_sim_run(t, &c, &r, &err)) {
        fprintf(stderr, "bench_sched: %s: %s\n", label, err.msg);
        return 1;
    }
    double wall = (now_us() - t0) * 1e-6;
    for (int k = 0; k < nmin; k++) report(label, r.total_gpus, wall, min_pending[k]);
    printf("  result: avg JCT %.0f s, avg queue %.0f s, %lld preemptions, %lld colocated jobs\n\n", r.jct.avg,
           r.queue.avg, (long long)r.preemptions, (long long)r.colocated_jobs);
    ds_sim_result_free(&r);
    return 0;
}

int main(int argc, char **argv)
{
    const char *data = "../shared/data";
    int64_t jobs = 60000;
    double load = 2.0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--jobs") && i + 1 < argc) jobs = atoll(argv[++i]);
        else if (!strcmp(argv[i], "--load") && i + 1 < argc) load = atof(argv[++i]);
        else data = argv[i];
    }
    int rc = 0;
    char p[1024], q[1024];
    snprintf(p, sizeof p, "%s/venus/venus_sept_jobs.csv", data);
    if (access(p, R_OK) == 0) {
        ds_trace_t t;
        ds_trace_init(&t);
        ds_error_t err;
        ds_coloc_t coloc;
        snprintf(q, sizeof q, "%s/venus/vc_config.csv", data);
        int ok = ds_trace_read_tenants(&t, q, 8, &err) == DS_OK && ds_trace_read_jobs(&t, p, &err) == DS_OK;
        snprintf(q, sizeof q, "%s/colocation/colocate_info.csv", data);
        int have = ok && ds_coloc_read(&coloc, q, &err) == DS_OK;
        if (have) ds_coloc_bind(&coloc, &t);
        int mins[] = {0};
        if (ok) rc |= run("venus (pooled, oracle predictors)", &t, have ? &coloc : NULL, mins, 1);
        else fprintf(stderr, "bench_sched: %s\n", err.msg);
        if (have) ds_coloc_free(&coloc);
        ds_trace_free(&t);
    } else {
        printf("venus: %s is absent, skipped\n\n", p);
    }
    ds_synth_config_t sc;
    ds_synth_config_default(&sc);
    sc.jobs = jobs;
    sc.nodes = 1250;
    sc.tenants = 50;
    sc.load = load;
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    if (ds_synth_generate(&t, &sc, &err)) {
        fprintf(stderr, "bench_sched: synthetic: %s\n", err.msg);
        return 1;
    }
    char label[128];
    snprintf(label, sizeof label, "synthetic (%lld jobs, load %.1f, 1250 nodes)", (long long)jobs, load);
    int mins[] = {0, 10000};
    rc |= run(label, &t, NULL, mins, 2);
    ds_trace_free(&t);
    free(passes);
    return rc;
}
