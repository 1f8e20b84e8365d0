/* jheap.c: indexed binary heap of job indices (sift up/down with a position table). */
#include "jheap.h"

#include <stdlib.h>

void ds_jheap_init(ds_jheap_t *h, int32_t *pos, ds_jheap_cmp cmp, const void *ctx)
{
    h->a = NULL;
    h->n = h->cap = 0;
    h->pos = pos;
    h->cmp = cmp;
    h->ctx = ctx;
}

void ds_jheap_free(ds_jheap_t *h)
{
    free(h->a);
    h->a = NULL;
    h->n = h->cap = 0;
}

static void set(ds_jheap_t *h, int32_t i, int32_t job)
{
    h->a[i] = job;
    h->pos[job] = i;
}

static void up(ds_jheap_t *h, int32_t i)
{
    int32_t job = h->a[i];
    while (i > 0) {
        int32_t p = (i - 1) / 2;
        if (h->cmp(h->ctx, job, h->a[p]) >= 0) break;
        set(h, i, h->a[p]);
        i = p;
    }
    set(h, i, job);
}

static void down(ds_jheap_t *h, int32_t i)
{
    int32_t job = h->a[i];
    for (;;) {
        int32_t l = 2 * i + 1, r = l + 1, m = i;
        int32_t best = job;
        if (l < h->n && h->cmp(h->ctx, h->a[l], best) < 0) { m = l; best = h->a[l]; }
        if (r < h->n && h->cmp(h->ctx, h->a[r], best) < 0) { m = r; best = h->a[r]; }
        if (m == i) break;
        set(h, i, h->a[m]);
        i = m;
    }
    set(h, i, job);
}

void ds_jheap_push(ds_jheap_t *h, int32_t job)
{
    if (h->n == h->cap) {
        h->cap = h->cap ? h->cap * 2 : 64;
        h->a = ds_xrealloc(h->a, (size_t)h->cap * sizeof *h->a);
    }
    set(h, h->n++, job);
    up(h, h->n - 1);
}

int32_t ds_jheap_top(const ds_jheap_t *h) { return h->n ? h->a[0] : -1; }

void ds_jheap_remove(ds_jheap_t *h, int32_t job)
{
    int32_t i = h->pos[job];
    DS_ASSERT(i >= 0 && i < h->n && h->a[i] == job);
    h->pos[job] = -1;
    int32_t last = h->a[--h->n];
    if (i == h->n) return;
    set(h, i, last);
    up(h, i);
    down(h, h->pos[last]);
}

int32_t ds_jheap_pop(ds_jheap_t *h)
{
    if (!h->n) return -1;
    int32_t top = h->a[0];
    ds_jheap_remove(h, top);
    return top;
}

