/* log.c: deepshared's levelled log (stderr, UTC timestamps to the millisecond) and its monotonic clock, at
 * the bottom of the daemon: every other file of it may log. */
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
    fprintf(stderr, "%s.%03ldZ deepshared: ", ts, t.tv_nsec / 1000000);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

double daemon_now_mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}
