/* lines.c: bounded line reading (see lines.h): whole blocks are read and searched for the line break, so a
 * line's length is checked as it grows and binary input is recognised in its first block. */
#include "deepshare/lines.h"

#include <stdlib.h>
#include <string.h>

#include "deepshare/common.h"

#define BLOCK 65536

void ds_lines_init(ds_lines_t *l, FILE *f, size_t max)
{
    memset(l, 0, sizeof *l);
    l->f = f;
    l->max = max < 2 ? 2 : max;
}

void ds_lines_free(ds_lines_t *l)
{
    free(l->line);
    free(l->blk);
    l->line = l->blk = NULL;
}

/* Appends n bytes to the line, growing it by doubling up to max + 1 (the NUL). */
static void append(ds_lines_t *l, const char *s, size_t n)
{
    if (l->len + n + 1 > l->cap) {
        size_t cap = l->cap ? l->cap : 256;
        while (cap < l->len + n + 1) cap *= 2;
        if (cap > l->max + 1) cap = l->max + 1;
        l->line = ds_xrealloc(l->line, cap);
        l->cap = cap;
    }
    memcpy(l->line + l->len, s, n);
    l->len += n;
    l->line[l->len] = '\0';
}

int ds_lines_next(ds_lines_t *l)
{
    l->len = 0;
    if (l->line) l->line[0] = '\0';
    if (l->error) return l->error;
    if (!l->blk) l->blk = ds_xmalloc(BLOCK);
    for (;;) {
        if (l->pos == l->end) {
            if (l->eof) return l->len ? DS_LINE_OK : DS_LINE_EOF;
            size_t n = fread(l->blk, 1, BLOCK, l->f);
            if (n == 0) {
                if (ferror(l->f)) return l->error = DS_LINE_IOERR;
                l->eof = 1;
                continue;
            }
            l->pos = 0;
            l->end = n;
        }
        const char *s = l->blk + l->pos;
        const char *nl = memchr(s, '\n', l->end - l->pos);
        size_t take = nl ? (size_t)(nl - s) + 1 : l->end - l->pos;
        /* text has no NUL: a binary file is named as such in its first block, not after a line's bound */
        int why = memchr(s, '\0', take) ? DS_LINE_NUL : l->len + take > l->max ? DS_LINE_LONG : 0;
        if (why) return l->error = why;
        append(l, s, take);
        l->pos += take;
        if (nl) return DS_LINE_OK;
    }
}
