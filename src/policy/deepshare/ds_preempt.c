/* ds_preempt.c: cost-aware reclamation (docs/policy.md §4.1): for a G job of an under-served tenant, the
 * cheapest set of BE victims whose eviction leaves a feasible device; G jobs are never victims. */
#include "ds_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_UNITS 16

/* Jobs evicted together: a GPU's whole resident set (a job and its BE partner). */
typedef struct unit {
    int32_t job[2];
    int32_t njobs;
    int32_t on_node;     /* GPUs it frees on the node */
    int32_t freed;       /* GPUs it frees in all */
    int32_t cpus;        /* CPUs and memory it frees on the node */
    int64_t mem;
    double cost;         /* sum over its jobs of alpha d + beta p (+ 1 for a young one) */
    int64_t newest;      /* latest last_start of its jobs */
    int64_t oldest;      /* earliest last_start of its jobs */
} unit_t;

typedef struct choice {
    int ok;
    double cost;
    int32_t nvict;
    int64_t oldest;      /* earliest start among victims: later is better (less work lost) */
    int32_t node;
    unit_t units[MAX_UNITS];
    int32_t nunits;
} choice_t;

static double victim_cost(const ds_engine_t *e, const dsp_t *s, int32_t v, int64_t now)
{
    double d = DS_MIN(1.0, e->js[v].preemptions / 3.0);
    double el = dsp_elapsed(e, s, v, now), rem = dsp_remaining_for(e, s, v, now, DSP_CR_VICTIMS);
    /* the share of the job a preemption throws away: all it has run unless it declares checkpoints (then the
     * part of its run since the last one, in the same units as el) */
    double risk = el, wall = (double)ds_engine_elapsed(e, v, now);
    if (s->cfg.ckpt_aware && ds_engine_ckpt_interval(e, v) > 0 && wall > 0)
        risk = el * (double)ds_engine_at_risk(e, v, now) / wall;
    double p = el > 0 ? risk / (el + rem) : 0.0;
    /* A run younger than the typical one costs 1 more, as much as an older victim can cost at most with alpha +
     * beta <= 1 (the defaults: 0.8): the work term alone makes the youngest runs the cheapest victims, so every
     * reclaim would undo the latest lending; they go only where every set of older runs costs more
     * (docs/policy.md §4.1). */
    double young = dsp_young_for(e, s, v, now) > 0 ? 1.0 : 0.0;
    return s->cfg.alpha * d + s->cfg.beta * p + young;
}

/* served reclaim (s->served_for >= 0): v's tenant stays at or above its quota without it (all its GPUs counted),
 * and v is predicted to run longer than the reclaiming job */
static int served_victim(const ds_engine_t *e, const dsp_t *s, int32_t v, int64_t now)
{
    int32_t ten = e->trace->jobs[v].tenant;
    return e->tenant_g_gpus[ten] + e->tenant_be_gpus[ten] - e->trace->jobs[v].gpus >= e->tenant_quota[ten] &&
           dsp_remaining(e, s, v, now) > s->served_rem;
}

/* fair-share reclaim (s->fair_for >= 0): a GPU's residents may go only when none is of the reclaiming tenant and
 * each one's tenant stays at or above its fair share without it */
static int fair_victims(const ds_engine_t *e, const dsp_t *s, const ds_gpu_t *gp)
{
    for (int32_t r = 0; r < gp->nres; r++) {
        int32_t v = gp->res[r], ten = e->trace->jobs[v].tenant;
        if (ten == s->fair_for || dsp_fair_spare(e, s, ten) < (double)e->trace->jobs[v].gpus - 1e-9) return 0;
    }
    return 1;
}

/* What a tenant holds beyond what a reclaim must leave it: its fair share (a fair-share reclaim) or its quota
 * (a served reclaim, all its GPUs counted). */
static double spare(const ds_engine_t *e, const dsp_t *s, int32_t ten)
{
    if (s->fair_for >= 0) return dsp_fair_spare(e, s, ten);
    return (double)(e->tenant_g_gpus[ten] + e->tenant_be_gpus[ten] - e->tenant_quota[ten]);
}

/* ...and a set of victims: every tenant it takes from left at or above its share (or quota) by all it loses. */
static int set_ok(const ds_engine_t *e, const dsp_t *s, const int32_t *v, int32_t nv)
{
    if (s->fair_for < 0 && s->served_for < 0) return 1;
    for (int32_t a = 0; a < nv; a++) {
        int32_t ten = e->trace->jobs[v[a]].tenant, first = 1;
        double lost = 0;
        for (int32_t b = 0; b < nv; b++) {
            if (e->trace->jobs[v[b]].tenant != ten) continue;
            if (b < a) { first = 0; break; }
            lost += e->trace->jobs[v[b]].gpus;
        }
        if (first && spare(e, s, ten) < lost - 1e-9) return 0;
    }
    return 1;
}

/* The evictable units of a node: GPUs holding a G job, or a BE job inside its min-runtime, cannot be
 * freed and are left out. */
static int32_t node_units(const ds_engine_t *e, const dsp_t *s, int32_t node, unit_t *u, int64_t now)
{
    const ds_node_t *nd = &e->nodes[node];
    int32_t nu = 0;
    for (int32_t gi = nd->gpu0; gi < nd->gpu0 + nd->ngpus; gi++) {
        const ds_gpu_t *gp = &e->gpus[gi];
        if (gp->nres == 0) continue;
        int allbe = 1;
        for (int32_t r = 0; r < gp->nres; r++)
            allbe &= e->js[gp->res[r]].klass == DS_CLASS_BE && now - e->js[gp->res[r]].last_start >= s->cfg.min_runtime &&
                     (s->served_for < 0 || served_victim(e, s, gp->res[r], now));
        if (!allbe || (s->fair_for >= 0 && !fair_victims(e, s, gp))) continue;
        int32_t rep = gp->res[0];
        for (int32_t r = 1; r < gp->nres; r++) rep = DS_MIN(rep, gp->res[r]);
        int32_t k = 0;
        while (k < nu && DS_MIN(u[k].job[0], u[k].njobs > 1 ? u[k].job[1] : u[k].job[0]) != rep) k++;
        if (k < nu) { u[k].on_node++; continue; }
        if (nu == MAX_UNITS) continue;
        unit_t *x = &u[nu++];
        memset(x, 0, sizeof *x);
        x->njobs = DS_MIN(gp->nres, 2);
        x->oldest = INT64_MAX;
        x->newest = INT64_MIN;
        for (int32_t r = 0; r < x->njobs; r++) {
            int32_t v = gp->res[r];
            int32_t c;
            int64_t m;
            x->job[r] = v;
            x->freed = DS_MAX(x->freed, e->trace->jobs[v].gpus);
            ds_engine_job_node_use(e, v, node, &c, &m);
            x->cpus += c;
            x->mem += m;
            x->cost += victim_cost(e, s, v, now);
            x->newest = DS_MAX(x->newest, e->js[v].last_start);
            x->oldest = DS_MIN(x->oldest, e->js[v].last_start);
        }
        x->on_node = 1;
    }
    return nu;
}

static int better(const choice_t *a, double cost, int32_t nvict, int64_t oldest, int32_t node)
{
    if (!a->ok) return 1;
    if (fabs(cost - a->cost) > 1e-12) return cost < a->cost;
    if (nvict != a->nvict) return nvict < a->nvict;
    if (oldest != a->oldest) return oldest > a->oldest;
    return node < a->node;
}

/* Cheapest feasible subset of one node's units for a job of g <= gpus_per_node GPUs. */
static void best_on_node(const ds_engine_t *e, const dsp_t *s, int32_t j, int32_t node, int64_t now, choice_t *best)
{
    unit_t u[MAX_UNITS];
    int32_t g = e->trace->jobs[j].gpus, free0 = e->nodes[node].nfree;
    int32_t nu = node_units(e, s, node, u, now), avail = free0;
    for (int32_t k = 0; k < nu; k++) avail += u[k].on_node;
    if (avail < g) return;
    double fw = 1.0 - s->cfg.alpha - s->cfg.beta;
    int32_t need_freed = DS_MAX(0, g - free0);
    for (uint32_t mask = 1; mask < (1u << nu); mask++) {
        int32_t on = 0, freed = 0, cpus = 0, nv = 0;
        int64_t mem = 0, oldest = INT64_MAX;
        double cost = 0;
        for (int32_t k = 0; k < nu; k++) {
            if (!(mask >> k & 1)) continue;
            on += u[k].on_node, freed += u[k].freed, cpus += u[k].cpus, mem += u[k].mem;
            cost += u[k].cost, nv += u[k].njobs, oldest = DS_MIN(oldest, u[k].oldest);
        }
        if (free0 + on < g) continue;
        if (!ds_engine_node_fits_after(e, node, j, g, cpus, mem)) continue;
        if (s->fair_for >= 0 || s->served_for >= 0) {
            int32_t vv[2 * MAX_UNITS], n2 = 0;
            for (int32_t k = 0; k < nu; k++)
                if (mask >> k & 1)
                    for (int32_t r = 0; r < u[k].njobs; r++) vv[n2++] = u[k].job[r];
            if (!set_ok(e, s, vv, n2)) continue;
        }
        double f = freed > 0 ? (double)(freed - need_freed) / (double)freed : 0.0;
        cost += fw * f;
        if (!better(best, cost, nv, oldest, node)) continue;
        best->ok = 1, best->cost = cost, best->nvict = nv, best->oldest = oldest, best->node = node;
        best->nunits = 0;
        for (int32_t k = 0; k < nu; k++)
            if (mask >> k & 1) best->units[best->nunits++] = u[k];
    }
}

static void evict(ds_engine_t *e, dsp_t *s, const unit_t *u, int32_t nu, int64_t now)
{
    for (int32_t k = 0; k < nu; k++)
        for (int32_t r = 0; r < u[k].njobs; r++) {
            int32_t v = u[k].job[r];
            if (e->js[v].status != DS_JS_RUNNING) continue;
            DS_ASSERT(e->js[v].klass == DS_CLASS_BE);
            s->st.preempt_reclaim++;
            if (s->fair_for >= 0) s->st.fair_reclaims++;
            s->st.reclaimed_gpus += e->trace->jobs[v].gpus;
            if (dsp_young_for(e, s, v, now) > 0) s->st.young_victims++;
            if (s->served_for >= 0) s->st.served_reclaims++;
            ds_engine_preempt(e, v, now, DSP_R_RECLAIM);
        }
    /* the served reclaim's promise, checked with the invariants (§7): no victim's tenant left under its quota */
    if (s->served_for >= 0)
        for (int32_t k = 0; k < nu; k++)
            for (int32_t r = 0; r < u[k].njobs; r++) {
                int32_t ten = e->trace->jobs[u[k].job[r]].tenant;
                if (e->tenant_g_gpus[ten] + e->tenant_be_gpus[ten] < e->tenant_quota[ten]) s->st.served_under++;
            }
}

/* What evicting a choice really frees on its node: a GPU only when every resident is a victim (a unit
 * counts a GPU it shares with a job of another unit), CPUs and memory once per victim. Writes the GPUs
 * j would get (the lowest free after eviction, as ds_engine_node_free_gpus picks them); returns 1 when j fits. */
static int choice_fits(const ds_engine_t *e, int32_t j, const choice_t *c, int32_t *gpus)
{
    int32_t v[2 * MAX_UNITS], nv = 0, g = e->trace->jobs[j].gpus, k = 0, cpus = 0;
    int64_t mem = 0;
    for (int32_t u = 0; u < c->nunits; u++)
        for (int32_t r = 0; r < c->units[u].njobs; r++) {
            int32_t x = c->units[u].job[r], seen = 0;
            for (int32_t q = 0; q < nv; q++) seen |= v[q] == x;
            if (seen) continue;
            v[nv++] = x;
            int32_t cu;
            int64_t mu;
            ds_engine_job_node_use(e, x, c->node, &cu, &mu);
            cpus += cu, mem += mu;
        }
    const ds_node_t *nd = &e->nodes[c->node];
    for (int32_t gi = nd->gpu0; gi < nd->gpu0 + nd->ngpus && k < g; gi++) {
        const ds_gpu_t *gp = &e->gpus[gi];
        int freed = 1;
        for (int32_t r = 0; r < gp->nres && freed; r++) {
            freed = 0;
            for (int32_t q = 0; q < nv; q++) freed |= v[q] == gp->res[r];
        }
        if (freed) gpus[k++] = gi;
    }
    return k == g && ds_engine_node_fits_after(e, c->node, j, g, cpus, mem);
}

static int preempt_small(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now)
{
    const ds_part_t *p = &e->parts[e->js[j].part];
    choice_t best;
    best.ok = 0;
    for (int32_t n = p->node0; n < p->node0 + p->nnodes; n++)
        if (!s->blocked[n] && !ds_engine_node_down(e, n) && (e->ntypes < 2 || (e->trace->jobs[j].gpus <= e->nodes[n].ngpus && dsp_node_usable(e, s, j, n))))
            best_on_node(e, s, j, n, now, &best);
    /* decide first: evict only when the start that follows is sure */
    int32_t gpus[DS_MAX_GPUS_PER_NODE];
    if (!best.ok || !choice_fits(e, j, &best, gpus)) return 0;
    evict(e, s, best.units, best.nunits, now);
    DS_ASSERT(ds_engine_gpus_fit(e, j, gpus));
    dsp_start(e, s, j, gpus, -1, now);
    return 1;
}

/* Jobs above one node take whole nodes: the cheapest fully evictable nodes (free nodes cost 0), of one type
 * (t; -1 on a cluster of one kind of node) with nodes of gpn GPUs. */
static int preempt_large_on(ds_engine_t *e, dsp_t *s, int32_t j, int32_t t, int32_t gpn, int64_t now)
{
    const ds_part_t *p = &e->parts[e->js[j].part];
    int32_t g = e->trace->jobs[j].gpus, want = (g + gpn - 1) / gpn;
    int32_t n0 = t < 0 ? p->node0 : p->tnode0[t], nn = t < 0 ? p->nnodes : p->tnnodes[t];
    int32_t *nodes = s->order; /* scratch: the pass's order array is not in use here */
    double *cost = ds_xmalloc((size_t)(nn ? nn : 1) * sizeof *cost);
    int32_t ne = 0;
    for (int32_t n = n0; n < n0 + nn; n++) {
        unit_t u[MAX_UNITS];
        if (s->blocked[n] || ds_engine_node_down(e, n)) continue; /* an eviction there frees nothing */
        int32_t nu = node_units(e, s, n, u, now), on = e->nodes[n].nfree, cpus = 0;
        int64_t mem = 0;
        double c = 0;
        for (int32_t k = 0; k < nu; k++) on += u[k].on_node, c += u[k].cost, cpus += u[k].cpus, mem += u[k].mem;
        if (on < gpn || !ds_engine_node_fits_after(e, n, j, gpn, cpus, mem)) continue;
        /* insertion by (cost, index): few eligible nodes under load */
        int32_t k = ne++;
        while (k > 0 && cost[k - 1] > c) nodes[k] = nodes[k - 1], cost[k] = cost[k - 1], k--;
        nodes[k] = n, cost[k] = c;
    }
    int ok = ne >= want;
    if (ok && (s->fair_for >= 0 || s->served_for >= 0)) {
        /* the victims of all the nodes taken together leave every tenant at or above its share (or quota) */
        int32_t *vv = ds_xmalloc((size_t)want * 2 * MAX_UNITS * sizeof *vv), n2 = 0;
        for (int32_t k = 0; k < want; k++) {
            unit_t u[MAX_UNITS];
            int32_t nu = node_units(e, s, nodes[k], u, now);
            for (int32_t x = 0; x < nu; x++)
                for (int32_t r = 0; r < u[x].njobs; r++) {
                    int32_t seen = 0;
                    for (int32_t q = 0; q < n2; q++) seen |= vv[q] == u[x].job[r];
                    if (!seen) vv[n2++] = u[x].job[r];
                }
        }
        ok = set_ok(e, s, vv, n2);
        free(vv);
    }
    if (ok) {
        for (int32_t k = 0; k < want; k++) {
            unit_t u[MAX_UNITS];
            int32_t nu = node_units(e, s, nodes[k], u, now);
            evict(e, s, u, nu, now);
        }
        int32_t *gpus = ds_xmalloc((size_t)g * sizeof *gpus);
        ok = t < 0 ? ds_engine_find_free_masked(e, j, e->js[j].part, s->blocked, gpus)
                   : ds_engine_find_free_on(e, j, e->js[j].part, t, s->blocked, gpus);
        if (ok) dsp_start(e, s, j, gpus, -1, now);
        free(gpus);
    }
    free(cost);
    return ok;
}

static int preempt_large(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now)
{
    if (e->ntypes < 2) return preempt_large_on(e, s, j, -1, e->cfg.gpus_per_node, now);
    /* several types: the types it may use with quota room, in its placement order, where it spans nodes */
    int32_t types[DS_MAX_GPU_TYPES], n = dsp_type_order(e, s, j, DS_CLASS_G, types), g = e->trace->jobs[j].gpus;
    for (int32_t k = 0; k < n; k++) {
        int32_t t = types[k], gpn = ds_engine_type_gpus_per_node(e, t);
        if (g <= gpn || (s->typed && !dsp_g_room(e, s, j, t, 0))) continue;
        if (preempt_large_on(e, s, j, t, gpn, now)) return 1;
    }
    return 0;
}

int dsp_try_fair_reclaim(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now)
{
    int32_t gpn = e->cfg.gpus_per_node, g = e->trace->jobs[j].gpus;
    /* the victims allowed depend on the reclaiming tenant: the G reclaims' failure memo does not apply */
    s->fair_for = e->trace->jobs[j].tenant;
    int ok = g <= gpn ? preempt_small(e, s, j, now) : 0;
    if (!ok && (g > gpn || e->ntypes > 1)) ok = preempt_large(e, s, j, now);
    s->fair_for = -1;
    return ok;
}

void dsp_preempt_memo_reset(dsp_t *s)
{
    for (int32_t g = 0; g <= s->maxg; g++) s->pre_fail_cpus[g] = INT32_MAX, s->pre_fail_mem[g] = INT64_MAX;
}

int dsp_try_preempt(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now)
{
    const ds_job_t *job = &e->trace->jobs[j];
    int32_t gpn = e->cfg.gpus_per_node, g = job->gpus;
    /* A failed search for fewer GPUs on one node with no more CPUs and memory dominates this one. */
    for (int32_t f = g > gpn ? g : 1; f <= g; f++)
        if (job->cpus >= s->pre_fail_cpus[f] && job->mem_mib >= s->pre_fail_mem[f]) return 0;
    /* several types: one node of a type that holds it (preempt_small keeps to those), else across nodes */
    int ok = g <= gpn ? preempt_small(e, s, j, now) : 0;
    if (!ok && (g > gpn || e->ntypes > 1)) ok = preempt_large(e, s, j, now);
    /* with types the GPUs a job may take depend on its types and its tenant's quota of each: no memo */
    /* a served reclaim's victims are fewer: its failure says nothing of the others' */
    if (!ok && e->ntypes < 2 && s->served_for < 0 && job->cpus <= s->pre_fail_cpus[g] && job->mem_mib <= s->pre_fail_mem[g])
        s->pre_fail_cpus[g] = job->cpus, s->pre_fail_mem[g] = job->mem_mib;
    return ok;
}
