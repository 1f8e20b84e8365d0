/* cluster_read.c: reads the node types of a heterogeneous cluster (a CSV, or a "type:nodes,..." list). */
#include "deepshare/csv.h"
#include "deepshare/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A type name is what a job's gpu_type column and a tenant file's quota_<type> header carry: letters,
 * digits and -_. only, so that it survives CSV headers, Slurm GRES strings and JSON unchanged. */
int ds_gtype_name_ok(const char *s, size_t n)
{
    if (n == 0 || n >= DS_GTYPE_NAME) return 0;
    for (size_t i = 0; i < n; i++)
        if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9') ||
              s[i] == '-' || s[i] == '_' || s[i] == '.'))
            return 0;
    return 1;
}

int32_t ds_trace_new_gtype(ds_trace_t *t, const char *name, const char *path, long line, const char *field, ds_error_t *err)
{
    if (!ds_gtype_name_ok(name, strlen(name))) {
        ds_error_set(err, path, line, field, "'%s' is not a GPU type name (1-%d letters, digits, '-', '_' or '.')", name,
                     DS_GTYPE_NAME - 1);
        return -1;
    }
    if (!strcasecmp(name, "any")) {
        ds_error_set(err, path, line, field, "'any' is reserved (a job asking for no particular type)");
        return -1;
    }
    if (ds_trace_find_gtype(t, name) >= 0) {
        ds_error_set(err, path, line, field, "duplicate GPU type '%s'", name);
        return -1;
    }
    if (t->ngtypes >= DS_MAX_GPU_TYPES) {
        ds_error_set(err, path, line, field, "more than %d GPU types", DS_MAX_GPU_TYPES);
        return -1;
    }
    return ds_trace_add_gtype(t, name);
}

int ds_trace_read_cluster(ds_trace_t *t, const char *path, ds_error_t *err)
{
    if (t->ngtypes) {
        ds_error_set(err, path, 0, NULL, "node types were given twice");
        return DS_EINVAL;
    }
    ds_csv_t c;
    int rc = ds_csv_open_header(&c, path, "expected a header 'gpu_type,nodes,gpus_per_node,...'", err);
    if (rc) return rc;
    enum { K_TYPE, K_NODES, K_GPUS, K_CPUS, K_MEM, K_GMEM, K_WEIGHT, K_N };
    static const char *const names[K_N][2] = {{"gpu_type", "type"},      {"nodes", NULL},
                                              {"gpus_per_node", "gpus"}, {"cpus_per_node", "cpus"},
                                              {"mem_mib", "mem_per_node"}, {"gmem_mib", "gmem"},
                                              {"weight", NULL}};
    int col[K_N];
    for (int k = 0; k < K_N; k++) {
        col[k] = ds_csv_col(&c, names[k][0]);
        if (col[k] < 0 && names[k][1]) col[k] = ds_csv_col(&c, names[k][1]);
    }
    if (col[K_TYPE] < 0) {
        ds_error_set(err, path, c.line, "gpu_type", "missing required column");
        ds_csv_close(&c);
        return DS_EPARSE;
    }
    int ncols = c.nfields;
    while ((rc = ds_csv_row(&c, ncols, err)) > 0) {
        int32_t i = ds_trace_new_gtype(t, c.fields[col[K_TYPE]], path, c.line, names[K_TYPE][0], err);
        if (i < 0) { rc = DS_EPARSE; break; }
        ds_gtype_t *g = &t->gtypes[i];
        int64_t v;
        double d;
        /* bounds as the matching command-line flags have them (--pool-nodes, --gpus-per-node, --cpus-per-node) */
        if (col[K_NODES] >= 0 && c.fields[col[K_NODES]][0]) {
            if ((rc = ds_csv_int(&c, col[K_NODES], names[K_NODES][0], 0, 1000000, &v, err))) break;
            g->nodes = (int32_t)v;
        }
        if (col[K_GPUS] >= 0 && c.fields[col[K_GPUS]][0]) {
            if ((rc = ds_csv_int(&c, col[K_GPUS], names[K_GPUS][0], 1, DS_MAX_NODE_GPUS, &v, err))) break;
            g->gpus_per_node = (int32_t)v;
        }
        if (col[K_CPUS] >= 0 && c.fields[col[K_CPUS]][0]) {
            if ((rc = ds_csv_int(&c, col[K_CPUS], names[K_CPUS][0], 1, 1 << 20, &v, err))) break;
            g->cpus_per_node = (int32_t)v;
        }
        if (col[K_MEM] >= 0 && c.fields[col[K_MEM]][0]) {
            if ((rc = ds_csv_int(&c, col[K_MEM], names[K_MEM][0], 0, (int64_t)1 << 40, &v, err))) break;
            g->mem_per_node = v;
        }
        if (col[K_GMEM] >= 0 && c.fields[col[K_GMEM]][0]) {
            if ((rc = ds_csv_int(&c, col[K_GMEM], names[K_GMEM][0], 1, 1 << 24, &v, err))) break;
            g->gmem_per_gpu = (int32_t)v;
        }
        if (col[K_WEIGHT] >= 0 && c.fields[col[K_WEIGHT]][0]) {
            if ((rc = ds_csv_num(&c, col[K_WEIGHT], names[K_WEIGHT][0], 0, 1000, &d, err))) break;
            g->weight = d;
        }
    }
    ds_csv_close(&c);
    if (rc < 0) {
        t->ngtypes = 0;
        return rc;
    }
    if (t->ngtypes == 0) {
        ds_error_set(err, path, 0, NULL, "no node types in file (only a header)");
        return DS_EPARSE;
    }
    return DS_OK;
}

int ds_trace_parse_gtypes(ds_trace_t *t, const char *list, const char *opt, ds_error_t *err)
{
    if (t->ngtypes) {
        ds_error_set(err, NULL, 0, opt, "node types were given twice");
        return DS_EINVAL;
    }
    char buf[DS_MAX_GPU_TYPES * 48 + 1];
    if (strlen(list) >= sizeof buf) {
        ds_error_set(err, NULL, 0, opt, "list too long (at most %d types)", DS_MAX_GPU_TYPES);
        return DS_EINVAL;
    }
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':'), *end = NULL;
        long n = -1;
        if (colon) {
            *colon = '\0';
            n = strtol(colon + 1, &end, 10);
        }
        if (!colon || end == colon + 1 || *end || n < 1 || n > 1000000) {
            ds_error_set(err, NULL, 0, opt, "'%s' is not TYPE:NODES (NODES 1..1000000), as in v100:12,p100:8", tok);
            t->ngtypes = 0;
            return DS_EINVAL;
        }
        int32_t i = ds_trace_new_gtype(t, tok, NULL, 0, opt, err);
        if (i < 0) {
            t->ngtypes = 0;
            return DS_EINVAL;
        }
        t->gtypes[i].nodes = (int32_t)n;
    }
    if (!t->ngtypes) {
        ds_error_set(err, NULL, 0, opt, "no GPU type given");
        return DS_EINVAL;
    }
    return DS_OK;
}
