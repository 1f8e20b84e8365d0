/* fuzz_observed.c: libFuzzer target for 'replay-live --score's reader (observed.csv) against a fixed small
 * trace; accepted schedules are scored through the simulator (the 'replay' policy), where bounds matter. */
#include "cli/observed.h"
#include "deepshare/sim.h"
#include "fuzz_util.h"

static const char tenants[] = "tenant,quota_gpus\nvcA,8\nvcB,16\n";
static const char jobs[] = "job_id,tenant,gpus,submit,duration\n1,vcA,1,0,100\n2,vcA,8,10,50\n3,vcB,4,20,300\n"
                           "4,vcB,16,30,10\n5,vcA,2,40,1000\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ds_trace_t *t = fz_trace(tenants, jobs);
    ds_observed_t ob;
    ds_error_t err;
    ds_error_clear(&err);
    if (ds_observed_read(&ob, t, fz_file("observed", data, size), &err) == DS_OK) {
        ds_sim_config_t sc;
        ds_sim_config_default(&sc);
        sc.engine.pool_nodes = 4;
        ds_sim_result_t res;
        if (ds_observed_score(&ob, &sc, "fuzz", &res, &err) == DS_OK) ds_sim_result_free(&res);
        else ds_sim_result_free(&res);
        ds_observed_free(&ob);
    }
    return 0;
}
