/* fuzz_pai.c: libFuzzer target for the Alibaba PAI 2020 importer: an option byte, then pai_job_table.csv,
 * "%%", pai_task_table.csv and optionally "%%" and pai_group_tag_table.csv; with the option byte's bit 6 the
 * last part is pai_machine_spec.csv instead (--machines: the jobs keep their GPU types). Accepted inputs go
 * through the whole import (fuzz_import_util.h). */
#include "fuzz_import_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    uint8_t b = data[0];
    data++, size--;
    size_t c1 = fz_split(data, size);
    if (c1 == size) return 0;
    const uint8_t *tasks = data + c1 + 4;
    size_t tn = size - c1 - 4, c2 = fz_split(tasks, tn);
    const char *mp = NULL;
    if ((b >> 6) & 1) {
        /* the last part is the machine list */
        if (c2 == tn) return 0;
        const uint8_t *rest = tasks + c2 + 4;
        size_t rn = tn - c2 - 4, c3 = fz_split(rest, rn);
        if (c3 == rn) {
            mp = fz_file("pai_m", rest, rn);
            tn = c2;
        } else {
            mp = fz_file("pai_m", rest + c3 + 4, rn - c3 - 4);
            tn = c2 + 4 + c3;
        }
    }
    ds_import_opts_t o;
    /* the second tenant field: group when a group table is given, else the GPU type */
    fz_import_opts(&o, b, c2 < tn ? "group" : "gpu-type");
    ds_import_t im;
    ds_import_init(&im);
    ds_error_t err;
    ds_error_clear(&err);
    const char *jp = fz_file("pai_j", data, c1), *tp = fz_file("pai_t", tasks, c2);
    const char *gp = c2 < tn ? fz_file("pai_g", tasks + c2 + 4, tn - c2 - 4) : NULL;
    int rc = mp ? ds_import_nodes_pai(&im, mp, &err) : DS_OK;
    if (rc == DS_OK) rc = ds_import_pai(&im, &o, jp, tp, gp, &err);
    fz_import_rest(&im, &o, rc, NULL);
    return 0;
}
