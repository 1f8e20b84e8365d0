/* missing_rho.c: the simulator's ground truth for colocated pairs the profile does not hold (SPEC 7.2,
 * --missing-rho X|model): a constant (1.0, the reference convention, gives them for free), or a fixed
 * interference model (the random forest of docs/predictors.md, trained once on the whole profile with its
 * fixed seed) that no policy ever sees: the policies' own predictors are built as without the option. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "deepshare/models.h"

#define MAX_CLASSES 4096 /* distinct workload descriptors: a table of MAX_CLASSES^2 floats at most */

static void desc_of(const ds_job_t *j, ds_wdesc_t *d)
{
    d->batch = (float)j->batch;
    d->amp = (float)j->amp;
    d->gpu_util = j->gpu_util;
    d->gmem_util = j->gmem_util;
    d->gmem = (float)j->gmem_mib;
}

static int same(const ds_wdesc_t *a, const ds_wdesc_t *b)
{
    return a->batch == b->batch && a->amp == b->amp && a->gpu_util == b->gpu_util && a->gmem_util == b->gmem_util &&
           a->gmem == b->gmem;
}

/* The workload profiles the forest learns from: the given file, else single_data.csv beside the pair
 * profile, else the trace's own job rows. */
static int load_single(ds_single_profile_t *sp, const ds_workload_opts_t *o, const ds_trace_t *t, ds_error_t *err)
{
    if (o->missing_rho_single) return ds_single_read(sp, o->missing_rho_single, err);
    char p[1200];
    const char *slash = strrchr(o->missing_rho_profile, '/');
    snprintf(p, sizeof p, "%.*ssingle_data.csv", slash ? (int)(slash - o->missing_rho_profile + 1) : 0,
             o->missing_rho_profile);
    if (access(p, R_OK) == 0) return ds_single_read(sp, p, err);
    if (ds_single_from_trace(sp, t) == 0) {
        ds_error_set(err, NULL, 0, "missing-rho-single",
                     "--missing-rho model: no workload profiles to train on (give --missing-rho-single single_data.csv)");
        return DS_EINVAL;
    }
    return DS_OK;
}

int ds_missing_rho_apply(ds_coloc_t *c, const ds_trace_t *t, const ds_workload_opts_t *o, ds_error_t *err)
{
    if (!o->missing_rho_model) {
        c->missing_rho = o->missing_rho_value;
        return DS_OK;
    }
    if (!o->missing_rho_profile) {
        ds_error_set(err, NULL, 0, "missing-rho", "--missing-rho model needs a pair profile to train on: give --coloc "
                                                  "FILE or --missing-rho-profile FILE (colocate_info.csv)");
        return DS_EINVAL;
    }
    ds_coloc_t prof;
    int rc = ds_coloc_read(&prof, o->missing_rho_profile, err);
    if (rc) return rc;
    ds_single_profile_t sp;
    if ((rc = load_single(&sp, o, t, err))) {
        ds_coloc_free(&prof);
        return rc;
    }
    ds_interference_config_t ic;
    ds_interference_config_default(&ic); /* fixed seed: the same truth for every run */
    ds_interference_model_t *im = NULL;
    rc = ds_interference_model_train(&im, &prof, &sp, &ic, NULL, err);
    ds_single_free(&sp);
    ds_coloc_free(&prof);
    if (rc) return rc;
    /* one class per distinct descriptor, then the table of the forest's retention of each beside each */
    int32_t n = t->njobs, nc = 0;
    int32_t *cls = ds_xmalloc((size_t)(n ? n : 1) * sizeof *cls);
    ds_wdesc_t *rep = ds_xmalloc(MAX_CLASSES * sizeof *rep);
    for (int32_t j = 0; j < n; j++) {
        ds_wdesc_t d;
        desc_of(&t->jobs[j], &d);
        int32_t k = 0;
        while (k < nc && !same(&rep[k], &d)) k++;
        if (k == nc) {
            if (nc == MAX_CLASSES) {
                ds_error_set(err, t->source, t->jobs[j].line, NULL,
                             "--missing-rho model: more than %d distinct workload descriptors", MAX_CLASSES);
                ds_interference_model_destroy(im);
                free(cls);
                free(rep);
                return DS_EINVAL;
            }
            rep[nc++] = d;
        }
        cls[j] = k;
    }
    float *miss = ds_xmalloc((size_t)(nc ? nc : 1) * (size_t)(nc ? nc : 1) * sizeof *miss);
    for (int32_t a = 0; a < nc; a++)
        for (int32_t b = 0; b < nc; b++) {
            /* a colocated job never runs faster than alone */
            double r = ds_interference_model_predict(im, &rep[a], &rep[b]);
            miss[(size_t)a * (size_t)nc + (size_t)b] = (float)(r > 1 ? 1 : r);
        }
    ds_interference_model_destroy(im);
    free(rep);
    free(c->class_of_job);
    free(c->miss);
    c->class_of_job = cls;
    c->nclass = nc;
    c->miss = miss;
    return DS_OK;
}
