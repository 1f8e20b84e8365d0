/* deepshare.c: the DeepShare policy (docs/policy.md): its ops, the per-job bookkeeping its parts share, and
 * the scheduling pass: QAD cycle, monitoring and promotion, classification, QG then QB placement. */
#include "ds_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void dsp_list_push(dsp_list_t *l, int32_t *pos, int32_t j)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->v = ds_xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    pos[j] = l->n;
    l->v[l->n++] = j;
}

void dsp_list_remove(dsp_list_t *l, int32_t *pos, int32_t j)
{
    int32_t i = pos[j];
    if (i < 0) return;
    DS_ASSERT(i < l->n && l->v[i] == j);
    int32_t last = l->v[--l->n];
    l->v[i] = last;
    pos[last] = i;
    pos[j] = -1;
}

static dsp_list_t *solo_of(dsp_t *s, const ds_engine_t *e, int32_t j)
{
    return dsp_solo(s, e->js[j].part, e->js[j].klass == DS_CLASS_BE, e->trace->jobs[j].gpus);
}

double dsp_remaining(const ds_engine_t *e, const dsp_t *s, int32_t j, int64_t now)
{
    /* A job that yielded (outlived its prediction, §2) is expected to run about as long again as it
     * has: its prediction no longer says anything, and ranking it as almost done would put it back at
     * the head of its tenant's order. */
    if (s->yielded[j]) {
        double el = (double)ds_engine_elapsed(e, j, now), r = s->pred[j] - el;
        return r > el ? r : el > 1.0 ? el : 1.0;
    }
    /* The predictor's estimate given the elapsed time when it has one (learned models: conditional on
     * having run that long), else max(predicted total - elapsed wall time, 1), docs/predictors.md. */
    const ds_runtime_predictor_t *rp = e->predictors ? e->predictors->runtime : NULL;
    if (rp && rp->remaining) return rp->remaining(rp->ctx, e->trace, j, s->pred[j], ds_engine_elapsed(e, j, now));
    double r = s->pred[j] - (double)ds_engine_elapsed(e, j, now);
    return r > 1.0 ? r : 1.0;
}

double dsp_retention(const ds_engine_t *e, const dsp_t *s, int32_t a, int32_t b)
{
    double seen;
    if (s->cfg.learn_retention && dsp_observed_get(s, e->trace, a, b, &seen)) return seen;
    const ds_interference_predictor_t *p = e->predictors ? e->predictors->interference : NULL;
    return p ? p->predict(p->ctx, e->trace, a, b) : 1.0;
}

double dsp_retention_admit(const ds_engine_t *e, const dsp_t *s, int32_t a, int32_t b, double *bound, int *probe)
{
    double r = dsp_retention(e, s, a, b);
    const ds_interference_predictor_t *p = e->predictors ? e->predictors->interference : NULL;
    /* Optimism under uncertainty: a model's guess about a pair nobody has measured is only a prior, and
     * a pair never admitted is never measured, so a pessimistic guess would stand for good. How far to
     * trust it is the model's own doubt (the forest's trees agree within ~0.03 on pairs like those it
     * learned from, and spread ~0.1 on others). A probe is cheap to take back: the monitor samples it
     * every cycle, revokes it if it falls short, and admission then reads the measurement. */
    *probe = 0;
    *bound = r;
    if (s->cfg.learn_retention && s->cfg.probe_z > 0 && p && p->uncertainty && dsp_observed_probe_ok(s, e->trace, a, b)) {
        double u = p->uncertainty(p->ctx, e->trace, a, b);
        if (u > 0) *bound = r + s->cfg.probe_z * u, *probe = 1;
    }
    return r;
}

void dsp_start(ds_engine_t *e, dsp_t *s, int32_t j, const int32_t *gpus, int32_t partner, int64_t now)
{
    int32_t part = e->js[j].part, g = e->trace->jobs[j].gpus;
    if (partner >= 0) dsp_list_remove(solo_of(s, e, partner), s->spos, partner);
    if (s->nresv && dsp_resv_backfilled(e, s, j, gpus, g)) s->st.backfills++;
    ds_engine_start(e, j, gpus, now);
    dsp_pend_remove(s, part, j);
    s->ppend_gpus[part] -= g;
    dsp_list_push(&s->run, s->rpos, j);
    if (partner >= 0) {
        s->pair[j] = partner, s->pair[partner] = j;
        s->low[j] = s->low[partner] = 0;
        s->mon[j] = s->mon[partner] = (dsp_mon_t){0};
    } else if (g <= s->maxg) {
        dsp_list_push(solo_of(s, e, j), s->spos, j);
    }
    if (e->js[j].klass == DS_CLASS_BE) s->st.lent_jobs++, s->st.lent_gpus += g;
}

/* j stopped running (finished or preempted): its partner, if any, is alone again. */
static void stopped(ds_engine_t *e, dsp_t *s, int32_t j)
{
    dsp_list_remove(&s->run, s->rpos, j);
    if (s->yielded[j] == DSP_YIELDED) {
        s->yielded[j] = DSP_YIELD_ENDED;
        s->ygpus[e->trace->jobs[j].tenant] -= e->trace->jobs[j].gpus;
    }
    if (s->spos[j] >= 0) dsp_list_remove(solo_of(s, e, j), s->spos, j);
    int32_t p = s->pair[j];
    if (p >= 0) {
        /* a probe that ended before its first sample leaves the pair to the next one */
        if (s->mon[j].n == 0) {
            dsp_observed_set_probe(s, e->trace, j, p, 0);
            dsp_observed_set_probe(s, e->trace, p, j, 0);
        }
        s->pair[j] = s->pair[p] = -1;
        if (e->js[p].status == DS_JS_RUNNING && e->trace->jobs[p].gpus <= s->maxg)
            dsp_list_push(solo_of(s, e, p), s->spos, p);
    }
}

/* First sight of a job: count it and predict its run time from what is known now. */
static void first_seen(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now)
{
    s->seen[j] = 1;
    s->nactive++;
    s->min_gmem = DS_MIN(s->min_gmem, e->trace->jobs[j].gmem_mib);
    const ds_runtime_predictor_t *rp = e->predictors ? e->predictors->runtime : NULL;
    s->pred[j] = rp ? rp->predict(rp->ctx, e->trace, j, now) : (double)e->trace->jobs[j].duration;
    if (!(s->pred[j] >= 1.0)) s->pred[j] = 1.0; /* NaN or nonpositive predictions */
}

/* A running job the driver adopted without it ever being pending here (deepshared rebuilding its state
 * from Slurm after a restart): tracked as running, paired with its co-resident when that one is known
 * too; a shared job whose partner is not known yet is no candidate partner until then. */
static void dsp_adopt(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    dsp_t *s = state;
    if (!s->seen[j]) first_seen(e, s, j, now);
    dsp_list_push(&s->run, s->rpos, j);
    int32_t p = e->js[j].partner;
    if (p >= 0 && s->rpos[p] >= 0 && s->pair[p] < 0) {
        if (s->spos[p] >= 0) dsp_list_remove(solo_of(s, e, p), s->spos, p);
        s->pair[j] = p, s->pair[p] = j;
        s->low[j] = s->low[p] = 0;
        s->mon[j] = s->mon[p] = (dsp_mon_t){0};
        s->admit_tau[j] = s->admit_tau[p] = (float)s->cfg.rho_min;
    } else if (p < 0 && e->trace->jobs[j].gpus <= s->maxg) {
        dsp_list_push(solo_of(s, e, j), s->spos, j);
    }
}

static void dsp_enqueue(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    dsp_t *s = state;
    if (!s->seen[j]) {
        first_seen(e, s, j, now);
    } else if (s->rpos[j] >= 0) {
        /* a preemption: G jobs are never victims (checked as an invariant) */
        if (e->js[j].klass != DS_CLASS_BE) s->st.g_preempted++;
        stopped(e, s, j);
        s->wc[j] = 0;
    }
    int32_t part = e->js[j].part;
    dsp_set_key(e, s, j, now);
    dsp_pend_insert(s, part, j);
    s->ppend_gpus[part] += e->trace->jobs[j].gpus;
}

/* A start the driver could not carry out (ds_engine_cancel_start): the job waits again, and no G job
 * counts as preempted, because none was. */
static void dsp_cancel_start(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    dsp_t *s = state;
    int32_t part = e->js[j].part, g = e->trace->jobs[j].gpus;
    stopped(e, s, j);
    if (e->js[j].klass == DS_CLASS_BE) s->st.lent_jobs--, s->st.lent_gpus -= g;
    dsp_set_key(e, s, j, now);
    dsp_pend_insert(s, part, j);
    s->ppend_gpus[part] += g;
}

static void dsp_on_finish(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    dsp_t *s = state;
    stopped(e, s, j);
    s->nactive--;
    const ds_runtime_predictor_t *rp = e->predictors ? e->predictors->runtime : NULL;
    if (rp && rp->observe_finish) rp->observe_finish(rp->ctx, e->trace, j, now);
}

static void dsp_schedule(ds_engine_t *e, void *state, int32_t part, int64_t now, int timer)
{
    dsp_t *s = state;
    s->st.passes++;
    if (timer && now % s->cfg.cycle == 0 && (!s->s_init || s->last_cycle != now)) {
        dsp_qad_cycle(e, s, now);
        s->st.cycles++;
        if (s->cfg.monitor) dsp_monitor(e, s, now);
        dsp_demote(e, s);
        if (s->cfg.overrun_yield) dsp_yield(e, s, now);
        dsp_promote(e, s);
    }
    dsp_list_t *pl = &s->pend[part];
    if (s->cfg.reserve_after > 0) dsp_resv_refresh(e, s, part, now);
    if (pl->n) {
        int32_t ng, nb;
        dsp_classify(e, s, pl->v, pl->n, &ng, &nb);
        dsp_merge_qg(e, s, s->qg, ng);
        dsp_merge_qb(e, s, s->qb, nb);
        dsp_preempt_memo_reset(s);
        for (int32_t k = 0; k < ng; k++)
            if (ds_engine_startable(e, s->qg[k]) && !dsp_place(e, s, s->qg[k], now))
                dsp_resv_try(e, s, s->qg[k], now);
        for (int32_t k = 0; k < nb; k++)
            if (ds_engine_startable(e, s->qb[k]) && !dsp_place(e, s, s->qb[k], now))
                dsp_resv_try(e, s, s->qb[k], now);
        if (s->cfg.work_conserving && s->cfg.borrowing && e->parts[part].gpus_free > 0)
            dsp_work_conserve(e, s, part, now);
    }
    for (int32_t i = 0; i < s->nt; i++) s->q_last[i] = dsp_qad_now(e, i);
}

static int64_t dsp_next_timer(const ds_engine_t *e, const void *state, int64_t now)
{
    (void)e;
    const dsp_t *s = state;
    /* With nothing running a cycle could only move S, which catches up at the next one. */
    if (s->nactive <= 0 || s->run.n == 0) return DS_TIME_NEVER;
    int64_t c = s->cfg.cycle, r = ((now % c) + c) % c;
    return now - r + c;
}

static int dsp_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    dsp_t *s = ds_xcalloc(1, sizeof *s);
    if (config) s->cfg = *(const dsp_config_t *)config;
    else dsp_config_default(&s->cfg);
    int rc = dsp_config_validate(&s->cfg, err);
    if (rc) { free(s); return rc; }
    const ds_trace_t *t = e->trace;
    s->t = t;
    s->nj = t->njobs;
    s->nt = t->ntenants;
    s->nparts = e->nparts;
    for (int32_t j = 0; j < t->njobs; j++) s->maxg = DS_MAX(s->maxg, t->jobs[j].gpus);
    size_t nj = (size_t)(t->njobs ? t->njobs : 1), scratch = nj > (size_t)e->nnodes ? nj : (size_t)e->nnodes;
    s->pred = ds_xcalloc(nj, sizeof *s->pred);
    s->seen = ds_xcalloc(nj, 1);
    s->S = ds_xcalloc((size_t)s->nt, sizeof *s->S);
    s->q_last = ds_xcalloc((size_t)s->nt, sizeof *s->q_last);
    for (int32_t i = 0; i < s->nt; i++) s->S[i] = s->q_last[i] = 1.0;
    s->min_gmem = INT64_MAX;
    s->pend = ds_xcalloc((size_t)e->nparts, sizeof *s->pend);
    s->ppend_gpus = ds_xcalloc((size_t)e->nparts, sizeof *s->ppend_gpus);
    s->mon_base = ds_xcalloc((size_t)e->nparts, sizeof *s->mon_base);
    s->pre_fail_cpus = ds_xmalloc(((size_t)s->maxg + 1) * sizeof *s->pre_fail_cpus);
    s->pre_fail_mem = ds_xmalloc(((size_t)s->maxg + 1) * sizeof *s->pre_fail_mem);
    s->solo = ds_xcalloc(2 * (size_t)e->nparts * (size_t)(s->maxg + 1), sizeof *s->solo);
    int32_t **idx[] = {&s->rpos, &s->spos, &s->pair, &s->banned};
    for (size_t k = 0; k < sizeof idx / sizeof idx[0]; k++) {
        *idx[k] = ds_xmalloc(nj * sizeof(int32_t));
        for (size_t j = 0; j < nj; j++) (*idx[k])[j] = -1;
    }
    s->low = ds_xcalloc(nj, sizeof *s->low);
    s->mon = ds_xcalloc(nj, sizeof *s->mon);
    s->admit_tau = ds_xcalloc(nj, sizeof *s->admit_tau);
    s->order = ds_xmalloc(scratch * sizeof *s->order);
    s->qg = ds_xmalloc(nj * sizeof *s->qg);
    s->qb = ds_xmalloc(nj * sizeof *s->qb);
    s->krem = ds_xcalloc(nj, sizeof *s->krem);
    s->cls_pass = ds_xmalloc(nj * sizeof *s->cls_pass);
    for (size_t j = 0; j < nj; j++) s->cls_pass[j] = -1;
    s->wc = ds_xcalloc(nj, 1);
    s->yielded = ds_xcalloc(nj, 1);
    s->ygpus = ds_xcalloc((size_t)s->nt + 1, sizeof *s->ygpus);
    s->waits = ds_xcalloc((size_t)s->nt + 1, sizeof *s->waits);
    s->wcv = ds_xmalloc(nj * sizeof *s->wcv);
    s->wc_end = ds_xmalloc(((size_t)s->nt + 1) * sizeof *s->wc_end);
    size_t nn = (size_t)(e->nnodes ? e->nnodes : 1);
    s->node_resv = ds_xmalloc(nn * sizeof *s->node_resv);
    for (size_t n = 0; n < nn; n++) s->node_resv[n] = -1;
    s->resv_node = ds_xmalloc(nn * sizeof *s->resv_node);
    s->resv_time = ds_xmalloc(nn * sizeof *s->resv_time);
    s->blocked = ds_xcalloc(nn, 1);
    s->resv_fail = ds_xmalloc(nj * sizeof *s->resv_fail);
    for (size_t j = 0; j < nj; j++) s->resv_fail[j] = -1;
    s->run_at = ds_xmalloc(((size_t)s->nt + 1) * sizeof *s->run_at);
    s->heap = ds_xmalloc(((size_t)s->nt + 1) * sizeof *s->heap);
    s->cursor = ds_xmalloc(((size_t)s->nt + 1) * sizeof *s->cursor);
    *state = s;
    return DS_OK;
}

static void dsp_fini(void *state)
{
    dsp_t *s = state;
    for (int32_t p = 0; p < s->nparts; p++) free(s->pend[p].v);
    for (size_t k = 0; k < 2 * (size_t)s->nparts * (size_t)(s->maxg + 1); k++) free(s->solo[k].v);
    free(s->run.v);
    void *ptrs[] = {s->pred, s->seen, s->S, s->q_last, s->pend, s->ppend_gpus, s->solo, s->rpos, s->spos, s->pair,
                    s->banned, s->low, s->mon, s->admit_tau, s->order, s->qg, s->qb, s->krem, s->mon_base, s->pre_fail_cpus, s->pre_fail_mem, s->run_at, s->heap, s->cursor,
                    s->cls_pass, s->wc, s->yielded, s->ygpus, s->waits, s->wcv, s->wc_end, s->node_resv, s->resv_node, s->resv_time,
                    s->blocked, s->resv_fail};
    dsp_resv_free(s);
    free(s->obs);
    for (size_t k = 0; k < sizeof ptrs / sizeof ptrs[0]; k++) free(ptrs[k]);
    free(s);
}

/* Tenant i's BE GPUs outside the work-conserving stage, and whether they are a single job larger than
 * cap (the classification's exception for a job no cap could ever hold). */
static int64_t be_classified(const ds_engine_t *e, const dsp_t *s, int32_t i, int64_t cap, int *oversize_alone)
{
    int32_t n = 0, big = 0;
    int64_t sum = 0;
    for (int32_t k = 0; k < s->run.n; k++) {
        int32_t j = s->run.v[k];
        if (e->trace->jobs[j].tenant != i || e->js[j].klass != DS_CLASS_BE || s->wc[j] || s->yielded[j]) continue;
        n++;
        sum += e->trace->jobs[j].gpus;
        big = e->trace->jobs[j].gpus > cap;
    }
    *oversize_alone = n == 1 && big;
    return sum;
}

/* Invariants (docs/policy.md §7) only the policy can see. */
static int dsp_check(const ds_engine_t *e, const void *state, char *msg, size_t n)
{
    const dsp_t *s = state;
    if (s->st.g_preempted) { snprintf(msg, n, "a G job was preempted"); return -1; }
    for (int32_t i = 0; i < s->nt; i++) {
        int64_t q = e->tenant_quota[i];
        if (e->tenant_g_gpus[i] > q) {
            snprintf(msg, n, "tenant %s holds %lld G GPUs over its quota %lld", e->trace->tenants[i].name,
                     (long long)e->tenant_g_gpus[i], (long long)q);
            return -1;
        }
        /* BE within m x quota; without borrowing, G plus colocated BE within the quota */
        int64_t cap = s->cfg.borrowing ? (int64_t)floor(s->cfg.m * (double)q + 1e-9) : q - e->tenant_g_gpus[i];
        int alone;
        int64_t be = be_classified(e, s, i, s->cfg.borrowing ? cap : q, &alone);
        if (be > cap && !alone) {
            snprintf(msg, n, "tenant %s holds %lld BE GPUs outside the work-conserving stage, over its cap %lld",
                     e->trace->tenants[i].name, (long long)be, (long long)cap);
            return -1;
        }
        double qad = dsp_qad_now(e, i);
        if (!(qad >= 0.0 && qad <= 1.0) || !(s->S[i] >= 0.0 && s->S[i] <= 1.0 + 1e-12)) {
            snprintf(msg, n, "tenant %s QAD %g / smoothed %g outside [0, 1]", e->trace->tenants[i].name, qad, s->S[i]);
            return -1;
        }
    }
    for (int32_t g = 0; g < e->ngpus; g++) {
        const ds_gpu_t *gp = &e->gpus[g];
        if (gp->nres < 2) continue;
        int be = 0;
        for (int32_t r = 0; r < gp->nres; r++) be |= e->js[gp->res[r]].klass == DS_CLASS_BE;
        if (!be) { snprintf(msg, n, "GPU %d is shared by G jobs only", g); return -1; }
    }
    return 0;
}

static int dsp_stats(const ds_engine_t *e, const void *state, ds_policy_stat_t *out, int max)
{
    (void)e;
    const dsp_t *s = state;
    const dsp_stats_t *x = &s->st;
    struct { const char *n; int64_t v; } v[] = {
        {"passes", x->passes}, {"cycles", x->cycles},
        {"preempt_reclaim", x->preempt_reclaim}, {"preempt_revoke", x->preempt_revoke},
        {"gpus_reclaimed", x->reclaimed_gpus}, {"be_starts", x->lent_jobs}, {"gpus_lent", x->lent_gpus},
        {"promotions", x->promotions}, {"gpus_promoted", x->promoted_gpus}, {"overrun_yields", x->yields}, {"yields_promoted_back", x->yields_back},
        {"coloc_attempts", x->coloc_attempts}, {"coloc_admitted", x->coloc_admitted},
        {"coloc_no_candidate", x->coloc_no_candidate}, {"coloc_rejected_memory", x->rej_memory},
        {"coloc_rejected_cpu", x->rej_cpu}, {"coloc_rejected_retention", x->rej_retention},
        {"coloc_rejected_revoked_pair", x->rej_revoked}, {"coloc_revoked", x->preempt_revoke},
        {"cpu_reclaims", x->cpu_reclaims}, {"cpu_shrunk_jobs", x->cpu_shrunk_jobs},
        {"work_conserving_starts", x->wc_starts}, {"work_conserving_gpus", x->wc_gpus},
        {"reservations", x->reservations}, {"backfills", x->backfills},
        {"retention_pairs_learned", (int64_t)s->obs_n}, {"coloc_probes", x->probes},
    };
    int k = 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0] && k < max; i++, k++) {
        snprintf(out[k].name, sizeof out[k].name, "%s", v[i].n);
        out[k].value = (double)v[i].v;
    }
    return k;
}

static void *dsp_config_new(void)
{
    dsp_config_t *c = ds_xmalloc(sizeof *c);
    dsp_config_default(c);
    return c;
}

const ds_policy_ops_t ds_policy_deepshare = {
    .name = "deepshare",
    .summary = "QAD-driven: elastic G/BE borrowing, QAD-first order, cost-aware BE preemption, "
               "interference-aware colocation",
    .props = DS_POLICY_PREEMPTIVE | DS_POLICY_COLOCATES | DS_POLICY_CLASSES | DS_POLICY_USES_PREDICTORS,
    .init = dsp_init,
    .fini = dsp_fini,
    .enqueue = dsp_enqueue,
    .cancel_start = dsp_cancel_start,
    .on_finish = dsp_on_finish,
    .adopt = dsp_adopt,
    .schedule = dsp_schedule,
    .next_timer = dsp_next_timer,
    .config_new = dsp_config_new,
    .config_free = free,
    .config_set = dsp_config_set,
    .config_help = dsp_config_help,
    .check = dsp_check,
    .stats = dsp_stats,
    .pending_order = dsp_pending_order,
    .explain = dsp_explain,
};
