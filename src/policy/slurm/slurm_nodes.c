/* slurm_nodes.c: per-node answers for backfill's will-run test, kept current as jobs start and end, so
 * that one test costs a few tree walks instead of a pass over every node and running job.
 *
 * For every node n and g = 1 .. GPUs per node: the removal (expected end, job) after which n first has g
 * GPUs free as its running jobs leave in order of expected end ({-1, -1}: it has them now); slot 0 holds
 * its first job to leave. Mode 1 is the same for a job that may preempt: the preemptable jobs count as
 * gone from the start. A segment tree per (mode, g) gives the least such key over a range of nodes; a second
 * one per (mode, g) leaves out the nodes the current backfill pass has reserved (their leaves are none), as
 * a test that passes by every reserved node asks for the least key of the rest. */
#include "slurm_internal.h"

#include <stdlib.h>
#include <string.h>

static int32_t ntrees(const slm_state_t *s) { return (s->cfg.preempt ? 2 : 1) * (s->e->cfg.gpus_per_node + 1); }

static slm_key_t *tree(slm_state_t *s, int32_t t) { return &s->seg[(size_t)t * 2 * (size_t)s->segsize]; }
/* The same tree without the reserved nodes. */
static slm_key_t *utree(slm_state_t *s, int32_t t) { return tree(s, ntrees(s) + t); }

void slm_nodes_init(slm_state_t *s)
{
    int32_t n = s->e->nnodes;
    s->segsize = 1;
    while (s->segsize < n) s->segsize *= 2;
    size_t cells = (size_t)ntrees(s) * 2 * 2 * (size_t)s->segsize;
    s->seg = ds_xmalloc(cells * sizeof *s->seg);
    for (size_t i = 0; i < cells; i++) s->seg[i] = SLM_KEY_NONE;
    s->ndirty = 0;
    for (int32_t i = 0; i < n; i++) slm_nodes_dirty(s, i);
}

void slm_nodes_free(slm_state_t *s)
{
    free(s->seg);
    s->seg = NULL;
    free(s->kheap);
    s->kheap = NULL;
    for (int m = 0; m < 2; m++) free(s->ko[m].k), s->ko[m].k = NULL;
    s->nkheap = s->capkheap = 0;
}

void slm_nodes_dirty(slm_state_t *s, int32_t n)
{
    if (s->node_dirty[n]) return;
    s->node_dirty[n] = 1;
    s->dirty[s->ndirty++] = n;
}

/* A leaf and its ancestors; an ancestor whose least key stays the same leaves the ones above it as they are. */
static void put(slm_key_t *a, int32_t i, slm_key_t k)
{
    a[i] = k;
    for (i /= 2; i >= 1; i /= 2) {
        slm_key_t m = slm_key_lt(a[2 * i + 1], a[2 * i]) ? a[2 * i + 1] : a[2 * i];
        if (m.end == a[i].end && m.job == a[i].job && m.node == a[i].node) break;
        a[i] = m;
    }
}

static void set_leaf(slm_state_t *s, int32_t t, int32_t n, slm_key_t k)
{
    s->keys_gen++;
    k.node = n;
    put(tree(s, t), s->segsize + n, k);
    put(utree(s, t), s->segsize + n, s->rv[n].n > 0 ? SLM_KEY_NONE : k);
}

void slm_nodes_reserved(slm_state_t *s, int32_t n, int reserved)
{
    if (!reserved) s->keys_gen++; /* a node returns: the cached orders miss it (a reserved one is skipped) */
    for (int32_t t = 0; t < ntrees(s); t++)
        put(utree(s, t), s->segsize + n, reserved ? SLM_KEY_NONE : tree(s, t)[s->segsize + n]);
}

/* Recomputes node n's keys in both modes. */
static void node_keys(slm_state_t *s, int32_t n, int64_t now)
{
    const ds_engine_t *e = s->e;
    int32_t gpn = e->cfg.gpus_per_node;
    for (int mode = 0; mode < (s->cfg.preempt ? 2 : 1); mode++) {
        int64_t base = e->nodes[n].nfree;
        for (int32_t i = 0; mode && i < s->node_nj[n]; i++)
            if (slm_preemptable(s, s->node_job[n * gpn + i], now)) base += s->node_ngpu[n * gpn + i];
        slm_key_t r[DS_MAX_GPUS_PER_NODE + 1];
        r[0] = SLM_KEY_NONE;
        for (int32_t g = 1; g <= gpn; g++) r[g] = g <= base ? (slm_key_t){-1, -1, n} : SLM_KEY_NONE;
        for (int32_t i = 0; i < s->node_nj[n]; i++) {
            int32_t j = s->node_job[n * gpn + i];
            if (mode && slm_preemptable(s, j, now)) continue;
            slm_key_t k = {s->end_est[j], j, n};
            if (r[0].job == INT32_MAX) r[0] = k;
            int64_t nb = base + s->node_ngpu[n * gpn + i];
            for (int64_t g = base + 1; g <= nb && g <= gpn; g++) r[g] = k;
            base = nb;
        }
        for (int32_t g = 0; g <= gpn; g++) set_leaf(s, mode * (gpn + 1) + g, n, r[g]);
    }
}

void slm_nodes_flush(slm_state_t *s, int64_t now)
{
    for (int32_t i = 0; i < s->ndirty; i++) {
        int32_t n = s->dirty[i];
        s->node_dirty[n] = 0;
        node_keys(s, n, now);
    }
    s->ndirty = 0;
}

slm_key_t slm_nodes_key(slm_state_t *s, int mode, int32_t g, int32_t n)
{
    return tree(s, mode * (s->e->cfg.gpus_per_node + 1) + g)[s->segsize + n];
}

static slm_key_t range_min(const slm_key_t *a, int32_t segsize, int32_t lo, int32_t hi)
{
    slm_key_t best = SLM_KEY_NONE;
    for (int32_t l = lo + segsize, r = hi + segsize; l < r; l /= 2, r /= 2) {
        if (l & 1) {
            if (slm_key_lt(a[l], best)) best = a[l];
            l++;
        }
        if (r & 1) {
            r--;
            if (slm_key_lt(a[r], best)) best = a[r];
        }
    }
    return best;
}

static slm_key_t min_skipping(const slm_key_t *a, int32_t segsize, int32_t lo, int32_t hi, const int32_t *skip,
                              int32_t nskip)
{
    slm_key_t best = SLM_KEY_NONE;
    int32_t from = lo;
    for (int32_t i = 0; i <= nskip; i++) {
        int32_t to = i < nskip ? skip[i] : hi;
        if (to > from) {
            slm_key_t k = range_min(a, segsize, from, to);
            if (slm_key_lt(k, best)) best = k;
        }
        if (i < nskip) from = skip[i] + 1;
    }
    return best;
}

slm_key_t slm_nodes_min(slm_state_t *s, int mode, int32_t g, int32_t lo, int32_t hi, const int32_t *skip, int32_t nskip)
{
    return min_skipping(tree(s, mode * (s->e->cfg.gpus_per_node + 1) + g), s->segsize, lo, hi, skip, nskip);
}

slm_key_t slm_nodes_min_unreserved(slm_state_t *s, int mode, int32_t g, int32_t lo, int32_t hi, const int32_t *skip,
                                   int32_t nskip)
{
    return min_skipping(utree(s, mode * (s->e->cfg.gpus_per_node + 1) + g), s->segsize, lo, hi, skip, nskip);
}

/* Best-first over the tree's cells: a min-heap of cells by their subtree's least key. */
static int cell_lt(const slm_key_t *a, int32_t x, int32_t y) { return slm_key_lt(a[x], a[y]); }

static void cell_push(slm_state_t *s, slm_kiter_t *it, int32_t c)
{
    if (it->a[c].job == INT32_MAX) return; /* nothing below it is a key the caller takes */
    if (s->nkheap == s->capkheap) {
        s->capkheap = s->capkheap ? 2 * s->capkheap : 256;
        s->kheap = ds_xrealloc(s->kheap, (size_t)s->capkheap * sizeof *s->kheap);
    }
    int32_t *h = s->kheap, i = s->nkheap++;
    for (; i > 0 && cell_lt(it->a, c, h[(i - 1) / 2]); i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
    h[i] = c;
}

static int32_t cell_pop(slm_state_t *s, slm_kiter_t *it)
{
    int32_t *h = s->kheap, top = h[0], last = h[--s->nkheap], n = s->nkheap, i = 0;
    for (;;) {
        int32_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && cell_lt(it->a, h[c + 1], h[c])) c++;
        if (!cell_lt(it->a, h[c], last)) break;
        h[i] = h[c], i = c;
    }
    if (n > 0) h[i] = last;
    return top;
}

void slm_nodes_iter_begin(slm_state_t *s, slm_kiter_t *it, int mode, int32_t g, int32_t lo, int32_t hi)
{
    it->a = utree(s, mode * (s->e->cfg.gpus_per_node + 1) + g);
    s->nkheap = 0;
    for (int32_t l = lo + s->segsize, r = hi + s->segsize; l < r; l /= 2, r /= 2) {
        if (l & 1) cell_push(s, it, l++);
        if (r & 1) cell_push(s, it, --r);
    }
}

slm_key_t slm_nodes_iter_next(slm_state_t *s, slm_kiter_t *it)
{
    while (s->nkheap > 0) {
        int32_t c = cell_pop(s, it);
        if (c >= s->segsize) return it->a[c];
        cell_push(s, it, 2 * c);
        cell_push(s, it, 2 * c + 1);
    }
    return SLM_KEY_NONE;
}

/* Fills the cached order of mode's whole-node slot with up to want unreserved keys. */
static void order_build(slm_state_t *s, slm_korder_t *o, int mode, int32_t lo, int32_t hi, int32_t want)
{
    if (want > hi - lo) want = hi - lo;
    if (o->cap < want) {
        o->cap = want;
        o->k = ds_xrealloc(o->k, (size_t)o->cap * sizeof *o->k);
    }
    slm_kiter_t it;
    slm_nodes_iter_begin(s, &it, mode, s->e->cfg.gpus_per_node, lo, hi);
    o->n = 0, o->complete = 0;
    while (o->n < want) {
        slm_key_t x = slm_nodes_iter_next(s, &it);
        if (x.job == INT32_MAX) {
            o->complete = 1;
            break;
        }
        o->k[o->n++] = x;
    }
    if (o->n == hi - lo) o->complete = 1;
    o->gen = s->keys_gen, o->lo = lo, o->hi = hi;
}

void slm_nodes_whole_begin(slm_state_t *s, slm_kcur_t *c, int mode, int32_t lo, int32_t hi, int32_t want)
{
    slm_korder_t *o = &s->ko[mode];
    if (o->gen != s->keys_gen || o->lo != lo || o->hi != hi || !o->k) order_build(s, o, mode, lo, hi, DS_MAX(64, 2 * want));
    c->mode = mode, c->i = 0, c->got = 0;
}

slm_key_t slm_nodes_whole_next(slm_state_t *s, slm_kcur_t *c)
{
    slm_korder_t *o = &s->ko[c->mode];
    for (;;) {
        while (c->i < o->n) {
            slm_key_t x = o->k[c->i++];
            if (s->rv[x.node].n > 0) continue; /* reserved since the order was built */
            c->got++;
            return x;
        }
        if (o->complete) return SLM_KEY_NONE;
        /* more than the order holds: again, longer; nothing changed since this cursor began, so the new
         * order (of the unreserved nodes only) repeats the c->got keys given */
        order_build(s, o, c->mode, o->lo, o->hi, 2 * o->cap);
        c->i = c->got;
    }
}
