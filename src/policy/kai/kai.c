/* kai.c: the KAI-Scheduler (Run:ai) model as a policy: its ops, the per-job bookkeeping (priority class at
 * submit, pending and running lists, queue counters), invariants and counters. The session itself is in
 * kai_cycle.c, the fair-share division and reclaim rules in kai_share.c (docs/peers.md, "KAI"). */
#include "kai/kai_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void kai_enqueue(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    (void)now;
    kai_t *s = state;
    const ds_job_t *jb = &e->trace->jobs[j];
    if (!s->seen[j]) {
        /* first arrival: the PriorityClass is fixed at submit */
        s->seen[j] = 1;
        kai_queue_t *q = &s->q[jb->tenant];
        int klass = pq_class_at_submit(e, s->cfg.classes, q->gdemand, j);
        s->cls[j] = klass == DS_CLASS_G ? KAI_G : KAI_BE;
        if (klass == DS_CLASS_G) q->gdemand += jb->gpus;
        ds_engine_set_class(e, j, klass);
    } else if (s->seen[j] == 2) {
        /* a preemption (the engine calls enqueue from inside our own session) */
        if (s->cls[j] == KAI_G) s->st.np_victims++;
        kai_run_remove(e, s, j);
        s->seen[j] = 1;
    }
    kai_pend_add(e, s, j);
}

static void kai_cancel_start(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    (void)now;
    kai_t *s = state;
    kai_run_remove(e, s, j);
    s->seen[j] = 1;
    kai_pend_add(e, s, j);
}

/* A withdrawn job leaves its queue's pending lists, and its build-class demand with it: a later arrival
 * is classed at submit again. */
static void kai_withdraw(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    (void)now;
    kai_t *s = state;
    const ds_job_t *jb = &e->trace->jobs[j];
    kai_pend_remove(s, j);
    if (s->cls[j] == KAI_G) s->q[jb->tenant].gdemand -= jb->gpus;
    s->seen[j] = 0;
}

static void kai_adopt(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    (void)now;
    kai_t *s = state;
    const ds_job_t *jb = &e->trace->jobs[j];
    if (!s->seen[j]) {
        s->seen[j] = 1;
        s->cls[j] = e->js[j].klass == DS_CLASS_BE ? KAI_BE : KAI_G;
        if (s->cls[j] == KAI_G) s->q[jb->tenant].gdemand += jb->gpus;
    }
    kai_run_add(e, s, j);
    s->seen[j] = 2;
}

static void kai_on_finish(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    (void)now;
    kai_t *s = state;
    const ds_job_t *jb = &e->trace->jobs[j];
    kai_run_remove(e, s, j);
    s->seen[j] = 3;
    if (s->cls[j] == KAI_G) s->q[jb->tenant].gdemand -= jb->gpus;
}

static void kai_schedule(ds_engine_t *e, void *state, int32_t part, int64_t now, int timer)
{
    (void)timer;
    kai_t *s = state;
    if (s->timer <= now) s->timer = DS_TIME_NEVER;
    kai_session(e, s, part, now);
}

static int64_t kai_next_timer(const ds_engine_t *e, const void *state, int64_t now)
{
    (void)e;
    const kai_t *s = state;
    return s->timer > now ? s->timer : DS_TIME_NEVER;
}

static int kai_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    /* Several GPU types (docs/peers.md, "KAI on several GPU types"): one node pool whose queues' quotas count
     * GPUs of every type alike (KAI's QueueResources have no GPU type), a job on nodes of a type it accepts,
     * all its pods on one type. The solver splits a job into node-sized pods: the types must share a size. */
    for (int32_t t = 0; t < e->ntypes; t++)
        if (e->ntypes > 1 && ds_engine_type_gpus_per_node(e, t) != e->cfg.gpus_per_node) {
            ds_error_set(err, NULL, 0, NULL, "kai on several GPU types needs nodes of one size (%s nodes have %d GPUs, "
                         "others %d)", e->trace->gtypes[t].name, ds_engine_type_gpus_per_node(e, t), e->cfg.gpus_per_node);
            return DS_EINVAL;
        }
    kai_t *s = ds_xcalloc(1, sizeof *s);
    if (config) s->cfg = *(const kai_config_t *)config;
    else kai_config_default(&s->cfg);
    const ds_trace_t *t = e->trace;
    s->t = t;
    s->nt = t->ntenants;
    s->nparts = e->nparts;
    s->gpn = e->cfg.gpus_per_node;
    for (int32_t j = 0; j < t->njobs; j++) s->maxg = DS_MAX(s->maxg, t->jobs[j].gpus);
    size_t nj = (size_t)(t->njobs ? t->njobs : 1), nt = (size_t)(s->nt ? s->nt : 1);
    size_t nn = (size_t)(e->nnodes ? e->nnodes : 1);
    s->q = ds_xcalloc(nt, sizeof *s->q);
    pq_part_tenants(e, &s->pq, &s->pq_off, NULL);
    for (int32_t i = 0; i < s->nt; i++) {
        s->q[i].tenant = i;
        s->q[i].part = e->tenant_part[i];
        s->q[i].head = -1;
    }
    s->part_cpus = ds_xcalloc((size_t)(e->nparts ? e->nparts : 1), sizeof *s->part_cpus);
    s->part_mem = ds_xcalloc((size_t)(e->nparts ? e->nparts : 1), sizeof *s->part_mem);
    for (int32_t n = 0; n < e->nnodes; n++) {
        s->part_cpus[e->nodes[n].part] += e->nodes[n].cpus_total;
        s->part_mem[e->nodes[n].part] += e->nodes[n].mem_total;
    }
    s->blockers = ds_xcalloc(nn, 1);
    s->used = ds_xcalloc(nn, 1);
    s->blk_hist = ds_xcalloc((size_t)(e->nparts ? e->nparts : 1) * (size_t)(s->gpn + 1), sizeof *s->blk_hist);
    for (int32_t n = 0; n < e->nnodes; n++) s->blk_hist[(size_t)e->nodes[n].part * (size_t)(s->gpn + 1)]++;
    s->jnode_off = ds_xmalloc((nj + 1) * sizeof *s->jnode_off);
    s->jnode_off[0] = 0;
    for (int32_t j = 0; j < t->njobs; j++) s->jnode_off[j + 1] = s->jnode_off[j] + t->jobs[j].gpus;
    s->jnodes = ds_xmalloc((size_t)(s->jnode_off[t->njobs] ? s->jnode_off[t->njobs] : 1) * sizeof *s->jnodes);
    pq_fam_init(&s->pend, 2 * s->nt, t->njobs);
    pq_fam_init(&s->run, s->nt, t->njobs);
    s->seen = ds_xcalloc(nj, 1);
    s->cls = ds_xcalloc(nj, 1);
    s->pot = ds_xmalloc(nj * sizeof *s->pot);
    s->recd = ds_xcalloc(nj, 1);
    s->nhead = ds_xmalloc(nn * sizeof *s->nhead);
    for (size_t n = 0; n < nn; n++) s->nhead[n] = -1;
    /* a victim is on at most one node per GPU it holds */
    size_t links = (size_t)(s->jnode_off[t->njobs] ? s->jnode_off[t->njobs] : 1);
    s->lnext = ds_xmalloc(links * sizeof *s->lnext);
    s->lpot = ds_xmalloc(links * sizeof *s->lpot);
    s->ws_rem = ds_xmalloc(nt * sizeof *s->ws_rem);
    s->ws_touched = ds_xcalloc(nt, 1);
    s->sel = ds_xmalloc(nj * sizeof *s->sel);
    s->vof = ds_xmalloc(nj * sizeof *s->vof);
    s->vg = ds_xmalloc(nj * sizeof *s->vg);
    s->acc_gpu = ds_xcalloc(nn, sizeof *s->acc_gpu);
    s->acc_cpu = ds_xcalloc(nn, sizeof *s->acc_cpu);
    s->acc_mem = ds_xcalloc(nn, sizeof *s->acc_mem);
    s->touched = ds_xmalloc(2 * nn * sizeof *s->touched); /* touched nodes, then a solver's pod nodes */
    s->is_touched = ds_xcalloc(nn, 1);
    s->views = ds_xmalloc(nt * sizeof *s->views);
    s->sin = ds_xmalloc(nt * sizeof *s->sin);
    s->sout = ds_xmalloc(nt * sizeof *s->sout);
    pq_heap_init(&s->qh, s->nt, NULL, s);
    pq_heap_init(&s->vh, s->nt, NULL, s);
    s->vqmap = ds_xmalloc(nt * sizeof *s->vqmap);
    for (size_t i = 0; i < nt; i++) s->vqmap[i] = -1;
    s->timer = DS_TIME_NEVER;
    *state = s;
    return DS_OK;
}

static void kai_fini(void *state)
{
    kai_t *s = state;
    pq_fam_free(&s->pend);
    pq_fam_free(&s->run);
    pq_heap_free(&s->qh);
    pq_heap_free(&s->vh);
    void *p[] = {s->q, s->pq, s->pq_off, s->part_cpus, s->part_mem, s->seen, s->cls, s->pot, s->sel, s->vof, s->vg,
                 s->acc_gpu, s->acc_cpu, s->acc_mem, s->touched, s->is_touched, s->views, s->vqmap, s->sin, s->sout, s->blockers, s->used, s->blk_hist, s->jnode_off, s->jnodes, s->recd, s->nhead, s->lnext, s->lpot, s->ws_rem, s->ws_touched};
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) free(p[i]);
    free(s);
}

/* Invariants of the model (docs/peers.md): no non-preemptible job is ever a victim, no victim is taken
 * without a reclaim strategy that allows it, and a queue's non-preemptible jobs stay within its deserved
 * quota ("Non preemptible can only consume in-quota resources"); the counters match the engine's. */
static int kai_check(const ds_engine_t *e, const void *state, char *msg, size_t n)
{
    const kai_t *s = state;
    if (s->st.np_victims) { snprintf(msg, n, "kai: %lld non-preemptible jobs were evicted", (long long)s->st.np_victims); return -1; }
    if (s->st.reclaim_illegal) { snprintf(msg, n, "kai: %lld victims reclaimed without a strategy", (long long)s->st.reclaim_illegal); return -1; }
    for (int32_t i = 0; i < s->nt; i++) {
        const kai_queue_t *q = &s->q[i];
        if (q->alloc != e->tenant_g_gpus[i] + e->tenant_be_gpus[i] || q->alloc_np != e->tenant_g_gpus[i]) {
            snprintf(msg, n, "kai: queue %s counts %lld GPUs (%lld non-preemptible), the engine %lld (%lld)",
                     e->trace->tenants[i].name, (long long)q->alloc, (long long)q->alloc_np,
                     (long long)(e->tenant_g_gpus[i] + e->tenant_be_gpus[i]), (long long)e->tenant_g_gpus[i]);
            return -1;
        }
        if (q->alloc_np > e->tenant_quota[i] && q->alloc_np > s->max_deserved_seen) {
            snprintf(msg, n, "kai: queue %s holds %lld non-preemptible GPUs over its quota %lld", e->trace->tenants[i].name,
                     (long long)q->alloc_np, (long long)e->tenant_quota[i]);
            return -1;
        }
    }
    return 0;
}

static int kai_stats(const ds_engine_t *e, const void *state, ds_policy_stat_t *out, int max)
{
    (void)e;
    const kai_t *s = state;
    const kai_stats_t *x = &s->st;
    struct { const char *n; int64_t v; } v[] = {
        {"sessions", x->sessions}, {"allocated", x->allocated}, {"reclaims", x->reclaims},
        {"reclaim_victims", x->reclaim_victims}, {"reclaim_attempts", x->reclaim_attempts},
        {"preempts", x->preempts}, {"preempt_victims", x->preempt_victims},
        {"nonpreemptible_victims", x->np_victims}, {"victim_place_failed", x->victim_place_failed},
        {"victims_walked", x->victims_walked},
    };
    int k = 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0] && k < max; i++, k++) {
        snprintf(out[k].name, sizeof out[k].name, "%s", v[i].n);
        out[k].value = (double)v[i].v;
    }
    return k;
}

void *kai_config_new(void);
void kai_config_free(void *c);
int kai_config_set(void *config, const char *key, const char *value, ds_error_t *err);
void kai_config_help(FILE *f);
void kai_explain(const ds_engine_t *e, const void *state, int32_t j, int64_t now, ds_buf_t *out);

const ds_policy_ops_t ds_policy_kai = {
    .name = "kai",
    .summary = "KAI-Scheduler (Run:ai) model: deserved quota, fair share by over-quota weight, reclaim and "
               "in-queue preemption of preemptible jobs",
    .props = DS_POLICY_PREEMPTIVE | DS_POLICY_CLASSES | DS_POLICY_EXACT_HOLD | DS_POLICY_PRODUCTION | DS_POLICY_TYPED,
    .init = kai_init,
    .fini = kai_fini,
    .enqueue = kai_enqueue,
    .withdraw = kai_withdraw,
    .cancel_start = kai_cancel_start,
    .adopt = kai_adopt,
    .on_finish = kai_on_finish,
    .schedule = kai_schedule,
    .next_timer = kai_next_timer,
    .config_new = kai_config_new,
    .config_free = kai_config_free,
    .config_set = kai_config_set,
    .config_help = kai_config_help,
    .check = kai_check,
    .stats = kai_stats,
    .explain = kai_explain,
};
