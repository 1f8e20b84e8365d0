/* ds_typical.c: the typical run, the median run time of the latest finished jobs, which tells a young run
 * from an old one for the reclaim's choice of victims (docs/policy.md §4.1, young victims). */
#include "ds_internal.h"

#include <stdlib.h>
#include <string.h>

int dsp_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void dsp_typical_observe(const ds_engine_t *e, dsp_t *s, int32_t j, int64_t now)
{
    dsp_typical_t *ty = &s->typical;
    ty->ring[ty->head] = (double)ds_engine_elapsed(e, j, now);
    ty->head = (ty->head + 1) % DSP_TYPICAL_N;
    if (ty->n < DSP_TYPICAL_N) ty->n++;
    /* the median moves slowly once the ring is full: re-taken every 64 finishes (every 16 while it fills) */
    if (++ty->since < (ty->n < DSP_TYPICAL_N ? DSP_TYPICAL_MIN : 64)) return;
    ty->since = 0;
    double tmp[DSP_TYPICAL_N];
    memcpy(tmp, ty->ring, (size_t)ty->n * sizeof *tmp);
    qsort(tmp, (size_t)ty->n, sizeof *tmp, dsp_cmp_double);
    ty->median = tmp[ty->n / 2];
}

double dsp_young_for(const ds_engine_t *e, const dsp_t *s, int32_t v, int64_t now)
{
    if (s->cfg.young_victim <= 0 || s->typical.median <= 0 || e->js[v].status != DS_JS_RUNNING) return 0;
    double left = s->cfg.young_victim * s->typical.median - (double)(now - e->js[v].last_start);
    return left > 0 ? left : 0;
}
