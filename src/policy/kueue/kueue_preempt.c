/* kueue_preempt.c: Kueue's preemption target searches over a quota snapshot, as kueue ff69552e has them:
 * Classic preemption (scheduler/preemption/preemption.go classicalPreemptions and fillBackWorkloads,
 * classical/candidate_generator.go, classical/hierarchical_preemption.go, common/ordering.go) and Fair
 * Sharing (fairPreemptions, runFirstFsStrategy, runSecondFsStrategy, fairsharing/ordering.go,
 * strategy.go; cache/scheduler/fair_sharing.go for the DRS), for one flat cohort. */
#include "kueue/kueue.h"

#include <math.h>

int64_t kq_available(const kq_snap_t *s)
{
    int64_t a = 0;
    for (int32_t v = 0; v < s->ncq; v++) a += s->nominal[v] - s->usage[v];
    return a > 0 ? a : 0;
}

double kq_drs(const kq_snap_t *s, int32_t cq)
{
    int64_t lend = 0;
    for (int32_t v = 0; v < s->ncq; v++) lend += s->nominal[v];
    int64_t borrowed = s->usage[cq] - s->nominal[cq];
    if (borrowed <= 0 || lend <= 0) return 0;
    return (double)borrowed * 1000.0 / (double)lend;
}

/* Whether the preemptor's policies let it take v's workloads of class cls (0 = higher priority): its own
 * CQ by withinClusterQueue (LowerPriority), other CQs by reclaimWithinCohort (LowerPriority or Any). */
static int allowed(const kq_snap_t *s, int32_t v, int32_t cq, int pcls, int cls)
{
    if (v == cq) return s->within_cq != 0 && cls > pcls;
    if (s->reclaim_cohort == 0) return 0;
    return s->reclaim_cohort == 2 || cls > pcls;
}

/* workloadFits for one resource: not borrowing when borrowing is not allowed, and within what the cohort
 * has unused */
static int fits(const kq_snap_t *s, int32_t cq, int32_t g, int borrow)
{
    if (!borrow && s->usage[cq] + g > s->nominal[cq]) return 0;
    return g <= kq_available(s);
}

static void take(kq_snap_t *s, int32_t wl, int sign)
{
    s->usage[s->cq_of(s->ctx, wl)] -= sign * s->gpus(s->ctx, wl);
}

/* In the reverse order of removal, puts back every target the workload still fits without. */
static int32_t fill_back(kq_snap_t *s, int32_t cq, int32_t g, int borrow, int32_t *out, int32_t n)
{
    for (int32_t i = n - 2; i >= 0; i--) {
        take(s, out[i], -1);
        if (fits(s, cq, g, borrow)) {
            out[i] = out[n - 1]; /* Kueue's O(1) deletion: the last target takes its place */
            n--;
        } else {
            take(s, out[i], +1);
        }
    }
    return n;
}

static void restore(kq_snap_t *s, const int32_t *out, int32_t n)
{
    for (int32_t i = 0; i < n; i++) take(s, out[i], -1);
}

/* One greedy run of classicalPreemptions with allowBorrowing = borrow; returns the targets' count, 0 when
 * the workload never fits. */
static int32_t classic_run(kq_snap_t *s, int32_t cq, int32_t g, int pcls, int borrow, int hier, int32_t *out)
{
    int32_t n = 0;
    /* other CQs of the cohort: lower priority first, then most recently admitted, across CQs; a CQ's
     * candidates stop being valid once it is within its nominal quota, and without a hierarchical advantage
     * they can only be taken when the preemptor is not to borrow (ReclaimWithoutBorrowing) */
    if (!(borrow && !hier)) {
        for (int ci = 0; ci < 2; ci++) {
            int cls = 1 - ci;
            for (int32_t v = 0; v < s->ncq; v++) {
                s->first[v] = -1;
                if (v == cq || s->usage[v] <= s->nominal[v] || !allowed(s, v, cq, pcls, cls)) continue;
                s->cur[v] = -1;
                s->first[v] = s->next(s->ctx, v, cls, &s->cur[v]);
                if (s->first[v] >= 0) s->cur_adm[v] = s->adm(s->ctx, s->first[v]);
            }
            for (;;) {
                int32_t best = -1;
                for (int32_t v = 0; v < s->ncq; v++) {
                    if (s->first[v] < 0) continue;
                    if (s->usage[v] <= s->nominal[v]) { s->first[v] = -1; continue; } /* no longer borrowing */
                    if (best < 0 || s->cur_adm[v] > s->cur_adm[best]) best = v;
                }
                if (best < 0) break;
                int32_t c = s->first[best];
                s->first[best] = s->next(s->ctx, best, cls, &s->cur[best]);
                if (s->first[best] >= 0) s->cur_adm[best] = s->adm(s->ctx, s->first[best]);
                take(s, c, +1);
                out[n++] = c;
                if (fits(s, cq, g, borrow)) return fill_back(s, cq, g, borrow, out, n);
            }
        }
    }
    /* then the own CQ's workloads the withinClusterQueue policy allows */
    for (int ci = 0; ci < 2; ci++) {
        int cls = 1 - ci;
        if (!allowed(s, cq, cq, pcls, cls)) continue;
        int32_t it = -1, c;
        while ((c = s->next(s->ctx, cq, cls, &it)) >= 0) {
            take(s, c, +1);
            out[n++] = c;
            if (fits(s, cq, g, borrow)) return fill_back(s, cq, g, borrow, out, n);
        }
    }
    restore(s, out, n);
    return 0;
}

int32_t kq_classic_targets(kq_snap_t *s, int32_t cq, int32_t g, int pcls, int32_t *out)
{
    int hier = s->usage[cq] + g <= s->nominal[cq];   /* QuantitiesFitInQuota of the preemptor's CQ */
    int under = s->usage[cq] < s->nominal[cq];       /* queueUnderNominalInResourcesNeedingPreemption */
    int others = 0;
    for (int32_t v = 0; v < s->ncq && !others; v++) {
        if (v == cq || s->usage[v] <= s->nominal[v]) continue;
        for (int cls = 0; cls < 2 && !others; cls++) {
            int32_t it = -1;
            others = allowed(s, v, cq, pcls, cls) && s->next(s->ctx, v, cls, &it) >= 0;
        }
    }
    /* borrowWithinCohort is unset (Never), so IsBorrowingWithinCohortForbidden holds */
    int opts[2], nopt;
    if (!others || !under) opts[0] = 1, nopt = 1;
    else if (!hier) opts[0] = 0, opts[1] = 1, nopt = 2;
    else opts[0] = 1, opts[1] = 0, nopt = 2;
    for (int k = 0; k < nopt; k++) {
        int32_t n = classic_run(s, cq, g, pcls, opts[k], hier, out);
        if (n > 0) {
            restore(s, out, n);
            return n;
        }
    }
    return 0;
}

/* ---- fair sharing ---- */

/* Advances v's candidates: its lower-priority class first, each most recently admitted first. */
static int32_t seq_next(kq_snap_t *s, int32_t v, int32_t cq, int pcls)
{
    while (s->phase[v] < 2) {
        int cls = 1 - s->phase[v];
        if (allowed(s, v, cq, pcls, cls)) {
            int32_t c = s->next(s->ctx, v, cls, &s->cur[v]);
            if (c >= 0) return s->first[v] = c;
        }
        s->phase[v]++;
        s->cur[v] = -1;
    }
    return s->first[v] = -1;
}

/* CandidatesOrdering of two workloads: other CQs before the preemptor's, lower priority, later admission */
static int cand_before(const kq_snap_t *s, int32_t a, int32_t b, int32_t cq)
{
    int aown = s->cq_of(s->ctx, a) == cq, bown = s->cq_of(s->ctx, b) == cq;
    if (aown != bown) return bown;
    int ca = s->cls_of(s->ctx, a), cb = s->cls_of(s->ctx, b);
    if (ca != cb) return ca > cb;
    return s->adm(s->ctx, a) > s->adm(s->ctx, b);
}

/* TargetClusterQueueOrdering.nextTarget over one flat cohort: the CQ with candidates and the highest DRS
 * (ties: the better first candidate), pruning CQs that stopped borrowing (the preemptor's own only when
 * out of candidates). cand[v] is v's current candidate or -1. */
static int32_t fs_pick(kq_snap_t *s, int32_t cq, int32_t *cand)
{
    int32_t best = -1;
    double bd = -1;
    for (int32_t v = 0; v < s->ncq; v++) {
        if (cand[v] < 0) continue;
        if (v != cq && s->usage[v] <= s->nominal[v]) { cand[v] = -1; continue; }
        double d = kq_drs(s, v);
        if (best < 0 || d > bd) best = v, bd = d;
        else if (d == bd && cand_before(s, cand[v], cand[best], cq)) best = v;
    }
    return best;
}

static int fits_fs(kq_snap_t *s, int32_t cq, int32_t g)
{
    s->usage[cq] -= g; /* the incoming workload's usage is simulated in: take it out for the check */
    int ok = fits(s, cq, g, 1);
    s->usage[cq] += g;
    return ok;
}

int32_t kq_fs_targets(kq_snap_t *s, int32_t cq, int32_t g, int pcls, const int *strategies, int within_nominal,
                      int32_t *out)
{
    int any = 0;
    for (int32_t v = 0; v < s->ncq; v++) {
        s->phase[v] = 0;
        s->cur[v] = -1;
        s->first[v] = -1;
        s->retry[v] = -1;
        /* findCandidates: the own CQ by withinClusterQueue, other CQs only while borrowing */
        if (v == cq || s->usage[v] > s->nominal[v]) any |= seq_next(s, v, cq, pcls) >= 0;
    }
    if (!any) return 0;
    s->usage[cq] += g; /* DRS values include the incoming workload */
    int pwn = within_nominal && s->usage[cq] <= s->nominal[cq];
    int32_t n = 0;
    int done = 0;
    for (;;) {
        int32_t v = fs_pick(s, cq, s->first);
        if (v < 0) break;
        if (v == cq || pwn) {
            /* in-CQ preemption, or a preemptor within its nominal quota: no strategy check */
            int32_t c = s->first[v];
            seq_next(s, v, cq, pcls);
            take(s, c, +1);
            out[n++] = c;
            if (fits_fs(s, cq, g)) { done = 1; break; }
            continue;
        }
        double pnew = kq_drs(s, cq), told = kq_drs(s, v);
        int passed = 0;
        while (s->first[v] >= 0) {
            int32_t c = s->first[v];
            seq_next(s, v, cq, pcls);
            take(s, c, +1);
            double tnew = kq_drs(s, v);
            passed = strategies[0] == KQ_FS_LT_INITIAL ? pnew < told : pnew <= tnew;
            if (passed) {
                out[n++] = c;
                break;
            }
            take(s, c, -1);
            if (s->retry[v] < 0) s->retry[v] = c; /* rule S2-b looks at the first one only */
        }
        if (passed && fits_fs(s, cq, g)) { done = 1; break; }
    }
    if (!done && strategies[1] == KQ_FS_LT_INITIAL) {
        /* runSecondFsStrategy: each CQ once, its first retry candidate, if the preemptor's share after is
         * below the target's share before */
        for (;;) {
            int32_t v = fs_pick(s, cq, s->retry);
            if (v < 0) break;
            int32_t c = s->retry[v];
            s->retry[v] = -1; /* DropQueue */
            if (kq_drs(s, cq) < kq_drs(s, v)) {
                take(s, c, +1);
                out[n++] = c;
                if (fits_fs(s, cq, g)) { done = 1; break; }
            }
        }
    }
    s->usage[cq] -= g;
    if (!done) {
        restore(s, out, n);
        return 0;
    }
    n = fill_back(s, cq, g, 1, out, n);
    restore(s, out, n);
    return n;
}
