/* strtab.c: string interning with an open-addressing hash, used for users, models and datasets. */
#include "deepshare/trace.h"

#include <stdlib.h>
#include <string.h>

static uint32_t hash_str(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

static void rehash(ds_strtab_t *t, int32_t hcap)
{
    free(t->hash);
    t->hash = ds_xmalloc((size_t)hcap * sizeof *t->hash);
    for (int32_t i = 0; i < hcap; i++) t->hash[i] = -1;
    t->hcap = hcap;
    for (int32_t i = 0; i < t->n; i++) {
        uint32_t h = hash_str(t->s[i]) & (uint32_t)(hcap - 1);
        while (t->hash[h] >= 0) h = (h + 1) & (uint32_t)(hcap - 1);
        t->hash[h] = i;
    }
}

int32_t ds_strtab_find(const ds_strtab_t *t, const char *s)
{
    if (!t->hcap) return -1;
    uint32_t h = hash_str(s) & (uint32_t)(t->hcap - 1);
    while (t->hash[h] >= 0) {
        if (strcmp(t->s[t->hash[h]], s) == 0) return t->hash[h];
        h = (h + 1) & (uint32_t)(t->hcap - 1);
    }
    return -1;
}

int32_t ds_strtab_intern(ds_strtab_t *t, const char *s)
{
    int32_t i = ds_strtab_find(t, s);
    if (i >= 0) return i;
    if (t->n == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->s = ds_xrealloc(t->s, (size_t)t->cap * sizeof *t->s);
    }
    size_t len = strlen(s) + 1;
    t->s[t->n] = memcpy(ds_xmalloc(len), s, len);
    t->n++;
    if (t->n * 2 > t->hcap) rehash(t, t->hcap ? t->hcap * 2 : 64);
    else {
        uint32_t h = hash_str(s) & (uint32_t)(t->hcap - 1);
        while (t->hash[h] >= 0) h = (h + 1) & (uint32_t)(t->hcap - 1);
        t->hash[h] = t->n - 1;
    }
    return t->n - 1;
}

void ds_strtab_free(ds_strtab_t *t)
{
    for (int32_t i = 0; i < t->n; i++) free(t->s[i]);
    free(t->s);
    free(t->hash);
    memset(t, 0, sizeof *t);
}
