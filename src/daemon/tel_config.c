/* tel_config.c: the configuration keys of deepshared's retention source (telemetry.h), apart from the
 * source itself so that the config reader (dconfig.c) needs neither libcurl nor jansson. */
#include "daemon/telemetry.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tel_config_default(tel_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->kind = TEL_OFF;
    snprintf(c->url, sizeof c->url, "http://localhost:9090");
    snprintf(c->query, sizeof c->query, "avg by (hpc_job) (avg_over_time(DCGM_FI_PROF_SM_ACTIVE[1m]))");
    snprintf(c->job_label, sizeof c->job_label, "hpc_job");
    snprintf(c->dir, sizeof c->dir, "/run/deepshare/progress");
    c->stale = 180;
    c->timeout = 5;
}

const char *tel_kind_name(int kind)
{
    return kind == TEL_PROMETHEUS ? "prometheus" : kind == TEL_PROGRESS ? "progress" : "off";
}

static int copy_val(char *dst, size_t n, const char *key, const char *val, char *err, size_t errn)
{
    if (strlen(val) >= n) {
        snprintf(err, errn, "%s: longer than %zu characters", key, n - 1);
        return -1;
    }
    snprintf(dst, n, "%s", val);
    return 0;
}

int tel_config_set(tel_config_t *c, const char *key, const char *val, char *err, size_t errn)
{
    if (!strcmp(key, "telemetry")) {
        if (!strcmp(val, "off") || !strcmp(val, "none")) c->kind = TEL_OFF;
        else if (!strcmp(val, "prometheus")) c->kind = TEL_PROMETHEUS;
        else if (!strcmp(val, "progress")) c->kind = TEL_PROGRESS;
        else {
            snprintf(err, errn, "telemetry: '%s' is not off, prometheus or progress", val);
            return -1;
        }
        return 0;
    }
    if (!strcmp(key, "prometheus_url")) {
        if (strncmp(val, "http://", 7) && strncmp(val, "https://", 8)) {
            snprintf(err, errn, "prometheus_url: '%s' does not start with http:// or https://", val);
            return -1;
        }
        return copy_val(c->url, sizeof c->url, key, val, err, errn);
    }
    if (!strcmp(key, "prometheus_query")) {
        if (!*val) {
            snprintf(err, errn, "prometheus_query: empty");
            return -1;
        }
        return copy_val(c->query, sizeof c->query, key, val, err, errn);
    }
    if (!strcmp(key, "telemetry_job_label")) {
        for (const char *p = val; *p; p++)
            if (!(*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (p > val && *p >= '0' && *p <= '9'))) {
                snprintf(err, errn, "telemetry_job_label: '%s' is not a Prometheus label name", val);
                return -1;
            }
        if (!*val) {
            snprintf(err, errn, "telemetry_job_label: empty");
            return -1;
        }
        return copy_val(c->job_label, sizeof c->job_label, key, val, err, errn);
    }
    if (!strcmp(key, "progress_dir")) {
        if (!strcmp(val, "off")) { c->dir[0] = 0; return 0; } /* reports by HTTP POST only */
        if (val[0] != '/') {
            snprintf(err, errn, "progress_dir: '%s' is not an absolute path (or off)", val);
            return -1;
        }
        return copy_val(c->dir, sizeof c->dir, key, val, err, errn);
    }
    if (!strcmp(key, "telemetry_stale") || !strcmp(key, "telemetry_timeout")) {
        char *end;
        errno = 0;
        double d = strtod(val, &end);
        if (end == val || *end || errno || !isfinite(d) || d <= 0 || d > 86400) {
            snprintf(err, errn, "%s: '%s' is not a number of seconds in (0, 86400]", key, val);
            return -1;
        }
        if (!strcmp(key, "telemetry_stale")) c->stale = d;
        else c->timeout = d;
        return 0;
    }
    return 1;
}
