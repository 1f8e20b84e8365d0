/* placement.c: consolidated placement over an index of nodes bucketed by free GPUs, one per partition and
 * GPU type, so finding "the fullest node that fits" costs a few word scans instead of a walk of all nodes. */
#include "placement.h"

#include "deepshare/predictor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct part_index {
    int32_t words;      /* 64-bit words per bucket */
    uint64_t *bits;     /* (gpus per node of the type + 1) buckets x words */
} part_index_t;

/* The indexes (one per partition and type), and per node its index and its position there, so that
 * occupying a GPU costs no index arithmetic. */
typedef struct placement {
    part_index_t *idx;
    part_index_t **node_pi;
    int32_t *node_rel;
} placement_t;

static uint64_t *bucket(part_index_t *pi, int32_t c) { return pi->bits + (size_t)c * (size_t)pi->words; }

/* The index of partition p's nodes of type t. */
static part_index_t *index_of(const ds_engine_t *e, int32_t p, int32_t t)
{
    return &((placement_t *)e->priv.placement)->idx[(size_t)p * (size_t)e->ntypes + (size_t)t];
}

void ds_placement_init(ds_engine_t *e)
{
    size_t n = (size_t)(e->nparts ? e->nparts : 1) * (size_t)e->ntypes, nn1 = (size_t)(e->nnodes ? e->nnodes : 1);
    placement_t *pl = ds_xcalloc(1, sizeof *pl);
    pl->idx = ds_xcalloc(n, sizeof *pl->idx);
    pl->node_pi = ds_xmalloc(nn1 * sizeof *pl->node_pi);
    pl->node_rel = ds_xmalloc(nn1 * sizeof *pl->node_rel);
    e->priv.placement = pl;
    for (int32_t p = 0; p < e->nparts; p++)
        for (int32_t t = 0; t < e->ntypes; t++) {
            part_index_t *pi = index_of(e, p, t);
            int32_t gpn = ds_engine_type_gpus_per_node(e, t), nn = e->parts[p].tnnodes[t];
            pi->words = (nn + 63) / 64;
            pi->bits = ds_xcalloc((size_t)(gpn + 1) * (size_t)(pi->words ? pi->words : 1), sizeof(uint64_t));
            for (int32_t i = 0; i < nn; i++) {
                bucket(pi, gpn)[i / 64] |= 1ULL << (i % 64);
                pl->node_pi[e->parts[p].tnode0[t] + i] = pi;
                pl->node_rel[e->parts[p].tnode0[t] + i] = i;
            }
        }
}

void ds_placement_free(ds_engine_t *e)
{
    placement_t *pl = e->priv.placement;
    if (!pl) return;
    for (size_t k = 0; k < (size_t)e->nparts * (size_t)e->ntypes; k++) free(pl->idx[k].bits);
    free(pl->idx);
    free(pl->node_pi);
    free(pl->node_rel);
    free(pl);
    e->priv.placement = NULL;
}

void ds_placement_take(ds_engine_t *e, int32_t node, int delta)
{
    ds_node_t *nd = &e->nodes[node];
    if (nd->down) return; /* capacity withdrawn: GPUs its jobs take or release stay out of the free counts */
    ds_part_t *p = &e->parts[nd->part];
    const placement_t *pl = e->priv.placement;
    part_index_t *pi = pl->node_pi[node];
    int32_t rel = pl->node_rel[node];
    bucket(pi, nd->nfree)[rel / 64] &= ~(1ULL << (rel % 64));
    nd->nfree -= delta;
    p->gpus_free -= delta;
    p->tgpus_free[nd->gtype] -= delta;
    DS_ASSERT(nd->nfree >= 0 && nd->nfree <= nd->ngpus);
    bucket(pi, nd->nfree)[rel / 64] |= 1ULL << (rel % 64);
}

/* CPU (and memory) share of a job on a node holding ngp of its GPUs: proportional, rounded up. */
static int32_t cpu_share(const ds_job_t *job, int32_t ngp)
{
    return job->gpus ? (int32_t)(((int64_t)job->cpus * ngp + job->gpus - 1) / job->gpus) : job->cpus;
}

static int64_t mem_share(const ds_job_t *job, int32_t ngp)
{
    return job->gpus ? (job->mem_mib * ngp + job->gpus - 1) / job->gpus : job->mem_mib;
}

/* Shares as held at scale sc by a running job whose hold may have been shrunk (CPU reclamation). */
static int32_t held_cpu_at(const ds_engine_t *e, int32_t j, int32_t ngp, float sc)
{
    int32_t c = cpu_share(&e->trace->jobs[j], ngp);
    return sc > 0 && sc < 1 ? (int32_t)ceil((double)c * sc) : c;
}

static int64_t held_mem_at(const ds_engine_t *e, int32_t j, int32_t ngp, float sc)
{
    int64_t m = mem_share(&e->trace->jobs[j], ngp);
    return sc > 0 && sc < 1 ? (int64_t)ceil((double)m * sc) : m;
}

static int32_t held_cpu(const ds_engine_t *e, int32_t j, int32_t ngp) { return held_cpu_at(e, j, ngp, e->js[j].cpu_scale); }
static int64_t held_mem(const ds_engine_t *e, int32_t j, int32_t ngp) { return held_mem_at(e, j, ngp, e->js[j].cpu_scale); }

static int fits_share(const ds_engine_t *e, int32_t node, const ds_job_t *job, int32_t ngp)
{
    const ds_node_t *nd = &e->nodes[node];
    if (e->cfg.enforce_cpu && nd->cpus_used + cpu_share(job, ngp) > nd->cpus_total) return 0;
    if (nd->mem_total > 0 && nd->mem_used + mem_share(job, ngp) > nd->mem_total) return 0;
    return 1;
}

int ds_engine_node_fits(const ds_engine_t *e, int32_t node, int32_t j)
{
    const ds_job_t *job = &e->trace->jobs[j];
    return fits_share(e, node, job, DS_MIN(job->gpus, e->nodes[node].ngpus));
}

void ds_placement_charge(ds_engine_t *e, int32_t j, int sign)
{
    const int32_t *g = &e->jgpus[e->jgpu_off[j]];
    int32_t n = e->js[j].nplaced;
    for (int32_t i = 0; i < n;) {
        int32_t node = e->gpus[g[i]].node, k = i;
        while (k < n && e->gpus[g[k]].node == node) k++;
        e->nodes[node].cpus_used += sign * held_cpu(e, j, k - i);
        e->nodes[node].mem_used += sign * held_mem(e, j, k - i);
        i = k;
    }
}

void ds_engine_job_node_use_at(const ds_engine_t *e, int32_t j, int32_t node, double scale, int32_t *cpus, int64_t *mem)
{
    const int32_t *g = &e->jgpus[e->jgpu_off[j]];
    int32_t n = e->js[j].nplaced, k = 0;
    for (int32_t i = 0; i < n; i++) k += e->gpus[g[i]].node == node;
    *cpus = k ? held_cpu_at(e, j, k, (float)scale) : 0;
    *mem = k ? held_mem_at(e, j, k, (float)scale) : 0;
}

void ds_engine_job_node_use(const ds_engine_t *e, int32_t j, int32_t node, int32_t *cpus, int64_t *mem)
{
    ds_engine_job_node_use_at(e, j, node, e->js[j].cpu_scale, cpus, mem);
}

int ds_engine_node_fits_after(const ds_engine_t *e, int32_t node, int32_t j, int32_t ngp, int32_t cpus_freed,
                              int64_t mem_freed)
{
    const ds_node_t *nd = &e->nodes[node];
    const ds_job_t *job = &e->trace->jobs[j];
    if (e->cfg.enforce_cpu && nd->cpus_used - cpus_freed + cpu_share(job, ngp) > nd->cpus_total) return 0;
    if (nd->mem_total > 0 && nd->mem_used - mem_freed + mem_share(job, ngp) > nd->mem_total) return 0;
    return 1;
}

int ds_engine_gpus_fit(const ds_engine_t *e, int32_t j, const int32_t *gpus)
{
    int32_t n = e->trace->jobs[j].gpus;
    for (int32_t i = 0; i < n; i++) {
        int32_t node = e->gpus[gpus[i]].node, k = 0, first = 1;
        for (int32_t q = 0; q < n; q++) {
            if (e->gpus[gpus[q]].node != node) continue;
            if (q < i) { first = 0; break; }
            k++;
        }
        if (first && !fits_share(e, node, &e->trace->jobs[j], k)) return 0;
    }
    return 1;
}

void ds_engine_set_cpu_scale(ds_engine_t *e, int32_t j, double scale)
{
    DS_ASSERT(e->js[j].status == DS_JS_RUNNING && scale > 0 && scale <= 1);
    ds_placement_charge(e, j, -1);
    e->js[j].cpu_scale = (float)scale;
    ds_placement_charge(e, j, +1);
}

int32_t ds_engine_node_free_gpus(const ds_engine_t *e, int32_t node, int32_t want, int32_t *out)
{
    const ds_node_t *nd = &e->nodes[node];
    int32_t n = 0;
    if (nd->down) return 0;
    for (int32_t g = nd->gpu0; g < nd->gpu0 + nd->ngpus && n < want; g++)
        if (e->gpus[g].nres == 0) out[n++] = g;
    return n;
}

int32_t ds_engine_max_node_free(const ds_engine_t *e, int32_t part, int32_t *whole_free)
{
    int32_t best = 0, n = 0;
    /* per type: its whole free nodes, and its fullest bucket with a node */
    for (int32_t t = 0; t < e->ntypes; t++) {
        part_index_t *pi = index_of(e, part, t);
        int32_t gpn = ds_engine_type_gpus_per_node(e, t), top = 0;
        if (whole_free) {
            const uint64_t *b = bucket(pi, gpn);
            for (int32_t w = 0; w < pi->words; w++) n += __builtin_popcountll(b[w]);
        }
        for (int32_t c = gpn; c > 0 && !top; c--) {
            const uint64_t *b = bucket(pi, c);
            for (int32_t w = 0; w < pi->words; w++)
                if (b[w]) { top = c; break; }
        }
        best = DS_MAX(best, top);
    }
    if (whole_free) *whole_free = n;
    return best;
}

int ds_engine_find_free(const ds_engine_t *e, int32_t j, int32_t part, int32_t *out)
{
    return ds_engine_find_free_masked(e, j, part, NULL, out);
}

/* Consolidated placement on one type's nodes: up to a node of that type, the fullest node that fits (ties:
 * lowest index); larger, whole free nodes in index order, then the remainder on the node with the most free
 * GPUs (ties: lowest index), as the reference's descending stable sort does. */
static inline __attribute__((always_inline)) int find_on_type(const ds_engine_t *e, const ds_job_t *job, int32_t part,
                                                             int32_t t, const uint8_t *blocked, int32_t *out)
{
    const ds_part_t *p = &e->parts[part];
    int32_t need = job->gpus, gpn = ds_engine_type_gpus_per_node(e, t), node0 = p->tnode0[t];
    if (p->tgpus_free[t] < need) return 0;
    part_index_t *pi = index_of(e, part, t);
    if (need <= gpn) {
        for (int32_t c = need; c <= gpn; c++) {
            uint64_t *b = bucket(pi, c);
            for (int32_t w = 0; w < pi->words; w++) {
                for (uint64_t m = b[w]; m; m &= m - 1) {
                    int32_t node = node0 + w * 64 + __builtin_ctzll(m);
                    if ((blocked && blocked[node]) || !fits_share(e, node, job, need)) continue;
                    ds_engine_node_free_gpus(e, node, need, out);
                    return 1;
                }
            }
        }
        return 0;
    }
    int32_t whole = need / gpn, rem = need % gpn, got = 0, n = 0;
    int32_t taken[4096];
    if (whole > 4096) return 0;
    uint64_t *full = bucket(pi, gpn);
    for (int32_t w = 0; w < pi->words && got < whole; w++) {
        for (uint64_t m = full[w]; m && got < whole; m &= m - 1) {
            int32_t node = node0 + w * 64 + __builtin_ctzll(m);
            if ((blocked && blocked[node]) || !fits_share(e, node, job, gpn)) continue;
            taken[got++] = node;
            n += ds_engine_node_free_gpus(e, node, gpn, out + n);
        }
    }
    if (got < whole) return 0;
    if (rem == 0) return 1;
    for (int32_t c = gpn; c >= rem; c--) {
        uint64_t *b = bucket(pi, c);
        for (int32_t w = 0; w < pi->words; w++) {
            for (uint64_t m = b[w]; m; m &= m - 1) {
                int32_t node = node0 + w * 64 + __builtin_ctzll(m);
                int dup = blocked && blocked[node];
                if (c == gpn)
                    for (int32_t k = 0; k < got; k++) dup |= taken[k] == node;
                if (dup) continue;
                /* The reference tries only this one node: if it does not fit, placement fails. */
                if (!fits_share(e, node, job, rem)) return 0;
                ds_engine_node_free_gpus(e, node, rem, out + n);
                return 1;
            }
        }
    }
    return 0;
}

double ds_engine_speed(const ds_engine_t *e, int32_t j, int32_t t)
{
    const ds_speed_predictor_t *sp = e->predictors ? e->predictors->speed : NULL;
    if (!sp || e->ntypes < 2) return 1.0;
    double r = sp->rate(sp->ctx, e->trace, j, t);
    return r > 0 && r < 1e6 ? r : 1.0;
}

int32_t ds_engine_type_order(const ds_engine_t *e, int32_t j, int32_t *types)
{
    int32_t n = 0;
    double rate[DS_MAX_GPU_TYPES];
    for (int32_t t = 0; t < e->ntypes; t++) {
        if (!ds_engine_type_ok(e, j, t)) continue;
        double r = e->cfg.type_order == DS_TYPES_FASTEST ? ds_engine_speed(e, j, t) : 0;
        int32_t k = n++;
        /* insertion: faster first, ties in type order */
        while (k > 0 && rate[k - 1] < r) types[k] = types[k - 1], rate[k] = rate[k - 1], k--;
        types[k] = t, rate[k] = r;
    }
    return n;
}

int ds_engine_find_free_on(const ds_engine_t *e, int32_t j, int32_t part, int32_t t, const uint8_t *blocked, int32_t *out)
{
    if (t < 0 || t >= e->ntypes || !ds_engine_type_ok(e, j, t)) return 0;
    return find_on_type(e, &e->trace->jobs[j], part, t, blocked, out);
}

/* Type-blind placement on a typed cluster: a job that fits one node of some type it may use goes to the
 * fullest such node over all those types (ties: lowest index, so the earlier type); else it spans nodes of
 * the first type, in cluster order, that has room. */
static int find_blind(const ds_engine_t *e, const ds_job_t *job, int32_t part, const uint8_t *blocked, int32_t *out)
{
    const ds_part_t *p = &e->parts[part];
    int32_t need = job->gpus, maxg = 0;
    for (int32_t t = 0; t < e->ntypes; t++)
        if ((!job->gmask || ((job->gmask >> t) & 1)) && need <= ds_engine_type_gpus_per_node(e, t))
            maxg = DS_MAX(maxg, ds_engine_type_gpus_per_node(e, t));
    for (int32_t c = need; c <= maxg; c++)
        for (int32_t t = 0; t < e->ntypes; t++) {
            if ((job->gmask && !((job->gmask >> t) & 1)) || p->tgpus_free[t] < need || c > ds_engine_type_gpus_per_node(e, t))
                continue;
            part_index_t *pi = index_of(e, part, t);
            uint64_t *b = bucket(pi, c);
            for (int32_t w = 0; w < pi->words; w++)
                for (uint64_t m = b[w]; m; m &= m - 1) {
                    int32_t node = p->tnode0[t] + w * 64 + __builtin_ctzll(m);
                    if ((blocked && blocked[node]) || !fits_share(e, node, job, need)) continue;
                    ds_engine_node_free_gpus(e, node, need, out);
                    return 1;
                }
        }
    for (int32_t t = 0; t < e->ntypes; t++)
        if ((!job->gmask || ((job->gmask >> t) & 1)) && need > ds_engine_type_gpus_per_node(e, t) &&
            find_on_type(e, job, part, t, blocked, out))
            return 1;
    return 0;
}

int ds_engine_find_free_masked(const ds_engine_t *e, int32_t j, int32_t part, const uint8_t *blocked, int32_t *out)
{
    const ds_job_t *job = &e->trace->jobs[j];
    if (e->ntypes == 1) return find_on_type(e, job, part, 0, blocked, out);
    if (e->parts[part].gpus_free < job->gpus) return 0;
    if (e->cfg.type_order == DS_TYPES_BLIND) return find_blind(e, job, part, blocked, out);
    int32_t types[DS_MAX_GPU_TYPES], n = ds_engine_type_order(e, j, types);
    for (int32_t k = 0; k < n; k++)
        if (find_on_type(e, job, part, types[k], blocked, out)) return 1;
    return 0;
}
