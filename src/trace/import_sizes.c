/* import_sizes.c: tenant sizes for an import: Helios cluster_gpu_number.csv (GPUs per VC per day) or a tenant
 * file in the layouts 'simulate --vc-config' reads. */
#include "deepshare/csv.h"
#include "deepshare/import.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void set_quota(ds_import_t *im, int32_t t, int64_t gpus)
{
    if (t >= im->nquota) {
        im->quota = ds_xrealloc(im->quota, (size_t)(t + 1) * sizeof *im->quota);
        memset(im->quota + im->nquota, 0, (size_t)(t + 1 - im->nquota) * sizeof *im->quota);
        im->nquota = t + 1;
    }
    im->quota[t] = (int32_t)gpus; /* bounded by the readers (DS_MAX_QUOTA_GPUS) */
}

/* Helios: "date,vcA,vcB,...,total", one row per day. The row used is the last whose date is on or before the
 * day the import window starts (the first row when the window starts earlier), since VCs were resized over the
 * months a trace covers. */
static int read_daily(ds_import_t *im, ds_csv_t *c, ds_error_t *err)
{
    int ncols = c->nfields;
    char **names = ds_xcalloc((size_t)ncols, sizeof *names);
    for (int k = 1; k < ncols; k++) names[k] = strdup(c->fields[k]);
    int64_t *pick = ds_xcalloc((size_t)ncols, sizeof *pick);
    int64_t *row = ds_xcalloc((size_t)ncols, sizeof *row);
    int rc, have = 0;
    int64_t day0 = im->win_from - ((im->win_from % 86400) + 86400) % 86400;
    while ((rc = ds_csv_row(c, ncols, err)) > 0) {
        int64_t d;
        int is_date;
        if (ds_imp_parse_time(c->fields[0], &d, &is_date) || !is_date) {
            ds_error_set(err, c->path, c->line, names[0] ? names[0] : "date", "'%s' is not a date", c->fields[0]);
            rc = DS_EPARSE;
            break;
        }
        for (int k = 1; k < ncols && rc >= 0; k++) {
            /* the total column may exceed one tenant's bound; it is never a quota */
            int64_t max = strcasecmp(names[k], "total") ? DS_MAX_QUOTA_GPUS : INT64_MAX;
            rc = ds_csv_int(c, k, names[k], 0, max, &row[k], err);
        }
        if (rc < 0) break;
        if (!have || d <= day0) {
            memcpy(pick, row, (size_t)ncols * sizeof *row);
            have = 1;
        }
    }
    if (rc == 0 && !have) {
        ds_error_set(err, c->path, 0, NULL, "no rows (expected one per day: date,<vc>...,total)");
        rc = DS_EPARSE;
    }
    if (rc == 0) {
        for (int k = 1; k < ncols; k++) {
            if (!strcasecmp(names[k], "total") || !names[k][0]) continue;
            char name[sizeof(((ds_tenant_t *)0)->name)];
            if ((rc = ds_imp_tenant_name(names[k], name, sizeof name, c->path, 1, names[k], err))) break;
            set_quota(im, ds_strtab_intern(&im->tenants, name), pick[k]);
        }
    }
    for (int k = 1; k < ncols; k++) free(names[k]);
    free(names);
    free(pick);
    free(row);
    return rc;
}

int ds_import_read_sizes(ds_import_t *im, const ds_import_opts_t *o, const char *path, ds_error_t *err)
{
    /* every tenant so far starts at 0 GPUs: one the file does not list is raised to fit its jobs later */
    free(im->quota);
    im->quota = NULL;
    im->nquota = 0;
    ds_csv_t c;
    int rc = ds_csv_open(&c, path, err);
    if (rc) return rc;
    rc = ds_csv_next(&c, err);
    if (rc == 0) ds_error_set(err, path, 0, NULL, "empty file");
    if (rc <= 0) {
        ds_csv_close(&c);
        return rc ? rc : DS_EPARSE;
    }
    int daily = !strcasecmp(c.fields[0], "date");
    if (daily) rc = read_daily(im, &c, err);
    ds_csv_close(&c);
    if (!daily) {
        ds_trace_t t;
        ds_trace_init(&t);
        rc = ds_trace_read_tenants(&t, path, o->gpus_per_node, err);
        for (int32_t i = 0; !rc && i < t.ntenants; i++)
            set_quota(im, ds_strtab_intern(&im->tenants, t.tenants[i].name), t.tenants[i].quota_gpus);
        ds_trace_free(&t);
    }
    if (rc) return rc;
    im->quota_from_file = 1;
    return DS_OK;
}
