/* fuzz_usage.c: libFuzzer target for the readers of 'deepshare usage': the first byte picks the journal
 * (even), a run folder's jobs.csv and tenant_usage.csv (odd: "jobs\n%%\nsamples") or, from 0xf0 up, up to
 * seven Prometheus query_range answers of --metrics ("answer\n%%\nanswer...", the i-th for field
 * (first byte + i) % 7); on
 * what is accepted the report is computed and every figure must be finite or NAN (never infinite, never
 * negative GPU-hours). */
#include "deepshare/usage.h"
#include "fuzz_util.h"

#include <math.h>

static void check(const ds_usage_data_t *d)
{
    ds_usage_report_t r;
    for (int by = 0; by < 2; by++) {
        ds_usage_compute(d, -1000000, 1000000000, by, 0.95, &r);
        for (int32_t i = 0; i < r.nrows; i++) {
            const ds_usage_row_t *x = &r.rows[i];
            const double v[] = {x->gpu_h, x->g_h, x->be_h, x->quota_h, x->borrowed_h, x->lent_h, x->under_h};
            for (size_t k = 0; k < sizeof v / sizeof v[0]; k++)
                if (isinf(v[k]) || v[k] < 0) abort();
            if (!isnan(x->compliance) && !(x->compliance >= 0 && x->compliance <= 1)) abort();
        }
        ds_usage_report_free(&r);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t sel = data[0];
    int journal = sel % 2 == 0;
    data++, size--;
    ds_usage_data_t d;
    ds_usage_init(&d);
    ds_error_t err;
    ds_error_clear(&err);
    int rc;
    if (sel >= 0xf0) {
        ds_usage_prom_t p;
        ds_usage_prom_init(&p);
        rc = 0;
        for (int i = 0; rc == 0 && i < DS_PROM_NFIELDS && size > 0; i++) {
            size_t cut = fz_split(data, size), rest = cut + 4 <= size ? cut + 4 : size;
            rc = ds_usage_prom_add(&p, &d, (sel + i) % DS_PROM_NFIELDS, (const char *)data, cut, &err);
            data += rest, size -= rest;
        }
        int64_t incomplete;
        if (rc == 0) rc = ds_usage_prom_finish(&p, &d, 60, -1000000, 1000000000, &incomplete, &err);
        ds_usage_prom_free(&p);
    } else if (journal) {
        int64_t torn;
        rc = ds_usage_read_journal(&d, fz_file("ujournal", data, size), &torn, &err);
    } else {
        size_t cut = fz_split(data, size);
        rc = ds_usage_read_jobs_csv(&d, fz_file("ujobs", data, cut), &err);
        size_t rest = cut + 4 <= size ? cut + 4 : size;
        if (rc == 0) rc = ds_usage_read_samples_csv(&d, fz_file("usamples", data + rest, size - rest), &err);
    }
    if (rc == 0) check(&d);
    ds_usage_free(&d);
    return 0;
}
