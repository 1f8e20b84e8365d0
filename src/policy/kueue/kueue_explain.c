/* kueue_explain.c: the Kueue model's account of one workload (ops->explain), in Kueue's own terms: its
 * ClusterQueue and cohort quota, whether it is inadmissible and why (the messages Kueue writes into the
 * workload's QuotaReserved condition), whether it is admitted and waiting for nodes, and what could evict it. */
#include "kueue/kueue_state.h"

#include "deepshare/strbuf.h"

/* Several flavors: the workload's flavor, or the ones its node selector allows, with each one's quota */
static void explain_flavors(const ds_engine_t *e, const kueue_t *s, int32_t j, ds_buf_t *out)
{
    const ds_job_t *jb = &e->trace->jobs[j];
    const kq_cq_t *c = &s->cq[jb->tenant];
    int placed = s->state[j] == KQ_RUNNING || s->state[j] == KQ_ADMITTED;
    for (int32_t k = 0; k < s->nf; k++) {
        int32_t f = s->forder[k];
        if (placed ? f != s->flv[j] : !ds_engine_type_ok(e, j, f)) continue;
        int64_t nom = 0, use = 0;
        for (int32_t q = s->pq_off[c->part]; q < s->pq_off[c->part + 1]; q++) {
            nom += kq_nominal(e, s, s->pq[q], f);
            use += kq_fq(s, s->pq[q], f)->usage;
        }
        ds_bprintf(out, "  flavor %s (#%d in the flavor list%s): nominalQuota %lld GPUs, %lld in use by its admitted "
                   "workloads; cohort: %lld of %lld unused%s\n", e->trace->gtypes[f].name, k + 1,
                   placed ? ", assigned" : "", (long long)kq_nominal(e, s, jb->tenant, f),
                   (long long)kq_fq(s, jb->tenant, f)->usage, (long long)(nom > use ? nom - use : 0), (long long)nom,
                   !placed && s->never[(size_t)j * (size_t)s->nf + (size_t)f] ? " (its nodes could never hold it: skipped)" : "");
    }
    if (!placed)
        ds_bprintf(out, "  flavors: the first in order that fits is taken; one that needs borrowing %s, one that needs "
                   "preemption %s (flavorFungibility)\n",
                   s->cfg.when_can_borrow == KQ_TRY_NEXT ? "only when no later one fits without" : "stops the search",
                   s->cfg.when_can_preempt == KQ_TRY_NEXT ? "only when no later one fits" : "stops the search");
}

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
    if (s->nf > 1) explain_flavors(e, s, j, out);
    if (s->state[j] == KQ_RUNNING || s->state[j] == KQ_ADMITTED) {
        if (s->state[j] == KQ_ADMITTED) {
            ds_bputs(out, "  admitted: quota reserved, pods not scheduled yet: Kueue admits by quota and kube-scheduler "
                          "places the pods when a node fits them\n");
            ds_explain_fit(e, j, out);
        }
        int64_t fuse = c->usage, fnom = nominal; /* borrowing is per flavor: the workload's */
        int elsewhere = 0;                        /* and whether the CQ borrows on another flavor */
        if (s->nf > 1) {
            fuse = kq_fq(s, jb->tenant, s->flv[j])->usage, fnom = kq_nominal(e, s, jb->tenant, s->flv[j]);
            for (int32_t f = 0; f < s->nf; f++)
                elsewhere |= f != s->flv[j] && kq_fq(s, jb->tenant, f)->usage > kq_nominal(e, s, jb->tenant, f);
        }
        if (fuse > fnom)
            ds_bprintf(out, "  preemption: %s borrows (%lld > %lld): a workload of another ClusterQueue within its nominal "
                       "quota may reclaim this one (reclaimWithinCohort: Any)%s\n", cq, (long long)fuse,
                       (long long)fnom, s->cfg.fair_sharing ? ", subject to the fair sharing strategies" : "");
        else if (s->cfg.fair_sharing && elsewhere)
            ds_bprintf(out, "  preemption: %s is within its nominal quota of this flavor but borrows on another: while it "
                       "does, fair sharing may take its workloads here too (the DRS adds the flavors)\n", cq);
        else
            ds_bprintf(out, "  preemption: %s is within its nominal quota%s: no other ClusterQueue may reclaim from it\n", cq,
                       s->nf > 1 ? " of this flavor" : "");
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
    if (!inadm && c->mask_gen[k][b] == c->gen && (s->nf < 2 || c->mask_gmask[k][b] == jb->gmask)) {
        int64_t since = s->act_seq[j] > c->gen_seq ? s->act_seq[j] : c->gen_seq;
        inadm = since < c->mask_seq[k][b];
    }
    if (s->nf > 1) {
        /* the flavor lines above say where it fits; the totals below would mix the flavors */
    } else if (jb->gpus <= unused) {
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
