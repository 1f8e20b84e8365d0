/* http.c: the observability endpoints (/metrics, /explain/<jobid>, /healthz) on libmicrohttpd's own
 * thread; each request reads the daemon state under its mutex. */
#include "daemon/daemon.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <stdlib.h>
#include <string.h>

static struct MHD_Daemon *mhd;

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, char *body, const char *type)
{
    struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
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
        pthread_mutex_lock(&d->lock);
        char *s = daemon_metrics(d);
        pthread_mutex_unlock(&d->lock);
        return reply(c, MHD_HTTP_OK, s, "text/plain; version=0.0.4");
    }
    if (!strcmp(url, "/healthz")) return reply(c, MHD_HTTP_OK, dupstr(d->slurm_up ? "ok\n" : "slurmctld unreachable\n"), "text/plain");
    if (!strncmp(url, "/explain/", 9)) {
        char *end;
        unsigned long id = strtoul(url + 9, &end, 10);
        if (end == url + 9 || *end || id == 0 || id > 0xffffffffUL)
            return reply(c, MHD_HTTP_BAD_REQUEST, dupstr("usage: /explain/<slurm job id>\n"), "text/plain");
        pthread_mutex_lock(&d->lock);
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
    mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG, (uint16_t)d->cfg.listen_port, NULL,
                           NULL, handle, d, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_TIMEOUT,
                           (unsigned)10, MHD_OPTION_END);
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
}
