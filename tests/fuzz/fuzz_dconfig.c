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
        for (int i = 0; i < c.ntenants; i++) {
            /* a quota per GPU type: its types named, in range, summing to the tenant's quota */
            const dc_tenant_t *t = &c.tenants[i];
            long sum = 0;
            if (t->ntq < 0 || t->ntq > DC_MAX_QTYPES || t->quota < 0) abort();
            for (int k = 0; k < t->ntq; k++) {
                if (t->tq[k] < 0 || !t->tq_name[k][0]) abort();
                sum += t->tq[k];
            }
            if (t->ntq && sum != t->quota) abort();
        }
        (void)dconfig_check(&c, &err);
    }
    return 0;
}
