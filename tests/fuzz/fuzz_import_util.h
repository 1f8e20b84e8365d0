/* fuzz_import_util.h: what every importer's fuzz target checks after its reader: the whole 'deepshare import'
 * pipeline (window, sizes, quotas, the written files) and its promise that simulate takes what it wrote. */
#ifndef DS_FUZZ_IMPORT_UTIL_H
#define DS_FUZZ_IMPORT_UTIL_H

#include <sys/stat.h>

#include "deepshare/engine.h"
#include "deepshare/import.h"
#include "deepshare/policy.h"
#include "fuzz_util.h"

/* Options from one input byte, so the corpus explores them too: --skip-bad, --busiest-days 1 or 3, the
 * second --tenant-by of the format (tenant_by2, may be NULL), --gpus-per-node 2, --philly-duration last. */
static inline void fz_import_opts(ds_import_opts_t *o, uint8_t b, const char *tenant_by2)
{
    ds_import_opts_default(o);
    o->skip_bad = b & 1;
    o->busiest_days = (b >> 1) & 1 ? ((b >> 2) & 1 ? 3 : 1) : 0;
    if ((b >> 3) & 1) o->tenant_by = tenant_by2;
    if ((b >> 4) & 1) o->gpus_per_node = 2;
    o->philly_last_attempt = (b >> 5) & 1;
}

/* The scratch folder of this process, made once. */
static inline const char *fz_dir(void)
{
    static char dir[128];
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "%s/ds-fuzz-imp-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
        mkdir(dir, 0700);
    }
    return dir;
}

/* After a reader accepted its input (rc == DS_OK): the rest of the import, then the written trace through
 * simulate's readers (ds_import_write aborts if they refuse) and the engine's checks of each job. */
static inline void fz_import_rest(ds_import_t *im, const ds_import_opts_t *o, int rc, const char *sizes)
{
    ds_error_t err;
    ds_error_clear(&err);
    if (rc == DS_OK) rc = ds_import_finish(im, o, &err);
    if (rc == DS_OK && sizes) rc = ds_import_read_sizes(im, o, sizes, &err);
    if (rc == DS_OK) rc = ds_import_quotas(im, o, &err);
    if (rc == DS_OK && ds_import_write(im, o, fz_dir(), &err) == DS_OK) {
        char tn[256], jb[256], cl[256];
        snprintf(tn, sizeof tn, "%s/tenants.csv", fz_dir());
        snprintf(jb, sizeof jb, "%s/jobs.csv", fz_dir());
        snprintf(cl, sizeof cl, "%s/cluster.csv", fz_dir());
        ds_trace_t t;
        ds_trace_init(&t);
        /* a node list's types: cluster.csv first, as 'simulate --cluster' reads it */
        if ((im->ngt && ds_trace_read_cluster(&t, cl, &err)) || ds_trace_read_tenants(&t, tn, o->gpus_per_node, &err) ||
            ds_trace_read_jobs(&t, jb, &err))
            abort();
        /* small clusters only: the engine allocates every GPU (the CPU check is the summary's advice) */
        if (ds_trace_total_quota(&t) <= 65536) {
            for (int mode = 0; mode < 2; mode++) {
                ds_engine_config_t ec;
                ds_engine_config_default(&ec);
                ec.mode = mode ? DS_MODE_POOLED : DS_MODE_PARTITIONED;
                ec.gpus_per_node = o->gpus_per_node;
                ec.enforce_cpu = 0;
                ds_engine_t *e;
                if (ds_engine_create(&e, &t, &ec, ds_policy_find("fifo"), NULL, &err)) {
                    fprintf(stderr, "engine refused an imported trace: %s\n", err.msg);
                    abort();
                }
                ds_engine_destroy(e);
            }
        }
        ds_trace_free(&t);
    }
    ds_import_free(im);
}

#endif
