/* interference_model.c: a random forest (XGBoost, many parallel trees, one round) predicting a job's
 * retention beside a partner from both workloads' exclusive profiles; cached per workload pair. */
#include "deepshare/models.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ds_interference_model {
    ds_xgb_t *rf;
    /* binding to one trace: workload-config index per job and a lazily filled pair cache */
    const ds_trace_t *t;
    int32_t *cfg_of_job, njobs_bound, ncfg;
    float *cache;
};

void ds_interference_config_default(ds_interference_config_t *c)
{
    memset(c, 0, sizeof *c);
    /* 50 trees and 64 bins: held-out error and pair decisions as good as 200 trees and 256 bins
     * (docs/predictors.md) for a sixth of the training time, paid at every start */
    c->trees = 50;
    c->max_bin = 64;
    c->max_depth = 8;
    c->subsample = 0.8;
    c->colsample = 0.8;
    c->nthread = 1;
    c->seed = 1;
}

void ds_interference_features(const ds_wdesc_t *a, const ds_wdesc_t *b, float *x)
{
    const ds_wdesc_t *d[2] = {a, b};
    for (int k = 0; k < 2; k++) {
        float *o = x + k * DS_IF_NDESC;
        o[0] = d[k]->batch;
        o[1] = d[k]->amp;
        o[2] = d[k]->gpu_util;
        o[3] = d[k]->gmem_util;
        o[4] = d[k]->gmem;
    }
    x[2 * DS_IF_NDESC] = a->gpu_util + b->gpu_util;
    x[2 * DS_IF_NDESC + 1] = a->gmem_util + b->gmem_util;
    x[2 * DS_IF_NDESC + 2] = a->gmem + b->gmem;
}

void ds_wdesc_of(const ds_workload_t *w, ds_wdesc_t *d)
{
    d->batch = (float)w->batch;
    d->amp = (float)w->amp;
    d->gpu_util = (float)w->gpu_util;
    d->gmem_util = (float)w->gmem_util;
    d->gmem = (float)w->gmem;
}

int ds_interference_model_train(ds_interference_model_t **out, const ds_coloc_t *coloc,
                                const ds_single_profile_t *single, const ds_interference_config_t *c,
                                const char *skip_model, ds_error_t *err)
{
    *out = NULL;
    float *x = ds_xmalloc((size_t)(2 * coloc->npairs + 1) * DS_IF_NFEAT * sizeof *x);
    float *y = ds_xmalloc((size_t)(2 * coloc->npairs + 1) * sizeof *y);
    int64_t n = 0;
    double sum = 0;
    for (int32_t i = 0; i < coloc->npairs; i++) {
        const ds_coloc_pair_t *p = &coloc->pairs[i];
        if (skip_model && (!strcmp(p->model1, skip_model) || !strcmp(p->model2, skip_model))) continue;
        int32_t ia = ds_single_find(single, p->model1, p->dataset1, p->batch1, p->amp1);
        int32_t ib = ds_single_find(single, p->model2, p->dataset2, p->batch2, p->amp2);
        if (ia < 0 || ib < 0) continue;
        ds_wdesc_t a, b;
        ds_wdesc_of(&single->w[ia], &a);
        ds_wdesc_of(&single->w[ib], &b);
        ds_interference_features(&a, &b, &x[n * DS_IF_NFEAT]);
        y[n++] = (float)p->speed1;
        ds_interference_features(&b, &a, &x[n * DS_IF_NFEAT]);
        y[n++] = (float)p->speed2;
        sum += p->speed1 + p->speed2;
    }
    if (n == 0) {
        free(x);
        free(y);
        ds_error_set(err, NULL, 0, NULL, "no colocation pair matches a workload of the single-job profile: "
                     "nothing to train the interference model on");
        return DS_EINVAL;
    }
    ds_xgb_params_t p;
    ds_xgb_params_init(&p, 1);
    p.nthread = c->nthread;
    ds_xgb_param(&p, "booster", "gbtree");
    ds_xgb_param(&p, "objective", "reg:squarederror");
    ds_xgb_param(&p, "tree_method", "hist");
    ds_xgb_param(&p, "num_parallel_tree", "%d", c->trees);
    ds_xgb_param(&p, "subsample", "%g", c->subsample);
    ds_xgb_param(&p, "colsample_bynode", "%g", c->colsample);
    ds_xgb_param(&p, "learning_rate", "1");
    ds_xgb_param(&p, "max_depth", "%d", c->max_depth);
    ds_xgb_param(&p, "reg_lambda", "1e-5");
    ds_xgb_param(&p, "min_child_weight", "1");
    ds_xgb_param(&p, "max_bin", "%d", c->max_bin);
    ds_xgb_param(&p, "base_score", "%g", sum / (double)n);
    ds_xgb_param(&p, "seed", "%llu", (unsigned long long)c->seed);
    ds_xgb_t *rf;
    int rc = ds_xgb_train(&rf, x, y, n, DS_IF_NFEAT, &p, err);
    free(x);
    free(y);
    if (rc) return rc;
    ds_interference_model_t *m = ds_xcalloc(1, sizeof *m);
    m->rf = rf;
    *out = m;
    return DS_OK;
}

static void unbind(ds_interference_model_t *m)
{
    free(m->cfg_of_job);
    free(m->cache);
    m->cfg_of_job = NULL;
    m->cache = NULL;
    m->t = NULL;
    m->njobs_bound = m->ncfg = 0;
}

void ds_interference_model_destroy(ds_interference_model_t *m)
{
    if (!m) return;
    ds_xgb_free(m->rf);
    unbind(m);
    free(m);
}

double ds_interference_model_predict(ds_interference_model_t *m, const ds_wdesc_t *a, const ds_wdesc_t *b)
{
    float x[DS_IF_NFEAT];
    ds_interference_features(a, b, x);
    double v = ds_xgb_predict1(m->rf, x);
    if (isnan(v)) v = 1.0;
    return v < 0.05 ? 0.05 : v > 2 ? 2 : v;
}

double ds_interference_model_spread(ds_interference_model_t *m, const ds_wdesc_t *a, const ds_wdesc_t *b)
{
    float x[DS_IF_NFEAT];
    ds_interference_features(a, b, x);
    return ds_xgb_tree_spread(m->rf, x);
}

static void job_desc(const ds_job_t *j, ds_wdesc_t *d)
{
    d->batch = (float)j->batch;
    d->amp = (float)j->amp;
    d->gpu_util = j->gpu_util;
    d->gmem_util = j->gmem_util;
    d->gmem = (float)j->gmem_mib;
}

/* Jobs of one (model, dataset, batch, amp) share a config index, so a pair is predicted once. */
static void bind(ds_interference_model_t *m, const ds_trace_t *t)
{
    unbind(m);
    m->t = t;
    m->njobs_bound = t->njobs;
    m->cfg_of_job = ds_xmalloc((size_t)(t->njobs ? t->njobs : 1) * sizeof *m->cfg_of_job);
    int32_t cap = 64, n = 0;
    int32_t *keys = ds_xmalloc((size_t)cap * 4 * sizeof *keys);
    for (int32_t i = 0; i < t->njobs; i++) {
        const ds_job_t *j = &t->jobs[i];
        m->cfg_of_job[i] = -1;
        if (j->model < 0) continue;
        int32_t k;
        for (k = 0; k < n; k++)
            if (keys[4 * k] == j->model && keys[4 * k + 1] == j->dataset && keys[4 * k + 2] == j->batch &&
                keys[4 * k + 3] == j->amp)
                break;
        if (k == n) {
            if (n == cap) cap *= 2, keys = ds_xrealloc(keys, (size_t)cap * 4 * sizeof *keys);
            keys[4 * n] = j->model, keys[4 * n + 1] = j->dataset, keys[4 * n + 2] = j->batch, keys[4 * n + 3] = j->amp;
            n++;
        }
        m->cfg_of_job[i] = k;
    }
    free(keys);
    m->ncfg = n;
    /* per pair: the prediction and the trees' spread */
    m->cache = ds_xmalloc((size_t)(n ? 2 * n * n : 2) * sizeof *m->cache);
    for (int32_t i = 0; i < 2 * n * n; i++) m->cache[i] = NAN;
}

/* The prediction (what = 0) or the trees' spread (what = 1) for jobs a and b, through the pair cache. */
static double pair_value(ds_interference_model_t *m, const ds_trace_t *t, int32_t a, int32_t b, int what)
{
    if (m->t != t || t->njobs != m->njobs_bound) bind(m, t);
    const ds_job_t *ja = &t->jobs[a], *jb = &t->jobs[b];
    /* a job without a profile: the simulator's convention for unprofiled pairs, known, not guessed */
    if ((ja->gpu_util <= 0 && ja->gmem_mib <= 0) || (jb->gpu_util <= 0 && jb->gmem_mib <= 0)) return what ? 0.0 : 1.0;
    int32_t ca = m->cfg_of_job[a], cb = m->cfg_of_job[b];
    float *slot = ca >= 0 && cb >= 0 ? &m->cache[2 * (ca * m->ncfg + cb)] : NULL;
    if (slot && !isnan(slot[what])) return slot[what];
    ds_wdesc_t da, db;
    job_desc(ja, &da);
    job_desc(jb, &db);
    double v[2] = {ds_interference_model_predict(m, &da, &db), ds_interference_model_spread(m, &da, &db)};
    if (isnan(v[1])) v[1] = 0.0;
    if (slot) slot[0] = (float)v[0], slot[1] = (float)v[1];
    return v[what];
}

static double if_predict_cb(void *ctx, const ds_trace_t *t, int32_t a, int32_t b) { return pair_value(ctx, t, a, b, 0); }

static double if_spread_cb(void *ctx, const ds_trace_t *t, int32_t a, int32_t b) { return pair_value(ctx, t, a, b, 1); }

void ds_interference_model_as_predictor(ds_interference_model_t *m, const ds_trace_t *t, ds_interference_predictor_t *p)
{
    bind(m, t);
    p->name = "model";
    p->ctx = m;
    p->predict = if_predict_cb;
    p->uncertainty = if_spread_cb;
}

int ds_interference_model_save_buf(ds_interference_model_t *m, char **buf, size_t *len, ds_error_t *err)
{
    char *mb;
    size_t ml;
    int rc = ds_xgb_save(m->rf, &mb, &ml, err);
    if (rc) return rc;
    char head[64];
    int hl = snprintf(head, sizeof head, "deepshare-interference 1 %d\n", DS_IF_NFEAT);
    *buf = ds_xmalloc((size_t)hl + ml);
    memcpy(*buf, head, (size_t)hl);
    memcpy(*buf + hl, mb, ml);
    *len = (size_t)hl + ml;
    free(mb);
    return DS_OK;
}

int ds_interference_model_load_buf(ds_interference_model_t **out, const char *buf, size_t len, const char *what,
                                   ds_error_t *err)
{
    *out = NULL;
    int ver, nf, used = 0;
    const char *nl = memchr(buf, '\n', len < 64 ? len : 64);
    if (!nl || sscanf(buf, "deepshare-interference %d %d%n", &ver, &nf, &used) != 2 || buf + used != nl) {
        ds_error_set(err, what, 0, NULL, "not a deepshare interference model (bad header)");
        return DS_EPARSE;
    }
    if (ver != 1 || nf != DS_IF_NFEAT) {
        ds_error_set(err, what, 0, NULL, "interference model version %d with %d features: this deepshare reads "
                     "version 1 with %d features", ver, nf, DS_IF_NFEAT);
        return DS_EPARSE;
    }
    size_t off = (size_t)(nl - buf) + 1;
    ds_xgb_t *rf;
    int rc = ds_xgb_load(&rf, buf + off, len - off, DS_IF_NFEAT, err);
    if (rc) {
        char msg[400];
        snprintf(msg, sizeof msg, "%.399s", err->msg);
        ds_error_set(err, what, 0, NULL, "%s", msg);
        return rc;
    }
    ds_interference_model_t *m = ds_xcalloc(1, sizeof *m);
    m->rf = rf;
    *out = m;
    return DS_OK;
}
