/* idmap.h: an open-addressing map from 64-bit job ids to dense indices. */
#ifndef DS_IDMAP_H
#define DS_IDMAP_H

#include "deepshare/common.h"

typedef struct ds_idmap {
    int64_t *keys;
    int32_t *vals;
    uint8_t *used;
    int32_t n, cap;
} ds_idmap_t;

void ds_idmap_init(ds_idmap_t *m);
void ds_idmap_free(ds_idmap_t *m);
/* Returns the existing value when key is present (and does not overwrite), else inserts val and returns -1. */
int32_t ds_idmap_put(ds_idmap_t *m, int64_t key, int32_t val);
int32_t ds_idmap_get(const ds_idmap_t *m, int64_t key); /* -1 when absent */

#endif
