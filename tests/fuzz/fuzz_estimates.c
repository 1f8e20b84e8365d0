/* fuzz_estimates.c: libFuzzer target for the duration-estimate reader (job_id,<estimate>) over a fixed trace. */
#include "deepshare/trace.h"
#include "fuzz_util.h"

static const char tenants[] = "tenant,quota_gpus\nvcA,8\n";
static const char jobs[] = "job_id,tenant,gpus,submit,duration\n1,vcA,1,0,10\n2,vcA,2,5,20\n-3,vcA,1,9,5\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ds_trace_t t;
    static int ready;
    ds_error_t err;
    ds_error_clear(&err);
    if (!ready) { /* the trace is read once: estimates only ever fill job->estimate */
        ds_trace_init(&t);
        if (ds_trace_read_tenants(&t, fz_file("tn", (const uint8_t *)tenants, sizeof tenants - 1), 8, &err) ||
            ds_trace_read_jobs(&t, fz_file("jobs", (const uint8_t *)jobs, sizeof jobs - 1), &err))
            abort();
        ready = 1;
    }
    int32_t matched = 0;
    ds_trace_read_estimates(&t, fz_file("est", data, size), 1000, &matched, &err);
    if (matched < 0 || matched > t.njobs) abort();
    return 0;
}
