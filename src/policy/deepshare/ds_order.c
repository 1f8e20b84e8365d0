/* ds_order.c: DeepShare's queue orders (docs/policy.md §3): QAD band first, so a prediction can never lift a
 * well-served tenant above an under-served one; predicted remaining time only inside a band.
 * A pending job's key (tenant, predicted remaining, submit, id) does not change while it waits, so
 * each partition keeps its pending jobs sorted by it; QG and QB are merges of the tenants' runs. */
#include "ds_internal.h"

#include <stdlib.h>
#include <string.h>

void dsp_set_key(const ds_engine_t *e, dsp_t *s, int32_t j, int64_t now)
{
    s->krem[j] = s->cfg.prediction ? dsp_remaining_for(e, s, j, now, DSP_CR_ORDER) : 0.0;
    /* several GPU types: the run time on the fastest type it may use (a key must not change while it waits) */
    if (s->type_aware && s->cfg.prediction) s->krem[j] /= dsp_best_speed(e, j);
    if (s->cfg.gpu_time_order) s->krem[j] *= e->trace->jobs[j].gpus;
}

void dsp_batch_revise(ds_engine_t *e, dsp_t *s, int32_t finished, int64_t now)
{
    const ds_runtime_predictor_t *rp = e->predictors ? e->predictors->runtime : NULL;
    if (!s->cfg.batch_evidence || !s->cfg.prediction || !rp || !rp->batch_revised || !rp->batch_total) return;
    int32_t n;
    const int32_t *v = rp->batch_revised(rp->ctx, e->trace, finished, &n);
    for (int32_t k = 0; k < n; k++) {
        int32_t j = v[k];
        if (!s->seen[j]) continue;
        double bt = dsp_batch_total(e, s, j, dsp_elapsed(e, s, j, now));
        if (bt >= 1.0) s->pred[j] = bt, s->st.batch_revised++;
        /* A waiting job's key is fixed while it waits (above): it leaves and rejoins its list, with what its
         * batch says now, or (the evidence out of use since its key was set) what the model says. */
        if (e->js[j].status == DS_JS_PENDING) {
            int32_t part = e->js[j].part;
            dsp_pend_remove(s, part, j);
            dsp_set_key(e, s, j, now);
            dsp_pend_insert(s, part, j);
            s->st.batch_rekeyed++;
        }
    }
}

/* (rem, submit, id): the order inside a tenant and inside a band. */
static int cmp_rem(const dsp_t *s, int32_t a, int32_t b)
{
    if (s->krem[a] != s->krem[b]) return s->krem[a] < s->krem[b] ? -1 : 1;
    int64_t sa = s->t->jobs[a].submit, sb = s->t->jobs[b].submit;
    if (sa != sb) return sa < sb ? -1 : 1;
    return (a > b) - (a < b);
}

static int cmp_tenant(const dsp_t *s, int32_t a, int32_t b)
{
    int32_t ta = s->t->jobs[a].tenant, tb = s->t->jobs[b].tenant;
    if (ta != tb) return ta < tb ? -1 : 1;
    return cmp_rem(s, a, b);
}

/* First position in v[0..n) whose job is not before j. */
static int32_t lower_bound(const dsp_t *s, const int32_t *v, int32_t n, int32_t j)
{
    int32_t lo = 0, hi = n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (cmp_tenant(s, v[mid], j) < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

void dsp_pend_insert(dsp_t *s, int32_t part, int32_t j)
{
    dsp_list_t *l = &s->pend[part];
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->v = ds_xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    int32_t i = lower_bound(s, l->v, l->n, j);
    memmove(l->v + i + 1, l->v + i, (size_t)(l->n - i) * sizeof *l->v);
    l->v[i] = j;
    l->n++;
}

void dsp_pend_remove(dsp_t *s, int32_t part, int32_t j)
{
    dsp_list_t *l = &s->pend[part];
    int32_t i = lower_bound(s, l->v, l->n, j);
    DS_ASSERT(i < l->n && l->v[i] == j);
    memmove(l->v + i, l->v + i + 1, (size_t)(l->n - i - 1) * sizeof *l->v);
    l->n--;
}

/* Merges v (runs of one tenant each, every run in (rem, submit, id) order) into (band, rem, submit,
 * id) order (by_band) or (rem, submit, id) order, with a heap over the runs. */
static void merge_runs(const ds_engine_t *e, dsp_t *s, int32_t *v, int32_t n, int by_band)
{
    (void)e;
    if (n < 2) return;
    int32_t nr = 0;
    for (int32_t i = 0; i < n; i++)
        if (i == 0 || s->t->jobs[v[i]].tenant != s->t->jobs[v[i - 1]].tenant) s->run_at[nr++] = i;
    if (nr < 2) return;
    s->run_at[nr] = n;
    /* heap of run indices; cursor per run */
    int32_t *heap = s->heap, *cur = s->cursor, hn = 0;
#define HKEY_LESS(x, y)                                                                                     \
    (by_band && dsp_band(s, s->t->jobs[v[cur[x]]].tenant) != dsp_band(s, s->t->jobs[v[cur[y]]].tenant)      \
         ? dsp_band(s, s->t->jobs[v[cur[x]]].tenant) < dsp_band(s, s->t->jobs[v[cur[y]]].tenant)           \
         : cmp_rem(s, v[cur[x]], v[cur[y]]) < 0)
    for (int32_t r = 0; r < nr; r++) {
        cur[r] = s->run_at[r];
        int32_t i = hn++;
        while (i > 0 && HKEY_LESS(r, heap[(i - 1) / 2])) heap[i] = heap[(i - 1) / 2], i = (i - 1) / 2;
        heap[i] = r;
    }
    int32_t out = 0;
    while (hn) {
        int32_t r = heap[0];
        s->order[out++] = v[cur[r]++];
        int32_t x = r;
        if (cur[r] == s->run_at[r + 1]) x = heap[--hn];
        if (!hn) break;
        int32_t i = 0;
        for (;;) {
            int32_t l = 2 * i + 1, m = i;
            int32_t best = x;
            if (l < hn && HKEY_LESS(heap[l], best)) m = l, best = heap[l];
            if (l + 1 < hn && HKEY_LESS(heap[l + 1], best)) m = l + 1;
            if (m == i) break;
            heap[i] = heap[m];
            i = m;
        }
        heap[i] = x;
    }
#undef HKEY_LESS
    memcpy(v, s->order, (size_t)n * sizeof *v);
}

void dsp_merge_qg(const ds_engine_t *e, dsp_t *s, int32_t *v, int32_t n) { merge_runs(e, s, v, n, 1); }
void dsp_merge_qb(const ds_engine_t *e, dsp_t *s, int32_t *v, int32_t n) { merge_runs(e, s, v, n, 0); }

static _Thread_local const dsp_t *cmp_s;
static int qcmp_tenant(const void *x, const void *y) { return cmp_tenant(cmp_s, *(const int32_t *)x, *(const int32_t *)y); }

void dsp_sort_qg(const ds_engine_t *e, dsp_t *s, int32_t *v, int32_t n, int64_t now)
{
    for (int32_t i = 0; i < n; i++) dsp_set_key(e, s, v[i], now);
    cmp_s = s;
    qsort(v, (size_t)n, sizeof *v, qcmp_tenant);
    dsp_merge_qg(e, s, v, n);
}

/* The queue as the status page shows it: every pending job in QG's order (QAD band, then predicted
 * remaining time, submit, id), whatever class the next pass gives it. */
int dsp_cmp_band(const dsp_t *s, int32_t a, int32_t b)
{
    int ba = dsp_band(s, s->t->jobs[a].tenant), bb = dsp_band(s, s->t->jobs[b].tenant);
    if (ba != bb) return ba < bb ? -1 : 1;
    return cmp_rem(s, a, b);
}

static _Thread_local const dsp_t *po_s;
static int qcmp_band(const void *x, const void *y) { return dsp_cmp_band(po_s, *(const int32_t *)x, *(const int32_t *)y); }

int32_t dsp_pending_order(const ds_engine_t *e, const void *state, int32_t *out, int32_t max)
{
    (void)e;
    const dsp_t *s = state;
    int32_t n = 0;
    for (int32_t p = 0; p < s->nparts; p++) n += s->pend[p].n;
    int32_t *v = ds_xmalloc((size_t)(n ? n : 1) * sizeof *v), k = 0;
    for (int32_t p = 0; p < s->nparts; p++) {
        if (!s->pend[p].n) continue; /* a list never used has no array */
        memcpy(v + k, s->pend[p].v, (size_t)s->pend[p].n * sizeof *v);
        k += s->pend[p].n;
    }
    po_s = s;
    qsort(v, (size_t)n, sizeof *v, qcmp_band);
    memcpy(out, v, (size_t)DS_MIN(n, max) * sizeof *v);
    free(v);
    return n;
}
