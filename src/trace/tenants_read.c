/* tenants_read.c: reads a tenant file (tenant,quota_gpus or Venus's ,num of nodes) into a trace. */
#include "deepshare/csv.h"
#include "deepshare/trace.h"

#include <stdio.h>
#include <string.h>

int ds_trace_read_tenants(ds_trace_t *t, const char *path, int gpus_per_node, ds_error_t *err)
{
    if (gpus_per_node < 1) {
        ds_error_set(err, path, 0, NULL, "GPUs per node must be at least 1, got %d", gpus_per_node);
        return DS_EINVAL;
    }
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
