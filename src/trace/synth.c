/* synth.c: the built-in synthetic workload: tenants with quotas, users with habits, diurnal and bursty
 * arrivals, heavy-tailed durations shaped after the paper's cluster study (62% of jobs are short and
 * use ~11% of GPU-hours; jobs over 4 h use ~73%), and several workload types. Deterministic per seed. */
#include "deepshare/synth.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void ds_synth_config_default(ds_synth_config_t *c)
{
    c->seed = 1;
    c->jobs = 4000;
    c->tenants = 6;
    c->nodes = 24;
    c->gpus_per_node = 8;
    c->days = 0.0;   /* 0: the span that gives the requested load */
    c->load = 1.0;
    c->be_share = 0.0;
    c->noisy = 0.0;
    c->large_share = 0.0;
    c->gpu_types = NULL;
    c->speeds = NULL;
    c->type_requests = 0.25;
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

/* Heterogeneous workloads are Gavel's job types (data/gavel/speeds.csv); their descriptors are invented
 * here, as the types above are (the table has throughputs only): SM and memory-bandwidth use, and a GPU
 * memory footprint growing with the batch. */
static const struct family {
    const char *model;
    float gpu_util, gmem_util;
    int gmem_base;
    float gmem_per_sample;
} families[] = {
    {"ResNet-18", 60, 35, 1500, 12},  {"ResNet-50", 90, 60, 2500, 90}, {"Transformer", 80, 50, 2000, 40},
    {"LM", 50, 40, 1200, 60},         {"Recommendation", 30, 45, 1000, 0.5f}, {"A3C", 20, 10, 1200, 0},
    {"CycleGAN", 85, 55, 4500, 0},
};

/* A drawn workload of the heterogeneous mix: its descriptor in the shape of types[]. */
typedef struct hwork {
    const char *model, *dataset;
    int batch, amp;
    float gpu_util, gmem_util;
    int gmem;
} hwork_t;

static void hwork_of(const ds_speed_row_t *r, hwork_t *w)
{
    w->model = r->model, w->dataset = r->dataset[0] ? r->dataset : "-";
    w->batch = r->batch, w->amp = r->amp;
    w->gpu_util = 50, w->gmem_util = 30, w->gmem = 4000;
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
        if (!strcmp(families[i].model, r->model)) {
            w->gpu_util = families[i].gpu_util, w->gmem_util = families[i].gmem_util;
            w->gmem = families[i].gmem_base + (int)(families[i].gmem_per_sample * (float)r->batch);
        }
}

/* GPU memory of well-known GPU types (vendor data sheets), for types the options name without a shape. */
static int32_t known_gmem(const char *name)
{
    static const struct { const char *n; int32_t mib; } k[] = {
        {"k80", 12288}, {"p100", 16384}, {"v100", 16384}, {"t4", 15360}, {"a10", 24576},
        {"a100", 40960}, {"h100", 81920}, {"p40", 24576}, {"m40", 12288},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (!strcasecmp(k[i].n, name)) return k[i].mib;
    return 0;
}

/* Throughput of a table workload (row r's) on one type at one GPU; 0 when not measured. */
static double row_thr(const ds_speeds_t *s, const ds_speed_row_t *r, const char *gtype)
{
    for (int32_t i = 0; i < s->nrows; i++) {
        const ds_speed_row_t *o = &s->rows[i];
        if (o->gpus == 1 && o->batch == r->batch && o->amp == r->amp && !strcmp(o->model, r->model) &&
            !strcmp(o->dataset, r->dataset) && !strcasecmp(o->gtype, gtype))
            return o->thr;
    }
    return 0;
}

typedef struct user {
    int32_t tenant, type, gpus;
    int32_t gtype;                       /* the GPU type it asks for, -1 any (heterogeneous) */
    double short_med, mid_med, long_med; /* habitual durations of the user's three kinds of run */
} user_t;

/* Duration classes of the cluster study: short exploratory runs (under 1 h), medium runs (1-4 h) and
 * long training runs (over 4 h). Shares of jobs: 62% short; long tuned so that, with the GPU mix
 * below, short runs use ~11% and long runs ~73% of GPU-hours. */
#define SHORT_SHARE 0.62
#define LONG_SHARE 0.16
#define SHORT_MAX 3599.0
#define LONG_MIN (4 * 3600.0)
#define DURATION_MAX (14 * 86400.0)

static int32_t pick_gpus(rng_t *r, int32_t cap)
{
    double u = unif(r);
    int32_t g = u < 0.55 ? 1 : u < 0.67 ? 2 : u < 0.79 ? 4 : u < 0.94 ? 8 : u < 0.98 ? 16 : 32;
    return g > cap ? cap : g;
}

static double clampd(double x, double lo, double hi) { return x < lo ? lo : x > hi ? hi : x; }

/* A duration of one class around the user's habit; heavy tail for long runs (Pareto-like). */
static double draw_duration(rng_t *r, const user_t *u, int kind)
{
    if (kind == 0) return clampd(lognormal(r, u->short_med, 1.0), 5.0, SHORT_MAX);
    if (kind == 1) return clampd(lognormal(r, u->mid_med, 0.35), 3600.0, LONG_MIN - 1);
    return clampd(LONG_MIN + lognormal(r, u->long_med, 0.9), LONG_MIN + 1, DURATION_MAX);
}

static int cmp_submit_line(const void *a, const void *b);

/* The most GPUs a job of a tenant may ask for so that its own nodes can run it: on a typed cluster a job runs
 * on one type, the one it asks for or its tenant's largest. */
static int32_t type_cap(const ds_trace_t *t, int32_t ten, int32_t gtype)
{
    if (!t->ngtypes) return t->tenants[ten].quota_gpus;
    if (gtype >= 0) return t->tenants[ten].quota_t[gtype];
    int32_t m = 0;
    for (int32_t ty = 0; ty < t->ngtypes; ty++) m = DS_MAX(m, t->tenants[ten].quota_t[ty]);
    return m;
}

/* Heterogeneous quotas: each type's nodes split over the tenants by Zipf-like shares, the ranking shifted by
 * type so that tenants own different mixes (one mostly the fast type, another mostly an old one), and each
 * tenant at least one node. nodes[i]: tenant i's nodes of all types. */
static int typed_quotas(ds_trace_t *t, const ds_synth_config_t *c, int32_t *nodes, ds_error_t *err)
{
    if (!c->speeds) {
        ds_error_set(err, "synthetic", 0, "speeds", "a synthetic workload over GPU types needs the speed table (--speeds)");
        return DS_EINVAL;
    }
    int rc = ds_trace_parse_gtypes(t, c->gpu_types, "synth-gpu-types", err);
    if (rc) return rc;
    int32_t nt = c->tenants, total = 0;
    for (int32_t ty = 0; ty < t->ngtypes; ty++) total += t->gtypes[ty].nodes;
    if (total < nt) {
        ds_error_set(err, "synthetic", 0, "synth-gpu-types", "%d nodes for %d tenants: each tenant needs a node", total, nt);
        return DS_EINVAL;
    }
    int32_t *own = ds_xcalloc((size_t)nt * (size_t)t->ngtypes, sizeof *own);
    for (int32_t ty = 0; ty < t->ngtypes; ty++) {
        int32_t n = t->gtypes[ty].nodes, left = n, shift = (ty * nt + t->ngtypes - 1) / t->ngtypes;
        double wsum = 0;
        for (int32_t i = 0; i < nt; i++) wsum += 1.0 / pow((i + shift) % nt + 1, 0.8);
        int32_t first = -1;
        for (int32_t i = 0; i < nt; i++) {
            int32_t rank = (i + shift) % nt, k = (int32_t)floor((double)n * (1.0 / pow(rank + 1, 0.8)) / wsum);
            if (rank == 0) first = i;
            own[i * t->ngtypes + ty] = k;
            left -= k;
        }
        own[first * t->ngtypes + ty] += left;
        if (!known_gmem(t->gtypes[ty].name)) continue;
        t->gtypes[ty].gmem_per_gpu = known_gmem(t->gtypes[ty].name);
    }
    /* a tenant with no node gets one from the tenant holding most of the largest type */
    for (int32_t i = 0; i < nt; i++) {
        int32_t sum = 0;
        for (int32_t ty = 0; ty < t->ngtypes; ty++) sum += own[i * t->ngtypes + ty];
        if (sum) continue;
        int32_t bi = -1, bt = -1;
        for (int32_t k = 0; k < nt; k++)
            for (int32_t ty = 0; ty < t->ngtypes; ty++)
                if (own[k * t->ngtypes + ty] > 1 && (bi < 0 || own[k * t->ngtypes + ty] > own[bi * t->ngtypes + bt]))
                    bi = k, bt = ty;
        if (bi < 0) break; /* total >= nt: some tenant holds two nodes */
        own[bi * t->ngtypes + bt]--;
        own[i * t->ngtypes + bt]++;
    }
    for (int32_t i = 0; i < nt; i++) {
        char name[32];
        snprintf(name, sizeof name, "tenant%02d", i);
        nodes[i] = 0;
        int32_t sum = 0;
        for (int32_t ty = 0; ty < t->ngtypes; ty++) sum += own[i * t->ngtypes + ty];
        int32_t ti = ds_trace_add_tenant(t, name, sum * c->gpus_per_node);
        for (int32_t ty = 0; ty < t->ngtypes; ty++) t->tenants[ti].quota_t[ty] = own[i * t->ngtypes + ty] * c->gpus_per_node;
        nodes[i] = sum;
    }
    free(own);
    return DS_OK;
}

/* Large-jobs mix: medium and long runs of tenants whose quota holds 16 GPUs, picked in a seeded random
 * order, become jobs of 16, 32 or 64 GPUs (at most the quota) until they hold large_share of GPU-time. */
static void make_large(ds_trace_t *t, const ds_synth_config_t *c)
{
    rng_t r = {c->seed * 0xD1B54A32D192ED03ULL + 4242};
    int32_t n = t->njobs, *idx = ds_xmalloc((size_t)n * sizeof *idx), m = 0;
    double total = 0, large = 0;
    for (int32_t i = 0; i < n; i++) {
        const ds_job_t *j = &t->jobs[i];
        total += (double)j->duration * j->gpus;
        if (j->gpus >= 16) large += (double)j->duration * j->gpus; /* the base mix has some already */
        else if (j->duration >= 3600 && type_cap(t, j->tenant, j->gtype) >= 16) idx[m++] = i;
    }
    for (int32_t i = m - 1; i > 0; i--) { /* Fisher-Yates */
        int32_t k = (int32_t)(unif(&r) * (i + 1)), x = idx[i];
        if (k > i) k = i;
        idx[i] = idx[k], idx[k] = x;
    }
    for (int32_t i = 0; i < m && large < c->large_share * total; i++) {
        ds_job_t *j = &t->jobs[idx[i]];
        int32_t q = type_cap(t, j->tenant, j->gtype), g = 16 << (int32_t)(unif(&r) * 3);
        while (g > q && g > 16) g /= 2;
        total += (double)j->duration * (g - j->gpus);
        large += (double)j->duration * g;
        j->gpus = g;
        j->cpus = 4 * g;
    }
    free(idx);
}

int ds_synth_generate(ds_trace_t *t, const ds_synth_config_t *c, ds_error_t *err)
{
    if (c->jobs < 1 || c->jobs > INT32_MAX / 2 || c->tenants < 1 || (!c->gpu_types && c->nodes < c->tenants) || c->days < 0 ||
        c->load <= 0 || c->gpus_per_node < 1 || !(c->noisy >= 0 && c->noisy <= 1000) ||
        !(c->large_share >= 0 && c->large_share < 1)) {
        ds_error_set(err, "synthetic", 0, NULL,
                     "bad generator parameters: need jobs >= 1, tenants >= 1, nodes >= tenants, days >= 0, load > 0, "
                     "noisy in [0, 1000], large share in [0, 1)");
        return DS_EINVAL;
    }
    rng_t r = {c->seed * 0x2545F4914F6CDD1DULL + 12345};
    rng_t rt = {c->seed * 0x9E3779B97F4A7C15ULL + 777}; /* arrival times: a stream of their own */
    int32_t gpn = c->gpus_per_node;
    int32_t *nodes = ds_xcalloc((size_t)c->tenants, sizeof *nodes);
    /* heterogeneous: the table's workloads measured on every type, and each type's effective GPUs */
    int32_t nwork = 0, *work = NULL;
    double cap_eff = 0, tweight[DS_MAX_GPU_TYPES];
    if (c->gpu_types) {
        int rc = typed_quotas(t, c, nodes, err);
        if (rc) {
            free(nodes);
            return rc;
        }
        work = ds_xmalloc((size_t)(c->speeds->nrows + 1) * sizeof *work);
        nwork = ds_speeds_workloads(c->speeds, t, work, c->speeds->nrows);
        if (nwork == 0) {
            ds_error_set(err, "synthetic", 0, "speeds", "the speed table measures no workload on every one of the %d GPU "
                         "types at one GPU", t->ngtypes);
            free(work);
            free(nodes);
            return DS_EINVAL;
        }
        for (int32_t ty = 0; ty < t->ngtypes; ty++) {
            double w = 0;
            int32_t nw = 0;
            for (int32_t k = 0; k < nwork; k++) {
                double a = row_thr(c->speeds, &c->speeds->rows[work[k]], t->gtypes[ty].name);
                double b = row_thr(c->speeds, &c->speeds->rows[work[k]], t->gtypes[0].name);
                if (a > 0 && b > 0) w += b / a, nw++;
            }
            /* effective GPUs of the type, as ds_speeds_type_weight: the harmonic mean of its speeds */
            tweight[ty] = nw && w > 0 ? nw / w : 1.0;
            cap_eff += (double)t->gtypes[ty].nodes * gpn * tweight[ty];
        }
    } else {
        /* Quotas: Zipf-like shares of the nodes, at least one node per tenant. */
        double wsum = 0;
        for (int32_t i = 0; i < c->tenants; i++) wsum += 1.0 / pow(i + 1, 0.8);
        int32_t left = c->nodes;
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
    }
    /* demand follows a tenant's capacity: its nodes, in effective nodes of the reference type when typed (a
     * tenant owning slow GPUs is sized to what they deliver) */
    double *wnodes = ds_xcalloc((size_t)c->tenants, sizeof *wnodes), wtotal = 0;
    for (int32_t i = 0; i < c->tenants; i++) {
        wnodes[i] = nodes[i];
        if (c->gpu_types) {
            wnodes[i] = 0;
            for (int32_t ty = 0; ty < t->ngtypes; ty++) wnodes[i] += (double)t->tenants[i].quota_t[ty] / gpn * tweight[ty];
        }
        wtotal += wnodes[i];
    }
    /* Users: a handful per tenant (more for big tenants), each with habits: one workload type, one
     * GPU count, typical durations. Most of a user's jobs repeat the habit (resubmissions). */
    int32_t nusers = 0, capusers = 0;
    user_t *users = NULL;
    int32_t *ufirst = ds_xcalloc((size_t)c->tenants + 1, sizeof *ufirst);
    /* Tenant demand follows its quota, scaled by a per-tenant factor in [0.5, 1.5]: some tenants want
     * more than they own and others leave GPUs idle, the imbalance quota-based sharing is about. */
    double *tw = ds_xcalloc((size_t)c->tenants, sizeof *tw), twsum = 0;
    /* Noisy neighbour: the last (smallest) tenant; its weight is its load over the half day it submits. */
    int32_t noisy = c->noisy > 0 && c->tenants > 1 ? c->tenants - 1 : -1;
    for (int32_t i = 0; i < c->tenants; i++) {
        double f = 0.5 + unif(&r);
        tw[i] = wnodes[i] * (noisy < 0 ? f : i == noisy ? c->noisy / 2 : 0.8 * c->load);
        twsum += tw[i];
    }
    for (int32_t i = 0; i < c->tenants; i++) {
        ufirst[i] = nusers;
        int32_t k = 3 + (int32_t)(unif(&r) * 9) + nodes[i] / 16;
        for (int32_t u = 0; u < k; u++) {
            if (nusers == capusers) {
                capusers = capusers ? capusers * 2 : 64;
                users = ds_xrealloc(users, (size_t)capusers * sizeof *users);
            }
            user_t *x = &users[nusers++];
            x->tenant = i;
            x->type = (int32_t)(unif(&r) * NTYPES);
            x->gpus = pick_gpus(&r, DS_MIN(nodes[i] * gpn, 4 * gpn));
            x->short_med = lognormal(&r, 1200, 0.4);
            x->mid_med = lognormal(&r, 1.6 * 3600, 0.3);
            x->long_med = lognormal(&r, 4.5 * 3600, 0.4);
            x->gtype = -1;
            if (c->gpu_types) {
                x->type = (int32_t)(unif(&r) * nwork);
                if (x->type >= nwork) x->type = nwork - 1;
                /* users who pin their jobs to their tenant's own hardware: its largest type */
                if (unif(&r) < c->type_requests) {
                    int32_t best = 0;
                    for (int32_t ty = 1; ty < t->ngtypes; ty++)
                        if (t->tenants[i].quota_t[ty] > t->tenants[i].quota_t[best]) best = ty;
                    x->gtype = best;
                }
            }
            char name[32];
            snprintf(name, sizeof name, "u%04d", nusers - 1);
            ds_strtab_intern(&t->users, name);
        }
    }
    ufirst[c->tenants] = nusers;
    /* Pass 1: sessions of similar jobs (what each job is), with no times yet. */
    int32_t *sess_first = NULL, nsess = 0, capsess = 0;
    int64_t n = 0;
    while (n < c->jobs) {
        if (nsess == capsess) {
            capsess = capsess ? capsess * 2 : 1024;
            sess_first = ds_xrealloc(sess_first, (size_t)capsess * sizeof *sess_first);
        }
        sess_first[nsess++] = (int32_t)n;
        double x = unif(&r) * twsum;
        int32_t ten = 0;
        while (ten + 1 < c->tenants && x >= tw[ten]) x -= tw[ten++];
        int32_t nu = ufirst[ten + 1] - ufirst[ten];
        user_t *u = &users[ufirst[ten] + DS_MIN(nu - 1, (int32_t)(unif(&r) * nu))];
        int32_t burst = 1 + (int32_t)expo(&r, 3.0);
        for (int32_t b = 0; b < burst && n < c->jobs; b++) {
            ds_job_t *j = ds_trace_add_job(t);
            j->tenant = u->tenant;
            j->user = (int32_t)(u - users);
            int similar = unif(&r) < 0.8;
            hwork_t hw;
            const struct wtype *w;
            struct wtype one;
            if (c->gpu_types) {
                int32_t k = similar ? u->type : DS_MIN(nwork - 1, (int32_t)(unif(&r) * nwork));
                hwork_of(&c->speeds->rows[work[k]], &hw);
                one = (struct wtype){hw.model, hw.dataset, hw.batch, hw.amp, hw.gpu_util, hw.gmem_util, hw.gmem};
                w = &one;
                /* a pinned user's habits are timed on the hardware it pins to: its trace durations are there */
                j->gtype = j->ref_gtype = (int8_t)u->gtype;
                j->gmask = u->gtype >= 0 ? (uint8_t)(1u << u->gtype) : 0;
            } else {
                w = &types[similar ? u->type : (int32_t)(unif(&r) * NTYPES)];
            }
            j->model = ds_strtab_intern(&t->models, w->model);
            j->dataset = ds_strtab_intern(&t->datasets, w->dataset);
            j->batch = w->batch;
            j->amp = w->amp;
            j->gpu_util = w->gpu_util * (float)(0.85 + 0.3 * unif(&r));
            if (j->gpu_util > 100) j->gpu_util = 100;
            j->gmem_util = w->gmem_util;
            j->gmem_mib = w->gmem;
            int32_t cap = DS_MIN(type_cap(t, u->tenant, j->gtype), 4 * gpn);
            double k = unif(&r);
            int kind = k < SHORT_SHARE ? 0 : k < 1.0 - LONG_SHARE ? 1 : 2;
            /* A user's resubmissions are recipes: the same model, data and GPU count, with the settings of
             * one kind of run (a short exploratory run at half the batch, a long training run at double
             * it), so the jobs of one recipe have alike durations, as in real clusters, while which kind
             * comes next stays the user's choice. */
            if (similar) j->batch = kind == 0 ? DS_MAX(1, w->batch / 2) : kind == 2 ? 2 * w->batch : w->batch;
            /* exploratory runs are often debugged on one GPU before scaling out */
            if (kind == 0 && unif(&r) < 0.15) j->gpus = 1;
            else j->gpus = similar ? DS_MIN(u->gpus, cap) : pick_gpus(&r, cap);
            j->duration = (int64_t)draw_duration(&r, u, kind);
            j->cpus = 4 * j->gpus;
            j->klass = unif(&r) < c->be_share ? DS_CLASS_BE : DS_CLASS_AUTO;
            j->line = n + 1;
            n++;
        }
    }
    if (c->large_share > 0) make_large(t, c);
    /* heterogeneous: capacity in GPUs of the reference (first) type, since durations are measured there */
    double offered = 0, gpus_total = c->gpu_types ? cap_eff : (double)c->nodes * gpn;
    for (int32_t i = 0; i < t->njobs; i++) {
        const ds_job_t *j = &t->jobs[i];
        /* in GPU-seconds of the reference type: a duration timed on a slower type is less work */
        offered += (double)j->duration * j->gpus * (c->gpu_types && j->ref_gtype >= 0 ? tweight[j->ref_gtype] : 1.0);
    }
    /* The span follows from the load, so durations keep their absolute shape; a fixed span (days > 0)
     * scales durations instead, which moves the class shares. With a noisy neighbour the weights are
     * each tenant's load on its own quota, so the span is the one that gives each exactly that. */
    double load = noisy >= 0 ? twsum / wtotal : c->load;
    double span = c->days > 0 ? c->days * 86400.0 : offered / (load * gpus_total);
    if (span < 3600) span = 3600;
    if (c->days > 0) {
        double scale = load * gpus_total * span / offered;
        for (int32_t i = 0; i < t->njobs; i++) {
            ds_job_t *j = &t->jobs[i];
            j->duration = (int64_t)DS_MAX(1.0, round((double)j->duration * scale));
        }
    }
    /* Pass 2: sessions start by a diurnal Poisson process (thinning: busy afternoons, quiet nights);
     * the jobs of a session follow each other minutes apart (bursts). */
    double rate_max = (double)nsess / span * 1.6, now = 0;
    for (int32_t s = 0; s < nsess; s++) {
        for (;;) {
            now += expo(&rt, 1.0 / rate_max);
            if (now >= span) now = fmod(now, span);
            double phase = fmod(now, 86400.0) / 86400.0;
            double rel = (1.0 + 0.6 * sin(6.283185307179586 * (phase - 0.375))) / 1.6;
            if (unif(&rt) <= rel) break;
        }
        int32_t end = s + 1 < nsess ? sess_first[s + 1] : t->njobs;
        double at = now;
        /* the noisy tenant submits only in the first half of each day, at twice its average rate */
        if (t->jobs[sess_first[s]].tenant == noisy) at = floor(now / 86400.0) * 86400.0 + fmod(now, 86400.0) / 2;
        for (int32_t i = sess_first[s]; i < end; i++) {
            t->jobs[i].submit = (int64_t)at;
            at += expo(&rt, 90.0);
            if (at >= span) at = span - 1;
        }
    }
    for (int32_t i = 0; i < t->njobs; i++) {
        ds_job_t *j = &t->jobs[i];
        j->estimate = DS_MAX(1.0, (double)j->duration * exp(0.8 * normal(&r))); /* a noisy estimator */
    }
    /* Submission order: by time, ties in generation order. */
    qsort(t->jobs, (size_t)t->njobs, sizeof *t->jobs, cmp_submit_line);
    for (int32_t i = 0; i < t->njobs; i++) t->jobs[i].id = i + 1, t->jobs[i].line = i + 1;
    if (c->gpu_types)
        snprintf(t->source, sizeof t->source, "synthetic(seed=%llu,jobs=%lld,tenants=%d,gpu-types=%.120s)",
                 (unsigned long long)c->seed, (long long)c->jobs, c->tenants, c->gpu_types);
    else
        snprintf(t->source, sizeof t->source, "synthetic(seed=%llu,jobs=%lld,tenants=%d,nodes=%d)",
                 (unsigned long long)c->seed, (long long)c->jobs, c->tenants, c->nodes);
    free(work);
    free(wnodes);
    free(sess_first);
    free(ufirst);
    free(tw);
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
