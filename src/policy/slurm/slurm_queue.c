/* slurm_queue.c: the simulated Slurm's queue: job priorities (priority/multifactor) and the order the main
 * scheduler and backfill walk the pending jobs in (sort_job_queue2).
 *
 * A job's priority, as priority_multifactor.c sets it at submission and at every PriorityCalcPeriod:
 * trunc(W_age x age + W_fs x fairshare + W_qos x QOS priority / highest QOS priority), at least 1, with
 * age = seconds eligible by the last update / PriorityMaxAge (at most 1; 0 for a job submitted since). The
 * order: a job that may preempt the other first (preempt/qos), then priority, submit time and job id.
 *
 * Jobs are kept in groups, one per association, QOS and size class (GPUs 1 .. per node, or more): inside a
 * group the fair-share and QOS terms are the same, so a group's order is its jobs' eligibility order and
 * only moves for requeued jobs (whose priority Slurm keeps from before the requeue until the next update,
 * while their submit time is reset). The groups of a partition sit in a binary heap by their first job; a
 * walk yields the pending jobs in order by exploring that heap lazily (the k smallest of a heap), so a pass
 * that looks at k jobs costs about k log k, not the number of groups; the heap is repaired after the walk
 * for the groups whose first job started. Splitting by size leaves the order of a walk as it was (the
 * merge of sorted lists is the same whatever the lists), and lets a walk pass by a whole size class its
 * account's GrpTRES refuses instead of looking at each of its jobs. */
#include "slurm_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Size classes: 0 .. gpn - 1 for 1 .. gpn GPUs, gpn above a node. */
static int32_t nclass(const slm_state_t *s) { return s->e->cfg.gpus_per_node + 1; }
static int32_t size_class(const slm_state_t *s, int32_t j)
{
    int32_t g = s->e->trace->jobs[j].gpus, gpn = s->e->cfg.gpus_per_node;
    return g > gpn ? gpn : g < 1 ? 0 : g - 1;
}
/* A job's group: its association x QOS (2 a + qos, whose priority constants it has), then its size class. */
static int32_t group_of(const slm_state_t *s, int32_t j)
{
    return (2 * s->assoc[j] + s->qos[j]) * nclass(s) + size_class(s, j);
}

/* ---- priorities ---- */

/* b: association x QOS (2 a + qos) */
static void group_const(slm_state_t *s, int32_t b)
{
    const slm_config_t *c = &s->cfg;
    int32_t g = b, qos = g & 1, qp = qos == SLM_QOS_NORMAL ? c->qos_prio_normal : c->qos_prio_borrow;
    int32_t qmax = DS_MAX(c->qos_prio_normal, c->qos_prio_borrow);
    double fs = c->w_fs > 0 ? s->tree.fs[g / 2] : 0;
    double q = qp > 0 && qmax > 0 && c->w_qos > 0 ? (double)qp / (double)qmax : 0;
    s->gconst[g] = c->w_fs * fs + c->w_qos * q;
}

void slm_queue_fresh(slm_state_t *s)
{
    if (!s->fs_stale) return;
    slm_tree_rank(&s->tree);
    s->fs_stale = 0;
    for (int32_t b = 0; b < s->ngroups / nclass(s); b++) group_const(s, b);
    s->prio_gen++;
}

int64_t slm_prio(const slm_state_t *s, int32_t j)
{
    if (s->prio[j] >= 0) return s->prio[j]; /* frozen at its requeue until the next update */
    if (s->pgen[j] == s->prio_gen) return s->pcache[j];
    const slm_config_t *c = &s->cfg;
    double age = 0;
    if (c->w_age > 0 && s->last_calc > s->accrue[j]) {
        int64_t d = s->last_calc - s->accrue[j];
        age = d < c->max_age ? (double)d / (double)c->max_age : 1.0;
    }
    double p = c->w_age * age + s->gconst[2 * s->assoc[j] + s->qos[j]];
    if (p < 1) p = 1;
    if (p > 4294967295.0) p = 4294967295.0;
    /* a cache, not state: the value follows from the last update's time and constants */
    slm_state_t *w = (slm_state_t *)s;
    w->pcache[j] = (int64_t)p;
    w->pgen[j] = s->prio_gen;
    return (int64_t)p;
}

int slm_prio_cmp(const slm_state_t *s, int32_t a, int32_t b)
{
    if (s->cfg.preempt && s->qos[a] != s->qos[b]) return s->qos[a] == SLM_QOS_NORMAL ? -1 : 1;
    int64_t pa = slm_prio(s, a), pb = slm_prio(s, b);
    if (pa != pb) return pa > pb ? -1 : 1;
    if (s->order_submit[a] != s->order_submit[b]) return s->order_submit[a] < s->order_submit[b] ? -1 : 1;
    return (a > b) - (a < b);
}

/* ---- groups and their heap ---- */

static int32_t head(slm_state_t *s, slm_group_t *g)
{
    while (g->head < g->l.n && g->l.stamp[g->head] != s->pstamp[g->l.job[g->head]]) g->head++;
    return g->head < g->l.n ? g->l.job[g->head] : -1;
}

/* A group left with no pending job (its last one started during a walk) ranks after every other until the
 * repair takes it out of the heap. */
static int group_less(slm_state_t *s, int32_t a, int32_t b)
{
    int32_t ha = head(s, &s->groups[a]), hb = head(s, &s->groups[b]);
    if (ha < 0 || hb < 0) return hb < 0 && ha >= 0;
    return slm_prio_cmp(s, ha, hb) < 0;
}

static void heap_set(slm_state_t *s, slm_part_t *P, int32_t i, int32_t g)
{
    P->heap[i] = g;
    s->groups[g].hpos = i;
}

static void sift_up(slm_state_t *s, slm_part_t *P, int32_t i)
{
    int32_t g = P->heap[i];
    while (i > 0 && group_less(s, g, P->heap[(i - 1) / 2])) heap_set(s, P, i, P->heap[(i - 1) / 2]), i = (i - 1) / 2;
    heap_set(s, P, i, g);
}

static void sift_down(slm_state_t *s, slm_part_t *P, int32_t i)
{
    int32_t g = P->heap[i];
    for (;;) {
        int32_t l = 2 * i + 1, r = l + 1, m = -1;
        if (l < P->nheap && group_less(s, P->heap[l], g)) m = l;
        if (r < P->nheap && group_less(s, P->heap[r], m < 0 ? g : P->heap[l])) m = r;
        if (m < 0) break;
        heap_set(s, P, i, P->heap[m]);
        i = m;
    }
    heap_set(s, P, i, g);
}

static void heap_remove(slm_state_t *s, slm_part_t *P, int32_t g)
{
    int32_t i = s->groups[g].hpos, last = P->heap[--P->nheap];
    s->groups[g].hpos = -1;
    if (i == P->nheap) return;
    heap_set(s, P, i, last);
    sift_down(s, P, i);
    sift_up(s, P, s->groups[last].hpos);
}

static void heap_build(slm_state_t *s, slm_part_t *P)
{
    for (int32_t i = P->nheap / 2 - 1; i >= 0; i--) sift_down(s, P, i);
}

/* Inserts in order (a requeued job may go before others: its frozen priority). */
static void group_insert(slm_state_t *s, slm_group_t *g, int32_t j)
{
    slm_list_t *l = &g->l;
    int32_t a = g->head, b = l->n;
    while (a < b) {
        int32_t m = a + (b - a) / 2;
        if (slm_prio_cmp(s, l->job[m], j) < 0) a = m + 1;
        else b = m;
    }
    slm_list_push(l, s->pstamp, j); /* grows the arrays (and counts it live); the entry then moves to a */
    memmove(&l->job[a + 1], &l->job[a], (size_t)(l->n - 1 - a) * sizeof *l->job);
    memmove(&l->stamp[a + 1], &l->stamp[a], (size_t)(l->n - 1 - a) * sizeof *l->stamp);
    l->job[a] = j;
    l->stamp[a] = s->pstamp[j];
    if (a < g->head) g->head = a;
}

void slm_queue_add(slm_state_t *s, int32_t j)
{
    int32_t gi = group_of(s, j);
    slm_group_t *g = &s->groups[gi];
    slm_part_t *P = &s->parts[s->e->js[j].part];
    P->hist[DS_MIN(s->e->trace->jobs[j].gpus, s->e->cfg.gpus_per_node)]++;
    s->nqueued++;
    s->inq[j] = 1;
    if (s->prio[j] >= 0) g->nfrozen++, g->requeued = 1;
    int was = g->hpos >= 0;
    if (!was) g->l.n = g->l.live = 0, g->head = 0; /* only dead entries were left */
    int32_t old = was ? head(s, g) : -1;
    /* a new job ranks last in its group (age 0, latest submit): mostly an append after the last live one
     * (a dead entry's key may have moved: a requeued job's) */
    int32_t last = g->l.n - 1;
    while (last >= g->head && g->l.stamp[last] != s->pstamp[g->l.job[last]]) last--;
    if (last < g->head || slm_prio_cmp(s, g->l.job[last], j) < 0) {
        slm_list_push(&g->l, s->pstamp, j);
    } else {
        slm_list_compact(&g->l, s->pstamp); /* only live entries, sorted, for the search */
        g->head = 0;
        group_insert(s, g, j);
    }
    if (!was) {
        if (P->nheap == P->capheap) {
            P->capheap = P->capheap ? 2 * P->capheap : 16;
            P->heap = ds_xrealloc(P->heap, (size_t)P->capheap * sizeof *P->heap);
        }
        g->part = s->e->js[j].part;
        heap_set(s, P, P->nheap++, gi);
        sift_up(s, P, g->hpos);
    } else if (head(s, g) != old) {
        sift_up(s, P, g->hpos);
    }
}

void slm_queue_started(slm_state_t *s, int32_t j)
{
    slm_group_t *g = &s->groups[group_of(s, j)];
    s->parts[s->e->js[j].part].hist[DS_MIN(s->e->trace->jobs[j].gpus, s->e->cfg.gpus_per_node)]--;
    s->nqueued--;
    s->inq[j] = 0;
    if (s->prio[j] >= 0) g->nfrozen--;
    g->l.live--;
    if (!g->dirty) { /* its place in the heap is repaired when the walk is over */
        g->dirty = 1;
        s->dirtyg[s->ndirtyg++] = group_of(s, j);
    }
    if (!s->in_walk) slm_queue_repair(s);
}

static int by_hpos_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

/* The dirty groups' first jobs can only have moved back (their keys grew): sifting them down deepest first,
 * as a heap build does, leaves every subtree a heap before its root is sifted (in another order a group
 * sifted first could end up above a smaller key that a deeper dirty group's sift moves up). Then the
 * groups with no pending job left, which rank last, are taken out. */
void slm_queue_repair(slm_state_t *s)
{
    int32_t n = s->ndirtyg;
    if (n == 0) return;
    if (n > 1) {
        int64_t *key = ds_xmalloc((size_t)n * sizeof *key);
        for (int32_t i = 0; i < n; i++) key[i] = ((int64_t)(s->groups[s->dirtyg[i]].hpos + 1) << 32) | (uint32_t)s->dirtyg[i];
        qsort(key, (size_t)n, sizeof *key, by_hpos_desc);
        for (int32_t i = 0; i < n; i++) s->dirtyg[i] = (int32_t)(key[i] & 0xffffffff);
        free(key);
    }
    for (int32_t i = 0; i < n; i++) {
        slm_group_t *g = &s->groups[s->dirtyg[i]];
        if (g->hpos >= 0) sift_down(s, &s->parts[g->part], g->hpos);
    }
    for (int32_t i = 0; i < n; i++) {
        slm_group_t *g = &s->groups[s->dirtyg[i]];
        g->dirty = 0;
        if (g->hpos >= 0 && !g->l.live) heap_remove(s, &s->parts[g->part], s->dirtyg[i]);
    }
    s->ndirtyg = 0;
}

int slm_queue_check(slm_state_t *s, char *msg, size_t n)
{
    for (int32_t p = 0; p < s->nparts; p++) {
        const slm_part_t *P = &s->parts[p];
        for (int32_t i = 0; i < P->nheap; i++) {
            int32_t g = P->heap[i];
            if (s->groups[g].hpos != i || head(s, &s->groups[g]) < 0) {
                snprintf(msg, n, "slurm: partition %d: group %d at heap place %d %s", p, g, i,
                         s->groups[g].hpos != i ? "does not know its place" : "has no pending job");
                return 1;
            }
            if (i > 0 && group_less(s, g, P->heap[(i - 1) / 2])) {
                snprintf(msg, n, "slurm: partition %d: group %d's first job goes before its heap parent's", p, g);
                return 1;
            }
        }
    }
    return 0;
}

void slm_queue_requeued(slm_state_t *s, int32_t j)
{
    s->prio[j] = slm_prio(s, j);
    s->frozen[s->nfrozen_jobs++] = j;
}

void slm_queue_tick(slm_state_t *s)
{
    s->prio_gen++; /* ages moved */
    slm_queue_fresh(s);
    for (int32_t i = 0; i < s->nfrozen_jobs; i++) s->prio[s->frozen[i]] = -1;
    s->nfrozen_jobs = 0;
    for (int32_t p = 0; p < s->nparts; p++) {
        slm_part_t *P = &s->parts[p];
        for (int32_t k = 0; k < P->nheap; k++) {
            slm_group_t *g = &s->groups[P->heap[k]];
            g->nfrozen = 0;
            if (!g->requeued) continue;
            /* a group that ever held a requeued job: its submit-time ties need not follow eligibility */
            slm_list_compact(&g->l, s->pstamp);
            g->head = 0;
            int32_t *v = g->l.job;
            for (int32_t i = 1; i < g->l.n; i++) {
                int32_t x = v[i], m = i;
                while (m > 0 && slm_prio_cmp(s, x, v[m - 1]) < 0) v[m] = v[m - 1], m--;
                v[m] = x;
            }
            for (int32_t i = 0; i < g->l.n; i++) g->l.stamp[i] = s->pstamp[v[i]];
        }
        heap_build(s, P);
    }
}

/* ---- walks ---- */

/* The group's account cannot start even the smallest job of its size class under GrpTRES: a walk passes the
 * whole group by (acct_policy would refuse each of its jobs; a walk only starts jobs, so the account's
 * room only shrinks while it lasts). */
static int group_capped(const slm_state_t *s, int32_t gi, int32_t j)
{
    if (!s->cfg.grp_tres) return 0;
    int32_t t = s->e->trace->jobs[j].tenant;
    int64_t left = s->e->tenant_quota[t] - s->ten_run[t];
    return left < gi % nclass(s) + 1;
}

/* An entry carries its job's sort key (slm_prio_cmp's), computed once when it is pushed. */
static slm_witem_t item_of(const slm_state_t *s, int32_t g, int32_t idx, int32_t hpos)
{
    int32_t j = s->groups[g].l.job[idx];
    int64_t q = s->cfg.preempt && s->qos[j] != SLM_QOS_NORMAL ? 1 : 0;
    return (slm_witem_t){g, idx, hpos, j, (q << 40) - slm_prio(s, j), s->order_submit[j]};
}

static int item_less(const slm_witem_t *a, const slm_witem_t *b)
{
    if (a->k1 != b->k1) return a->k1 < b->k1;
    if (a->k2 != b->k2) return a->k2 < b->k2;
    return a->job < b->job;
}

/* A heap of items h[0 .. *n) in arrays *a of *cap (the state's: the walk's own heap, or its capped groups). */
static void items_push(slm_witem_t **a, int32_t *cap, int32_t *n, slm_witem_t it)
{
    if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *a = ds_xrealloc(*a, (size_t)*cap * sizeof **a);
    }
    slm_witem_t *h = *a;
    int32_t i = (*n)++;
    while (i > 0 && item_less(&it, &h[(i - 1) / 2])) h[i] = h[(i - 1) / 2], i = (i - 1) / 2;
    h[i] = it;
}

static slm_witem_t items_pop(slm_witem_t *h, int32_t *n)
{
    slm_witem_t top = h[0], x = h[--*n];
    int32_t i = 0;
    for (;;) {
        int32_t l = 2 * i + 1, r = l + 1, m = -1;
        if (l < *n && item_less(&h[l], &x)) m = l;
        if (r < *n && item_less(&h[r], m < 0 ? &x : &h[l])) m = r;
        if (m < 0) break;
        h[i] = h[m];
        i = m;
    }
    if (*n) h[i] = x;
    return top;
}

static void witem_push(slm_state_t *s, slm_walk_t *w, slm_witem_t it)
{
    items_push(&s->witems, &s->capw, &w->n, it);
    w->heap = s->witems;
}

static slm_witem_t witem_pop(slm_state_t *s, slm_walk_t *w)
{
    (void)s;
    return items_pop(w->heap, &w->n);
}

/* Group g's first pending job from index idx on joins the capped heap (none left: nothing). */
static void capped_push(slm_state_t *s, slm_walk_t *w, int32_t g, int32_t idx)
{
    const slm_list_t *l = &s->groups[g].l;
    while (idx < l->n && l->stamp[idx] != s->pstamp[l->job[idx]]) idx++;
    if (idx >= l->n) return;
    items_push(&s->citems, &s->capc, &w->ncapped, item_of(s, g, idx, -1));
    w->capped = s->citems;
}

/* The heap node's group, from its first job (the heap's own children follow when it is popped). */
static void push_node(slm_state_t *s, slm_walk_t *w, int32_t hp)
{
    const slm_part_t *P = &s->parts[w->part];
    if (hp >= P->nheap) return;
    slm_group_t *g = &s->groups[P->heap[hp]];
    if (head(s, g) < 0) return;
    witem_push(s, w, item_of(s, P->heap[hp], g->head, hp));
}

void slm_walk_begin(slm_state_t *s, int32_t p, slm_walk_t *w)
{
    slm_queue_repair(s);
    w->heap = s->witems;
    w->n = 0;
    w->part = p;
    w->skip_capped = 0;
    w->capped = s->citems;
    w->ncapped = 0;
    w->counted = 0;
    s->in_walk = 1;
    push_node(s, w, 0);
}

int32_t slm_walk_next(slm_state_t *s, slm_walk_t *w)
{
    while (w->n > 0) {
        slm_witem_t it = witem_pop(s, w);
        if (it.hpos >= 0) push_node(s, w, 2 * it.hpos + 1), push_node(s, w, 2 * it.hpos + 2);
        slm_group_t *g = &s->groups[it.g];
        int32_t j = g->l.job[it.idx];
        if (w->skip_capped && group_capped(s, it.g, j)) { /* and none of its jobs follow */
            capped_push(s, w, it.g, it.idx);
            continue;
        }
        /* the group's next pending job follows it */
        int32_t k = it.idx + 1;
        while (k < g->l.n && g->l.stamp[k] != s->pstamp[g->l.job[k]]) k++;
        if (k < g->l.n) witem_push(s, w, item_of(s, it.g, k, -1));
        return j;
    }
    return -1;
}

/* The capped groups' jobs come off their heap in queue order, each counted once: a walk's calls ask about
 * later and later jobs, so a pass pays for the jobs it counts, not for the capped groups at every call. */
int32_t slm_walk_capped_before(slm_state_t *s, slm_walk_t *w, int32_t j, int32_t limit)
{
    slm_witem_t kj = {0, 0, 0, j, 0, 0};
    if (j >= 0) {
        int64_t q = s->cfg.preempt && s->qos[j] != SLM_QOS_NORMAL ? 1 : 0;
        kj.k1 = (q << 40) - slm_prio(s, j), kj.k2 = s->order_submit[j];
    }
    while (w->counted < limit && w->ncapped > 0 && (j < 0 || item_less(&w->capped[0], &kj))) {
        slm_witem_t c = items_pop(w->capped, &w->ncapped);
        const slm_list_t *l = &s->groups[c.g].l;
        if (l->stamp[c.idx] == s->pstamp[l->job[c.idx]]) w->counted++;
        capped_push(s, w, c.g, c.idx + 1);
    }
    return w->counted;
}

void slm_walk_end(slm_state_t *s, slm_walk_t *w)
{
    w->n = 0;
    s->in_walk = 0;
    slm_queue_repair(s);
}

int slm_queue_any(const slm_state_t *s)
{
    for (int32_t p = 0; p < s->nparts; p++)
        if (s->parts[p].nheap) return 1;
    return 0;
}

void slm_queue_free(slm_state_t *s)
{
    for (int32_t g = 0; g < s->ngroups; g++) {
        free(s->groups[g].l.job);
        free(s->groups[g].l.stamp);
    }
    free(s->groups);
    for (int32_t p = 0; p < s->nparts; p++) free(s->parts[p].heap);
    free(s->gconst);
    free(s->frozen);
    free(s->dirtyg);
    free(s->witems);
    free(s->citems);
}
