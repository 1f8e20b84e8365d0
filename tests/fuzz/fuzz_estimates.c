/* fuzz_estimates.c: libFuzzer target for the duration-estimate reader (job_id,<estimate>) over a fixed trace. */
#include "deepshare/trace.h"
#include "fuzz_util.h"

static const char tenants[] = "tenant,quota_gpus\nvcA,8\n";
static const char jobs[] = "job_id,tenant,gpus,submit,duration\n1,vcA,1,0,10\n2,vcA,2,5,20\n-3,vcA,1,9,5\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ds_error_t err;
    ds_error_clear(&err);
    ds_trace_t *tp = fz_trace(tenants, jobs);
    int32_t matched = 0;
    ds_trace_read_estimates(tp, fz_file("est", data, size), 1000, &matched, &err);
    if (matched < 0 || matched > tp->njobs) abort();
    return 0;
}
