/* slurm_core.c: the top of the simulated Slurm shared by slurm-quota and slurm-borrow: setup of the
 * associations, the usage updates (priority/multifactor's decay thread), time limits, job_submit.lua's QOS
 * routing at submission, and the pass that runs the main scheduler and backfill at Slurm's cadence, and
 * the reports. The files below it: slurm_lists.c, slurm_usage.c, slurm_fairtree.c, slurm_queue.c,
 * slurm_nodes.c, slurm_fit.c, slurm_run.c (starts, ends, requeues), slurm_preempt.c, slurm_sched.c,
 * slurm_backfill.c; no file calls one that calls it (ctest call_cycles).
 *
 * Priorities as priority_multifactor.c computes them: at submission (age 0) and every PriorityCalcPeriod,
 * when usage is decayed (usage x (1 - 0.693 / half-life)^seconds, then the period's new usage, each run's
 * billed TRES x seconds x the same decay over its own seconds) and Fair Tree ranks the associations:
 * priority = trunc(W_age x age + W_fs x fairshare + W_qos x QOS priority / highest QOS priority), at least
 * 1; age = seconds since the job became eligible / PriorityMaxAge, at most 1. The queue order is
 * sort_job_queue2's: a job that may preempt the other first (preempt/qos), then priority, submit time and
 * job id. A requeue sets the job's begin time to now + cred_expire + 1, its submit time to now and clears
 * its accrue time (job_mgr.c), so its age starts again when it becomes eligible. */
#include "slurm_internal.h"
#include "deepshare/predictor.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- priorities and usage ---- */

/* One PriorityCalcPeriod tick at time t (the decay thread): decay, new usage, Fair Tree, priorities. */
static void calc_tick(slm_state_t *s, int64_t t)
{
    slm_tree_decay(&s->tree, (long double)slm_decay_pow(s, t - s->last_calc));
    for (int32_t a = 0; a < s->tree.nusers; a++)
        if (s->pend_charge[a] != 0) slm_tree_charge(&s->tree, a, s->pend_charge[a]), s->pend_charge[a] = 0;
    for (int32_t p = 0; p < s->nparts; p++) {
        slm_list_t *r = &s->parts[p].run;
        for (int32_t i = 0; i < r->n; i++) {
            int32_t j = r->job[i];
            if (r->stamp[i] != s->rstamp[j]) continue;
            slm_tree_charge(&s->tree, s->assoc[j], slm_run_usage(s, j, t));
            s->charged[j] = t;
        }
    }
    s->last_calc = t;
    s->fs_stale = 1; /* ranked when a priority needs it: at once if jobs wait, else at the next arrival */
    if (s->nqueued) {
        slm_queue_tick(s);
    } else { /* nothing waits: no order to rebuild, only the frozen priorities to forget */
        for (int32_t i = 0; i < s->nfrozen_jobs; i++) s->prio[s->frozen[i]] = -1;
        s->nfrozen_jobs = 0;
    }
    for (int32_t p = 0; p < s->nparts; p++) {
        s->parts[p].bf_work = 1; /* last_job_update */
        if (s->e->parts[p].npending) slm_want_periodic(s, p, t); /* the new order, at the next periodic pass */
    }
    s->next_calc = t + s->cfg.calc_period;
    s->n_fs_ticks++;
}

/* Whether anything ran or waited since the last tick (jobs arriving now are not yet in a group). */
static int any_work(const slm_state_t *s)
{
    for (int32_t p = 0; p < s->nparts; p++)
        if (s->parts[p].run.live) return 1;
    return slm_queue_any(s);
}

/* Catches up with the ticks due by now; while nothing runs or waits they only decay, which folds into one. */
static void catch_up(slm_state_t *s, int64_t now)
{
    if (now < s->next_calc) return;
    int64_t P = s->cfg.calc_period, k = (now - s->last_calc) / P;
    if (k > 1 && !any_work(s)) {
        calc_tick(s, s->last_calc + P); /* the ended runs' usage lands at the first tick */
        slm_tree_decay(&s->tree, (long double)pow(slm_decay_factor(s), (double)((k - 1) * P)));
        s->fs_stale = 1;
        s->last_calc += (k - 1) * P;
        s->next_calc = s->last_calc + P;
        return;
    }
    while (now >= s->next_calc) calc_tick(s, s->next_calc);
}

/* ---- setup ---- */

typedef struct pairmap {
    int64_t *key;
    int32_t *val;
    int32_t cap;
} pairmap_t;

static int32_t pair_get(pairmap_t *m, int64_t key, int32_t *n)
{
    uint64_t h = (uint64_t)key * 0x9E3779B97F4A7C15ull;
    for (int32_t i = (int32_t)(h >> 33) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (m->key[i] == key) return m->val[i];
        if (m->key[i] < 0) {
            m->key[i] = key;
            return m->val[i] = (*n)++;
        }
    }
}

int slm_init(ds_engine_t *e, const void *config, int variant, void **state, ds_error_t *err)
{
    const ds_trace_t *t = e->trace;
    /* Several GPU types (slurm_types.c): the model's node trees and will-run slots are by GPUs per node, so
     * the types must share a node size (Slurm itself has no such bound). */
    for (int32_t ty = 0; e->ntypes > 1 && ty < e->ntypes; ty++)
        if (ds_engine_type_gpus_per_node(e, ty) != e->cfg.gpus_per_node) {
            ds_error_set(err, NULL, 0, NULL, "%s on several GPU types needs nodes of one size (%s nodes have %d GPUs, "
                         "others %d)", e->ops->name, t->gtypes[ty].name, ds_engine_type_gpus_per_node(e, ty),
                         e->cfg.gpus_per_node);
            return DS_EINVAL;
        }
    slm_state_t *s = ds_xcalloc(1, sizeof *s);
    if (config) s->cfg = *(const slm_config_t *)config;
    else slm_config_default(&s->cfg, variant);
    s->e = e;
    int32_t nj = t->njobs;
    size_t n = (size_t)(nj ? nj : 1);
    s->njobs = nj;
    /* associations: accounts are the tenants (shares = quota, at least 1, as accounting.sh sets them),
     * users the trace's users of each tenant, in first-job order */
    s->assoc = ds_xmalloc(n * sizeof *s->assoc);
    int32_t nusers = 0, *user_acct = ds_xmalloc(n * sizeof *user_acct);
    if (s->cfg.user_assocs) {
        pairmap_t m;
        m.cap = 64;
        while (m.cap < 2 * nj) m.cap *= 2;
        m.key = ds_xmalloc((size_t)m.cap * sizeof *m.key);
        m.val = ds_xmalloc((size_t)m.cap * sizeof *m.val);
        for (int32_t i = 0; i < m.cap; i++) m.key[i] = -1;
        for (int32_t j = 0; j < nj; j++) {
            int64_t key = (int64_t)t->jobs[j].tenant * ((int64_t)t->users.n + 1) + t->jobs[j].user + 1;
            int32_t before = nusers;
            s->assoc[j] = pair_get(&m, key, &nusers);
            if (nusers > before) user_acct[s->assoc[j]] = t->jobs[j].tenant;
        }
        free(m.key);
        free(m.val);
    } else {
        for (int32_t a = 0; a < t->ntenants; a++) user_acct[a] = a;
        nusers = t->ntenants;
        for (int32_t j = 0; j < nj; j++) s->assoc[j] = t->jobs[j].tenant;
    }
    double *shares = ds_xmalloc((size_t)(t->ntenants ? t->ntenants : 1) * sizeof *shares);
    for (int32_t a = 0; a < t->ntenants; a++) shares[a] = e->tenant_quota[a] > 0 ? (double)e->tenant_quota[a] : 1.0;
    slm_tree_init(&s->tree, t->ntenants, shares, nusers, user_acct);
    free(shares);
    free(user_acct);
    s->pend_charge = ds_xcalloc((size_t)(nusers ? nusers : 1), sizeof *s->pend_charge);
    s->ngroups = 2 * nusers * (e->cfg.gpus_per_node + 1); /* association x QOS x size class (slurm_queue.c) */
    s->groups = ds_xcalloc((size_t)(s->ngroups ? s->ngroups : 1), sizeof *s->groups);
    for (int32_t g = 0; g < s->ngroups; g++) s->groups[g].hpos = -1;
    s->gconst = ds_xcalloc((size_t)(nusers ? 2 * nusers : 1), sizeof *s->gconst); /* per association x QOS */
    s->qos = ds_xcalloc(n, 1);
    s->reason = ds_xcalloc(n, 1);
    s->seen = ds_xcalloc(n, 1);
    s->inq = ds_xcalloc(n, 1);
    s->blocker = ds_xmalloc(n * sizeof *s->blocker);
    s->blocker_at = ds_xcalloc(n, sizeof *s->blocker_at);
    s->limit = ds_xcalloc(n, sizeof *s->limit);
    s->eligible = ds_xcalloc(n, sizeof *s->eligible);
    s->accrue = ds_xcalloc(n, sizeof *s->accrue);
    s->order_submit = ds_xcalloc(n, sizeof *s->order_submit);
    s->prio = ds_xmalloc(n * sizeof *s->prio);
    s->frozen = ds_xmalloc(n * sizeof *s->frozen);
    s->pcache = ds_xmalloc(n * sizeof *s->pcache);
    s->pgen = ds_xcalloc(n, sizeof *s->pgen);
    s->prio_gen = 1;
    s->dirtyg = ds_xmalloc((size_t)(s->ngroups ? s->ngroups : 1) * sizeof *s->dirtyg);
    s->end_est = ds_xcalloc(n, sizeof *s->end_est);
    s->bf_start = ds_xmalloc(n * sizeof *s->bf_start);
    s->charged = ds_xcalloc(n, sizeof *s->charged);
    s->stop_at = ds_xmalloc(n * sizeof *s->stop_at);
    s->pstamp = ds_xcalloc(n, sizeof *s->pstamp);
    s->rstamp = ds_xcalloc(n, sizeof *s->rstamp);
    s->est = ds_xcalloc(n, sizeof *s->est);
    for (int32_t j = 0; j < nj; j++) s->blocker[j] = -1, s->stop_at[j] = -1, s->bf_start[j] = -1, s->prio[j] = -1;
    size_t nt = (size_t)(t->ntenants ? t->ntenants : 1);
    s->ten_run = ds_xcalloc(nt, sizeof *s->ten_run);
    s->ten_normal = ds_xcalloc(nt, sizeof *s->ten_normal);
    s->ten_quota = ds_xcalloc(nt, sizeof *s->ten_quota);
    s->typed = e->ntypes > 1;
    if (s->typed) {
        s->ten_run_t = ds_xcalloc(nt * (size_t)e->ntypes, sizeof *s->ten_run_t);
        s->ten_normal_t = ds_xcalloc(nt * (size_t)e->ntypes, sizeof *s->ten_normal_t);
        s->jtype = ds_xmalloc(n);
        memset(s->jtype, -1, n);
    }
    s->nparts = e->nparts;
    s->parts = ds_xcalloc((size_t)e->nparts, sizeof *s->parts);
    for (int32_t p = 0; p < e->nparts; p++) {
        s->parts[p].last_bf = s->parts[p].last_full = INT64_MIN / 4;
        s->parts[p].hist = ds_xcalloc((size_t)e->cfg.gpus_per_node + 1, sizeof *s->parts[p].hist);
    }
    s->cand = ds_xmalloc(n * sizeof *s->cand);
    s->removed = ds_xmalloc(n * sizeof *s->removed);
    s->usable = ds_xmalloc(n * sizeof *s->usable);
    int32_t maxg = 1;
    for (int32_t j = 0; j < nj; j++) maxg = DS_MAX(maxg, t->jobs[j].gpus);
    s->gbuf = ds_xmalloc((size_t)maxg * sizeof *s->gbuf);
    size_t nn = (size_t)(e->nnodes ? e->nnodes : 1);
    s->nfree = ds_xcalloc(nn, sizeof *s->nfree);
    s->nstamp = ds_xcalloc(nn, sizeof *s->nstamp);
    s->touched = ds_xmalloc(nn * sizeof *s->touched);
    s->nflag = ds_xmalloc(nn * sizeof *s->nflag);
    size_t gpn = (size_t)e->cfg.gpus_per_node;
    s->node_job = ds_xmalloc(nn * gpn * sizeof *s->node_job);
    s->node_ngpu = ds_xmalloc(nn * gpn * sizeof *s->node_ngpu);
    s->node_nj = ds_xcalloc(nn, sizeof *s->node_nj);
    s->node_dirty = ds_xcalloc(nn, 1);
    s->dirty = ds_xmalloc(nn * sizeof *s->dirty);
    s->skip = ds_xmalloc((nn + 1) * sizeof *s->skip);
    s->skip2 = ds_xmalloc((nn + 1) * sizeof *s->skip2);
    s->jnode_off = ds_xmalloc((n + 1) * sizeof *s->jnode_off);
    s->jnnodes = ds_xcalloc(n, sizeof *s->jnnodes);
    int64_t off = 0;
    for (int32_t j = 0; j < nj; j++) s->jnode_off[j] = off, off += t->jobs[j].gpus / (int64_t)gpn + 2;
    s->jnodes = ds_xmalloc((size_t)(off ? off : 1) * sizeof *s->jnodes);
    s->blocked = ds_xcalloc(nn, 1);
    s->resv_owner = ds_xmalloc(nn * sizeof *s->resv_owner);
    s->resv_from = ds_xmalloc(nn * sizeof *s->resv_from);
    for (size_t i = 0; i < nn; i++) s->resv_owner[i] = -1;
    s->rv = ds_xcalloc(nn, sizeof *s->rv);
    s->nrv = (int32_t)nn;
    s->rnodes = ds_xmalloc(nn * sizeof *s->rnodes);
    s->ukeys = ds_xmalloc(((size_t)maxg / gpn + 4) * sizeof *s->ukeys);
    s->ubs = ds_xmalloc(((size_t)maxg / gpn + 4) * sizeof *s->ubs);
    s->rbf = ds_xmalloc(nn * sizeof *s->rbf);
    s->rbr = ds_xmalloc(nn * sizeof *s->rbr);
    s->ctimes = ds_xmalloc((2 * nn + (size_t)maxg / gpn + 8) * sizeof *s->ctimes);
    s->fstarts = ds_xmalloc((nn + (size_t)maxg / gpn + 8) * sizeof *s->fstarts);
    s->pow_period = pow(slm_decay_factor(s), (double)s->cfg.calc_period);
    slm_decay_table(s);
    s->run_gen = 1;
    s->origin = nj ? t->jobs[0].submit : 0;
    s->last_calc = s->origin;
    s->next_calc = s->origin + s->cfg.calc_period;
    s->fs_stale = 1;
    slm_nodes_init(s);
    /* A job larger than its account's GrpTRES cap would pend forever (AssocGrpGRES: QOS normal has no
     * DenyOnLimit, so acct_policy_validate accepts it); a replay cannot leave it unfinished. */
    for (int32_t j = 0; s->cfg.grp_tres && j < nj; j++)
        if (t->jobs[j].gpus > e->tenant_quota[t->jobs[j].tenant]) {
            ds_error_set(err, t->source, t->jobs[j].line, "gpus",
                         "job %lld of account %s asks %d GPUs, more than the account's GrpTRES=gres/gpu=%lld: Slurm "
                         "would leave it pending forever (reason AssocGrpGRES); raise the quota or set "
                         "--slurm-grp-tres 0",
                         (long long)t->jobs[j].id, t->tenants[t->jobs[j].tenant].name, t->jobs[j].gpus,
                         (long long)e->tenant_quota[t->jobs[j].tenant]);
            *state = s;
            return DS_EINVAL;
        }
    /* the same for a typed limit: a job naming a type beyond its account's GrpTRES=gres/gpu:TYPE */
    for (int32_t j = 0; s->typed && s->cfg.grp_tres && s->cfg.grp_tres_types && j < nj; j++) {
        int32_t ty = slm_named_type(s, j);
        if (ty >= 0 && t->jobs[j].gpus > ds_engine_quota_t(e, t->jobs[j].tenant, ty)) {
            ds_error_set(err, t->source, t->jobs[j].line, "gpus",
                         "job %lld of account %s asks %d %s GPUs, more than the account's GrpTRES=gres/gpu:%s=%lld: "
                         "Slurm would leave it pending forever (reason AssocGrpGRES); raise the quota or set "
                         "--slurm-grp-tres-types 0",
                         (long long)t->jobs[j].id, t->tenants[t->jobs[j].tenant].name, t->jobs[j].gpus,
                         t->gtypes[ty].name, t->gtypes[ty].name,
                         (long long)ds_engine_quota_t(e, t->jobs[j].tenant, ty));
            *state = s;
            return DS_EINVAL;
        }
    }
    *state = s;
    return DS_OK;
}

void slm_fini(void *state)
{
    slm_state_t *s = state;
    if (!s) return;
    slm_tree_free(&s->tree);
    for (int32_t p = 0; p < s->nparts; p++) {
        slm_list_free(&s->parts[p].run);
        slm_list_free(&s->parts[p].run_normal);
        free(s->parts[p].hist);
        free(s->parts[p].wants);
    }
    slm_list_free(&s->incoming);
    slm_queue_free(s);
    free(s->parts);
    free(s->pend_charge);
    free(s->assoc);
    free(s->qos);
    free(s->reason);
    free(s->seen);
    free(s->inq);
    free(s->blocker);
    free(s->blocker_at);
    free(s->limit);
    free(s->eligible);
    free(s->accrue);
    free(s->order_submit);
    free(s->prio);
    free(s->pcache);
    free(s->pgen);
    free(s->end_est);
    free(s->bf_start);
    free(s->charged);
    free(s->stop_at);
    free(s->pstamp);
    free(s->rstamp);
    free(s->est);
    free(s->ten_run);
    free(s->ten_normal);
    free(s->ten_quota);
    free(s->ten_run_t);
    free(s->ten_normal_t);
    free(s->jtype);
    free(s->cand);
    free(s->removed);
    free(s->usable);
    free(s->gbuf);
    free(s->touched);
    free(s->nflag);
    free(s->node_job);
    free(s->node_ngpu);
    free(s->node_nj);
    slm_nodes_free(s);
    free(s->node_dirty);
    free(s->dirty);
    free(s->skip);
    free(s->skip2);
    free(s->jnode_off);
    free(s->jnnodes);
    free(s->jnodes);
    free(s->nfree);
    free(s->nstamp);
    free(s->blocked);
    free(s->resv_owner);
    free(s->resv_from);
    for (int32_t i = 0; i < s->nrv; i++) free(s->rv[i].begin), free(s->rv[i].end), free(s->rv[i].pmax);
    free(s->rv);
    free(s->rnodes);
    free(s->ukeys);
    free(s->ubs);
    free(s->rbf);
    free(s->rbr);
    free(s->ctimes);
    free(s->fstarts);
    free(s->pow_tab);
    free(s);
}

/* ---- events ---- */

/* The time limit a job is submitted with: its own where the trace carries one (a Slurm trace's --time);
 * else factor x (estimate + restart overhead), rounded up (the live replayer: --time = ceil(2 x (run time
 * + overhead) / 1 min), in wall minutes). The estimate comes from the runtime source every policy of the
 * run shares (docs/peers.md, "Time limits"). */
static int64_t time_limit(ds_engine_t *e, slm_state_t *s, int32_t j, int64_t now)
{
    const ds_runtime_predictor_t *rp = e->predictors ? e->predictors->runtime : NULL;
    double est = rp ? rp->predict(rp->ctx, e->trace, j, now) : (double)e->trace->jobs[j].duration;
    if (!(est >= 1)) est = 1;
    s->est[j] = est;
    if (e->trace->jobs[j].limit > 0) return e->trace->jobs[j].limit;
    double x = s->cfg.limit_factor * (est + ds_engine_restart_overhead(e, j));
    double r = (double)s->cfg.limit_round;
    double lim = ceil(x / r) * r;
    if (lim < r) lim = r;
    if (lim > 365.0 * 86400) lim = 365.0 * 86400; /* partition MaxTime=INFINITE: Slurm's YEAR_MINUTES */
    return (int64_t)lim;
}

/* A pending job leaves (scancel, a hold, another partition): out of its group or the pass's arrivals, out
 * of job_submit.lua's count of its account's GPUs in QOS normal, and its submit-time decisions (QOS, time
 * limit, begin and accrue times) forgotten, so that it may arrive again as new. Its backfill reservation,
 * if it had one, goes at the next backfill pass, which resets them all. Usage, Fair Tree and every other
 * job stay as they were. */
void slm_withdraw(ds_engine_t *e, void *state, int32_t job, int64_t now)
{
    (void)now;
    slm_state_t *s = state;
    const ds_job_t *jb = &e->trace->jobs[job];
    s->pstamp[job]++; /* its group entry and any arrival entry are dead */
    if (s->inq[job]) slm_queue_started(s, job);
    if (s->seen[job] && s->qos[job] == SLM_QOS_NORMAL) s->ten_normal[jb->tenant] -= jb->gpus, slm_types_normal(s, job, 0);
    s->prio[job] = -1; /* a frozen priority goes with it (the frozen list only resets it) */
    s->pgen[job] = 0;  /* and the cached one: its age starts again when it arrives again */
    s->seen[job] = 0;
    s->stop_at[job] = -1;
    s->bf_start[job] = -1;
    s->reason[job] = SLM_W_NONE;
    s->blocker[job] = -1;
    int32_t p = e->js[job].part;
    s->parts[p].bf_work = s->parts[p].main_work = 1; /* last_job_update */
}

void slm_enqueue(ds_engine_t *e, void *state, int32_t job, int64_t now)
{
    slm_state_t *s = state;
    const ds_job_t *jb = &e->trace->jobs[job];
    s->pstamp[job]++;
    if (!s->seen[job]) {
        s->seen[job] = 1;
        s->limit[job] = time_limit(e, s, job, now);
        s->qos[job] = SLM_QOS_NORMAL;
        if (s->cfg.route) {
            /* job_submit.lua: GPUs of the account's jobs in QOS normal, pending or running, this one included */
            int64_t q = e->tenant_quota[jb->tenant];
            s->ten_quota[jb->tenant] = q;
            if (jb->klass == DS_CLASS_BE || s->ten_normal[jb->tenant] + jb->gpus > q || slm_types_over_quota(s, job)) {
                s->qos[job] = SLM_QOS_BORROW;
                s->n_routed_borrow++;
            }
        }
        if (s->qos[job] == SLM_QOS_NORMAL) s->ten_normal[jb->tenant] += jb->gpus, slm_types_normal(s, job, 1);
        s->eligible[job] = s->accrue[job] = s->order_submit[job] = now;
        s->pgen[job] = 0; /* a cached priority was of an earlier arrival (a withdrawn job's) */
    } else if (e->js[job].preemptions > 0 && e->js[job].status == DS_JS_PENDING && s->stop_at[job] == -2) {
        /* requeued by preemption (slm_requeue marked it): begin time later, submit time now, no accrue */
        s->stop_at[job] = -1;
        slm_queue_fresh(s);
        slm_queue_requeued(s, job); /* its priority stays until the next update */
        s->eligible[job] = s->accrue[job] = now + s->cfg.requeue_delay;
        s->order_submit[job] = now;
        /* nothing wakes Slurm at a begin time: the periodic full pass (sched_interval) finds the job */
        slm_want_periodic(s, e->js[job].part, s->eligible[job]);
    }
    s->reason[job] = SLM_W_NONE;
    s->blocker[job] = -1;
    slm_list_push(&s->incoming, s->pstamp, job);
    int32_t p = e->js[job].part;
    s->parts[p].bf_work = s->parts[p].main_work = 1;
}

/* A start the driver could not carry out (deepshared taking a dispatch back, the simulator's restart rules):
 * the run is forgotten (nothing billed when taken back at once) and the job waits again as before it.
 * Without this the engine's fallback, enqueue, left the run in the lists and in the account's GPUs. */
void slm_cancel_start(ds_engine_t *e, void *state, int32_t job, int64_t now)
{
    slm_forget_run(e, state, job, now);
    slm_enqueue(e, state, job, now);
}

/* Pops the wants due by now; returns whether there were any. */
static int take_wants(slm_part_t *P, int64_t now)
{
    int due = 0;
    while (P->nwants && P->wants[0] <= now) {
        due = 1;
        int64_t x = P->wants[--P->nwants];
        int32_t i = 0;
        for (;;) {
            int32_t l = 2 * i + 1, m = l;
            if (l >= P->nwants) break;
            if (l + 1 < P->nwants && P->wants[l + 1] < P->wants[l]) m = l + 1;
            if (P->wants[m] >= x) break;
            P->wants[i] = P->wants[m];
            i = m;
        }
        if (P->nwants) P->wants[i] = x;
    }
    return due;
}

/* ---- the pass ---- */

static void merge_incoming(slm_state_t *s)
{
    slm_list_t *in = &s->incoming;
    for (int32_t i = 0; i < in->n; i++) {
        int32_t j = in->job[i];
        if (in->stamp[i] != s->pstamp[j] || s->e->js[j].status != DS_JS_PENDING) continue;
        slm_queue_add(s, j);
    }
    in->n = in->live = 0;
}

/* Requeues victims whose GraceTime ran out. */
static void stop_due(ds_engine_t *e, slm_state_t *s, int32_t p, int64_t now)
{
    slm_list_t *r = &s->parts[p].run;
    for (int32_t i = 0; i < r->n; i++) {
        int32_t j = r->job[i];
        if (r->stamp[i] == s->rstamp[j] && s->stop_at[j] >= 0 && s->stop_at[j] <= now) slm_requeue(e, s, j, now);
    }
}

void slm_schedule(ds_engine_t *e, void *state, int32_t part, int64_t now, int timer)
{
    (void)timer;
    slm_state_t *s = state;
    slm_part_t *P = &s->parts[part];
    s->in_pass = 1;
    catch_up(s, now);
    slm_queue_fresh(s);
    if (s->cfg.grace_time > 0) stop_due(e, s, part, now);
    merge_incoming(s);
    int full = take_wants(P, now);
    if (P->main_work || full) {
        P->main_work = 0;
        P->truncated = 0;
        slm_main_pass(e, s, part, now, full ? 0 : s->cfg.queue_depth);
        if (full) P->last_full = now;
        if (P->truncated) slm_want_periodic(s, part, now + 1);
    }
    if (s->cfg.backfill && P->bf_work && now >= P->last_bf + s->cfg.bf_interval && e->parts[part].npending) {
        P->bf_work = 0;
        P->last_bf = now;
        slm_backfill_pass(e, s, part, now);
    }
    merge_incoming(s);
    s->in_pass = 0;
}

int64_t slm_next_timer(const ds_engine_t *e, const void *state, int64_t now)
{
    const slm_state_t *s = state;
    int64_t t = DS_TIME_NEVER;
    int work = 0;
    for (int32_t p = 0; p < e->nparts; p++) {
        const slm_part_t *P = &s->parts[p];
        int pending = e->parts[p].npending > 0;
        work |= pending || e->parts[p].gpus_free < e->parts[p].gpus_total;
        if (!pending) continue;
        if (s->cfg.backfill && P->bf_work) t = DS_MIN(t, DS_MAX(P->last_bf + s->cfg.bf_interval, now + 1));
        if (P->nwants) t = DS_MIN(t, DS_MAX(P->wants[0], now + 1));
    }
    if (work) t = DS_MIN(t, DS_MAX(s->next_calc, now + 1));
    return t;
}

/* ---- reports ---- */

int slm_check(const ds_engine_t *e, const void *state, char *msg, size_t n)
{
    const slm_state_t *s = state;
    const ds_trace_t *t = e->trace;
    if (s->n_bad_victims) {
        snprintf(msg, n, "slurm: %lld job(s) of QOS normal were preempted", (long long)s->n_bad_victims);
        return 1;
    }
    /* the queue's heads only move forward over dead entries: nothing a schedule reads */
    if (slm_queue_check((slm_state_t *)s, msg, n)) return 1;
    int64_t *run = ds_xcalloc((size_t)(t->ntenants ? t->ntenants : 1), sizeof *run);
    int64_t *normal = ds_xcalloc((size_t)(t->ntenants ? t->ntenants : 1), sizeof *normal);
    int bad = 0;
    for (int32_t j = 0; j < t->njobs && !bad; j++) {
        const ds_jstate_t *js = &e->js[j];
        if (js->status == DS_JS_RUNNING) {
            run[t->jobs[j].tenant] += t->jobs[j].gpus;
            if (js->last_start < s->eligible[j]) {
                snprintf(msg, n, "slurm: job %lld started at %lld before its begin time %lld", (long long)t->jobs[j].id,
                         (long long)js->last_start, (long long)s->eligible[j]);
                bad = 1;
            }
        }
        if ((js->status == DS_JS_RUNNING || js->status == DS_JS_PENDING) && s->qos[j] == SLM_QOS_NORMAL)
            normal[t->jobs[j].tenant] += t->jobs[j].gpus;
    }
    for (int32_t a = 0; a < t->ntenants && !bad; a++) {
        if (run[a] != s->ten_run[a]) {
            snprintf(msg, n, "slurm: account %s holds %lld GPUs, bookkeeping says %lld", t->tenants[a].name,
                     (long long)run[a], (long long)s->ten_run[a]);
            bad = 1;
        } else if (s->cfg.grp_tres && run[a] > e->tenant_quota[a]) {
            snprintf(msg, n, "slurm: account %s holds %lld GPUs over its GrpTRES=gres/gpu=%lld", t->tenants[a].name,
                     (long long)run[a], (long long)e->tenant_quota[a]);
            bad = 1;
        } else if (normal[a] != s->ten_normal[a]) {
            snprintf(msg, n, "slurm: account %s has %lld GPUs in QOS normal, bookkeeping says %lld", t->tenants[a].name,
                     (long long)normal[a], (long long)s->ten_normal[a]);
            bad = 1;
        } else if (s->cfg.route && normal[a] > s->ten_quota[a] && s->ten_quota[a] == e->tenant_quota[a]) {
            snprintf(msg, n, "slurm: account %s has %lld GPUs in QOS normal over its quota %lld", t->tenants[a].name,
                     (long long)normal[a], (long long)s->ten_quota[a]);
            bad = 1;
        }
    }
    free(run);
    free(normal);
    return bad || slm_types_check(s, msg, n);
}

int slm_stats(const ds_engine_t *e, const void *state, ds_policy_stat_t *out, int max)
{
    (void)e;
    const slm_state_t *s = state;
    const struct {
        const char *name;
        int64_t v;
    } st[] = {
        {"main_starts", s->n_main_starts},     {"backfill_starts", s->n_bf_starts},
        {"backfill_passes", s->n_bf_passes},   {"reservations", s->n_resv},
        {"preempt_qos", s->n_preempt},         {"routed_borrow", s->n_routed_borrow},
        {"grptres_waits", s->n_grp_blocks},    {"fairshare_updates", s->n_fs_ticks},
        {"backfill_tests", s->n_plans},        {"backfill_test_rounds", s->n_plan_iters},
        {"backfill_tests_multinode", s->n_multi},
    };
    int k = 0;
    for (size_t i = 0; i < sizeof st / sizeof st[0] && k < max; i++, k++) {
        snprintf(out[k].name, sizeof out[k].name, "%s", st[i].name);
        out[k].value = (double)st[i].v;
    }
    return k;
}

int32_t slm_pending_order(const ds_engine_t *e, const void *state, int32_t *out, int32_t max)
{
    /* a walk moves the groups' cursors only, which every walk resets: nothing a schedule reads */
    slm_state_t *s = (slm_state_t *)state;
    int32_t k = 0, total = 0;
    for (int32_t p = 0; p < e->nparts; p++) {
        slm_walk_t w;
        slm_walk_begin(s, p, &w);
        for (int32_t j; (j = slm_walk_next(s, &w)) >= 0; total++)
            if (k < max) out[k++] = j;
        slm_walk_end(s, &w);
    }
    /* arrivals the next pass has not filed yet come last, in arrival order */
    for (int32_t i = 0; i < s->incoming.n; i++) {
        int32_t j = s->incoming.job[i];
        if (s->incoming.stamp[i] != s->pstamp[j] || e->js[j].status != DS_JS_PENDING) continue;
        if (k < max) out[k++] = j;
        total++;
    }
    return total;
}
