/* error.c: the file/line/field error record and the panic/alloc helpers. */
#include "deepshare/common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ds_error_clear(ds_error_t *err)
{
    if (err) memset(err, 0, sizeof *err);
}

void ds_error_set(ds_error_t *err, const char *file, long line, const char *field, const char *fmt, ...)
{
    if (!err) return;
    snprintf(err->file, sizeof err->file, "%s", file ? file : "");
    err->line = line;
    snprintf(err->field, sizeof err->field, "%s", field ? field : "");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
}

void ds_error_format(const ds_error_t *err, char *buf, size_t n)
{
    char where[400] = "";
    if (err->file[0] && err->line > 0)
        snprintf(where, sizeof where, "%s:%ld: ", err->file, err->line);
    else if (err->file[0])
        snprintf(where, sizeof where, "%s: ", err->file);
    if (err->field[0])
        snprintf(buf, n, "%scolumn '%s': %s", where, err->field, err->msg);
    else
        snprintf(buf, n, "%s%s", where, err->msg);
}

void ds_panic(const char *file, int line, const char *what)
{
    fprintf(stderr, "deepshare: internal error at %s:%d: assertion '%s' failed\n", file, line, what);
    abort();
}

/* Sizes are checked before anything big is allocated (readers' bounds, the CLI's fits.c), so this is the
 * last resort: say how much was asked for, then stop. */
static void out_of_memory(size_t n) __attribute__((noreturn));
static void out_of_memory(size_t n)
{
    fprintf(stderr, "deepshare: out of memory: could not allocate %.1f MiB\n", (double)n / (1 << 20));
    abort();
}

void *ds_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) out_of_memory(n);
    return p;
}

void *ds_xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz ? sz : 1);
    if (!p) out_of_memory(n * sz);
    return p;
}

void *ds_xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) out_of_memory(n);
    return q;
}
