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

static int64_t held_of(const ds_engine_t *e, int32_t i, ds_qad_kind_t kind)
{
    /* Classless policies put every running job in the G counter, so both kinds agree for them. */
    return kind == DS_QAD_G ? e->tenant_g_gpus[i] : e->tenant_g_gpus[i] + e->tenant_be_gpus[i];
}

double ds_engine_qad(const ds_engine_t *e, int32_t i, ds_qad_kind_t kind)
{
    return ds_qad_ratio(held_of(e, i, kind), e->tenant_pending_gpus[i], e->tenant_quota[i]);
}

int ds_engine_qad_demand(const ds_engine_t *e, int32_t i, ds_qad_kind_t kind)
{
    return held_of(e, i, kind) + e->tenant_pending_gpus[i] > 0;
}
