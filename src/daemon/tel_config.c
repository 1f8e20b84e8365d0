/* tel_config.c: the configuration keys of deepshared's retention source (telemetry.h), apart from the
 * source itself so that the config reader (dconfig.c) needs neither libcurl nor jansson. */
#include "daemon/telemetry.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deepshare/common.h"

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
    c->lag = -1;
}

/* A PromQL duration (1h30m, 90s, 500ms) at *p, moved past it: seconds, or -1. */
static double duration(const char **p)
{
    const char *s = *p;
    double total = 0;
    int parts = 0;
    while (*s >= '0' && *s <= '9') {
        double v = 0;
        while (*s >= '0' && *s <= '9') v = v * 10 + (*s++ - '0');
        double unit;
        if (s[0] == 'm' && s[1] == 's') unit = 1e-3, s += 2;
        else if (*s == 's') unit = 1, s++;
        else if (*s == 'm') unit = 60, s++;
        else if (*s == 'h') unit = 3600, s++;
        else if (*s == 'd') unit = 86400, s++;
        else if (*s == 'w') unit = 7 * 86400, s++;
        else if (*s == 'y') unit = 365 * 86400, s++;
        else return -1;
        total += v * unit;
        parts++;
    }
    *p = s;
    return parts ? total : -1;
}

double tel_query_window(const char *q)
{
    double range = 0, offset = 0;
    for (const char *p = q; *p;) {
        if (*p == '"' || *p == '\'' || *p == '`') { /* a string literal: its brackets are a regex's */
            char quote = *p++;
            while (*p && *p != quote) p += (*p == '\\' && quote != '`' && p[1]) ? 2 : 1;
            if (*p) p++;
            continue;
        }
        if (*p == '[') {
            p++;
            while (*p == ' ') p++;
            double d = duration(&p);
            if (d < 0) return -1;
            range = DS_MAX(range, d);
            continue;
        }
        /* "offset 5m" shifts the window back by as much (a word, not part of a name such as my_offset) */
        if (!strncmp(p, "offset", 6) && (p == q || !(isalnum((unsigned char)p[-1]) || p[-1] == '_')) && (p[6] == ' ' || p[6] == '\t')) {
            p += 6;
            while (*p == ' ' || *p == '\t') p++;
            if (*p == '-') { p++; continue; } /* a negative offset looks forward: no further back */
            double d = duration(&p);
            if (d < 0) return -1;
            offset = DS_MAX(offset, d);
            continue;
        }
        p++;
    }
    return range + offset;
}

double tel_span(const tel_config_t *c)
{
    if (c->kind == TEL_PROMETHEUS) {
        double w = tel_query_window(c->query);
        return (c->lag < 0 ? 60.0 : c->lag) + (w > 0 ? w : 0);
    }
    return c->lag < 0 ? 0.0 : c->lag;
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
        if (tel_query_window(val) < 0) {
            snprintf(err, errn, "prometheus_query: '%s' has a malformed duration in a range [..] or an offset", val);
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
    if (!strcmp(key, "telemetry_lag")) {
        if (!strcmp(val, "auto")) { c->lag = -1; return 0; }
        char *end;
        errno = 0;
        double d = strtod(val, &end);
        if (end == val || *end || errno || !isfinite(d) || d < 0 || d > 86400) {
            snprintf(err, errn, "telemetry_lag: '%s' is not auto or a number of seconds in [0, 86400]", val);
            return -1;
        }
        c->lag = d;
        return 0;
    }
    return 1;
}
