/* fuzz_helios.c: libFuzzer target for the Helios and Acme importers (one reader, two layouts) and the Helios
 * sizes file: an option byte, then cluster_log.csv, optionally "%%" and cluster_gpu_number.csv. Accepted
 * inputs go through the whole import (fuzz_import_util.h). The date parser also reads the log's first line
 * from a copy of exactly its size: in the readers' buffers an overread past the NUL hides in their slack. */
#include "deepshare/datetime.h"
#include "fuzz_import_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t b = data[0];
    data++, size--;
    size_t cut = fz_split(data, size);
    int acme = (b >> 6) & 1;
    size_t nl = 0;
    while (nl < size && nl < 64 && data[nl] != '\n') nl++;
    char *date = malloc(nl + 1);
    memcpy(date, data, nl);
    date[nl] = '\0';
    int64_t when;
    (void)ds_datetime_parse(date, &when);
    free(date);
    ds_import_opts_t o;
    fz_import_opts(&o, b, acme ? "type" : "user");
    ds_import_t im;
    ds_import_init(&im);
    ds_error_t err;
    ds_error_clear(&err);
    const char *sizes = cut < size ? fz_file("sizes", data + cut + 4, size - cut - 4) : NULL;
    int rc = ds_import_helios(&im, &o, fz_file("log", data, cut), acme, &err);
    fz_import_rest(&im, &o, rc, sizes);
    return 0;
}
