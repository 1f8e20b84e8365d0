/* fuzz_philly.c: libFuzzer target for the Philly importer (the streaming scanner, then jansson per job): an
 * option byte, then cluster_job_log. Accepted inputs go through the whole import (fuzz_import_util.h). */
#include "fuzz_import_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    ds_import_opts_t o;
    fz_import_opts(&o, data[0], "user");
    ds_import_t im;
    ds_import_init(&im);
    ds_error_t err;
    ds_error_clear(&err);
    int rc = ds_import_philly(&im, &o, fz_file("philly", data + 1, size - 1), &err);
    fz_import_rest(&im, &o, rc, NULL);
    return 0;
}
