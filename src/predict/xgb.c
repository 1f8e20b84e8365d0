/* xgb.c: a thin wrapper over XGBoost's C API: train on a dense matrix, predict one row in place,
 * serialize to and from memory. XGBoost's messages become ds_error_t text, never stderr output.
 * One-row predictions walk a flat copy of the trees (boosted or a forest) read from the model's JSON:
 * XGBoost parses two JSON documents per call, which cost more than the trees themselves. */
#include "deepshare/models.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xgboost/c_api.h>

struct ds_xgb {
    BoosterHandle b;
    int32_t d;
    float *row;          /* fixed buffer for one row: its address is baked into iface */
    char iface[160];     /* __array_interface__ of row */
    /* flat trees: node arrays of all trees, children as absolute indices (-1: leaf, whose value is
     * cond); state 0 = to build, > 0 = predictions still checked against XGBoost, -1 = built and
     * checked, -2 = unusable (XGBoost answers) */
    int32_t *root, *left, *right, *feat;
    float *cond;
    uint8_t *defl;
    int32_t ntrees, nnodes;
    double base;
    int flat;
};

#define FLAT_CHECKS 16 /* first predictions compared with XGBoost's before the flat trees answer alone */

static void flat_free(ds_xgb_t *m)
{
    free(m->root), free(m->left), free(m->right), free(m->feat), free(m->cond), free(m->defl);
    m->root = m->left = m->right = m->feat = NULL, m->cond = NULL, m->defl = NULL;
    m->ntrees = m->nnodes = 0;
}

/* The numbers of the array "key":[...] at or after *p (advanced past it); -1 if absent. */
static int32_t json_array(const char **p, const char *end, const char *key, double **out)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\":[", key);
    const char *q = memmem(*p, (size_t)(end - *p), pat, strlen(pat));
    if (!q) return -1;
    q += strlen(pat);
    int32_t n = 0, cap = 64;
    double *v = ds_xmalloc((size_t)cap * sizeof *v);
    while (q < end && *q != ']') {
        char *e;
        double x = strtod(q, &e);
        if (e == q) break;
        if (n == cap) v = ds_xrealloc(v, (size_t)(cap *= 2) * sizeof *v);
        v[n++] = x;
        q = e;
        if (q < end && *q == ',') q++;
    }
    if (q >= end || *q != ']') {
        free(v);
        return -1;
    }
    *p = q + 1;
    *out = v;
    return n;
}

/* Reads the trees from the model's JSON (keys come sorted in XGBoost's writer); 0 on success. */
static int flat_build(ds_xgb_t *m)
{
    bst_ulong len;
    const char *js;
    if (XGBoosterSaveModelToBuffer(m->b, "{\"format\": \"json\"}", &len, &js)) return -1;
    const char *p = js, *end = js + len;
    const char *np = strstr(js, "\"num_parallel_tree\":\"");
    const char *nt = strstr(js, "\"num_trees\":\"");
    const char *bs = strstr(js, "\"base_score\":\"");
    /* a forest (num_parallel_tree > 1) is walked the same way: XGBoost already divided each tree's
     * learning rate by the forest size, so its output is the base plus the sum of every leaf too */
    if (!np || !nt || !bs || atoi(np + 21) < 1) return -1;
    int32_t ntrees = atoi(nt + 13);
    m->base = strtod(bs + 14, NULL);
    int32_t cap = 0;
    m->root = ds_xmalloc((size_t)(ntrees + 1) * sizeof *m->root);
    int rc = 0;
    for (int32_t t = 0; t < ntrees && !rc; t++) {
        double *a[5] = {0};
        static const char *keys[5] = {"default_left", "left_children", "right_children", "split_conditions",
                                      "split_indices"};
        int32_t n = -1;
        for (int k = 0; k < 5 && !rc; k++) {
            int32_t c = json_array(&p, end, keys[k], &a[k]);
            if (c < 1 || (n >= 0 && c != n)) rc = -1;
            n = c;
        }
        if (!rc) {
            if (m->nnodes + n > cap) {
                cap = 2 * (m->nnodes + n);
                m->left = ds_xrealloc(m->left, (size_t)cap * sizeof *m->left);
                m->right = ds_xrealloc(m->right, (size_t)cap * sizeof *m->right);
                m->feat = ds_xrealloc(m->feat, (size_t)cap * sizeof *m->feat);
                m->cond = ds_xrealloc(m->cond, (size_t)cap * sizeof *m->cond);
                m->defl = ds_xrealloc(m->defl, (size_t)cap);
            }
            m->root[t] = m->nnodes;
            for (int32_t i = 0; i < n && !rc; i++) {
                int32_t g = m->nnodes + i, l = (int32_t)a[1][i], r = (int32_t)a[2][i], f = (int32_t)a[4][i];
                if (l >= n || r >= n || (l < 0) != (r < 0) || f < 0 || f >= m->d) rc = -1;
                m->left[g] = l < 0 ? -1 : m->nnodes + l;
                m->right[g] = r < 0 ? -1 : m->nnodes + r;
                m->feat[g] = f;
                m->cond[g] = (float)a[3][i];
                m->defl[g] = a[0][i] != 0;
            }
            m->nnodes += n;
        }
        for (int k = 0; k < 5; k++) free(a[k]);
    }
    m->ntrees = ntrees;
    return rc;
}

/* The leaf value tree t gives x. */
static float flat_leaf(const ds_xgb_t *m, int32_t t, const float *x)
{
    int32_t i = m->root[t];
    while (m->left[i] >= 0) {
        float v = x[m->feat[i]];
        i = isnan(v) ? (m->defl[i] ? m->left[i] : m->right[i]) : v < m->cond[i] ? m->left[i] : m->right[i];
    }
    return m->cond[i];
}

static double flat_predict(const ds_xgb_t *m, const float *x)
{
    float sum = (float)m->base; /* XGBoost adds the leaves to the base in single precision, in this order */
    for (int32_t t = 0; t < m->ntrees; t++) sum += flat_leaf(m, t, x);
    return (double)sum;
}

/* Builds the flat trees on first use (state 0); afterwards a no-op. */
static void flat_ensure(ds_xgb_t *m)
{
    if (m->flat != 0) return;
    if (flat_build(m)) flat_free(m), m->flat = -2;
    else m->flat = FLAT_CHECKS;
}

/* XGBoost's last error with its stack trace cut off: one line for the user. */
static void xgb_error(ds_error_t *err, const char *what)
{
    const char *e = XGBGetLastError();
    char line[400];
    snprintf(line, sizeof line, "%s", e ? e : "unknown error");
    char *nl = strchr(line, '\n');
    if (nl) *nl = '\0';
    ds_error_set(err, NULL, 0, NULL, "%s: XGBoost: %s", what, line);
}

/* XGBoost's global configuration is per thread: silence each thread that trains or loads. */
static void quiet_xgboost(void)
{
    static _Thread_local int done;
    if (!done) {
        XGBSetGlobalConfig("{\"verbosity\": 0}");
        done = 1;
    }
}

void ds_xgb_params_init(ds_xgb_params_t *p, int rounds)
{
    memset(p, 0, sizeof *p);
    p->rounds = rounds;
}

void ds_xgb_param(ds_xgb_params_t *p, const char *key, const char *fmt, ...)
{
    DS_ASSERT(p->n < DS_XGB_MAX_PARAMS);
    p->key[p->n] = key;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->val[p->n], sizeof p->val[p->n], fmt, ap);
    va_end(ap);
    p->n++;
}

static ds_xgb_t *wrap(BoosterHandle b, int32_t d)
{
    ds_xgb_t *m = ds_xcalloc(1, sizeof *m);
    m->b = b;
    m->d = d;
    m->row = ds_xcalloc((size_t)d, sizeof *m->row);
    snprintf(m->iface, sizeof m->iface, "{\"data\": [%llu, true], \"shape\": [1, %d], \"typestr\": \"<f4\", \"version\": 3}",
             (unsigned long long)(uintptr_t)m->row, d);
    /* one row at a time: threads would cost more than they save */
    XGBoosterSetParam(b, "nthread", "1");
    return m;
}

int ds_xgb_train(ds_xgb_t **out, const float *x, const float *y, int64_t n, int32_t d, const ds_xgb_params_t *p,
                 ds_error_t *err)
{
    return ds_xgb_train_more(out, NULL, x, y, n, d, p, err);
}

int ds_xgb_train_more(ds_xgb_t **out, ds_xgb_t *init, const float *x, const float *y, int64_t n, int32_t d,
                      const ds_xgb_params_t *p, ds_error_t *err)
{
    *out = NULL;
    quiet_xgboost();
    if (n <= 0 || d <= 0) {
        ds_error_set(err, NULL, 0, NULL, "cannot train a model on %lld rows", (long long)n);
        return DS_EINVAL;
    }
    DMatrixHandle dm;
    BoosterHandle b = NULL;
    if (XGDMatrixCreateFromMat(x, (bst_ulong)n, (bst_ulong)d, NAN, &dm)) {
        xgb_error(err, "building the training matrix");
        return DS_EINVAL;
    }
    int rc = DS_EINVAL;
    if (XGDMatrixSetFloatInfo(dm, "label", y, (bst_ulong)n)) {
        xgb_error(err, "setting labels");
        goto out;
    }
    if (XGBoosterCreate(&dm, 1, &b)) {
        xgb_error(err, "creating a booster");
        goto out;
    }
    int first = 0;
    if (init) {
        /* continue boosting from init's trees: the new trees fit what init leaves unexplained */
        char *ib;
        size_t il;
        if ((rc = ds_xgb_save(init, &ib, &il, err))) goto out;
        int bad = XGBoosterLoadModelFromBuffer(b, ib, (bst_ulong)il) || XGBoosterBoostedRounds(b, &first);
        free(ib);
        rc = DS_EINVAL;
        if (bad) {
            xgb_error(err, "continuing from a model");
            goto out;
        }
    }
    char nt[16];
    snprintf(nt, sizeof nt, "%d", p->nthread);
    if (p->nthread > 0 && XGBoosterSetParam(b, "nthread", nt)) {
        xgb_error(err, "parameter nthread");
        goto out;
    }
    for (int i = 0; i < p->n; i++)
        if (XGBoosterSetParam(b, p->key[i], p->val[i])) {
            xgb_error(err, p->key[i]);
            goto out;
        }
    for (int it = first; it < first + p->rounds; it++)
        if (XGBoosterUpdateOneIter(b, it, dm)) {
            xgb_error(err, "training");
            goto out;
        }
    *out = wrap(b, d);
    b = NULL;
    rc = DS_OK;
out:
    if (b) XGBoosterFree(b);
    XGDMatrixFree(dm);
    return rc;
}

int ds_xgb_boost(ds_xgb_t *m, const float *x, const float *y, int64_t n, int rounds, ds_error_t *err)
{
    quiet_xgboost();
    if (n <= 0) {
        ds_error_set(err, NULL, 0, NULL, "cannot train a model on %lld rows", (long long)n);
        return DS_EINVAL;
    }
    DMatrixHandle dm;
    if (XGDMatrixCreateFromMat(x, (bst_ulong)n, (bst_ulong)m->d, NAN, &dm)) {
        xgb_error(err, "building the training matrix");
        return DS_EINVAL;
    }
    int rc = DS_OK, first = 0;
    if (XGDMatrixSetFloatInfo(dm, "label", y, (bst_ulong)n) || XGBoosterBoostedRounds(m->b, &first)) {
        xgb_error(err, "setting labels");
        rc = DS_EINVAL;
    }
    /* the booster keeps its training parameters; a new matrix only costs one pass of the old trees */
    for (int it = first; !rc && it < first + rounds; it++)
        if (XGBoosterUpdateOneIter(m->b, it, dm)) {
            xgb_error(err, "training");
            rc = DS_EINVAL;
        }
    XGDMatrixFree(dm);
    flat_free(m);
    m->flat = 0; /* new trees: read them again */
    return rc;
}

int32_t ds_xgb_rounds(ds_xgb_t *m)
{
    int r = 0;
    return XGBoosterBoostedRounds(m->b, &r) ? 0 : r;
}

double ds_xgb_tree_spread(ds_xgb_t *m, const float *x)
{
    flat_ensure(m);
    if (m->flat == -2 || m->ntrees < 2) return NAN;
    /* in a forest each tree's leaf is its own prediction of the residual from base, divided by the
     * forest's size: scaled back, the trees' spread is how much they disagree about this row */
    double s1 = 0, s2 = 0, n = m->ntrees;
    for (int32_t t = 0; t < m->ntrees; t++) {
        double y = n * (double)flat_leaf(m, t, x);
        s1 += y, s2 += y * y;
    }
    double var = (s2 - s1 * s1 / n) / (n - 1);
    return var > 0 ? sqrt(var) : 0.0;
}

double ds_xgb_predict1(ds_xgb_t *m, const float *x)
{
    static const char cfg[] = "{\"type\": 0, \"training\": false, \"iteration_begin\": 0, \"iteration_end\": 0, "
                              "\"strict_shape\": false, \"cache_id\": 0, \"missing\": NaN}";
    memcpy(m->row, x, (size_t)m->d * sizeof *x);
    const bst_ulong *shape;
    bst_ulong dim;
    const float *res;
    flat_ensure(m);
    if (m->flat == -1) return flat_predict(m, x);
    if (XGBoosterPredictFromDense(m->b, m->iface, cfg, NULL, &shape, &dim, &res)) return NAN;
    if (m->flat > 0) {
        /* the flat copy answers once it agreed with XGBoost on the first rows (else it is dropped) */
        double f = flat_predict(m, x);
        if (fabs(f - res[0]) > 1e-4 * (1 + fabs(res[0]))) flat_free(m), m->flat = -2;
        else if (--m->flat == 0) m->flat = -1;
    }
    return res[0];
}

double ds_xgb_predict1_ref(ds_xgb_t *m, const float *x)
{
    int keep = m->flat;
    m->flat = -2; /* XGBoost alone */
    double v = ds_xgb_predict1(m, x);
    m->flat = keep;
    return v;
}

int32_t ds_xgb_nfeatures(const ds_xgb_t *m) { return m->d; }

int ds_xgb_flat_active(const ds_xgb_t *m) { return m->flat == -1; }

int ds_xgb_save(ds_xgb_t *m, char **buf, size_t *len, ds_error_t *err)
{
    bst_ulong n;
    const char *p;
    if (XGBoosterSaveModelToBuffer(m->b, "{\"format\": \"ubj\"}", &n, &p)) {
        xgb_error(err, "saving a model");
        return DS_EINVAL;
    }
    *buf = ds_xmalloc(n ? (size_t)n : 1);
    memcpy(*buf, p, (size_t)n);
    *len = (size_t)n;
    return DS_OK;
}

int ds_xgb_load(ds_xgb_t **out, const void *buf, size_t len, int32_t d, ds_error_t *err)
{
    *out = NULL;
    quiet_xgboost();
    BoosterHandle b;
    if (XGBoosterCreate(NULL, 0, &b)) {
        xgb_error(err, "creating a booster");
        return DS_EINVAL;
    }
    if (XGBoosterLoadModelFromBuffer(b, buf, (bst_ulong)len)) {
        xgb_error(err, "loading a model");
        XGBoosterFree(b);
        return DS_EPARSE;
    }
    bst_ulong nf = 0;
    if (XGBoosterGetNumFeature(b, &nf) || (int64_t)nf != d) {
        ds_error_set(err, NULL, 0, NULL, "model has %llu features, this version of deepshare uses %d",
                     (unsigned long long)nf, d);
        XGBoosterFree(b);
        return DS_EPARSE;
    }
    *out = wrap(b, d);
    return DS_OK;
}

void ds_xgb_free(ds_xgb_t *m)
{
    if (!m) return;
    XGBoosterFree(m->b);
    flat_free(m);
    free(m->row);
    free(m);
}
