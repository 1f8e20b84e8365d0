/* strbuf.h: a growing NUL-terminated string that callers append to, for text built from parts: a
 * policy's explanation of a job (ops->explain), deepshared's answers, a command's captured output. */
#ifndef DS_STRBUF_H
#define DS_STRBUF_H

#include <stddef.h>

typedef struct ds_buf {
    char *s;         /* NUL-terminated once anything was written; NULL before */
    size_t n, cap;   /* length, allocated bytes */
} ds_buf_t;

void ds_bprintf(ds_buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ds_bputs(ds_buf_t *b, const char *s);
/* Appends n bytes of p (which need not be NUL-terminated). */
void ds_bput(ds_buf_t *b, const char *p, size_t n);
/* The string, "" when nothing was written; the caller frees it and b is empty again. */
char *ds_bdone(ds_buf_t *b);
/* Frees what b holds and empties it. */
void ds_bfree(ds_buf_t *b);

#endif
