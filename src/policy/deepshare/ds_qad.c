/* ds_qad.c: DeepShare's QAD signal (docs/policy.md §1): Q_i over G allocations only (through the core's one definition,
 * deepshare/qad.h), its exponential smoothing S_i per cycle, and the bands and under-service test. */
#include "ds_internal.h"

#include "deepshare/qad.h"

#include <math.h>

double dsp_eff_held(const ds_engine_t *e, const dsp_t *s, int32_t i)
{
    double h = 0;
    for (int32_t t = 0; t < e->ntypes; t++) h += (double)e->tenant_g_gpus_t[(size_t)i * (size_t)e->ntypes + (size_t)t] * s->tw[t];
    return h;
}

double dsp_eff_quota(const ds_engine_t *e, const dsp_t *s, int32_t i)
{
    double q = 0;
    for (int32_t t = 0; t < e->ntypes; t++) q += (double)ds_engine_quota_t(e, i, t) * s->tw[t];
    return q;
}

/* Effective GPUs (DSP_TQ_EFFECTIVE): held G GPUs weighted by type over the effective quota, capped by the demand
 * in effective GPUs: held, and pending GPUs each at the weight of the best type they may run on (a job of
 * several types as one of any, as the core's per-type QAD counts it). */
static double qad_effective(const ds_engine_t *e, const dsp_t *s, int32_t i)
{
    double held = dsp_eff_held(e, s, i), want = held, any = (double)e->tenant_pending_gpus[i];
    for (int32_t t = 0; t < e->ntypes; t++) {
        double p = (double)e->tenant_pend_t[(size_t)i * (size_t)e->ntypes + (size_t)t];
        want += p * s->tw[t];
        any -= p;
    }
    want += any * s->tw_max;
    double den = DS_MIN(dsp_eff_quota(e, s, i), want);
    if (den <= 1e-9) return 1.0;
    double r = held / den;
    return r > 1.0 ? 1.0 : r < 0.0 ? 0.0 : r;
}

double dsp_qad_now(const ds_engine_t *e, const dsp_t *s, int32_t i)
{
    /* several types: per-type quotas (the core's typed QAD), effective GPUs, or types ignored (the totals) */
    if (e->ntypes > 1) {
        if (s->cfg.type_quota == DSP_TQ_EFFECTIVE) return qad_effective(e, s, i);
        if (s->cfg.type_quota == DSP_TQ_TYPED) return ds_engine_qad_typed(e, i, DS_QAD_G);
    }
    /* A_i / min(q_i, A_i + pending): BE GPUs never count in the policy's own signal. */
    return ds_engine_qad_one_type(e, i, DS_QAD_G);
}

void dsp_qad_cycle(ds_engine_t *e, dsp_t *s, int64_t now)
{
    double l = s->cfg.lambda;
    /* Cycles skipped while nothing ran (no timer) kept the Q left by the last pass. */
    int64_t skipped = s->s_init ? (now - s->last_cycle) / s->cfg.cycle - 1 : 0;
    double decay = skipped > 0 ? pow(1.0 - l, (double)skipped) : 1.0;
    for (int32_t i = 0; i < s->nt; i++) {
        double q = dsp_qad_now(e, s, i);
        if (!s->s_init) {
            s->S[i] = q; /* warm start: no stored state */
        } else {
            double prev = s->q_last[i] + (s->S[i] - s->q_last[i]) * decay;
            s->S[i] = ds_qad_smooth(prev, q, l);
        }
    }
    s->s_init = 1;
    s->last_cycle = now;
}

int dsp_band(const dsp_t *s, int32_t i)
{
    /* The small guard keeps S = 0.95 in band 19, not 18 through rounding. */
    return (int)floor(s->S[i] / s->cfg.band + 1e-9);
}

int dsp_underserved(const dsp_t *s, int32_t i) { return s->S[i] < s->cfg.theta; }
