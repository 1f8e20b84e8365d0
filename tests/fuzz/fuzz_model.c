/* fuzz_model.c: libFuzzer target for model files: the container (header, size, checksum) and, only for
 * containers that pass it, the runtime and interference model loaders. */
#include "deepshare/models.h"
#include "deepshare/trace.h"
#include "fuzz_util.h"

static const char tenants[] = "tenant,quota_gpus\nvcA,8\n";
static const char jobs[] = "job_id,tenant,gpus,submit,duration\n1,vcA,1,0,10\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ds_error_t err;
    ds_error_clear(&err);
    ds_trace_t *tp = fz_trace(tenants, jobs);
    const char *path = fz_file("model", data, size);
    for (int kind = 0; kind < 2; kind++) {
        char *buf = NULL;
        size_t len = 0;
        if (ds_model_file_read(path, kind ? "interference" : "runtime", &buf, &len, &err) == DS_OK) {
            if (kind) {
                ds_interference_model_t *m = NULL;
                if (ds_interference_model_load_buf(&m, buf, len, path, &err) == DS_OK) ds_interference_model_destroy(m);
            } else {
                ds_runtime_model_config_t c;
                ds_runtime_model_config_default(&c);
                c.frozen = 1;
                ds_runtime_model_t *m = ds_runtime_model_create(tp, &c);
                (void)ds_runtime_model_load_buf(m, buf, len, path, &err);
                ds_runtime_model_destroy(m);
            }
        }
        free(buf);
    }
    return 0;
}
