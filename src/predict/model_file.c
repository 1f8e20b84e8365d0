/* model_file.c: the one place models touch files: a short header naming the kind, the size and a checksum,
 * then the bytes. Called from the CLI only; the engine and policies get models already in memory.
 * XGBoost trusts the bytes it is given (a corrupted string length crashes it), so nothing reaches it, and
 * nothing is allocated, before the size matches the file and the checksum matches the bytes. The checksum
 * catches corruption, not tampering: model files must come from a trusted source (docs/predictors.md). */
#include "deepshare/models.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAGIC "deepshare-model"
/* Larger than any model deepshare trains (a few MiB), small enough to allocate without a second thought. */
#define MAX_MODEL_BYTES ((unsigned long long)1 << 30)

uint64_t ds_model_checksum(const char *buf, size_t len)
{
    uint64_t h = 14695981039346656037ULL; /* FNV-1a, 64 bits */
    for (size_t i = 0; i < len; i++) h = (h ^ (uint8_t)buf[i]) * 1099511628211ULL;
    return h;
}

int ds_model_file_write(const char *path, const char *kind, const char *buf, size_t len, ds_error_t *err)
{
    FILE *f = fopen(path, "wb");
    if (!f) {
        ds_error_set(err, path, 0, NULL, "cannot write: %s", strerror(errno));
        return DS_EIO;
    }
    int ok = fprintf(f, "%s %s %zu fnv1a64=%016" PRIx64 "\n", MAGIC, kind, len, ds_model_checksum(buf, len)) > 0 &&
             fwrite(buf, 1, len, f) == len;
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
    char head[160], k[64], magic[32], sum[32], extra[8];
    unsigned long long n;
    int nf = 0;
    if (!fgets(head, sizeof head, f) || !strchr(head, '\n') ||
        (nf = sscanf(head, "%31s %63s %llu %31s %7s", magic, k, &n, sum, extra)) < 3 || strcmp(magic, MAGIC)) {
        ds_error_set(err, path, 1, NULL, "not a deepshare model file (expected a '%s <kind> <bytes> fnv1a64=<hex>' header)",
                     MAGIC);
        fclose(f);
        return DS_EPARSE;
    }
    if (strcmp(k, kind)) {
        ds_error_set(err, path, 1, NULL, "holds a '%s' model, expected a '%s' model", k, kind);
        fclose(f);
        return DS_EPARSE;
    }
    uint64_t want = 0;
    char *e = NULL;
    if (nf != 4 || strncmp(sum, "fnv1a64=", 8) || strlen(sum) != 24 || (want = strtoull(sum + 8, &e, 16), *e)) {
        ds_error_set(err, path, 1, NULL, "model file has no checksum (written by an older deepshare, or damaged): "
                     "train it again");
        fclose(f);
        return DS_EPARSE;
    }
    /* the header's size must be what the file holds before anything is allocated for it */
    struct stat st;
    long hl = ftell(f);
    if (fstat(fileno(f), &st) || hl < 0 || !S_ISREG(st.st_mode)) {
        ds_error_set(err, path, 0, NULL, "not a regular file");
        fclose(f);
        return DS_EPARSE;
    }
    unsigned long long have = (unsigned long long)st.st_size - (unsigned long long)hl;
    if (n > MAX_MODEL_BYTES || n != have) {
        ds_error_set(err, path, 1, NULL, "corrupt model file: header says %llu bytes, the file holds %llu%s", n, have,
                     n > MAX_MODEL_BYTES ? " (more than any model deepshare writes)" : "");
        fclose(f);
        return DS_EPARSE;
    }
    char *b = ds_xmalloc((size_t)n + 1);
    size_t got = fread(b, 1, (size_t)n, f);
    int extra_byte = fgetc(f) != EOF;
    fclose(f);
    if (got != n || extra_byte) {
        ds_error_set(err, path, 0, NULL, "corrupt model file: header says %llu bytes, found %s", n,
                     got != n ? "fewer (truncated)" : "more");
        free(b);
        return DS_EPARSE;
    }
    if (ds_model_checksum(b, (size_t)n) != want) {
        ds_error_set(err, path, 0, NULL, "corrupt model file: checksum mismatch (the bytes changed after training)");
        free(b);
        return DS_EPARSE;
    }
    b[n] = '\0';
    *buf = b;
    *len = (size_t)n;
    return DS_OK;
}
