/* single_profile.c: reads single_data.csv, each workload's exclusive profile and Lucid sharing score. */
#include "deepshare/csv.h"
#include "deepshare/models.h"

#include <stdlib.h>
#include <string.h>

int ds_single_read(ds_single_profile_t *s, const char *path, ds_error_t *err)
{
    memset(s, 0, sizeof *s);
    ds_csv_t f;
    int rc = ds_csv_open_header(&f, path, NULL, err);
    if (rc) return rc;
    static const char *const names[] = {"model", "dataset", "batchsize", "amp", "speed", "gpu_util", "gmem_util", "gmem", "label"};
    int col[9];
    if ((rc = ds_csv_require(&f, names, 9, col, err))) return rc;
    int ncols = f.nfields, cap = 0;
    while ((rc = ds_csv_row(&f, ncols, err)) > 0) {
        if (s->n == cap) {
            cap = cap ? 2 * cap : 64;
            s->w = ds_xrealloc(s->w, (size_t)cap * sizeof *s->w);
        }
        ds_workload_t *w = &s->w[s->n];
        memset(w, 0, sizeof *w);
        if ((rc = ds_csv_str(&f, col[0], names[0], w->model, sizeof w->model, err)) ||
            (rc = ds_csv_str(&f, col[1], names[1], w->dataset, sizeof w->dataset, err)))
            break;
        int64_t v;
        if ((rc = ds_csv_int(&f, col[2], names[2], 0, 1 << 30, &v, err))) break;
        w->batch = (int32_t)v;
        if ((rc = ds_csv_int(&f, col[3], names[3], 0, 1, &v, err))) break;
        w->amp = (int32_t)v;
        /* bounded: the forest's features are floats, and a double beyond float range does not convert */
        if ((rc = ds_csv_num(&f, col[4], names[4], 0, 1e9, &w->speed, err)) ||
            (rc = ds_csv_num(&f, col[5], names[5], 0, 1e4, &w->gpu_util, err)) ||
            (rc = ds_csv_num(&f, col[6], names[6], 0, 1e4, &w->gmem_util, err)) ||
            (rc = ds_csv_num(&f, col[7], names[7], 0, 1e9, &w->gmem, err)) ||
            (rc = ds_csv_int(&f, col[8], names[8], 0, 2, &v, err)))
            break;
        w->label = (int32_t)v; /* Lucid's sharing score: 0, 1 or 2, never a fraction */
        s->n++;
    }
    ds_csv_close(&f);
    if (rc < 0) {
        ds_single_free(s);
        return rc;
    }
    return DS_OK;
}

int32_t ds_single_find(const ds_single_profile_t *s, const char *model, const char *dataset, int32_t batch, int32_t amp)
{
    for (int32_t i = 0; i < s->n; i++)
        if (s->w[i].batch == batch && s->w[i].amp == amp && !strcmp(s->w[i].model, model) &&
            !strcmp(s->w[i].dataset, dataset))
            return i;
    return -1;
}

void ds_single_free(ds_single_profile_t *s)
{
    free(s->w);
    memset(s, 0, sizeof *s);
}

int32_t ds_single_from_trace(ds_single_profile_t *s, const ds_trace_t *t)
{
    memset(s, 0, sizeof *s);
    int32_t cap = 0;
    for (int32_t i = 0; i < t->njobs; i++) {
        const ds_job_t *j = &t->jobs[i];
        if (j->model < 0 || j->dataset < 0 || (j->gpu_util <= 0 && j->gmem_mib <= 0)) continue;
        const char *model = ds_trace_model_name(t, j), *dataset = ds_trace_dataset_name(t, j);
        if (strlen(model) >= sizeof s->w[0].model || strlen(dataset) >= sizeof s->w[0].dataset) continue;
        if (ds_single_find(s, model, dataset, j->batch, j->amp) >= 0) continue;
        if (s->n == cap) {
            cap = cap ? 2 * cap : 64;
            s->w = ds_xrealloc(s->w, (size_t)cap * sizeof *s->w);
        }
        ds_workload_t *w = &s->w[s->n++];
        memset(w, 0, sizeof *w);
        snprintf(w->model, sizeof w->model, "%s", model);
        snprintf(w->dataset, sizeof w->dataset, "%s", dataset);
        w->batch = j->batch;
        w->amp = j->amp;
        w->gpu_util = j->gpu_util;
        w->gmem_util = j->gmem_util;
        w->gmem = j->gmem_mib;
        w->label = -1;
    }
    return s->n;
}
