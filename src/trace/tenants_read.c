/* tenants_read.c: reads a tenant file (tenant,quota_gpus or Venus's ,num of nodes) into a trace. */
#include "deepshare/csv.h"
#include "deepshare/trace.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* Finds the per-type quota columns "quota_<type>" (docs/heterogeneous.md): their type indices in tcol order
 * (types created with the cluster defaults when the trace has none yet). Returns how many, or -1 (err). */
static int typed_columns(ds_trace_t *t, const ds_csv_t *c, const char *path, int *tcol, int32_t *ttype, ds_error_t *err)
{
    int n = 0, had = t->ngtypes;
    for (int k = 0; k < c->nfields; k++) {
        const char *h = c->fields[k];
        if (strncasecmp(h, "quota_", 6) || !strcasecmp(h, "quota_gpus")) continue;
        int32_t ty = ds_trace_find_gtype(t, h + 6);
        if (ty < 0 && had) {
            char known[DS_MAX_GPU_TYPES * (DS_GTYPE_NAME + 2)] = "";
            for (int32_t i = 0; i < t->ngtypes; i++)
                snprintf(known + strlen(known), sizeof known - strlen(known), "%s%s", i ? ", " : "", t->gtypes[i].name);
            ds_error_set(err, path, c->line, h, "unknown GPU type '%s' (the cluster's types: %s)", h + 6, known);
            return -1;
        }
        if (ty < 0 && (ty = ds_trace_new_gtype(t, h + 6, path, c->line, h, err)) < 0) return -1;
        for (int q = 0; q < n; q++)
            if (ttype[q] == ty) {
                ds_error_set(err, path, c->line, h, "two quota columns for GPU type '%s'", t->gtypes[ty].name);
                return -1;
            }
        tcol[n] = k;
        ttype[n++] = ty;
    }
    return n;
}

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
    int tcol[DS_CSV_MAX_FIELDS];
    int32_t ttype[DS_CSV_MAX_FIELDS];
    int ntyped = typed_columns(t, &c, path, tcol, ttype, err);
    if (ntyped < 0) {
        ds_csv_close(&c);
        return DS_EPARSE;
    }
    if ((qcol = ds_csv_col(&c, "num")) >= 0) nodes = 1;
    else if ((qcol = ds_csv_col(&c, "nodes")) >= 0) nodes = 1;
    else if ((qcol = ds_csv_col(&c, "quota_gpus")) < 0 && (qcol = ds_csv_col(&c, "quota")) < 0 && ntyped == 0) {
        ds_error_set(err, path, c.line, NULL,
                     "header needs a quota column: 'quota_gpus' (GPUs) or 'num' (nodes of %d GPUs)", gpus_per_node);
        ds_csv_close(&c);
        return DS_EPARSE;
    }
    if (ntyped && nodes) {
        ds_error_set(err, path, c.line, c.fields[qcol], "per-type quotas (quota_<type>) are in GPUs: a node count "
                     "column does not go with them");
        ds_csv_close(&c);
        return DS_EPARSE;
    }
    if (!ntyped && t->ngtypes > 1) {
        ds_error_set(err, path, c.line, NULL, "the cluster has %d GPU types: give each tenant's quota per type "
                     "(columns quota_%s, quota_%s, ...)", t->ngtypes, t->gtypes[0].name, t->gtypes[1].name);
        ds_csv_close(&c);
        return DS_EPARSE;
    }
    int nc = ds_csv_col(&c, "tenant");
    if (nc < 0) nc = ds_csv_col(&c, "vc");
    if (nc >= 0) name_col = nc;
    else if (qcol == 0 || (qcol < 0 && ntyped && tcol[0] == 0)) name_col = 1;
    /* a header with only a quota column has no names: every row would be read past its last field */
    int name_is_quota = name_col == qcol;
    for (int k = 0; k < ntyped; k++) name_is_quota |= name_col == tcol[k];
    if (name_col >= ncols || name_is_quota) {
        ds_error_set(err, path, c.line, NULL, "header needs a tenant name column ('tenant' or 'vc', or an unnamed "
                     "first column) besides the quota column");
        ds_csv_close(&c);
        return DS_EPARSE;
    }
    char qname[64];
    snprintf(qname, sizeof qname, "%s", qcol < 0 ? "quota_gpus" : c.fields[qcol][0] ? c.fields[qcol] : "num");
    char tname[DS_CSV_MAX_FIELDS][DS_GTYPE_NAME + 8];
    for (int k = 0; k < ntyped; k++) snprintf(tname[k], sizeof tname[k], "quota_%s", t->gtypes[ttype[k]].name);
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
        int64_t q = 0, qt[DS_MAX_GPU_TYPES] = {0};
        /* bounded before 'num x gpus_per_node' so the product can neither overflow nor wrap */
        if (qcol >= 0 && (rc = ds_csv_int(&c, qcol, qname, 0, qmax, &q, err))) break;
        if (nodes) q *= gpus_per_node;
        if (ntyped) {
            int64_t sum = 0;
            int bad = 0;
            for (int k = 0; k < ntyped && !bad; k++) {
                bad = ds_csv_int(&c, tcol[k], tname[k], 0, DS_MAX_QUOTA_GPUS, &qt[ttype[k]], err);
                sum += qt[ttype[k]];
            }
            if (bad) {
                rc = bad;
                break;
            }
            if (sum > DS_MAX_QUOTA_GPUS) {
                ds_error_set(err, path, c.line, tname[0], "quotas sum to %lld GPUs, over the limit %d", (long long)sum,
                             DS_MAX_QUOTA_GPUS);
                rc = DS_EPARSE;
                break;
            }
            if (qcol >= 0 && q != sum) {
                ds_error_set(err, path, c.line, qname, "%lld is not the sum of the per-type quotas (%lld)", (long long)q,
                             (long long)sum);
                rc = DS_EPARSE;
                break;
            }
            q = sum;
        } else if (t->ngtypes == 1) {
            qt[0] = q;
        }
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
        int32_t ti = ds_trace_add_tenant(t, name, (int32_t)q);
        for (int32_t k = 0; k < t->ngtypes; k++) t->tenants[ti].quota_t[k] = (int32_t)qt[k];
    }
    ds_csv_close(&c);
    if (rc < 0) return rc;
    if (t->ntenants == 0) {
        ds_error_set(err, path, 0, NULL, "no tenants in file");
        return DS_EPARSE;
    }
    return DS_OK;
}
