/* ds_qad.c: the Quota Assurance Degree (docs/policy.md §1): instantaneous Q_i from G allocations only, its
 * exponential smoothing S_i per cycle, and the bands and under-service test built on it. */
#include "ds_internal.h"

#include <math.h>

double dsp_qad_now(const ds_engine_t *e, int32_t i)
{
    /* A_i: GPUs of i's running G jobs; D_i adds all of i's pending GPUs. BE GPUs never count. */
    int64_t A = e->tenant_g_gpus[i], D = A + e->tenant_pending_gpus[i];
    int64_t den = DS_MIN((int64_t)e->trace->tenants[i].quota_gpus, D);
    return den <= 0 ? 1.0 : (double)A / (double)den;
}

void dsp_qad_cycle(ds_engine_t *e, dsp_t *s, int64_t now)
{
    double l = s->cfg.lambda;
    /* Cycles skipped while nothing ran (no timer) kept the Q left by the last pass. */
    int64_t skipped = s->s_init ? (now - s->last_cycle) / s->cfg.cycle - 1 : 0;
    double decay = skipped > 0 ? pow(1.0 - l, (double)skipped) : 1.0;
    for (int32_t i = 0; i < s->nt; i++) {
        double q = dsp_qad_now(e, i);
        if (!s->s_init) {
            s->S[i] = q; /* warm start: no stored state */
        } else {
            double prev = s->q_last[i] + (s->S[i] - s->q_last[i]) * decay;
            s->S[i] = l * q + (1.0 - l) * prev;
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
