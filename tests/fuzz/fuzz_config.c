/* fuzz_config.c: libFuzzer target for the 'name = value' --config file applied to every policy's parameters. */
#include "cli/runner.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ds_run_t *runs;
    int n;
    if (ds_runs_pick("all", "--policy", &runs, &n)) abort();
    (void)ds_runs_read_config(runs, n, fz_file("config", data, size));
    ds_runs_free(runs, n);
    return 0;
}
