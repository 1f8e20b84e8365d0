/* fuzz_coloc.c: libFuzzer target for the colocation profile reader (colocate_info.csv) and its per-trace lookup. */
#include "deepshare/coloc.h"
#include "deepshare/trace.h"
#include "fuzz_util.h"

#include <math.h>

static const char tenants[] = "tenant,quota_gpus\nvcA,8\n";
static const char jobs[] = "job_id,tenant,gpus,submit,duration,model,dataset,batchsize,amp\n"
                           "1,vcA,1,0,10,resnet18,cifar10,64,0\n2,vcA,1,5,20,bert,squad,32,1\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ds_error_t err;
    ds_error_clear(&err);
    ds_trace_t *tp = fz_trace(tenants, jobs);
    ds_coloc_t c;
    if (ds_coloc_read(&c, fz_file("coloc", data, size), &err) == DS_OK) {
        ds_coloc_bind(&c, tp);
        for (int32_t a = 0; a < tp->njobs; a++)
            for (int32_t b = 0; b < tp->njobs; b++) {
                double r = ds_coloc_rho(&c, a, b);
                if (!(r >= 0) || isinf(r)) abort();
            }
        ds_coloc_free(&c);
    }
    return 0;
}
