/* ds_qad.c: DeepShare's QAD signal (docs/policy.md §1): Q_i over G allocations only (through the core's one definition,
 * deepshare/qad.h), its exponential smoothing S_i per cycle, and the bands and under-service test. */
#include "ds_internal.h"

#include "deepshare/qad.h"

#include <math.h>

double dsp_qad_now(const ds_engine_t *e, int32_t i)
{
    /* A_i / min(q_i, A_i + pending): BE GPUs never count in the policy's own signal. */
    return ds_engine_qad(e, i, DS_QAD_G);
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
