/* ds_workcons.c: DeepShare's work-conserving stage (docs/policy.md, "Work conservation"): after the
 * guaranteed and best-effort queues are placed, GPUs still idle go to the pending jobs that
 * classification left over, as BE, to the tenant holding the fewest GPUs per quota GPU first. */
#include "ds_internal.h"

#include <math.h>
#include <stdlib.h>

/* GPUs held per quota GPU; tenants without quota come last (ties: fewer GPUs held, lower index). */
static int tenant_before(const ds_engine_t *e, int32_t a, int32_t b)
{
    int64_t ha = e->tenant_g_gpus[a] + e->tenant_be_gpus[a], hb = e->tenant_g_gpus[b] + e->tenant_be_gpus[b];
    int64_t qa = e->tenant_quota[a], qb = e->tenant_quota[b];
    if ((qa > 0) != (qb > 0)) return qa > 0;
    if (qa > 0 && ha * qb != hb * qa) return ha * qb < hb * qa; /* ha/qa < hb/qb without rounding */
    if (ha != hb) return ha < hb;
    return a < b;
}

static void sift_down(const ds_engine_t *e, int32_t *h, int32_t n, int32_t i)
{
    for (;;) {
        int32_t l = 2 * i + 1, m = i;
        if (l < n && tenant_before(e, h[l], h[m])) m = l;
        if (l + 1 < n && tenant_before(e, h[l + 1], h[m])) m = l + 1;
        if (m == i) return;
        int32_t x = h[i];
        h[i] = h[m], h[m] = x;
        i = m;
    }
}

void dsp_work_conserve(ds_engine_t *e, dsp_t *s, int32_t part, int64_t now)
{
    const ds_trace_t *t = e->trace;
    dsp_list_t *pl = &s->pend[part];
    /* Candidates, copied: starting a job edits the pending list. Grouped by tenant in its own order. */
    int32_t n = 0;
    for (int32_t k = 0; k < pl->n; k++) {
        int32_t j = pl->v[k];
        if (s->cls_pass[j] != s->st.passes && t->jobs[j].gpus <= e->parts[part].gpus_free) s->wcv[n++] = j;
    }
    if (!n) return;
    /* Runs of one tenant each: cursor[r] walks run r; heap orders the runs' tenants. */
    int32_t nr = 0, *cur = s->run_at, *end = s->wc_end;
    for (int32_t k = 0; k < n; k++)
        if (k == 0 || t->jobs[s->wcv[k]].tenant != t->jobs[s->wcv[k - 1]].tenant) {
            if (nr) end[nr - 1] = k;
            cur[nr++] = k;
        }
    end[nr - 1] = n;
    int32_t *heap = s->heap, hn = 0;
    for (int32_t r = 0; r < nr; r++) {
        s->cursor[t->jobs[s->wcv[cur[r]]].tenant] = r;
        heap[hn++] = t->jobs[s->wcv[cur[r]]].tenant;
    }
    for (int32_t i = hn / 2 - 1; i >= 0; i--) sift_down(e, heap, hn, i);
    int32_t buf[256];
    while (hn && e->parts[part].gpus_free > 0) {
        int32_t ten = heap[0], r = s->cursor[ten], started = 0;
        while (cur[r] < end[r] && !started) {
            int32_t j = s->wcv[cur[r]++], g = t->jobs[j].gpus;
            /* Free GPUs only shrink during this stage: a job that does not fit now is done with. */
            if (!ds_engine_startable(e, j) || g > e->parts[part].gpus_free) continue;
            int32_t *out = g <= 256 ? buf : ds_xmalloc((size_t)g * sizeof *out);
            int masked = s->nresv && dsp_resv_mask(e, s, j, now);
            int found = dsp_take_free(e, s, j, part, masked ? s->blocked : NULL, now, out);
            if (masked) dsp_resv_unmask(s);
            if (found) {
                ds_engine_set_class(e, j, DS_CLASS_BE);
                s->wc[j] = 1;
                dsp_start(e, s, j, out, -1, now);
                s->st.wc_starts++;
                s->st.wc_gpus += g;
                started = 1;
            }
            if (out != buf) free(out);
        }
        if (cur[r] >= end[r]) heap[0] = heap[--hn];
        sift_down(e, heap, hn, 0);
    }
}
