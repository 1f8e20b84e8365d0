/* fuzz_journal.c: libFuzzer target for replaying deepshared's journal; what it learns must stay finite. */
#include "daemon/hist.h"
#include "fuzz_util.h"

#include <math.h>

static void quiet(const char *msg) { (void)msg; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hist_t h;
    hist_init(&h, 1, 3600);
    ds_error_t err;
    ds_error_clear(&err);
    const char *path = fz_file("journal", data, size);
    if (hist_open(&h, path, quiet, &err) == 0) {
        double p = hist_predict(&h, "a", "b");
        if (!isfinite(p) || p < 0) abort();
    }
    hist_free(&h);
    return 0;
}
