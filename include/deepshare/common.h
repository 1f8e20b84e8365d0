/* common.h: error codes, the error record that names file/line/field, and assertions shared by every module. */
#ifndef DS_COMMON_H
#define DS_COMMON_H

#include <stddef.h>
#include <stdint.h>

enum {
    DS_OK = 0,
    DS_EINVAL = -1, /* bad argument or bad input */
    DS_EIO = -2,    /* a file could not be read or written */
    DS_ENOMEM = -3,
    DS_EPARSE = -4, /* malformed input, ds_error_t says where */
    DS_ENOTFOUND = -5
};

/* Where and why something failed; filled by parsers and the CLI prints it as one line. */
typedef struct ds_error {
    char file[256];
    long line;       /* 0 when not line-related */
    char field[64];  /* column or option name, "" when none */
    char msg[512];
} ds_error_t;

void ds_error_clear(ds_error_t *err);
void ds_error_set(ds_error_t *err, const char *file, long line, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Formats "file:line: column 'field': msg" into buf. */
void ds_error_format(const ds_error_t *err, char *buf, size_t n);

/* Internal consistency check: aborts with file and line; only for bugs, never for bad input. */
#define DS_ASSERT(cond) \
    do { if (!(cond)) ds_panic(__FILE__, __LINE__, #cond); } while (0)
void ds_panic(const char *file, int line, const char *what) __attribute__((noreturn));

void *ds_xmalloc(size_t n);
void *ds_xcalloc(size_t n, size_t sz);
void *ds_xrealloc(void *p, size_t n);

#define DS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define DS_MAX(a, b) ((a) > (b) ? (a) : (b))
#define DS_TIME_NEVER INT64_MAX

#endif
