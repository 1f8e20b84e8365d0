/* ds_fair.c: a fair division of the pool among tenants (fair-share, off by default; docs/policy.md §3), in the
 * spirit of KAI's over-quota division (SPEC 4.3, PEERS.md §2): each tenant is first given what it asks for up to
 * its quota, and what is left is water-filled over the tenants that ask for more, by weight (their quotas, or
 * equal), never past what a tenant asks for. Best-effort work of a tenant within that share goes first, and (mode
 * 2) may reclaim BE GPUs from tenants above theirs. Bookkeeping: reads the engine, calls no other file here. */
#include "ds_internal.h"

#include <math.h>

int dsp_fair_update(const ds_engine_t *e, dsp_t *s, int32_t part)
{
    /* Several partitions (partitioned mode) lend nothing across them: nothing to divide. */
    if (!s->cfg.fair_share || !s->cfg.borrowing || e->nparts != 1) return 0;
    double left = (double)e->parts[part].gpus_total, *f = s->fair, *want = s->fair_want;
    for (int32_t i = 0; i < s->nt; i++) {
        /* what it asks for: every GPU it holds, in any class, and every pending one */
        want[i] = (double)(e->tenant_g_gpus[i] + e->tenant_be_gpus[i] + e->tenant_pending_gpus[i]);
        f[i] = fmin(want[i], (double)e->tenant_quota[i]);
        left -= f[i];
    }
    /* Water-filling: each round hands the rest out by weight to the tenants that ask for more, none past its ask;
     * a round where someone was capped leaves some over for the next. At most one round per tenant. */
    for (int32_t round = 0; round < s->nt && left > 1e-9; round++) {
        double wsum = 0, given = 0;
        for (int32_t i = 0; i < s->nt; i++)
            if (want[i] > f[i] + 1e-9) wsum += s->cfg.fair_weight == DSP_FW_EQUAL ? 1.0 : (double)e->tenant_quota[i];
        if (wsum <= 0) break;
        for (int32_t i = 0; i < s->nt; i++) {
            if (want[i] <= f[i] + 1e-9) continue;
            double w = s->cfg.fair_weight == DSP_FW_EQUAL ? 1.0 : (double)e->tenant_quota[i];
            double give = fmin(left * w / wsum, want[i] - f[i]);
            f[i] += give, given += give;
        }
        left -= given;
        if (given <= 1e-9) break;
    }
    s->fair_set = 1;
    return 1;
}

int dsp_fair_within(const ds_engine_t *e, const dsp_t *s, int32_t j)
{
    int32_t i = e->trace->jobs[j].tenant;
    double held = (double)(e->tenant_g_gpus[i] + e->tenant_be_gpus[i]);
    /* a G job is within its quota, which its share always covers */
    return e->js[j].klass == DS_CLASS_G || held + (double)e->trace->jobs[j].gpus <= s->fair[i] + 1e-9;
}

double dsp_fair_spare(const ds_engine_t *e, const dsp_t *s, int32_t i)
{
    return (double)(e->tenant_g_gpus[i] + e->tenant_be_gpus[i]) - s->fair[i];
}
