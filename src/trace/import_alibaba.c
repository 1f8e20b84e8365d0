/* import_alibaba.c: reads Alibaba's GPU trace of 2023 (alibaba/clusterdata cluster-trace-gpu-v2023): a pod list
 * openb_pod_list_*.csv, whose pods ask for GPUs (num_gpu, a share of one in gpu_milli) and optionally GPU types
 * (gpu_spec), grouped by their QoS class. Its node list (openb_node_list_*.csv) is read by import_types.c. */
#include "deepshare/csv.h"
#include "deepshare/import.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { A_NAME, A_CPU, A_GPUS, A_MILLI, A_SPEC, A_QOS, A_PHASE, A_CREATE, A_DELETE, A_SCHED, A_N };
static const char *const cname[A_N] = {"name",     "cpu_milli", "num_gpu",       "gpu_milli",     "gpu_spec",
                                       "qos",      "pod_phase", "creation_time", "deletion_time", "scheduled_time"};
static const int required[A_N] = {[A_NAME] = 1, [A_GPUS] = 1, [A_QOS] = 1, [A_PHASE] = 1, [A_CREATE] = 1,
                                  [A_DELETE] = 1, [A_SCHED] = 1};

/* Field k of the row in seconds on the trace's clock; empty or "nan" is none (*has = 0). */
static int pod_time(const ds_csv_t *c, const int *col, int k, int64_t *out, int *has, ds_error_t *err)
{
    const char *v = c->fields[col[k]];
    *has = 0;
    *out = 0;
    if (!*v || !strcasecmp(v, "nan")) return DS_OK;
    double d;
    /* bounded before the conversion to an integer (a double past int64 is undefined there) */
    int rc = ds_csv_num(c, col[k], cname[k], 0, 4e15, &d, err);
    if (rc) return rc;
    *out = (int64_t)floor(d);
    *has = 1;
    return DS_OK;
}

/* The pod's phase: Succeeded and Failed ended; Running is a pod the trace's snapshot still had (it gives a
 * deletion time nevertheless: kept as state other); Pending never ran. -1 for a phase the trace does not use. */
static int phase_state(const char *s)
{
    if (!strcasecmp(s, "Succeeded")) return DS_IMP_COMPLETED;
    if (!strcasecmp(s, "Failed")) return DS_IMP_FAILED;
    if (!strcasecmp(s, "Running")) return DS_IMP_OTHER;
    if (!strcasecmp(s, "Pending")) return DS_IMP_NSTATES;
    return -1;
}

/* One data row into j; DS_OK, DS_EPARSE (err set) or 1 when the pod never ran. */
static int read_row(ds_import_t *im, const ds_csv_t *c, const int *col, ds_imp_job_t *j, ds_error_t *err)
{
    int rc;
    const char *name = c->fields[col[A_NAME]];
    if (!*name) {
        ds_error_set(err, c->path, c->line, cname[A_NAME], "empty pod name");
        return DS_EPARSE;
    }
    if ((rc = ds_imp_name(&im->ids, name, c->path, c->line, cname[A_NAME], &j->orig, err))) return rc;
    /* the trace names no user or team: the QoS class (LS, BE, Burstable, ...) is the tenant and its user */
    const char *qos = c->fields[col[A_QOS]];
    if ((rc = ds_imp_tenant(im, j, qos, c->path, c->line, cname[A_QOS], err))) return rc;
    if ((rc = ds_imp_name(&im->users, im->tenants.s[j->tenant], c->path, c->line, cname[A_QOS], &j->user, err))) return rc;
    int64_t v;
    if ((rc = ds_csv_int(c, col[A_GPUS], cname[A_GPUS], 0, INT32_MAX, &v, err))) return rc;
    j->gpus = (int32_t)v;
    if (col[A_MILLI] >= 0 && c->fields[col[A_MILLI]][0] && strcasecmp(c->fields[col[A_MILLI]], "nan")) {
        /* a share of one GPU (GPU-sharing pods): the simulator allocates whole GPUs, so it takes the GPU */
        if ((rc = ds_csv_int(c, col[A_MILLI], cname[A_MILLI], 0, 1000, &v, err))) return rc;
    }
    if (col[A_CPU] >= 0 && c->fields[col[A_CPU]][0] && strcasecmp(c->fields[col[A_CPU]], "nan")) {
        double d;
        if ((rc = ds_csv_num(c, col[A_CPU], cname[A_CPU], 0, 2e12, &d, err))) return rc;
        j->cpus = (int32_t)DS_MIN(ceil(d / 1000.0 - 1e-9), (double)INT32_MAX);
    }
    if (col[A_SPEC] >= 0 &&
        (rc = ds_imp_gtype_mask(im, c->fields[col[A_SPEC]], c->path, c->line, cname[A_SPEC], &j->gmask, err)))
        return rc;
    int st = phase_state(c->fields[col[A_PHASE]]);
    if (st < 0) {
        ds_error_set(err, c->path, c->line, cname[A_PHASE], "'%.64s' is not a pod phase (Succeeded, Failed, Running, "
                     "Pending)", c->fields[col[A_PHASE]]);
        return DS_EPARSE;
    }
    int64_t cr, del, sch;
    int hc, hd, hs;
    if ((rc = pod_time(c, col, A_CREATE, &cr, &hc, err)) || (rc = pod_time(c, col, A_DELETE, &del, &hd, err)) ||
        (rc = pod_time(c, col, A_SCHED, &sch, &hs, err)))
        return rc;
    if (!hc) {
        ds_error_set(err, c->path, c->line, cname[A_CREATE], "no creation time");
        return DS_EPARSE;
    }
    j->submit = cr;
    if (st == DS_IMP_NSTATES || !hs || !hd) return 1; /* never scheduled, or no end */
    if (sch < cr) {
        ds_error_set(err, c->path, c->line, cname[A_SCHED], "scheduled before its creation (%s)", c->fields[col[A_CREATE]]);
        return DS_EPARSE;
    }
    if (del < sch) {
        ds_error_set(err, c->path, c->line, cname[A_DELETE], "deleted before it was scheduled (%s)",
                     c->fields[col[A_SCHED]]);
        return DS_EPARSE;
    }
    j->state = (uint8_t)st;
    j->duration = del - sch;
    return DS_OK;
}

int ds_import_alibaba(ds_import_t *im, const ds_import_opts_t *o, const char *path, ds_error_t *err)
{
    if (o->tenant_by && strcmp(o->tenant_by, "qos")) {
        ds_error_set(err, NULL, 0, "tenant-by", "'%s': the Alibaba 2023 pod list groups pods by qos only", o->tenant_by);
        return DS_EINVAL;
    }
    ds_csv_t c;
    int rc = ds_csv_open(&c, path, err);
    if (rc) return rc;
    if ((rc = ds_csv_next(&c, err)) <= 0) {
        if (rc == 0) ds_error_set(err, path, 0, NULL, "empty file: expected the header of openb_pod_list_*.csv");
        ds_csv_close(&c);
        return rc ? rc : DS_EPARSE;
    }
    int col[A_N];
    for (int k = 0; k < A_N; k++) {
        col[k] = ds_csv_col(&c, cname[k]);
        if (col[k] < 0 && required[k]) {
            ds_error_set(err, path, c.line, cname[k], "missing required column (is this an openb_pod_list_*.csv?)");
            ds_csv_close(&c);
            return DS_EPARSE;
        }
    }
    int ncols = c.nfields;
    im->src = path;
    static const ds_imp_cols_t kc = {"num_gpu", "cpu_milli", "deletion_time (minus scheduled_time)"};
    for (;;) {
        rc = ds_csv_row(&c, ncols, err);
        if (rc == 0) break;
        int r = ds_imp_count_row(im, path, c.line, err);
        if (r) {
            rc = r;
            break;
        }
        if (rc < 0) {
            if ((rc = ds_imp_bad_row(im, o, rc, err))) break;
            continue;
        }
        ds_imp_job_t j;
        memset(&j, 0, sizeof j);
        j.line = c.line;
        r = read_row(im, &c, col, &j, err);
        if (r == 1) ds_imp_not_run(im);
        else if (r == 0) r = ds_imp_keep(im, o, &j, path, &kc, err);
        if (r < 0 && (rc = ds_imp_bad_row(im, o, r, err))) break;
    }
    ds_csv_close(&c);
    return rc < 0 ? rc : DS_OK;
}
