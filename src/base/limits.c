/* limits.c: time limits as runtime information (deepshare/limits.h): a cap on any prediction, and the
 * user's learned ratio of run time to limit where it has predicted better than the base predictor. */
#include "deepshare/limits.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ds_limits_init(ds_limits_t *l, int min_history)
{
    memset(l, 0, sizeof *l);
    /* a variance needs two samples */
    l->min_history = min_history < 2 ? 2 : min_history;
    l->last_now = INT64_MIN;
}

void ds_limits_free(ds_limits_t *l)
{
    ds_strtab_free(&l->keys);
    free(l->st);
    memset(l, 0, sizeof *l);
}

void ds_limits_reset(ds_limits_t *l)
{
    int m = l->min_history;
    ds_limits_free(l);
    ds_limits_init(l, m);
}

static void key_of(char *k, size_t n, const char *tenant, const char *user)
{
    if (user && *user) snprintf(k, n, "%s/%s", tenant, user);
    else snprintf(k, n, "%s", tenant);
}

static ds_limit_stat_t *stat_of(ds_limits_t *l, const char *key)
{
    int32_t i = ds_strtab_intern(&l->keys, key);
    if (i >= l->cap) {
        int32_t nc = l->cap ? l->cap * 2 : 16;
        while (nc <= i) nc *= 2;
        l->st = ds_xrealloc(l->st, (size_t)nc * sizeof *l->st);
        memset(l->st + l->cap, 0, (size_t)(nc - l->cap) * sizeof *l->st);
        l->cap = nc;
    }
    return &l->st[i];
}

static const ds_limit_stat_t *find(const ds_limits_t *l, const char *key)
{
    int32_t i = ds_strtab_find(&l->keys, key);
    return i >= 0 ? &l->st[i] : NULL;
}

void ds_limits_learn(ds_limits_t *l, const char *tenant, const char *user, double seconds, double limit,
                     double base)
{
    if (!(limit > 0) || !isfinite(limit) || !(seconds >= 0) || !isfinite(seconds) || !(base > 0)) return;
    double run = log(seconds < 1 ? 1 : seconds), r = run - log(limit);
    double b = run - log(base < limit ? base : limit);
    char key[192];
    for (int level = 0; level < 2; level++) {
        if (!level && !(user && *user)) continue;
        key_of(key, sizeof key, tenant, level ? NULL : user);
        ds_limit_stat_t *s = stat_of(l, key);
        s->n++, s->sum += r, s->sumsq += r * r, s->base_sse += b * b;
    }
}

/* The ratio's mean squared log error as an unbiased variance; < 0 when it is not to be trusted yet. */
static double ratio_mse(const ds_limit_stat_t *s, int min_history)
{
    if (!s || s->n < min_history) return -1;
    double n = (double)s->n, v = (s->sumsq - s->sum * s->sum / n) / (n - 1);
    return v < 0 ? 0 : v;
}

double ds_limits_predict(const ds_limits_t *l, const char *tenant, const char *user, double limit, double base)
{
    if (!(limit > 0) || !isfinite(limit)) return base;
    double capped = base < limit ? base : limit;
    char key[192];
    for (int level = 0; level < 2; level++) {
        if (!level && !(user && *user)) continue;
        key_of(key, sizeof key, tenant, level ? NULL : user);
        const ds_limit_stat_t *s = find(l, key);
        double v = ratio_mse(s, l->min_history);
        if (v < 0) continue;
        /* the finer level decides once it has enough jobs; the base keeps it where it erred no more */
        if (v < s->base_sse / (double)s->n) {
            double p = limit * exp(s->sum / (double)s->n);
            return p < 1 ? 1 : p > limit ? limit : p;
        }
        return capped;
    }
    return capped;
}
