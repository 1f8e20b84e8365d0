/* fuzz_dconfig.c: libFuzzer target for deepshared's configuration file; what it accepts must be in range. */
#include "daemon/dconfig.h"
#include "fuzz_util.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dconfig_t c;
    dconfig_default(&c);
    ds_error_t err;
    ds_error_clear(&err);
    if (dconfig_read(&c, fz_file("dconfig", data, size), &err) == DS_OK) {
        if (!isfinite(c.cycle) || !isfinite(c.poll) || !isfinite(c.missing_rho) || !isfinite(c.default_runtime) ||
            !isfinite(c.qad_lambda) || !isfinite(c.qad_theta) || !isfinite(c.dispatch_timeout))
            abort();
        if (c.k < 1 || c.k > 4 || c.job_capacity < 16 || c.ntenants < 1) abort();
        (void)dconfig_check(&c, &err);
    }
    return 0;
}
