/* kai_cycle.c: one KAI scheduling session on a partition, as KAI-Scheduler 72de64fc runs it: fair shares
 * (proportion plugin), then the actions allocate, reclaim and preempt (pkg/scheduler/actions), with jobs
 * taken queue by queue in the proportion plugin's queue order and victims found by the job solver
 * (actions/common/solvers). docs/peers.md, "KAI", says what is modelled and what is not. */
#include "kai/kai_state.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* ---- fair shares ---- */

static void refresh_queues(ds_engine_t *e, kai_t *s, int32_t part)
{
    int32_t n = 0;
    for (int32_t k = s->pq_off[part]; k < s->pq_off[part + 1]; k++, n++) {
        kai_queue_t *q = &s->q[s->pq[k]];
        double quota = (double)e->tenant_quota[q->tenant];
        q->deserved = quota;
        if (quota > s->max_deserved_seen) s->max_deserved_seen = quota;
        q->weight = s->cfg.weight_by_quota ? quota : 1.0;
        q->limit = s->cfg.limit_factor < 0 ? -1 : s->cfg.limit_factor * quota;
        /* usage (time-based fair share) needs KAI's Prometheus usage database; without it u = 0 */
        s->sin[n] = (kai_share_in_t){q->deserved, (double)(q->alloc + e->tenant_pending_gpus[q->tenant]), q->limit,
                                      q->weight, 0, q->tenant};
    }
    kai_share_divide(s->sin, n, (double)e->parts[part].gpus_total, s->cfg.k_value, s->sout);
    n = 0;
    for (int32_t k = s->pq_off[part]; k < s->pq_off[part + 1]; k++, n++) {
        kai_queue_t *q = &s->q[s->pq[k]];
        if (q->fair != s->sout[n]) s->share_version++;
        q->fair = s->sout[n];
    }
}

/* ---- queue order (proportion/queue_order/queue_order.go GetQueueOrderResult) ----
 * The model's queues set GPU quotas only, with CPU and memory quota and limit -1 (unlimited), so every
 * comparison KAI makes over all three resources reduces to GPUs, except the dominant share, where CPU
 * (and memory, when nodes declare it) count against the partition's capacity. The first rule,
 * "over fair share last" (fairShare.Less(allocated), strictly less in every resource), never holds under
 * that setup: the CPU fair share of an unlimited queue is its whole CPU request. It is left out. */
static double dom_share(const kai_t *s, const kai_queue_t *q, double gpus, double cpus, double mem)
{
    double able = kai_queue_allocatable(q);
    double v = able == 0 ? gpus * 1000 : gpus / able; /* noFairShareDrfMultiplier */
    if (s->part_cpus[q->part] > 0) v = fmax(v, cpus / (double)s->part_cpus[q->part]);
    if (s->part_mem[q->part] > 0) v = fmax(v, mem / (double)s->part_mem[q->part]);
    return v;
}

static void key_pending(const ds_engine_t *e, kai_t *s, kai_queue_t *q)
{
    const ds_job_t *jb = &e->trace->jobs[q->head];
    double g = jb->gpus, able = kai_queue_allocatable(q);
    q->key[0] = (double)q->alloc + g <= q->deserved ? 0 : 1; /* "starved": stays within deserved with the job */
    q->key[1] = able == 0 && (double)q->alloc + g > 0;        /* holds resources it has no share of */
    q->key[2] = dom_share(s, q, (double)q->alloc + g, (double)(q->alloc_cpu + jb->cpus), (double)(q->alloc_mem + jb->mem_mib));
    q->key[3] = dom_share(s, q, (double)q->alloc, (double)q->alloc_cpu, (double)q->alloc_mem);
    q->key[4] = able;
    q->key[5] = q->tenant; /* older queue first */
}

/* A victim queue is ranked with no job and its victims so far (and the next one) taken out. */
static void key_victim(const ds_engine_t *e, kai_t *s, kai_queue_t *q)
{
    const ds_job_t *x = &e->trace->jobs[q->vnext];
    double able = kai_queue_allocatable(q);
    q->vkey[0] = (double)q->alloc <= q->deserved ? 0 : 1;
    q->vkey[1] = able == 0 && q->alloc > 0;
    q->vkey[2] = dom_share(s, q, (double)(q->alloc - q->vtaken_gpu - x->gpus), (double)(q->alloc_cpu - q->vtaken_cpu - x->cpus),
                          (double)(q->alloc_mem - q->vtaken_mem - x->mem_mib));
    q->vkey[3] = dom_share(s, q, (double)q->alloc, (double)q->alloc_cpu, (double)q->alloc_mem);
    q->vkey[4] = able;
    q->vkey[5] = q->tenant;
}

static int key_cmp(const double *a, const double *b)
{
    for (int i = 0; i < 6; i++)
        if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
    return 0;
}

static int less_pending(const void *ctx, int32_t a, int32_t b)
{
    const kai_t *s = ctx;
    return key_cmp(s->q[a].key, s->q[b].key) < 0;
}

/* victims come from the queue that would be served last */
static int less_victim(const void *ctx, int32_t a, int32_t b)
{
    const kai_t *s = ctx;
    return key_cmp(s->q[a].vkey, s->q[b].vkey) > 0;
}

/* ---- walks ---- */

/* Moves q's cursor to its next startable pending job (build list, then train; each by creation time, as
 * the priority plugin orders jobs); 0 when it has none left. */
static int advance(const ds_engine_t *e, kai_t *s, kai_queue_t *q, int first)
{
    if (first) q->cls = KAI_G, q->cur = 0;
    else q->cur++;
    for (;;) {
        int32_t list = 2 * q->tenant + q->cls;
        const pq_list_t *l = &s->pend.l[list];
        int32_t i = pq_next(&s->pend, list, q->cur);
        while (i < l->n && !ds_engine_startable(e, l->a[i].job)) i = pq_next(&s->pend, list, i + 1);
        if (i < l->n) {
            q->cur = i;
            q->head = l->a[i].job;
            return 1;
        }
        if (q->cls == KAI_BE) {
            q->head = -1;
            return 0;
        }
        q->cls = KAI_BE;
        q->cur = 0;
    }
}

/* smallest pending job of a list (its histogram bucket), 0 when none; recounted only after the smallest
 * one left */
static int32_t min_pending(const kai_queue_t *cq, int cls)
{
    kai_queue_t *q = (kai_queue_t *)cq;
    if (q->minp[cls] < 0) {
        q->minp[cls] = 0;
        for (int32_t b = 0; b < PQ_HB; b++)
            if (q->hist[cls][b]) { q->minp[cls] = b; break; }
    }
    return q->minp[cls];
}

static int within_caps(const kai_queue_t *q, int cls, int32_t g)
{
    if (cls == KAI_G && (double)(q->alloc_np + g) > q->deserved) return 0; /* non-preemptible: in-quota only */
    return q->limit < 0 || (double)(q->alloc + g) <= q->limit;
}

/* Whether any pending job of q could be allocated now: larger jobs of a list never fit where its smallest
 * does not. */
static int alloc_possible(const kai_t *s, const kai_queue_t *q)
{
    for (int cls = 0; cls < 2; cls++) {
        int32_t g = min_pending(q, cls);
        if (g && within_caps(q, cls, g) && pq_fit_may(&s->fit, g, 0)) return 1;
    }
    return 0;
}

/* ---- allocate (actions/allocate/allocate.go) ---- */

static void allocate(ds_engine_t *e, kai_t *s, int32_t part, int64_t now)
{
    if (e->parts[part].gpus_free == 0) return;
    pq_fit_refresh(&s->fit, e, part);
    pq_heap_t *h = &s->qh;
    pq_heap_clear(h);
    h->less = less_pending;
    for (int32_t k = s->pq_off[part]; k < s->pq_off[part + 1]; k++) {
        kai_queue_t *q = &s->q[s->pq[k]];
        if (alloc_possible(s, q) && advance(e, s, q, 1)) {
            key_pending(e, s, q);
            pq_heap_push(h, q->tenant);
        }
    }
    int32_t qi;
    while ((qi = pq_heap_top(h)) >= 0 && e->parts[part].gpus_free > 0) {
        kai_queue_t *q = &s->q[qi];
        if (!alloc_possible(s, q)) {
            pq_heap_pop(h);
            continue;
        }
        int32_t j = q->head;
        const ds_job_t *jb = &e->trace->jobs[j];
        if (within_caps(q, s->cls[j], jb->gpus) && pq_fit_may(&s->fit, jb->gpus, jb->cpus)) {
            if (ds_engine_place(e, j, now)) {
                kai_on_start(e, s, j);
                pq_fit_refresh(&s->fit, e, part);
            } else {
                pq_fit_failed(&s->fit, jb->gpus, jb->cpus);
            }
        }
        if (!advance(e, s, q, 0)) {
            pq_heap_pop(h);
            continue;
        }
        key_pending(e, s, q);
        pq_heap_fix(h, qi);
    }
}

/* ---- the job solver: victims one at a time until the job fits on a victim's node ---- */

/* Whether GPU i of a job's list is the first of its node in the list: placement takes a job's GPUs node by
 * node, so a look at the previous one settles nearly every case. */
static int first_on_node(const ds_engine_t *e, const int32_t *gp, int32_t i)
{
    int32_t n = e->gpus[gp[i]].node;
    if (i == 0) return 1;
    if (e->gpus[gp[i - 1]].node == n) return 0;
    for (int32_t q = 0; q < i - 1; q++)
        if (e->gpus[gp[q]].node == n) return 0;
    return 1;
}

static void clear_acc(kai_t *s)
{
    for (int32_t i = 0; i < s->ntouched; i++) {
        int32_t n = s->touched[i];
        s->acc_gpu[n] = s->acc_cpu[n] = 0;
        s->acc_mem[n] = 0;
        s->is_touched[n] = 0;
        s->nhead[n] = -1;
    }
    for (int32_t k = 0; k < s->npot; k++) s->recd[k] = 0;
    s->ntouched = 0;
    s->npot = 0;
    s->nlink = 0;
}

/* Adds x to the potential victims: its GPUs, CPUs and memory on each of its nodes, and a link from each node
 * to it, so that a node's victims are found without a search. */
static void add_acc(const ds_engine_t *e, kai_t *s, int32_t x)
{
    const int32_t *gp = ds_engine_job_gpus(e, x);
    int32_t k = s->npot++;
    s->pot[k] = x;
    for (int32_t i = 0; i < e->js[x].nplaced; i++) {
        int32_t n = e->gpus[gp[i]].node, first = first_on_node(e, gp, i);
        if (!s->is_touched[n]) {
            s->is_touched[n] = 1;
            s->touched[s->ntouched++] = n;
        }
        s->acc_gpu[n]++;
        if (first) { /* its CPUs and memory on n, and its link, once per node */
            int32_t c;
            int64_t m;
            ds_engine_job_node_use(e, x, n, &c, &m);
            s->acc_cpu[n] += c;
            s->acc_mem[n] += m;
            s->lpot[s->nlink] = k;
            s->lnext[s->nlink] = s->nhead[n];
            s->nhead[n] = s->nlink++;
        }
    }
}

/* The next victim of v at or below its cursor, newest first, skipping jobs still inside their min runtime
 * (whose expiry becomes a wake-up); 0 when none. */
static int victim_next(const ds_engine_t *e, kai_t *s, kai_queue_t *v, int64_t minrt, int64_t now)
{
    int32_t i = pq_prev(&s->run, v->tenant, v->vcur);
    while (i >= 0) {
        int32_t x = s->run.l[v->tenant].a[i].job;
        int64_t until = e->js[x].last_start + minrt;
        if (minrt > 0 && until > now) {
            if (until < s->timer) s->timer = until;
            i = pq_prev(&s->run, v->tenant, i - 1);
            continue;
        }
        v->vcur = i;
        v->vnext = x;
        return 1;
    }
    v->vnext = -1;
    return 0;
}

static kai_qview_t view_of(const kai_queue_t *q)
{
    return (kai_qview_t){q->deserved, q->fair, q->limit, (double)q->alloc, (double)q->alloc_np};
}

/* proportion's reclaimableFn over the victims of one scenario (those evicted from the tested node) */
static int scenario_legal(const ds_engine_t *e, kai_t *s, const kai_queue_t *r, int32_t p, int32_t nsel, int *why)
{
    int32_t nv = 0;
    for (int32_t k = 0; k < nsel; k++) {
        int32_t t = e->trace->jobs[s->sel[k]].tenant;
        if (s->vqmap[t] < 0) {
            s->vqmap[t] = nv;
            s->views[nv++] = view_of(&s->q[t]);
        }
        s->vof[k] = s->vqmap[t];
        s->vg[k] = e->trace->jobs[s->sel[k]].gpus;
    }
    kai_qview_t rv = view_of(r);
    int ok = kai_reclaim_legal_ws(&rv, e->trace->jobs[p].gpus, s->cls[p] == KAI_G, s->views, nv, s->vof, s->vg, nsel,
                                  s->cfg.saturation_mult, why, s->ws_rem, s->ws_touched);
    for (int32_t k = 0; k < nsel; k++) s->vqmap[e->trace->jobs[s->sel[k]].tenant] = -1;
    return ok;
}

static void commit(ds_engine_t *e, kai_t *s, int32_t p, int32_t nsel, int reclaim, int64_t now)
{
    for (int32_t k = 0; k < nsel; k++) {
        ds_engine_preempt(e, s->sel[k], now, reclaim ? KAI_REASON_RECLAIM : KAI_REASON_PREEMPT);
        if (reclaim) s->st.reclaim_victims++;
        else s->st.preempt_victims++;
    }
    if (reclaim) s->st.reclaims++;
    else s->st.preempts++;
    s->evicted = 1;
    if (ds_engine_place(e, p, now)) kai_on_start(e, s, p);
    else s->st.victim_place_failed++;
}

/* A pod of the job placed without new victims (the scenario of the recorded victims alone): a wholly free
 * node not taken yet for an 8-GPU pod, the partition's emptiest partly free node for a smaller one. */
static int pod_fits_free(kai_t *s, int32_t pg, int32_t *free_full_used)
{
    if (pg == s->gpn || s->fit.mf == s->gpn) {
        if (s->fit.nfull - *free_full_used > 0) {
            ++*free_full_used;
            return 1;
        }
        return 0;
    }
    return s->fit.mf >= pg;
}

/* The job solver (solvers/job_solver.go, by_pod_solver.go): the job's pods one at a time (a job of more
 * GPUs than a node has is whole-node pods and a remainder), each with victims popped from s->vh in its order
 * until the pod fits on a node of the newest victim with that node's popped victims gone; the first such
 * node decides the scenario, which, for reclaim, must also pass the proportion plugin's validation. A
 * scenario's victims are the pods' victims so far and the new node's. */
static int solve(ds_engine_t *e, kai_t *s, int32_t part, kai_queue_t *r, int32_t p, int reclaim, int64_t now, int64_t minrt)
{
    const ds_job_t *pj = &e->trace->jobs[p];
    int32_t g = pj->gpus, npods = g <= s->gpn ? 1 : g / s->gpn + (g % s->gpn > 0), nrec = 0, nused = 0, ffu = 0;
    int32_t *usedn = s->touched + e->nnodes; /* second half of the scratch: nodes taken by pods */
    int32_t gt = -1;                         /* the GPU type of the pods' nodes so far */
    pq_heap_t *h = &s->vh;
    clear_acc(s);
    if (npods > 1) pq_fit_refresh(&s->fit, e, part);
    int ok = 1;
    for (int32_t k = 0; k < npods && ok; k++) {
        int32_t pg = npods == 1 ? g : (k < g / s->gpn ? s->gpn : g % s->gpn);
        /* several GPU types: the free-node bounds count every type, so each pod finds its node below */
        if (k > 0 && e->ntypes < 2 && pod_fits_free(s, pg, &ffu)) continue;
        int found = 0;
        int32_t vi;
        while (!found && (vi = pq_heap_top(h)) >= 0) {
            kai_queue_t *v = &s->q[vi];
            int32_t x = v->vnext;
            const ds_job_t *xj = &e->trace->jobs[x];
            add_acc(e, s, x);
            s->st.victims_walked++;
            v->vtaken_gpu += xj->gpus;
            v->vtaken_cpu += xj->cpus;
            v->vtaken_mem += xj->mem_mib;
            v->vcur--;
            if (victim_next(e, s, v, minrt, now)) {
                key_victim(e, s, v);
                pq_heap_fix(h, vi);
            } else {
                pq_heap_pop(h);
                s->nlegal -= v->vlegal;
            }
            /* A victim of a queue at or below its threshold fails every strategy: the scenario it decides
             * fails, and once no queue above its threshold is left, so does every later one. */
            if (reclaim && !v->vlegal) {
                if (s->nlegal == 0) break;
                continue;
            }
            const int32_t *gp = ds_engine_job_gpus(e, x);
            for (int32_t i = 0; i < e->js[x].nplaced; i++) {
                int32_t n = e->gpus[gp[i]].node;
                if (!first_on_node(e, gp, i) || s->used[n] || e->nodes[n].nfree + s->acc_gpu[n] < pg ||
                    !ds_engine_node_fits_after(e, n, p, pg, s->acc_cpu[n], s->acc_mem[n]))
                    continue;
                /* a node of a type the job accepts (its node selector), every pod on the first pod's type */
                if (e->ntypes > 1 && (!ds_engine_type_ok(e, p, e->nodes[n].gtype) || (gt >= 0 && e->nodes[n].gtype != gt)))
                    continue;
                /* this node decides the scenario: the recorded victims, then the popped ones on it in the
                 * order they were taken */
                int32_t nsel = nrec, m = 0;
                for (int32_t l = s->nhead[n]; l >= 0; l = s->lnext[l])
                    if (!s->recd[s->lpot[l]]) s->sel[nsel + m++] = s->lpot[l];
                for (int32_t a = 0, b = m - 1; a < b; a++, b--) { /* links run newest first */
                    int32_t tmp = s->sel[nsel + a];
                    s->sel[nsel + a] = s->sel[nsel + b];
                    s->sel[nsel + b] = tmp;
                }
                for (int32_t q = 0; q < m; q++) s->sel[nsel + q] = s->pot[s->sel[nsel + q]];
                int32_t nnew = m;
                nsel += m;
                int why = KAI_LEGAL;
                if (!reclaim || scenario_legal(e, s, r, p, nsel, &why)) {
                    for (int32_t l = s->nhead[n]; l >= 0; l = s->lnext[l]) s->recd[s->lpot[l]] = 1;
                    (void)nnew;
                    nrec = nsel;
                    s->used[n] = 1;
                    usedn[nused++] = n;
                    gt = e->nodes[n].gtype;
                    found = 1;
                }
                break;
            }
        }
        ok = found;
    }
    for (int32_t i = 0; i < nused; i++) s->used[usedn[i]] = 0;
    clear_acc(s);
    if (!ok) return 0;
    commit(e, s, p, nrec, reclaim, now);
    return 1;
}

/* ---- reclaim (actions/reclaim/reclaim.go) ---- */

/* Both strategies need the reclaimee above its deserved quota: without such a queue holding preemptible
 * jobs, no reclaim can succeed. */
static int reclaim_victims_exist(const kai_t *s, int32_t part)
{
    for (int32_t k = s->pq_off[part]; k < s->pq_off[part + 1]; k++) {
        const kai_queue_t *q = &s->q[s->pq[k]];
        if (q->nrun_be > 0 && (double)q->alloc > q->deserved) return 1;
    }
    return 0;
}

static int can_reclaim(const kai_queue_t *q, int cls, int32_t g)
{
    kai_qview_t v = view_of(q);
    return kai_can_reclaim(&v, g, cls == KAI_G);
}

static int reclaim_possible(const kai_queue_t *q)
{
    for (int cls = 0; cls < 2; cls++) {
        int32_t g = min_pending(q, cls);
        if (g && g < q->failg[cls] && can_reclaim(q, cls, g)) return 1;
    }
    return 0;
}

/* A necessary condition for any solver run: enough nodes the job's pods could have, counting only the
 * non-preemptible GPUs on them (which no reclaim or preemption frees). */
static int blockers_allow(const kai_t *s, int32_t part, int32_t g)
{
    const int32_t *h = &s->blk_hist[(size_t)part * (size_t)(s->gpn + 1)];
    if (g <= s->gpn) {
        for (int32_t b = 0; b <= s->gpn - g; b++)
            if (h[b]) return 1;
        return 0;
    }
    int32_t whole = g / s->gpn, rem = g % s->gpn, le = 0;
    if (h[0] < whole) return 0;
    if (!rem) return 1;
    for (int32_t b = 0; b <= s->gpn - rem; b++) le += h[b];
    return le > whole;
}

/* A necessary condition for a reclaim: each victim must find its queue above a threshold before it goes (its
 * deserved quota when the reclaimer stays within its own, else its allocatable share), so a queue can give at
 * most what it holds above the threshold, plus one victim's overshoot; together that must cover what the free
 * GPUs do not. */
static int reclaim_budget_allows(const ds_engine_t *e, const kai_t *s, int32_t part, const kai_queue_t *r, int32_t g)
{
    int guarantee = (double)(r->alloc + g) <= r->deserved;
    double need = g > s->gpn ? (double)(g - e->parts[part].gpus_free) : (double)(g - s->fit.mf), have = 0;
    if (need <= 0) return 1;
    for (int32_t k = s->pq_off[part]; k < s->pq_off[part + 1]; k++) {
        const kai_queue_t *v = &s->q[s->pq[k]];
        if (v == r || v->nrun_be == 0) continue;
        double thr = guarantee ? v->deserved : kai_queue_allocatable(v);
        if ((double)v->alloc > thr) have += (double)v->alloc - thr - 1 + (double)DS_MIN(s->maxg, v->alloc);
        if (have >= need) return 1;
    }
    return 0;
}

static int attempt(ds_engine_t *e, kai_t *s, int32_t part, kai_queue_t *r, int32_t p, int reclaim, int64_t now)
{
    if (!blockers_allow(s, part, e->trace->jobs[p].gpus)) return 0;
    if (reclaim) {
        pq_fit_refresh(&s->fit, e, part);
        if (!reclaim_budget_allows(e, s, part, r, e->trace->jobs[p].gpus)) return 0;
    }
    int64_t minrt = reclaim ? s->cfg.reclaim_min_runtime : s->cfg.preempt_min_runtime;
    pq_heap_t *h = &s->vh;
    pq_heap_clear(h);
    h->less = less_victim;
    s->nlegal = 0;
    int guarantee = (double)(r->alloc + e->trace->jobs[p].gpus) <= r->deserved;
    for (int32_t k = s->pq_off[part]; k < s->pq_off[part + 1]; k++) {
        kai_queue_t *v = &s->q[s->pq[k]];
        /* reclaim: other queues' preemptible jobs; preempt: the own queue's (all train, below build) */
        if ((reclaim ? v == r : v != r) || v->nrun_be == 0) continue;
        /* A queue within its deserved quota fails both reclaim strategies for every victim, and it ranks
         * after every queue above it (the order's first rule): its victims could only enter scenarios
         * that fail. Leaving it out changes no outcome. */
        if (reclaim && (double)v->alloc <= v->deserved) continue;
        v->vcur = INT32_MAX;
        v->vtaken_gpu = v->vtaken_cpu = v->vtaken_mem = 0;
        double thr = guarantee ? v->deserved : kai_queue_allocatable(v);
        v->vlegal = !reclaim || (double)v->alloc > thr;
        if (victim_next(e, s, v, minrt, now)) {
            key_victim(e, s, v);
            pq_heap_push(h, v->tenant);
            s->nlegal += v->vlegal;
        }
    }
    if (h->n == 0 || s->nlegal == 0) return 0;
    return solve(e, s, part, r, p, reclaim, now, minrt);
}

static void rekey_all(const ds_engine_t *e, kai_t *s, int32_t part)
{
    for (int32_t k = s->pq_off[part]; k < s->pq_off[part + 1]; k++) {
        kai_queue_t *q = &s->q[s->pq[k]];
        if (s->qh.pos[q->tenant] < 0) continue;
        key_pending(e, s, q);
        pq_heap_fix(&s->qh, q->tenant);
    }
}

/* reclaim = 1: the reclaim action over every pending job; 0: the preempt action, over build jobs only (a
 * train job has no lower-priority job to preempt in its queue). */
static void victims_action(ds_engine_t *e, kai_t *s, int32_t part, int reclaim, int64_t now)
{
    if (reclaim && !reclaim_victims_exist(s, part)) return;
    pq_heap_t *h = &s->qh;
    pq_heap_clear(h);
    h->less = less_pending;
    for (int32_t k = s->pq_off[part]; k < s->pq_off[part + 1]; k++) {
        kai_queue_t *q = &s->q[s->pq[k]];
        q->failg[0] = q->failg[1] = INT32_MAX;
        /* Reclaim failures seen in the very same state (no start or stop, no fair share moved since, no
         * min runtime running out) fail again: they count as this session's failures. */
        if (reclaim && s->cfg.reclaim_min_runtime == 0 && q->memo_run == s->run_version && q->memo_share == s->share_version) {
            q->failg[0] = q->memo_failg[0];
            q->failg[1] = q->memo_failg[1];
        }
        int eligible = reclaim ? reclaim_possible(q) : q->nrun_be > 0 && min_pending(q, KAI_G) > 0;
        if (eligible && advance(e, s, q, 1) && (reclaim || q->cls == KAI_G)) {
            key_pending(e, s, q);
            pq_heap_push(h, q->tenant);
        }
    }
    int32_t qi;
    while ((qi = pq_heap_top(h)) >= 0) {
        kai_queue_t *q = &s->q[qi];
        int32_t j = q->head, cls = s->cls[j], g = e->trace->jobs[j].gpus;
        if (reclaim ? !reclaim_possible(q) : (q->nrun_be == 0 || cls != KAI_G)) {
            pq_heap_pop(h);
            continue;
        }
        /* smallestFailedJobs: a job no easier than one that failed in this queue and class is skipped */
        int tried = 0, ok = 0;
        if (g < q->failg[cls]) {
            if (reclaim ? can_reclaim(q, cls, g) : within_caps(q, cls, g)) {
                tried = 1;
                if (reclaim) s->st.reclaim_attempts++;
                ok = attempt(e, s, part, q, j, reclaim, now);
            }
        }
        if (tried && !ok) {
            q->failg[cls] = g;
            if (reclaim) {
                if (q->memo_run != s->run_version || q->memo_share != s->share_version) {
                    q->memo_run = s->run_version;
                    q->memo_share = s->share_version;
                    q->memo_failg[0] = q->memo_failg[1] = INT32_MAX;
                }
                if (g < q->memo_failg[cls]) q->memo_failg[cls] = g;
            }
        }
        if (ok) {
            rekey_all(e, s, part);
            if (reclaim && !reclaim_victims_exist(s, part)) break;
        }
        if (!advance(e, s, q, 0) || (!reclaim && q->cls != KAI_G)) {
            pq_heap_remove(h, qi); /* a success re-ranked the queues: qi need not be on top any more */
            continue;
        }
        key_pending(e, s, q);
        pq_heap_fix(h, qi);
    }
}

void kai_session(ds_engine_t *e, kai_t *s, int32_t part, int64_t now)
{
    s->st.sessions++;
    pq_freeze(&s->pend);
    pq_freeze(&s->run);
    refresh_queues(e, s, part);
    allocate(e, s, part, now);
    victims_action(e, s, part, 1, now);
    victims_action(e, s, part, 0, now);
    pq_thaw(&s->pend);
    pq_thaw(&s->run);
    if (s->evicted) {
        /* the next session, a schedule-period later, allocates what the evictions left free */
        if (now + s->cfg.period < s->timer) s->timer = now + s->cfg.period;
        s->evicted = 0;
    }
}
