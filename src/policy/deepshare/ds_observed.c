/* ds_observed.c: what the retention monitor has measured, fed back into admission: the mean observed
 * retention of a job's workload when it shared a GPU with a given partner workload. A pair the model
 * misjudged is admitted, sampled and revoked once; afterwards pairs of the same two workloads are
 * judged by what was measured, not by the model's guess again. A pair never measured may be probed
 * (docs/policy.md §5): one at a time, so that a burst of like jobs does not bet on one guess at once. */
#include "ds_internal.h"

#include <stdlib.h>

/* A job's workload descriptor (model, dataset, batch size, amp) as one key; -1 when it has none. */
static uint64_t desc(const ds_job_t *j)
{
    if (j->model < 0) return UINT64_MAX;
    return ((uint64_t)(uint32_t)j->model << 40) ^ ((uint64_t)(uint32_t)(j->dataset + 1) << 20) ^
           ((uint64_t)(uint32_t)j->batch << 1) ^ (uint64_t)(j->amp != 0);
}

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xFF51AFD7ED558CCDULL;
    x ^= x >> 33;
    x *= 0xC4CEB9FE1A85EC53ULL;
    return x ^ (x >> 33);
}

/* The pair's key; on a GPU type (gtype >= 0) its own: a pair measured on one type says little of another. */
static uint64_t key_of(const ds_trace_t *t, int32_t a, int32_t b, int32_t gtype)
{
    uint64_t da = desc(&t->jobs[a]), db = desc(&t->jobs[b]);
    if (da == UINT64_MAX || db == UINT64_MAX) return 0;
    uint64_t k = mix(da * 0x9E3779B97F4A7C15ULL + mix(db));
    if (gtype >= 0) k = mix(k + (uint64_t)(gtype + 1) * 0xD6E8FEB86659FD93ULL);
    return k ? k : 1; /* 0 marks an empty slot */
}

static dsp_obs_t *find(const dsp_t *s, uint64_t k)
{
    if (!s->obs_cap) return NULL;
    for (size_t i = k & (s->obs_cap - 1);; i = (i + 1) & (s->obs_cap - 1)) {
        if (s->obs[i].key == k) return &s->obs[i];
        if (!s->obs[i].key) return NULL;
    }
}

static void grow(dsp_t *s)
{
    size_t cap = s->obs_cap ? 2 * s->obs_cap : 256;
    dsp_obs_t *old = s->obs, *nw = ds_xcalloc(cap, sizeof *nw);
    for (size_t i = 0; i < s->obs_cap; i++) {
        if (!old[i].key) continue;
        size_t k = old[i].key & (cap - 1);
        while (nw[k].key) k = (k + 1) & (cap - 1);
        nw[k] = old[i];
    }
    free(old);
    s->obs = nw;
    s->obs_cap = cap;
}

static dsp_obs_t *entry(dsp_t *s, uint64_t k)
{
    dsp_obs_t *o = find(s, k);
    if (o) return o;
    if (2 * (s->obs_n + 1) > s->obs_cap) grow(s);
    size_t i = k & (s->obs_cap - 1);
    while (s->obs[i].key) i = (i + 1) & (s->obs_cap - 1);
    o = &s->obs[i];
    o->key = k;
    s->obs_n++;
    return o;
}

void dsp_observed_add(dsp_t *s, const ds_trace_t *t, int32_t a, int32_t b, int32_t gtype, double rho)
{
    uint64_t k = key_of(t, a, b, gtype);
    if (!k || !(rho >= 0)) return;
    dsp_obs_t *o = entry(s, k);
    o->sum += rho;
    o->n++;
    o->probing = 0;
}

int dsp_observed_probe_ok(const dsp_t *s, const ds_trace_t *t, int32_t a, int32_t b, int32_t gtype)
{
    uint64_t k = key_of(t, a, b, gtype);
    if (!k) return 0;
    const dsp_obs_t *o = find(s, k);
    return !o || (!o->n && !o->probing);
}

void dsp_observed_set_probe(dsp_t *s, const ds_trace_t *t, int32_t a, int32_t b, int32_t gtype, int on)
{
    uint64_t k = key_of(t, a, b, gtype);
    if (!k) return;
    dsp_obs_t *o = on ? entry(s, k) : find(s, k);
    if (o && !o->n) o->probing = (uint8_t)(on != 0);
}

int dsp_observed_get(const dsp_t *s, const ds_trace_t *t, int32_t a, int32_t b, int32_t gtype, double *rho)
{
    uint64_t k = key_of(t, a, b, gtype);
    const dsp_obs_t *o = k ? find(s, k) : NULL;
    if (!o || !o->n) return 0;
    *rho = o->sum / (double)o->n;
    return 1;
}
