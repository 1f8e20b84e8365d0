/* prod.c: the shared pieces of the production-scheduler models: ordered job lists, the priority class
 * at submit, option parsing and the queue heap (prod.h). */
#include "prod/prod.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void pq_fam_init(pq_fam_t *f, int32_t nlists, int32_t njobs)
{
    memset(f, 0, sizeof *f);
    size_t nj = (size_t)(njobs > 0 ? njobs : 1);
    f->nl = nlists;
    f->l = ds_xcalloc((size_t)(nlists > 0 ? nlists : 1), sizeof *f->l);
    f->stamp = ds_xcalloc(nj, sizeof *f->stamp);
    f->where = ds_xmalloc(nj * sizeof *f->where);
    f->key = ds_xcalloc(nj, sizeof *f->key);
    for (size_t j = 0; j < nj; j++) f->where[j] = -1;
}

void pq_fam_free(pq_fam_t *f)
{
    for (int32_t i = 0; i < f->nl; i++) free(f->l[i].a);
    free(f->l);
    free(f->stamp);
    free(f->where);
    free(f->key);
    free(f->defer);
    free(f->defer_list);
    memset(f, 0, sizeof *f);
}

static void compact(pq_fam_t *f, pq_list_t *l)
{
    int32_t w = 0;
    for (int32_t i = l->head; i < l->n; i++)
        if (pq_live(f, &l->a[i])) l->a[w++] = l->a[i];
    l->n = w;
    l->head = 0;
    l->epoch++;
}

static int ent_less(const pq_ent_t *x, int64_t key, int32_t job)
{
    return x->key < key || (x->key == key && x->job < job);
}

static void insert(pq_fam_t *f, pq_list_t *l, int64_t key, int32_t job, uint32_t stamp)
{
    int32_t dead = l->n - l->head - l->live;
    if (dead > 64 && dead > l->live) compact(f, l);
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->a = ds_xrealloc(l->a, (size_t)l->cap * sizeof *l->a);
    }
    int32_t pos = l->n;
    if (pos > l->head && !ent_less(&l->a[pos - 1], key, job)) {
        int32_t lo = l->head, hi = l->n; /* first entry not less than (key, job) */
        while (lo < hi) {
            int32_t m = lo + (hi - lo) / 2;
            if (ent_less(&l->a[m], key, job)) lo = m + 1;
            else hi = m;
        }
        pos = lo;
        l->epoch++;
        memmove(&l->a[pos + 1], &l->a[pos], (size_t)(l->n - pos) * sizeof *l->a);
    }
    l->a[pos] = (pq_ent_t){key, job, stamp};
    l->n++;
}

void pq_drop(pq_fam_t *f, int32_t job)
{
    int32_t w = f->where[job];
    if (w < 0) return;
    f->l[w].live--;
    f->stamp[job]++;
    f->where[job] = -1;
}

void pq_put(pq_fam_t *f, int32_t list, int32_t job, int64_t key)
{
    pq_drop(f, job);
    f->where[job] = list;
    f->key[job] = key;
    f->l[list].live++;
    if (!f->frozen) {
        insert(f, &f->l[list], key, job, f->stamp[job]);
        return;
    }
    if (f->ndefer == f->capdefer) {
        f->capdefer = f->capdefer ? f->capdefer * 2 : 16;
        f->defer = ds_xrealloc(f->defer, (size_t)f->capdefer * sizeof *f->defer);
        f->defer_list = ds_xrealloc(f->defer_list, (size_t)f->capdefer * sizeof *f->defer_list);
    }
    f->defer_list[f->ndefer] = list;
    f->defer[f->ndefer++] = (pq_ent_t){key, job, f->stamp[job]};
}

int32_t pq_next(pq_fam_t *f, int32_t list, int32_t i)
{
    pq_list_t *l = &f->l[list];
    if (i <= l->head) {
        while (l->head < l->n && !pq_live(f, &l->a[l->head])) l->head++;
        return l->head;
    }
    while (i < l->n && !pq_live(f, &l->a[i])) i++;
    return i;
}

int32_t pq_prev(const pq_fam_t *f, int32_t list, int32_t i)
{
    const pq_list_t *l = &f->l[list];
    if (i >= l->n) i = l->n - 1;
    while (i >= l->head && !pq_live(f, &l->a[i])) i--;
    return i >= l->head ? i : -1;
}

void pq_freeze(pq_fam_t *f) { f->frozen = 1; }

void pq_thaw(pq_fam_t *f)
{
    f->frozen = 0;
    for (int32_t k = 0; k < f->ndefer; k++) {
        const pq_ent_t *d = &f->defer[k];
        /* a job dropped or filed again after this insert was queued: its stamp moved on */
        if (d->stamp != f->stamp[d->job]) continue;
        insert(f, &f->l[f->defer_list[k]], d->key, d->job, d->stamp);
    }
    f->ndefer = 0;
}

int pq_class_at_submit(const ds_engine_t *e, int mode, int64_t g_demand, int32_t job)
{
    const ds_job_t *jb = &e->trace->jobs[job];
    int64_t q = e->tenant_quota[jb->tenant];
    if (jb->klass == DS_CLASS_BE || jb->gpus > q) return DS_CLASS_BE;
    if (jb->klass == DS_CLASS_G) return DS_CLASS_G;
    switch (mode) {
    case PQ_CLASSES_ALL_G: return DS_CLASS_G;
    case PQ_CLASSES_ALL_BE: return DS_CLASS_BE;
    default: return g_demand + jb->gpus <= q ? DS_CLASS_G : DS_CLASS_BE;
    }
}

void pq_part_tenants(const ds_engine_t *e, int32_t **tenants, int32_t **off, int32_t *local)
{
    int32_t nt = e->trace->ntenants;
    int32_t *pt = ds_xmalloc((size_t)(nt ? nt : 1) * sizeof *pt), *po = ds_xcalloc((size_t)e->nparts + 1, sizeof *po);
    for (int32_t i = 0; i < nt; i++) po[e->tenant_part[i] + 1]++;
    for (int32_t p = 0; p < e->nparts; p++) po[p + 1] += po[p];
    int32_t *fill = ds_xcalloc((size_t)e->nparts + 1, sizeof *fill);
    for (int32_t i = 0; i < nt; i++) {
        int32_t p = e->tenant_part[i];
        if (local) local[i] = fill[p];
        pt[po[p] + fill[p]++] = i;
    }
    free(fill);
    *tenants = pt;
    *off = po;
}

static const char *const class_names[] = {"quota", "all-g", "all-be"};

int pq_parse_classes(const char *key, const char *value, int *out, ds_error_t *err)
{
    for (int i = 0; i < 3; i++)
        if (!strcmp(value, class_names[i])) {
            *out = i;
            return DS_OK;
        }
    ds_error_set(err, NULL, 0, NULL, "option --%s: '%s' is not quota, all-g or all-be", key, value);
    return DS_EINVAL;
}

const char *pq_classes_name(int mode) { return mode >= 0 && mode < 3 ? class_names[mode] : "?"; }

int pq_parse_double(const char *key, const char *value, double lo, double hi, double *out, ds_error_t *err)
{
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (!*value || *end || errno || !isfinite(v) || v < lo || v > hi) {
        ds_error_set(err, NULL, 0, NULL, "option --%s: '%s' is not a number in [%g, %g]", key, value, lo, hi);
        return DS_EINVAL;
    }
    *out = v;
    return DS_OK;
}

int pq_parse_seconds(const char *key, const char *value, int64_t *out, ds_error_t *err)
{
    char *end;
    errno = 0;
    long long v = strtoll(value, &end, 10);
    int64_t mult = 1;
    if (end != value && *end && !end[1]) {
        if (*end == 's') mult = 1;
        else if (*end == 'm') mult = 60;
        else if (*end == 'h') mult = 3600;
        else mult = 0;
        if (mult) end++;
    }
    if (end == value || *end || errno || v < 0 || v > 366LL * 86400 || mult == 0 || v * mult > 366LL * 86400) {
        ds_error_set(err, NULL, 0, NULL, "option --%s: '%s' is not a duration (seconds, or N with s, m or h) of at most 366 days",
                     key, value);
        return DS_EINVAL;
    }
    *out = (int64_t)v * mult;
    return DS_OK;
}

void pq_heap_init(pq_heap_t *h, int32_t cap, pq_less_fn less, const void *ctx)
{
    memset(h, 0, sizeof *h);
    h->cap = cap > 0 ? cap : 1;
    h->a = ds_xmalloc((size_t)h->cap * sizeof *h->a);
    h->pos = ds_xmalloc((size_t)h->cap * sizeof *h->pos);
    for (int32_t i = 0; i < h->cap; i++) h->pos[i] = -1;
    h->less = less;
    h->ctx = ctx;
}

void pq_heap_free(pq_heap_t *h)
{
    free(h->a);
    free(h->pos);
    memset(h, 0, sizeof *h);
}

void pq_heap_clear(pq_heap_t *h)
{
    for (int32_t i = 0; i < h->n; i++) h->pos[h->a[i]] = -1;
    h->n = 0;
}

static void swap_at(pq_heap_t *h, int32_t i, int32_t k)
{
    int32_t x = h->a[i];
    h->a[i] = h->a[k];
    h->a[k] = x;
    h->pos[h->a[i]] = i;
    h->pos[h->a[k]] = k;
}

static void up(pq_heap_t *h, int32_t i)
{
    while (i > 0) {
        int32_t p = (i - 1) / 2;
        if (!h->less(h->ctx, h->a[i], h->a[p])) break;
        swap_at(h, i, p);
        i = p;
    }
}

static void down(pq_heap_t *h, int32_t i)
{
    for (;;) {
        int32_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < h->n && h->less(h->ctx, h->a[l], h->a[m])) m = l;
        if (r < h->n && h->less(h->ctx, h->a[r], h->a[m])) m = r;
        if (m == i) return;
        swap_at(h, i, m);
        i = m;
    }
}

void pq_heap_push(pq_heap_t *h, int32_t x)
{
    DS_ASSERT(x >= 0 && x < h->cap && h->pos[x] < 0);
    h->a[h->n] = x;
    h->pos[x] = h->n++;
    up(h, h->n - 1);
}

int32_t pq_heap_top(const pq_heap_t *h) { return h->n ? h->a[0] : -1; }

void pq_heap_pop(pq_heap_t *h)
{
    if (!h->n) return;
    int32_t x = h->a[0];
    h->n--;
    if (h->n) {
        h->a[0] = h->a[h->n];
        h->pos[h->a[0]] = 0;
        down(h, 0);
    }
    h->pos[x] = -1;
}

void pq_heap_remove(pq_heap_t *h, int32_t x)
{
    int32_t i = h->pos[x];
    if (i < 0) return;
    h->n--;
    if (i != h->n) {
        int32_t y = h->a[h->n];
        h->a[i] = y;
        h->pos[y] = i;
        up(h, i);
        down(h, h->pos[y]);
    }
    h->pos[x] = -1;
}

void pq_heap_fix(pq_heap_t *h, int32_t x)
{
    int32_t i = h->pos[x];
    if (i < 0) return;
    up(h, i);
    down(h, h->pos[x]);
}

void pq_fit_refresh(pq_fit_t *f, const ds_engine_t *e, int32_t part)
{
    f->gpn = e->cfg.gpus_per_node;
    f->mf = ds_engine_max_node_free(e, part, &f->nfull);
    /* a failure on several GPU types may be the job's type's, not its size's: no memo there */
    f->memo = e->cfg.mem_per_node <= 0 && e->ntypes < 2;
    for (int32_t g = 0; g <= DS_MAX_GPUS_PER_NODE; g++) f->failc[g] = INT32_MAX;
}

int pq_fit_may(const pq_fit_t *f, int32_t g, int32_t c)
{
    if (g > f->gpn) return g / f->gpn <= f->nfull;
    if (g > f->mf) return 0;
    for (int32_t h = 1; f->memo && h <= g; h++)
        if (f->failc[h] <= c) return 0;
    return 1;
}

void pq_fit_failed(pq_fit_t *f, int32_t g, int32_t c)
{
    if (g <= f->gpn && c < f->failc[g]) f->failc[g] = c;
}
