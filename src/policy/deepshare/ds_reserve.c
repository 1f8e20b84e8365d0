/* ds_reserve.c: reservations with backfill (docs/policy.md, "Reservations"): a job that has waited longer
 * than reserve_after and still cannot be placed reserves the node (or whole nodes) predicted to free up
 * soonest; other jobs use reserved GPUs only when predicted to finish before the reservation starts. */
#include "ds_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Predicted time at which each GPU of a node holds no job, written to t (ngpus entries), ascending. */
static int32_t gpu_free_times(const ds_engine_t *e, const dsp_t *s, int32_t node, int64_t now, double *t)
{
    const ds_node_t *nd = &e->nodes[node];
    for (int32_t k = 0; k < nd->ngpus; k++) {
        const ds_gpu_t *gp = &e->gpus[nd->gpu0 + k];
        double at = (double)now;
        for (int32_t r = 0; r < gp->nres; r++) at = fmax(at, (double)now + dsp_remaining(e, s, gp->res[r], now));
        t[k] = at;
    }
    qsort(t, (size_t)nd->ngpus, sizeof *t, dsp_cmp_double);
    return nd->ngpus;
}

static void unmap(dsp_t *s, dsp_resv_t *r)
{
    for (int32_t k = 0; k < r->nn; k++) s->node_resv[r->nodes[k]] = -1;
    r->nn = 0;
}

/* Chooses r's nodes among those no other reservation holds and sets r->start; 0 when none can hold it. */
static int choose(const ds_engine_t *e, dsp_t *s, dsp_resv_t *r, int32_t idx, int64_t now)
{
    const ds_part_t *p = &e->parts[r->part];
    int32_t g = e->trace->jobs[r->job].gpus, gpn = e->cfg.gpus_per_node;
    double t[DS_MAX_GPUS_PER_NODE];
    if (g <= gpn) {
        int32_t best = -1;
        double bt = INFINITY;
        for (int32_t n = p->node0; n < p->node0 + p->nnodes; n++) {
            if (s->node_resv[n] >= 0 || e->nodes[n].ngpus < g) continue;
            gpu_free_times(e, s, n, now, t);
            if (t[g - 1] < bt) bt = t[g - 1], best = n;
        }
        if (best < 0) return 0;
        r->nodes[0] = best;
        r->nn = 1;
        r->start = (int64_t)ceil(bt);
    } else {
        int32_t want = (g + gpn - 1) / gpn, m = 0;
        for (int32_t n = p->node0; n < p->node0 + p->nnodes; n++) {
            if (s->node_resv[n] >= 0) continue;
            int32_t ng = gpu_free_times(e, s, n, now, t);
            s->resv_time[m] = t[ng - 1];
            s->resv_node[m++] = n;
        }
        if (m < want) return 0;
        /* the want nodes that are wholly free soonest (selection: want is small next to the nodes) */
        double start = 0;
        for (int32_t k = 0; k < want; k++) {
            int32_t b = k;
            for (int32_t q = k + 1; q < m; q++)
                if (s->resv_time[q] < s->resv_time[b]) b = q;
            double tt = s->resv_time[k];
            int32_t nn = s->resv_node[k];
            s->resv_time[k] = s->resv_time[b], s->resv_node[k] = s->resv_node[b];
            s->resv_time[b] = tt, s->resv_node[b] = nn;
            r->nodes[k] = s->resv_node[k];
            start = fmax(start, s->resv_time[k]);
        }
        r->nn = want;
        r->start = (int64_t)ceil(start);
    }
    for (int32_t k = 0; k < r->nn; k++) s->node_resv[r->nodes[k]] = idx;
    return 1;
}

void dsp_resv_refresh(ds_engine_t *e, dsp_t *s, int32_t part, int64_t now)
{
    s->resv_new = 0;
    int32_t w = 0;
    /* drop the reservations of jobs that started (or finished); keep the others in age order */
    for (int32_t i = 0; i < s->nresv; i++) {
        dsp_resv_t *r = &s->resv[i];
        unmap(s, r);
        /* a held job (the driver cannot start it yet) keeps no nodes idle for itself either */
        if (!ds_engine_startable(e, r->job)) {
            free(r->nodes);
            continue;
        }
        s->resv[w++] = *r;
    }
    s->nresv = w;
    /* predictions moved since the last pass: choose again, oldest reservation first */
    w = 0;
    for (int32_t i = 0; i < s->nresv; i++) {
        dsp_resv_t r = s->resv[i];
        if (r.part != part) {
            for (int32_t k = 0; k < r.nn; k++) s->node_resv[r.nodes[k]] = w;
            s->resv[w++] = r;
            continue;
        }
        if (!choose(e, s, &r, w, now)) {
            free(r.nodes);
            continue;
        }
        s->resv[w++] = r;
    }
    s->nresv = w;
}

void dsp_resv_try(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now)
{
    const ds_jstate_t *js = &e->js[j];
    if (s->cfg.reserve_after <= 0 || s->resv_new >= s->cfg.reserve_max || s->resv_fail[j] == s->st.passes) return;
    /* reservations pick nodes by when they free up, blind to GPU types: off on a cluster of several */
    if (e->ntypes > 1) return;
    int64_t waited = js->queued + (now - js->pend_since);
    if (waited <= s->cfg.reserve_after) return;
    for (int32_t i = 0; i < s->nresv; i++)
        if (s->resv[i].job == j) return;
    if (s->nresv == s->capresv) {
        s->capresv = s->capresv ? 2 * s->capresv : 8;
        s->resv = ds_xrealloc(s->resv, (size_t)s->capresv * sizeof *s->resv);
    }
    int32_t gpn = e->cfg.gpus_per_node, g = e->trace->jobs[j].gpus;
    dsp_resv_t r = {.job = j, .part = js->part, .nn = 0};
    r.nodes = ds_xmalloc((size_t)DS_MAX(1, (g + gpn - 1) / gpn) * sizeof *r.nodes);
    if (!choose(e, s, &r, s->nresv, now)) {
        free(r.nodes);
        s->resv_fail[j] = s->st.passes; /* nothing to reserve in this pass: do not search again */
        return;
    }
    s->resv[s->nresv++] = r;
    s->resv_new++;
    s->st.reservations++;
}

/* Whether job j must keep off reservation r. */
static int respects(const ds_engine_t *e, const dsp_t *s, int32_t j, const dsp_resv_t *r, int64_t now)
{
    if (r->job == j) return 0;
    /* backfill: done before the reserved start */
    if ((double)now + dsp_remaining(e, s, j, now) <= (double)r->start) return 0;
    /* an under-served tenant's G job outranks BE holders and better-served tenants' reservations */
    int32_t tj = e->trace->jobs[j].tenant, tr = e->trace->jobs[r->job].tenant;
    if (e->js[j].klass == DS_CLASS_G && dsp_underserved(s, tj) &&
        (e->js[r->job].klass != DS_CLASS_G || dsp_band(s, tr) > dsp_band(s, tj)))
        return 0;
    return 1;
}

int dsp_resv_mask(const ds_engine_t *e, dsp_t *s, int32_t j, int64_t now)
{
    int any = 0;
    for (int32_t i = 0; i < s->nresv; i++) {
        const dsp_resv_t *r = &s->resv[i];
        if (r->part != e->js[j].part || !respects(e, s, j, r, now)) continue;
        for (int32_t k = 0; k < r->nn; k++) s->blocked[r->nodes[k]] = 1;
        any = 1;
    }
    return any;
}

void dsp_resv_unmask(dsp_t *s)
{
    for (int32_t i = 0; i < s->nresv; i++)
        for (int32_t k = 0; k < s->resv[i].nn; k++) s->blocked[s->resv[i].nodes[k]] = 0;
}

int dsp_resv_backfilled(const ds_engine_t *e, const dsp_t *s, int32_t j, const int32_t *gpus, int32_t n)
{
    for (int32_t k = 0; k < n; k++) {
        int32_t ri = s->node_resv[e->gpus[gpus[k]].node];
        if (ri >= 0 && s->resv[ri].job != j) return 1;
    }
    return 0;
}

void dsp_resv_free(dsp_t *s)
{
    for (int32_t i = 0; i < s->nresv; i++) free(s->resv[i].nodes);
    free(s->resv);
}
