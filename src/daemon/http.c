/* http.c: the observability endpoints (/ the status page, /api/status, /metrics, /explain/<jobid>,
 * /healthz, /static/NAME) and the one write, POST /api/progress (a job's step rate, munge-signed). /metrics, /healthz and the status page answer from a snapshot the main loop
 * publishes after each pass, so they never wait for the state lock, which the loop holds across libslurm
 * calls (seconds while slurmctld is down). Connections are bounded in total and per client address, and
 * idle ones time out, so slow clients cannot lock the endpoints out. With a read token set, everything but
 * /healthz and the static files asks for it (docs/deepshared.md, Access). */
#include "daemon/daemon.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define HTTP_MAX_CONNECTIONS 64   /* all clients together */
#define HTTP_MAX_PER_IP 8         /* one client address */
#define HTTP_IDLE_TIMEOUT 5       /* seconds a connection may sit without a complete request */
#define HTTP_THREADS 2            /* one slow /explain cannot hold up /metrics */
#define EXPLAIN_LOCK_WAIT 2       /* seconds /explain waits for the state lock before answering 503 */
#define STATUS_WANTED 60          /* seconds after a status request during which each publish renders it */
#define STATUS_FRESH 5            /* a status snapshot older than this is rendered anew on request */
#define TOKEN_MAX 128

static struct MHD_Daemon *mhd;

/* What the main loop last published: the metrics text and whether slurmctld answered. */
static pthread_mutex_t snap_lock = PTHREAD_MUTEX_INITIALIZER;
static char *snap_metrics;
static int snap_slurm_up = -1; /* -1: no pass yet */
/* The status page's body and JSON, rendered at publish while someone looks at the page, else on request.
 * state_gen counts the publishes that followed a change of the state; status_gen is the one the snapshot
 * shows. A request finding the state changed since renders anew: the once-a-second limit at publish may
 * have skipped the change (a job dispatched 0.5 s after the last render would stay off the page until the
 * next render, seconds later, while squeue already shows it). */
static char *snap_status_html, *snap_status_json;
static double snap_status_at = -1e9, status_wanted_at = -1e9;
static unsigned long state_gen, status_gen;
static char token[TOKEN_MAX]; /* "" = no token asked */

static double mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Under snap_lock; gen: the state_gen the page was rendered from (read under the state lock). */
static void store_status(char *html, char *json, unsigned long gen)
{
    free(snap_status_html);
    free(snap_status_json);
    snap_status_html = html;
    snap_status_json = json;
    snap_status_at = mono();
    status_gen = gen;
}

void http_publish(daemon_t *d, int changed)
{
    char *m = daemon_metrics(d); /* rendered here, under the caller's state lock, outside any request */
    pthread_mutex_lock(&snap_lock);
    if (changed) state_gen++;
    unsigned long gen = state_gen;
    double now = mono();
    int want = now - status_wanted_at < STATUS_WANTED && now - snap_status_at >= 1 && status_gen != gen;
    pthread_mutex_unlock(&snap_lock);
    char *html = NULL, *json = NULL;
    if (want) status_render(d, &html, &json); /* at most once a second, and only while the page is watched */
    pthread_mutex_lock(&snap_lock);
    free(snap_metrics);
    snap_metrics = m;
    snap_slurm_up = d->slurm_up;
    if (want) store_status(html, json, gen);
    pthread_mutex_unlock(&snap_lock);
}

void http_set_token(const char *t)
{
    pthread_mutex_lock(&snap_lock);
    snprintf(token, sizeof token, "%s", t ? t : "");
    pthread_mutex_unlock(&snap_lock);
}

/* Constant time in both strings: every comparison reads TOKEN_MAX bytes whatever the lengths or where they
 * differ, so the answer's timing tells nothing about the token. */
static int token_equal(const char *want, const char *got, size_t got_len)
{
    size_t want_len = strlen(want);
    volatile unsigned char diff = (unsigned char)(got_len != want_len) | (unsigned char)(got_len >= TOKEN_MAX);
    for (size_t i = 0; i < TOKEN_MAX; i++) {
        unsigned char a = i < want_len ? (unsigned char)want[i] : 0, b = i < got_len ? (unsigned char)got[i] : 0;
        diff |= a ^ b;
    }
    return diff == 0;
}

/* 1 when the request may read: no token set, or the right one as 'Authorization: Bearer T' or ?token=T. */
static int authorized(struct MHD_Connection *c)
{
    char want[TOKEN_MAX];
    pthread_mutex_lock(&snap_lock);
    memcpy(want, token, sizeof want);
    pthread_mutex_unlock(&snap_lock);
    if (!want[0]) return 1;
    const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    int ok = 0;
    if (h && !strncasecmp(h, "Bearer ", 7)) {
        h += 7;
        while (*h == ' ') h++;
        ok = token_equal(want, h, strlen(h));
    }
    const char *q = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
    if (!ok && q) ok = token_equal(want, q, strlen(q));
    memset(want, 0, sizeof want);
    return ok;
}

void http_publish_health(int slurm_up)
{
    pthread_mutex_lock(&snap_lock);
    if (slurm_up != snap_slurm_up) state_gen++; /* the page says whether slurmctld answers */
    snap_slurm_up = slurm_up;
    pthread_mutex_unlock(&snap_lock);
}

/* Headers every answer carries: nothing is cached or framed, and a page may load only its own files. */
static void common_headers(struct MHD_Response *r, const char *type)
{
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'none'; script-src 'self'; style-src 'self'; img-src data:; connect-src 'self'; "
                            "base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, char *body, const char *type)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    common_headers(r, type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    if (code == MHD_HTTP_UNAUTHORIZED) MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"deepshared\"");
    enum MHD_Result ret = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return ret;
}

static char *dupstr(const char *s)
{
    char *p = ds_xmalloc(strlen(s) + 1);
    strcpy(p, s);
    return p;
}

/* Waits for the state lock at most EXPLAIN_LOCK_WAIT seconds; 0 when it was taken. */
static int lock_bounded(daemon_t *d)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += EXPLAIN_LOCK_WAIT;
    return pthread_mutex_timedlock(&d->lock, &until);
}

/* / and /api/status: the snapshot when it shows the last published state and is fresh; else rendered now
 * (bounded wait for the state lock), falling back to an older snapshot while slurmctld holds the loop up. */
static enum MHD_Result status(struct MHD_Connection *c, daemon_t *d, int page)
{
    pthread_mutex_lock(&snap_lock);
    double now = mono();
    status_wanted_at = now;
    int fresh = snap_status_html && status_gen == state_gen && now - snap_status_at < STATUS_FRESH;
    pthread_mutex_unlock(&snap_lock);
    if (!fresh && !lock_bounded(d)) {
        char *html, *json;
        /* state_gen moves only under the state lock (http_publish's caller holds it), so this render shows it */
        pthread_mutex_lock(&snap_lock);
        unsigned long gen = state_gen;
        pthread_mutex_unlock(&snap_lock);
        status_render(d, &html, &json);
        pthread_mutex_unlock(&d->lock);
        pthread_mutex_lock(&snap_lock);
        store_status(html, json, gen);
        pthread_mutex_unlock(&snap_lock);
    }
    pthread_mutex_lock(&snap_lock);
    char *body = NULL;
    if (snap_status_html) {
        if (page) {
            /* links on the page keep the token the browser came with (it already matched the configured one) */
            const char *q = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
            char tq[TOKEN_MAX + 8] = "";
            if (q && token[0] && token_equal(token, q, strlen(q))) snprintf(tq, sizeof tq, "?token=%s", q);
            body = status_page(snap_status_html, tq);
        } else body = dupstr(snap_status_json);
    }
    pthread_mutex_unlock(&snap_lock);
    if (!body) return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, dupstr("busy (waiting on slurmctld); try again\n"), "text/plain");
    return reply(c, MHD_HTTP_OK, body, page ? "text/html; charset=utf-8" : "application/json");
}

/* The body of a POST to /api/progress, gathered across the calls libmicrohttpd makes. */
typedef struct post_body {
    size_t n;
    int too_long;
    char b[D_POST_MAX];
} post_body_t;

static void request_done(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    (void)cls, (void)c, (void)toe;
    free(*con_cls);
    *con_cls = NULL;
}

/* POST /api/progress: a job's step rate in a munge credential (progress_post.c). Open to every client
 * without the read token (a job has none): the credential is the authentication, and the answer says
 * nothing of other jobs. */
static enum MHD_Result progress_post(struct MHD_Connection *c, daemon_t *d, const char *upload, size_t *upload_size,
                                     void **con_cls)
{
    post_body_t *p = *con_cls;
    if (!p) {
        *con_cls = ds_xcalloc(1, sizeof *p);
        return MHD_YES;
    }
    if (*upload_size) {
        if (p->n + *upload_size > sizeof p->b) p->too_long = 1;
        else memcpy(p->b + p->n, upload, *upload_size), p->n += *upload_size;
        *upload_size = 0;
        return MHD_YES;
    }
    if (p->too_long)
        return reply(c, MHD_HTTP_CONTENT_TOO_LARGE, dupstr("a report is at most 4096 bytes\n"), "text/plain");
    size_t n = p->n;
    while (n && (p->b[n - 1] == '\n' || p->b[n - 1] == '\r' || p->b[n - 1] == ' ')) n--; /* munge(1) ends with \n */
    if (lock_bounded(d))
        return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, dupstr("busy (waiting on slurmctld); try again\n"), "text/plain");
    char msg[400];
    int code = daemon_progress_post(d, p->b, n, msg, sizeof msg);
    pthread_mutex_unlock(&d->lock);
    return reply(c, (unsigned)code, dupstr(msg), "text/plain");
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version;
    daemon_t *d = cls;
    if (!strcmp(method, "POST") && !strcmp(url, "/api/progress")) return progress_post(c, d, upload, upload_size, con_cls);
    if (strcmp(method, "GET") && strcmp(method, "HEAD"))
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED,
                     dupstr("GET only (POST /api/progress aside): the HTTP side is read-only\n"), "text/plain");
    /* open to all: liveness (no data) and the page's static files (no data) */
    if (!strcmp(url, "/healthz")) {
        pthread_mutex_lock(&snap_lock);
        int up = snap_slurm_up;
        pthread_mutex_unlock(&snap_lock);
        /* a monitor must see the failure in the status, not only in the body */
        if (up == 1) return reply(c, MHD_HTTP_OK, dupstr("ok\n"), "text/plain");
        return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE,
                     dupstr(up == 0 ? "slurmctld unreachable\n" : "starting: no pass completed yet\n"), "text/plain");
    }
    if (!strncmp(url, "/static/", 8)) {
        size_t len;
        const char *type;
        const char *body = status_asset(url, &len, &type);
        if (!body) return reply(c, MHD_HTTP_NOT_FOUND, dupstr("no such file\n"), "text/plain");
        struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_PERSISTENT);
        if (!r) return MHD_NO;
        common_headers(r, type);
        MHD_add_response_header(r, "Cache-Control", "max-age=300");
        enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
        MHD_destroy_response(r);
        return ret;
    }
    if (!authorized(c))
        return reply(c, MHD_HTTP_UNAUTHORIZED,
                     dupstr("a read token is required: send 'Authorization: Bearer TOKEN' (the status page also takes "
                            "?token=TOKEN)\n"), "text/plain");
    if (!strcmp(url, "/") || !strcmp(url, "/api/status")) return status(c, d, url[1] == 0);
    if (!strcmp(url, "/metrics")) {
        pthread_mutex_lock(&snap_lock);
        char *s = snap_metrics ? dupstr(snap_metrics) : NULL;
        pthread_mutex_unlock(&snap_lock);
        if (!s) return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, dupstr("no pass completed yet\n"), "text/plain");
        return reply(c, MHD_HTTP_OK, s, "text/plain; version=0.0.4");
    }
    if (!strncmp(url, "/explain/", 9)) {
        char *end;
        errno = 0;
        unsigned long id = strtoul(url + 9, &end, 10);
        if (errno || end == url + 9 || *end || url[9] == '-' || id == 0 || id > 0xffffffffUL)
            return reply(c, MHD_HTTP_BAD_REQUEST, dupstr("usage: /explain/<slurm job id>\n"), "text/plain");
        /* explain needs the live state; bounded wait so a stuck libslurm call cannot pin this thread */
        if (lock_bounded(d))
            return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, dupstr("busy (waiting on slurmctld); try again\n"),
                         "text/plain");
        char *s = daemon_explain(d, (uint32_t)id);
        pthread_mutex_unlock(&d->lock);
        if (!s) {
            char msg[128];
            snprintf(msg, sizeof msg, "job %lu: unknown to deepshared and to Slurm's current job list\n", id);
            return reply(c, MHD_HTTP_NOT_FOUND, dupstr(msg), "text/plain");
        }
        return reply(c, MHD_HTTP_OK, s, "text/plain");
    }
    return reply(c, MHD_HTTP_NOT_FOUND, dupstr("endpoints: / /api/status /metrics /explain/<jobid> /healthz\n"),
                 "text/plain");
}

int http_start(daemon_t *d, ds_error_t *err)
{
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)d->cfg.listen_port);
    if (inet_pton(AF_INET, d->cfg.listen_addr, &sa.sin_addr) != 1) {
        ds_error_set(err, d->cfg.path, 0, "listen", "'%s' is not an IPv4 address", d->cfg.listen_addr);
        return DS_EINVAL;
    }
    /* epoll (or poll) instead of select(): no FD_SETSIZE ceiling, and the limits below refuse the excess */
    mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG,
                           (uint16_t)d->cfg.listen_port, NULL, NULL, handle, d, MHD_OPTION_SOCK_ADDR,
                           (struct sockaddr *)&sa, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)HTTP_THREADS,
                           MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MAX_CONNECTIONS,
                           MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)HTTP_MAX_PER_IP,
                           MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_TIMEOUT,
                           MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_NOTIFY_COMPLETED,
                           request_done, NULL, MHD_OPTION_END);
    if (!mhd) {
        ds_error_set(err, d->cfg.path, 0, "listen", "cannot listen on %s:%d (in use?)", d->cfg.listen_addr,
                     d->cfg.listen_port);
        return DS_EIO;
    }
    return DS_OK;
}

void http_stop(void)
{
    if (mhd) MHD_stop_daemon(mhd);
    mhd = NULL;
    pthread_mutex_lock(&snap_lock);
    free(snap_metrics);
    snap_metrics = NULL;
    snap_slurm_up = -1;
    free(snap_status_html);
    free(snap_status_json);
    snap_status_html = snap_status_json = NULL;
    snap_status_at = status_wanted_at = -1e9;
    pthread_mutex_unlock(&snap_lock);
}
