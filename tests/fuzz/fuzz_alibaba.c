/* fuzz_alibaba.c: libFuzzer target for the Alibaba GPU 2023 importer: an option byte, then openb_pod_list_*.csv,
 * "%%" and openb_node_list_*.csv (read first, as 'deepshare import alibaba' does). Accepted inputs go through the
 * whole import (fuzz_import_util.h), GPU types, per-type quotas and cluster.csv included. */
#include "fuzz_import_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t b = data[0];
    data++, size--;
    size_t c1 = fz_split(data, size);
    if (c1 == size) return 0;
    ds_import_opts_t o;
    fz_import_opts(&o, b, "qos");
    ds_import_t im;
    ds_import_init(&im);
    ds_error_t err;
    ds_error_clear(&err);
    const char *pods = fz_file("ali_p", data, c1), *nodes = fz_file("ali_n", data + c1 + 4, size - c1 - 4);
    int rc = ds_import_nodes_alibaba(&im, nodes, &err);
    if (rc == DS_OK) {
        if (im.ngt < 1 || im.ngt > DS_MAX_GPU_TYPES) abort();
        rc = ds_import_alibaba(&im, &o, pods, &err);
    }
    fz_import_rest(&im, &o, rc, NULL);
    return 0;
}
