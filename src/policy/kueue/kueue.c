/* kueue.c: the Kueue model as two policies, kueue (Classic preemption) and kueue-fs (Fair Sharing): their
 * ops, the per-workload bookkeeping (class at submit, ClusterQueue lists, quota usage), the snapshot the
 * preemption searches read, invariants and counters. Cycles and placement are in kueue_cycle.c
 * (docs/peers.md, "Kueue"). */
#include "kueue/kueue_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    if (s->state[j] == KQ_RUNNING) kq_release(s, j, now);
    kq_pend_insert(s, j);
}

static void kueue_cancel_start(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    (void)now;
    kq_unplace(e, state, j); /* the driver could not start it: still admitted, back to waiting for nodes */
}

/* A deleted workload: out of its queue, or, when it was admitted and waited for nodes, its quota released
 * as Kueue releases a finished one (the cohort's inadmissible workloads are requeued). A later arrival is
 * classed at submit again. */
static void kueue_withdraw(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    kueue_t *s = state;
    const ds_job_t *jb = &e->trace->jobs[j];
    kq_cq_t *c = &s->cq[jb->tenant];
    if (s->state[j] == KQ_ADMITTED) kq_release(s, j, now);
    else pq_drop(&s->pend, j);
    if (c->sticky == j) c->sticky = -1;
    if (s->cls[j] == 0) c->gdemand -= jb->gpus;
    if (s->resume) s->resume[j] = 0;
    s->state[j] = KQ_NONE;
}

static void kueue_adopt(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    (void)now;
    kueue_t *s = state;
    const ds_job_t *jb = &e->trace->jobs[j];
    s->cls[j] = e->js[j].klass == DS_CLASS_BE ? 1 : 0;
    if (s->cls[j] == 0) s->cq[jb->tenant].gdemand += jb->gpus;
    kq_adopt(e, s, j);
}

static void kueue_on_finish(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    kueue_t *s = state;
    kq_release(s, j, now);
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

int kq_flavors_init(const ds_engine_t *e, const kueue_config_t *c, int32_t *forder, ds_error_t *err);
void kq_never_init(const ds_engine_t *e, kueue_t *s);

static int kueue_init_common(ds_engine_t *e, const void *config, void **state, int fair_sharing, ds_error_t *err)
{
    kueue_config_t cfg;
    if (config) cfg = *(const kueue_config_t *)config;
    else kueue_config_default(&cfg, fair_sharing);
    int32_t forder[DS_MAX_GPU_TYPES];
    int rc = kq_flavors_init(e, &cfg, forder, err);
    if (rc) return rc;
    kueue_t *s = ds_xcalloc(1, sizeof *s);
    s->cfg = cfg;
    s->cfg.fair_sharing = fair_sharing;
    s->nf = e->ntypes;
    memcpy(s->forder, forder, sizeof forder);
    const ds_trace_t *t = e->trace;
    s->t = t;
    s->nt = t->ntenants;
    s->nparts = e->nparts;
    s->gpn = e->cfg.gpus_per_node;
    size_t nj = (size_t)(t->njobs ? t->njobs : 1), nt = (size_t)(s->nt ? s->nt : 1);
    s->cq = ds_xcalloc(nt, sizeof *s->cq);
    size_t nf = (size_t)s->nf;
    s->fq = ds_xcalloc(nt * nf, sizeof *s->fq);
    s->flv = ds_xcalloc(nj, 1);
    s->pbuf = ds_xmalloc((size_t)DS_MAX_JOB_GPUS * sizeof *s->pbuf);
    if (s->nf > 1) {
        kq_never_init(e, s);
        s->resume = ds_xcalloc(nj, 1);
        s->resume_cycle = ds_xcalloc(nj, sizeof *s->resume_cycle);
        s->resume_gen = ds_xcalloc(nj, sizeof *s->resume_gen);
    }
    int32_t *local = ds_xmalloc(nt * sizeof *local);
    pq_part_tenants(e, &s->pq, &s->pq_off, local);
    for (int32_t i = 0; i < s->nt; i++) {
        s->cq[i].local = local[i];
        s->cq[i].tenant = i;
        s->cq[i].part = e->tenant_part[i];
        s->cq[i].sticky = -1;
    }
    free(local);
    pq_fam_init(&s->pend, 2 * s->nt, t->njobs);
    pq_fam_init(&s->adm, 2 * s->nt * s->nf, t->njobs);
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
    s->W = ds_xmalloc(nt * nf * sizeof *s->W);
    s->S0 = ds_xmalloc(nt * nf * sizeof *s->S0);
    s->usage_local = ds_xmalloc(nt * nf * sizeof *s->usage_local);
    s->nominal_local = ds_xmalloc(nt * nf * sizeof *s->nominal_local);
    s->xb = ds_xmalloc(nt * sizeof *s->xb);
    kq_snap_init(s);
    kq_snap_t *sn = &s->snap;
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
    return kueue_init_common(e, config, state, 0, err);
}

static int kueue_fs_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    return kueue_init_common(e, config, state, 1, err);
}

static void kueue_fini(void *state)
{
    kueue_t *s = state;
    pq_fam_free(&s->pend);
    pq_fam_free(&s->adm);
    pq_fam_free(&s->unpl);
    void *p[] = {s->fq, s->flv, s->never, s->resume, s->resume_cycle, s->resume_gen, s->pbuf, s->xb, s->cq, s->pq, s->pq_off, s->state, s->cls, s->act_seq, s->inadm_gen, s->hold_until, s->pre_mark, s->requeue_at, s->last_pass, s->ent,
                 s->tgt, s->W, s->S0, s->usage_local, s->nominal_local, s->snap.cur, s->snap.first, s->snap.phase,
                 s->snap.retry, s->snap.cur_adm};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
    free(s);
}

/* Several flavors: in each flavor, a CQ's usage is its running GPUs of that type plus its admitted GPUs not
 * placed yet, and the cohort's usage is within the flavor's nominal quotas; a running workload is on GPUs of
 * its flavor's type. */
static int check_flavors(const ds_engine_t *e, const kueue_t *s, int32_t p, char *msg, size_t n)
{
    for (int32_t f = 0; f < s->nf; f++) {
        int64_t use = 0, nom = 0;
        for (int32_t k = s->pq_off[p]; k < s->pq_off[p + 1]; k++) {
            int32_t i = s->pq[k];
            const kq_fq_t *q = kq_fq(s, i, f);
            size_t x = (size_t)i * (size_t)e->ntypes + (size_t)f;
            int64_t run = e->tenant_g_gpus_t[x] + e->tenant_be_gpus_t[x];
            if (q->usage != run + q->unplaced) {
                snprintf(msg, n, "kueue: CQ %s counts %lld GPUs in flavor %s, the engine %lld running and %lld admitted "
                         "not placed", e->trace->tenants[i].name, (long long)q->usage, e->trace->gtypes[f].name,
                         (long long)run, (long long)q->unplaced);
                return -1;
            }
            use += q->usage;
            nom += kq_nominal(e, s, i, f);
        }
        if (use > nom) {
            snprintf(msg, n, "kueue: cohort %s admitted %lld GPUs of flavor %s over its quota %lld", e->parts[p].name,
                     (long long)use, e->trace->gtypes[f].name, (long long)nom);
            return -1;
        }
    }
    for (int32_t j = 0; j < e->trace->njobs; j++) {
        if (s->state[j] != KQ_RUNNING || e->js[j].part != p) continue;
        int32_t t = ds_engine_job_type(e, j);
        if (t != s->flv[j]) {
            snprintf(msg, n, "kueue: job %lld admitted to flavor %s runs on %s", (long long)e->trace->jobs[j].id,
                     e->trace->gtypes[s->flv[j]].name, t < 0 ? "no GPUs" : e->trace->gtypes[t].name);
            return -1;
        }
    }
    return 0;
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
        if (s->nf > 1 && check_flavors(e, s, p, msg, n)) return -1;
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
    .props = DS_POLICY_PREEMPTIVE | DS_POLICY_CLASSES | DS_POLICY_EXACT_HOLD | DS_POLICY_PRODUCTION | DS_POLICY_TYPED, \
    .fini = kueue_fini, .enqueue = kueue_enqueue, .withdraw = kueue_withdraw, .cancel_start = kueue_cancel_start, .adopt = kueue_adopt, \
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
