/* slurm_explain.c: what the simulated Slurm makes of one job, in the words squeue and sprio would use:
 * its priority and its factors, its fair-share rank, its QOS and time limit, and why it waits (the reason
 * the last pass that looked at it found) or what could stop it. Read-only. */
#include "slurm_internal.h"

static long long id_of(const ds_engine_t *e, int32_t j) { return (long long)e->trace->jobs[j].id; }

void slm_explain(const ds_engine_t *e, const void *state, int32_t j, int64_t now, ds_buf_t *out)
{
    const slm_state_t *s = state;
    if (j < 0 || j >= s->njobs || !s->seen[j]) return;
    const ds_trace_t *t = e->trace;
    const ds_job_t *jb = &t->jobs[j];
    const ds_jstate_t *js = &e->js[j];
    const slm_config_t *c = &s->cfg;
    const char *acct = t->tenants[jb->tenant].name;
    int32_t a = s->assoc[j];
    ds_bprintf(out, "  qos: %s%s\n", s->qos[j] == SLM_QOS_NORMAL ? "normal" : "borrow",
        !c->route ? ""
        : s->qos[j] == SLM_QOS_BORROW ? " (job_submit.lua: its account's GPUs in QOS normal, with it, exceeded the quota)"
                                     : " (job_submit.lua: within its account's quota in QOS normal)");
    ds_bprintf(out, "  limit: time limit %lld s (%g x (estimate %.0f s + restart overhead %d s), rounded up to %lld s)\n",
        (long long)s->limit[j], c->limit_factor, s->est[j], ds_engine_restart_overhead(e, j), (long long)c->limit_round);
    if (js->status == DS_JS_RUNNING) {
        ds_bprintf(out, "  run: expected end %lld (start + time limit%s)\n", (long long)s->end_est[j],
            s->end_est[j] <= now ? "; past its limit it runs on: OverTimeLimit=UNLIMITED" : "");
        if (!c->preempt || s->qos[j] == SLM_QOS_NORMAL)
            ds_bprintf(out, "  preemption: never (%s)\n", c->preempt ? "QOS normal is not preemptable" : "PreemptType=preempt/none");
        else if (s->stop_at[j] >= 0)
            ds_bprintf(out, "  preemption: being preempted: requeued at %lld (GraceTime %lld s)\n", (long long)s->stop_at[j],
                (long long)c->grace_time);
        else
            ds_bprintf(out, "  preemption: QOS normal may requeue it (PreemptMode=REQUEUE, GraceTime %lld s, %s)\n",
                (long long)c->grace_time,
                c->exempt_time < 0 ? "no PreemptExemptTime"
                : js->last_start + c->exempt_time > now ? "exempt for now: PreemptExemptTime" : "past PreemptExemptTime");
        return;
    }
    if (js->status != DS_JS_PENDING) return;
    ds_bprintf(out, "  order: priority %lld (queue order: %spriority, then submit time %lld, then job id)\n",
        (long long)slm_prio(s, j), c->preempt ? "QOS normal before borrow, " : "", (long long)s->order_submit[j]);
    const slm_tree_t *tr = &s->tree;
    ds_bprintf(out, "  fair-share: factor %.4f: rank %d of %d user associations; account %s level fair share %.3Lg "
                "(Fair Tree, W=%g), user %.3Lg within it\n",
        tr->fs[a], tr->user_rank[a], tr->nusers, acct, tr->acct_lf[jb->tenant], c->w_fs, tr->user_lf[a]);
    if (s->eligible[j] > now) {
        ds_bprintf(out, "  begin: waiting: requeued, may start from %lld (requeue delay %lld s: cred_expire + 1)\n",
            (long long)s->eligible[j], (long long)c->requeue_delay);
        return;
    }
    int capped = c->grp_tres && s->ten_run[jb->tenant] + jb->gpus > e->tenant_quota[jb->tenant];
    int tcapped = !capped && !slm_types_limit_ok(s, j);
    switch (capped || tcapped ? SLM_W_GRPTRES : s->reason[j]) {
    case SLM_W_GRPTRES:
        if (tcapped) {
            int32_t ty = slm_named_type(s, j);
            ds_bprintf(out, "  quota: waiting: account %s at GrpTRES gres/gpu:%s=%lld (it holds %lld %s GPUs, its jobs "
                        "of any request counted; this job asks %d by name)\n", acct, t->gtypes[ty].name,
                (long long)ds_engine_quota_t(e, jb->tenant, ty),
                (long long)s->ten_run_t[(size_t)jb->tenant * (size_t)e->ntypes + (size_t)ty], t->gtypes[ty].name, jb->gpus);
            break;
        }
        ds_bprintf(out, "  quota: waiting: account %s at GrpTRES gres/gpu=%lld (it holds %lld GPUs; this job needs %d)\n", acct,
            (long long)e->tenant_quota[jb->tenant], (long long)s->ten_run[jb->tenant], jb->gpus);
        break;
    case SLM_W_BEGIN:
        ds_bprintf(out, "  begin: waiting: requeued, may start from %lld (requeue delay %lld s: cred_expire + 1)\n",
            (long long)s->eligible[j], (long long)c->requeue_delay);
        break;
    case SLM_W_RESERVED:
        ds_bprintf(out, "  backfill: waiting: its GPUs are free but the node is reserved for job %lld (higher priority) "
                    "from %lld\n",
            s->blocker[j] >= 0 ? id_of(e, s->blocker[j]) : -1LL,
            (long long)s->blocker_at[j]);
        break;
    case SLM_W_PREEMPTING:
        ds_bprintf(out, "  preemption: waiting for its victims to stop (GraceTime) until %lld\n", (long long)s->stop_at[j]);
        break;
    case SLM_W_HELD:
        ds_bprintf(out, "  held: the driver holds it\n");
        break;
    case SLM_W_NOTTESTED:
        ds_bprintf(out, "  backfill: not tested in the last pass: past bf_max_job_test=%d\n", c->bf_max_job_test);
        break;
    default: {
        const slm_part_t *P = &s->parts[js->part];
        if (s->bf_start[j] >= 0)
            ds_bprintf(out, "  backfill: waiting for resources: reservation planned from %lld on the nodes it would get\n",
                (long long)s->bf_start[j]);
        else if (P->main_blocker >= 0 && P->main_blocker != j && slm_prio_cmp(s, P->main_blocker, j) < 0)
            ds_bprintf(out, "  order: waiting (Priority): the main scheduler stopped at job %lld, ahead of it, which did not "
                        "fit; backfill tests it next\n",
                id_of(e, P->main_blocker));
        else
            ds_bprintf(out, "  resources: waiting: no node had %d free GPUs for it at the last pass\n", jb->gpus);
    }
    }
    ds_explain_fit(e, j, out);
}
