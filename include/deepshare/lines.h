/* lines.h: reading a text file line by line, with the bound on a line's length enforced while reading. */
#ifndef DS_LINES_H
#define DS_LINES_H
#if defined(DS_LAYER_BASE) || defined(DS_LAYER_ENGINE)
#error "deepshare/lines.h belongs to the io layer: this layer may not include it (see CMakeLists.txt)"
#endif

#include <stddef.h>
#include <stdio.h>

/* What ds_lines_next found. */
enum {
    DS_LINE_EOF = 0,       /* no more lines */
    DS_LINE_OK = 1,        /* a line in .line (.len bytes, its '\n' kept when it had one, NUL-terminated) */
    DS_LINE_LONG = -1,     /* the line reached .max bytes without ending: reading stopped there */
    DS_LINE_NUL = -2,      /* a NUL byte: the file is binary, not text (found in the first block that holds one) */
    DS_LINE_IOERR = -3,    /* the read failed (errno says why) */
};

typedef struct ds_lines {
    FILE *f;
    size_t max;            /* most bytes in one line, its '\n' included */
    char *line;
    size_t len, cap;
    char *blk;             /* read-ahead block */
    size_t pos, end;
    int eof, error;        /* error: the DS_LINE_* error every later call returns */
} ds_lines_t;

/* Reads f (not closed by ds_lines_free) in lines of at most max bytes; memory stays within max plus one block
 * whatever the input, so a file without line breaks (or a pipe that never ends) cannot grow it. */
void ds_lines_init(ds_lines_t *l, FILE *f, size_t max);
/* The next line; returns one of the DS_LINE_* values. After an error the reader stays at the error. */
int ds_lines_next(ds_lines_t *l);
void ds_lines_free(ds_lines_t *l);

#endif
