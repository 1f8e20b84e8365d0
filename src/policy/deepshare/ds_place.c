/* ds_place.c: placement escalation of one job, least disruptive first (docs/policy.md §4): exclusive GPUs,
 * colocation, CPU/memory reclamation from BE residents, then (G jobs of under-served tenants only)
 * preemption of BE jobs. */
#include "ds_internal.h"

#include <math.h>
#include <stdlib.h>

/* BE jobs with GPUs on a node, each once. */
static int32_t be_on_node(const ds_engine_t *e, int32_t node, int32_t *out, int32_t max)
{
    const ds_node_t *nd = &e->nodes[node];
    int32_t n = 0;
    for (int32_t g = nd->gpu0; g < nd->gpu0 + nd->ngpus; g++)
        for (int32_t r = 0; r < e->gpus[g].nres; r++) {
            int32_t v = e->gpus[g].res[r], seen = 0;
            if (e->js[v].klass != DS_CLASS_BE) continue;
            for (int32_t q = 0; q < n; q++) seen |= out[q] == v;
            if (!seen && n < max) out[n++] = v;
        }
    return n;
}

/* What shrinking v to the floor would free on a node. */
static void shrink_gain(const ds_engine_t *e, const dsp_t *s, int32_t v, int32_t node, int32_t *c, int64_t *m)
{
    int32_t uc;
    int64_t um;
    ds_engine_job_node_use(e, v, node, &uc, &um);
    float sc = e->js[v].cpu_scale > 0 ? e->js[v].cpu_scale : 1.0f;
    double f = sc > s->cfg.cpu_floor ? s->cfg.cpu_floor / sc : 1.0;
    *c = uc - (int32_t)ceil((double)uc * f);
    *m = um - (int64_t)ceil((double)um * f);
}

int dsp_try_cpu_reclaim(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now)
{
    int32_t g = e->trace->jobs[j].gpus, part = e->js[j].part;
    if (g > e->cfg.gpus_per_node || e->parts[part].gpus_free < g) return 0;
    const ds_part_t *p = &e->parts[part];
    int32_t best = -1, be[DS_MAX_GPUS_PER_NODE * DS_MAX_K];
    for (int32_t n = p->node0; n < p->node0 + p->nnodes; n++) {
        if (s->blocked[n] || e->nodes[n].nfree < g || (best >= 0 && e->nodes[n].nfree >= e->nodes[best].nfree)) continue;
        if (e->ntypes > 1 && !dsp_node_usable(e, s, j, n)) continue;
        int32_t nb = be_on_node(e, n, be, (int32_t)(sizeof be / sizeof be[0])), cs = 0;
        int64_t ms = 0;
        for (int32_t k = 0; k < nb; k++) {
            int32_t c;
            int64_t m;
            shrink_gain(e, s, be[k], n, &c, &m);
            cs += c, ms += m;
        }
        if (nb && ds_engine_node_fits_after(e, n, j, g, cs, ms)) best = n;
    }
    if (best < 0) return 0;
    /* Decide first, commit after: the jobs to shrink, in order, until j fits by the holds they will
     * have at the floor (the engine's rounding), so that a reclamation that cannot place j shrinks none. */
    int32_t nb = be_on_node(e, best, be, (int32_t)(sizeof be / sizeof be[0])), nshrink = 0, cs = 0;
    int64_t ms = 0;
    for (int32_t k = 0; k < nb && !ds_engine_node_fits_after(e, best, j, g, cs, ms); k++) {
        float sc = e->js[be[k]].cpu_scale > 0 ? e->js[be[k]].cpu_scale : 1.0f;
        if (sc <= s->cfg.cpu_floor) continue;
        int32_t c0, c1;
        int64_t m0, m1;
        ds_engine_job_node_use(e, be[k], best, &c0, &m0);
        ds_engine_job_node_use_at(e, be[k], best, s->cfg.cpu_floor, &c1, &m1);
        cs += c0 - c1, ms += m0 - m1;
        be[nshrink++] = be[k];
    }
    int32_t gpus[DS_MAX_GPUS_PER_NODE];
    if (!ds_engine_node_fits_after(e, best, j, g, cs, ms) || ds_engine_node_free_gpus(e, best, g, gpus) < g) return 0;
    for (int32_t k = 0; k < nshrink; k++) ds_engine_set_cpu_scale(e, be[k], s->cfg.cpu_floor);
    s->st.cpu_shrunk_jobs += nshrink;
    DS_ASSERT(ds_engine_node_fits(e, best, j));
    s->st.cpu_reclaims++;
    dsp_preempt_memo_reset(s); /* shrunk BE jobs left CPU headroom a failed reclamation lacked */
    dsp_start(e, s, j, gpus, -1, now);
    return 1;
}

/* The escalation itself; reserved nodes j must keep off are marked in s->blocked. */
static int place(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now, uint8_t *blocked)
{
    int32_t g = e->trace->jobs[j].gpus, part = e->js[j].part;
    /* Best effort fills shared capacity first when sharing is predicted nearly free for both jobs: the
     * free GPUs stay whole for guaranteed and multi-GPU work. */
    if (s->cfg.share_first && s->cfg.interference_aware && e->js[j].klass == DS_CLASS_BE &&
        dsp_try_colocate_min(e, s, j, now, DS_MAX(s->cfg.tau_max, s->cfg.share_first_min)))
        return 1;
    if (e->parts[part].gpus_free >= g) {
        int32_t buf[256];
        int32_t *out = g <= 256 ? buf : ds_xmalloc((size_t)g * sizeof *out);
        int ok = dsp_take_free(e, s, j, part, blocked, now, out);
        if (ok) dsp_start(e, s, j, out, -1, now);
        if (out != buf) free(out);
        if (ok) return 1;
    }
    if (dsp_try_colocate(e, s, j, now)) return 1;
    if (s->cfg.cpu_reclaim && dsp_try_cpu_reclaim(e, s, j, now)) return 1;
    if (s->cfg.preemption && e->js[j].klass == DS_CLASS_G && s->cfg.borrowing &&
        dsp_underserved(s, e->trace->jobs[j].tenant))
        return dsp_try_preempt(e, s, j, now);
    /* A served tenant's G job has its guarantee (QAD within theta), so it may only take what others hold beyond
     * theirs, and only where the preemption shortens waiting (the victim would hold the GPUs longer than the
     * job needs them): without this, a large tenant's G job waits behind the tolerance theta gives it. Off where
     * quotas are typed (hetero: +16% avg queue, compliance 0.903 -> 0.834; docs/results.md, session 19). */
    if (s->cfg.preemption && s->cfg.borrowing && e->js[j].klass == DS_CLASS_G && dsp_served_reclaim_on(e, s)) {
        s->served_for = e->trace->jobs[j].tenant;
        s->served_rem = dsp_remaining(e, s, j, now);
        int ok = dsp_try_preempt(e, s, j, now);
        s->served_for = -1;
        return ok;
    }
    /* fair share: a BE job its tenant's share has room for reclaims from tenants above theirs */
    if (s->cfg.preemption && (s->cfg.fair_share & DSP_FS_RECLAIM) && e->js[j].klass == DS_CLASS_BE && s->fair_on &&
        dsp_fair_within(e, s, j))
        return dsp_try_fair_reclaim(e, s, j, now);
    return 0;
}

int dsp_place(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now)
{
    if (!s->nresv) return place(e, s, j, now, NULL);
    int masked = dsp_resv_mask(e, s, j, now);
    int ok = place(e, s, j, now, masked ? s->blocked : NULL);
    if (masked) dsp_resv_unmask(s);
    return ok;
}
