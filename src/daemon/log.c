/* log.c: deepshared's levelled log (stderr, UTC timestamps to the millisecond, control characters
 * escaped) and its monotonic clock, at the bottom of the daemon: every other file of it may log. */
#include "daemon/daemon.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

int daemon_cli_verbose;
int dlog_verbose;

void dlog(int level, const char *fmt, ...)
{
    if (level > dlog_verbose) return;
    char ts[32];
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    struct tm tm;
    gmtime_r(&t.tv_sec, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    char msg[2048], out[sizeof msg * 4];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* account names, comments and Slurm's messages come from users: a control character (an escape
     * sequence, a newline forging a log line) is written as \xNN */
    size_t o = 0;
    for (const char *p = msg; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7f) o += (size_t)snprintf(out + o, sizeof out - o, "\\x%02x", c);
        else out[o++] = (char)c;
    }
    out[o] = 0;
    fprintf(stderr, "%s.%03ldZ deepshared: %s\n", ts, t.tv_nsec / 1000000, out);
    fflush(stderr);
}

double daemon_now_mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
