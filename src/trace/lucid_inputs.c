/* lucid_inputs.c: the readers of the Lucid policy's two input files (sharing scores, throughput
 * prediction), the tables it declares as its inputs: the driver reads them (ds_input_set) and hands them
 * over parsed, so the policy does no I/O. */
#include "deepshare/csv.h"
#include "deepshare/datetime.h"
#include "deepshare/lucid.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int open_with_header(ds_csv_t *f, const char *path, const char *what, ds_error_t *err)
{
    char expect[200];
    snprintf(expect, sizeof expect, "expected a header line (%s)", what);
    return ds_csv_open_header(f, path, expect, err);
}

int ds_lucid_read_labels(const char *path, ds_lucid_labels_t *out, ds_error_t *err)
{
    ds_csv_t f;
    int rc = open_with_header(&f, path, "model, dataset, batchsize, amp, label", err);
    if (rc) return rc;
    static const char *const names[5] = {"model", "dataset", "batchsize", "amp", "label"};
    int col[5];
    if ((rc = ds_csv_require(&f, names, 5, col, err))) return rc;
    ds_lucid_label_t *rows = NULL;
    int32_t n = 0, cap = 0;
    int ncols = f.nfields;
    while ((rc = ds_csv_row(&f, ncols, err)) > 0) {
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            rows = ds_xrealloc(rows, (size_t)cap * sizeof *rows);
        }
        ds_lucid_label_t *r = &rows[n];
        int64_t v;
        if ((rc = ds_csv_str(&f, col[0], names[0], r->model, sizeof r->model, err)) ||
            (rc = ds_csv_str(&f, col[1], names[1], r->dataset, sizeof r->dataset, err)))
            break;
        if ((rc = ds_csv_int(&f, col[2], names[2], 0, 1 << 30, &v, err))) break;
        r->batch = (int32_t)v;
        if ((rc = ds_csv_int(&f, col[3], names[3], 0, 1, &v, err))) break;
        r->amp = (int32_t)v;
        if ((rc = ds_csv_int(&f, col[4], names[4], 0, 2, &v, err))) break;
        r->label = (int32_t)v;
        n++;
    }
    ds_csv_close(&f);
    if (rc < 0) {
        free(rows);
        return rc;
    }
    if (n == 0) {
        free(rows);
        ds_error_set(err, path, 0, NULL, "no rows: expected one sharing score per workload");
        return DS_EPARSE;
    }
    out->v = rows;
    out->n = n;
    return DS_OK;
}

int ds_lucid_read_series(const char *path, ds_lucid_series_t *out, ds_error_t *err)
{
    ds_csv_t f;
    int rc = open_with_header(&f, path, "time, pred_gpu_job, pred_gpu_num", err);
    if (rc) return rc;
    static const char *const names[3] = {"time", "pred_gpu_job", "pred_gpu_num"};
    int col[3];
    if ((rc = ds_csv_require(&f, names, 3, col, err))) return rc;
    ds_lucid_series_t s;
    memset(&s, 0, sizeof s);
    int32_t cap = 0;
    int ncols = f.nfields, kind = -1; /* 1: date-times, 0: seconds */
    while ((rc = ds_csv_row(&f, ncols, err)) > 0) {
        if (s.n == cap) {
            cap = cap ? cap * 2 : 1024;
            s.time = ds_xrealloc(s.time, (size_t)cap * sizeof *s.time);
            s.pred_jobs = ds_xrealloc(s.pred_jobs, (size_t)cap * sizeof *s.pred_jobs);
            s.pred_gpus = ds_xrealloc(s.pred_gpus, (size_t)cap * sizeof *s.pred_gpus);
        }
        const char *tv = f.fields[col[0]];
        int is_dt = strchr(tv, '-') != NULL && tv[0] != '-';
        if (kind < 0) kind = is_dt;
        int64_t t;
        if (kind) {
            if (!is_dt || ds_datetime_parse(tv, &t)) {
                ds_error_set(err, path, f.line, names[0], "expected a date-time 'YYYY-MM-DD HH:MM:SS', got '%s'", tv);
                rc = DS_EPARSE;
                break;
            }
        } else if ((rc = ds_csv_int(&f, col[0], names[0], -DS_MAX_SUBMIT, DS_MAX_SUBMIT, &t, err))) {
            break;
        }
        if (s.n >= 10000000) {
            ds_error_set(err, path, f.line, NULL, "more than 10000000 rows");
            rc = DS_EPARSE;
            break;
        }
        if (s.n > 0 && t <= s.time[s.n - 1]) {
            ds_error_set(err, path, f.line, names[0], "times must increase from row to row");
            rc = DS_EPARSE;
            break;
        }
        s.time[s.n] = t;
        if ((rc = ds_csv_num(&f, col[1], names[1], -1e12, 1e12, &s.pred_jobs[s.n], err)) ||
            (rc = ds_csv_num(&f, col[2], names[2], -1e12, 1e12, &s.pred_gpus[s.n], err)))
            break;
        s.n++;
    }
    ds_csv_close(&f);
    if (rc < 0) {
        ds_lucid_series_free(&s);
        return rc;
    }
    if (s.n == 0) {
        ds_lucid_series_free(&s);
        ds_error_set(err, path, 0, NULL, "no rows: expected one row per time bin");
        return DS_EPARSE;
    }
    s.is_datetime = kind == 1;
    *out = s;
    return DS_OK;
}

