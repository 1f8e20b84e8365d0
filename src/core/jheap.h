/* jheap.h: an indexed binary min-heap of job indices with a caller-supplied order, supporting
 * removal of any member (policies keep one per partition); internal to the engine (src/core, src/policy). */
#ifndef DS_JHEAP_H
#define DS_JHEAP_H

#include "deepshare/common.h"

/* Negative when job a goes before job b. */
typedef int (*ds_jheap_cmp)(const void *ctx, int32_t a, int32_t b);

typedef struct ds_jheap {
    int32_t *a;     /* heap array of job indices */
    int32_t n, cap;
    int32_t *pos;   /* shared: pos[job] = index in its heap or -1 (owned by the caller) */
    ds_jheap_cmp cmp;
    const void *ctx;
} ds_jheap_t;

void ds_jheap_init(ds_jheap_t *h, int32_t *pos, ds_jheap_cmp cmp, const void *ctx);
void ds_jheap_free(ds_jheap_t *h);
void ds_jheap_push(ds_jheap_t *h, int32_t job);
int32_t ds_jheap_top(const ds_jheap_t *h); /* -1 when empty */
int32_t ds_jheap_pop(ds_jheap_t *h);
void ds_jheap_remove(ds_jheap_t *h, int32_t job);

#endif
