/* slurm_backfill.c: sched/backfill (_attempt_backfill in src/plugins/sched/backfill/backfill.c).
 *
 * Every bf_interval, when jobs, nodes or priorities changed since the last pass (_more_work), the pending
 * jobs are tested in queue order, up to bf_max_job_test, each against a node-space map: time intervals,
 * each with the nodes not yet reserved. A job's usable nodes are those free of reservations over
 * [start, start + time limit]; the select plugin's will-run test (_will_run_test in
 * src/plugins/select/cons_common/job_test.c) then says when it could start there: now if it fits now
 * (with preempt/qos, also now if it fits once every preemptable job is gone: the job then preempts),
 * else the expected end of the running job whose end makes it fit, the running jobs being removed in
 * order of expected end (start + time limit) in batches whose time window starts at 30 s and doubles.
 * A job that can start now starts; one that cannot reserves the nodes it would get, whole nodes, from
 * that start (rounded down to bf_resolution) to start + time limit, so that no later job is started on
 * them if it would still run then. This is conservative backfill, every tested job reserving; there is
 * no bf_max_job_part/user limit by default. When an interval boundary of the map frees nodes earlier
 * than the will-run start, the test is repeated from that boundary (TRY_LATER); a planned start whose
 * interval overlaps another reservation on its nodes is retried from there too (_test_resv_overlap).
 * Jobs held back by association limits get no reservation (acct_policy_job_runnable_pre_select).
 *
 * The pass stops early once no remaining job could start now (no node has enough free GPUs for the
 * smallest waiting job, and no preemption is possible): the reservations the rest would make matter only
 * to later jobs of the same pass, which cannot start either, so the schedule is the one the full pass
 * gives. */
#include "slurm_internal.h"

#include <stdlib.h>
#include <string.h>

enum { PLAN_NONE = 0, PLAN_STARTED, PLAN_RESERVED };

static void bm_zero(uint64_t *b, int32_t nw) { memset(b, 0, (size_t)nw * sizeof *b); }
static int bm_test(const uint64_t *b, int32_t n) { return (int)((b[n >> 6] >> (n & 63)) & 1); }
static void bm_set(uint64_t *b, int32_t n) { b[n >> 6] |= 1ull << (n & 63); }
static void bm_and(uint64_t *d, const uint64_t *a, int32_t nw)
{
    for (int32_t i = 0; i < nw; i++) d[i] &= a[i];
}
static int32_t bm_count(const uint64_t *b, int32_t nw)
{
    int32_t c = 0;
    for (int32_t i = 0; i < nw; i++) c += __builtin_popcountll(b[i]);
    return c;
}

/* ---- the node-space map ---- */

static uint64_t *entry_bm(slm_map_t *m, int32_t i) { return &m->avail[(size_t)i * (size_t)m->nwords]; }

static int32_t map_new(slm_map_t *m)
{
    if (m->n == m->cap) {
        m->cap = m->cap ? 2 * m->cap : 64;
        m->begin = ds_xrealloc(m->begin, (size_t)m->cap * sizeof *m->begin);
        m->end = ds_xrealloc(m->end, (size_t)m->cap * sizeof *m->end);
        m->next = ds_xrealloc(m->next, (size_t)m->cap * sizeof *m->next);
        m->avail = ds_xrealloc(m->avail, (size_t)m->cap * (size_t)m->nwords * sizeof *m->avail);
    }
    return m->n++;
}

static void map_reset(slm_map_t *m, int64_t begin, int64_t end, const uint64_t *nodes)
{
    m->n = 0;
    int32_t i = map_new(m);
    m->begin[i] = begin;
    m->end[i] = end;
    m->next[i] = 0;
    memcpy(entry_bm(m, i), nodes, (size_t)m->nwords * sizeof(uint64_t));
}

/* _add_reservation: nodes outside res_bitmap are taken from start_time to end_reserve. */
static void map_reserve(slm_map_t *m, int64_t start_time, int64_t end_reserve, const uint64_t *res_bitmap,
                        int64_t resolution)
{
    int placed = 0;
    int32_t i, j, one_before = 0, one_after = -1, nw = m->nwords;
    if (start_time < m->begin[0]) start_time = m->begin[0];
    if (end_reserve < start_time + resolution) end_reserve = start_time + resolution;
    for (j = 0;;) {
        if (m->end[j] > start_time) {
            i = map_new(m);
            m->begin[i] = start_time;
            m->end[i] = m->end[j];
            m->end[j] = start_time;
            memcpy(entry_bm(m, i), entry_bm(m, j), (size_t)nw * sizeof(uint64_t));
            m->next[i] = m->next[j];
            m->next[j] = i;
            placed = 1;
            break;
        }
        if (m->end[j] == start_time) {
            placed = 1;
            break;
        }
        one_before = j;
        if ((j = m->next[j]) == 0) break;
    }
    while (placed && (j = m->next[j])) {
        if (end_reserve < m->end[j]) {
            i = map_new(m);
            m->begin[i] = end_reserve;
            m->end[i] = m->end[j];
            m->end[j] = end_reserve;
            memcpy(entry_bm(m, i), entry_bm(m, j), (size_t)nw * sizeof(uint64_t));
            m->next[i] = m->next[j];
            m->next[j] = i;
        }
        bm_and(entry_bm(m, j), res_bitmap, nw);
        if (end_reserve == m->end[j]) {
            if (m->next[j]) one_after = m->next[j];
            break;
        }
    }
    /* drop one record whose bitmap equals its predecessor's */
    for (i = one_before; i != one_after;) {
        if ((j = m->next[i]) == 0) break;
        if (memcmp(entry_bm(m, i), entry_bm(m, j), (size_t)nw * sizeof(uint64_t))) {
            i = j;
            continue;
        }
        m->end[i] = m->end[j];
        m->next[i] = m->next[j];
        break;
    }
}

/* _test_resv_overlap: would nodes use, from start to end, run into a reservation? */
static int map_overlap(slm_map_t *m, const uint64_t *use, int64_t start, int64_t end)
{
    for (int32_t j = 0;;) {
        if (m->end[j] > start && m->begin[j] < end) {
            const uint64_t *a = entry_bm(m, j);
            for (int32_t w = 0; w < m->nwords; w++)
                if (use[w] & ~a[w]) return 1;
        }
        if ((j = m->next[j]) == 0) return 0;
    }
}

/* ---- one job: the will-run estimate ---- */

static int removable(const slm_state_t *s, int32_t r, int preemptor, int64_t now)
{
    return !(preemptor && slm_preemptable(s, r, now));
}

/* Inserts n into the sorted list v (of *k). */
static void sorted_add(int32_t *v, int32_t *k, int32_t n)
{
    int32_t i = *k;
    while (i > 0 && v[i - 1] > n) v[i] = v[i - 1], i--;
    v[i] = n;
    (*k)++;
}

/* The will-run start (>= now) of job j on the nodes of partition p but skip (sorted; s->blocked set for
 * them), written with the nodes it would get to nodes (*nn of them); -1 when it would not fit even with
 * every running job gone. *preempt: it fits now once the preemptable jobs are gone (no nodes written).
 *
 * The select plugin removes the running jobs on usable nodes in order of expected end, in batches (the
 * first ends 30 s after the first job's end rounded up to 30 s, each next one twice as far), and tests the
 * job after each batch: the start is the expected end of the batch's last job. The first removal after
 * which the job fits comes from the nodes' keys, then its batch. */
static int64_t will_run(slm_state_t *s, int32_t j, int32_t p, int preemptor, int64_t now, int *preempt,
                        int32_t *nodes, int32_t *nn, int32_t *skip, int32_t nskip)
{
    const ds_engine_t *e = s->e;
    const ds_part_t *DP = &e->parts[p];
    int32_t gpn = e->cfg.gpus_per_node, g = e->trace->jobs[j].gpus, mode = preemptor ? 1 : 0;
    int32_t whole = g > gpn ? g / gpn : 0, rem = g > gpn ? g % gpn : 0;
    int32_t lo = DP->node0, hi = DP->node0 + DP->nnodes;
    *preempt = 0;
    *nn = 0;
    slm_nodes_flush(s, now);
    slm_key_t fit;
    if (!whole) {
        fit = slm_nodes_min(s, mode, g, lo, hi, skip, nskip);
    } else {
        /* the whole smallest "wholly free" keys, then one more, or a remainder node outside them */
        int32_t *ex = s->skip2, nex = nskip;
        memcpy(ex, skip, (size_t)nskip * sizeof *ex);
        slm_key_t kw = SLM_KEY_NONE;
        for (int32_t k = 0; k < whole; k++) {
            kw = slm_nodes_min(s, mode, gpn, lo, hi, ex, nex);
            if (kw.job == INT32_MAX) return -1;
            sorted_add(ex, &nex, kw.node);
            nodes[(*nn)++] = kw.node;
        }
        fit = kw;
        if (rem) {
            slm_key_t k1 = slm_nodes_min(s, mode, gpn, lo, hi, ex, nex); /* one more free node */
            slm_key_t kr = slm_nodes_min(s, mode, rem, lo, hi, ex, nex);  /* or a remainder node */
            if (kr.job != INT32_MAX && slm_key_lt(kr, kw)) kr = (slm_key_t){kw.end, kw.job, kr.node};
            fit = slm_key_lt(k1, kr) ? k1 : kr;
            if (fit.job == INT32_MAX) return -1;
            nodes[(*nn)++] = fit.node;
            if (slm_key_lt(fit, kw)) fit = kw;
        }
    }
    if (fit.job == INT32_MAX) return -1;
    slm_key_t first = slm_nodes_min(s, mode, 0, lo, hi, skip, nskip);
    if (fit.job == -1) {
        if (preemptor) {
            *preempt = 1;
            return now;
        }
        /* some usable node has the GPUs but the engine said no (its CPUs or memory): such a node counts
         * from its next job to leave (a scan of the nodes; it is rare) */
        fit = SLM_KEY_NONE;
        for (int32_t n = lo; n < hi; n++) {
            if (s->blocked[n]) continue;
            slm_key_t k = slm_nodes_key(s, mode, whole ? gpn : g, n);
            if (k.job == -1) k = slm_nodes_key(s, mode, 0, n);
            if (slm_key_lt(k, fit)) fit = k;
        }
        if (fit.job == INT32_MAX) return -1;
    }
    /* the batch of the fitting removal: thresholds first + 30 s rounded, then doubling */
    int64_t end_b = first.end + (30 - first.end % 30), thr = end_b + 30;
    while (thr < fit.end) thr = end_b + 2 * (thr - end_b);
    /* the batch's last removal: the last running job by expected end, up to thr, on a usable node */
    const slm_list_t *r = &s->parts[p].run;
    int32_t a = 0, b = r->n;
    while (a < b) {
        int32_t m = a + (b - a) / 2;
        if (s->end_est[r->job[m]] <= thr) a = m + 1;
        else b = m;
    }
    int32_t last = -1;
    for (int32_t i = a - 1; i >= 0 && last < 0; i--) {
        int32_t x = r->job[i];
        if (r->stamp[i] != s->rstamp[x] || !removable(s, x, preemptor, now)) continue;
        for (int32_t q = 0; q < s->jnnodes[x]; q++)
            if (!s->blocked[s->jnodes[s->jnode_off[x] + q]]) {
                last = x;
                break;
            }
    }
    /* the nodes it would reserve: those on which it first fits (docs/peers.md: Slurm takes the best fit
     * among every node free by the batch's end; which node only matters to later jobs of the pass that
     * could start now there) */
    if (!whole) nodes[(*nn)++] = fit.node;
    if (last < 0) return now;
    /* a job past its time limit runs on (OverTimeLimit=UNLIMITED): _guess_job_end says now + its limit */
    return s->end_est[last] > now ? s->end_est[last] : now + s->limit[last];
}

static void nodes_of_gpus(const ds_engine_t *e, const int32_t *gpus, int32_t n, uint64_t *bm, int32_t nw)
{
    bm_zero(bm, nw);
    for (int32_t i = 0; i < n; i++) bm_set(bm, e->gpus[gpus[i]].node);
}

static void reserve(slm_state_t *s, int32_t j, const uint64_t *job_nodes, int64_t start, int64_t end)
{
    int32_t nw = s->map.nwords;
    for (int32_t w = 0; w < nw; w++) s->bm_tmp[w] = ~job_nodes[w];
    map_reserve(&s->map, start, end, s->bm_tmp, s->cfg.bf_resolution);
    for (int32_t n = 0; n < s->e->nnodes; n++)
        if (bm_test(job_nodes, n) && s->resv_owner[n] < 0) s->resv_owner[n] = j, s->resv_from[n] = start;
    s->n_resv++;
}

static void clear_blocked(slm_state_t *s)
{
    for (int32_t i = 0; i < s->nskip; i++) s->blocked[s->skip[i]] = 0;
    s->nskip = 0;
}

static int plan_rounds(ds_engine_t *e, slm_state_t *s, int32_t j, int32_t p, const uint64_t *part_bm, int64_t now);

static int plan(ds_engine_t *e, slm_state_t *s, int32_t j, int32_t p, const uint64_t *part_bm, int64_t now)
{
    int r = plan_rounds(e, s, j, p, part_bm, now);
    clear_blocked(s);
    return r;
}

static int plan_rounds(ds_engine_t *e, slm_state_t *s, int32_t j, int32_t p, const uint64_t *part_bm, int64_t now)
{
    const ds_part_t *DP = &e->parts[p];
    slm_map_t *m = &s->map;
    int32_t nw = m->nwords, gpn = e->cfg.gpus_per_node, g = e->trace->jobs[j].gpus;
    int32_t min_nodes = (g + gpn - 1) / gpn;
    int64_t L = s->limit[j], res = s->cfg.bf_resolution, window_end = now + s->cfg.bf_window;
    int preemptor = s->cfg.preempt && s->qos[j] == SLM_QOS_NORMAL && s->parts[p].nborrow > 0;
    int64_t start_res = now;
    uint64_t *avail = s->bm_avail;
    s->n_plans++;
    if (g > gpn) s->n_multi++;
    for (int32_t iter = 0; iter <= m->n + 2; iter++) {
        s->n_plan_iters++;
        int64_t end_time = (start_res > now ? start_res : now) + L, later_start = 0;
        memcpy(avail, part_bm, (size_t)nw * sizeof *avail);
        for (int32_t k = 0;;) {
            if (m->end[k] > start_res && m->next[k] && later_start == 0) {
                /* a later boundary worth trying: the next interval frees nodes this one lacks */
                const uint64_t *nx = entry_bm(m, m->next[k]), *cu = entry_bm(m, k);
                for (int32_t w = 0; w < nw; w++)
                    if ((part_bm[w] & nx[w]) & ~(avail[w] & cu[w])) {
                        later_start = m->end[k];
                        break;
                    }
            }
            if (m->end[k] <= start_res)
                ;
            else if (m->begin[k] <= end_time)
                bm_and(avail, entry_bm(m, k), nw);
            else
                break;
            if ((k = m->next[k]) == 0) break;
        }
        if (bm_count(avail, nw) < min_nodes) {
            if (later_start) {
                start_res = later_start;
                continue;
            }
            return PLAN_NONE;
        }
        /* the partition's nodes reserved over the job's interval: s->skip (sorted) and s->blocked */
        clear_blocked(s);
        for (int32_t w = DP->node0 / 64; w <= (DP->node0 + DP->nnodes - 1) / 64; w++)
            for (uint64_t x = part_bm[w] & ~avail[w]; x; x &= x - 1) {
                int32_t n = w * 64 + __builtin_ctzll(x);
                s->skip[s->nskip++] = n;
                s->blocked[n] = 1;
            }
        slm_fit_t f;
        int64_t st;
        int now_fit = 0, need_preempt = 0;
        int32_t wnodes[4096], wn = 0;
        if (ds_engine_find_free_masked(e, j, p, s->blocked, s->gbuf)) {
            st = now;
            now_fit = 1;
        } else {
            st = will_run(s, j, p, preemptor, now, &need_preempt, wnodes, &wn, s->skip, s->nskip);
            if (st < 0) {
                if (later_start) {
                    start_res = later_start;
                    continue;
                }
                return PLAN_NONE;
            }
        }
        if (st < start_res) st = start_res;
        if (st <= now) {
            if (now_fit) {
                slm_start(e, s, j, s->gbuf, now, 1);
                return PLAN_STARTED;
            }
            int32_t nv = slm_find_victims(e, s, j, s->blocked, now, s->removed);
            if (nv > 0) {
                int started = slm_preempt_for(e, s, j, s->removed, nv, now, 1);
                /* select_nodes answers NODES_BUSY while the victims stop: backfill reserves the job's nodes */
                int32_t nodes[4096], nn = 0;
                if (started) {
                    nodes_of_gpus(e, ds_engine_job_gpus(e, j), e->js[j].nplaced, s->bm_job, nw);
                } else {
                    slm_fit_begin(s, &f, j, p, s->blocked);
                    for (int32_t i = 0; i < nv; i++) slm_fit_free_job(s, &f, s->removed[i]);
                    nn = slm_fit_nodes(s, &f, nodes);
                    bm_zero(s->bm_job, nw);
                    for (int32_t i = 0; i < nn; i++) bm_set(s->bm_job, nodes[i]);
                }
                reserve(s, j, s->bm_job, now / res * res, (now + L) / res * res);
                return started ? PLAN_STARTED : PLAN_RESERVED;
            }
            return PLAN_NONE;
        }
        if (later_start && st > later_start) {
            start_res = later_start;
            continue;
        }
        if (st > window_end) return PLAN_NONE;
        if (now_fit) {
            nodes_of_gpus(e, s->gbuf, g, s->bm_job, nw);
        } else {
            if (!wn) return PLAN_NONE;
            bm_zero(s->bm_job, nw);
            for (int32_t i = 0; i < wn; i++) bm_set(s->bm_job, wnodes[i]);
        }
        int64_t sa = st / res * res, ea = (st + L) / res * res;
        if (map_overlap(m, s->bm_job, sa, ea)) {
            start_res = st;
            continue;
        }
        reserve(s, j, s->bm_job, sa, ea);
        s->bf_start[j] = st;
        return PLAN_RESERVED;
    }
    return PLAN_NONE;
}

static int64_t max_free(const ds_engine_t *e, int32_t p)
{
    const ds_part_t *P = &e->parts[p];
    int64_t m = 0;
    for (int32_t n = P->node0; n < P->node0 + P->nnodes; n++)
        if (e->nodes[n].nfree > m) m = e->nodes[n].nfree;
    return m;
}

void slm_backfill_pass(ds_engine_t *e, slm_state_t *s, int32_t p, int64_t now)
{
    const ds_part_t *DP = &e->parts[p];
    slm_part_t *P = &s->parts[p];
    int32_t nw = s->map.nwords, gpn = e->cfg.gpus_per_node;
    s->n_bf_passes++;
    uint64_t *part_bm = s->bm_cur;
    bm_zero(part_bm, nw);
    for (int32_t n = DP->node0; n < DP->node0 + DP->nnodes; n++) bm_set(part_bm, n), s->resv_owner[n] = -1;
    int64_t res = s->cfg.bf_resolution;
    map_reset(&s->map, now / res * res, (now + s->cfg.bf_window) / res * res, part_bm);
    int64_t mf = max_free(e, p);
    int32_t tested = 0;
    /* preemptability depends on time with GraceTime or PreemptExemptTime: every node's keys go stale */
    if (s->cfg.preempt && (s->cfg.exempt_time >= 0 || s->cfg.grace_time > 0))
        for (int32_t n = DP->node0; n < DP->node0 + DP->nnodes; n++) slm_nodes_dirty(s, n);
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
        int preemptor = s->cfg.preempt && s->qos[j] == SLM_QOS_NORMAL && P->nborrow > 0;
        if (!preemptor) {
            int32_t min_need = gpn;
            for (int32_t g = 1; g < gpn; g++)
                if (P->hist[g] > 0) {
                    min_need = g;
                    break;
                }
            if (mf < min_need) break; /* nothing left can start now */
        }
        tested++;
        s->bf_start[j] = -1;
        int r = plan(e, s, j, p, part_bm, now);
        if (r == PLAN_STARTED) {
            mf = max_free(e, p);
            continue;
        }
        s->reason[j] = SLM_W_RESOURCES;
        /* it would fit now but for the reservations of jobs ahead of it: name the first such job */
        if (r == PLAN_NONE || r == PLAN_RESERVED) {
            if (mf >= DS_MIN(e->trace->jobs[j].gpus, gpn) && ds_engine_find_free(e, j, p, s->gbuf)) {
                int32_t n = e->gpus[s->gbuf[0]].node;
                if (s->resv_owner[n] >= 0 && s->resv_owner[n] != j) {
                    s->reason[j] = SLM_W_RESERVED;
                    s->blocker[j] = s->resv_owner[n];
                    s->blocker_at[j] = s->resv_from[n];
                }
            }
        }
    }
    slm_walk_end(&w);
}
