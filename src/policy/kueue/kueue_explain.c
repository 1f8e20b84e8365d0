/* kueue_explain.c: the Kueue model's account of one workload (ops->explain), in Kueue's own terms: its
 * ClusterQueue and cohort quota, whether it is inadmissible and why (the messages Kueue writes into the
 * workload's QuotaReserved condition), whether it is admitted and waiting for nodes, and what could evict it. */
#include "kueue/kueue_state.h"

#include "deepshare/strbuf.h"

void kueue_explain(const ds_engine_t *e, const void *state, int32_t j, int64_t now, ds_buf_t *out)
{
    const kueue_t *s = state;
    const ds_jstate_t *js = &e->js[j];
    if ((js->status != DS_JS_PENDING && js->status != DS_JS_RUNNING) || s->state[j] == KQ_NONE) return;
    const ds_job_t *jb = &e->trace->jobs[j];
    const kq_cq_t *c = &s->cq[jb->tenant];
    const char *cq = e->trace->tenants[jb->tenant].name;
    int64_t nom = 0, use = 0;
    for (int32_t k = s->pq_off[c->part]; k < s->pq_off[c->part + 1]; k++) {
        nom += e->tenant_quota[s->pq[k]];
        use += s->cq[s->pq[k]].usage;
    }
    int64_t unused = nom > use ? nom - use : 0, nominal = e->tenant_quota[jb->tenant];
    ds_bprintf(out, "  clusterqueue: %s, nominalQuota %lld GPUs, %lld in use by admitted workloads; cohort: %lld of %lld "
               "unused\n", cq, (long long)nominal, (long long)c->usage, (long long)unused, (long long)nom);
    ds_bprintf(out, "  priority: WorkloadPriorityClass %d (%s), fixed at submit (--kueue-classes %s)\n",
               s->cls[j] ? KQ_PRIO_BE : KQ_PRIO_G, s->cls[j] ? "low" : "high", pq_classes_name(s->cfg.classes));
    if (s->state[j] == KQ_RUNNING || s->state[j] == KQ_ADMITTED) {
        if (s->state[j] == KQ_ADMITTED) {
            ds_bputs(out, "  admitted: quota reserved, pods not scheduled yet: Kueue admits by quota and kube-scheduler "
                          "places the pods when a node fits them\n");
            ds_explain_fit(e, j, out);
        }
        if (c->usage > nominal)
            ds_bprintf(out, "  preemption: %s borrows (%lld > %lld): a workload of another ClusterQueue within its nominal "
                       "quota may reclaim this one (reclaimWithinCohort: Any)%s\n", cq, (long long)c->usage,
                       (long long)nominal, s->cfg.fair_sharing ? ", subject to the fair sharing strategies" : "");
        else
            ds_bprintf(out, "  preemption: %s is within its nominal quota: no other ClusterQueue may reclaim from it\n", cq);
        if (s->cls[j] && s->cfg.within_cq)
            ds_bprintf(out, "  preemption: a higher-priority workload of %s may preempt it (withinClusterQueue: "
                       "LowerPriority)\n", cq);
        return;
    }
    if (s->hold_until[j] > now) {
        ds_bprintf(out, "  evicted: Preempted; it rejoins %s's queue at t=%lld\n", cq, (long long)s->hold_until[j]);
        return;
    }
    int32_t ahead = 0;
    for (int cls = 0; cls <= s->cls[j]; cls++) {
        const pq_list_t *l = &s->pend.l[2 * jb->tenant + cls];
        for (int32_t i = l->head; i < l->n; i++) {
            const pq_ent_t *x = &l->a[i];
            if (!pq_live(&s->pend, x) || x->job == j) continue;
            ahead += cls < s->cls[j] || x->key < jb->submit || (x->key == jb->submit && x->job < j);
        }
    }
    ds_bprintf(out, "  order: %d workload%s ahead of it in %s (priority, then creation time; BestEffortFIFO: heads "
               "that cannot be admitted do not block the ones behind)\n", ahead, ahead == 1 ? "" : "s", cq);
    int inadm = s->inadm_gen[j] == c->gen;
    int k = s->cls[j], b = pq_hb(jb->gpus);
    if (!inadm && c->mask_gen[k][b] == c->gen) {
        int64_t since = s->act_seq[j] > c->gen_seq ? s->act_seq[j] : c->gen_seq;
        inadm = since < c->mask_seq[k][b];
    }
    if (jb->gpus <= unused) {
        ds_bprintf(out, "  quota: fits the cohort's unused quota (%d of %lld)%s; admitted at the next cycle\n", jb->gpus,
                   (long long)unused, c->usage + jb->gpus > nominal ? ", borrowing" : "");
    } else {
        ds_bprintf(out, "  waiting: couldn't assign flavors to pod set main: insufficient unused quota for "
                   "nvidia.com/gpu in flavor default, %lld more needed\n", (long long)(jb->gpus - unused));
        if (!s->cfg.fair_sharing && nominal < jb->gpus)
            ds_bprintf(out, "  waiting: ClusterQueue %s would exceed its nominal quota (%lld) even alone: it cannot "
                       "preempt, only wait for unused quota in the cohort\n", cq, (long long)nominal);
        else if (c->usage + jb->gpus > nominal)
            ds_bprintf(out, "  waiting: ClusterQueue %s would exceed its nominal quota (%lld + %d > %lld) and the cohort "
                       "has no unused quota; it may preempt only %s\n", cq, (long long)c->usage, jb->gpus,
                       (long long)nominal, s->cfg.fair_sharing ? "where the fair sharing strategies allow"
                                                               : "its own lower-priority workloads, or reclaim where it ends within nominal");
        else
            ds_bprintf(out, "  waiting: within its nominal quota with it (%lld + %d <= %lld): it reclaims from ClusterQueues "
                       "that borrow, when preemption finds enough\n", (long long)c->usage, jb->gpus, (long long)nominal);
    }
    if (inadm)
        ds_bputs(out, "  inadmissible: skipped until quota is released in the cohort (Kueue requeues its inadmissible "
                      "workloads a batch period after)\n");
    if (c->sticky == j) ds_bputs(out, "  preempting: Pending the preemption of its targets; kept at the head of its queue\n");
}
