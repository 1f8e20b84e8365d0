/* ds_classify.c: elastic borrowing (docs/policy.md §2): cycle-local G/BE classification of pending jobs against
 * each tenant's quota and BE cap, and promotion of running BE jobs to G when quota frees. */
#include "ds_internal.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* A tenant's budgets as classification walks its pending jobs in its order. */
static void budget_init(const ds_engine_t *e, const dsp_t *s, int32_t ten, dsp_budget_t *b)
{
    b->q = e->tenant_quota[ten];
    b->becap = s->cfg.borrowing ? (int64_t)floor(s->cfg.m * (double)b->q + 1e-9) : 0;
    /* Hard quotas: a tenant's colocated (BE) jobs count against its quota too. */
    b->gbud = b->q - e->tenant_g_gpus[ten] - (s->cfg.borrowing ? 0 : e->tenant_be_gpus[ten]);
    /* a run that yielded its G class borrows nothing: it holds GPUs its own quota once gave it */
    b->be_now = e->tenant_be_gpus[ten] - s->ygpus[ten];
    b->bbud = b->becap - b->be_now;
    b->be_taken = 0;
    b->prefix = 0;
    b->bf_gpus = 0;
    b->bf_need = 0;
    b->bf_until = 0;
    if (!s->typed) return;
    /* several GPU types: G room per type, or in effective GPUs (docs/heterogeneous.md) */
    size_t k0 = (size_t)ten * (size_t)e->ntypes;
    if (s->cfg.type_quota == DSP_TQ_EFFECTIVE) {
        b->gbud_eff = dsp_eff_quota(e, s, ten) - dsp_eff_held(e, s, ten);
        if (!s->cfg.borrowing)
            for (int32_t t = 0; t < e->ntypes; t++) b->gbud_eff -= (double)e->tenant_be_gpus_t[k0 + t] * s->tw[t];
        b->gbud = (int64_t)ceil(b->gbud_eff - 1e-9);
        return;
    }
    b->gbud = 0;
    for (int32_t t = 0; t < e->ntypes; t++) {
        b->gbud_t[t] = ds_engine_quota_t(e, ten, t) - e->tenant_g_gpus_t[k0 + t] - (s->cfg.borrowing ? 0 : e->tenant_be_gpus_t[k0 + t]);
        if (b->gbud_t[t] > 0) b->gbud += b->gbud_t[t];
    }
}

/* budget_take's G step on several GPU types: the first type in j's placement order (as a G job) with room
 * takes it. Returns 1 when j is G. The G prefix rule closes the types whose quota could hold j. */
static int take_g_typed(const ds_engine_t *e, const dsp_t *s, dsp_budget_t *b, int32_t j)
{
    int32_t g = e->trace->jobs[j].gpus, types[DS_MAX_GPU_TYPES], n = dsp_type_order(e, s, j, DS_CLASS_G, types);
    int eff = s->cfg.type_quota == DSP_TQ_EFFECTIVE;
    for (int32_t k = 0; k < n; k++) {
        int32_t t = types[k];
        if (eff ? (double)g * s->tw[t] <= b->gbud_eff + 1e-9 : g <= b->gbud_t[t]) {
            if (eff) {
                b->gbud_eff -= (double)g * s->tw[t];
                b->gbud = (int64_t)ceil(b->gbud_eff - 1e-9);
            } else {
                b->gbud_t[t] -= g;
                b->gbud -= g;
            }
            return 1;
        }
    }
    if (!s->cfg.g_prefix || !s->cfg.borrowing) return 0;
    int32_t ten = e->trace->jobs[j].tenant;
    for (int32_t k = 0; k < n; k++) {
        int32_t t = types[k];
        if (eff && (double)g * s->tw[t] <= dsp_eff_quota(e, s, ten) + 1e-9) {
            b->gbud_eff = 0, b->gbud = 0, b->prefix = 1;
            break;
        }
        if (!eff && g <= ds_engine_quota_t(e, ten, t) && b->gbud_t[t] > 0) {
            b->gbud -= b->gbud_t[t];
            b->gbud_t[t] = 0, b->prefix = 1;
        }
    }
    return 0;
}

/* Predicted seconds until tenant ten's running G jobs free `need` GPUs of its quota (ending soonest first);
 * 0 when they cannot. d has room for the tenant's running jobs. */
static double drain_time(const ds_engine_t *e, const dsp_t *s, int32_t ten, int64_t need, int64_t now, dsp_drain_t *d)
{
    const dsp_list_t *r = &s->trun[ten];
    int32_t n = 0;
    for (int32_t k = 0; k < r->n; k++) {
        int32_t x = r->v[k];
        if (e->js[x].klass == DS_CLASS_G) d[n++] = (dsp_drain_t){dsp_remaining(e, s, x, now), e->trace->jobs[x].gpus};
    }
    _Static_assert(offsetof(dsp_drain_t, rem) == 0, "dsp_cmp_double reads rem at the start of each element");
    qsort(d, (size_t)n, sizeof *d, dsp_cmp_double);
    int64_t freed = 0;
    for (int32_t k = 0; k < n; k++)
        if ((freed += d[k].gpus) >= need) return d[k].rem;
    return 0;
}

/* Quota backfill (docs/policy.md §2): job j, passed over by the G prefix, fits the quota the prefix closed
 * and is predicted to end before the tenant's own G runs free what the job at the prefix lacks, so it delays
 * that job no more than a G run already does (a run that outlives its prediction yields its class, §2). The
 * drain time is taken once per tenant and pass, at the first such candidate. */
static int backfill(const ds_engine_t *e, const dsp_t *s, dsp_budget_t *b, int32_t j, int64_t now, dsp_drain_t *d)
{
    int32_t g = e->trace->jobs[j].gpus;
    if (!b->prefix || g > b->bf_gpus) return 0;
    if (b->bf_need > 0) {
        int32_t ten = e->trace->jobs[j].tenant, nr = s->trun[ten].n;
        dsp_drain_t *own = d ? d : ds_xmalloc((size_t)(nr ? nr : 1) * sizeof *own);
        b->bf_until = drain_time(e, s, ten, b->bf_need, now, own);
        b->bf_need = 0;
        if (!d) free(own);
    }
    if (dsp_remaining(e, s, j, now) > b->bf_until) return 0;
    b->bf_gpus -= g;
    return 1;
}

/* The class the tenant's next job in order gets (DS_CLASS_G, DS_CLASS_BE, or 0: it waits), taken from b.
 * d: scratch for the quota backfill (room for the tenant's running jobs), or NULL (allocated when needed). */
static inline int budget_take(const ds_engine_t *e, const dsp_t *s, dsp_budget_t *b, int32_t j, int64_t now, dsp_drain_t *d)
{
    const ds_job_t *job = &e->trace->jobs[j];
    int32_t g = job->gpus;
    /* Without borrowing there is no BE class: explicit BE submissions queue as G. */
    int explicit_be = s->cfg.borrowing && job->klass == DS_CLASS_BE;
    /* A job larger than both caps could never be classified: it may run as the tenant's only BE
     * job, so nothing starves (it stays reclaimable). */
    int oversize = g > (explicit_be ? b->becap : DS_MAX(b->q, b->becap)) && b->be_now == 0 && !b->be_taken;
    if (s->typed) {
        if (!explicit_be && take_g_typed(e, s, b, j)) return DS_CLASS_G;
        if (g <= b->bbud || oversize) {
            b->bbud -= g;
            b->be_taken = 1;
            return DS_CLASS_BE;
        }
        return 0;
    }
    /* with borrowing, jobs passed over still run as BE; without it a prefix would be head-of-line blocking */
    if (!explicit_be && g > b->gbud && g <= b->q && s->cfg.g_prefix && s->cfg.borrowing && !b->prefix) {
        /* the quota closed to later jobs, and (quota backfill) the GPUs j still lacks, kept until a candidate
         * asks for the drain time */
        if (s->cfg.quota_backfill && s->cfg.prediction && b->gbud > 0) b->bf_gpus = b->gbud, b->bf_need = g - b->gbud;
        b->gbud = 0, b->prefix = 1;
    }
    if (!explicit_be && g <= b->gbud) {
        b->gbud -= g;
        return DS_CLASS_G;
    }
    if (!explicit_be && backfill(e, s, b, j, now, d)) return DS_CLASS_G;
    if (g <= b->bbud || oversize) {
        b->bbud -= g;
        b->be_taken = 1;
        return DS_CLASS_BE;
    }
    return 0;
}

/* v[0..n) holds the partition's pending jobs grouped by tenant, each in the tenant's order.
 * Writes G jobs to s->qg (or, of a served tenant with served-g-in-qb, to s->qb) and BE jobs to s->qb; the
 * rest wait for a later pass. */
void dsp_classify(ds_engine_t *e, dsp_t *s, const int32_t *v, int32_t n, int64_t now, int32_t *ng, int32_t *nb)
{
    const ds_trace_t *t = e->trace;
    int32_t g_n = 0, b_n = 0;
    dsp_budget_t b = {0};
    int32_t cur = -1;
    if (s->cfg.quota_backfill && s->drain_cap < s->run.n) {
        s->drain_cap = s->run.n;
        s->drain = ds_xrealloc(s->drain, (size_t)s->drain_cap * sizeof *s->drain);
    }
    for (int32_t k = 0; k < n; k++) {
        int32_t j = v[k], ten = t->jobs[j].tenant;
        /* held by the driver: not a candidate this pass, and it takes no share of its tenant's budgets */
        if (e->js[j].held) continue;
        if (ten != cur) {
            cur = ten;
            budget_init(e, s, ten, &b);
        }
        if (b.gbud <= 0 && b.bbud <= 0 && b.bf_gpus <= 0 && (b.be_taken || b.be_now > 0)) {
            /* nothing more of this tenant can be classified: skip to the next tenant's run */
            int32_t lo = k, hi = n;
            while (lo < hi) {
                int32_t mid = lo + (hi - lo) / 2;
                if (t->jobs[v[mid]].tenant <= ten) lo = mid + 1;
                else hi = mid;
            }
            k = lo - 1;
            continue;
        }
        int cls = budget_take(e, s, &b, j, now, s->drain);
        if (cls == DS_CLASS_G) {
            ds_engine_set_class(e, j, DS_CLASS_G);
            s->cls_pass[j] = s->st.passes;
            /* QAD steers the order: a served tenant's G job needs no head start over best-effort work (its
             * class already makes it safe from preemption once it runs), and its tenant's QAD falling under
             * theta is what moves its G jobs first (docs/policy.md §3, revision 7) */
            if (s->cfg.served_g_in_qb && s->cfg.borrowing && !dsp_underserved(s, ten)) s->qb[b_n++] = j;
            else s->qg[g_n++] = j;
        } else if (cls == DS_CLASS_BE) {
            ds_engine_set_class(e, j, DS_CLASS_BE);
            s->cls_pass[j] = s->st.passes;
            s->qb[b_n++] = j;
        }
    }
    *ng = g_n;
    *nb = b_n;
}

int dsp_class_now(const ds_engine_t *e, const dsp_t *s, int32_t j, int64_t now, dsp_budget_t *before)
{
    const ds_trace_t *t = e->trace;
    const dsp_list_t *pl = &s->pend[e->js[j].part];
    int32_t ten = t->jobs[j].tenant;
    dsp_budget_t b;
    budget_init(e, s, ten, &b);
    for (int32_t k = 0; k < pl->n; k++) {
        int32_t x = pl->v[k];
        if (t->jobs[x].tenant != ten || (e->js[x].held && x != j)) continue;
        if (x == j) {
            *before = b;
            int cls = budget_take(e, s, &b, j, now, NULL);
            before->bf_until = b.bf_until; /* the drain time, if j's turn was what took it */
            return cls;
        }
        budget_take(e, s, &b, x, now, NULL);
    }
    *before = b;
    return 0;
}

static _Thread_local const ds_trace_t *cmp_t;

static int cmp_oldest(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    const ds_job_t *ja = &cmp_t->jobs[a], *jb = &cmp_t->jobs[b];
    if (ja->tenant != jb->tenant) return ja->tenant < jb->tenant ? -1 : 1;
    if (ja->submit != jb->submit) return ja->submit < jb->submit ? -1 : 1;
    return (a > b) - (a < b);
}

void dsp_waiting_gpus(const ds_engine_t *e, const dsp_t *s, int64_t *waits)
{
    const ds_trace_t *t = e->trace;
    memset(waits, 0, (size_t)s->nt * sizeof *waits);
    for (int32_t p = 0; p < s->nparts; p++)
        for (int32_t k = 0; k < s->pend[p].n; k++) {
            int32_t j = s->pend[p].v[k], ten = t->jobs[j].tenant;
            if (ds_engine_startable(e, j) && t->jobs[j].gpus <= e->tenant_quota[ten]) waits[ten] += t->jobs[j].gpus;
        }
}

void dsp_promote(ds_engine_t *e, dsp_t *s)
{
    const ds_trace_t *t = e->trace;
    int32_t n = 0;
    /* A yield was for the work its tenant had waiting; with none left the reason is gone, and a yielded
     * job kept BE would leave its quota to the next arrivals as exclusive G starts (a BE start shares
     * first, §5), which spreads the load over more GPUs than the same jobs need with exact predictions. */
    int64_t *waits = NULL;
    for (int32_t i = 0; i < s->nt && !waits; i++)
        if (s->ygpus[i] > 0) waits = s->waits, dsp_waiting_gpus(e, s, waits);
    /* A shared job stays BE: a pair must keep a BE member the monitor can stop. */
    for (int32_t k = 0; k < s->run.n; k++) {
        int32_t j = s->run.v[k];
        if (e->js[j].klass != DS_CLASS_BE || s->pair[j] >= 0 || (t->jobs[j].klass == DS_CLASS_BE && s->cfg.borrowing))
            continue;
        /* a run restarted after its yield stays BE (promoting those too queued longer on Venus x1.5,
         * 485 s against 375 s over 16 seeds, and no less elsewhere: docs/policy.md §2) */
        if (s->yielded[j] == DSP_YIELD_ENDED || (s->yielded[j] == DSP_YIELDED && waits[t->jobs[j].tenant] > 0)) continue;
        s->order[n++] = j;
    }
    if (!n) return;
    cmp_t = t;
    qsort(s->order, (size_t)n, sizeof *s->order, cmp_oldest);
    for (int32_t k = 0; k < n; k++) {
        int32_t j = s->order[k], ten = t->jobs[j].tenant, g = t->jobs[j].gpus;
        if (s->typed ? !dsp_g_room(e, s, j, ds_engine_job_type(e, j), 0) : e->tenant_g_gpus[ten] + g > e->tenant_quota[ten])
            continue;
        dsp_list_remove(dsp_solo(s, e->js[j].part, 1, g), s->spos, j);
        ds_engine_set_class(e, j, DS_CLASS_G);
        dsp_list_push(dsp_solo(s, e->js[j].part, 0, g), s->spos, j);
        if (s->yielded[j] == DSP_YIELDED) {
            s->yielded[j] = DSP_YIELD_BACK;
            s->ygpus[ten] -= g;
            s->st.yields_back++;
        }
        s->st.promotions++;
        s->st.promoted_gpus += g;
    }
}

static int32_t g_head(const ds_engine_t *e, const dsp_t *s, int32_t i);

/* Attained-service yield (docs/policy.md §2): j, a G run within its prediction, has held its tenant's quota for
 * more than k typical runs while the tenant's next job is predicted to end before it does. */
static int attained(const ds_engine_t *e, const dsp_t *s, int32_t j, double el, int64_t now)
{
    double k = s->cfg.attained_yield;
    if (k <= 0 || s->typical.median <= 0 || el <= k * s->typical.median) return 0;
    int32_t h = g_head(e, s, e->trace->jobs[j].tenant);
    return h >= 0 && dsp_remaining(e, s, h, now) < dsp_remaining(e, s, j, now);
}

void dsp_yield(ds_engine_t *e, dsp_t *s, int64_t now)
{
    const ds_trace_t *t = e->trace;
    /* without a BE class there is nothing to yield to; without prediction nothing to outlive */
    if (!s->cfg.borrowing || !s->cfg.prediction) return;
    /* GPUs of each tenant's pending jobs its quota could hold: only they gain from the quota a job
     * yields, and a job yields only what they could use (a long 40-GPU run gives way to 40 GPUs of
     * waiting work, not to one 1-GPU job, which a reclaim would otherwise serve by stopping all 40).
     * Most cycles nothing waits, and then no running job needs a look. */
    int64_t *waits = s->waits;
    dsp_waiting_gpus(e, s, waits);
    int any = 0;
    for (int32_t i = 0; i < s->nt && !any; i++) any = waits[i] > 0;
    if (!any) return;
    int32_t n = 0;
    for (int32_t k = 0; k < s->run.n; k++) {
        int32_t j = s->run.v[k];
        if (e->js[j].klass != DS_CLASS_G || s->pair[j] >= 0 || waits[t->jobs[j].tenant] < t->jobs[j].gpus ||
            !(s->yielded[j] == DSP_YIELD_NONE || s->yielded[j] == DSP_YIELD_BACK))
            continue;
        double el = dsp_elapsed(e, s, j, now);
        if ((el > s->pred[j] || attained(e, s, j, el, now)) && dsp_batch_total(e, s, j, el) < 0) s->order[n++] = j;
    }
    if (!n) return;
    /* quota its owners neither use nor wait for: a yielded job held there is a borrower like any other */
    int64_t idle = 0;
    for (int32_t u = 0; u < s->nt; u++) {
        int64_t d = e->tenant_quota[u] - e->tenant_g_gpus[u] - e->tenant_be_gpus[u] - e->tenant_pending_gpus[u];
        if (d > 0) idle += d;
    }
    const ds_runtime_predictor_t *rp = e->predictors ? e->predictors->runtime : NULL;
    for (int32_t k = 0; k < n; k++) {
        int32_t j = s->order[k], g = t->jobs[j].gpus, ten = t->jobs[j].tenant;
        if (waits[ten] < g) continue;
        /* Elsewhere the tenants that own the quota reclaim it, and a reclaim restarts the yielded job:
         * that pays only when what remains of it is at least what it loses, el. What remains is what
         * the predictor's own recent errors say of a job that has run this long (light tails: a job
         * past its estimate is nearly done; heavy tails: as long again or more); unknown, as long again. */
        double el = dsp_elapsed(e, s, j, now);
        if (idle < g) {
            double rest = rp && rp->beyond ? rp->beyond(rp->ctx, s->pred[j], (int64_t)el) : -1;
            if (rest >= 0 && rest < el) continue;
        } else {
            idle -= g;
        }
        waits[ten] -= g;
        dsp_list_remove(dsp_solo(s, e->js[j].part, 0, g), s->spos, j);
        ds_engine_set_class(e, j, DS_CLASS_BE);
        dsp_list_push(dsp_solo(s, e->js[j].part, 1, g), s->spos, j);
        s->yielded[j] = DSP_YIELDED;
        s->qyield[j] = el > s->pred[j] ? DSP_QY_OVERRUN : DSP_QY_ATTAINED;
        s->ygpus[t->jobs[j].tenant] += g;
        s->st.yields++;
        if (s->qyield[j] == DSP_QY_ATTAINED) s->st.attained_yields++;
    }
}

/* Quota yield (docs/policy.md §2). The quota serves a tenant's jobs in its own order (predicted remaining
 * time): a running G run predicted to outlast the tenant's waiting head job stands, by that order, behind
 * it, and while the tenant is under-served it holds quota the head needs, so the head can neither be G nor
 * reclaim. Those runs give up their class, longest first, just enough for the head: they run on as BE (as
 * an overrun yield's run, reclaimable, promoted back once nothing of the tenant waits). */
static _Thread_local const ds_engine_t *qy_e;
static _Thread_local const dsp_t *qy_s;
static _Thread_local int64_t qy_now;

static int cmp_longest(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    double ra = dsp_remaining(qy_e, qy_s, a, qy_now), rb = dsp_remaining(qy_e, qy_s, b, qy_now);
    if (ra != rb) return ra > rb ? -1 : 1;
    return (a > b) - (a < b);
}

/* Tenant i's first startable pending job its quota could hold (the head of its G order), or -1. */
static int32_t g_head(const ds_engine_t *e, const dsp_t *s, int32_t i)
{
    for (int32_t p = 0; p < s->nparts; p++)
        for (int32_t k = 0; k < s->pend[p].n; k++) {
            int32_t j = s->pend[p].v[k];
            if (e->trace->jobs[j].tenant == i && e->trace->jobs[j].gpus <= e->tenant_quota[i] && ds_engine_startable(e, j))
                return j;
        }
    return -1;
}

void dsp_quota_yield(ds_engine_t *e, dsp_t *s, int64_t now)
{
    const ds_trace_t *t = e->trace;
    /* per-type quotas would need the head's type; without borrowing there is no BE class to yield to */
    if (!s->cfg.borrowing || s->typed) return;
    for (int32_t i = 0; i < s->nt; i++) {
        if (!dsp_underserved(s, i) || e->tenant_g_gpus[i] == 0) continue;
        int32_t head = g_head(e, s, i);
        if (head < 0) continue;
        int64_t need = e->tenant_g_gpus[i] + t->jobs[head].gpus - e->tenant_quota[i];
        if (need <= 0) continue;
        double hrem = dsp_remaining(e, s, head, now);
        int32_t n = 0;
        int64_t avail = 0;
        for (int32_t k = 0; k < s->run.n; k++) {
            int32_t j = s->run.v[k];
            if (t->jobs[j].tenant != i || e->js[j].klass != DS_CLASS_G || s->pair[j] >= 0 ||
                !(s->yielded[j] == DSP_YIELD_NONE || s->yielded[j] == DSP_YIELD_BACK) || dsp_remaining(e, s, j, now) <= hrem)
                continue;
            s->order[n++] = j;
            avail += t->jobs[j].gpus;
        }
        if (avail < need) continue; /* a partial yield would free quota the head still could not use */
        qy_e = e, qy_s = s, qy_now = now;
        qsort(s->order, (size_t)n, sizeof *s->order, cmp_longest);
        for (int32_t k = 0; k < n && need > 0; k++) {
            int32_t j = s->order[k], g = t->jobs[j].gpus;
            dsp_list_remove(dsp_solo(s, e->js[j].part, 0, g), s->spos, j);
            ds_engine_set_class(e, j, DS_CLASS_BE);
            dsp_list_push(dsp_solo(s, e->js[j].part, 1, g), s->spos, j);
            s->yielded[j] = DSP_YIELDED;
            s->qyield[j] = DSP_QY_QUOTA;
            s->ygpus[i] += g;
            s->st.quota_yields++;
            need -= g;
        }
    }
}

static _Thread_local const ds_engine_t *cmp_e;

static int cmp_newest(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    int64_t sa = cmp_e->js[a].last_start, sb = cmp_e->js[b].last_start;
    if (sa != sb) return sa > sb ? -1 : 1;
    return (a < b) - (a > b);
}

/* Whether running G job j's tenant holds more G GPUs than its quota, where j's count (its type's quota, or its
 * effective quota; the total with one type or blind). */
static int over_quota(const ds_engine_t *e, const dsp_t *s, int32_t j)
{
    int32_t i = e->trace->jobs[j].tenant;
    if (!s->typed) return e->tenant_g_gpus[i] > e->tenant_quota[i];
    if (s->cfg.type_quota == DSP_TQ_EFFECTIVE) return dsp_eff_held(e, s, i) > dsp_eff_quota(e, s, i) + 1e-9;
    int32_t ty = ds_engine_job_type(e, j);
    return e->tenant_g_gpus_t[(size_t)i * (size_t)e->ntypes + (size_t)ty] > ds_engine_quota_t(e, i, ty);
}

void dsp_demote(ds_engine_t *e, dsp_t *s)
{
    const ds_trace_t *t = e->trace;
    if (s->typed) {
        int32_t n = 0;
        for (int32_t k = 0; k < s->run.n; k++) {
            int32_t j = s->run.v[k];
            if (e->js[j].klass == DS_CLASS_G && s->pair[j] < 0 && over_quota(e, s, j)) s->order[n++] = j;
        }
        if (!n) return;
        cmp_e = e;
        qsort(s->order, (size_t)n, sizeof *s->order, cmp_newest);
        for (int32_t k = 0; k < n; k++) {
            int32_t j = s->order[k], g = t->jobs[j].gpus;
            if (!over_quota(e, s, j)) continue;
            dsp_list_remove(dsp_solo(s, e->js[j].part, 0, g), s->spos, j);
            ds_engine_set_class(e, j, DS_CLASS_BE);
            dsp_list_push(dsp_solo(s, e->js[j].part, 1, g), s->spos, j);
            s->st.demotions++;
        }
        return;
    }
    int over = 0;
    for (int32_t i = 0; i < s->nt; i++) over |= e->tenant_g_gpus[i] > e->tenant_quota[i];
    if (!over) return; /* only after a driver lowered a quota (ds_engine_set_quota) */
    int32_t n = 0;
    for (int32_t k = 0; k < s->run.n; k++) {
        int32_t j = s->run.v[k];
        if (e->js[j].klass == DS_CLASS_G && s->pair[j] < 0 &&
            e->tenant_g_gpus[t->jobs[j].tenant] > e->tenant_quota[t->jobs[j].tenant])
            s->order[n++] = j;
    }
    cmp_e = e;
    qsort(s->order, (size_t)n, sizeof *s->order, cmp_newest);
    for (int32_t k = 0; k < n; k++) {
        int32_t j = s->order[k], ten = t->jobs[j].tenant, g = t->jobs[j].gpus;
        if (e->tenant_g_gpus[ten] <= e->tenant_quota[ten]) continue;
        dsp_list_remove(dsp_solo(s, e->js[j].part, 0, g), s->spos, j);
        ds_engine_set_class(e, j, DS_CLASS_BE);
        dsp_list_push(dsp_solo(s, e->js[j].part, 1, g), s->spos, j);
        s->st.demotions++;
    }
}
