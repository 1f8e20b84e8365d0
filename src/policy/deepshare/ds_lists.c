/* ds_lists.c: DeepShare's unordered job lists with positions (dsp_list_t), the bottom of its bookkeeping:
 * the running jobs and the solo lists (running unshared jobs by partition, class and GPU count). */
#include "ds_internal.h"

void dsp_list_push(dsp_list_t *l, int32_t *pos, int32_t j)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->v = ds_xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    pos[j] = l->n;
    l->v[l->n++] = j;
}

void dsp_list_remove(dsp_list_t *l, int32_t *pos, int32_t j)
{
    int32_t i = pos[j];
    if (i < 0) return;
    DS_ASSERT(i < l->n && l->v[i] == j);
    int32_t last = l->v[--l->n];
    l->v[i] = last;
    pos[last] = i;
    pos[j] = -1;
}
