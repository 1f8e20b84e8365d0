/* kueue_cycle.c: Kueue's scheduling cycles on one cohort, as kueue ff69552e runs them
 * (pkg/scheduler/scheduler.go schedule, nominate, processEntry; cache/queue/cluster_queue.go for
 * BestEffortFIFO heads and requeueing), and the node placement kube-scheduler does after admission. */
#include "kueue/kueue_state.h"

#include <stdlib.h>
#include <string.h>

/* ---- ClusterQueue heads ---- */

static int active(const kueue_t *s, const kq_cq_t *c, int32_t j)
{
    if (s->inadm_gen[j] == c->gen) return 0;
    int k = s->cls[j], b = pq_hb(s->t->jobs[j].gpus);
    if (c->mask_gen[k][b] == c->gen) {
        int64_t since = s->act_seq[j] > c->gen_seq ? s->act_seq[j] : c->gen_seq;
        if (since < c->mask_seq[k][b]) return 0; /* bulk-moved with an equivalent head */
    }
    return 1;
}

/* The head of c's active workloads: the sticky preemptor, else the first by priority and creation time. */
static int ready(const ds_engine_t *e, const kueue_t *s, int32_t j, int64_t now)
{
    return ds_engine_startable(e, j) && s->hold_until[j] <= now;
}

static int32_t cq_head(const ds_engine_t *e, kueue_t *s, kq_cq_t *c, int64_t now)
{
    int32_t st = c->sticky;
    if (st >= 0 && s->state[st] == KQ_PENDING && active(s, c, st) && ready(e, s, st, now)) return st;
    for (int cls = 0; cls < 2; cls++) {
        int32_t list = 2 * c->tenant + cls;
        const pq_list_t *l = &s->pend.l[list];
        if (c->cur_epoch[cls] != l->epoch) c->cur[cls] = 0, c->cur_epoch[cls] = l->epoch;
        int moving = 1; /* the cursor passes inadmissible entries, not held or evicting ones */
        int32_t i = pq_next(&s->pend, list, c->cur[cls]);
        for (; i < l->n; i = pq_next(&s->pend, list, i + 1)) {
            int32_t j = l->a[i].job;
            if (!active(s, c, j)) {
                if (moving) c->cur[cls] = i + 1;
            } else if (!ready(e, s, j, now)) {
                moving = 0;
            } else {
                if (moving) c->cur[cls] = i;
                return j;
            }
        }
        if (moving) c->cur[cls] = i;
    }
    return -1;
}

static void requeue_all(kueue_t *s, int32_t part)
{
    for (int32_t k = s->pq_off[part]; k < s->pq_off[part + 1]; k++) {
        kq_cq_t *c = &s->cq[s->pq[k]];
        c->gen++;
        c->gen_seq = ++s->seq;
        c->cur[0] = c->cur[1] = 0;
    }
}

/* requeueIfNotPresent for NoFit and no preemption candidates: inadmissible until the next requeue, with
 * the workloads of the same class and size that are active now (SchedulingEquivalenceHashing) */
static void mark_inadmissible(kueue_t *s, kq_cq_t *c, int32_t j)
{
    s->inadm_gen[j] = c->gen;
    s->st.inadmissible++;
    int k = s->cls[j], b = pq_hb(s->t->jobs[j].gpus);
    c->mask_gen[k][b] = c->gen;
    c->mask_seq[k][b] = ++s->seq;
    s->st.bulk_moved++;
}

/* ---- nomination (flavorassigner fitsResourceQuota, one flavor) ---- */

static int64_t sum(const int64_t *v, int32_t n)
{
    int64_t a = 0;
    for (int32_t i = 0; i < n; i++) a += v[i];
    return a;
}

static void nominate(ds_engine_t *e, kueue_t *s, kq_entry_t *x)
{
    const ds_job_t *jb = &e->trace->jobs[x->job];
    kq_cq_t *c = &s->cq[x->cq];
    kq_snap_t *sn = &s->snap;
    int32_t g = jb->gpus, lc = c->local, pcls = s->cls[x->job];
    int64_t nom = sum(sn->nominal, sn->ncq);
    x->nt = 0;
    x->done = 0;
    if (g > nom) { x->mode = KQ_NOFIT; return; } /* above the cohort's whole quota */
    if (g <= kq_available(sn)) {
        x->mode = KQ_FIT;
        x->borrows = sn->usage[lc] + g > sn->nominal[lc];
        return;
    }
    /* Classic considers preemption only for a workload within its CQ's nominal quota; fair sharing with
     * reclaimWithinCohort also for one that would borrow (canPreemptWhileBorrowing) */
    if (!s->cfg.fair_sharing && sn->nominal[lc] < g) { x->mode = KQ_NOFIT; return; }
    if (s->ntgt + e->trace->njobs > s->captgt) {
        s->captgt = 2 * (s->ntgt + e->trace->njobs);
        s->tgt = ds_xrealloc(s->tgt, (size_t)s->captgt * sizeof *s->tgt);
    }
    int32_t *out = s->tgt + s->ntgt;
    int32_t n = s->cfg.fair_sharing
                    ? kq_fs_targets(sn, lc, g, pcls, s->cfg.strategies, s->cfg.preempt_within_nominal, out)
                    : kq_classic_targets(sn, lc, g, pcls, out);
    s->st.searches++;
    s->st.searches_found += n > 0;
    x->mode = KQ_PREEMPT;
    x->t0 = s->ntgt;
    x->nt = n;
    s->ntgt += n;
    int64_t own = 0;
    for (int32_t i = 0; i < n; i++)
        if (s->t->jobs[out[i]].tenant == x->cq) own += s->t->jobs[out[i]].gpus;
    x->borrows = sn->usage[lc] - own + g > sn->nominal[lc];
}

/* ---- processing (processEntry) against the cycle's snapshot W ---- */

static void process(ds_engine_t *e, kueue_t *s, int32_t part, kq_entry_t *x, int64_t now)
{
    kq_cq_t *c = &s->cq[x->cq];
    int32_t j = x->job, g = e->trace->jobs[j].gpus, ncq = s->snap.ncq;
    int64_t availW = sum(s->nominal_local, ncq) - sum(s->W, ncq);
    x->done = 1;
    if (x->mode == KQ_NOFIT || (x->mode == KQ_PREEMPT && x->nt == 0)) {
        mark_inadmissible(s, c, j);
        return;
    }
    if (x->mode == KQ_FIT) {
        if (g > availW) { s->st.skipped++; return; } /* no longer fits after another admission: retried */
        s->W[c->local] += g;
        kq_admit(e, s, j);
        return;
    }
    const int32_t *t = s->tgt + x->t0;
    int64_t freed = 0;
    for (int32_t i = 0; i < x->nt; i++) {
        if (s->pre_mark[t[i]] == s->cycle_mark) { s->st.skipped++; return; } /* overlapping targets */
        freed += e->trace->jobs[t[i]].gpus;
    }
    if (g > availW + freed) { s->st.skipped++; return; }
    s->W[c->local] += g; /* the preemptor's quota is reserved in the cycle */
    for (int32_t i = 0; i < x->nt; i++) {
        int32_t v = t[i], vt = e->trace->jobs[v].tenant, vl = s->cq[vt].local;
        s->pre_mark[v] = s->cycle_mark;
        if (vt == x->cq) s->st.higher_prio_own_victims += s->cls[v] <= s->cls[j];
        else s->st.illegal_victims += s->S0[vl] <= s->nominal_local[vl];
        kq_evict(e, s, v, now);
    }
    s->st.preemptions_issued++;
    c->sticky = j; /* PendingPreemption: requeued at once, kept at the head */
    (void)part;
}

static int cmp_classic(const void *a, const void *b, const kueue_t *s)
{
    const kq_entry_t *x = a, *y = b;
    if (x->borrows != y->borrows) return x->borrows - y->borrows; /* under nominal quota before borrowing */
    int cx = s->cls[x->job], cy = s->cls[y->job];
    if (cx != cy) return cx - cy;                                 /* higher priority */
    int64_t tx = s->t->jobs[x->job].submit, ty = s->t->jobs[y->job].submit;
    if (tx != ty) return tx < ty ? -1 : 1;                        /* FIFO by creation */
    return (x->job > y->job) - (x->job < y->job);
}

static _Thread_local const kueue_t *sort_s;
static int cmp_classic_q(const void *a, const void *b) { return cmp_classic(a, b, sort_s); }

/* fair_sharing_iterator.go entryComparer.less over the cycle's snapshot W */
static int fs_less(const kueue_t *s, const kq_entry_t *a, const kq_entry_t *b)
{
    int64_t nom = sum(s->nominal_local, s->snap.ncq);
    const kq_entry_t *x[2] = {a, b};
    int borrow[2];
    double drs[2];
    for (int i = 0; i < 2; i++) {
        int32_t lc = s->cq[x[i]->cq].local;
        int64_t over = s->W[lc] + s->t->jobs[x[i]->job].gpus - s->nominal_local[lc];
        borrow[i] = over > 0;
        drs[i] = over > 0 && nom > 0 ? (double)over * 1000.0 / (double)nom : 0;
    }
    if (s->cfg.prioritize_nonborrowing && borrow[0] != borrow[1]) return !borrow[0];
    if (drs[0] != drs[1]) return drs[0] < drs[1];
    int ca = s->cls[a->job], cb = s->cls[b->job];
    if (ca != cb) return ca < cb;
    return s->t->jobs[a->job].submit < s->t->jobs[b->job].submit;
}

/* One scheduling cycle: one head per CQ, nominated against the snapshot, admitted in order. Returns 0 when
 * no CQ had an active head. */
static int cycle(ds_engine_t *e, kueue_t *s, int32_t part, int64_t now)
{
    if (now >= s->requeue_at[part]) {
        s->requeue_at[part] = DS_TIME_NEVER;
        requeue_all(s, part);
    }
    s->nent = 0;
    for (int32_t k = s->pq_off[part]; k < s->pq_off[part + 1]; k++) {
        kq_cq_t *c = &s->cq[s->pq[k]];
        int32_t h = cq_head(e, s, c, now);
        if (h >= 0) s->ent[s->nent++] = (kq_entry_t){c->tenant, h, 0, 0, 0, 0, 0};
    }
    if (!s->nent) return 0;
    s->st.cycles++;
    kq_snap_bind(e, s, part);
    int32_t ncq = s->snap.ncq;
    memcpy(s->S0, s->usage_local, (size_t)ncq * sizeof *s->S0);
    s->ntgt = 0;
    for (int32_t i = 0; i < s->nent; i++) nominate(e, s, &s->ent[i]);
    memcpy(s->W, s->usage_local, (size_t)ncq * sizeof *s->W);
    s->cycle_mark++;
    if (!s->cfg.fair_sharing) {
        sort_s = s;
        qsort(s->ent, (size_t)s->nent, sizeof *s->ent, cmp_classic_q);
        for (int32_t i = 0; i < s->nent; i++) process(e, s, part, &s->ent[i], now);
    } else {
        for (int32_t left = s->nent; left > 0; left--) {
            kq_entry_t *best = NULL;
            for (int32_t i = 0; i < s->nent; i++) /* in CQ order: the first of equals wins */
                if (!s->ent[i].done && (!best || fs_less(s, &s->ent[i], best))) best = &s->ent[i];
            process(e, s, part, best, now);
        }
    }
    return 1;
}

/* ---- node placement of admitted workloads (kube-scheduler, after Kueue unsuspends them) ---- */

static void place(ds_engine_t *e, kueue_t *s, int32_t part, int64_t now)
{
    const pq_list_t *l = &s->unpl.l[part];
    if (l->live == 0 || e->parts[part].gpus_free == 0) return;
    pq_fit_t fit;
    pq_fit_refresh(&fit, e, part);
    for (int32_t i = pq_next(&s->unpl, part, 0); i < l->n && e->parts[part].gpus_free > 0;
         i = pq_next(&s->unpl, part, i + 1)) {
        int32_t j = l->a[i].job;
        const ds_job_t *jb = &e->trace->jobs[j];
        if (!ds_engine_startable(e, j) || !pq_fit_may(&fit, jb->gpus, jb->cpus)) continue;
        if (ds_engine_place(e, j, now)) {
            if (s->adm.key[j] < s->placed_before) s->st.placement_waits++; /* admitted in an earlier pass */
            kq_mark_placed(e, s, j);
            pq_fit_refresh(&fit, e, part);
        } else {
            pq_fit_failed(&fit, jb->gpus, jb->cpus);
        }
    }
}

void kueue_pass(ds_engine_t *e, kueue_t *s, int32_t part, int64_t now)
{
    s->st.passes++;
    /* GPU-seconds of quota admitted but not on nodes: Kueue's admission does not see fragmentation */
    int64_t unplaced = 0;
    for (int32_t k = s->pq_off[part]; k < s->pq_off[part + 1]; k++) unplaced += s->cq[s->pq[k]].unplaced;
    if (s->last_pass[part] > 0 && now > s->last_pass[part])
        s->st.unplaced_gpu_s += (double)unplaced * (double)(now - s->last_pass[part]);
    s->last_pass[part] = now;
    s->placed_before = s->seq + 1; /* workloads admitted from here on are admitted in this pass */
    int32_t n = 0;
    while (cycle(e, s, part, now)) {
        if (++n >= s->cfg.max_cycles) {
            /* a guard of the model, not a Kueue parameter: the rest waits a second */
            s->st.cycle_guard_hits++;
            if (now + 1 < s->timer) s->timer = now + 1;
            break;
        }
    }
    place(e, s, part, now);
}
