/* import_types.c: the GPU types of an imported trace: node types from a published node list (Alibaba GPU 2023's
 * openb_node_list, PAI 2020's pai_machine_spec), the types a job may run on, and per-type quotas. */
#include "deepshare/csv.h"
#include "deepshare/import.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A type name as the cluster file's reader takes it ("any" is reserved there: a job asking for no type). */
static int name_ok(const char *s, size_t n)
{
    return ds_gtype_name_ok(s, n) && !(n == 3 && !strncasecmp(s, "any", 3));
}

static int any_type(const char *s)
{
    return !*s || !strcasecmp(s, "nan") || !strcasecmp(s, "any") || !strcasecmp(s, "none");
}

static int32_t find(const ds_import_t *im, const char *s, size_t n)
{
    for (int32_t k = 0; k < im->ngt; k++)
        if (strlen(im->gt[k].name) == n && !strncasecmp(im->gt[k].name, s, n)) return k;
    return -1;
}

int ds_imp_gtype_mask(ds_import_t *im, const char *spec, const char *path, long line, const char *col, uint32_t *mask,
                      ds_error_t *err)
{
    *mask = 0;
    if (any_type(spec)) return DS_OK;
    uint32_t m = 0;
    for (const char *p = spec;;) {
        const char *bar = strchr(p, '|');
        size_t n = bar ? (size_t)(bar - p) : strlen(p);
        if (!name_ok(p, n)) {
            ds_error_set(err, path, line, col, "'%.*s' is not a GPU type name (1-%d letters, digits, '-', '_' or '.'; "
                         "several joined by '|')", (int)DS_MIN(n, 64), p, DS_GTYPE_NAME - 1);
            return DS_EPARSE;
        }
        int32_t k = find(im, p, n);
        if (k >= 0) m |= 1u << k;
        if (!bar) break;
        p = bar + 1;
    }
    if (!im->ngt) {
        im->types_not_kept++;
        return DS_OK;
    }
    *mask = m ? m : DS_IMP_NO_TYPE;
    return DS_OK;
}

int ds_imp_add_node(ds_import_t *im, const char *type, int64_t gpus, int64_t cpus, int64_t mem_mib, const char *path,
                    long line, const char *col, ds_error_t *err)
{
    if (gpus == 0) {
        im->cpu_nodes++;
        return DS_OK;
    }
    if (gpus < 0 || gpus > DS_MAX_NODE_GPUS) {
        ds_error_set(err, path, line, NULL, "%lld GPUs on one node: the simulator takes 0 to %d", (long long)gpus,
                     DS_MAX_NODE_GPUS);
        return DS_EPARSE;
    }
    size_t n = strlen(type);
    if (any_type(type) || !name_ok(type, n)) {
        ds_error_set(err, path, line, col, "'%.64s' is not a GPU type name (1-%d letters, digits, '-', '_' or '.') of a "
                     "node with %lld GPUs", type, DS_GTYPE_NAME - 1, (long long)gpus);
        return DS_EPARSE;
    }
    int32_t k = find(im, type, n);
    if (k < 0) {
        if (im->ngt == DS_MAX_GPU_TYPES) {
            ds_error_set(err, path, line, col, "more than %d GPU types (the simulator's limit): '%.64s' is one more",
                         DS_MAX_GPU_TYPES, type);
            return DS_EPARSE;
        }
        k = im->ngt++;
        memset(&im->gt[k], 0, sizeof im->gt[k]);
        snprintf(im->gt[k].name, sizeof im->gt[k].name, "%s", type);
    }
    ds_imp_gtype_t *g = &im->gt[k];
    if (g->nodes >= 1000000) {
        ds_error_set(err, path, line, NULL, "more than 1000000 nodes of type %s", g->name);
        return DS_EPARSE;
    }
    /* the simulator models every node of a type alike: the most GPUs, the fewest CPUs and MiB */
    if (g->nodes && gpus != g->gpus) g->smaller += gpus < g->gpus ? 1 : g->nodes;
    if (gpus > g->gpus) g->gpus = (int32_t)gpus;
    if (cpus > 0 && (g->cpus == 0 || cpus < g->cpus)) g->cpus = (int32_t)DS_MIN(cpus, 1 << 20);
    if (mem_mib > 0 && (g->mem_mib == 0 || mem_mib < g->mem_mib)) g->mem_mib = DS_MIN(mem_mib, (int64_t)1 << 40);
    g->nodes++;
    g->total_gpus += gpus;
    return DS_OK;
}

int ds_imp_type_fits(const ds_import_t *im, uint32_t mask, int32_t gpus)
{
    if (!im->ngt) return 1;
    if (mask & DS_IMP_NO_TYPE) return 0;
    for (int32_t k = 0; k < im->ngt; k++) {
        const ds_imp_gtype_t *g = &im->gt[k];
        if (mask && !(mask & (1u << k))) continue;
        if (gpus <= g->gpus || (gpus % g->gpus == 0 && gpus / g->gpus <= DS_MIN(g->nodes, DS_MAX_JOB_NODES))) return 1;
    }
    return 0;
}

/* GPUs a job of gpus GPUs holds on type k: itself on one node, else its whole nodes. */
static int32_t need_on(const ds_imp_gtype_t *g, int32_t gpus)
{
    return gpus <= g->gpus ? gpus : (gpus + g->gpus - 1) / g->gpus * g->gpus;
}

static int allowed(const ds_import_t *im, const ds_imp_job_t *j, int32_t k)
{
    return (!j->gmask || (j->gmask & (1u << k))) && ds_imp_type_fits(im, 1u << k, j->gpus);
}

void ds_import_type_quotas(ds_import_t *im)
{
    int32_t nt = im->tenants.n, ng = im->ngt;
    free(im->tquota);
    im->tquota = ds_xcalloc((size_t)DS_MAX(nt, 1) * (size_t)DS_MAX(ng, 1), sizeof *im->tquota);
    int32_t *out = im->tquota;
    double *d = ds_xcalloc((size_t)DS_MAX(nt, 1) * (size_t)DS_MAX(ng, 1), sizeof *d);
    for (int32_t i = 0; i < im->njobs; i++) {
        const ds_imp_job_t *j = &im->jobs[i];
        double gs = (double)j->gpus * (double)j->duration, cap = 0;
        for (int32_t k = 0; k < ng; k++)
            if (allowed(im, j, k)) cap += (double)im->gt[k].total_gpus;
        for (int32_t k = 0; cap > 0 && k < ng; k++)
            if (allowed(im, j, k)) d[(size_t)j->tenant * (size_t)ng + (size_t)k] += gs * (double)im->gt[k].total_gpus / cap;
    }
    for (int32_t t = 0; t < nt; t++) {
        double *row = &d[(size_t)t * (size_t)ng], sum = 0;
        for (int32_t k = 0; k < ng; k++) sum += row[k];
        if (sum <= 0)
            for (int32_t k = 0; k < ng; k++) sum += row[k] = (double)im->gt[k].total_gpus;
        int32_t q = t < im->nquota ? im->quota[t] : 0, given = 0;
        double rem[DS_MAX_GPU_TYPES];
        for (int32_t k = 0; k < ng; k++) {
            double x = sum > 0 ? (double)q * row[k] / sum : 0;
            out[(size_t)t * (size_t)ng + (size_t)k] = (int32_t)floor(x);
            rem[k] = x - floor(x);
            given += (int32_t)floor(x);
        }
        /* largest remainders, ties to the earlier type */
        while (given < q && ng > 0) {
            int32_t best = 0;
            for (int32_t k = 1; k < ng; k++)
                if (rem[k] > rem[best]) best = k;
            out[(size_t)t * (size_t)ng + (size_t)best]++;
            rem[best] = -1;
            given++;
        }
    }
    free(d);
    /* every job fits the quota of one of its types: else the one of them with the most quota is raised to it */
    uint8_t *raised = ds_xcalloc((size_t)DS_MAX(nt, 1), 1);
    for (int32_t i = 0; i < im->njobs; i++) {
        const ds_imp_job_t *j = &im->jobs[i];
        int32_t *row = &out[(size_t)j->tenant * (size_t)ng], best = -1, fits = 0;
        for (int32_t k = 0; k < ng && !fits; k++) {
            if (!allowed(im, j, k)) continue;
            fits = row[k] >= need_on(&im->gt[k], j->gpus);
            if (best < 0 || row[k] > row[best]) best = k;
        }
        if (fits || best < 0) continue;
        row[best] = need_on(&im->gt[best], j->gpus);
        raised[j->tenant] = 1;
    }
    for (int32_t t = 0; t < nt && t < im->nquota; t++) {
        int64_t sum = 0;
        for (int32_t k = 0; k < ng; k++) sum += out[(size_t)t * (size_t)ng + (size_t)k];
        if (raised[t] && sum > im->quota[t]) im->quota_raised++;
        im->quota[t] = (int32_t)DS_MIN(sum, INT32_MAX);
    }
    free(raised);
}

/* A node list's integer field: empty is 0 (unknown), else a number in [0, hi] (fractions rounded down). */
static int field_int(const ds_csv_t *c, int col, const char *name, double scale, int64_t *out, ds_error_t *err)
{
    *out = 0;
    if (!c->fields[col][0] || !strcasecmp(c->fields[col], "nan")) return DS_OK;
    double v;
    int rc = ds_csv_f64(c, col, name, 0, &v, err);
    if (rc) return rc;
    if (!(v >= 0) || v / scale > 1e12) {
        ds_error_set(err, c->path, c->line, name, "'%.64s' is out of range", c->fields[col]);
        return DS_EPARSE;
    }
    *out = (int64_t)floor(v / scale + 1e-9);
    return DS_OK;
}

int ds_import_nodes_alibaba(ds_import_t *im, const char *path, ds_error_t *err)
{
    ds_csv_t c;
    int rc = ds_csv_open_header(&c, path, "expected a header 'sn,cpu_milli,memory_mib,gpu,model' (openb_node_list)", err);
    if (rc) return rc;
    static const char *const req[] = {"sn", "gpu", "model"};
    int col[3];
    if ((rc = ds_csv_require(&c, req, 3, col, err))) return rc;
    int ccol = ds_csv_col(&c, "cpu_milli"), mcol = ds_csv_col(&c, "memory_mib");
    int ncols = c.nfields;
    im->nodes_src = path;
    for (int64_t rows = 0; (rc = ds_csv_row(&c, ncols, err)) > 0; rows++) {
        if (rows >= 1000000) {
            ds_error_set(err, path, c.line, NULL, "more than 1000000 nodes");
            rc = DS_EPARSE;
            break;
        }
        int64_t gpus, cpus = 0, mem = 0;
        if ((rc = field_int(&c, col[1], "gpu", 1, &gpus, err))) break;
        if (ccol >= 0 && (rc = field_int(&c, ccol, "cpu_milli", 1000, &cpus, err))) break;
        if (mcol >= 0 && (rc = field_int(&c, mcol, "memory_mib", 1, &mem, err))) break;
        if ((rc = ds_imp_add_node(im, c.fields[col[2]], gpus, cpus, mem, path, c.line, "model", err))) break;
    }
    ds_csv_close(&c);
    if (rc < 0) return rc;
    if (!im->ngt) {
        ds_error_set(err, path, 0, NULL, "no node with GPUs in the node list");
        return DS_EPARSE;
    }
    return DS_OK;
}

int ds_import_nodes_pai(ds_import_t *im, const char *path, ds_error_t *err)
{
    ds_csv_t c;
    int rc = ds_csv_open(&c, path, err);
    if (rc) return rc;
    im->nodes_src = path;
    for (int64_t rows = 0;; rows++) {
        rc = ds_csv_next(&c, err);
        if (rc <= 0) break;
        if (c.nfields != 5) {
            ds_error_set(err, path, c.line, NULL, "expected 5 fields (pai_machine_spec: machine,gpu_type,cap_cpu,cap_mem,"
                         "cap_gpu), found %d", c.nfields);
            rc = DS_EPARSE;
            break;
        }
        if (c.line == 1 && !strcmp(c.fields[0], "machine") && !strcmp(c.fields[1], "gpu_type")) continue; /* the .header */
        if (rows >= 1000000) {
            ds_error_set(err, path, c.line, NULL, "more than 1000000 machines");
            rc = DS_EPARSE;
            break;
        }
        int64_t gpus, cpus;
        if ((rc = field_int(&c, 4, "cap_gpu", 1, &gpus, err)) || (rc = field_int(&c, 2, "cap_cpu", 1, &cpus, err))) break;
        /* cap_mem's unit is not documented: the node's memory is left to the run's default */
        if ((rc = ds_imp_add_node(im, c.fields[1], gpus, cpus, 0, path, c.line, "gpu_type", err))) break;
    }
    ds_csv_close(&c);
    if (rc < 0) return rc;
    if (!im->ngt) {
        ds_error_set(err, path, 0, NULL, "no machine with GPUs in the machine list");
        return DS_EPARSE;
    }
    return DS_OK;
}
