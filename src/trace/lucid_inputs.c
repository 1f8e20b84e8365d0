/* lucid_inputs.c: the Lucid policy's parameter object and the readers of its two extra input files
 * (sharing scores, throughput prediction): the driver side of the policy, the only part that does I/O. */
#include "deepshare/csv.h"
#include "deepshare/datetime.h"
#include "deepshare/lucid.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* 2020-04-01 00:00:00 UTC: clock 0 of the Venus trace (and of Lucid's simulator). */
#define VENUS_CLOCK_ORIGIN 1585699200LL

void *ds_lucid_config_new(void)
{
    ds_lucid_config_t *c = ds_xcalloc(1, sizeof *c);
    c->clock_origin = VENUS_CLOCK_ORIGIN;
    c->default_score = 1;
    c->score_limit = 2;
    c->prio_factor = 2.0;
    c->reference_pairing = 1;
    c->reference_timing = 1;
    c->reference_queue = 1;
    c->pas_period = 100;
    c->pas_bins = 5;
    c->pas_threshold = 2.0;
    c->profiler = 1;
    c->prof_nodes = 2;
    c->prof_time = 200;
    c->prof_gpu_limit = 8;
    snprintf(c->prof_lenders, sizeof c->prof_lenders, "vc8Gr,vcefl");
    snprintf(c->prof_scale_tenant, sizeof c->prof_scale_tenant, "vcYVn");
    c->prof_scale_queue = 10;
    c->prof_scale_down_queue = 5;
    c->prof_scale_down_factor = 5.0;
    return c;
}

static void free_series(ds_lucid_series_t *s)
{
    free(s->time);
    free(s->pred_jobs);
    free(s->pred_gpus);
    memset(s, 0, sizeof *s);
}

void ds_lucid_config_free(void *config)
{
    ds_lucid_config_t *c = config;
    if (!c) return;
    free(c->labels);
    free_series(&c->series);
    free(c);
}

static int open_with_header(ds_csv_t *f, const char *path, const char *what, ds_error_t *err)
{
    char expect[200];
    snprintf(expect, sizeof expect, "expected a header line (%s)", what);
    return ds_csv_open_header(f, path, expect, err);
}

int ds_lucid_read_labels(ds_lucid_config_t *c, const char *path, ds_error_t *err)
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
    free(c->labels);
    c->labels = rows;
    c->nlabels = n;
    return DS_OK;
}

int ds_lucid_read_series(ds_lucid_config_t *c, const char *path, ds_error_t *err)
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
        free_series(&s);
        return rc;
    }
    if (s.n == 0) {
        free_series(&s);
        ds_error_set(err, path, 0, NULL, "no rows: expected one row per time bin");
        return DS_EPARSE;
    }
    s.is_datetime = kind == 1;
    free_series(&c->series);
    c->series = s;
    return DS_OK;
}

static int set_i64(const char *key, const char *v, int64_t lo, int64_t hi, int64_t *out, ds_error_t *err)
{
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi) {
        ds_error_set(err, NULL, 0, key, "expected an integer in [%lld, %lld], got '%s'", (long long)lo, (long long)hi, v);
        return DS_EINVAL;
    }
    *out = x;
    return DS_OK;
}

static int set_f64(const char *key, const char *v, double lo, double hi, double *out, ds_error_t *err)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end || !(x >= lo && x <= hi)) {
        ds_error_set(err, NULL, 0, key, "expected a number in [%g, %g], got '%s'", lo, hi, v);
        return DS_EINVAL;
    }
    *out = x;
    return DS_OK;
}

static int set_str(const char *key, const char *v, char *dst, size_t n, ds_error_t *err)
{
    if (strlen(v) >= n) {
        ds_error_set(err, NULL, 0, key, "value longer than %zu characters", n - 1);
        return DS_EINVAL;
    }
    snprintf(dst, n, "%s", v);
    return DS_OK;
}

int ds_lucid_config_set(void *config, const char *key, const char *v, ds_error_t *err)
{
    ds_lucid_config_t *c = config;
    int64_t x;
    int rc;
    if (!strcmp(key, "lucid-single")) return ds_lucid_read_labels(c, v, err);
    if (!strcmp(key, "lucid-throughput")) return ds_lucid_read_series(c, v, err);
    if (!strcmp(key, "lucid-clock-origin")) {
        if (!ds_datetime_parse(v, &x)) { c->clock_origin = x; return DS_OK; }
        if ((rc = set_i64(key, v, INT64_MIN / 2, INT64_MAX / 2, &x, err))) {
            ds_error_set(err, NULL, 0, key, "expected 'YYYY-MM-DD HH:MM:SS' or Unix seconds, got '%s'", v);
            return rc;
        }
        c->clock_origin = x;
        return DS_OK;
    }
    if (!strcmp(key, "lucid-default-score")) {
        if ((rc = set_i64(key, v, 0, 2, &x, err))) return rc;
        c->default_score = (int32_t)x;
        return DS_OK;
    }
    if (!strcmp(key, "lucid-score-limit")) {
        if ((rc = set_i64(key, v, 0, 4, &x, err))) return rc;
        c->score_limit = (int32_t)x;
        return DS_OK;
    }
    if (!strcmp(key, "lucid-reference-pairing")) {
        if ((rc = set_i64(key, v, 0, 1, &x, err))) return rc;
        c->reference_pairing = (int)x;
        return DS_OK;
    }
    if (!strcmp(key, "lucid-reference")) {
        if ((rc = set_i64(key, v, 0, 1, &x, err))) return rc;
        c->reference_pairing = c->reference_timing = c->reference_queue = (int)x;
        return DS_OK;
    }
    if (!strcmp(key, "lucid-reference-queue")) {
        if ((rc = set_i64(key, v, 0, 1, &x, err))) return rc;
        c->reference_queue = (int)x;
        return DS_OK;
    }
    if (!strcmp(key, "lucid-reference-timing")) {
        if ((rc = set_i64(key, v, 0, 1, &x, err))) return rc;
        c->reference_timing = (int)x;
        return DS_OK;
    }
    if (!strcmp(key, "lucid-prio-factor")) return set_f64(key, v, 0, 1e12, &c->prio_factor, err);
    if (!strcmp(key, "lucid-pas-period")) {
        if ((rc = set_i64(key, v, 1, 86400, &x, err))) return rc;
        c->pas_period = x;
        return DS_OK;
    }
    if (!strcmp(key, "lucid-pas-bins")) {
        if ((rc = set_i64(key, v, 1, 10000, &x, err))) return rc;
        c->pas_bins = (int32_t)x;
        return DS_OK;
    }
    if (!strcmp(key, "lucid-pas-threshold")) return set_f64(key, v, -1e12, 1e12, &c->pas_threshold, err);
    if (!strcmp(key, "lucid-profiler")) {
        if ((rc = set_i64(key, v, 0, 1, &x, err))) return rc;
        c->profiler = (int)x;
        return DS_OK;
    }
    if (!strcmp(key, "lucid-prof-nodes")) {
        if ((rc = set_i64(key, v, 1, 1000, &x, err))) return rc;
        c->prof_nodes = (int32_t)x;
        return DS_OK;
    }
    if (!strcmp(key, "lucid-prof-time")) {
        if ((rc = set_i64(key, v, 1, 86400 * 365, &x, err))) return rc;
        c->prof_time = x;
        return DS_OK;
    }
    if (!strcmp(key, "lucid-prof-gpu-limit")) {
        if ((rc = set_i64(key, v, 1, 1 << 20, &x, err))) return rc;
        c->prof_gpu_limit = (int32_t)x;
        return DS_OK;
    }
    if (!strcmp(key, "lucid-prof-lenders")) return set_str(key, v, c->prof_lenders, sizeof c->prof_lenders, err);
    if (!strcmp(key, "lucid-prof-scale-tenant"))
        return set_str(key, v, c->prof_scale_tenant, sizeof c->prof_scale_tenant, err);
    return DS_ENOTFOUND;
}

void ds_lucid_config_help(FILE *f)
{
    fprintf(f,
            "  --lucid-single FILE          sharing scores per workload (single_data.csv 'label'); none: every\n"
            "                               job scores --lucid-default-score\n"
            "  --lucid-throughput FILE      predicted throughput (Venus_throughput_pred.csv); none: sharing\n"
            "                               always on, profiler scale-down not gated by the prediction\n"
            "  --lucid-clock-origin T       date-time (UTC) of trace clock 0, for date-time series\n"
            "                               (2020-04-01 00:00:00, the Venus clock)\n"
            "  --lucid-default-score N      score of workloads absent from the scores file (1)\n"
            "  --lucid-score-limit N        a pair's scores must sum to at most N (2)\n"
            "  --lucid-prio-factor X        a job may share only with a partner whose priority is at least\n"
            "                               its own / X (2)\n"
            "  --lucid-reference 0|1        sets the three --lucid-reference-* switches below at once (1)\n"
            "  --lucid-reference-queue 0|1  1: as the reference simulator, a profiled job's wait for the\n"
            "                               profiler counts in its queueing delay (it queues in its tenant's\n"
            "                               partition meanwhile); 0: only its wait in the partition (1)\n"
            "  --lucid-reference-pairing 0|1 1: as the reference simulator, a packed job whose partner\n"
            "                               started first and ends first keeps its packed speed and never\n"
            "                               hosts a partner; 0: it runs at full speed and may host again (1)\n"
            "  --lucid-reference-timing 0|1 1: as the reference simulator, a job completes one second after\n"
            "                               its work is done (profiled jobs excepted); 0: when it is done (1)\n"
            "  --lucid-pas-period S         seconds between sharing-switch checks (100)\n"
            "  --lucid-pas-bins N           prediction bins averaged after each check (5)\n"
            "  --lucid-pas-threshold X      sharing off when that average is at most X (2)\n"
            "  --lucid-profiler 0|1         profile small jobs first (1)\n"
            "  --lucid-prof-nodes N         nodes lent to the profiler (2)\n"
            "  --lucid-prof-time S          seconds each job is profiled (200)\n"
            "  --lucid-prof-gpu-limit N     largest job profiled, GPUs (8)\n"
            "  --lucid-prof-lenders LIST    tenants lending one node each, in turn (vc8Gr,vcefl; absent\n"
            "                               tenants: the tenant with most nodes lends)\n"
            "  --lucid-prof-scale-tenant T  tenant whose idle node the profiler borrows when its queue is\n"
            "                               long (vcYVn; 'none' or absent: no scaling)\n");
}
