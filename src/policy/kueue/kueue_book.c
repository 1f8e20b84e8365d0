/* kueue_book.c: the Kueue model's bookkeeping the ops and the cycles share: a workload's place in its
 * ClusterQueue's lists, quota usage and its release, admission, eviction, and the quota snapshot the
 * preemption searches read. */
#include "kueue/kueue_state.h"

static int32_t plist(const kueue_t *s, int32_t j) { return 2 * s->t->jobs[j].tenant + s->cls[j]; }

void kq_pend_insert(kueue_t *s, int32_t j)
{
    s->act_seq[j] = ++s->seq;
    s->inadm_gen[j] = -1;
    s->state[j] = KQ_PENDING;
    pq_put(&s->pend, plist(s, j), j, s->t->jobs[j].submit);
}

/* the admitted list of j: its CQ, flavor and class */
static int32_t alist(const kueue_t *s, int32_t j)
{
    return 2 * (s->t->jobs[j].tenant * s->nf + s->flv[j]) + s->cls[j];
}

/* quota reserved in flavor f: the workload leaves its queue and counts against its CQ's quota there */
void kq_admit(ds_engine_t *e, kueue_t *s, int32_t j, int32_t f)
{
    const ds_job_t *jb = &e->trace->jobs[j];
    kq_cq_t *c = &s->cq[jb->tenant];
    kq_fq_t *q = kq_fq(s, jb->tenant, f);
    pq_drop(&s->pend, j);
    s->flv[j] = (uint8_t)f;
    int64_t seq = ++s->seq;
    pq_put(&s->adm, alist(s, j), j, seq);
    pq_put(&s->unpl, e->js[j].part, j, seq);
    c->usage += jb->gpus;
    c->unplaced += jb->gpus;
    q->usage += jb->gpus;
    q->unplaced += jb->gpus;
    q->ahist[s->cls[j]][pq_hb(jb->gpus)]++;
    q->ause[s->cls[j]] += jb->gpus;
    s->state[j] = KQ_ADMITTED;
    if (c->sticky == j) c->sticky = -1;
    s->st.admitted++;
}

/* a workload already running (ops->adopt) counts in the flavor of the GPUs it holds */
void kq_adopt(ds_engine_t *e, kueue_t *s, int32_t j)
{
    const ds_job_t *jb = &e->trace->jobs[j];
    int32_t f = s->nf > 1 ? ds_engine_job_type(e, j) : 0;
    kq_fq_t *q = kq_fq(s, jb->tenant, f < 0 ? 0 : f);
    s->flv[j] = (uint8_t)(f < 0 ? 0 : f);
    pq_put(&s->adm, alist(s, j), j, ++s->seq);
    s->cq[jb->tenant].usage += jb->gpus;
    q->usage += jb->gpus;
    q->ahist[s->cls[j]][pq_hb(jb->gpus)]++;
    q->ause[s->cls[j]] += jb->gpus;
    s->state[j] = KQ_RUNNING;
}

/* the driver could not start it: still admitted in its flavor, back to waiting for nodes */
void kq_unplace(ds_engine_t *e, kueue_t *s, int32_t j)
{
    const ds_job_t *jb = &e->trace->jobs[j];
    s->state[j] = KQ_ADMITTED;
    s->cq[jb->tenant].unplaced += jb->gpus;
    kq_fq(s, jb->tenant, s->flv[j])->unplaced += jb->gpus;
    pq_put(&s->unpl, e->js[j].part, j, s->adm.key[j]);
}

void kq_mark_placed(ds_engine_t *e, kueue_t *s, int32_t j)
{
    const ds_job_t *jb = &e->trace->jobs[j];
    pq_drop(&s->unpl, j);
    s->cq[jb->tenant].unplaced -= jb->gpus;
    kq_fq(s, jb->tenant, s->flv[j])->unplaced -= jb->gpus;
    s->state[j] = KQ_RUNNING;
    s->st.placed++;
}

/* the quota of a workload that stopped holding it (finished or evicted) */
void kq_release(kueue_t *s, int32_t j, int64_t now)
{
    const ds_job_t *jb = &s->t->jobs[j];
    kq_cq_t *c = &s->cq[jb->tenant];
    kq_fq_t *q = kq_fq(s, jb->tenant, s->flv[j]);
    c->usage -= jb->gpus;
    q->usage -= jb->gpus;
    q->ahist[s->cls[j]][pq_hb(jb->gpus)]--;
    q->ause[s->cls[j]] -= jb->gpus;
    if (s->state[j] == KQ_ADMITTED) {
        c->unplaced -= jb->gpus;
        q->unplaced -= jb->gpus;
        pq_drop(&s->unpl, j);
    }
    pq_drop(&s->adm, j);
    c->rel_gen++;
    /* quota released: the cohort's inadmissible workloads are requeued, after the requeuer's batch period
     * (a delaying work queue: a request already waiting keeps its time) */
    if (s->requeue_at[c->part] == DS_TIME_NEVER) s->requeue_at[c->part] = now + s->cfg.requeue_period;
}

void kq_evict(ds_engine_t *e, kueue_t *s, int32_t j, int64_t now)
{
    if (s->state[j] == KQ_RUNNING) {
        s->st.evictions++;
        ds_engine_preempt(e, j, now, KQ_REASON_EVICT); /* back through kueue_enqueue */
    } else {
        /* admitted but not on nodes yet: Kueue evicts the workload all the same, nothing runs */
        s->st.evictions_unplaced++;
        kq_release(s, j, now);
        kq_pend_insert(s, j);
    }
    /* an eviction is no instant: the workload is back in its queue once it is gone */
    s->hold_until[j] = now + s->cfg.eviction_latency;
    if (s->hold_until[j] < s->timer) s->timer = s->hold_until[j];
}

/* ---- the snapshot the preemption searches read: the CQs of one cohort, in one flavor ---- */

static int32_t snap_next(void *ctx, int32_t cq, int cls, int32_t *it)
{
    kueue_t *s = ctx;
    int32_t t = s->pq[s->pq_off[s->snap_part] + cq], list = 2 * (t * s->nf + s->snap_flv) + cls;
    const pq_list_t *l = &s->adm.l[list];
    int32_t i = pq_prev(&s->adm, list, *it < 0 ? l->n - 1 : *it - 1);
    if (i < 0) {
        *it = 0;
        return -1;
    }
    *it = i;
    return l->a[i].job;
}

static int32_t snap_gpus(void *ctx, int32_t wl) { return ((kueue_t *)ctx)->t->jobs[wl].gpus; }
static int32_t snap_cq_of(void *ctx, int32_t wl)
{
    kueue_t *s = ctx;
    return s->cq[s->t->jobs[wl].tenant].local;
}
static int snap_cls_of(void *ctx, int32_t wl) { return ((kueue_t *)ctx)->cls[wl]; }
static int64_t snap_adm(void *ctx, int32_t wl) { return ((kueue_t *)ctx)->adm.key[wl]; }
static const kq_fq_t *snap_fq(const kueue_t *s, int32_t cq)
{
    return kq_fq(s, s->pq[s->pq_off[s->snap_part] + cq], s->snap_flv);
}

static int32_t snap_min_gpus(void *ctx, int32_t cq, int cls)
{
    kueue_t *s = ctx;
    const kq_fq_t *c = snap_fq(s, cq);
    for (int32_t b = 1; b < PQ_HB; b++)
        if (c->ahist[cls][b]) return b;
    return 0;
}

static int32_t snap_max_gpus(void *ctx, int32_t cq, int cls)
{
    kueue_t *s = ctx;
    const kq_fq_t *c = snap_fq(s, cq);
    if (c->ahist[cls][PQ_HB - 1]) return DS_MAX_JOB_GPUS; /* the bucket of jobs over 64 GPUs */
    for (int32_t b = PQ_HB - 2; b > 0; b--)
        if (c->ahist[cls][b]) return b;
    return 0;
}

static int64_t snap_cls_usage(void *ctx, int32_t cq, int cls)
{
    kueue_t *s = ctx;
    return snap_fq(s, cq)->ause[cls];
}

/* Binds the snapshot to a cohort: every flavor's nominal quota and usage, then flavor forder[0] */
void kq_snap_bind(ds_engine_t *e, kueue_t *s, int32_t part)
{
    s->snap_part = part;
    s->snap.ncq = s->pq_off[part + 1] - s->pq_off[part];
    s->snap.lendable = 0;
    for (int32_t i = 0; i < s->snap.ncq; i++) {
        kq_cq_t *c = &s->cq[s->pq[s->pq_off[part] + i]];
        c->nominal = 0;
        for (int32_t f = 0; f < s->nf; f++) {
            size_t k = (size_t)f * (size_t)s->nt + (size_t)i;
            s->nominal_local[k] = kq_nominal(e, s, c->tenant, f); /* quotas read here: a driver may change one */
            s->usage_local[k] = kq_fq(s, c->tenant, f)->usage;
            c->nominal += s->nominal_local[k];
        }
        s->snap.lendable += c->nominal;
    }
    kq_snap_flavor(s, s->forder[0]);
}

void kq_snap_flavor(kueue_t *s, int32_t f)
{
    kq_snap_t *sn = &s->snap;
    s->snap_flv = f;
    sn->nominal = s->nominal_local + (size_t)f * (size_t)s->nt;
    sn->usage = s->usage_local + (size_t)f * (size_t)s->nt;
    sn->tot_nominal = sn->tot_usage = 0;
    for (int32_t i = 0; i < sn->ncq; i++) {
        sn->tot_nominal += sn->nominal[i];
        sn->tot_usage += sn->usage[i];
    }
    if (s->nf < 2) return;
    for (int32_t i = 0; i < sn->ncq; i++) {
        int64_t b = 0;
        for (int32_t g = 0; g < s->nf; g++) {
            size_t k = (size_t)g * (size_t)s->nt + (size_t)i;
            if (g != f && s->usage_local[k] > s->nominal_local[k]) b += s->usage_local[k] - s->nominal_local[k];
        }
        s->xb[i] = b;
    }
    sn->xborrow = s->xb;
}

void kq_snap_init(kueue_t *s)
{
    kq_snap_t *sn = &s->snap;
    sn->nominal = s->nominal_local;
    sn->usage = s->usage_local;
    sn->xborrow = NULL;
    sn->next = snap_next;
    sn->gpus = snap_gpus;
    sn->cq_of = snap_cq_of;
    sn->cls_of = snap_cls_of;
    sn->adm = snap_adm;
    sn->min_gpus = snap_min_gpus;
    sn->max_gpus = snap_max_gpus;
    sn->cls_usage = snap_cls_usage;
    sn->ctx = s;
    sn->within_cq = s->cfg.within_cq;
    sn->reclaim_cohort = s->cfg.reclaim_cohort;
}

