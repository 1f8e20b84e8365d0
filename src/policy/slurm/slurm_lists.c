/* slurm_lists.c: the simulated Slurm's job lists with lazy removal: an entry is live while its stamp
 * matches the job's (a start or a requeue bumps the job's stamp, which kills its old entries at once), and
 * a list is compacted when dead entries outnumber live ones. Bottom of the folder: calls nothing of it. */
#include "slurm_internal.h"

#include <stdlib.h>
#include <string.h>

static void list_reserve(slm_list_t *l, int32_t n)
{
    if (n <= l->cap) return;
    int32_t cap = l->cap ? l->cap : 16;
    while (cap < n) cap *= 2;
    l->job = ds_xrealloc(l->job, (size_t)cap * sizeof *l->job);
    l->stamp = ds_xrealloc(l->stamp, (size_t)cap * sizeof *l->stamp);
    l->cap = cap;
}

void slm_list_compact(slm_list_t *l, const uint32_t *stamp)
{
    int32_t w = 0;
    for (int32_t i = 0; i < l->n; i++)
        if (l->stamp[i] == stamp[l->job[i]]) l->job[w] = l->job[i], l->stamp[w] = l->stamp[i], w++;
    l->n = l->live = w;
}

void slm_list_push(slm_list_t *l, const uint32_t *stamp, int32_t job)
{
    list_reserve(l, l->n + 1);
    l->job[l->n] = job;
    l->stamp[l->n++] = stamp[job];
    l->live++;
}

/* Inserts before the first live entry that does not precede job (less(a, b): a goes before b). */
void slm_list_insert(slm_list_t *l, const uint32_t *stamp, int32_t job, const slm_state_t *s,
                     int (*less)(const slm_state_t *, int32_t, int32_t))
{
    if (l->n - l->live > 64 && l->n - l->live > l->live) slm_list_compact(l, stamp);
    list_reserve(l, l->n + 1);
    int32_t a = 0, b = l->n;
    while (a < b) { /* dead entries keep their old key, which stays sorted */
        int32_t m = a + (b - a) / 2;
        if (less(s, l->job[m], job)) a = m + 1;
        else b = m;
    }
    memmove(&l->job[a + 1], &l->job[a], (size_t)(l->n - a) * sizeof *l->job);
    memmove(&l->stamp[a + 1], &l->stamp[a], (size_t)(l->n - a) * sizeof *l->stamp);
    l->job[a] = job;
    l->stamp[a] = stamp[job];
    l->n++;
    l->live++;
}

void slm_list_free(slm_list_t *l)
{
    free(l->job);
    free(l->stamp);
    memset(l, 0, sizeof *l);
}
