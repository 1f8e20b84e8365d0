/* kai_explain.c: the KAI model's account of one job (ops->explain): its priority class, its queue's deserved
 * quota, fair share and allocation as the last session saw them, what holds a pending job back (KAI's own
 * messages where it has one) and what could evict a running one. */
#include "kai/kai_state.h"

#include "deepshare/strbuf.h"

static const char *name_of(const ds_engine_t *e, int32_t t) { return e->trace->tenants[t].name; }

void kai_explain(const ds_engine_t *e, const void *state, int32_t j, int64_t now, ds_buf_t *out)
{
    const kai_t *s = state;
    const ds_jstate_t *js = &e->js[j];
    if ((js->status != DS_JS_PENDING && js->status != DS_JS_RUNNING) || !s->seen[j]) return;
    const ds_job_t *jb = &e->trace->jobs[j];
    const kai_queue_t *q = &s->q[jb->tenant];
    int g = s->cls[j] == KAI_G;
    ds_bprintf(out, "  class: %s (PriorityClass %d, %s), fixed at submit (--kai-classes %s)\n", g ? "build" : "train",
               g ? KAI_PRIO_G : KAI_PRIO_BE, g ? "non-preemptible: it only uses its queue's deserved quota and is never evicted"
                                                 : "preemptible: it may use GPUs over quota and be reclaimed or preempted",
               pq_classes_name(s->cfg.classes));
    ds_bprintf(out, "  queue: %s: deserved %.0f GPUs, fair share %.0f, allocated %lld (%lld non-preemptible)%s\n",
               name_of(e, jb->tenant), q->deserved, q->fair, (long long)q->alloc, (long long)q->alloc_np,
               q->limit >= 0 ? "" : ", no limit");
    if (js->status == DS_JS_RUNNING) {
        if (g) return;
        int64_t until = js->last_start + s->cfg.reclaim_min_runtime;
        if (s->cfg.reclaim_min_runtime > 0 && until > now)
            ds_bprintf(out, "  protected: reclaim min runtime until t=%lld\n", (long long)until);
        double able = kai_queue_allocatable(q);
        ds_bprintf(out, "  reclaim: another queue may take it while %s is above its deserved quota (%.0f) and the taker "
                   "stays within its own, or while %s is above its allocatable share (%.0f); now %s\n",
                   name_of(e, jb->tenant), q->deserved, name_of(e, jb->tenant), able,
                   (double)q->alloc > q->deserved ? "it is above its deserved quota" : "it is not");
        ds_bprintf(out, "  preempt: a pending build job of %s may preempt it (lower priority, same queue)\n",
                   name_of(e, jb->tenant));
        return;
    }
    int32_t list = 2 * jb->tenant + s->cls[j], ahead = 0;
    const pq_list_t *l = &s->pend.l[list];
    for (int32_t i = l->head; i < l->n; i++) {
        const pq_ent_t *x = &l->a[i];
        if (!pq_live(&s->pend, x) || x->job == j) continue;
        ahead += x->key < jb->submit || (x->key == jb->submit && x->job < j);
    }
    if (!g) ahead += s->pend.l[2 * jb->tenant].live; /* build jobs go first */
    ds_bprintf(out, "  order: %d job%s ahead of it in %s (build before train, then creation time); queues take turns "
               "by the proportion plugin's queue order\n", ahead, ahead == 1 ? "" : "s", name_of(e, jb->tenant));
    if (g && (double)(q->alloc_np + jb->gpus) > q->deserved)
        ds_bprintf(out, "  quota: Non-preemptible workload is over quota. Workload requested %d GPUs, but %s quota is %.0f "
                   "GPUs, while %lld GPUs are already allocated for non-preemptible pods. Use a preemptible workload to go "
                   "over quota.\n", jb->gpus, name_of(e, jb->tenant), q->deserved, (long long)q->alloc_np);
    else if (q->limit >= 0 && (double)(q->alloc + jb->gpus) > q->limit)
        ds_bprintf(out, "  limit: Limit is %.0f GPUs, currently %lld GPUs allocated and workload requested %d GPUs\n",
                   q->limit, (long long)q->alloc, jb->gpus);
    kai_qview_t v = {q->deserved, q->fair, q->limit, (double)q->alloc, (double)q->alloc_np};
    if (kai_can_reclaim(&v, jb->gpus, g))
        ds_bprintf(out, "  reclaim: it may reclaim (%lld + %d <= fair share %.0f) from queues above their deserved quota "
                   "or fair share%s\n", (long long)q->alloc, jb->gpus, q->fair,
                   (double)(q->alloc + jb->gpus) <= q->deserved ? ", also by GuaranteeDeservedQuota" : "");
    else
        ds_bprintf(out, "  reclaim: not possible: %s would hold %lld + %d GPUs, over its fair share %.0f\n",
                   name_of(e, jb->tenant), (long long)q->alloc, jb->gpus, q->fair);
    if (g && q->nrun_be > 0)
        ds_bprintf(out, "  preempt: it may preempt %s's %d running train job%s\n", name_of(e, jb->tenant), q->nrun_be,
                   q->nrun_be == 1 ? "" : "s");
    if (s->timer != DS_TIME_NEVER && s->timer > now)
        ds_bprintf(out, "  session: the next without an event at t=%lld\n", (long long)s->timer);
    ds_explain_fit(e, j, out);
}
