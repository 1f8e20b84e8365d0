/* trace.c: the in-memory trace (jobs, tenants, interned names) and its reader for tenant files. */
#include "deepshare/trace.h"
#include "deepshare/csv.h"

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

int ds_trace_read_tenants(ds_trace_t *t, const char *path, int gpus_per_node, ds_error_t *err)
{
    ds_csv_t c;
    int rc = ds_csv_open_header(&c, path, "expected a header 'tenant,quota_gpus' or ',num'", err);
    if (rc) return rc;
    int name_col = 0, qcol, nodes = 0;
    int ncols = c.nfields;
    if ((qcol = ds_csv_col(&c, "num")) >= 0) nodes = 1;
    else if ((qcol = ds_csv_col(&c, "nodes")) >= 0) nodes = 1;
    else if ((qcol = ds_csv_col(&c, "quota_gpus")) < 0 && (qcol = ds_csv_col(&c, "quota")) < 0) {
        ds_error_set(err, path, c.line, NULL,
                     "header needs a quota column: 'quota_gpus' (GPUs) or 'num' (nodes of %d GPUs)", gpus_per_node);
        ds_csv_close(&c);
        return DS_EPARSE;
    }
    int nc = ds_csv_col(&c, "tenant");
    if (nc < 0) nc = ds_csv_col(&c, "vc");
    if (nc >= 0) name_col = nc;
    else if (qcol == 0) name_col = 1;
    char qname[64];
    snprintf(qname, sizeof qname, "%s", c.fields[qcol][0] ? c.fields[qcol] : "num");
    while ((rc = ds_csv_row(&c, ncols, err)) > 0) {
        const char *name = c.fields[name_col];
        if (!*name) {
            ds_error_set(err, path, c.line, "tenant", "empty tenant name");
            rc = DS_EPARSE;
            break;
        }
        if (strlen(name) >= sizeof t->tenants[0].name) {
            ds_error_set(err, path, c.line, "tenant", "tenant name longer than %zu characters",
                         sizeof t->tenants[0].name - 1);
            rc = DS_EPARSE;
            break;
        }
        int64_t q;
        if ((rc = ds_csv_i64(&c, qcol, qname, 0, &q, err))) break;
        if (nodes) q *= gpus_per_node;
        if (q > 100000000) {
            ds_error_set(err, path, c.line, qname, "quota %lld is implausibly large", (long long)q);
            rc = DS_EPARSE;
            break;
        }
        if (ds_trace_find_tenant(t, name) >= 0) {
            ds_error_set(err, path, c.line, "tenant", "duplicate tenant '%s'", name);
            rc = DS_EPARSE;
            break;
        }
        ds_trace_add_tenant(t, name, (int32_t)q);
    }
    ds_csv_close(&c);
    if (rc < 0) return rc;
    if (t->ntenants == 0) {
        ds_error_set(err, path, 0, NULL, "no tenants in file");
        return DS_EPARSE;
    }
    return DS_OK;
}
