/* fuzz_tenants.c: libFuzzer target for the tenant / Venus vc_config reader. */
#include "deepshare/trace.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    ds_error_clear(&err);
    if (ds_trace_read_tenants(&t, fz_file("tenants", data, size), 8, &err) == DS_OK) {
        if (t.ntenants <= 0) abort();
        for (int32_t i = 0; i < t.ntenants; i++)
            if (t.tenants[i].quota_gpus < 0 || ds_trace_find_tenant(&t, t.tenants[i].name) != i) abort();
    }
    ds_trace_free(&t);
    return 0;
}
