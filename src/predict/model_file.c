/* model_file.c: the one place models touch files: a short header naming the kind, then the bytes.
 * Called from the CLI only; the engine and policies get models already in memory. */
#include "deepshare/models.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAGIC "deepshare-model"

int ds_model_file_write(const char *path, const char *kind, const char *buf, size_t len, ds_error_t *err)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        ds_error_set(err, path, 0, NULL, "cannot write: %s", strerror(errno));
        return DS_EIO;
    }
    int ok = fprintf(f, "%s %s %zu\n", MAGIC, kind, len) > 0 && fwrite(buf, 1, len, f) == len;
    if (fclose(f) || !ok) {
        ds_error_set(err, path, 0, NULL, "write failed: %s", strerror(errno));
        return DS_EIO;
    }
    return DS_OK;
}

int ds_model_file_read(const char *path, const char *kind, char **buf, size_t *len, ds_error_t *err)
{
    *buf = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        ds_error_set(err, path, 0, NULL, "cannot open model file: %s", strerror(errno));
        return errno == ENOENT ? DS_ENOTFOUND : DS_EIO;
    }
    char head[128], k[64], magic[32];
    unsigned long long n;
    if (!fgets(head, sizeof head, f) || sscanf(head, "%31s %63s %llu", magic, k, &n) != 3 || strcmp(magic, MAGIC)) {
        ds_error_set(err, path, 1, NULL, "not a deepshare model file (expected a '%s <kind> <bytes>' header)", MAGIC);
        fclose(f);
        return DS_EPARSE;
    }
    if (strcmp(k, kind)) {
        ds_error_set(err, path, 1, NULL, "holds a '%s' model, expected a '%s' model", k, kind);
        fclose(f);
        return DS_EPARSE;
    }
    if (n > (1ull << 34)) {
        ds_error_set(err, path, 1, NULL, "implausible model size %llu bytes", n);
        fclose(f);
        return DS_EPARSE;
    }
    char *b = ds_xmalloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    int extra = fgetc(f) != EOF;
    fclose(f);
    if (got != n || extra) {
        ds_error_set(err, path, 0, NULL, "corrupt model file: header says %llu bytes, found %s", n,
                     got != n ? "fewer (truncated)" : "more");
        free(b);
        return DS_EPARSE;
    }
    b[n] = '\0';
    *buf = b;
    *len = (size_t)n;
    return DS_OK;
}
