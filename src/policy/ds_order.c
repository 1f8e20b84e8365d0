/* ds_order.c: DeepShare's queue orders (SPEC 4.3): QAD band first, so a prediction can never lift a
 * well-served tenant above an under-served one; predicted remaining time only inside a band. */
#include "ds_internal.h"

#include <stdlib.h>

static int cmp_key(const void *x, const void *y)
{
    const dsp_key_t *a = x, *b = y;
    if (a->major != b->major) return a->major < b->major ? -1 : 1;
    if (a->rem != b->rem) return a->rem < b->rem ? -1 : 1;
    if (a->submit != b->submit) return a->submit < b->submit ? -1 : 1;
    return (a->job > b->job) - (a->job < b->job);
}

/* major: 0 tenant, 1 band, 2 none. */
static void sort_by(const ds_engine_t *e, dsp_t *s, int32_t *v, int32_t n, int64_t now, int major)
{
    if (n < 2) return;
    dsp_key_t *keys = s->keys;
    for (int32_t i = 0; i < n; i++) {
        int32_t j = v[i], ten = e->trace->jobs[j].tenant;
        keys[i].job = j;
        keys[i].major = major == 0 ? ten : major == 1 ? dsp_band(s, ten) : 0;
        keys[i].rem = s->cfg.prediction ? dsp_remaining(e, s, j, now) : 0.0;
        keys[i].submit = e->trace->jobs[j].submit;
    }
    qsort(keys, (size_t)n, sizeof *keys, cmp_key);
    for (int32_t i = 0; i < n; i++) v[i] = keys[i].job;
}

void dsp_sort_tenant_order(const ds_engine_t *e, dsp_t *s, int32_t *v, int32_t n, int64_t now) { sort_by(e, s, v, n, now, 0); }
void dsp_sort_qg(const ds_engine_t *e, dsp_t *s, int32_t *v, int32_t n, int64_t now) { sort_by(e, s, v, n, now, 1); }
void dsp_sort_qb(const ds_engine_t *e, dsp_t *s, int32_t *v, int32_t n, int64_t now) { sort_by(e, s, v, n, now, 2); }
