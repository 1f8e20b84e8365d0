/* trace.c: the in-memory trace (jobs, tenants, interned names); the readers that fill it live in
 * src/trace. */
#include "deepshare/trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void ds_trace_init(ds_trace_t *t)
{
    memset(t, 0, sizeof *t);
}

void ds_trace_free(ds_trace_t *t)
{
    free(t->jobs);
    free(t->tenants);
    free(t->thash);
    ds_strtab_free(&t->users);
    ds_strtab_free(&t->models);
    ds_strtab_free(&t->datasets);
    memset(t, 0, sizeof *t);
}

ds_job_t *ds_trace_add_job(ds_trace_t *t)
{
    if (t->njobs == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 1024;
        t->jobs = ds_xrealloc(t->jobs, (size_t)t->cap * sizeof *t->jobs);
    }
    ds_job_t *j = &t->jobs[t->njobs++];
    memset(j, 0, sizeof *j);
    j->model = j->dataset = -1;
    j->gtype = j->ref_gtype = -1;
    j->gmask = 0;
    j->gpu_util = 100.0f;
    j->gmem_util = 100.0f;
    j->estimate = NAN;
    return j;
}

static uint32_t name_hash(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
    return h;
}

int32_t ds_trace_find_tenant(const ds_trace_t *t, const char *name)
{
    if (!t->thcap) return -1;
    for (uint32_t h = name_hash(name) & (uint32_t)(t->thcap - 1);; h = (h + 1) & (uint32_t)(t->thcap - 1)) {
        int32_t i = t->thash[h];
        if (i < 0) return -1;
        if (strcmp(t->tenants[i].name, name) == 0) return i;
    }
}

/* Adds tenant i to the index unless its name is there already (the first of duplicates wins, as a scan would). */
static void index_tenant(ds_trace_t *t, int32_t i)
{
    if (ds_trace_find_tenant(t, t->tenants[i].name) >= 0) return;
    uint32_t h = name_hash(t->tenants[i].name) & (uint32_t)(t->thcap - 1);
    while (t->thash[h] >= 0) h = (h + 1) & (uint32_t)(t->thcap - 1);
    t->thash[h] = i;
}

int32_t ds_trace_add_tenant(ds_trace_t *t, const char *name, int32_t quota_gpus)
{
    if (t->ntenants == t->tcap) {
        t->tcap = t->tcap ? t->tcap * 2 : 16;
        t->tenants = ds_xrealloc(t->tenants, (size_t)t->tcap * sizeof *t->tenants);
    }
    ds_tenant_t *x = &t->tenants[t->ntenants];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    x->quota_gpus = quota_gpus;
    int32_t i = t->ntenants++;
    if (t->ntenants * 2 > t->thcap) {
        free(t->thash);
        t->thcap = t->thcap ? t->thcap * 2 : 64;
        while (t->ntenants * 2 > t->thcap) t->thcap *= 2;
        t->thash = ds_xmalloc((size_t)t->thcap * sizeof *t->thash);
        for (int32_t k = 0; k < t->thcap; k++) t->thash[k] = -1;
        for (int32_t k = 0; k < t->ntenants; k++) index_tenant(t, k);
    } else {
        index_tenant(t, i);
    }
    return i;
}

const char *ds_trace_model_name(const ds_trace_t *t, const ds_job_t *j)
{
    return j->model >= 0 ? t->models.s[j->model] : "";
}

const char *ds_trace_dataset_name(const ds_trace_t *t, const ds_job_t *j)
{
    return j->dataset >= 0 ? t->datasets.s[j->dataset] : "";
}

int32_t ds_trace_find_gtype(const ds_trace_t *t, const char *name)
{
    for (int32_t i = 0; i < t->ngtypes; i++)
        if (!strcasecmp(t->gtypes[i].name, name)) return i;
    return -1;
}

int32_t ds_trace_add_gtype(ds_trace_t *t, const char *name)
{
    if (t->ngtypes >= DS_MAX_GPU_TYPES || !*name || strlen(name) >= DS_GTYPE_NAME || ds_trace_find_gtype(t, name) >= 0)
        return -1;
    ds_gtype_t *g = &t->gtypes[t->ngtypes];
    memset(g, 0, sizeof *g);
    snprintf(g->name, sizeof g->name, "%s", name);
    return t->ngtypes++;
}

int64_t ds_trace_total_quota(const ds_trace_t *t)
{
    int64_t s = 0;
    for (int32_t i = 0; i < t->ntenants; i++) s += t->tenants[i].quota_gpus;
    return s;
}

void ds_trace_scale_arrivals(ds_trace_t *t, double x)
{
    if (t->njobs == 0 || !(x > 0)) return;
    int64_t s0 = t->jobs[0].submit;
    /* Rounding a non-decreasing sequence keeps it non-decreasing: trace order and ties survive. */
    for (int32_t j = 0; j < t->njobs; j++)
        t->jobs[j].submit = s0 + (int64_t)llround((double)(t->jobs[j].submit - s0) / x);
}
