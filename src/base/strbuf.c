/* strbuf.c: the growing string of strbuf.h. */
#include "deepshare/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "deepshare/common.h"

void ds_bprintf(ds_buf_t *b, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
        va_end(ap);
        if (k < 0) return;
        if (b->s && b->n + (size_t)k < b->cap) { b->n += (size_t)k; return; }
        b->cap = (b->cap + (size_t)k + 1) * 2;
        b->s = ds_xrealloc(b->s, b->cap);
    }
}

void ds_bput(ds_buf_t *b, const char *p, size_t n)
{
    if (!b->s || b->n + n + 1 > b->cap) {
        b->cap = (b->cap + n + 1) * 2;
        b->s = ds_xrealloc(b->s, b->cap);
    }
    memcpy(b->s + b->n, p, n);
    b->n += n;
    b->s[b->n] = 0;
}

void ds_bputs(ds_buf_t *b, const char *s) { ds_bput(b, s, strlen(s)); }

char *ds_bdone(ds_buf_t *b)
{
    if (!b->s) ds_bput(b, "", 0);
    char *s = b->s;
    b->s = NULL;
    b->n = b->cap = 0;
    return s;
}

void ds_bfree(ds_buf_t *b)
{
    free(b->s);
    b->s = NULL;
    b->n = b->cap = 0;
}
