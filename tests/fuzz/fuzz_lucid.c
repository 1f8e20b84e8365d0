/* fuzz_lucid.c: libFuzzer target for Lucid's inputs (sharing scores, throughput series) and single_data.csv;
 * the first byte picks the reader so one corpus covers the three. */
#include <stdlib.h>

#include "deepshare/lucid.h"
#include "deepshare/models.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    int which = data[0] % 3;
    const char *path = fz_file("lucid", data + 1, size - 1);
    ds_error_t err;
    ds_error_clear(&err);
    if (which == 2) {
        ds_single_profile_t s;
        if (ds_single_read(&s, path, &err) == DS_OK) ds_single_free(&s);
        return 0;
    }
    ds_lucid_config_t *c = ds_lucid_config_new();
    int rc;
    if (which == 0) {
        ds_lucid_labels_t *l = ds_xcalloc(1, sizeof *l);
        rc = ds_lucid_read_labels(path, l, &err);
        if (rc == DS_OK) rc = ds_lucid_config_input(c, "lucid-single", l, &err);
        else free(l);
    } else {
        ds_lucid_series_t *s = ds_xcalloc(1, sizeof *s);
        rc = ds_lucid_read_series(path, s, &err);
        if (rc == DS_OK) rc = ds_lucid_config_input(c, "lucid-throughput", s, &err);
        else free(s);
    }
    if (rc == DS_OK && which == 1) {
        for (int32_t i = 1; i < c->series.n; i++)
            if (c->series.time[i] <= c->series.time[i - 1]) abort();
        (void)ds_lucid_future_mean(c, 0, 0, 1.0);
        for (int32_t i = 0; i < c->series.n && i < 4; i++) (void)ds_lucid_series_time(c, i);
    }
    ds_lucid_config_free(c);
    return 0;
}
