/* qad.h: the Quota Assurance Degree, defined once: every policy, the simulator's report and deepshared's
 * metrics compute it through these functions (docs/policy.md has the definition). */
#ifndef DS_QAD_H
#define DS_QAD_H

#include "deepshare/engine.h"

/* Which GPUs count as served. */
typedef enum {
    DS_QAD_ALL = 0, /* every GPU the tenant's running jobs hold, any class: the reported, fair metric */
    DS_QAD_G = 1    /* only GPUs of its guaranteed (G) jobs: DeepShare's internal signal */
} ds_qad_kind_t;

/* min(q, held) / min(q, held + pending), and 1 when the denominator is 0 (no demand or no quota).
 * Always in [0, 1]. */
double ds_qad_ratio(int64_t held, int64_t pending, int64_t quota);

/* On a typed cluster (docs/heterogeneous.md), with per-type quotas q_t: GPUs held on type t count only up to
 * q_t, and the demand a tenant is entitled to is sum_t min(q_t, H_t + P_t) + min(sum_t (q_t - H_t - P_t)^+,
 * P_any) (H_t held on t, P_t pending jobs asking for t, P_any pending jobs of any type): served / entitled,
 * 1 when nothing is entitled. With one type it is ds_qad_ratio. n values each. */
double ds_qad_ratio_typed(const int64_t *held, const int64_t *pend_t, int64_t pend_any, const int64_t *quota, int32_t n);


/* ds_engine_qad for an engine of one GPU type, and for one of several (what it calls on each): a caller that asks
 * for many tenants may pick one of the two once. */
double ds_engine_qad_one_type(const ds_engine_t *e, int32_t tenant, ds_qad_kind_t kind);
double ds_engine_qad_typed(const ds_engine_t *e, int32_t tenant, ds_qad_kind_t kind);

/* Tenant i's QAD now, from the engine's live accounting. Pending GPUs count for both kinds; for
 * DS_QAD_G, policies without classes count every running job as G. */
static inline double ds_engine_qad(const ds_engine_t *e, int32_t tenant, ds_qad_kind_t kind)
{
    return e->ntypes > 1 ? ds_engine_qad_typed(e, tenant, kind) : ds_engine_qad_one_type(e, tenant, kind);
}

/* Whether tenant i has any demand (GPUs held or pending) now: the tenant-cycles compliance counts. */
int ds_engine_qad_demand(const ds_engine_t *e, int32_t tenant, ds_qad_kind_t kind);

/* One step of the exponential smoothing: lambda q + (1 - lambda) prev. */
static inline double ds_qad_smooth(double prev, double q, double lambda) { return lambda * q + (1.0 - lambda) * prev; }

#endif
