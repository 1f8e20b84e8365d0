/* explain.c: 'deepshare explain <jobid>': asks a running deepshared why a Slurm job waits (its
 * /explain endpoint on the loopback HTTP server) and prints the answer. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli/cli.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: deepshare explain [--addr ADDRESS:PORT] [--token-file FILE] <slurm job id>\n"
               "Prints why deepshared has not started a job yet (quota, QAD band, no fit, colocation rejected\n"
               "with predicted retention and threshold), or where it runs. ADDRESS:PORT is deepshared's 'listen'\n"
               "setting (default 127.0.0.1:9464, or $DEEPSHARED_ADDR). When deepshared asks for a read token,\n"
               "FILE holds it on its first line (or $DEEPSHARED_TOKEN_FILE names the file).\n");
}

int ds_cmd_explain(int argc, char **argv)
{
    const char *addr = getenv("DEEPSHARED_ADDR");
    const char *tokfile = getenv("DEEPSHARED_TOKEN_FILE");
    const char *job = NULL;
    if (!addr) addr = "127.0.0.1:9464";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) { usage(stdout); return 0; }
        if (!strcmp(argv[i], "--addr") && i + 1 < argc) addr = argv[++i];
        else if (!strcmp(argv[i], "--token-file") && i + 1 < argc) tokfile = argv[++i];
        else if (!job && argv[i][0] != '-') job = argv[i];
        else { usage(stderr); return 2; }
    }
    char *end;
    unsigned long id = job ? strtoul(job, &end, 10) : 0;
    if (!job || *end || id == 0) { usage(stderr); return 2; }
    /* the token goes in a header, never in the URL or on the command line (ps shows argv) */
    char auth[200] = "";
    if (tokfile && *tokfile) {
        FILE *tf = fopen(tokfile, "r");
        char tok[160] = "";
        if (!tf || !fgets(tok, sizeof tok, tf)) {
            fprintf(stderr, "deepshare explain: --token-file: cannot read '%s'\n", tokfile);
            if (tf) fclose(tf);
            return 2;
        }
        fclose(tf);
        tok[strcspn(tok, "\r\n")] = 0;
        snprintf(auth, sizeof auth, "Authorization: Bearer %s\r\n", tok);
    }
    char host[64];
    const char *colon = strrchr(addr, ':');
    long port = colon ? strtol(colon + 1, &end, 10) : 0;
    if (!colon || *end || port < 1 || port > 65535 || (size_t)(colon - addr) >= sizeof host) {
        fprintf(stderr, "deepshare explain: --addr: expected ADDRESS:PORT, got '%s'\n", addr);
        return 2;
    }
    snprintf(host, sizeof host, "%.*s", (int)(colon - addr), addr);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        fprintf(stderr, "deepshare explain: --addr: '%s' is not an IPv4 address\n", host);
        return 2;
    }
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct timeval tv = {10, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
        fprintf(stderr, "deepshare explain: cannot reach deepshared at %s (is it running? see 'listen' in its config)\n", addr);
        if (fd >= 0) close(fd);
        return 1;
    }
    char req[512];
    int n = snprintf(req, sizeof req, "GET /explain/%lu HTTP/1.0\r\nHost: %s\r\n%s\r\n", id, addr, auth);
    if (write(fd, req, (size_t)n) != n) { close(fd); fprintf(stderr, "deepshare explain: write failed\n"); return 1; }
    size_t cap = 8192, len = 0;
    char *buf = malloc(cap);
    ssize_t k;
    /* an answer is a few KiB: 16 MiB is a daemon gone wrong (or not deepshared at that port) */
    while (buf && cap <= (16u << 20) && (k = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (size_t)k;
        if (len + 1 == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    close(fd);
    if (!buf) return 1;
    buf[len] = 0;
    int status = 0;
    sscanf(buf, "HTTP/%*s %d", &status);
    char *body = strstr(buf, "\r\n\r\n");
    body = body ? body + 4 : buf;
    /* the text names accounts and users that came from Slurm: no control character reaches the terminal */
    FILE *out = status == 200 ? stdout : stderr;
    for (const char *p = body; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) fprintf(out, "\\x%02x", c);
        else fputc(c, out);
    }
    free(buf);
    return status == 200 ? 0 : 1;
}
