/* lucid_config.c: the Lucid policy's parameter object: defaults, setting them by name, taking the two
 * input tables the driver read for it (ds_lucid_config_input), and the --help text. */
#include "deepshare/datetime.h"
#include "deepshare/lucid.h"

#include <errno.h>
#include <stdio.h>
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

void ds_lucid_config_free(void *config)
{
    ds_lucid_config_t *c = config;
    if (!c) return;
    free(c->labels);
    ds_lucid_series_free(&c->series);
    free(c);
}

int ds_lucid_config_input(void *config, const char *key, void *table, ds_error_t *err)
{
    ds_lucid_config_t *c = config;
    if (!strcmp(key, "lucid-single")) {
        ds_lucid_labels_t *l = table;
        free(c->labels);
        c->labels = l->v;
        c->nlabels = l->n;
        free(l);
        return DS_OK;
    }
    if (!strcmp(key, "lucid-throughput")) {
        ds_lucid_series_free(&c->series);
        c->series = *(ds_lucid_series_t *)table;
        free(table);
        return DS_OK;
    }
    free(table);
    ds_error_set(err, NULL, 0, key, "not an input of lucid");
    return DS_ENOTFOUND;
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
    if (!strcmp(key, "lucid-single") || !strcmp(key, "lucid-throughput")) {
        /* inputs: the driver reads the file (ds_input_set) and hands the table to config_input */
        ds_error_set(err, NULL, 0, key, "names an input file, read by the driver (ds_input_set), not a value");
        return DS_EINVAL;
    }
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
