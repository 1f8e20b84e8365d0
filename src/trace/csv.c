/* csv.c: streaming CSV rows with line numbers; quoted fields are supported, embedded newlines are not. */
#include "deepshare/csv.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int ds_csv_open(ds_csv_t *c, const char *path, ds_error_t *err)
{
    memset(c, 0, sizeof *c);
    c->path = path;
    c->f = fopen(path, "r");
    if (!c->f) {
        ds_error_set(err, path, 0, NULL, "cannot open: %s", strerror(errno));
        return DS_EIO;
    }
    ds_lines_init(&c->in, c->f, DS_CSV_MAX_LINE);
    return DS_OK;
}

void ds_csv_close(ds_csv_t *c)
{
    if (c->f) fclose(c->f);
    ds_lines_free(&c->in);
    c->f = NULL;
}

static int split(ds_csv_t *c, char *s, ds_error_t *err)
{
    c->nfields = 0;
    char *p = s;
    for (;;) {
        if (c->nfields == DS_CSV_MAX_FIELDS) {
            ds_error_set(err, c->path, c->line, NULL, "more than %d fields", DS_CSV_MAX_FIELDS);
            return DS_EPARSE;
        }
        if (*p == '"') {
            char *w = ++p, *start = p;
            for (;;) {
                if (*p == '\0') {
                    ds_error_set(err, c->path, c->line, NULL, "unterminated quoted field");
                    return DS_EPARSE;
                }
                if (*p == '"') {
                    if (p[1] == '"') { *w++ = '"'; p += 2; continue; }
                    p++;
                    break;
                }
                *w++ = *p++;
            }
            *w = '\0';
            c->fields[c->nfields++] = start;
            if (*p == ',') { p++; continue; }
            if (*p == '\0') break;
            ds_error_set(err, c->path, c->line, NULL, "text after closing quote");
            return DS_EPARSE;
        }
        c->fields[c->nfields++] = p;
        char *comma = strchr(p, ',');
        if (!comma) break;
        *comma = '\0';
        p = comma + 1;
    }
    /* Trim surrounding blanks: traces written by spreadsheets carry them. */
    for (int i = 0; i < c->nfields; i++) {
        char *f = c->fields[i];
        while (*f == ' ' || *f == '\t') f++;
        size_t n = strlen(f);
        while (n > 0 && (f[n - 1] == ' ' || f[n - 1] == '\t')) f[--n] = '\0';
        c->fields[i] = f;
    }
    return DS_OK;
}

/* Offset of the first byte that is not well-formed UTF-8 (overlongs and surrogates included), -1 when none:
 * names go into JSON, which cannot carry other bytes, so they are refused here with their position. */
static long bad_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char b = s[i];
        if (b < 0x80) { i++; continue; }
        int len;
        unsigned lo = 0x80, hi = 0xBF;
        if (b >= 0xC2 && b <= 0xDF) len = 2;
        else if (b >= 0xE0 && b <= 0xEF) { len = 3; if (b == 0xE0) lo = 0xA0; if (b == 0xED) hi = 0x9F; }
        else if (b >= 0xF0 && b <= 0xF4) { len = 4; if (b == 0xF0) lo = 0x90; if (b == 0xF4) hi = 0x8F; }
        else return (long)i;
        if (i + (size_t)len > n) return (long)i;
        if (s[i + 1] < lo || s[i + 1] > hi) return (long)i;
        for (int k = 2; k < len; k++)
            if (s[i + k] < 0x80 || s[i + k] > 0xBF) return (long)i;
        i += (size_t)len;
    }
    return -1;
}

int ds_csv_next(ds_csv_t *c, ds_error_t *err)
{
    for (;;) {
        errno = 0;
        int got = ds_lines_next(&c->in);
        if (got == DS_LINE_EOF) return 0;
        c->line++;
        if (got == DS_LINE_IOERR) {
            ds_error_set(err, c->path, c->line, NULL, "read error: %s", strerror(errno));
            return DS_EIO;
        }
        /* DS_EIO, not DS_EPARSE: the reader stopped there, so no row after it can be read (--skip-bad stops too) */
        if (got == DS_LINE_LONG) {
            ds_error_set(err, c->path, c->line, NULL, "line longer than %d bytes, stopped reading there (not a CSV file?)", DS_CSV_MAX_LINE);
            return DS_EIO;
        }
        if (got == DS_LINE_NUL) {
            ds_error_set(err, c->path, c->line, NULL, "NUL byte in line (binary file?)");
            return DS_EIO;
        }
        char *buf = c->in.line;
        size_t n = c->in.len;
        /* a UTF-8 byte-order mark (spreadsheets write one) would otherwise become part of the first column name */
        if (c->line == 1 && n >= 3 && !memcmp(buf, "\xEF\xBB\xBF", 3)) {
            memmove(buf, buf + 3, n - 2);
            n -= 3;
        }
        long bad = bad_utf8((const unsigned char *)buf, n);
        if (bad >= 0) {
            ds_error_set(err, c->path, c->line, NULL, "byte %ld (0x%02X) is not valid UTF-8: save the file as UTF-8",
                         bad + 1, (unsigned char)buf[bad]);
            return DS_EPARSE;
        }
        c->ended_with_newline = n > 0 && buf[n - 1] == '\n';
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r')) buf[--n] = '\0';
        if (n == 0) continue;
        int rc = split(c, buf, err);
        return rc < 0 ? rc : 1;
    }
}

int ds_csv_col(const ds_csv_t *c, const char *name)
{
    for (int i = 0; i < c->nfields; i++)
        if (strcasecmp(c->fields[i], name) == 0) return i;
    return -1;
}

int ds_csv_open_header(ds_csv_t *c, const char *path, const char *expect, ds_error_t *err)
{
    int rc = ds_csv_open(c, path, err);
    if (rc) return rc;
    rc = ds_csv_next(c, err);
    if (rc > 0) return DS_OK;
    if (rc == 0) ds_error_set(err, path, 0, NULL, "empty file%s%s", expect ? ": " : "", expect ? expect : "");
    ds_csv_close(c);
    return rc ? rc : DS_EPARSE;
}

int ds_csv_require(ds_csv_t *c, const char *const *names, int n, int *col, ds_error_t *err)
{
    for (int i = 0; i < n; i++)
        if ((col[i] = ds_csv_col(c, names[i])) < 0) {
            ds_error_set(err, c->path, c->line, names[i], "missing required column");
            ds_csv_close(c);
            return DS_EPARSE;
        }
    return DS_OK;
}

int ds_csv_i64(const ds_csv_t *c, int col, const char *name, int64_t min, int64_t *out, ds_error_t *err)
{
    if (col < 0 || col >= c->nfields) { /* a caller bug, never the input's: rows were checked against the header */
        ds_error_set(err, c->path, c->line, name, "missing field");
        return DS_EPARSE;
    }
    const char *s = c->fields[col];
    if (!*s) {
        ds_error_set(err, c->path, c->line, name, "empty value, expected an integer");
        return DS_EPARSE;
    }
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*end == '.') { /* accept "12.0" written by pandas, reject "12.5" */
        char *e2;
        double d = strtod(s, &e2);
        if (*e2 == '\0' && d == floor(d) && fabs(d) < 9e15) { v = (long long)d; end = e2; }
    }
    if (errno || *end) {
        ds_error_set(err, c->path, c->line, name, "'%s' is not an integer", s);
        return DS_EPARSE;
    }
    if (v < min) {
        ds_error_set(err, c->path, c->line, name, "value %lld is below the minimum %lld", v, (long long)min);
        return DS_EPARSE;
    }
    *out = v;
    return DS_OK;
}

int ds_csv_int(const ds_csv_t *c, int col, const char *name, int64_t min, int64_t max, int64_t *out, ds_error_t *err)
{
    int64_t v;
    int rc = ds_csv_i64(c, col, name, min, &v, err);
    if (rc) return rc;
    if (v > max) {
        ds_error_set(err, c->path, c->line, name, "value %lld is above the maximum %lld", (long long)v, (long long)max);
        return DS_EPARSE;
    }
    *out = v;
    return DS_OK;
}

int ds_csv_num(const ds_csv_t *c, int col, const char *name, double min, double max, double *out, ds_error_t *err)
{
    double v;
    int rc = ds_csv_f64(c, col, name, min, &v, err);
    if (rc) return rc;
    if (v > max) {
        ds_error_set(err, c->path, c->line, name, "value %g is above the maximum %g", v, max);
        return DS_EPARSE;
    }
    *out = v;
    return DS_OK;
}

int ds_csv_f64(const ds_csv_t *c, int col, const char *name, double min, double *out, ds_error_t *err)
{
    if (col < 0 || col >= c->nfields) {
        ds_error_set(err, c->path, c->line, name, "missing field");
        return DS_EPARSE;
    }
    const char *s = c->fields[col];
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || errno || *end || !isfinite(v)) {
        ds_error_set(err, c->path, c->line, name, "'%s' is not a number", s);
        return DS_EPARSE;
    }
    if (v < min) {
        ds_error_set(err, c->path, c->line, name, "value %g is below the minimum %g", v, min);
        return DS_EPARSE;
    }
    *out = v;
    return DS_OK;
}

int ds_csv_row(ds_csv_t *c, int ncols, ds_error_t *err)
{
    int rc = ds_csv_next(c, err);
    if (rc <= 0 || c->nfields == ncols) return rc;
    ds_error_set(err, c->path, c->line, NULL, "expected %d fields as in the header, found %d%s", ncols, c->nfields,
                 c->ended_with_newline ? "" : " (truncated line?)");
    return DS_EPARSE;
}

int ds_csv_str(const ds_csv_t *c, int col, const char *name, char *dst, size_t n, ds_error_t *err)
{
    if (strlen(c->fields[col]) >= n) {
        ds_error_set(err, c->path, c->line, name, "value longer than %zu characters", n - 1);
        return DS_EPARSE;
    }
    snprintf(dst, n, "%s", c->fields[col]);
    return DS_OK;
}

void ds_csv_put(FILE *f, const char *s)
{
    /* RFC 4180: quote a field holding a separator, a quote or a line break, or blanks this reader would trim */
    size_t n = strlen(s);
    if (!strpbrk(s, ",\"\r\n") && !(n && strchr(" \t", s[0])) && !(n && strchr(" \t", s[n - 1]))) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}
