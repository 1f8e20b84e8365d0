/* kueue_preempt.c: Kueue's preemption target searches over a quota snapshot, as kueue ff69552e has them:
 * Classic preemption (scheduler/preemption/preemption.go classicalPreemptions and fillBackWorkloads,
 * classical/candidate_generator.go, classical/hierarchical_preemption.go, common/ordering.go) and Fair
 * Sharing (fairPreemptions, runFirstFsStrategy, runSecondFsStrategy, fairsharing/ordering.go,
 * strategy.go; cache/scheduler/fair_sharing.go for the DRS), for one flat cohort. */
#include "kueue/kueue.h"

#include <math.h>

int64_t kq_available(const kq_snap_t *s)
{
    int64_t a = s->tot_nominal - s->tot_usage;
    return a > 0 ? a : 0;
}

/* GPUs a CQ uses above its nominal quota. With one flavor, weight 1 and one lendable total for every CQ,
 * DRS values compare as these do, exactly (the searches below compare them so). */
static int64_t borrowed(const kq_snap_t *s, int32_t cq)
{
    int64_t b = s->usage[cq] - s->nominal[cq];
    return b > 0 ? b : 0;
}

/* What a CQ borrows over every flavor: fair sharing's DRS adds the flavors of a resource name. With one
 * lendable total for every CQ of the cohort, DRS values compare as these do. */
static int64_t fs_borrowed(const kq_snap_t *s, int32_t cq)
{
    return borrowed(s, cq) + (s->xborrow ? s->xborrow[cq] : 0);
}

double kq_drs(const kq_snap_t *s, int32_t cq)
{
    int64_t b = fs_borrowed(s, cq), lend = s->xborrow ? s->lendable : s->tot_nominal;
    if (b == 0 || lend <= 0) return 0;
    return (double)b * 1000.0 / (double)lend;
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
    int32_t g = s->gpus(s->ctx, wl);
    s->usage[s->cq_of(s->ctx, wl)] -= sign * g;
    s->tot_usage -= sign * g;
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

/* Necessary conditions for a search to find anything, cheap enough to run before each. A CQ of the cohort
 * gives candidates only while it borrows (at most what it borrows less one GPU, plus one workload), the own
 * CQ its workloads the withinClusterQueue policy allows (own). */
static int64_t own_allowed(const kq_snap_t *s, int32_t cq, int pcls)
{
    int64_t own = 0;
    for (int cls = 0; cls < 2; cls++)
        if (allowed(s, cq, cq, pcls, cls)) own += s->cls_usage(s->ctx, cq, cls);
    return own;
}

static int64_t others_bound(const kq_snap_t *s, int32_t cq, int pcls, int64_t above)
{
    int64_t room = 0;
    for (int32_t v = 0; v < s->ncq; v++) {
        int64_t b = s->usage[v] - s->nominal[v];
        if (v == cq || b <= above) continue;
        int32_t big = 0;
        for (int cls = 0; cls < 2; cls++)
            if (allowed(s, v, cq, pcls, cls)) big = DS_MAX(big, s->max_gpus(s->ctx, v, cls));
        if (big) room += b - above - 1 + big;
    }
    return room;
}

/* Classic: within nominal with the workload, the other CQs' candidates and its own; over it, either a run
 * without borrowing (its own workloads must bring it within nominal) or one with borrowing on its own
 * workloads alone (borrowWithinCohort unset). */
static int classic_reachable(const kq_snap_t *s, int32_t cq, int32_t g, int pcls)
{
    int64_t avail = kq_available(s), own = own_allowed(s, cq, pcls);
    if (s->usage[cq] + g <= s->nominal[cq]) return avail + own + others_bound(s, cq, pcls, 0) >= g;
    if (avail + own >= g) return 1;
    return own >= s->usage[cq] + g - s->nominal[cq] && s->usage[cq] < s->nominal[cq] &&
           avail + own + others_bound(s, cq, pcls, 0) >= g;
}

/* Fair sharing: a target CQ yields to a borrowing preemptor only while it borrows more than the preemptor
 * will (both strategies), and the preemptor borrows at least what its own workloads cannot cover. */
static int fs_reachable(const kq_snap_t *s, int32_t cq, int32_t g, int pcls)
{
    /* several flavors: a CQ borrowing on another flavor stays a target after it stops borrowing on this one,
     * so the bound below does not hold; no shortcut */
    if (s->xborrow) return 1;
    int64_t avail = kq_available(s), own = own_allowed(s, cq, pcls);
    int64_t pmin = s->usage[cq] + g - s->nominal[cq] - own;
    if (pmin < 0) pmin = 0;
    return avail + own + others_bound(s, cq, pcls, pmin) >= g;
}

int32_t kq_classic_targets(kq_snap_t *s, int32_t cq, int32_t g, int pcls, int32_t *out)
{
    if (!classic_reachable(s, cq, g, pcls)) return 0;
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
 * (ties: the better first candidate), pruning CQs that stopped borrowing (on any flavor: the DRS's
 * IsBorrowing; the preemptor's own only when out of candidates). cand[v] is v's current candidate or -1. */
static int32_t fs_pick(kq_snap_t *s, int32_t cq, int32_t *cand)
{
    int32_t best = -1;
    int64_t bd = -1;
    for (int32_t v = 0; v < s->ncq; v++) {
        if (cand[v] < 0) continue;
        int64_t d = fs_borrowed(s, v);
        if (v != cq && d == 0) { cand[v] = -1; continue; }
        if (best < 0 || d > bd) best = v, bd = d;
        else if (d == bd && cand_before(s, cand[v], cand[best], cq)) best = v;
    }
    return best;
}

static int fits_fs(kq_snap_t *s, int32_t cq, int32_t g)
{
    /* the incoming workload's usage is simulated in: take it out for the check */
    s->usage[cq] -= g;
    s->tot_usage -= g;
    int ok = fits(s, cq, g, 1);
    s->usage[cq] += g;
    s->tot_usage += g;
    return ok;
}

/* The smallest workload v may still yield: its current class and, before the last, the next one. */
static int32_t seq_min_gpus(const kq_snap_t *s, int32_t v, int32_t cq, int pcls)
{
    int32_t m = 0;
    for (int ph = s->phase[v]; ph < 2; ph++) {
        int cls = 1 - ph;
        if (!allowed(s, v, cq, pcls, cls)) continue;
        int32_t x = s->min_gpus(s->ctx, v, cls);
        if (x > 0 && (m == 0 || x < m)) m = x;
    }
    return m;
}

int32_t kq_fs_targets(kq_snap_t *s, int32_t cq, int32_t g, int pcls, const int *strategies, int within_nominal,
                      int32_t *out)
{
    if (!fs_reachable(s, cq, g, pcls)) return 0;
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
    s->tot_usage += g;
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
        /* the strategies in borrowed GPUs: P the preemptor's after admission, B the target's before removal;
         * LessThanOrEqualToFinalShare holds for a candidate of c GPUs when P <= max(0, B - c), that is
         * c <= B - P (any c when P is 0); LessThanInitialShare when P < B, whatever the candidate. Over several
         * flavors B adds what the target borrows elsewhere (X) to what it borrows here (b), and removing c GPUs
         * here leaves X + max(0, b - c): the candidate passes when c <= B - P or b <= B - P. */
        int64_t pb = fs_borrowed(s, cq), bv = fs_borrowed(s, v);
        int lte = strategies[0] != KQ_FS_LT_INITIAL;
        int32_t c = -1;
        if (!lte ? pb < bv : pb == 0 || (s->xborrow && borrowed(s, v) <= bv - pb)) {
            c = s->first[v];
            seq_next(s, v, cq, pcls);
        } else if (lte) {
            int64_t thr = bv - pb;
            int32_t mn = seq_min_gpus(s, v, cq, pcls);
            if (thr >= 1 && (mn == 0 || mn <= thr)) {
                while (s->first[v] >= 0) {
                    int32_t x = s->first[v];
                    seq_next(s, v, cq, pcls);
                    if (s->gpus(s->ctx, x) <= thr) { c = x; break; }
                    if (s->retry[v] < 0) s->retry[v] = x; /* rule S2-b looks at the first one only */
                }
            }
        }
        if (c < 0) {
            /* every candidate of v fails: the first is rule S2-b's, v has no more */
            if (s->first[v] >= 0 && s->retry[v] < 0) s->retry[v] = s->first[v];
            s->first[v] = -1;
            continue;
        }
        take(s, c, +1);
        out[n++] = c;
        if (fits_fs(s, cq, g)) { done = 1; break; }
    }
    if (!done && strategies[1] == KQ_FS_LT_INITIAL) {
        /* runSecondFsStrategy: each CQ once, its first retry candidate, if the preemptor's share after is
         * below the target's share before */
        for (;;) {
            int32_t v = fs_pick(s, cq, s->retry);
            if (v < 0) break;
            int32_t c = s->retry[v];
            s->retry[v] = -1; /* DropQueue */
            if (fs_borrowed(s, cq) < fs_borrowed(s, v)) {
                take(s, c, +1);
                out[n++] = c;
                if (fits_fs(s, cq, g)) { done = 1; break; }
            }
        }
    }
    s->usage[cq] -= g;
    s->tot_usage -= g;
    if (!done) {
        restore(s, out, n);
        return 0;
    }
    n = fill_back(s, cq, g, 1, out, n);
    restore(s, out, n);
    return n;
}
