/* features.c: what the runtime model knows about a job at submit time: its request, the clock, and
 * the recent durations of its user and tenant among the jobs already reported finished. */
#include "rt_features.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rt_hist_init(rt_hist_t *h) { memset(h, 0, sizeof *h); }

void rt_hist_free(rt_hist_t *h)
{
    free(h->user);
    free(h->user_gpus);
    free(h->tenant);
    free(h->tenant_gpus);
    free(h->wkey);
    free(h->wring);
    free(h->wslot);
    free(h->subs);
    free(h->sub_feat);
    memset(h, 0, sizeof *h);
}

/* Grows per-user and per-tenant tables when the trace has gained users or tenants (daemon). */
static void ensure(rt_hist_t *h, const ds_trace_t *t)
{
    if (t->users.n > h->nusers) {
        int32_t n = t->users.n;
        h->user = ds_xrealloc(h->user, (size_t)n * sizeof *h->user);
        h->user_gpus = ds_xrealloc(h->user_gpus, (size_t)n * RT_GBUCKETS * sizeof *h->user_gpus);
        h->subs = ds_xrealloc(h->subs, (size_t)n * sizeof *h->subs);
        memset(h->user + h->nusers, 0, (size_t)(n - h->nusers) * sizeof *h->user);
        memset(h->user_gpus + (size_t)h->nusers * RT_GBUCKETS, 0,
               (size_t)(n - h->nusers) * RT_GBUCKETS * sizeof *h->user_gpus);
        memset(h->subs + h->nusers, 0, (size_t)(n - h->nusers) * sizeof *h->subs);
        for (int32_t u = h->nusers; u < n; u++)
            for (int b = 0; b < RT_GBUCKETS; b++) h->subs[u].last_by_bucket[b] = -1;
        h->nusers = n;
    }
    if (t->ntenants > h->ntenants) {
        h->tenant = ds_xrealloc(h->tenant, (size_t)t->ntenants * sizeof *h->tenant);
        memset(h->tenant + h->ntenants, 0, (size_t)(t->ntenants - h->ntenants) * sizeof *h->tenant);
        h->tenant_gpus = ds_xrealloc(h->tenant_gpus, (size_t)t->ntenants * RT_GBUCKETS * sizeof *h->tenant_gpus);
        memset(h->tenant_gpus + (size_t)h->ntenants * RT_GBUCKETS, 0,
               (size_t)(t->ntenants - h->ntenants) * RT_GBUCKETS * sizeof *h->tenant_gpus);
        h->ntenants = t->ntenants;
    }
}

static int gbucket(int32_t gpus)
{
    int b = 0;
    while (gpus > 1 && b < RT_GBUCKETS - 1) gpus >>= 1, b++;
    return b;
}

static rt_wkey_t wkey_of(const ds_job_t *j)
{
    rt_wkey_t k = {j->user, j->gpus, j->model, j->dataset, j->batch, j->amp};
    return k;
}

static uint32_t whash(const rt_wkey_t *k)
{
    uint64_t h = 1469598103934665603ULL;
    const int32_t *v = &k->user;
    for (int i = 0; i < 6; i++) h = (h ^ (uint32_t)v[i]) * 1099511628211ULL;
    return (uint32_t)(h ^ (h >> 29));
}

static int wkey_eq(const rt_wkey_t *a, const rt_wkey_t *b)
{
    return a->user == b->user && a->gpus == b->gpus && a->model == b->model && a->dataset == b->dataset &&
           a->batch == b->batch && a->amp == b->amp;
}

/* The ring of a user's workload; NULL when absent and !create. */
static rt_ring_t *wring(rt_hist_t *h, const ds_job_t *j, int create)
{
    rt_wkey_t k = wkey_of(j);
    if (h->nslots) {
        for (uint32_t i = whash(&k) & (uint32_t)(h->nslots - 1);; i = (i + 1) & (uint32_t)(h->nslots - 1)) {
            int32_t w = h->wslot[i];
            if (w < 0) break;
            if (wkey_eq(&h->wkey[w], &k)) return &h->wring[w];
        }
    }
    if (!create) return NULL;
    if (2 * (h->nw + 1) > h->nslots) { /* grow and rehash: load factor at most 1/2 */
        h->nslots = h->nslots ? 2 * h->nslots : 1024;
        h->wslot = ds_xrealloc(h->wslot, (size_t)h->nslots * sizeof *h->wslot);
        for (int32_t i = 0; i < h->nslots; i++) h->wslot[i] = -1;
        for (int32_t w = 0; w < h->nw; w++) {
            uint32_t i = whash(&h->wkey[w]) & (uint32_t)(h->nslots - 1);
            while (h->wslot[i] >= 0) i = (i + 1) & (uint32_t)(h->nslots - 1);
            h->wslot[i] = w;
        }
    }
    if (h->nw == h->capw) {
        h->capw = h->capw ? 2 * h->capw : 256;
        h->wkey = ds_xrealloc(h->wkey, (size_t)h->capw * sizeof *h->wkey);
        h->wring = ds_xrealloc(h->wring, (size_t)h->capw * sizeof *h->wring);
    }
    int32_t w = h->nw++;
    h->wkey[w] = k;
    memset(&h->wring[w], 0, sizeof h->wring[w]);
    uint32_t i = whash(&k) & (uint32_t)(h->nslots - 1);
    while (h->wslot[i] >= 0) i = (i + 1) & (uint32_t)(h->nslots - 1);
    h->wslot[i] = w;
    return &h->wring[w];
}

static float lgd(int64_t d) { return (float)log(d > 1 ? (double)d : 1.0); }

static void ring_add(rt_ring_t *r, float v, int64_t end)
{
    r->v[r->head] = v;
    r->head = (r->head + 1) % RT_K;
    if (r->n < RT_K) r->n++;
    r->count++;
    r->sumlog += v;
    if (end > r->last_end) r->last_end = end;
}

void rt_hist_add(rt_hist_t *h, const ds_trace_t *t, int32_t job, int64_t end)
{
    ensure(h, t);
    const ds_job_t *j = &t->jobs[job];
    float v = lgd(j->duration);
    if (j->user >= 0) {
        ring_add(&h->user[j->user], v, end);
        ring_add(&h->user_gpus[(size_t)j->user * RT_GBUCKETS + gbucket(j->gpus)], v, end);
    }
    if (j->user >= 0) ring_add(wring(h, j, 1), v, end);
    if (j->tenant >= 0) {
        ring_add(&h->tenant[j->tenant], v, end);
        ring_add(&h->tenant_gpus[(size_t)j->tenant * RT_GBUCKETS + gbucket(j->gpus)], v, end);
    }
    ring_add(&h->cluster, v, end);
}

/* At most RT_K values, sorted for every feature row: insertion sort, where qsort's call per
 * comparison cost ten times as much (4% of a Venus replay). */
static void sort_small(float *s, int n)
{
    for (int i = 1; i < n; i++) {
        float v = s[i];
        int k = i;
        for (; k > 0 && s[k - 1] > v; k--) s[k] = s[k - 1];
        s[k] = v;
    }
}

/* last, mean, median, min, max, std of the recent values (NAN when empty) */
static void ring_stats(const rt_ring_t *r, float *last, float *mean, float *med, float *mn, float *mx, float *sd)
{
    if (!r || !r->n) {
        *last = *mean = *med = *mn = *mx = *sd = NAN;
        return;
    }
    float s[RT_K];
    double sum = 0, sq = 0;
    for (int i = 0; i < r->n; i++) s[i] = r->v[i], sum += s[i], sq += (double)s[i] * s[i];
    *last = r->v[(r->head + RT_K - 1) % RT_K];
    sort_small(s, r->n);
    *mean = (float)(sum / r->n);
    *med = r->n % 2 ? s[r->n / 2] : 0.5f * (s[r->n / 2 - 1] + s[r->n / 2]);
    *mn = s[0];
    *mx = s[r->n - 1];
    double var = sq / r->n - (sum / r->n) * (sum / r->n);
    *sd = (float)sqrt(var > 0 ? var : 0);
}

double rt_ring_median_seconds(const rt_ring_t *r)
{
    float last, mean, med, mn, mx, sd;
    ring_stats(r, &last, &mean, &med, &mn, &mx, &sd);
    return isnan(med) ? NAN : exp(med);
}

/* Submit-side features of jobs up to job, in trace (submit) order: only earlier submissions count. */
static void prepare(rt_hist_t *h, const ds_trace_t *t, int32_t job)
{
    if (job < h->prepared) return;
    ensure(h, t);
    if (t->njobs > h->sub_cap) {
        h->sub_cap = t->njobs * 2;
        h->sub_feat = ds_xrealloc(h->sub_feat, (size_t)h->sub_cap * 3 * sizeof *h->sub_feat);
    }
    for (int32_t i = h->prepared; i <= job; i++) {
        const ds_job_t *j = &t->jobs[i];
        float *f = &h->sub_feat[(size_t)i * 3];
        f[0] = f[1] = f[2] = NAN;
        if (j->user < 0) continue;
        rt_user_submits_t *s = &h->subs[j->user];
        int b = gbucket(j->gpus);
        if (s->n) {
            int64_t prev = s->t[(s->head + RT_SUBMITS - 1) % RT_SUBMITS];
            f[0] = (float)log1p((double)(j->submit - prev));
            int c = 0;
            for (int k = 0; k < s->n; k++)
                if (j->submit - s->t[k] <= 3600) c++;
            f[1] = (float)log1p(c);
        } else
            f[1] = 0;
        if (s->last_by_bucket[b] >= 0) f[2] = (float)log1p((double)(j->submit - s->last_by_bucket[b]));
        s->t[s->head] = j->submit;
        s->head = (s->head + 1) % RT_SUBMITS;
        if (s->n < RT_SUBMITS) s->n++;
        s->last_by_bucket[b] = j->submit;
    }
    h->prepared = job + 1;
}

void rt_features(rt_hist_t *h, const ds_trace_t *t, int32_t job, float *x)
{
    ensure(h, t);
    prepare(h, t, job);
    const ds_job_t *j = &t->jobs[job];
    for (int i = 0; i < DS_RT_NFEAT; i++) x[i] = NAN;
    x[0] = (float)log2(j->gpus > 1 ? j->gpus : 1);
    x[1] = (float)j->cpus;
    x[2] = (float)j->tenant;
    x[3] = (float)j->user;
    int64_t day = j->submit >= 0 ? j->submit / 86400 : 0;
    x[4] = (float)(j->submit - day * 86400) / 3600.0f;
    x[5] = (float)(day % 7);
    if (j->model >= 0) x[6] = (float)j->model;
    if (j->dataset >= 0) x[7] = (float)j->dataset;
    if (j->batch > 0) x[8] = (float)j->batch;
    x[9] = (float)j->amp;
    const rt_ring_t *u = j->user >= 0 ? &h->user[j->user] : NULL;
    const rt_ring_t *ug = j->user >= 0 ? &h->user_gpus[(size_t)j->user * RT_GBUCKETS + gbucket(j->gpus)] : NULL;
    const rt_ring_t *tn = j->tenant >= 0 ? &h->tenant[j->tenant] : NULL;
    float d0, d1, d2;
    x[10] = (float)log1p(u ? (double)u->count : 0);
    ring_stats(u, &x[11], &x[12], &x[13], &x[14], &x[15], &x[26]);
    if (u && u->count) x[16] = (float)(u->sumlog / (double)u->count);
    x[17] = (float)log1p(ug ? (double)ug->count : 0);
    ring_stats(ug, &x[18], &x[19], &d0, &d1, &d2, &d2);
    ring_stats(tn, &x[20], &x[21], &x[22], &d0, &d1, &d2);
    const float *sf = &h->sub_feat[(size_t)job * 3];
    x[23] = sf[0];
    x[24] = sf[1];
    x[25] = sf[2];
    if (u && u->count) x[27] = (float)log1p((double)DS_MAX(0, j->submit - u->last_end));
    /* the user's jobs of the same workload and GPU count: resubmissions are the most alike */
    const rt_ring_t *uw = j->user >= 0 ? wring(h, j, 0) : NULL;
    x[28] = (float)log1p(uw ? (double)uw->count : 0);
    ring_stats(uw, &x[29], &x[31], &x[30], &d0, &d1, &x[33]);
    const rt_ring_t *tg = j->tenant >= 0 ? &h->tenant_gpus[(size_t)j->tenant * RT_GBUCKETS + gbucket(j->gpus)] : NULL;
    ring_stats(tg, &d0, &d1, &x[32], &d0, &d1, &d2);
}
