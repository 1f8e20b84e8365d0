/* deepshare.c: the DeepShare policy (docs/policy.md), on top of its folder: its ops, its state's life cycle,
 * and the scheduling pass (QAD cycle, monitoring, demotion, yield and promotion, classification, QG then QB
 * placement, work conservation). The stages (ds_classify.c ... ds_workcons.c) and the bookkeeping under
 * them (ds_track.c, ds_estimate.c, ds_order.c, ds_reserve.c, ds_observed.c, ds_qad.c, ds_lists.c) never
 * call back into this file. */
#include "ds_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A running job the driver adopted without it ever being pending here (deepshared rebuilding its state
 * from Slurm after a restart): tracked as running, paired with its co-resident when that one is known
 * too; a shared job whose partner is not known yet is no candidate partner until then. */
static void dsp_adopt(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    dsp_t *s = state;
    if (!s->seen[j]) dsp_first_seen(e, s, j, now);
    dsp_list_push(&s->run, s->rpos, j);
    dsp_list_push(&s->trun[e->trace->jobs[j].tenant], s->tpos, j);
    if (e->ntypes > 1) s->wtype[j] = (int8_t)ds_engine_job_type(e, j), s->wseen[j] = e->js[j].run_time;
    int32_t p = e->js[j].partner;
    if (p >= 0 && s->rpos[p] >= 0 && s->pair[p] < 0) {
        if (s->spos[p] >= 0) dsp_list_remove(dsp_solo_of(s, e, p), s->spos, p);
        s->pair[j] = p, s->pair[p] = j;
        s->low[j] = s->low[p] = 0;
        s->mon[j] = s->mon[p] = (dsp_mon_t){0};
        s->admit_tau[j] = s->admit_tau[p] = (float)s->cfg.rho_min;
    } else if (p < 0 && e->trace->jobs[j].gpus <= s->maxg) {
        dsp_list_push(dsp_solo_of(s, e, j), s->spos, j);
    }
}

static void dsp_enqueue(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    dsp_t *s = state;
    if (!s->seen[j]) {
        dsp_first_seen(e, s, j, now);
    } else if (s->rpos[j] >= 0) {
        /* a preemption: G jobs are never victims (checked as an invariant) */
        if (e->js[j].klass != DS_CLASS_BE) s->st.g_preempted++;
        dsp_stopped(e, s, j);
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
    dsp_stopped(e, s, j);
    if (e->js[j].klass == DS_CLASS_BE) s->st.lent_jobs--, s->st.lent_gpus -= g;
    dsp_set_key(e, s, j, now);
    dsp_pend_insert(s, part, j);
    s->ppend_gpus[part] += g;
}

/* A withdrawn job leaves the pending list and the count of active jobs; its reservation, if any, lapses at
 * the next pass (dsp_resv_refresh drops those of jobs that cannot start). S, the smoothed QAD, is only ever
 * moved by a cycle: nobody's changes here. A later arrival is a first sight again. */
static void dsp_withdraw(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    (void)now;
    dsp_t *s = state;
    int32_t part = e->js[j].part;
    dsp_pend_remove(s, part, j);
    s->ppend_gpus[part] -= e->trace->jobs[j].gpus;
    s->seen[j] = 0;
    s->nactive--;
}

static void dsp_on_finish(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    dsp_t *s = state;
    dsp_typical_observe(e, s, j, now);
    dsp_stopped(e, s, j);
    s->nactive--;
    const ds_runtime_predictor_t *rp = e->predictors ? e->predictors->runtime : NULL;
    if (rp && rp->observe_finish) rp->observe_finish(rp->ctx, e->trace, j, now);
    dsp_batch_revise(e, s, j, now);
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
        if (s->cfg.quota_yield) dsp_quota_yield(e, s, now);
        if (s->cfg.overrun_yield) dsp_yield(e, s, now);
        dsp_promote(e, s);
    }
    dsp_list_t *pl = &s->pend[part];
    if (s->cfg.reserve_after > 0) dsp_resv_refresh(e, s, part, now);
    if (pl->n) {
        int32_t ng, nb;
        dsp_classify(e, s, pl->v, pl->n, now, &ng, &nb);
        dsp_merge_qg(e, s, s->qg, ng);
        dsp_merge_qb(e, s, s->qb, nb);
        dsp_preempt_memo_reset(s);
        for (int32_t k = 0; k < ng; k++)
            if (ds_engine_startable(e, s->qg[k]) && !dsp_place(e, s, s->qg[k], now))
                dsp_resv_try(e, s, s->qg[k], now);
        if ((s->fair_on = dsp_fair_update(e, s, part)) && (s->cfg.fair_share & DSP_FS_ORDER)) {
            /* fair share: QB's jobs that keep their tenant within its share first, in QB's order, then the rest */
            for (int32_t k = 0; k < nb; k++) {
                int32_t j = s->qb[k];
                if (!ds_engine_startable(e, j) || !dsp_fair_within(e, s, j)) continue;
                s->fair_tried[j] = 1;
                if (!dsp_place(e, s, j, now)) dsp_resv_try(e, s, j, now);
            }
            for (int32_t k = 0; k < nb; k++) {
                int32_t j = s->qb[k];
                if (s->fair_tried[j]) { s->fair_tried[j] = 0; continue; }
                if (ds_engine_startable(e, j) && !dsp_place(e, s, j, now)) dsp_resv_try(e, s, j, now);
            }
        } else {
            for (int32_t k = 0; k < nb; k++)
                if (ds_engine_startable(e, s->qb[k]) && !dsp_place(e, s, s->qb[k], now))
                    dsp_resv_try(e, s, s->qb[k], now);
        }
        s->fair_on = 0;
        if (s->cfg.work_conserving && s->cfg.borrowing && e->parts[part].gpus_free > 0)
            dsp_work_conserve(e, s, part, now);
    }
    for (int32_t i = 0; i < s->nt; i++) s->q_last[i] = dsp_qad_now(e, s, i);
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
    s->fair = ds_xcalloc((size_t)s->nt + 1, sizeof *s->fair);
    s->fair_want = ds_xcalloc((size_t)s->nt + 1, sizeof *s->fair_want);
    s->fair_tried = ds_xcalloc(nj, 1);
    s->fair_for = -1;
    s->served_for = -1;
    for (int32_t i = 0; i < s->nt; i++) s->S[i] = s->q_last[i] = 1.0;
    s->min_gmem = INT64_MAX;
    s->pend = ds_xcalloc((size_t)e->nparts, sizeof *s->pend);
    s->ppend_gpus = ds_xcalloc((size_t)e->nparts, sizeof *s->ppend_gpus);
    s->mon_base = ds_xcalloc((size_t)e->nparts, sizeof *s->mon_base);
    s->pre_fail_cpus = ds_xmalloc(((size_t)s->maxg + 1) * sizeof *s->pre_fail_cpus);
    s->pre_fail_mem = ds_xmalloc(((size_t)s->maxg + 1) * sizeof *s->pre_fail_mem);
    s->trun = ds_xcalloc((size_t)s->nt + 1, sizeof *s->trun);
    s->solo = ds_xcalloc(2 * (size_t)e->nparts * (size_t)(s->maxg + 1), sizeof *s->solo);
    int32_t **idx[] = {&s->rpos, &s->tpos, &s->spos, &s->pair, &s->banned};
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
    s->qyield = ds_xcalloc(nj, 1);
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
    s->align_mask = ds_xcalloc(nn, 1);
    s->align_set = ds_xmalloc(nn * sizeof *s->align_set);
    s->align_gpus = ds_xmalloc((size_t)DS_MAX(1, e->cfg.gpus_per_node) * sizeof *s->align_gpus);
    s->resv_fail = ds_xmalloc(nj * sizeof *s->resv_fail);
    for (size_t j = 0; j < nj; j++) s->resv_fail[j] = -1;
    s->run_at = ds_xmalloc(((size_t)s->nt + 1) * sizeof *s->run_at);
    s->heap = ds_xmalloc(((size_t)s->nt + 1) * sizeof *s->heap);
    s->cursor = ds_xmalloc(((size_t)s->nt + 1) * sizeof *s->cursor);
    /* several GPU types (docs/heterogeneous.md): the accounting and the type choice, the types' weights */
    s->gmem_max = e->cfg.gmem_per_gpu;
    s->work = ds_xcalloc(nj, sizeof *s->work);
    s->wseen = ds_xcalloc(nj, sizeof *s->wseen);
    s->wtype = ds_xmalloc(nj);
    memset(s->wtype, -1, nj);
    s->tw_max = 1.0;
    for (int32_t t = 0; t < DS_MAX_GPU_TYPES; t++) s->tw[t] = 1.0;
    if (e->ntypes > 1) {
        s->typed = s->cfg.type_quota != DSP_TQ_BLIND;
        s->type_aware = s->cfg.type_choice != DSP_TC_BLIND;
        s->tw_max = 0;
        for (int32_t t = 0; t < e->ntypes; t++) {
            double w = e->trace->gtypes[t].weight;
            s->tw[t] = w > 0 ? w : 1.0;
            s->tw_max = DS_MAX(s->tw_max, s->tw[t]);
        }
        for (int32_t g = 0; g < e->ngpus; g++) s->gmem_max = DS_MAX(s->gmem_max, ds_engine_gpu_gmem(e, g));
    }
    *state = s;
    return DS_OK;
}

static void dsp_fini(void *state)
{
    dsp_t *s = state;
    for (int32_t p = 0; p < s->nparts; p++) free(s->pend[p].v);
    for (size_t k = 0; k < 2 * (size_t)s->nparts * (size_t)(s->maxg + 1); k++) free(s->solo[k].v);
    free(s->run.v);
    for (int32_t i = 0; i < s->nt; i++) free(s->trun[i].v);
    void *ptrs[] = {s->trun, s->tpos, s->drain, s->pred, s->seen, s->S, s->q_last, s->pend, s->ppend_gpus, s->solo, s->rpos, s->spos, s->pair,
                    s->banned, s->low, s->mon, s->admit_tau, s->order, s->qg, s->qb, s->krem, s->mon_base, s->pre_fail_cpus, s->pre_fail_mem, s->run_at, s->heap, s->cursor,
                    s->cls_pass, s->wc, s->yielded, s->qyield, s->ygpus, s->waits, s->wcv, s->wc_end, s->node_resv, s->resv_node, s->resv_time,
                    s->blocked, s->align_mask, s->align_set, s->align_gpus, s->resv_fail, s->work, s->wseen, s->wtype, s->fair, s->fair_want, s->fair_tried};
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

/* A tenant's G GPUs within its quota of each type, or within its effective quota (docs/heterogeneous.md). */
static int typed_over(const ds_engine_t *e, const dsp_t *s, int32_t i, char *msg, size_t n)
{
    const char *name = e->trace->tenants[i].name;
    if (s->cfg.type_quota == DSP_TQ_EFFECTIVE) {
        double h = dsp_eff_held(e, s, i), q = dsp_eff_quota(e, s, i);
        if (h <= q + 1e-9) return 0;
        snprintf(msg, n, "tenant %s holds %.3f effective G GPUs over its effective quota %.3f", name, h, q);
        return 1;
    }
    for (int32_t t = 0; t < e->ntypes; t++) {
        int64_t h = e->tenant_g_gpus_t[(size_t)i * (size_t)e->ntypes + (size_t)t], q = ds_engine_quota_t(e, i, t);
        if (h <= q) continue;
        snprintf(msg, n, "tenant %s holds %lld G GPUs of %s over its quota of them %lld", name, (long long)h,
                 e->trace->gtypes[t].name, (long long)q);
        return 1;
    }
    return 0;
}

/* Invariants (docs/policy.md §7) only the policy can see. */
static int dsp_check(const ds_engine_t *e, const void *state, char *msg, size_t n)
{
    const dsp_t *s = state;
    if (s->st.g_preempted) { snprintf(msg, n, "a G job was preempted"); return -1; }
    if (s->st.served_under) { snprintf(msg, n, "a served reclaim left a victim's tenant under its quota"); return -1; }
    for (int32_t i = 0; i < s->nt; i++) {
        int64_t q = e->tenant_quota[i];
        if (s->typed && typed_over(e, s, i, msg, n)) return -1;
        /* in effective GPUs a tenant may hold more slow GPUs than its quota counts */
        if (e->tenant_g_gpus[i] > q && !(s->typed && s->cfg.type_quota == DSP_TQ_EFFECTIVE)) {
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
        double qad = dsp_qad_now(e, s, i);
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
        {"batch_revised", x->batch_revised}, {"batch_rekeyed", x->batch_rekeyed},
        {"coloc_attempts", x->coloc_attempts}, {"coloc_admitted", x->coloc_admitted},
        {"coloc_no_candidate", x->coloc_no_candidate}, {"coloc_rejected_memory", x->rej_memory},
        {"coloc_rejected_cpu", x->rej_cpu}, {"coloc_rejected_retention", x->rej_retention},
        {"coloc_rejected_revoked_pair", x->rej_revoked}, {"coloc_revoked", x->preempt_revoke},
        {"cpu_reclaims", x->cpu_reclaims}, {"cpu_shrunk_jobs", x->cpu_shrunk_jobs},
        {"work_conserving_starts", x->wc_starts}, {"work_conserving_gpus", x->wc_gpus},
        {"reservations", x->reservations}, {"backfills", x->backfills},
        {"retention_pairs_learned", (int64_t)s->obs_n}, {"coloc_probes", x->probes},
        {"monitor_samples_missing", x->mon_missing},
    };
    int k = 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0] && k < max; i++, k++) {
        snprintf(out[k].name, sizeof out[k].name, "%s", v[i].n);
        out[k].value = (double)v[i].v;
    }
    /* only where the switch is on: with it off, the output is what it was before it existed */
    if ((s->cfg.fair_share & DSP_FS_RECLAIM) && k < max) {
        snprintf(out[k].name, sizeof out[k].name, "fair_share_reclaims");
        out[k++].value = (double)x->fair_reclaims;
    }
    if (s->cfg.quota_yield && k < max) {
        snprintf(out[k].name, sizeof out[k].name, "quota_yields");
        out[k++].value = (double)x->quota_yields;
    }
    if (s->cfg.attained_yield > 0 && k < max) {
        snprintf(out[k].name, sizeof out[k].name, "attained_yields");
        out[k++].value = (double)x->attained_yields;
    }
    if (s->cfg.served_reclaim && k < max) {
        snprintf(out[k].name, sizeof out[k].name, "served_reclaims");
        out[k++].value = (double)x->served_reclaims;
    }
    if (s->cfg.young_victim > 0 && k < max) {
        snprintf(out[k].name, sizeof out[k].name, "young_victims");
        out[k++].value = (double)x->young_victims;
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
    .props = DS_POLICY_PREEMPTIVE | DS_POLICY_COLOCATES | DS_POLICY_CLASSES | DS_POLICY_USES_PREDICTORS | DS_POLICY_TYPED,
    .init = dsp_init,
    .fini = dsp_fini,
    .enqueue = dsp_enqueue,
    .withdraw = dsp_withdraw,
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
