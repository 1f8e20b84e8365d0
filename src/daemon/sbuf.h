/* sbuf.h: a growing string deepshared renders its answers into (metrics, status page, JSON), with the
 * HTML and JSON escapes every user-supplied name goes through. */
#ifndef DS_DAEMON_SBUF_H
#define DS_DAEMON_SBUF_H

#include <stddef.h>

typedef struct buf {
    char *s;         /* NUL-terminated once anything was written; NULL before */
    size_t n, cap;
} buf_t;

void bprintf(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void bputs(buf_t *b, const char *s);
/* s as HTML text or attribute value: & < > " ' become entities. */
void bput_html(buf_t *b, const char *s);
/* s as a JSON string, quotes included: " \ and control characters escaped, < > & as \u003c \u003e \u0026
 * (safe inside HTML too), and bytes that are not valid UTF-8 as U+FFFD, so that any parser accepts it. */
void bput_json(buf_t *b, const char *s);
/* The string, "" when nothing was written (caller frees). */
char *bdone(buf_t *b);

#endif
