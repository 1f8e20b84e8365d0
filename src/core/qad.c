/* qad.c: the one definition of the Quota Assurance Degree (see include/deepshare/qad.h). */
#include "deepshare/qad.h"

double ds_qad_ratio(int64_t held, int64_t pending, int64_t quota)
{
    if (held < 0) held = 0;
    if (pending < 0) pending = 0;
    int64_t num = DS_MIN(quota, held), den = DS_MIN(quota, held + pending);
    if (den <= 0) return 1.0;
    double r = (double)num / (double)den;
    return r > 1.0 ? 1.0 : r < 0.0 ? 0.0 : r;
}

double ds_qad_ratio_typed(const int64_t *held, const int64_t *pend_t, int64_t pend_any, const int64_t *quota, int32_t n)
{
    int64_t served = 0, entitled = 0, spare = 0;
    for (int32_t t = 0; t < n; t++) {
        int64_t h = held[t] > 0 ? held[t] : 0, d = h + (pend_t[t] > 0 ? pend_t[t] : 0), q = quota[t];
        served += DS_MIN(q, h);
        entitled += DS_MIN(q, d);
        if (q > d) spare += q - d;
    }
    entitled += DS_MIN(spare, pend_any > 0 ? pend_any : 0);
    if (entitled <= 0) return 1.0;
    double r = (double)served / (double)entitled;
    return r > 1.0 ? 1.0 : r < 0.0 ? 0.0 : r;
}

double ds_engine_qad_typed(const ds_engine_t *e, int32_t i, ds_qad_kind_t kind)
{
    int64_t held[DS_MAX_GPU_TYPES], any = e->tenant_pending_gpus[i];
    size_t k = (size_t)i * (size_t)e->ntypes;
    for (int32_t t = 0; t < e->ntypes; t++) {
        held[t] = e->tenant_g_gpus_t[k + t] + (kind == DS_QAD_G ? 0 : e->tenant_be_gpus_t[k + t]);
        any -= e->tenant_pend_t[k + t];
    }
    return ds_qad_ratio_typed(held, &e->tenant_pend_t[k], any, &e->tenant_quota_t[k], e->ntypes);
}

static int64_t held_of(const ds_engine_t *e, int32_t i, ds_qad_kind_t kind)
{
    /* Classless policies put every running job in the G counter, so both kinds agree for them. */
    return kind == DS_QAD_G ? e->tenant_g_gpus[i] : e->tenant_g_gpus[i] + e->tenant_be_gpus[i];
}

double ds_engine_qad_one_type(const ds_engine_t *e, int32_t i, ds_qad_kind_t kind)
{
    return ds_qad_ratio(held_of(e, i, kind), e->tenant_pending_gpus[i], e->tenant_quota[i]);
}

int ds_engine_qad_demand(const ds_engine_t *e, int32_t i, ds_qad_kind_t kind)
{
    return held_of(e, i, kind) + e->tenant_pending_gpus[i] > 0;
}
