/* csv.h: a small streaming CSV reader that reports line numbers and rejects truncated rows. */
#ifndef DS_CSV_H
#define DS_CSV_H
/* layering (CMakeLists.txt): the io layer's header, out of reach of the layers below it */
#if defined(DS_LAYER_BASE) || defined(DS_LAYER_ENGINE)
#error "deepshare/csv.h belongs to the io layer: this layer may not include it (see CMakeLists.txt)"
#endif

#include <stdio.h>
#include "deepshare/common.h"
#include "deepshare/lines.h"

#define DS_CSV_MAX_FIELDS 64
#define DS_CSV_MAX_LINE (1 << 20) /* bytes in one row, checked while reading: longer is not a trace */

typedef struct ds_csv {
    FILE *f;
    const char *path;
    long line;           /* line number of the current row (1-based) */
    ds_lines_t in;       /* the current row's text is in.line */
    int nfields;
    char *fields[DS_CSV_MAX_FIELDS];
    int ended_with_newline;
} ds_csv_t;

int ds_csv_open(ds_csv_t *c, const char *path, ds_error_t *err);
/* Returns 1 when a row was read, 0 at end of file, negative on error (err filled). Skips blank lines. A line
 * over DS_CSV_MAX_LINE or a NUL byte is DS_EIO: reading stops there (every later call fails the same way). */
int ds_csv_next(ds_csv_t *c, ds_error_t *err);
/* ds_csv_next for a data row that must have ncols fields (as the header): 1 row, 0 end, negative on
 * error, including "expected N fields as in the header, found M (truncated line?)". */
int ds_csv_row(ds_csv_t *c, int ncols, ds_error_t *err);
void ds_csv_close(ds_csv_t *c);
/* Index of a header column (case-insensitive), -1 when absent. */
int ds_csv_col(const ds_csv_t *c, const char *name);
/* Opens path and reads its header line. An empty file is an error, "empty file" followed by ": " and
 * expect when expect is given. Returns DS_OK, or an error (err filled) with nothing left open. */
int ds_csv_open_header(ds_csv_t *c, const char *path, const char *expect, ds_error_t *err);
/* Finds the n required columns names[i] into col[i]; a missing one is an error naming it ("missing
 * required column") and closes c. Returns DS_OK or DS_EPARSE. */
int ds_csv_require(ds_csv_t *c, const char *const *names, int n, int *col, ds_error_t *err);

/* Field parsers; on failure fill err naming file, line and column. */
int ds_csv_i64(const ds_csv_t *c, int col, const char *name, int64_t min, int64_t *out, ds_error_t *err);
int ds_csv_f64(const ds_csv_t *c, int col, const char *name, double min, double *out, ds_error_t *err);
/* Copies a text field into dst (size n); a value that does not fit is an error, not a truncation. */
int ds_csv_str(const ds_csv_t *c, int col, const char *name, char *dst, size_t n, ds_error_t *err);
/* An integer in [min, max]: the bound is checked here, so no caller narrows an out-of-range value. */
int ds_csv_int(const ds_csv_t *c, int col, const char *name, int64_t min, int64_t max, int64_t *out, ds_error_t *err);
/* A finite number in [min, max]. */
int ds_csv_num(const ds_csv_t *c, int col, const char *name, double min, double max, double *out, ds_error_t *err);

/* Writes one field, quoted and with quotes doubled when it holds ',', '"', CR or LF (or edge blanks). */
void ds_csv_put(FILE *f, const char *s);

#endif
