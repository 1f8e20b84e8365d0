/* trace.c: the in-memory trace (jobs, tenants, interned names); the readers that fill it live in
 * src/trace. */
#include "deepshare/trace.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ds_trace_init(ds_trace_t *t)
{
    memset(t, 0, sizeof *t);
}

void ds_trace_free(ds_trace_t *t)
{
    free(t->jobs);
    free(t->tenants);
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
    j->gpu_util = 100.0f;
    j->gmem_util = 100.0f;
    j->estimate = NAN;
    return j;
}

int32_t ds_trace_find_tenant(const ds_trace_t *t, const char *name)
{
    for (int32_t i = 0; i < t->ntenants; i++)
        if (strcmp(t->tenants[i].name, name) == 0) return i;
    return -1;
}

int32_t ds_trace_add_tenant(ds_trace_t *t, const char *name, int32_t quota_gpus)
{
    t->tenants = ds_xrealloc(t->tenants, (size_t)(t->ntenants + 1) * sizeof *t->tenants);
    ds_tenant_t *x = &t->tenants[t->ntenants];
    memset(x, 0, sizeof *x);
    snprintf(x->name, sizeof x->name, "%s", name);
    x->quota_gpus = quota_gpus;
    return t->ntenants++;
}

const char *ds_trace_model_name(const ds_trace_t *t, const ds_job_t *j)
{
    return j->model >= 0 ? t->models.s[j->model] : "";
}

const char *ds_trace_dataset_name(const ds_trace_t *t, const ds_job_t *j)
{
    return j->dataset >= 0 ? t->datasets.s[j->dataset] : "";
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
