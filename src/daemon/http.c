/* http.c: the observability endpoints (/metrics, /explain/<jobid>, /healthz). /metrics and /healthz answer
 * from a snapshot the main loop publishes after each pass, so they never wait for the state lock, which the
 * loop holds across libslurm calls (seconds while slurmctld is down). Connections are bounded in total and
 * per client address, and idle ones time out, so slow clients cannot lock the endpoints out. */
#include "daemon/daemon.h"

#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HTTP_MAX_CONNECTIONS 64   /* all clients together */
#define HTTP_MAX_PER_IP 8         /* one client address */
#define HTTP_IDLE_TIMEOUT 5       /* seconds a connection may sit without a complete request */
#define HTTP_THREADS 2            /* one slow /explain cannot hold up /metrics */
#define EXPLAIN_LOCK_WAIT 2       /* seconds /explain waits for the state lock before answering 503 */

static struct MHD_Daemon *mhd;

/* What the main loop last published: the metrics text and whether slurmctld answered. */
static pthread_mutex_t snap_lock = PTHREAD_MUTEX_INITIALIZER;
static char *snap_metrics;
static int snap_slurm_up = -1; /* -1: no pass yet */

void http_publish(daemon_t *d)
{
    char *m = daemon_metrics(d); /* rendered here, under the caller's state lock, outside any request */
    pthread_mutex_lock(&snap_lock);
    free(snap_metrics);
    snap_metrics = m;
    snap_slurm_up = d->slurm_up;
    pthread_mutex_unlock(&snap_lock);
}

void http_publish_health(int slurm_up)
{
    pthread_mutex_lock(&snap_lock);
    snap_slurm_up = slurm_up;
    pthread_mutex_unlock(&snap_lock);
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, char *body, const char *type)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
    if (!r) {
        free(body);
        return MHD_NO;
    }
    MHD_add_response_header(r, "Content-Type", type);
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

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)version, (void)upload, (void)upload_size, (void)con_cls;
    daemon_t *d = cls;
    if (strcmp(method, "GET")) return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, dupstr("GET only\n"), "text/plain");
    if (!strcmp(url, "/metrics")) {
        pthread_mutex_lock(&snap_lock);
        char *s = snap_metrics ? dupstr(snap_metrics) : NULL;
        pthread_mutex_unlock(&snap_lock);
        if (!s) return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE, dupstr("no pass completed yet\n"), "text/plain");
        return reply(c, MHD_HTTP_OK, s, "text/plain; version=0.0.4");
    }
    if (!strcmp(url, "/healthz")) {
        pthread_mutex_lock(&snap_lock);
        int up = snap_slurm_up;
        pthread_mutex_unlock(&snap_lock);
        /* a monitor must see the failure in the status, not only in the body */
        if (up == 1) return reply(c, MHD_HTTP_OK, dupstr("ok\n"), "text/plain");
        return reply(c, MHD_HTTP_SERVICE_UNAVAILABLE,
                     dupstr(up == 0 ? "slurmctld unreachable\n" : "starting: no pass completed yet\n"), "text/plain");
    }
    if (!strncmp(url, "/explain/", 9)) {
        char *end;
        errno = 0;
        unsigned long id = strtoul(url + 9, &end, 10);
        if (errno || end == url + 9 || *end || url[9] == '-' || id == 0 || id > 0xffffffffUL)
            return reply(c, MHD_HTTP_BAD_REQUEST, dupstr("usage: /explain/<slurm job id>\n"), "text/plain");
        /* explain needs the live state; bounded wait so a stuck libslurm call cannot pin this thread */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += EXPLAIN_LOCK_WAIT;
        if (pthread_mutex_timedlock(&d->lock, &until))
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
    return reply(c, MHD_HTTP_NOT_FOUND, dupstr("endpoints: /metrics /explain/<jobid> /healthz\n"), "text/plain");
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
                           MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(64 * 1024), MHD_OPTION_END);
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
    pthread_mutex_unlock(&snap_lock);
}
