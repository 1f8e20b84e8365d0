/* kueue_cycle.c: Kueue's scheduling cycles on one cohort, as kueue ff69552e runs them
 * (pkg/scheduler/scheduler.go schedule, nominate, processEntry; cache/queue/cluster_queue.go for
 * BestEffortFIFO heads and requeueing), and the node placement kube-scheduler does after admission. */
#include "kueue/kueue_state.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* ---- ClusterQueue heads ---- */

static int active(const kueue_t *s, const kq_cq_t *c, int32_t j)
{
    if (s->inadm_gen[j] == c->gen) return 0;
    int k = s->cls[j], b = pq_hb(s->t->jobs[j].gpus);
    /* with several flavors the equivalence hash also covers the node selector: the requested types */
    if (c->mask_gen[k][b] == c->gen && (s->nf < 2 || c->mask_gmask[k][b] == s->t->jobs[j].gmask)) {
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
    c->mask_gmask[k][b] = s->t->jobs[j].gmask; /* a head of other types of this size replaces it: those re-try */
    s->st.bulk_moved++;
}

/* ---- nomination (flavorassigner findFlavorForPodSets, fitsResourceQuota) ---- */

static int64_t sum(const int64_t *v, int32_t n)
{
    int64_t a = 0;
    for (int32_t i = 0; i < n; i++) a += v[i];
    return a;
}

/* fitsResourceQuota in the snapshot's flavor: the granular mode, and the targets of a preemption (at out,
 * their count in *nt). */
static kq_gmode_t flavor_mode(ds_engine_t *e, kueue_t *s, kq_entry_t *x, int32_t *out, int32_t *nt)
{
    const ds_job_t *jb = &e->trace->jobs[x->job];
    kq_snap_t *sn = &s->snap;
    int32_t g = jb->gpus, lc = s->cq[x->cq].local, pcls = s->cls[x->job];
    int64_t nom = sum(sn->nominal, sn->ncq);
    *nt = 0;
    if (g > nom) return (kq_gmode_t){KQ_PM_NOFIT, 0}; /* above the cohort's whole quota of this flavor */
    if (g <= kq_available(sn)) return (kq_gmode_t){KQ_PM_FIT, sn->usage[lc] + g > sn->nominal[lc]};
    /* Classic considers preemption only for a workload within its CQ's nominal quota; fair sharing with
     * reclaimWithinCohort also for one that would borrow (canPreemptWhileBorrowing) */
    if (!s->cfg.fair_sharing && sn->nominal[lc] < g) return (kq_gmode_t){KQ_PM_NOFIT, 0};
    int32_t n = s->cfg.fair_sharing
                    ? kq_fs_targets(sn, lc, g, pcls, s->cfg.strategies, s->cfg.preempt_within_nominal, out)
                    : kq_classic_targets(sn, lc, g, pcls, out);
    s->st.searches++;
    s->st.searches_found += n > 0;
    *nt = n;
    int64_t own = 0;
    for (int32_t i = 0; i < n; i++)
        if (s->t->jobs[out[i]].tenant == x->cq) own += s->t->jobs[out[i]].gpus;
    /* SimulatePreemption: Preempt when a target is in the own CQ, else Reclaim; the borrowing after them */
    return (kq_gmode_t){n == 0 ? KQ_PM_NOCAND : own ? KQ_PM_PREEMPT : KQ_PM_RECLAIM, sn->usage[lc] - own + g > sn->nominal[lc]};
}

/* The flavors in the ClusterQueue's order that the workload may use (its node selector matches), the first
 * whose mode stops the search, else the preferred one (FlavorFungibility). With one flavor this is that
 * flavor's mode. */
static void nominate(ds_engine_t *e, kueue_t *s, kq_entry_t *x)
{
    x->nt = 0;
    x->done = 0;
    x->borrows = 0;
    x->mode = KQ_NOFIT;
    x->f = -1;
    x->stop_k = -1;
    int32_t nj = e->trace->njobs, k0 = 0;
    if (s->resume && s->resume[x->job]) {
        /* lastAssignmentOutdated: not when recorded in the previous cycle, else when the CQ released quota since */
        const kq_cq_t *c = &s->cq[x->cq];
        if (s->st.cycles - s->resume_cycle[x->job] <= 1 || c->rel_gen == s->resume_gen[x->job]) k0 = s->resume[x->job];
        s->resume[x->job] = 0;
    }
    if (s->ntgt + (s->nf + 1) * nj > s->captgt) {
        s->captgt = 2 * (s->ntgt + (s->nf + 1) * nj);
        s->tgt = ds_xrealloc(s->tgt, (size_t)s->captgt * sizeof *s->tgt);
    }
    int32_t *base = s->tgt + s->ntgt, boff = 0, bn = 0;
    kq_gmode_t best = {KQ_PM_NOFIT, INT_MAX};
    for (int32_t k = k0; k < s->nf; k++) {
        int32_t f = s->forder[k];
        if (s->nf > 1) {
            if (!ds_engine_type_ok(e, x->job, f) || s->never[(size_t)x->job * (size_t)s->nf + (size_t)f]) continue;
            if (x->f < 0) x->f = f; /* NoFit entries are ordered as if on their first flavor (they change nothing) */
            kq_snap_flavor(s, f);
        } else {
            x->f = f;
        }
        int32_t at = bn ? boff + bn : 0, n; /* a search writes past the best flavor's targets */
        kq_gmode_t m = flavor_mode(e, s, x, base + at, &n);
        int stop = !kq_flavor_try_next(&m, &s->cfg);
        if (stop || kq_flavor_preferred(&m, &best, s->cfg.preference)) {
            best = m;
            boff = at;
            bn = n;
            x->f = f;
        }
        if (stop) {
            x->stop_k = k;
            break;
        }
    }
    if (best.pm == KQ_PM_NOFIT) return;
    if (boff) memmove(base, base + boff, (size_t)bn * sizeof *base);
    x->borrows = best.borrow;
    if (best.pm == KQ_PM_FIT) {
        x->mode = KQ_FIT;
        return;
    }
    x->mode = KQ_PREEMPT;
    x->t0 = s->ntgt;
    x->nt = bn;
    s->ntgt += bn;
}

/* ---- processing (processEntry) against the cycle's snapshot W ---- */

/* markSkipped: with FlavorFungibilityPreserveScanProgress (beta, on) the next cycle resumes the flavor search
 * after the flavor where this one stopped */
static void skipped(kueue_t *s, const kq_entry_t *x)
{
    s->st.skipped++;
    if (!s->resume || x->stop_k < 0 || x->stop_k >= s->nf - 1) return;
    s->resume[x->job] = (uint8_t)(x->stop_k + 1);
    s->resume_cycle[x->job] = s->st.cycles;
    s->resume_gen[x->job] = s->cq[x->cq].rel_gen;
}

static void process(ds_engine_t *e, kueue_t *s, int32_t part, kq_entry_t *x, int64_t now)
{
    kq_cq_t *c = &s->cq[x->cq];
    int32_t j = x->job, g = e->trace->jobs[j].gpus, ncq = s->snap.ncq;
    size_t fo = x->f < 0 ? 0 : (size_t)x->f * (size_t)s->nt; /* the entry's flavor in W, S0 and the quotas */
    int64_t *W = s->W + fo;
    const int64_t *S0 = s->S0 + fo, *nomf = s->nominal_local + fo;
    int64_t availW = sum(nomf, ncq) - sum(W, ncq);
    x->done = 1;
    if (x->mode == KQ_NOFIT || (x->mode == KQ_PREEMPT && x->nt == 0)) {
        mark_inadmissible(s, c, j);
        return;
    }
    if (x->mode == KQ_FIT) {
        if (g > availW) { skipped(s, x); return; } /* no longer fits after another admission: retried */
        W[c->local] += g;
        kq_admit(e, s, j, x->f);
        return;
    }
    const int32_t *t = s->tgt + x->t0;
    int64_t freed = 0;
    for (int32_t i = 0; i < x->nt; i++) {
        if (s->pre_mark[t[i]] == s->cycle_mark) { skipped(s, x); return; } /* overlapping targets */
        freed += e->trace->jobs[t[i]].gpus;
    }
    if (g > availW + freed) { skipped(s, x); return; }
    W[c->local] += g; /* the preemptor's quota is reserved in the cycle */
    for (int32_t i = 0; i < x->nt; i++) {
        int32_t v = t[i], vt = e->trace->jobs[v].tenant, vl = s->cq[vt].local;
        s->pre_mark[v] = s->cycle_mark;
        if (vt == x->cq) s->st.higher_prio_own_victims += s->cls[v] <= s->cls[j];
        else s->st.illegal_victims += S0[vl] <= nomf[vl] || s->flv[v] != x->f;
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
    int64_t nom = s->snap.lendable;
    const kq_entry_t *x[2] = {a, b};
    int borrow[2];
    double drs[2];
    for (int i = 0; i < 2; i++) {
        /* borrowing on its flavor with the workload; the DRS adds what the CQ borrows on every flavor */
        int32_t lc = s->cq[x[i]->cq].local, f = x[i]->f < 0 ? 0 : x[i]->f;
        int64_t tot = 0, over = 0;
        for (int32_t h = 0; h < s->nf; h++) {
            size_t k = (size_t)h * (size_t)s->nt + (size_t)lc;
            int64_t o = s->W[k] + (h == f ? s->t->jobs[x[i]->job].gpus : 0) - s->nominal_local[k];
            if (h == f) over = o;
            if (o > 0) tot += o;
        }
        borrow[i] = over > 0;
        drs[i] = tot > 0 && nom > 0 ? (double)tot * 1000.0 / (double)nom : 0;
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
        if (h >= 0) s->ent[s->nent++] = (kq_entry_t){c->tenant, h, -1, -1, 0, 0, 0, 0, 0};
    }
    if (!s->nent) return 0;
    s->st.cycles++;
    kq_snap_bind(e, s, part);
    size_t nw = (size_t)s->nf * (size_t)s->nt; /* every flavor's usage (f-major; ncq used of nt per flavor) */
    memcpy(s->S0, s->usage_local, nw * sizeof *s->S0);
    s->ntgt = 0;
    for (int32_t i = 0; i < s->nent; i++) nominate(e, s, &s->ent[i]);
    memcpy(s->W, s->usage_local, nw * sizeof *s->W);
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
        if (s->nf > 1) {
            /* only on nodes of its flavor (the nodeSelector Kueue injects); the failure memo is per partition,
             * not per type, so it is not used here */
            if (e->parts[part].tgpus_free[s->flv[j]] < jb->gpus ||
                !ds_engine_find_free_on(e, j, part, s->flv[j], NULL, s->pbuf))
                continue;
            ds_engine_start(e, j, s->pbuf, now);
            if (s->adm.key[j] < s->placed_before) s->st.placement_waits++;
            kq_mark_placed(e, s, j);
            pq_fit_refresh(&fit, e, part);
        } else if (ds_engine_place(e, j, now)) {
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
