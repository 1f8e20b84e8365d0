/* usage_metrics.c: 'deepshare usage --metrics URL': fetches deepshared's per-tenant series from a Prometheus
 * server that scrapes it (its HTTP API, /api/v1/query_range, with libcurl) and hands each answer to the
 * reader (src/trace/usage_prom.c). deepshared's own /metrics holds only the present; the history a usage
 * report needs is Prometheus'. A query asks at most 10,000 points per series (Prometheus refuses more than
 * 11,000), so a long window is read in pieces that share their end points. */
#include "cli/usage_metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ANSWER ((size_t)256 << 20) /* bytes of one answer: a larger one is refused, never read without end */
#define MAX_POINTS 10000

#ifdef DS_HAVE_CURL
#include <curl/curl.h>

typedef struct body { char *p; size_t n; int over; } body_t;

static size_t on_data(char *ptr, size_t sz, size_t nm, void *ud)
{
    body_t *b = ud;
    size_t k = sz * nm;
    if (b->n + k > MAX_ANSWER) { b->over = 1; return 0; }
    b->p = ds_xrealloc(b->p, b->n + k + 1);
    memcpy(b->p + b->n, ptr, k);
    b->n += k;
    b->p[b->n] = 0;
    return k;
}

/* GETs URL; 0 with the body in *b (HTTP 200, or a 4xx/5xx whose body Prometheus fills with its error as JSON,
 * which the reader then names), -1 with msg filled when nothing usable came back. */
static int get(CURL *c, const char *url, double timeout, body_t *b, char *msg, size_t n)
{
    memset(b, 0, sizeof *b);
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 3L);
    CURLcode cc = curl_easy_perform(c);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    if (b->over) snprintf(msg, n, "the answer is larger than %zu MiB", MAX_ANSWER >> 20);
    else if (cc != CURLE_OK) snprintf(msg, n, "cannot reach it: %s", curl_easy_strerror(cc));
    else if (code != 200 && !(code >= 400 && b->p && b->p[0] == '{'))
        snprintf(msg, n, "HTTP %ld%s", code,
                 code == 404 ? " (not a Prometheus server? deepshared's own /metrics holds only the present: give the "
                               "URL of the Prometheus that scrapes it)"
                             : "");
    else return 0;
    free(b->p);
    b->p = NULL;
    return -1;
}

int ds_usage_read_metrics(ds_usage_data_t *d, const char *url, const char *match, int64_t from, int64_t to,
                          int64_t step, double timeout, int64_t *incomplete, char *msg, size_t n)
{
    *incomplete = 0;
    if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
        snprintf(msg, n, "--metrics: expected an http:// or https:// URL, got '%.200s'", url);
        return -1;
    }
    CURL *c = curl_easy_init();
    if (!c) { snprintf(msg, n, "libcurl: cannot start a request"); return -1; }
    ds_usage_prom_t p;
    ds_usage_prom_init(&p);
    char base[1024];
    snprintf(base, sizeof base, "%s", url);
    size_t bl = strlen(base);
    while (bl && base[bl - 1] == '/') base[--bl] = 0;
    int rc = 0;
    for (int f = 0; rc == 0 && f < DS_PROM_NFIELDS; f++) {
        char q[600];
        /* the gauges: the leader's (a standby exports none; max merges instances by tenant); the counter per
         * instance, since each counts from its own start */
        if (f == DS_PROM_PREEMPTIONS) snprintf(q, sizeof q, "%s{%s}", ds_usage_prom_metric[f], match ? match : "");
        else snprintf(q, sizeof q, "max by (tenant) (%s{%s})", ds_usage_prom_metric[f], match ? match : "");
        char *eq = curl_easy_escape(c, q, 0);
        for (int64_t s = from; rc == 0 && s < to;) {
            int64_t e = s + step * (MAX_POINTS - 1) < to ? s + step * (MAX_POINTS - 1) : to;
            char *u = ds_xmalloc(strlen(base) + strlen(eq) + 120);
            sprintf(u, "%s/api/v1/query_range?query=%s&start=%lld&end=%lld&step=%lld", base, eq, (long long)s,
                    (long long)e, (long long)step);
            body_t b;
            char m[400];
            if (get(c, u, timeout, &b, m, sizeof m)) {
                snprintf(msg, n, "--metrics %.300s: %s", base, m);
                rc = -1;
            } else {
                ds_error_t err;
                ds_error_clear(&err);
                if (ds_usage_prom_add(&p, d, f, b.p ? b.p : "", b.n, &err)) {
                    char em[600];
                    ds_error_format(&err, em, sizeof em);
                    snprintf(msg, n, "--metrics %.300s: %s", base, em);
                    rc = -1;
                }
                free(b.p);
            }
            free(u);
            s = e; /* the next piece starts at this one's last point: the counter's increase across is kept */
            if (e == to) break;
        }
        curl_free(eq);
    }
    if (rc == 0) {
        ds_error_t err;
        ds_error_clear(&err);
        ds_usage_prom_finish(&p, d, step, from, to, incomplete, &err);
        if (d->nsamples == 0) {
            snprintf(msg, n, "--metrics %.300s: no samples of deepshared's tenants between %lld and %lld%s%s%s", base,
                     (long long)from, (long long)to, match && match[0] ? " matching {" : "", match ? match : "",
                     match && match[0] ? "}" : "");
            rc = -1;
        }
    }
    ds_usage_prom_free(&p);
    curl_easy_cleanup(c);
    return rc;
}
#else
int ds_usage_read_metrics(ds_usage_data_t *d, const char *url, const char *match, int64_t from, int64_t to,
                          int64_t step, double timeout, int64_t *incomplete, char *msg, size_t n)
{
    (void)d, (void)url, (void)match, (void)from, (void)to, (void)step, (void)timeout;
    *incomplete = 0;
    snprintf(msg, n, "--metrics: this deepshare was built without libcurl (libcurl4-openssl-dev)");
    return -1;
}
#endif
