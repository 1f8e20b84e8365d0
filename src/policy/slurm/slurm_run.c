/* slurm_run.c: the simulated Slurm's running jobs: a start (the job joins its partition's run lists, kept
 * by expected end, and its nodes' lists), an end or a requeue (the run is billed, the lists forget it),
 * the GrpTRES test before a start, and the requests for a later main pass (a GraceTime's end, a begin
 * time). Below the main scheduler, backfill and preemption, which start and requeue through it. */
#include "slurm_internal.h"
#include "deepshare/predictor.h"

#include <stdlib.h>
#include <string.h>

/* Running jobs by expected end (_cr_job_list_sort), ties in start order. */
static int end_less(const slm_state_t *s, int32_t a, int32_t b)
{
    if (s->end_est[a] != s->end_est[b]) return s->end_est[a] < s->end_est[b];
    return a < b;
}

/* The job's GPUs per node go into (or out of) its nodes' lists, kept by expected end. */
static void node_lists(slm_state_t *s, int32_t j, int add)
{
    const ds_engine_t *e = s->e;
    int32_t gpn = e->cfg.gpus_per_node, *mine = &s->jnodes[s->jnode_off[j]];
    if (add) {
        const int32_t *g = ds_engine_job_gpus(e, j);
        int32_t ng = e->js[j].nplaced;
        s->jnnodes[j] = 0;
        for (int32_t i = 0; i < ng;) {
            int32_t n = e->gpus[g[i]].node, c = 0;
            while (i < ng && e->gpus[g[i]].node == n) c++, i++; /* placement takes a node's GPUs together */
            DS_ASSERT(s->jnnodes[j] < e->trace->jobs[j].gpus / gpn + 2);
            mine[s->jnnodes[j]++] = n;
            int32_t *jl = &s->node_job[(size_t)n * (size_t)gpn], *gl = &s->node_ngpu[(size_t)n * (size_t)gpn];
            int32_t k = s->node_nj[n];
            DS_ASSERT(k < gpn);
            while (k > 0 && end_less(s, j, jl[k - 1])) jl[k] = jl[k - 1], gl[k] = gl[k - 1], k--;
            jl[k] = j, gl[k] = c;
            s->node_nj[n]++;
            slm_nodes_dirty(s, n);
        }
        return;
    }
    for (int32_t q = 0; q < s->jnnodes[j]; q++) {
        int32_t n = mine[q], k = s->node_nj[n], at = 0;
        int32_t *jl = &s->node_job[(size_t)n * (size_t)gpn], *gl = &s->node_ngpu[(size_t)n * (size_t)gpn];
        while (at < k && jl[at] != j) at++;
        DS_ASSERT(at < k);
        for (; at + 1 < k; at++) jl[at] = jl[at + 1], gl[at] = gl[at + 1];
        s->node_nj[n]--;
        slm_nodes_dirty(s, n);
    }
    s->jnnodes[j] = 0;
}

/* Bills the run so far, then forgets it (a finish or a requeue). */
static void end_run(ds_engine_t *e, slm_state_t *s, int32_t j, int64_t now)
{
    const ds_job_t *jb = &e->trace->jobs[j];
    s->pend_charge[s->assoc[j]] += slm_run_usage(s, j, now);
    s->charged[j] = now;
    node_lists(s, j, 0);
    s->rstamp[j]++;
    s->run_gen++;
    slm_list_t *r = &s->parts[e->js[j].part].run;
    r->live--;
    if (r->n - r->live > 64 && r->n - r->live > r->live) slm_list_compact(r, s->rstamp);
    if (s->qos[j] == SLM_QOS_NORMAL) {
        slm_list_t *rn = &s->parts[e->js[j].part].run_normal;
        rn->live--;
        if (rn->n - rn->live > 64 && rn->n - rn->live > rn->live) slm_list_compact(rn, s->rstamp);
    }
    s->ten_run[jb->tenant] -= jb->gpus;
    slm_types_run(s, j, 0);
    s->stop_at[j] = -1;
    if (s->qos[j] == SLM_QOS_BORROW) s->parts[e->js[j].part].nborrow--;
}

void slm_on_finish(ds_engine_t *e, void *state, int32_t job, int64_t now)
{
    slm_state_t *s = state;
    end_run(e, s, job, now);
    if (s->qos[job] == SLM_QOS_NORMAL) s->ten_normal[e->trace->jobs[job].tenant] -= e->trace->jobs[job].gpus, slm_types_normal(s, job, 0);
    const ds_runtime_predictor_t *rp = e->predictors ? e->predictors->runtime : NULL;
    if (rp && rp->observe_finish) rp->observe_finish(rp->ctx, e->trace, job, now);
    int32_t p = e->js[job].part;
    s->parts[p].bf_work = s->parts[p].main_work = 1;
}

/* A start the driver took back (slm_cancel_start): the run is forgotten, billed [start, now). */
void slm_forget_run(ds_engine_t *e, slm_state_t *s, int32_t j, int64_t now)
{
    end_run(e, s, j, now);
}

void slm_want_pass(slm_state_t *s, int32_t p, int64_t t)
{
    slm_part_t *P = &s->parts[p];
    if (P->nwants == P->capwants) {
        P->capwants = P->capwants ? 2 * P->capwants : 8;
        P->wants = ds_xrealloc(P->wants, (size_t)P->capwants * sizeof *P->wants);
    }
    int32_t i = P->nwants++;
    for (; i > 0 && P->wants[(i - 1) / 2] > t; i = (i - 1) / 2) P->wants[i] = P->wants[(i - 1) / 2];
    P->wants[i] = t;
}

void slm_want_periodic(slm_state_t *s, int32_t p, int64_t t)
{
    int64_t si = s->cfg.sched_interval, d = t - s->origin;
    slm_want_pass(s, p, s->origin + (d <= 0 ? 0 : (d + si - 1) / si * si));
}

void slm_start(ds_engine_t *e, slm_state_t *s, int32_t j, const int32_t *gpus, int64_t now, int by_backfill)
{
    ds_engine_start(e, j, gpus, now);
    s->pstamp[j]++;
    slm_queue_started(s, j);
    s->ten_run[e->trace->jobs[j].tenant] += e->trace->jobs[j].gpus;
    slm_types_run(s, j, 1);
    s->end_est[j] = now + s->limit[j];
    s->charged[j] = now;
    s->reason[j] = SLM_W_NONE;
    s->blocker[j] = -1;
    s->stop_at[j] = -1;
    s->bf_start[j] = -1;
    slm_part_t *P = &s->parts[e->js[j].part];
    if (s->qos[j] == SLM_QOS_BORROW) P->nborrow++;
    slm_list_insert(&P->run, s->rstamp, j, s, end_less);
    s->run_gen++;
    if (s->qos[j] == SLM_QOS_NORMAL) slm_list_insert(&P->run_normal, s->rstamp, j, s, end_less);
    node_lists(s, j, 1);
    P->bf_work = 1;
    if (by_backfill) s->n_bf_starts++;
    else s->n_main_starts++;
}

void slm_requeue(ds_engine_t *e, slm_state_t *s, int32_t v, int64_t now)
{
    if (s->qos[v] == SLM_QOS_NORMAL) s->n_bad_victims++; /* never: the check hook reports it */
    end_run(e, s, v, now);
    s->stop_at[v] = -2; /* tells enqueue this is a requeue */
    s->n_preempt++;
    ds_engine_preempt(e, v, now, SLM_R_QOS);
}

int slm_limits_ok(slm_state_t *s, int32_t j)
{
    const ds_job_t *jb = &s->e->trace->jobs[j];
    if (s->cfg.grp_tres && (s->ten_run[jb->tenant] + jb->gpus > s->e->tenant_quota[jb->tenant] || !slm_types_limit_ok(s, j))) {
        s->reason[j] = SLM_W_GRPTRES;
        s->n_grp_blocks++;
        return 0;
    }
    return 1;
}
