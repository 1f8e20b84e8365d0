/* fuzz_gavel.c: libFuzzer target for the converter of Gavel's throughput tables (JSON) into speeds.csv and
 * pairs.csv; what it writes must read back through their own readers. */
#include "deepshare/coloc.h"
#include "deepshare/import.h"
#include "deepshare/speeds.h"
#include "fuzz_util.h"

#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char dir[128];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/ds-fuzz-gavel-out-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
        mkdir(dir, 0700);
    }
    ds_error_t err;
    ds_error_clear(&err);
    ds_gavel_summary_t sum;
    if (ds_import_gavel(fz_file("gavel", data, size), NULL, dir, &sum, &err) == DS_OK) {
        char p[256];
        ds_speeds_t s;
        snprintf(p, sizeof p, "%s/speeds.csv", dir);
        /* written rows are well formed: a failure to read them back is a bug */
        if (ds_speeds_read(&s, p, &err) != DS_OK) {
            /* only a table too large for the reader's bound may fail, with its message */
            if (sum.speeds <= DS_SPEEDS_MAX_ROWS) abort();
        } else {
            if (s.nrows != sum.speeds) abort();
            ds_speeds_free(&s);
        }
        ds_coloc_t c;
        snprintf(p, sizeof p, "%s/pairs.csv", dir);
        if (ds_coloc_read(&c, p, &err) == DS_OK) {
            if (c.npairs != sum.pairs) abort();
            ds_coloc_free(&c);
        } else if (sum.pairs <= 100000) {
            abort();
        }
    }
    return 0;
}
