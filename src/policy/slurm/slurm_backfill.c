/* slurm_backfill.c: sched/backfill (_attempt_backfill in src/plugins/sched/backfill/backfill.c).
 *
 * Every bf_interval, when jobs, nodes or priorities changed since the last pass (_more_work), the pending
 * jobs are tested in queue order, up to bf_max_job_test. A job starts now if it fits now on nodes no
 * reservation of this pass holds over [now, now + its time limit]. Otherwise it reserves: its expected
 * start is the earliest time a node (or, above a node, enough nodes) would have its GPUs free, as the
 * select plugin's will-run test says (_will_run_test in src/plugins/select/cons_common/job_test.c: the
 * running jobs removed in order of expected end, start + time limit, in batches whose window starts at
 * 30 s and doubles, the start being the expected end of the batch's last job), pushed past the
 * reservations already made on that node (the map's TRY_LATER retries); it then reserves the whole node
 * from that start, rounded down to bf_resolution, to start + time limit, so no later job starts there if
 * it would still run then. This is conservative backfill: every tested job reserves, within bf_window.
 * With preempt/qos a job of QOS normal also starts now when it fits once the preemptable jobs are gone:
 * it preempts them (and the select plugin's will-run counts them gone). Jobs held back by association
 * limits are passed over without a reservation (acct_policy_job_runnable_pre_select).
 *
 * Where this differs from the source, on purpose (docs/peers.md, "Slurm: what is not modelled"): the
 * node-space map is kept per node (a reservation takes whole nodes, so the map's intervals are the union
 * of the nodes' own), a job reserves the node(s) on which it would start first (Slurm: its select
 * plugin's best fit among the nodes free by then), the will-run batches are cut by the partition's
 * running jobs (Slurm: those on the job's usable nodes) and CPUs are not simulated in a will-run test.
 *
 * The pass stops early once no remaining job could start now (no node has enough free GPUs, even with
 * the preemptable jobs gone for a job that may preempt, for the smallest waiting job): the reservations
 * the rest would make matter only to later jobs of the same pass, which cannot start either. */
#include "slurm_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- this pass's reservations, per node ---- */

static void resv_reset(slm_state_t *s)
{
    for (int32_t i = 0; i < s->nrnodes; i++) {
        int32_t n = s->rnodes[i];
        s->rv[n].n = 0, s->resv_owner[n] = -1;
        slm_nodes_reserved(s, n, 0);
    }
    s->nrnodes = 0;
}

/* Does a reservation on n overlap a job running from t for L seconds (the map's test: an interval that
 * ends after the start and begins by the end)? Returns the latest end among those that do, or -1: the
 * latest end among those beginning by t + L, when it is after t. */
static int64_t resv_conflict(const slm_state_t *s, int32_t n, int64_t t, int64_t L)
{
    const slm_resv_t *r = &s->rv[n];
    int32_t a = 0, b = r->n;
    while (a < b) {
        int32_t m = a + (b - a) / 2;
        if (r->begin[m] <= t + L) a = m + 1;
        else b = m;
    }
    return a > 0 && r->pmax[a - 1] > t ? r->pmax[a - 1] : -1;
}

/* The earliest start >= t on node n free of its reservations (the TRY_LATER retries from their ends). */
static int64_t resv_push(const slm_state_t *s, int32_t n, int64_t t, int64_t L)
{
    for (int64_t b; (b = resv_conflict(s, n, t, L)) >= 0;) t = b;
    return t;
}

static void resv_add(slm_state_t *s, int32_t n, int64_t begin, int64_t end, int32_t job)
{
    slm_resv_t *r = &s->rv[n];
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 8;
        r->begin = ds_xrealloc(r->begin, (size_t)r->cap * sizeof *r->begin);
        r->end = ds_xrealloc(r->end, (size_t)r->cap * sizeof *r->end);
        r->pmax = ds_xrealloc(r->pmax, (size_t)r->cap * sizeof *r->pmax);
    }
    if (r->n == 0) r->first_live = INT64_MAX;
    if (end > s->bf_now && begin < r->first_live) r->first_live = begin;
    if (r->n == 0) { /* a newly reserved node joins the sorted list */
        int32_t k = s->nrnodes++;
        while (k > 0 && s->rnodes[k - 1] > n) s->rnodes[k] = s->rnodes[k - 1], k--;
        s->rnodes[k] = n;
        s->resv_owner[n] = job, s->resv_from[n] = begin;
        slm_nodes_reserved(s, n, 1);
    }
    int32_t i = r->n++;
    while (i > 0 && r->begin[i - 1] > begin) r->begin[i] = r->begin[i - 1], r->end[i] = r->end[i - 1], i--;
    r->begin[i] = begin, r->end[i] = end;
    for (; i < r->n; i++) r->pmax[i] = i > 0 && r->pmax[i - 1] > r->end[i] ? r->pmax[i - 1] : r->end[i];
}

/* Whole nodes from start (rounded down to bf_resolution) to start + limit (likewise, at least one slot). */
static void reserve(slm_state_t *s, int32_t j, const int32_t *nodes, int32_t nn, int64_t start)
{
    int64_t res = s->cfg.bf_resolution, a = start / res * res, b = (start + s->limit[j]) / res * res;
    if (b < a + res) b = a + res;
    for (int32_t i = 0; i < nn; i++) resv_add(s, nodes[i], a, b, j);
    s->bf_start[j] = start;
    s->n_resv++;
}

/* s->blocked: the reserved nodes a job may not use from now (the pass's time) for L seconds: those with a
 * reservation that begins by now + L and ends after now (resv_conflict's test, from one number per node). */
static void block_now(slm_state_t *s, int64_t L)
{
    for (int32_t i = 0; i < s->nrnodes; i++) s->blocked[s->rnodes[i]] = s->rv[s->rnodes[i]].first_live <= s->bf_now + L;
}

static void unblock(slm_state_t *s)
{
    for (int32_t i = 0; i < s->nrnodes; i++) s->blocked[s->rnodes[i]] = 0;
}

/* ---- the will-run start ---- */

static int removable(const slm_state_t *s, int32_t r, int mode, int64_t now)
{
    return !(mode && slm_preemptable(s, r, now));
}

static int64_t batch_end(slm_state_t *s, const slm_list_t *r, int32_t i, int64_t thr, int use_pred, int mode,
                         int64_t now);

/* The will-run start of a job that first fits after removal k (see the header): the expected end of the
 * last job of k's batch; a job past its time limit runs on (OverTimeLimit=UNLIMITED), so _guess_job_end
 * says now + its limit. */
static int64_t batch_start(slm_state_t *s, int32_t p, slm_key_t k, int mode, int64_t now)
{
    if (k.job < 0) return now;
    DS_ASSERT(k.job != INT32_MAX);
    /* a preemptor's removals skip the preemptable jobs: without GraceTime or PreemptExemptTime those are
     * exactly QOS borrow's, so the list of QOS normal's running jobs serves */
    int plain = mode && s->cfg.exempt_time < 0 && s->cfg.grace_time <= 0;
    const slm_list_t *r = plain ? &s->parts[p].run_normal : &s->parts[p].run;
    int use_pred = mode && !plain;
    /* the first removable job: looked for once while the running jobs stay the same */
    int32_t i;
    if (s->first_gen[mode] == s->run_gen && s->first_part[mode] == p) {
        i = s->first_idx[mode];
    } else {
        i = 0;
        while (i < r->n && (r->stamp[i] != s->rstamp[r->job[i]] || (use_pred && !removable(s, r->job[i], mode, now)))) i++;
        s->first_gen[mode] = s->run_gen, s->first_part[mode] = p, s->first_idx[mode] = i;
    }
    if (i == r->n) return now;
    int64_t first = s->end_est[r->job[i]], end_b = first + (30 - first % 30), thr = end_b + 30;
    int32_t step = 0;
    /* the batch: the least step with end_b + 30 x 2^step >= k.end, from the bit length of ceil(d / 30) - 1
     * (the doubling loop's answer without its iterations; the loop stays for the far future) */
    int64_t d = k.end - end_b;
    if (d > 30 && d < ((int64_t)30 << 40)) {
        uint64_t q = (uint64_t)((d + 29) / 30);
        step = 64 - __builtin_clzll(q - 1);
        thr = end_b + ((int64_t)30 << step);
    }
    while (thr < k.end) thr = end_b + 2 * (thr - end_b), step++;
    /* the answer depends on the batch (its step) only, while the running jobs and the time stay: kept where
     * removability does not depend on the time (no GraceTime, no PreemptExemptTime) */
    slm_bmemo_t *bm = &s->bmemo[mode];
    if (!use_pred && step < 64) {
        if (bm->gen != s->run_gen || bm->part != p || bm->now != now) bm->gen = s->run_gen, bm->part = p, bm->now = now, bm->have = 0;
        if (bm->have >> step & 1) return bm->val[step];
    }
    int64_t ans = batch_end(s, r, i, thr, use_pred, mode, now);
    if (!use_pred && step < 64) bm->val[step] = ans, bm->have |= 1ull << step;
    return ans;
}

/* The expected end of the last removable job of the batch ending at thr (from index i of r). */
static int64_t batch_end(slm_state_t *s, const slm_list_t *r, int32_t i, int64_t thr, int use_pred, int mode, int64_t now)
{
    int32_t a = i, b = r->n;
    while (a < b) {
        int32_t m = a + (b - a) / 2;
        if (s->end_est[r->job[m]] <= thr) a = m + 1;
        else b = m;
    }
    for (int32_t q = a - 1; q >= i; q--) {
        int32_t x = r->job[q];
        if (r->stamp[q] != s->rstamp[x] || (use_pred && !removable(s, x, mode, now))) continue;
        return s->end_est[x] > now ? s->end_est[x] : now + s->limit[x];
    }
    return now;
}

/* A node's slot-g key, where free GPUs the engine would not give (its CPUs or memory hold the job) count
 * from the node's next job to leave. */
static slm_key_t eff_key(slm_state_t *s, int mode, int32_t g, int32_t n)
{
    slm_key_t k = slm_nodes_key(s, mode, g, n);
    if (k.job == -1 && !mode) k = slm_nodes_key(s, mode, 0, n);
    return k;
}

/* Earliest start of a single-node job of g GPUs on nodes [lo, hi): the best unreserved node (one tree
 * query), then every reserved node with its reservations in the way. Writes the node. */
static int64_t start_single(slm_state_t *s, int32_t p, int32_t g, int64_t L, int mode, int64_t now, int32_t lo,
                            int32_t hi, int32_t *node)
{
    slm_key_t k = slm_nodes_min_unreserved(s, mode, g, lo, hi, NULL, 0);
    int32_t r0 = 0; /* the reserved nodes from lo */
    while (r0 < s->nrnodes && s->rnodes[r0] < lo) r0++;
    if (k.job == -1 && !mode) { /* free GPUs somewhere the engine said no to: look at each such node */
        k = SLM_KEY_NONE;
        for (int32_t n = lo, r = r0; n < hi; n++) {
            if (r < s->nrnodes && s->rnodes[r] == n) {
                r++;
                continue;
            }
            slm_key_t x = eff_key(s, mode, g, n);
            if (slm_key_lt(x, k)) k = x;
        }
    }
    int64_t best = -1;
    *node = -1;
    if (k.job != INT32_MAX) best = batch_start(s, p, k, mode, now), *node = k.node;
    for (int32_t i = r0; i < s->nrnodes && s->rnodes[i] < hi; i++) {
        int32_t n = s->rnodes[i];
        slm_key_t x = eff_key(s, mode, g, n);
        if (x.job == INT32_MAX || (best >= 0 && x.end > best)) continue; /* its start is at least its key's end */
        int64_t t = resv_push(s, n, batch_start(s, p, x, mode, now), L);
        if (best < 0 || t < best || (t == best && n < *node)) best = t, *node = n;
    }
    return best;
}

/* Hoare partition of v[lo .. hi] around the median of three: after it v[lo .. *j] <= pivot <= v[*i .. hi],
 * and whatever lies between equals the pivot. */
static void partition_i64(int64_t *v, int32_t lo, int32_t hi, int32_t *ip, int32_t *jp)
{
    int32_t mid = lo + (hi - lo) / 2;
    int64_t a = v[lo], b = v[mid], c = v[hi];
    int64_t piv = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
    int32_t i = lo, j = hi;
    while (i <= j) {
        while (v[i] < piv) i++;
        while (v[j] > piv) j--;
        if (i <= j) {
            int64_t t = v[i];
            v[i++] = v[j], v[j--] = t;
        }
    }
    *ip = i, *jp = j;
}

/* Ascending, in place: insertion sort on short runs under an iterative quicksort (median of three). */
static void sort_i64(int64_t *v, int32_t n)
{
    int32_t lo_s[64], hi_s[64], sp = 0;
    lo_s[sp] = 0, hi_s[sp++] = n - 1;
    while (sp > 0) {
        int32_t lo = lo_s[--sp], hi = hi_s[sp];
        while (hi - lo > 16) {
            int32_t i, j;
            partition_i64(v, lo, hi, &i, &j);
            /* the larger side waits on the stack, the smaller is sorted next (depth stays logarithmic) */
            if (j - lo < hi - i) {
                if (i < hi) lo_s[sp] = i, hi_s[sp++] = hi;
                hi = j;
            } else {
                if (lo < j) lo_s[sp] = lo, hi_s[sp++] = j;
                lo = i;
            }
        }
        for (int32_t i = lo + 1; i <= hi; i++) {
            int64_t x = v[i];
            int32_t k = i;
            while (k > lo && v[k - 1] > x) v[k] = v[k - 1], k--;
            v[k] = x;
        }
    }
}

/* The k-th smallest (0-based) of v[0 .. n), k < n, moving v about (quickselect, median of three): after it,
 * v[0 .. k) holds the k smaller ones. */
static int64_t select_i64(int64_t *v, int32_t n, int32_t k)
{
    int32_t lo = 0, hi = n - 1;
    while (hi > lo) {
        int32_t i, j;
        partition_i64(v, lo, hi, &i, &j);
        if (k <= j) hi = j;
        else if (k >= i) lo = i;
        else return v[k]; /* between the two parts: equal to the pivot */
    }
    return v[k];
}

/* Earliest start of a job over whole nodes of [lo, hi): the usable unreserved nodes by their "wholly free"
 * keys (the whole smallest, and one more or a remainder node), then reserved nodes that could make it
 * earlier. */
static int64_t start_multi(slm_state_t *s, int32_t p, int32_t whole, int32_t rem, int64_t L, int mode, int64_t now,
                           int32_t lo, int32_t hi, int32_t *nodes, int32_t *nn)
{
    int32_t gpn = s->e->cfg.gpus_per_node;
    int32_t *ex = s->skip2, nex = 0, nu = 0; /* unreserved nodes already taken as candidates */
    slm_key_t *uk = s->ukeys; /* the unreserved candidates, in key order */
    int32_t need = whole + (rem ? 1 : 0);
    slm_kcur_t it;
    slm_nodes_whole_begin(s, &it, mode, lo, hi, need);
    for (int32_t k = 0; k < need; k++) {
        slm_key_t x = slm_nodes_whole_next(s, &it);
        if (x.job == INT32_MAX) break;
        int32_t xn = x.node;
        if (x.job == -1 && !mode) x = eff_key(s, mode, gpn, x.node);
        if (x.job != INT32_MAX) uk[nu++] = x;
        else k--; /* a free node the engine will not give and nothing will free: not a candidate */
        int32_t i = nex++;
        while (i > 0 && ex[i - 1] > xn) ex[i] = ex[i - 1], i--;
        ex[i] = xn;
    }
    slm_key_t kr = rem ? slm_nodes_min_unreserved(s, mode, rem, lo, hi, ex, nex) : SLM_KEY_NONE;
    if (kr.job == -1 && !mode) kr = eff_key(s, mode, rem, kr.node);
    /* their will-run starts, once each; then the candidate starts: each node's own */
    int64_t *ubs = s->ubs, *rbf = s->rbf, *rbr = s->rbr, *cand = s->ctimes, kbs = -1;
    int32_t nc = 0;
    for (int32_t i = 0; i < nu; i++) cand[nc++] = ubs[i] = batch_start(s, p, uk[i], mode, now);
    if (kr.job != INT32_MAX) cand[nc++] = kbs = batch_start(s, p, kr, mode, now);
    /* the unreserved nodes' own answer bounds what a reserved node can improve */
    int64_t bound = INT64_MAX;
    if (nu >= whole) {
        int64_t t = ubs[whole - 1];
        if (rem) {
            int64_t t2 = nu > whole ? ubs[whole] : INT64_MAX;
            if (kbs >= 0 && kbs < t2) t2 = kbs;
            t = t2 == INT64_MAX ? INT64_MAX : DS_MAX(t, t2);
        }
        bound = t;
    }
    int32_t *rl = s->skip, nrl = 0; /* the reserved nodes with a will-run start (rbf, rbr by this list) */
    for (int32_t i = 0; i < s->nrnodes; i++) {
        int32_t n = s->rnodes[i];
        if (n < lo || n >= hi) continue;
        int64_t f = -1, r = -1;
        slm_key_t x = eff_key(s, mode, gpn, n);
        if (x.job != INT32_MAX && x.end < bound) {
            f = batch_start(s, p, x, mode, now);
            cand[nc++] = resv_push(s, n, f, L);
        }
        if (rem && (x = eff_key(s, mode, rem, n)).job != INT32_MAX && x.end < bound) {
            r = batch_start(s, p, x, mode, now);
            cand[nc++] = resv_push(s, n, r, L);
        }
        if (f >= 0 || r >= 0) rbf[nrl] = f, rbr[nrl] = r, rl[nrl++] = n;
    }
    /* a time at which fewer nodes have a will-run start by then than the job takes is not usable (conflicts
     * only take more away): with the remainder's node counted when it has one by then (rmin), a time
     * below the need-th smallest whole-node start (fk), or the (need - 1)-th (fk1) with the remainder, */
    int64_t *fs = s->fstarts, rmin = kbs >= 0 ? kbs : INT64_MAX;
    int32_t nfs = 0;
    for (int32_t i = 0; i < nu; i++) fs[nfs++] = ubs[i];
    for (int32_t i = 0; i < nrl; i++) {
        if (rbf[i] >= 0) fs[nfs++] = rbf[i];
        if (rbr[i] >= 0 && rbr[i] < rmin) rmin = rbr[i];
    }
    int64_t fk = INT64_MAX, fk1 = need - 1 <= 0 ? INT64_MIN : INT64_MAX;
    if (need <= nfs) {
        fk = select_i64(fs, nfs, need - 1);
        if (need >= 2) { /* the largest of the need - 1 below it */
            fk1 = fs[0];
            for (int32_t i = 1; i < need - 1; i++) fk1 = DS_MAX(fk1, fs[i]);
        }
    } else if (need - 1 >= 1 && need - 1 <= nfs) {
        fk1 = fs[0];
        for (int32_t i = 1; i < nfs; i++) fk1 = DS_MAX(fk1, fs[i]);
    }
    /* ... is not a candidate: only the others are sorted, and tried from the earliest (which nodes are
     * usable depends on the time only) */
    int64_t floor_t = rem && rmin != INT64_MAX ? DS_MIN(fk, DS_MAX(fk1, rmin)) : fk;
    int32_t nkeep = 0;
    for (int32_t c = 0; c < nc; c++)
        if (cand[c] >= floor_t) cand[nkeep++] = cand[c];
    nc = nkeep;
    sort_i64(cand, nc);
    int64_t best = -1;
    for (int32_t c = 0; c < nc && best < 0; c++) {
        int64_t t = cand[c];
        if (c > 0 && t == cand[c - 1]) continue;
        if (t < (rem && rmin <= t ? fk1 : fk)) continue;
        int32_t full = 0, part = 0, fn[4096], pn = -1;
        for (int32_t i = 0; i < nu && full < whole + 1; i++)
            if (ubs[i] <= t) fn[full++] = uk[i].node;
        for (int32_t i = 0; i < nrl && full < 4096; i++) {
            int32_t n = rl[i];
            if ((rbf[i] < 0 || rbf[i] > t) && (!rem || part || rbr[i] < 0 || rbr[i] > t)) continue;
            if (resv_conflict(s, n, t, L) >= 0) continue;
            if (rbf[i] >= 0 && rbf[i] <= t) fn[full++] = n;
            else pn = n, part = 1;
        }
        if (rem && !part && kbs >= 0 && kbs <= t) pn = kr.node, part = 1;
        if (full < whole || (rem && full == whole && !part)) continue;
        best = t;
        *nn = 0;
        for (int32_t i = 0; i < whole; i++) nodes[(*nn)++] = fn[i];
        if (rem) nodes[(*nn)++] = full > whole ? fn[whole] : pn;
    }
    return best;
}

/* ---- one job ---- */

enum { PLAN_NONE = 0, PLAN_STARTED, PLAN_RESERVED };

static int plan(ds_engine_t *e, slm_state_t *s, int32_t j, int32_t p, int64_t now)
{
    int32_t gpn = e->cfg.gpus_per_node, g = e->trace->jobs[j].gpus;
    int32_t whole = g > gpn ? g / gpn : 0, rem = g > gpn ? g % gpn : 0;
    int64_t L = s->limit[j];
    int mode = s->cfg.preempt && s->qos[j] == SLM_QOS_NORMAL && s->parts[p].nborrow > 0;
    slm_nodes_flush(s, now);
    /* the reservations in its way matter only where it could start now: enough GPUs free, or preemption */
    int try_now = e->parts[p].gpus_free >= g;
    DS_ASSERT(now == s->bf_now);
    if (try_now || mode) block_now(s, L);
    int r = PLAN_NONE;
    int32_t nodes[4096], nn = 0;
    if (try_now && ds_engine_find_free_masked(e, j, p, s->blocked, s->gbuf)) {
        slm_start(e, s, j, s->gbuf, now, 1);
        r = PLAN_STARTED;
    } else if (mode) {
        /* it fits once the preemptable jobs are gone: it preempts (select_nodes answers NODES_BUSY while the
         * victims stop, so backfill reserves its nodes for the rest of the pass) */
        int32_t nv = slm_find_victims(e, s, j, s->blocked, now, s->removed);
        if (nv > 0) {
            for (int32_t i = 0; i < nv; i++)
                for (int32_t q = 0; q < s->jnnodes[s->removed[i]] && nn < 4096; q++) {
                    int32_t n = s->jnodes[s->jnode_off[s->removed[i]] + q], dup = 0;
                    for (int32_t k = 0; k < nn && !dup; k++) dup = nodes[k] == n;
                    if (!dup) nodes[nn++] = n;
                }
            r = slm_preempt_for(e, s, j, s->removed, nv, now, 1) ? PLAN_STARTED : PLAN_RESERVED;
        }
    }
    if (try_now || mode) unblock(s);
    if (r != PLAN_NONE) {
        if (nn) reserve(s, j, nodes, nn, now);
        return r;
    }
    slm_nodes_flush(s, now);
    /* the node ranges it may take (one on a cluster of one GPU type): the earliest start over them, ties to
     * the first */
    int32_t lo[DS_MAX_GPU_TYPES], hi[DS_MAX_GPU_TYPES], nr = slm_ranges(s, j, p, whole > 0, lo, hi);
    int64_t st = -1;
    for (int32_t i = 0; i < nr; i++) {
        int32_t tn[4096], tnn = 0;
        int64_t t;
        if (!whole) {
            t = start_single(s, p, g, L, mode, now, lo[i], hi[i], &tn[0]);
            tnn = t >= 0 ? 1 : 0;
        } else {
            t = start_multi(s, p, whole, rem, L, mode, now, lo[i], hi[i], tn, &tnn);
        }
        if (t < 0 || tnn == 0 || (st >= 0 && t >= st)) continue;
        st = t, nn = tnn;
        memcpy(nodes, tn, (size_t)tnn * sizeof *nodes);
    }
    if (st < 0 || nn == 0 || st > now + s->cfg.bf_window) return PLAN_NONE;
    if (st <= now) st = now + 1; /* it fits now only where the engine said no: the next second, at best */
    reserve(s, j, nodes, nn, st);
    return PLAN_RESERVED;
}

/* The most GPUs a waiting job could get now on one node: free, and with preemption (mode 1) the
 * preemptable ones too (the node trees: slot g has a key {-1} somewhere when some node has g). */
static int32_t most_free(slm_state_t *s, int32_t p, int mode, int64_t now)
{
    const ds_part_t *DP = &s->e->parts[p];
    slm_nodes_flush(s, now);
    int32_t gpn = s->e->cfg.gpus_per_node, g = 0;
    while (g < gpn && slm_nodes_min(s, mode, g + 1, DP->node0, DP->node0 + DP->nnodes, NULL, 0).job == -1) g++;
    return g;
}

void slm_backfill_pass(ds_engine_t *e, slm_state_t *s, int32_t p, int64_t now)
{
    slm_part_t *P = &s->parts[p];
    int32_t gpn = e->cfg.gpus_per_node;
    s->n_bf_passes++;
    resv_reset(s);
    s->bf_now = now;
    /* preemptability depends on time with GraceTime or PreemptExemptTime: every node's keys go stale */
    const ds_part_t *DP = &e->parts[p];
    if (s->cfg.preempt && (s->cfg.exempt_time >= 0 || s->cfg.grace_time > 0))
        for (int32_t n = DP->node0; n < DP->node0 + DP->nnodes; n++) slm_nodes_dirty(s, n);
    int32_t mf = most_free(s, p, 0, now), mfp = s->cfg.preempt ? most_free(s, p, 1, now) : 0;
    int32_t tested = 0;
    slm_walk_t w;
    slm_walk_begin(s, p, &w);
    w.skip_capped = 1; /* bf_max_job_test counts tested jobs only: capped ones are passed before the test */
    for (int32_t j; (j = slm_walk_next(s, &w)) >= 0;) {
        if (!ds_engine_startable(e, j) || s->eligible[j] > now || s->stop_at[j] > now) continue;
        if (!slm_limits_ok(s, j)) continue;
        if (tested >= s->cfg.bf_max_job_test) {
            s->reason[j] = SLM_W_NOTTESTED;
            break;
        }
        /* nothing left can start now: the smallest waiting job fits on no node, even by preemption */
        int32_t min_need = gpn;
        for (int32_t g = 1; g < gpn; g++)
            if (P->hist[g] > 0) {
                min_need = g;
                break;
            }
        int mode = s->cfg.preempt && s->qos[j] == SLM_QOS_NORMAL && P->nborrow > 0;
        if ((mode ? mfp : mf) < min_need && mf < min_need) break;
        tested++;
        s->n_plans++;
        if (e->trace->jobs[j].gpus > gpn) s->n_multi++;
        s->bf_start[j] = -1;
        int r = plan(e, s, j, p, now);
        if (r == PLAN_STARTED) {
            mf = most_free(s, p, 0, now);
            if (s->cfg.preempt) mfp = most_free(s, p, 1, now);
            continue;
        }
        s->reason[j] = SLM_W_RESOURCES;
        /* it would fit now but for the reservations of jobs ahead of it: name the first such job */
        if (mf >= DS_MIN(e->trace->jobs[j].gpus, gpn) && ds_engine_find_free(e, j, p, s->gbuf)) {
            int32_t n = e->gpus[s->gbuf[0]].node;
            if (s->resv_owner[n] >= 0 && s->resv_owner[n] != j) {
                s->reason[j] = SLM_W_RESERVED;
                s->blocker[j] = s->resv_owner[n];
                s->blocker_at[j] = s->resv_from[n];
            }
        }
    }
    slm_walk_end(s, &w);
}
