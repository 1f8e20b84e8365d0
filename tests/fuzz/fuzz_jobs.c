/* fuzz_jobs.c: libFuzzer target for the job reader (Venus and generic columns): tenants, then "%%", then jobs;
 * accepted traces are also simulated briefly under FIFO and Tiresias, where bounds on accepted input matter. */
#include "deepshare/policy.h"
#include "deepshare/sim.h"
#include "deepshare/trace.h"
#include "fuzz_util.h"

static const char default_tenants[] = "tenant,quota_gpus\nvcA,8\nvcB,16\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t cut = fz_split(data, size);
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    ds_error_clear(&err);
    const uint8_t *jobs = data;
    size_t jn = size;
    int rc;
    if (cut < size) {
        rc = ds_trace_read_tenants(&t, fz_file("tn", data, cut), 8, &err);
        jobs = data + cut + 4;
        jn = size - cut - 4;
    } else {
        rc = ds_trace_read_tenants(&t, fz_file("tn", (const uint8_t *)default_tenants, sizeof default_tenants - 1), 8, &err);
    }
    if (rc == DS_OK && ds_trace_read_jobs(&t, fz_file("jobs", jobs, jn), &err) == DS_OK && t.njobs <= 64) {
        for (int32_t i = 1; i < t.njobs; i++)
            if (t.jobs[i].submit < t.jobs[i - 1].submit) abort();
        static const char *const pols[] = {"fifo", "tiresias"};
        for (int p = 0; p < 2; p++) {
            ds_sim_config_t sc;
            ds_sim_config_default(&sc);
            sc.policy = ds_policy_find(pols[p]);
            sc.keep_series = 1;
            ds_sim_result_t res;
            ds_error_t e2;
            ds_error_clear(&e2);
            if (ds_sim_run(&t, &sc, &res, &e2) == DS_OK) ds_sim_result_free(&res);
            else ds_sim_result_free(&res);
        }
    }
    ds_trace_free(&t);
    return 0;
}
