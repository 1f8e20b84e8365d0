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

/* quota reserved: the workload leaves its queue and counts against its CQ's quota */
void kq_admit(ds_engine_t *e, kueue_t *s, int32_t j)
{
    const ds_job_t *jb = &e->trace->jobs[j];
    kq_cq_t *c = &s->cq[jb->tenant];
    pq_drop(&s->pend, j);
    int64_t seq = ++s->seq;
    pq_put(&s->adm, plist(s, j), j, seq);
    pq_put(&s->unpl, e->js[j].part, j, seq);
    c->usage += jb->gpus;
    c->unplaced += jb->gpus;
    c->ahist[s->cls[j]][pq_hb(jb->gpus)]++;
    c->ause[s->cls[j]] += jb->gpus;
    s->state[j] = KQ_ADMITTED;
    if (c->sticky == j) c->sticky = -1;
    s->st.admitted++;
}

void kq_mark_placed(ds_engine_t *e, kueue_t *s, int32_t j)
{
    const ds_job_t *jb = &e->trace->jobs[j];
    pq_drop(&s->unpl, j);
    s->cq[jb->tenant].unplaced -= jb->gpus;
    s->state[j] = KQ_RUNNING;
    s->st.placed++;
}

/* the quota of a workload that stopped holding it (finished or evicted) */
void kq_release(kueue_t *s, int32_t j, int64_t now)
{
    const ds_job_t *jb = &s->t->jobs[j];
    kq_cq_t *c = &s->cq[jb->tenant];
    c->usage -= jb->gpus;
    c->ahist[s->cls[j]][pq_hb(jb->gpus)]--;
    c->ause[s->cls[j]] -= jb->gpus;
    if (s->state[j] == KQ_ADMITTED) {
        c->unplaced -= jb->gpus;
        pq_drop(&s->unpl, j);
    }
    pq_drop(&s->adm, j);
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

/* ---- the snapshot the preemption searches read: the CQs of one cohort ---- */

static int32_t snap_next(void *ctx, int32_t cq, int cls, int32_t *it)
{
    kueue_t *s = ctx;
    int32_t t = s->pq[s->pq_off[s->snap_part] + cq], list = 2 * t + cls;
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
static int32_t snap_min_gpus(void *ctx, int32_t cq, int cls)
{
    kueue_t *s = ctx;
    const kq_cq_t *c = &s->cq[s->pq[s->pq_off[s->snap_part] + cq]];
    for (int32_t b = 1; b < PQ_HB; b++)
        if (c->ahist[cls][b]) return b;
    return 0;
}

static int32_t snap_max_gpus(void *ctx, int32_t cq, int cls)
{
    kueue_t *s = ctx;
    const kq_cq_t *c = &s->cq[s->pq[s->pq_off[s->snap_part] + cq]];
    if (c->ahist[cls][PQ_HB - 1]) return DS_MAX_JOB_GPUS; /* the bucket of jobs over 64 GPUs */
    for (int32_t b = PQ_HB - 2; b > 0; b--)
        if (c->ahist[cls][b]) return b;
    return 0;
}

static int64_t snap_cls_usage(void *ctx, int32_t cq, int cls)
{
    kueue_t *s = ctx;
    return s->cq[s->pq[s->pq_off[s->snap_part] + cq]].ause[cls];
}

void kq_snap_bind(ds_engine_t *e, kueue_t *s, int32_t part)
{
    s->snap_part = part;
    s->snap.ncq = s->pq_off[part + 1] - s->pq_off[part];
    s->snap.tot_nominal = s->snap.tot_usage = 0;
    for (int32_t i = 0; i < s->snap.ncq; i++) {
        kq_cq_t *c = &s->cq[s->pq[s->pq_off[part] + i]];
        c->nominal = e->tenant_quota[c->tenant]; /* quotas read here: a driver may change one */
        s->nominal_local[i] = c->nominal;
        s->usage_local[i] = c->usage;
        s->snap.tot_nominal += c->nominal;
        s->snap.tot_usage += c->usage;
    }
}

void kq_snap_init(kueue_t *s)
{
    kq_snap_t *sn = &s->snap;
    sn->nominal = s->nominal_local;
    sn->usage = s->usage_local;
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

