/* import_helios.c: reads Helios cluster_log.csv (SenseTime: Venus, Earth, Saturn, Uranus) and Acme
 * trace_*.csv (Shanghai AI Lab: Seren, Kalos), two Slurm exports with the same column names. */
#include "deepshare/csv.h"
#include "deepshare/import.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

enum { H_ID, H_USER, H_TENANT, H_GPUS, H_CPUS, H_STATE, H_SUBMIT, H_START, H_END, H_DURATION, H_N };

static int slurm_state(const char *s)
{
    if (!strncasecmp(s, "COMPLETED", 9)) return DS_IMP_COMPLETED;
    if (!strncasecmp(s, "CANCELLED", 9)) return DS_IMP_CANCELLED; /* Slurm writes "CANCELLED by <uid>" */
    if (!strncasecmp(s, "FAILED", 6)) return DS_IMP_FAILED;
    if (!strncasecmp(s, "TIMEOUT", 7)) return DS_IMP_TIMEOUT;
    if (!strncasecmp(s, "NODE_FAIL", 9)) return DS_IMP_NODE_FAIL;
    return DS_IMP_OTHER;
}

static int time_field(ds_import_t *im, const ds_csv_t *c, int col, const char *name, int64_t *out, ds_error_t *err)
{
    int is_date;
    if (ds_imp_parse_time(c->fields[col], out, &is_date)) {
        ds_error_set(err, c->path, c->line, name, "'%s' is not a time (YYYY-MM-DD HH:MM:SS or seconds)",
                     c->fields[col]);
        return DS_EPARSE;
    }
    if (is_date) im->clock_is_unix = 1;
    return DS_OK;
}

/* One data row into j; returns DS_OK, DS_EPARSE (err set) or 1 when the job never ran. */
static int read_row(ds_import_t *im, const ds_csv_t *c, const int *col, const char *const *cname, ds_imp_job_t *j,
                    ds_error_t *err)
{
    int rc;
    int64_t v;
    const char *id = c->fields[col[H_ID]];
    if (!*id) {
        ds_error_set(err, c->path, c->line, cname[H_ID], "empty job id");
        return DS_EPARSE;
    }
    char *end;
    errno = 0;
    long long n = strtoll(id, &end, 10);
    j->has_num_id = !*end && !errno;
    j->num_id = n;
    if ((rc = ds_imp_name(&im->ids, id, c->path, c->line, cname[H_ID], &j->orig, err))) return rc;
    const char *user = c->fields[col[H_USER]][0] ? c->fields[col[H_USER]] : "-";
    if ((rc = ds_imp_name(&im->users, user, c->path, c->line, cname[H_USER], &j->user, err))) return rc;
    if ((rc = ds_imp_tenant(im, j, c->fields[col[H_TENANT]], c->path, c->line, cname[H_TENANT], err))) return rc;
    /* int32 here; ds_imp_keep applies the simulator's own limits to the jobs kept */
    if ((rc = ds_csv_int(c, col[H_GPUS], cname[H_GPUS], 0, INT32_MAX, &v, err))) return rc;
    j->gpus = (int32_t)v;
    if (col[H_CPUS] >= 0 && c->fields[col[H_CPUS]][0]) {
        if ((rc = ds_csv_int(c, col[H_CPUS], cname[H_CPUS], 0, INT32_MAX, &v, err))) return rc;
        j->cpus = (int32_t)v;
    }
    j->state = col[H_STATE] >= 0 ? (uint8_t)slurm_state(c->fields[col[H_STATE]]) : DS_IMP_OTHER;
    if ((rc = time_field(im, c, col[H_SUBMIT], cname[H_SUBMIT], &j->submit, err))) return rc;
    if (col[H_DURATION] >= 0 && c->fields[col[H_DURATION]][0]) {
        double d;
        /* bounded before the conversion to an integer (a double past int64 is undefined there) */
        if ((rc = ds_csv_num(c, col[H_DURATION], cname[H_DURATION], 0, 4e15, &d, err))) return rc;
        j->duration = (int64_t)floor(d);
        return DS_OK;
    }
    /* no duration: end minus start, and a job without both never ran (cancelled while pending) */
    if (col[H_START] < 0 || col[H_END] < 0) {
        if (col[H_DURATION] >= 0) return 1;
        ds_error_set(err, c->path, c->line, NULL, "no duration, start_time or end_time");
        return DS_EPARSE;
    }
    if (!c->fields[col[H_START]][0] || !c->fields[col[H_END]][0]) return 1;
    int64_t s, e;
    if ((rc = time_field(im, c, col[H_START], cname[H_START], &s, err))) return rc;
    if ((rc = time_field(im, c, col[H_END], cname[H_END], &e, err))) return rc;
    if (e < s) {
        ds_error_set(err, c->path, c->line, cname[H_END], "ends before it starts (%s)", c->fields[col[H_START]]);
        return DS_EPARSE;
    }
    j->duration = e - s;
    return DS_OK;
}

int ds_import_helios(ds_import_t *im, const ds_import_opts_t *o, const char *path, int acme, ds_error_t *err)
{
    static const char *const names[H_N] = {"job_id", "user", NULL, "gpu_num", "cpu_num", "state", "submit_time",
                                           "start_time", "end_time", "duration"};
    static const int required[H_N] = {[H_ID] = 1, [H_USER] = 1, [H_TENANT] = 1, [H_GPUS] = 1, [H_SUBMIT] = 1};
    const char *cname[H_N];
    memcpy(cname, names, sizeof cname);
    cname[H_TENANT] = o->tenant_by ? o->tenant_by : acme ? "user" : "vc";
    ds_csv_t c;
    int rc = ds_csv_open(&c, path, err);
    if (rc) return rc;
    if ((rc = ds_csv_next(&c, err)) <= 0) {
        if (rc == 0) ds_error_set(err, path, 0, NULL, "empty file: expected the header of %s", acme ? "an Acme trace" : "cluster_log.csv");
        ds_csv_close(&c);
        return rc ? rc : DS_EPARSE;
    }
    int col[H_N];
    for (int k = 0; k < H_N; k++) {
        col[k] = ds_csv_col(&c, cname[k]);
        if (col[k] < 0 && required[k]) {
            ds_error_set(err, path, c.line, cname[k], "missing required column (is this %s?)",
                         acme ? "an Acme trace_*.csv" : "a Helios cluster_log.csv");
            ds_csv_close(&c);
            return DS_EPARSE;
        }
    }
    if (col[H_DURATION] < 0 && (col[H_START] < 0 || col[H_END] < 0)) {
        ds_error_set(err, path, c.line, "duration", "missing column: need duration, or start_time and end_time");
        ds_csv_close(&c);
        return DS_EPARSE;
    }
    int ncols = c.nfields;
    im->src = path;
    ds_imp_cols_t kc = {cname[H_GPUS], col[H_CPUS] >= 0 ? cname[H_CPUS] : NULL, NULL};
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
        r = read_row(im, &c, col, cname, &j, err);
        if (r == 1) ds_imp_not_run(im);
        else if (r == 0) {
            /* a duration computed as end minus start is named by end_time in messages */
            kc.duration = col[H_DURATION] >= 0 && c.fields[col[H_DURATION]][0] ? cname[H_DURATION] : cname[H_END];
            r = ds_imp_keep(im, o, &j, path, &kc, err);
        }
        if (r < 0 && (rc = ds_imp_bad_row(im, o, r, err))) break;
    }
    ds_csv_close(&c);
    return rc < 0 ? rc : DS_OK;
}
