/* dcgm_standin.c: a stand-in for NVIDIA's dcgm-exporter in tests/e2e_telemetry.sh (no GPU there): serves
 * GET /metrics with the text of FILE as read at each request (the test rewrites it, write-then-rename, in
 * dcgm-exporter's exposition format: DCGM_FI_* names, its labels, one series per job id of the GPU's HPC
 * job mapping), on 127.0.0.1:PORT, until SIGTERM or SIGINT.
 * usage: dcgm_standin PORT FILE */
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>

static const char *file;
static volatile sig_atomic_t stop;

static void on_signal(int s) { (void)s; stop = 1; }

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                              const char *version, const char *upload, size_t *upload_size, void **con_cls)
{
    (void)cls, (void)version, (void)upload, (void)upload_size, (void)con_cls;
    char *body = NULL;
    size_t n = 0;
    unsigned code = MHD_HTTP_NOT_FOUND;
    if (!strcmp(method, "GET") && !strcmp(url, "/metrics")) {
        FILE *f = fopen(file, "r");
        if (f) {
            body = malloc(1 << 20);
            n = body ? fread(body, 1, (1 << 20) - 1, f) : 0;
            fclose(f);
            code = MHD_HTTP_OK;
        } else {
            code = MHD_HTTP_SERVICE_UNAVAILABLE;
        }
    }
    struct MHD_Response *r = MHD_create_response_from_buffer(n, body ? body : (void *)"", body ? MHD_RESPMEM_MUST_FREE
                                                                                            : MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "Content-Type", "text/plain; version=0.0.4");
    enum MHD_Result rc = MHD_queue_response(c, code, r);
    MHD_destroy_response(r);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 3 || atoi(argv[1]) <= 0 || atoi(argv[1]) > 65535) {
        fprintf(stderr, "usage: dcgm_standin PORT FILE\n");
        return 2;
    }
    file = argv[2];
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)atoi(argv[1]));
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD, (uint16_t)atoi(argv[1]), NULL, NULL, handle,
                                            NULL, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa, MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "dcgm_standin: cannot listen on 127.0.0.1:%s\n", argv[1]);
        return 1;
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    while (!stop) usleep(100000);
    MHD_stop_daemon(d);
    return 0;
}
