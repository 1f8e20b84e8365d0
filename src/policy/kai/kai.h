/* kai.h: the KAI-Scheduler (Run:ai) model's internals: its configuration, per-queue state, the fair-share
 * division and the reclaim rules, exposed for the policy's files and its tests (docs/peers.md, "KAI"). */
#ifndef DS_POLICY_KAI_H
#define DS_POLICY_KAI_H

#include "../prod/prod.h"

/* Priority class values (docs/priority/README.md): build = 100 and above is non-preemptible. */
#define KAI_PRIO_G 100
#define KAI_PRIO_BE 50

typedef struct kai_config {
    int classes;                 /* PQ_CLASSES_*: how a trace job maps to build (G) or train (BE) */
    int weight_by_quota;         /* over-quota weight: 0 = 1 for every queue (KAI's default), 1 = the quota */
    double limit_factor;         /* queue GPU limit = factor x quota; -1 = no limit (KAI's default) */
    int64_t preempt_min_runtime; /* minruntime plugin: defaultPreemptMinRuntime, s (0) */
    int64_t reclaim_min_runtime; /* defaultReclaimMinRuntime, s (0) */
    double saturation_mult;      /* proportion: relcaimerSaturationMultiplier (1.0, >= 1) */
    double k_value;              /* proportion: kValue (1.0); without usage data it does not change shares */
    int64_t period;              /* schedule-period after evictions, s (1) */
} kai_config_t;

void kai_config_default(kai_config_t *c);

/* ---- fair-share division (plugins/proportion/resource_division) ----
 * One resource, one over-quota priority level. Inputs per queue: deserved (quota), request (allocated plus
 * pending), limit (-1 = none), weight (overQuotaWeight) and usage (historical, normalised; 0 without a
 * usage database); total is the resource's capacity. Writes fair[] and returns what was left undivided. */
typedef struct kai_share_in {
    double deserved, request, limit, weight, usage;
    int64_t created; /* creation order: ties in the leftover hand-out go to the older queue, then the lower index */
} kai_share_in_t;
double kai_share_divide(const kai_share_in_t *q, int32_t n, double total, double k_value, double *fair);

/* ---- reclaim legality (plugins/proportion/reclaimable) ----
 * The queues of one scenario, as the proportion plugin sees them when it validates a victim set. */
typedef struct kai_qview {
    double deserved, fair, limit; /* limit -1 = none */
    double alloc, alloc_np;       /* allocated, allocated to non-preemptible jobs */
} kai_qview_t;
/* allocatable share: min(limit, max(deserved, fair share)) */
double kai_allocatable(const kai_qview_t *q);
/* CanReclaimResources: the reclaimer's queue stays within its fair share with the job, and a
 * non-preemptible job stays within the deserved quota. */
int kai_can_reclaim(const kai_qview_t *r, double req, int nonpreemptible);
/* Reclaimable: victims[k] (GPUs) taken from queue vq[vof[k]], in the order given. Each victim must pass one
 * of the two strategies against its queue before it is taken (MaintainFairShare: the queue is above its
 * allocatable share; GuaranteeDeservedQuota: the reclaimer stays within its deserved quota and the queue is
 * above its deserved quota); then the reclaimer's saturation (alloc+req)/fair, where above 1, times mult
 * must stay below every victim queue's saturation after the removals; and a non-preemptible reclaimer
 * stays within deserved. Returns 1 when legal; *why (may be NULL) gets a reason code otherwise. */
enum { KAI_LEGAL = 0, KAI_NO_STRATEGY, KAI_SATURATION, KAI_NP_OVER_QUOTA };
int kai_reclaim_legal(const kai_qview_t *r, double req, int nonpreemptible, const kai_qview_t *vq, int32_t nvq,
                      const int32_t *vof, const double *victims, int32_t nv, double mult, int *why);
/* The same with the caller's scratch (nvq entries each) instead of allocations. */
int kai_reclaim_legal_ws(const kai_qview_t *r, double req, int nonpreemptible, const kai_qview_t *vq, int32_t nvq,
                         const int32_t *vof, const double *victims, int32_t nv, double mult, int *why, double *remaining,
                         uint8_t *touched);

#endif
