/* synth.c: the built-in synthetic workload: tenants with quotas, users with habits, diurnal and bursty
 * arrivals, heavy-tailed durations shaped after the paper's cluster study (62% of jobs are short and
 * use ~11% of GPU-hours; jobs over 4 h use ~73%), and several workload types. Deterministic per seed. */
#include "deepshare/synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ds_synth_config_default(ds_synth_config_t *c)
{
    c->seed = 1;
    c->jobs = 4000;
    c->tenants = 6;
    c->nodes = 24;
    c->gpus_per_node = 8;
    c->days = 3.0;
    c->load = 1.0;
    c->be_share = 0.0;
}

typedef struct rng { uint64_t s; } rng_t;

static uint64_t next(rng_t *r) /* splitmix64 */
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}
static double unif(rng_t *r) { return ((double)(next(r) >> 11) + 0.5) / 9007199254740992.0; }
static double normal(rng_t *r) { return sqrt(-2 * log(unif(r))) * cos(6.283185307179586 * unif(r)); }
static double lognormal(rng_t *r, double median, double sigma) { return median * exp(sigma * normal(r)); }
static double expo(rng_t *r, double mean) { return -mean * log(unif(r)); }

/* Workload types: invented descriptors (not measured data), spanning light to heavy GPU use. */
static const struct wtype {
    const char *model, *dataset;
    int batch, amp;
    float gpu_util, gmem_util;
    int gmem;
} types[] = {
    {"synth-cnn-small", "synth-images", 64, 1, 45, 20, 3500},  {"synth-cnn-large", "synth-images", 128, 0, 92, 70, 17000},
    {"synth-transformer", "synth-text", 32, 1, 88, 65, 15000}, {"synth-rl", "synth-env", 64, 0, 18, 6, 1500},
    {"synth-recsys", "synth-clicks", 128, 0, 12, 8, 2200},     {"synth-gan", "synth-images", 64, 0, 70, 30, 6000},
    {"synth-lstm", "synth-text", 64, 0, 55, 25, 4000},
};
#define NTYPES ((int)(sizeof types / sizeof types[0]))

typedef struct user {
    int32_t tenant, type, gpus;
    double short_med, long_med; /* habitual durations */
    double p_long;
} user_t;

static int32_t pick_gpus(rng_t *r, int32_t cap)
{
    double u = unif(r);
    int32_t g = u < 0.55 ? 1 : u < 0.67 ? 2 : u < 0.79 ? 4 : u < 0.94 ? 8 : u < 0.98 ? 16 : 32;
    return g > cap ? cap : g;
}

static int cmp_submit_line(const void *a, const void *b);

int ds_synth_generate(ds_trace_t *t, const ds_synth_config_t *c, ds_error_t *err)
{
    if (c->jobs < 1 || c->tenants < 1 || c->nodes < c->tenants || c->days <= 0 || c->load <= 0 || c->gpus_per_node < 1) {
        ds_error_set(err, "synthetic", 0, NULL,
                     "bad generator parameters: need jobs >= 1, tenants >= 1, nodes >= tenants, days > 0, load > 0");
        return DS_EINVAL;
    }
    rng_t r = {c->seed * 0x2545F4914F6CDD1DULL + 12345};
    int32_t gpn = c->gpus_per_node;
    /* Quotas: Zipf-like shares of the nodes, at least one node per tenant. */
    double wsum = 0;
    for (int32_t i = 0; i < c->tenants; i++) wsum += 1.0 / pow(i + 1, 0.8);
    int32_t left = c->nodes;
    int32_t *nodes = ds_xcalloc((size_t)c->tenants, sizeof *nodes);
    for (int32_t i = 0; i < c->tenants; i++) {
        int32_t n = (int32_t)floor((double)c->nodes * (1.0 / pow(i + 1, 0.8)) / wsum);
        if (n < 1) n = 1;
        int32_t remain_tenants = c->tenants - i - 1;
        if (n > left - remain_tenants) n = left - remain_tenants;
        nodes[i] = n;
        left -= n;
    }
    nodes[0] += left;
    for (int32_t i = 0; i < c->tenants; i++) {
        char name[32];
        snprintf(name, sizeof name, "tenant%02d", i);
        ds_trace_add_tenant(t, name, nodes[i] * gpn);
    }
    /* Users: a handful per tenant, each with habits (78% resubmit similar jobs). */
    int32_t nusers = 0;
    user_t *users = ds_xcalloc((size_t)c->tenants * 12, sizeof *users);
    for (int32_t i = 0; i < c->tenants; i++) {
        int32_t k = 3 + (int32_t)(unif(&r) * 9);
        for (int32_t u = 0; u < k; u++) {
            user_t *x = &users[nusers++];
            x->tenant = i;
            x->type = (int32_t)(unif(&r) * NTYPES);
            x->gpus = pick_gpus(&r, DS_MIN(nodes[i] * gpn, 4 * gpn));
            x->short_med = lognormal(&r, 240, 0.6);
            x->long_med = lognormal(&r, 6 * 3600, 0.5);
            x->p_long = 0.25 + 0.3 * unif(&r);
            char name[32];
            snprintf(name, sizeof name, "u%03d", nusers - 1);
            ds_strtab_intern(&t->users, name);
        }
    }
    double span = c->days * 86400.0;
    int64_t t0 = 0;
    int64_t n = 0;
    /* Sessions arrive by a diurnal Poisson process (thinning); each is a burst of similar jobs. */
    double rate_max = (double)c->jobs / 4.0 / span * 1.7, now = 0;
    while (n < c->jobs) {
        now += expo(&r, 1.0 / rate_max);
        if (now >= span) now = fmod(now, span);
        double phase = fmod(now, 86400.0) / 86400.0;
        double rel = (1.0 + 0.6 * sin(6.283185307179586 * (phase - 0.375))) / 1.6;
        if (unif(&r) > rel) continue;
        user_t *u = &users[(int32_t)(unif(&r) * nusers)];
        int32_t burst = 1 + (int32_t)expo(&r, 3.0);
        double at = now;
        for (int32_t b = 0; b < burst && n < c->jobs; b++) {
            ds_job_t *j = ds_trace_add_job(t);
            j->id = n + 1;
            j->tenant = u->tenant;
            j->user = (int32_t)(u - users);
            int similar = unif(&r) < 0.78;
            const struct wtype *w = &types[similar ? u->type : (int32_t)(unif(&r) * NTYPES)];
            j->model = ds_strtab_intern(&t->models, w->model);
            j->dataset = ds_strtab_intern(&t->datasets, w->dataset);
            j->batch = w->batch;
            j->amp = w->amp;
            j->gpu_util = w->gpu_util * (float)(0.85 + 0.3 * unif(&r));
            if (j->gpu_util > 100) j->gpu_util = 100;
            j->gmem_util = w->gmem_util;
            j->gmem_mib = w->gmem;
            int32_t cap = t->tenants[u->tenant].quota_gpus;
            j->gpus = similar ? u->gpus : pick_gpus(&r, DS_MIN(cap, 4 * gpn));
            int is_long = unif(&r) < (similar ? u->p_long : 0.38);
            double d = is_long ? lognormal(&r, u->long_med / (j->gpus >= 8 ? 1.0 : 1.5), 0.9)
                               : lognormal(&r, u->short_med, 0.8);
            j->duration = (int64_t)DS_MAX(1.0, d);
            j->cpus = 4 * j->gpus;
            j->klass = unif(&r) < c->be_share ? DS_CLASS_BE : DS_CLASS_AUTO;
            j->submit = t0 + (int64_t)at;
            j->line = n + 1;
            at += expo(&r, 90.0);
            if (at >= span) at = span - 1;
            n++;
        }
    }
    /* Scale durations so the offered GPU-time matches the requested load. */
    double offered = 0, cap = (double)c->nodes * gpn * span;
    for (int32_t i = 0; i < t->njobs; i++) offered += (double)t->jobs[i].duration * t->jobs[i].gpus;
    double scale = c->load * cap / offered;
    for (int32_t i = 0; i < t->njobs; i++) {
        ds_job_t *j = &t->jobs[i];
        j->duration = (int64_t)DS_MAX(1.0, round((double)j->duration * scale));
        j->estimate = DS_MAX(1.0, (double)j->duration * exp(0.8 * normal(&r))); /* a noisy estimator */
    }
    /* Submission order: by time, ties in generation order. */
    qsort(t->jobs, (size_t)t->njobs, sizeof *t->jobs, cmp_submit_line);
    for (int32_t i = 0; i < t->njobs; i++) t->jobs[i].id = i + 1, t->jobs[i].line = i + 1;
    snprintf(t->source, sizeof t->source, "synthetic(seed=%llu,jobs=%lld,tenants=%d,nodes=%d)",
             (unsigned long long)c->seed, (long long)c->jobs, c->tenants, c->nodes);
    free(nodes);
    free(users);
    return DS_OK;
}

static int cmp_submit_line(const void *a, const void *b)
{
    const ds_job_t *x = a, *y = b;
    if (x->submit != y->submit) return x->submit < y->submit ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}
