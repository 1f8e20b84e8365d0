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

int64_t ds_trace_total_quota(const ds_trace_t *t)
{
    int64_t s = 0;
    for (int32_t i = 0; i < t->ntenants; i++) s += t->tenants[i].quota_gpus;
    return s;
}

int ds_trace_read_tenants(ds_trace_t *t, const char *path, int gpus_per_node, ds_error_t *err)
{
    if (gpus_per_node < 1) {
        ds_error_set(err, path, 0, NULL, "GPUs per node must be at least 1, got %d", gpus_per_node);
        return DS_EINVAL;
    }
    ds_csv_t c;
    int rc = ds_csv_open(&c, path, err);
    if (rc) return rc;
    rc = ds_csv_next(&c, err);
    if (rc <= 0) {
        if (rc == 0) ds_error_set(err, path, 0, NULL, "empty file: expected a header 'tenant,quota_gpus' or ',num'");
        ds_csv_close(&c);
        return rc ? rc : DS_EPARSE;
    }
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
    /* a header with only a quota column has no names: every row would be read past its last field */
    if (name_col >= ncols || name_col == qcol) {
        ds_error_set(err, path, c.line, NULL, "header needs a tenant name column ('tenant' or 'vc', or an unnamed "
                     "first column) besides the quota column");
        ds_csv_close(&c);
        return DS_EPARSE;
    }
    char qname[64];
    snprintf(qname, sizeof qname, "%s", c.fields[qcol][0] ? c.fields[qcol] : "num");
    int64_t qmax = nodes ? DS_MAX_QUOTA_GPUS / gpus_per_node : DS_MAX_QUOTA_GPUS;
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
        /* bounded before 'num x gpus_per_node' so the product can neither overflow nor wrap */
        if ((rc = ds_csv_int(&c, qcol, qname, 0, qmax, &q, err))) break;
        if (nodes) q *= gpus_per_node;
        if (ds_trace_find_tenant(t, name) >= 0) {
            ds_error_set(err, path, c.line, "tenant", "duplicate tenant '%s'", name);
            rc = DS_EPARSE;
            break;
        }
        if (t->ntenants == DS_MAX_TENANTS) {
            ds_error_set(err, path, c.line, "tenant", "more than %d tenants", DS_MAX_TENANTS);
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
