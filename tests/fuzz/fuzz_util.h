/* fuzz_util.h: the readers take paths, so each fuzz input is written to one per-process scratch file first. */
#ifndef DS_FUZZ_UTIL_H
#define DS_FUZZ_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "deepshare/trace.h"

/* Writes data to /tmp/ds-fuzz-<tag>-<pid> (reused across inputs: no file churn) and returns its path. */
static inline const char *fz_file(const char *tag, const uint8_t *data, size_t size)
{
    static char paths[4][96];
    static int used;
    int slot = -1;
    char want[96];
    snprintf(want, sizeof want, "%s/ds-fuzz-%s-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", tag, (int)getpid());
    for (int i = 0; i < used; i++)
        if (!strcmp(paths[i], want)) slot = i;
    if (slot < 0) {
        if (used == 4) abort();
        slot = used++;
        snprintf(paths[slot], sizeof paths[slot], "%s", want);
    }
    FILE *f = fopen(paths[slot], "wb");
    if (!f) abort();
    if (size && fwrite(data, 1, size, f) != size) abort();
    fclose(f);
    chmod(paths[slot], 0600); /* deepshared refuses a config others may write, whatever the umask */
    return paths[slot];
}

/* The fixed small trace (tenant and job CSV texts) a target reads its input against, read on the first
 * call of the process; aborts if it does not load. */
static inline ds_trace_t *fz_trace(const char *tenants, const char *jobs)
{
    static ds_trace_t t;
    static int ready;
    if (ready) return &t;
    ds_error_t err;
    ds_error_clear(&err);
    ds_trace_init(&t);
    if (ds_trace_read_tenants(&t, fz_file("tn", (const uint8_t *)tenants, strlen(tenants)), 8, &err) ||
        ds_trace_read_jobs(&t, fz_file("jobs", (const uint8_t *)jobs, strlen(jobs)), &err))
        abort();
    ready = 1;
    return &t;
}

/* Splits an input at the first "\n%%\n" (one input feeding two readers); the second part may be empty. */
static inline size_t fz_split(const uint8_t *data, size_t size)
{
    for (size_t i = 0; i + 4 <= size; i++)
        if (!memcmp(data + i, "\n%%\n", 4)) return i;
    return size;
}

#endif
