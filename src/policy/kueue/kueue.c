/* kueue.c: the Kueue model as two policies, kueue (Classic preemption) and kueue-fs (Fair Sharing): their
 * ops, the per-workload bookkeeping (class at submit, ClusterQueue lists, quota usage), the snapshot the
 * preemption searches read, invariants and counters. Cycles and placement are in kueue_cycle.c
 * (docs/peers.md, "Kueue"). */
#include "kueue/kueue_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int32_t plist(const kueue_t *s, int32_t j) { return 2 * s->t->jobs[j].tenant + s->cls[j]; }

static void pend_insert(kueue_t *s, int32_t j)
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
static void release(kueue_t *s, int32_t j, int64_t now)
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
        release(s, j, now);
        pend_insert(s, j);
    }
    /* an eviction is no instant: the workload is back in its queue once it is gone */
    s->hold_until[j] = now + s->cfg.eviction_latency;
    if (s->hold_until[j] < s->timer) s->timer = s->hold_until[j];
}

static void kueue_enqueue(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    kueue_t *s = state;
    const ds_job_t *jb = &e->trace->jobs[j];
    if (s->state[j] == KQ_NONE) {
        /* first arrival: the WorkloadPriorityClass is fixed at submit (prod.h, the class mapping) */
        kq_cq_t *c = &s->cq[jb->tenant];
        int klass = pq_class_at_submit(e, s->cfg.classes, c->gdemand, j);
        s->cls[j] = klass == DS_CLASS_G ? 0 : 1;
        if (klass == DS_CLASS_G) c->gdemand += jb->gpus;
        ds_engine_set_class(e, j, klass);
    }
    if (s->state[j] == KQ_RUNNING) release(s, j, now);
    pend_insert(s, j);
}

static void kueue_cancel_start(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    (void)now;
    kueue_t *s = state;
    const ds_job_t *jb = &e->trace->jobs[j];
    /* the driver could not start it: still admitted, back to waiting for nodes */
    s->state[j] = KQ_ADMITTED;
    s->cq[jb->tenant].unplaced += jb->gpus;
    pq_put(&s->unpl, e->js[j].part, j, s->adm.key[j]);
}

static void kueue_adopt(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    (void)now;
    kueue_t *s = state;
    const ds_job_t *jb = &e->trace->jobs[j];
    s->cls[j] = e->js[j].klass == DS_CLASS_BE ? 1 : 0;
    if (s->cls[j] == 0) s->cq[jb->tenant].gdemand += jb->gpus;
    pq_put(&s->adm, plist(s, j), j, ++s->seq);
    s->cq[jb->tenant].usage += jb->gpus;
    s->cq[jb->tenant].ahist[s->cls[j]][pq_hb(jb->gpus)]++;
    s->cq[jb->tenant].ause[s->cls[j]] += jb->gpus;
    s->state[j] = KQ_RUNNING;
}

static void kueue_on_finish(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    kueue_t *s = state;
    release(s, j, now);
    s->state[j] = KQ_DONE;
    if (s->cls[j] == 0) s->cq[e->trace->jobs[j].tenant].gdemand -= e->trace->jobs[j].gpus;
}

static void kueue_schedule(ds_engine_t *e, void *state, int32_t part, int64_t now, int timer)
{
    (void)timer;
    kueue_t *s = state;
    if (s->timer <= now) s->timer = DS_TIME_NEVER;
    kueue_pass(e, s, part, now);
}

static int64_t kueue_next_timer(const ds_engine_t *e, const void *state, int64_t now)
{
    (void)e;
    const kueue_t *s = state;
    int64_t t = s->timer > now ? s->timer : DS_TIME_NEVER;
    for (int32_t p = 0; p < s->nparts; p++)
        if (s->requeue_at[p] < t) t = s->requeue_at[p] > now ? s->requeue_at[p] : now + 1;
    return t;
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

static int kueue_init_common(ds_engine_t *e, const void *config, void **state, int fair_sharing)
{
    kueue_t *s = ds_xcalloc(1, sizeof *s);
    if (config) s->cfg = *(const kueue_config_t *)config;
    else kueue_config_default(&s->cfg, fair_sharing);
    s->cfg.fair_sharing = fair_sharing;
    const ds_trace_t *t = e->trace;
    s->t = t;
    s->nt = t->ntenants;
    s->nparts = e->nparts;
    s->gpn = e->cfg.gpus_per_node;
    size_t nj = (size_t)(t->njobs ? t->njobs : 1), nt = (size_t)(s->nt ? s->nt : 1);
    s->cq = ds_xcalloc(nt, sizeof *s->cq);
    s->pq = ds_xmalloc(nt * sizeof *s->pq);
    s->pq_off = ds_xcalloc((size_t)e->nparts + 1, sizeof *s->pq_off);
    for (int32_t i = 0; i < s->nt; i++) s->pq_off[e->tenant_part[i] + 1]++;
    for (int32_t p = 0; p < e->nparts; p++) s->pq_off[p + 1] += s->pq_off[p];
    int32_t *fill = ds_xcalloc((size_t)e->nparts + 1, sizeof *fill);
    for (int32_t i = 0; i < s->nt; i++) {
        int32_t p = e->tenant_part[i];
        s->cq[i].local = fill[p];
        s->pq[s->pq_off[p] + fill[p]++] = i;
        s->cq[i].tenant = i;
        s->cq[i].part = p;
        s->cq[i].sticky = -1;
    }
    free(fill);
    pq_fam_init(&s->pend, 2 * s->nt, t->njobs);
    pq_fam_init(&s->adm, 2 * s->nt, t->njobs);
    pq_fam_init(&s->unpl, e->nparts, t->njobs);
    s->state = ds_xcalloc(nj, 1);
    s->cls = ds_xcalloc(nj, 1);
    s->act_seq = ds_xcalloc(nj, sizeof *s->act_seq);
    s->inadm_gen = ds_xcalloc(nj, sizeof *s->inadm_gen);
    s->hold_until = ds_xcalloc(nj, sizeof *s->hold_until);
    s->pre_mark = ds_xcalloc(nj, sizeof *s->pre_mark);
    s->requeue_at = ds_xmalloc((size_t)(e->nparts ? e->nparts : 1) * sizeof *s->requeue_at);
    for (int32_t p = 0; p < e->nparts; p++) s->requeue_at[p] = DS_TIME_NEVER;
    s->last_pass = ds_xcalloc((size_t)(e->nparts ? e->nparts : 1), sizeof *s->last_pass);
    for (int32_t i = 0; i < s->nt; i++) s->cq[i].gen = 1;
    s->ent = ds_xmalloc(nt * sizeof *s->ent);
    s->captgt = 64;
    s->tgt = ds_xmalloc((size_t)s->captgt * sizeof *s->tgt);
    s->W = ds_xmalloc(nt * sizeof *s->W);
    s->S0 = ds_xmalloc(nt * sizeof *s->S0);
    s->usage_local = ds_xmalloc(nt * sizeof *s->usage_local);
    s->nominal_local = ds_xmalloc(nt * sizeof *s->nominal_local);
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
    sn->cur = ds_xmalloc(nt * sizeof *sn->cur);
    sn->first = ds_xmalloc(nt * sizeof *sn->first);
    sn->phase = ds_xmalloc(nt * sizeof *sn->phase);
    sn->retry = ds_xmalloc(nt * sizeof *sn->retry);
    sn->cur_adm = ds_xmalloc(nt * sizeof *sn->cur_adm);
    s->timer = DS_TIME_NEVER;
    *state = s;
    return DS_OK;
}

static int kueue_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    (void)err;
    return kueue_init_common(e, config, state, 0);
}

static int kueue_fs_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    (void)err;
    return kueue_init_common(e, config, state, 1);
}

static void kueue_fini(void *state)
{
    kueue_t *s = state;
    pq_fam_free(&s->pend);
    pq_fam_free(&s->adm);
    pq_fam_free(&s->unpl);
    void *p[] = {s->cq, s->pq, s->pq_off, s->state, s->cls, s->act_seq, s->inadm_gen, s->hold_until, s->pre_mark, s->requeue_at, s->last_pass, s->ent,
                 s->tgt, s->W, s->S0, s->usage_local, s->nominal_local, s->snap.cur, s->snap.first, s->snap.phase,
                 s->snap.retry, s->snap.cur_adm};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
    free(s);
}

/* Invariants of the model (docs/peers.md): a cohort never admits beyond its quota, a victim comes from a CQ
 * that was borrowing or is of lower priority in the preemptor's own CQ, and the quota counters match the
 * engine's (running GPUs plus admitted GPUs not on nodes yet). */
static int kueue_check(const ds_engine_t *e, const void *state, char *msg, size_t n)
{
    const kueue_t *s = state;
    if (s->st.illegal_victims) {
        snprintf(msg, n, "kueue: %lld victims taken from CQs within their nominal quota", (long long)s->st.illegal_victims);
        return -1;
    }
    if (s->st.higher_prio_own_victims) {
        snprintf(msg, n, "kueue: %lld victims not of lower priority in the preemptor's CQ", (long long)s->st.higher_prio_own_victims);
        return -1;
    }
    for (int32_t p = 0; p < s->nparts; p++) {
        int64_t use = 0, nom = 0;
        for (int32_t k = s->pq_off[p]; k < s->pq_off[p + 1]; k++) {
            const kq_cq_t *c = &s->cq[s->pq[k]];
            int32_t i = c->tenant;
            if (c->usage != e->tenant_g_gpus[i] + e->tenant_be_gpus[i] + c->unplaced) {
                snprintf(msg, n, "kueue: CQ %s counts %lld GPUs, the engine %lld running and %lld admitted not placed",
                         e->trace->tenants[i].name, (long long)c->usage,
                         (long long)(e->tenant_g_gpus[i] + e->tenant_be_gpus[i]), (long long)c->unplaced);
                return -1;
            }
            use += c->usage;
            nom += e->tenant_quota[i];
        }
        if (use > nom) {
            snprintf(msg, n, "kueue: cohort %s admitted %lld GPUs over its quota %lld", e->parts[p].name, (long long)use,
                     (long long)nom);
            return -1;
        }
    }
    return 0;
}

static int kueue_stats(const ds_engine_t *e, const void *state, ds_policy_stat_t *out, int max)
{
    (void)e;
    const kueue_t *s = state;
    const kq_stats_t *x = &s->st;
    struct { const char *n; int64_t v; } v[] = {
        {"passes", x->passes}, {"cycles", x->cycles}, {"admitted", x->admitted}, {"inadmissible", x->inadmissible},
        {"bulk_moved", x->bulk_moved}, {"skipped", x->skipped}, {"preemptions_issued", x->preemptions_issued},
        {"evictions", x->evictions}, {"evictions_not_placed", x->evictions_unplaced}, {"placed", x->placed},
        {"admitted_waiting_for_nodes", x->placement_waits}, {"cycle_guard_hits", x->cycle_guard_hits},
        {"admitted_not_placed_gpu_s", (int64_t)x->unplaced_gpu_s}, {"preemption_searches", x->searches},
        {"preemption_searches_found", x->searches_found},
    };
    int k = 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0] && k < max; i++, k++) {
        snprintf(out[k].name, sizeof out[k].name, "%s", v[i].n);
        out[k].value = (double)v[i].v;
    }
    return k;
}

void *kueue_config_new(void);
void *kueue_fs_config_new(void);
void kueue_config_free(void *c);
int kueue_config_set(void *config, const char *key, const char *value, ds_error_t *err);
int kueue_fs_config_set(void *config, const char *key, const char *value, ds_error_t *err);
void kueue_config_help(FILE *f);
void kueue_fs_config_help(FILE *f);
void kueue_explain(const ds_engine_t *e, const void *state, int32_t j, int64_t now, ds_buf_t *out);

#define KUEUE_OPS                                                   \
    .props = DS_POLICY_PREEMPTIVE | DS_POLICY_CLASSES | DS_POLICY_EXACT_HOLD, \
    .fini = kueue_fini, .enqueue = kueue_enqueue, .cancel_start = kueue_cancel_start, .adopt = kueue_adopt, \
    .on_finish = kueue_on_finish, .schedule = kueue_schedule, .next_timer = kueue_next_timer, \
    .config_free = kueue_config_free, .check = kueue_check, .stats = kueue_stats, .explain = kueue_explain

const ds_policy_ops_t ds_policy_kueue = {
    .name = "kueue",
    .summary = "Kueue model: a ClusterQueue per tenant in one cohort, BestEffortFIFO, Classic preemption; "
               "admission by quota, placement after",
    .init = kueue_init,
    .config_new = kueue_config_new,
    .config_set = kueue_config_set,
    .config_help = kueue_config_help,
    KUEUE_OPS,
};

const ds_policy_ops_t ds_policy_kueue_fs = {
    .name = "kueue-fs",
    .summary = "Kueue model with Fair Sharing: DRS tournament admission, preemption by fair-sharing strategies",
    .init = kueue_fs_init,
    .config_new = kueue_fs_config_new,
    .config_set = kueue_fs_config_set,
    .config_help = kueue_fs_config_help,
    KUEUE_OPS,
};
