/* kueue_flavor.c: the Kueue model's ResourceFlavors on a cluster of several GPU types, as kueue ff69552e
 * assigns them (pkg/scheduler/flavorassigner/flavorassigner.go findFlavorForPodSets, isPreferred,
 * shouldTryNextFlavor): one flavor per GPU type, the ClusterQueues' flavor list, and the fungibility rules
 * that choose among the flavors a workload may use (docs/peers.md, "Kueue on several GPU types"). */
#include "kueue/kueue_state.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Resolves the configured flavor list (type names) against the cluster's types; every type must appear once,
 * since a ClusterQueue that does not list a flavor could never admit a workload asking for that type. The
 * default is the cluster's own type order (the cluster file's, or --synth-gpu-types'). */
int kq_flavors_init(const ds_engine_t *e, const kueue_config_t *c, int32_t *forder, ds_error_t *err)
{
    const ds_trace_t *t = e->trace;
    int32_t nf = e->ntypes;
    for (int32_t f = 0; f < nf; f++) forder[f] = f;
    if (c->preference != KQ_PREF_UNSET && (c->when_can_borrow != KQ_TRY_NEXT || c->when_can_preempt != KQ_TRY_NEXT)) {
        /* the API's validation rule on FlavorFungibility */
        ds_error_set(err, NULL, 0, "kueue-flavor-preference",
                     "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor");
        return DS_EINVAL;
    }
    if (!c->flavor_order[0]) return DS_OK;
    if (t->ngtypes < 1) {
        ds_error_set(err, NULL, 0, "kueue-flavor-order", "'%s': the cluster has no GPU types (one flavor)", c->flavor_order);
        return DS_EINVAL;
    }
    uint32_t seen = 0;
    int32_t n = 0;
    const char *p = c->flavor_order;
    while (*p) {
        const char *q = strchr(p, ',');
        size_t len = q ? (size_t)(q - p) : strlen(p);
        int32_t f = -1;
        for (int32_t k = 0; k < t->ngtypes; k++)
            if (strlen(t->gtypes[k].name) == len && !strncasecmp(t->gtypes[k].name, p, len)) f = k;
        if (f < 0 || ((seen >> f) & 1u) || n >= nf) {
            ds_error_set(err, NULL, 0, "kueue-flavor-order", "'%.*s' is %s", (int)len, p,
                         f < 0 ? "not a GPU type of the cluster" : "listed twice");
            return DS_EINVAL;
        }
        seen |= 1u << f;
        forder[n++] = f;
        if (!q) break;
        p = q + 1;
    }
    if (n != nf) {
        ds_error_set(err, NULL, 0, "kueue-flavor-order", "'%s' lists %d of the cluster's %d GPU types: list each once",
                     c->flavor_order, n, nf);
        return DS_EINVAL;
    }
    return DS_OK;
}

/* A model guard, not a Kueue rule: per job and flavor, whether the job's partition has too few GPUs of that
 * type, or no node of it with the CPUs and memory one of its pods needs. Kueue would admit such a workload to
 * that flavor if its quota allowed, and its pods would stay Pending forever; the engine refuses before the run
 * only jobs that no type they may use could hold. Such flavors are skipped, as a node affinity mismatch is. */
void kq_never_init(const ds_engine_t *e, kueue_t *s)
{
    const ds_trace_t *t = e->trace;
    s->never = ds_xcalloc((size_t)(t->njobs ? t->njobs : 1) * (size_t)s->nf, 1);
    for (int32_t j = 0; j < t->njobs; j++) {
        const ds_job_t *jb = &t->jobs[j];
        const ds_part_t *p = &e->parts[e->tenant_part[jb->tenant]];
        for (int32_t f = 0; f < s->nf; f++) {
            int never = jb->gpus > p->tgpus_total[f] || p->tnnodes[f] == 0;
            if (!never) {
                int32_t gpn = ds_engine_type_gpus_per_node(e, f), ngp = DS_MIN(jb->gpus, gpn);
                int64_t cpu = jb->gpus ? ((int64_t)jb->cpus * ngp + jb->gpus - 1) / jb->gpus : jb->cpus;
                int64_t mem = jb->gpus ? (jb->mem_mib * ngp + jb->gpus - 1) / jb->gpus : jb->mem_mib;
                const ds_node_t *nd = &e->nodes[p->tnode0[f]];
                never = (e->cfg.enforce_cpu && cpu > nd->cpus_total) || (nd->mem_total > 0 && mem > nd->mem_total);
            }
            s->never[(size_t)j * (size_t)s->nf + (size_t)f] = (uint8_t)never;
        }
    }
}

/* isPreferred: whether granular mode a is better than b. Modes rank NoFit < no preemption candidates <
 * Preempt (targets in the own CQ) < Reclaim (targets in other CQs only) < Fit; borrowing levels 0 (within
 * nominal quota) < 1 (borrowing in the cohort). BorrowingOverPreemption (also the unset default) compares the
 * mode first, PreemptionOverBorrowing the borrowing level first. */
int kq_flavor_preferred(const kq_gmode_t *a, const kq_gmode_t *b, int preference)
{
    if (a->pm == KQ_PM_NOFIT) return 0;
    if (b->pm == KQ_PM_NOFIT) return 1;
    int an = a->pm == KQ_PM_NOCAND, bn = b->pm == KQ_PM_NOCAND;
    if (an != bn) return !an;
    if (preference == KQ_PREF_PREEMPTION) {
        if (a->borrow != b->borrow) return a->borrow < b->borrow;
        return a->pm > b->pm;
    }
    if (a->pm != b->pm) return a->pm > b->pm;
    return a->borrow < b->borrow;
}

/* shouldTryNextFlavor: NoFit and no candidates always go on; a flavor that needs preemption stops the search
 * unless whenCanPreempt is TryNextFlavor, one that needs borrowing unless whenCanBorrow is TryNextFlavor. */
int kq_flavor_try_next(const kq_gmode_t *m, const kueue_config_t *c)
{
    if (m->pm == KQ_PM_NOFIT || m->pm == KQ_PM_NOCAND) return 1;
    if ((m->pm == KQ_PM_PREEMPT || m->pm == KQ_PM_RECLAIM) && c->when_can_preempt == KQ_TRY_NEXT) return 1;
    if (m->borrow > 0 && c->when_can_borrow == KQ_TRY_NEXT) return 1;
    return 0;
}
