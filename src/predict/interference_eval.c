/* interference_eval.c: leave-one-model-out evaluation of the interference forest, and its pair
 * decision (both retentions >= threshold) against Lucid's sharing-score rule on the same pairs. */
#include "deepshare/models.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void add_confusion(int64_t *tp, int64_t *fp, int64_t *fn, int64_t *tn, int predicted, int truth)
{
    if (predicted && truth) (*tp)++;
    else if (predicted) (*fp)++;
    else if (truth) (*fn)++;
    else (*tn)++;
}

int ds_interference_eval_lomo(const ds_coloc_t *coloc, const ds_single_profile_t *single,
                              const ds_interference_config_t *c, double threshold, ds_interference_eval_t *out,
                              ds_error_t *err)
{
    memset(out, 0, sizeof *out);
    /* the models of the profile, in order of first appearance */
    char models[32][32];
    int32_t nm = 0;
    for (int32_t i = 0; i < coloc->npairs; i++)
        for (int k = 0; k < 2; k++) {
            const char *name = k ? coloc->pairs[i].model2 : coloc->pairs[i].model1;
            int32_t j;
            for (j = 0; j < nm; j++)
                if (!strcmp(models[j], name)) break;
            if (j == nm && nm < 32) snprintf(models[nm++], sizeof models[0], "%s", name);
        }
    double sae = 0, sse = 0, sy = 0, syy = 0;
    for (int32_t f = 0; f < nm; f++) {
        ds_interference_model_t *m;
        int rc = ds_interference_model_train(&m, coloc, single, c, models[f], err);
        if (rc) return rc;
        double fae = 0, fse = 0, fy = 0, fyy = 0;
        int64_t frows = 0;
        for (int32_t i = 0; i < coloc->npairs; i++) {
            const ds_coloc_pair_t *p = &coloc->pairs[i];
            if (strcmp(p->model1, models[f]) && strcmp(p->model2, models[f])) continue;
            int32_t ia = ds_single_find(single, p->model1, p->dataset1, p->batch1, p->amp1);
            int32_t ib = ds_single_find(single, p->model2, p->dataset2, p->batch2, p->amp2);
            if (ia < 0 || ib < 0) continue;
            const ds_workload_t *wa = &single->w[ia], *wb = &single->w[ib];
            ds_wdesc_t a = {(float)wa->batch, (float)wa->amp, (float)wa->gpu_util, (float)wa->gmem_util, (float)wa->gmem};
            ds_wdesc_t b = {(float)wb->batch, (float)wb->amp, (float)wb->gpu_util, (float)wb->gmem_util, (float)wb->gmem};
            double pa = ds_interference_model_predict(m, &a, &b), pb = ds_interference_model_predict(m, &b, &a);
            double ya[2] = {p->speed1, p->speed2}, yp[2] = {pa, pb};
            for (int k = 0; k < 2; k++) {
                double e = yp[k] - ya[k];
                fae += fabs(e), fse += e * e, fy += ya[k], fyy += ya[k] * ya[k];
                frows++;
            }
            int truth = p->speed1 >= threshold && p->speed2 >= threshold;
            add_confusion(&out->tp, &out->fp, &out->fn, &out->tn, pa >= threshold && pb >= threshold, truth);
            add_confusion(&out->lucid_tp, &out->lucid_fp, &out->lucid_fn, &out->lucid_tn, wa->label + wb->label <= 2,
                          truth);
            out->pairs++;
        }
        ds_interference_model_destroy(m);
        if (out->nfolds < 32 && frows) {
            snprintf(out->fold[out->nfolds].model, sizeof out->fold[0].model, "%.31s", models[f]);
            out->fold[out->nfolds].rows = frows;
            out->fold[out->nfolds].mae = fae / (double)frows;
            double var = fyy - fy * fy / (double)frows;
            out->fold[out->nfolds].r2 = var > 0 ? 1 - fse / var : NAN;
            out->nfolds++;
        }
        sae += fae, sse += fse, sy += fy, syy += fyy;
        out->rows += frows;
    }
    if (out->rows) {
        out->mae = sae / (double)out->rows;
        out->rmse = sqrt(sse / (double)out->rows);
        double var = syy - sy * sy / (double)out->rows;
        out->r2 = var > 0 ? 1 - sse / var : NAN;
    }
    return DS_OK;
}
