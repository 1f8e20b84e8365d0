/* telemetry.c: deepshared's retention source: Prometheus (dcgm-exporter's activity per Slurm job) or the
 * jobs' own step rates, each job's exclusive baseline learned while it runs alone, and the retention
 * estimate the policy's monitor samples; NaN wherever a sample is missing or stale. */
#include "daemon/telemetry.h"

#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#ifdef DS_HAVE_CURL
#include <curl/curl.h>
#endif

#include "deepshare/common.h"

/* A job with no sample for this long is forgotten (its baseline too): the table stays the size of the
 * jobs running lately, whatever the answers hold. */
#define TEL_FORGET 3600.0

void tel_init(telemetry_t *t, const tel_config_t *c)
{
    memset(t, 0, sizeof *t);
    t->cfg = *c;
    ds_idmap_init(&t->by_id);
}

void tel_free(telemetry_t *t)
{
    free(t->job);
    ds_idmap_free(&t->by_id);
    memset(t, 0, sizeof *t);
}

double tel_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static tel_job_t *find(const telemetry_t *t, uint32_t id)
{
    int32_t k = ds_idmap_get(&t->by_id, id);
    return k >= 0 ? &t->job[k] : NULL;
}

void tel_ingest(telemetry_t *t, uint32_t id, double v, double ts)
{
    if (!isfinite(v) || v < 0 || !isfinite(ts) || id == 0) {
        t->rejected++;
        return;
    }
    tel_job_t *j = find(t, id);
    if (!j) {
        if (t->n >= TEL_MAX_SERIES) {
            t->rejected++;
            return;
        }
        if (t->n == t->cap) {
            t->cap = t->cap ? t->cap * 2 : 64;
            t->job = ds_xrealloc(t->job, (size_t)t->cap * sizeof *t->job);
        }
        j = &t->job[t->n];
        memset(j, 0, sizeof *j);
        j->id = id;
        j->t = -INFINITY;
        ds_idmap_put(&t->by_id, id, t->n++);
    }
    if (ts < j->t) return; /* an older answer arriving late says nothing new */
    j->v = v, j->t = ts;
    t->samples++;
}

/* A Slurm job id from a label or a file name: digits only, 1 .. 2^32 - 1. */
static int parse_id(const char *s, uint32_t *id)
{
    if (!*s || strlen(s) > 10) return -1;
    uint64_t x = 0;
    for (const char *p = s; *p; p++) {
        if (*p < '0' || *p > '9') return -1;
        x = x * 10 + (uint64_t)(*p - '0');
    }
    if (x == 0 || x > UINT32_MAX) return -1;
    *id = (uint32_t)x;
    return 0;
}

int tel_parse_prometheus(telemetry_t *t, const char *body, size_t len, char *err, size_t errn)
{
    json_error_t je;
    json_t *root = json_loadb(body, len, 0, &je);
    if (!root) {
        snprintf(err, errn, "Prometheus answer is not JSON (line %d: %s)", je.line, je.text);
        return -1;
    }
    int rc = -1;
    const char *status = json_string_value(json_object_get(root, "status"));
    json_t *data = json_object_get(root, "data");
    const char *type = json_string_value(json_object_get(data, "resultType"));
    json_t *res = json_object_get(data, "result");
    if (!status || strcmp(status, "success")) {
        const char *e = json_string_value(json_object_get(root, "error"));
        snprintf(err, errn, "Prometheus answered status '%s'%s%s", status ? status : "(none)", e ? ": " : "", e ? e : "");
    } else if (!type || strcmp(type, "vector") || !json_is_array(res)) {
        snprintf(err, errn, "Prometheus answered a %s, not an instant vector: prometheus_query must give one value "
                 "per series (no range selector outside a function)", type ? type : "result of no type");
    } else if (json_array_size(res) > TEL_MAX_SERIES) {
        snprintf(err, errn, "Prometheus answered %zu series, more than %d", json_array_size(res), TEL_MAX_SERIES);
    } else {
        rc = 0;
        size_t i;
        json_t *s;
        json_array_foreach(res, i, s) {
            const char *lab = json_string_value(json_object_get(json_object_get(s, "metric"), t->cfg.job_label));
            json_t *val = json_object_get(s, "value");
            uint32_t id;
            /* a series without the job label is a GPU no job is mapped to: nothing to learn */
            if (!lab || parse_id(lab, &id) || !json_is_array(val) || json_array_size(val) != 2) {
                t->rejected += lab != NULL;
                continue;
            }
            const char *vs = json_string_value(json_array_get(val, 1));
            double ts = json_number_value(json_array_get(val, 0)), v = NAN;
            if (vs) {
                char *end;
                v = strtod(vs, &end);
                if (end == vs || *end) v = NAN;
            }
            int64_t before = t->samples;
            tel_ingest(t, id, v, ts);
            rc += t->samples > before;
        }
    }
    json_decref(root);
    return rc;
}

int tel_read_progress(telemetry_t *t, char *err, size_t errn)
{
    DIR *dir = opendir(t->cfg.dir);
    if (!dir) {
        snprintf(err, errn, "%s: cannot open the progress folder: %s", t->cfg.dir, strerror(errno));
        return -1;
    }
    int taken = 0, seen = 0;
    struct dirent *de;
    while ((de = readdir(dir)) && seen < TEL_MAX_SERIES) {
        uint32_t id;
        if (parse_id(de->d_name, &id)) continue; /* ., .., a writer's temporary file */
        seen++;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", t->cfg.dir, de->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue; /* removed since the listing */
        struct stat st;
        char line[128];
        int ok = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && fgets(line, sizeof line, f);
        fclose(f);
        if (!ok) {
            t->rejected++;
            continue;
        }
        char *end;
        double v = strtod(line, &end);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n') end++;
        if (end == line || *end) {
            t->rejected++;
            continue;
        }
        int64_t before = t->samples;
        tel_ingest(t, id, v, (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec * 1e-9);
        taken += t->samples > before;
    }
    closedir(dir);
    return taken;
}

#ifdef DS_HAVE_CURL
typedef struct body {
    char *p;
    size_t n;
    int over;
} body_t;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *ud)
{
    body_t *b = ud;
    size_t k = size * nmemb;
    if (b->n + k > TEL_MAX_BODY) {
        b->over = 1;
        return 0;
    }
    b->p = ds_xrealloc(b->p, b->n + k + 1);
    memcpy(b->p + b->n, ptr, k);
    b->n += k;
    b->p[b->n] = '\0';
    return k;
}

static int query_prometheus(telemetry_t *t, char *err, size_t errn)
{
    CURL *c = curl_easy_init();
    if (!c) {
        snprintf(err, errn, "libcurl: cannot start a request");
        return -1;
    }
    char *q = curl_easy_escape(c, t->cfg.query, 0);
    char url[2048];
    snprintf(url, sizeof url, "%s/api/v1/query?query=%s", t->cfg.url, q ? q : "");
    curl_free(q);
    body_t b = {NULL, 0, 0};
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(t->cfg.timeout * 1000));
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    int rc = -1;
    CURLcode cc = curl_easy_perform(c);
    long code = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    if (b.over) snprintf(err, errn, "%.120s: answer larger than %u bytes", t->cfg.url, TEL_MAX_BODY);
    else if (cc != CURLE_OK) snprintf(err, errn, "%.120s: %.100s", t->cfg.url, curl_easy_strerror(cc));
    else if (!b.p) snprintf(err, errn, "%.120s: empty answer (HTTP %ld)", t->cfg.url, code);
    else rc = tel_parse_prometheus(t, b.p, b.n, err, errn) < 0 ? -1 : 0;
    /* Prometheus puts its error in the JSON of a 400/422 answer: parsed above; any other code fails too */
    if (rc == 0 && code != 200) snprintf(err, errn, "%.120s: HTTP %ld", t->cfg.url, code), rc = -1;
    free(b.p);
    curl_easy_cleanup(c);
    return rc;
}
#else
static int query_prometheus(telemetry_t *t, char *err, size_t errn)
{
    (void)t;
    snprintf(err, errn, "built without libcurl (libcurl4-openssl-dev): the Prometheus backend is unavailable");
    return -1;
}
#endif

/* Drops jobs with no sample for TEL_FORGET s, keeping the order of the rest, and re-indexes them. */
static void forget_old(telemetry_t *t, double now)
{
    int32_t w = 0;
    for (int32_t k = 0; k < t->n; k++)
        if (now - t->job[k].t <= TEL_FORGET) t->job[w++] = t->job[k];
    if (w == t->n) return;
    t->n = w;
    ds_idmap_free(&t->by_id);
    ds_idmap_init(&t->by_id);
    for (int32_t k = 0; k < t->n; k++) ds_idmap_put(&t->by_id, t->job[k].id, k);
}

int tel_poll(telemetry_t *t, double now)
{
    if (t->cfg.kind == TEL_OFF) return 0;
    char err[256] = "";
    t->polls++;
    int rc = t->cfg.kind == TEL_PROMETHEUS ? query_prometheus(t, err, sizeof err)
           : t->cfg.dir[0]                 ? tel_read_progress(t, err, sizeof err)
                                           : 0; /* progress_dir = off: reports come by HTTP POST only */
    forget_old(t, now);
    if (rc < 0) {
        t->poll_errors++;
        snprintf(t->last_error, sizeof t->last_error, "%s", err);
        return -1;
    }
    t->t_ok = now;
    t->last_error[0] = '\0';
    return 0;
}

static int fresh(const telemetry_t *t, const tel_job_t *j, double now)
{
    return j && now - j->t <= t->cfg.stale;
}

uint32_t tel_workload_key(const char *model, const char *dataset, int batch, int amp)
{
    if (!model || !*model) return 0;
    uint32_t h = 2166136261u;
    for (const char *p = model; *p; p++) h = (h ^ (uint8_t)*p) * 16777619u;
    h = (h ^ '/') * 16777619u;
    for (const char *p = dataset ? dataset : ""; *p; p++) h = (h ^ (uint8_t)*p) * 16777619u;
    h = (h ^ (uint32_t)batch) * 16777619u;
    h = (h ^ (uint32_t)amp) * 16777619u;
    return h ? h : 1;
}

/* Open addressing over a fixed table: bounded memory; a full table learns no new workload. */
static tel_workload_t *workload(telemetry_t *t, uint32_t key, int add)
{
    for (int i = 0; i < TEL_WORKLOADS; i++) {
        tel_workload_t *w = &t->wl[(key + (uint32_t)i) % TEL_WORKLOADS];
        if (w->key == key) return w;
        if (!w->key) {
            if (!add) return NULL;
            w->key = key;
            return w;
        }
    }
    return NULL;
}

double tel_workload_base(const telemetry_t *t, uint32_t key)
{
    const tel_workload_t *w = key ? workload((telemetry_t *)t, key, 0) : NULL;
    return w && w->n ? w->base : NAN;
}

void tel_note_alone(telemetry_t *t, uint32_t id, uint32_t key, double now)
{
    tel_job_t *j = find(t, id);
    if (!fresh(t, j, now) || !(j->v > 0)) return;
    /* a running mean of its solo samples: its own speed, which a later shared sample is compared with */
    j->nbase++;
    j->base += (j->v - j->base) / j->nbase;
    tel_workload_t *w = key ? workload(t, key, 1) : NULL;
    if (w) {
        w->n = DS_MIN(w->n + 1, 1000); /* a long mean, that still follows a change of hardware or code */
        w->base += (j->v - w->base) / w->n;
    }
}

double tel_estimate(const telemetry_t *t, uint32_t id, uint32_t partner, double now, double fallback_self,
                    double fallback_partner)
{
    const tel_job_t *j = find(t, id);
    if (!fresh(t, j, now)) return NAN;
    double bj = j->nbase ? j->base : fallback_self;
    if (t->cfg.kind == TEL_PROGRESS) return bj > 0 ? j->v / bj : NAN;
    const tel_job_t *p = find(t, partner);
    /* The GPU's activity is the pair's only when the answer also maps the partner to that GPU (its series in
     * the same answer): until the exporter sees the partner, j's series is still its solo activity, which
     * divided by both baselines reads as a slowdown (0.5 / (0.5 + 0.5) for a job alone) */
    if (!p || fabs(p->t - j->t) > TEL_SAME_ANSWER) return NAN;
    double bp = p->nbase ? p->base : fallback_partner;
    return bj > 0 && bp > 0 ? DS_MIN(1.0, j->v / (bj + bp)) : NAN;
}

double tel_retention(telemetry_t *t, uint32_t id, uint32_t partner, double now, double fallback_self,
                     double fallback_partner)
{
    double r = tel_estimate(t, id, partner, now, fallback_self, fallback_partner);
    t->asked++;
    if (isnan(r)) t->missing++;
    return r;
}

double tel_age(const telemetry_t *t, uint32_t id, double now)
{
    const tel_job_t *j = find(t, id);
    return j ? now - j->t : -1;
}
