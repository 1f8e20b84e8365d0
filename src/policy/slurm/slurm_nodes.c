/* slurm_nodes.c: per-node answers for backfill's will-run test, kept current as jobs start and end, so
 * that one test costs a few tree walks instead of a pass over every node and running job.
 *
 * For every node n and g = 1 .. GPUs per node: the removal (expected end, job) after which n first has g
 * GPUs free as its running jobs leave in order of expected end ({-1, -1}: it has them now); slot 0 holds
 * its first job to leave. Mode 1 is the same for a job that may preempt: the preemptable jobs count as
 * gone from the start. A segment tree per (mode, g) gives the least such key over a range of nodes. */
#include "slurm_internal.h"

#include <stdlib.h>
#include <string.h>

static int32_t ntrees(const slm_state_t *s) { return (s->cfg.preempt ? 2 : 1) * (s->e->cfg.gpus_per_node + 1); }

static slm_key_t *tree(slm_state_t *s, int32_t t) { return &s->seg[(size_t)t * 2 * (size_t)s->segsize]; }

void slm_nodes_init(slm_state_t *s)
{
    int32_t n = s->e->nnodes;
    s->segsize = 1;
    while (s->segsize < n) s->segsize *= 2;
    size_t cells = (size_t)ntrees(s) * 2 * (size_t)s->segsize;
    s->seg = ds_xmalloc(cells * sizeof *s->seg);
    for (size_t i = 0; i < cells; i++) s->seg[i] = SLM_KEY_NONE;
    s->ndirty = 0;
    for (int32_t i = 0; i < n; i++) slm_nodes_dirty(s, i);
}

void slm_nodes_free(slm_state_t *s)
{
    free(s->seg);
    s->seg = NULL;
}

void slm_nodes_dirty(slm_state_t *s, int32_t n)
{
    if (s->node_dirty[n]) return;
    s->node_dirty[n] = 1;
    s->dirty[s->ndirty++] = n;
}

static void set_leaf(slm_state_t *s, int32_t t, int32_t n, slm_key_t k)
{
    slm_key_t *a = tree(s, t);
    int32_t i = s->segsize + n;
    k.node = n;
    a[i] = k;
    for (i /= 2; i >= 1; i /= 2) a[i] = slm_key_lt(a[2 * i + 1], a[2 * i]) ? a[2 * i + 1] : a[2 * i];
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

static slm_key_t range_min(slm_state_t *s, int32_t t, int32_t lo, int32_t hi)
{
    const slm_key_t *a = tree(s, t);
    slm_key_t best = SLM_KEY_NONE;
    for (int32_t l = lo + s->segsize, r = hi + s->segsize; l < r; l /= 2, r /= 2) {
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

slm_key_t slm_nodes_min(slm_state_t *s, int mode, int32_t g, int32_t lo, int32_t hi, const int32_t *skip, int32_t nskip)
{
    int32_t t = mode * (s->e->cfg.gpus_per_node + 1) + g;
    slm_key_t best = SLM_KEY_NONE;
    int32_t from = lo;
    for (int32_t i = 0; i <= nskip; i++) {
        int32_t to = i < nskip ? skip[i] : hi;
        if (to > from) {
            slm_key_t k = range_min(s, t, from, to);
            if (slm_key_lt(k, best)) best = k;
        }
        if (i < nskip) from = skip[i] + 1;
    }
    return best;
}

