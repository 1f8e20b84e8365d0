/* idmap.c: open-addressing hash map from job id to index (linear probing, power-of-two capacity). */
#include "deepshare/idmap.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return x;
}

void ds_idmap_init(ds_idmap_t *m) { memset(m, 0, sizeof *m); }

void ds_idmap_free(ds_idmap_t *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

static void grow(ds_idmap_t *m)
{
    ds_idmap_t o = *m;
    m->cap = o.cap ? o.cap * 2 : 1024;
    m->keys = ds_xmalloc((size_t)m->cap * sizeof *m->keys);
    m->vals = ds_xmalloc((size_t)m->cap * sizeof *m->vals);
    m->used = ds_xcalloc((size_t)m->cap, 1);
    m->n = 0;
    for (int32_t i = 0; i < o.cap; i++)
        if (o.used[i]) ds_idmap_put(m, o.keys[i], o.vals[i]);
    free(o.keys);
    free(o.vals);
    free(o.used);
}

int32_t ds_idmap_put(ds_idmap_t *m, int64_t key, int32_t val)
{
    if ((m->n + 1) * 2 > m->cap) grow(m);
    uint64_t h = mix((uint64_t)key) & (uint64_t)(m->cap - 1);
    while (m->used[h]) {
        if (m->keys[h] == key) return m->vals[h];
        h = (h + 1) & (uint64_t)(m->cap - 1);
    }
    m->used[h] = 1;
    m->keys[h] = key;
    m->vals[h] = val;
    m->n++;
    return -1;
}

int32_t ds_idmap_get(const ds_idmap_t *m, int64_t key)
{
    if (!m->cap) return -1;
    uint64_t h = mix((uint64_t)key) & (uint64_t)(m->cap - 1);
    while (m->used[h]) {
        if (m->keys[h] == key) return m->vals[h];
        h = (h + 1) & (uint64_t)(m->cap - 1);
    }
    return -1;
}
