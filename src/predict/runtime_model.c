/* runtime_model.c: a gradient-boosted duration model learned online from the jobs the driver reports
 * finished, retrained by the count of new finishes on a bounded window of recent ones (the cost
 * follows what is new, not the whole history), with optional per-tenant models and a conditional
 * remaining-time estimate for running jobs. */
#include "rt_batches.h"
#include "rt_features.h"
#include "deepshare/residuals.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SRC_HEURISTIC (-2)
#define SRC_CLUSTER (-1)
#define DEFAULT_SECONDS 1000.0 /* no history at all: Lucid's stand-in for a missing estimate */
#define RT_FILE_VERSION 3      /* 3: 34 features (workload and tenant x GPU history); 2: 28 */

struct ds_runtime_model {
    const ds_trace_t *t;
    ds_runtime_model_config_t c;
    rt_hist_t h;
    /* per job: features fixed at its first prediction, cached prediction of model version pver */
    int32_t jcap;
    float *feat;
    uint8_t *has_feat, *observed;
    double *pred;
    int32_t *pver;
    int8_t *psrc;
    /* training rows: features, ln(duration), tenant; a ring of the latest caprows when window > 0 */
    float *x, *y;
    int32_t *rt;
    int64_t nrows, caprows, head;
    int64_t total, at_retrain; /* finishes observed, and how many there were at the last retrain */
    float *tx, *ty;            /* the window in age order, for training */
    /* ln(actual / predicted) of recent finishes, and a sorted copy taken at each retrain */
    ds_resid_t res;
    int64_t *tenant_rows;
    int32_t ntenants;
    ds_xgb_t *cluster;
    ds_xgb_t **tenant;
    uint8_t *logged;
    int logged_none, logged_err;
    int32_t version;
    int64_t next_retrain;  /* DS_TIME_NEVER until the first event */
    int64_t latest_observed;
    int64_t last_now;      /* time of the latest call: going back means a new replay */
    int32_t last_source;
    rt_batches_t bt;       /* submission batches and what their finished members say */
    const int32_t *rev;    /* the unfinished siblings of rev_job, the latest finish */
    int32_t nrev, rev_job;
};

void ds_runtime_model_config_default(ds_runtime_model_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->min_history = 50;
    c->min_train = 20;
    c->retrain_period = 0;
    c->retrain_every = 8000; /* two thirds of the window: every finish trains at most two boosters */
    c->window = 12000;
    c->inc_rounds = 0;
    c->max_trees = 200;
    c->max_bin = 32;
    c->min_child_weight = 20;
    c->conditional = 0; /* DeepShare queued longer with it on Venus under load (docs/predictors.md) */
    c->per_tenant = DS_RT_TENANT_NONE;
    c->use_model = 1;
    /* shallow trees: depth 3 predicted better online than 5 or 7 (Venus MdAPE 64.5% against 69.0%,
     * seeds 1-4; docs/predictors.md), and 30 trees at eta 0.2 as well as 50 at 0.12, for a third of
     * the split search */
    c->rounds = 30;
    c->max_depth = 3;
    c->eta = 0.2;
    c->subsample = 0.8;
    c->colsample = 0.8;
    c->nthread = 1; /* OpenMP threads spin badly on a shared machine; trees are small */
    c->seed = 1;
    /* one submission burst: a sweep's or an array's jobs arrive seconds apart (ITP: 87% of jobs have a
     * sibling within 120 s, Spearman 0.82 between a job's run time and its siblings' median) */
    c->batch_gap = 60;
    c->batch_min_record = 20;
}

static void logf_once(ds_runtime_model_t *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_once(ds_runtime_model_t *m, const char *fmt, ...)
{
    if (!m->c.log) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    m->c.log(m->c.log_ctx, buf);
}

static void ensure_tenants(ds_runtime_model_t *m)
{
    int32_t n = m->t->ntenants;
    if (n <= m->ntenants) return;
    m->tenant_rows = ds_xrealloc(m->tenant_rows, (size_t)n * sizeof *m->tenant_rows);
    m->tenant = ds_xrealloc(m->tenant, (size_t)n * sizeof *m->tenant);
    m->logged = ds_xrealloc(m->logged, (size_t)n);
    for (int32_t i = m->ntenants; i < n; i++) m->tenant_rows[i] = 0, m->tenant[i] = NULL, m->logged[i] = 0;
    m->ntenants = n;
}

static void ensure_jobs(ds_runtime_model_t *m, int32_t job)
{
    if (job < m->jcap) return;
    int32_t cap = DS_MAX(job + 1, DS_MAX(m->t->njobs, 2 * m->jcap));
    m->feat = ds_xrealloc(m->feat, (size_t)cap * DS_RT_NFEAT * sizeof *m->feat);
    m->has_feat = ds_xrealloc(m->has_feat, (size_t)cap);
    m->observed = ds_xrealloc(m->observed, (size_t)cap);
    m->pred = ds_xrealloc(m->pred, (size_t)cap * sizeof *m->pred);
    m->pver = ds_xrealloc(m->pver, (size_t)cap * sizeof *m->pver);
    m->psrc = ds_xrealloc(m->psrc, (size_t)cap * sizeof *m->psrc);
    for (int32_t i = m->jcap; i < cap; i++) m->has_feat[i] = 0, m->observed[i] = 0, m->pver[i] = -1;
    m->jcap = cap;
}

ds_runtime_model_t *ds_runtime_model_create(const ds_trace_t *t, const ds_runtime_model_config_t *c)
{
    ds_runtime_model_t *m = ds_xcalloc(1, sizeof *m);
    m->t = t;
    m->c = *c;
    rt_hist_init(&m->h);
    m->next_retrain = DS_TIME_NEVER;
    m->latest_observed = INT64_MIN;
    m->last_now = INT64_MIN;
    m->last_source = SRC_HEURISTIC;
    m->rev_job = -1;
    rt_batches_init(&m->bt, c->batch_gap, c->batch_min_record);
    ensure_tenants(m);
    ensure_jobs(m, DS_MAX(t->njobs - 1, 0));
    return m;
}

static void free_models(ds_runtime_model_t *m)
{
    ds_xgb_free(m->cluster);
    m->cluster = NULL;
    for (int32_t i = 0; i < m->ntenants; i++) {
        ds_xgb_free(m->tenant[i]);
        m->tenant[i] = NULL;
    }
}

void ds_runtime_model_destroy(ds_runtime_model_t *m)
{
    if (!m) return;
    free_models(m);
    rt_hist_free(&m->h);
    rt_batches_free(&m->bt);
    free(m->feat);
    free(m->has_feat);
    free(m->observed);
    free(m->pred);
    free(m->pver);
    free(m->psrc);
    free(m->x);
    free(m->y);
    free(m->rt);
    free(m->tx);
    free(m->ty);
    free(m->tenant_rows);
    free(m->tenant);
    free(m->logged);
    free(m);
}

static void params(const ds_runtime_model_t *m, ds_xgb_params_t *p)
{
    ds_xgb_params_init(p, m->c.rounds);
    p->nthread = m->c.nthread;
    ds_xgb_param(p, "objective", "reg:squarederror");
    ds_xgb_param(p, "tree_method", "hist");
    ds_xgb_param(p, "max_depth", "%d", m->c.max_depth);
    ds_xgb_param(p, "eta", "%g", m->c.eta);
    ds_xgb_param(p, "subsample", "%g", m->c.subsample);
    ds_xgb_param(p, "colsample_bytree", "%g", m->c.colsample);
    ds_xgb_param(p, "min_child_weight", "%g", m->c.min_child_weight);
    ds_xgb_param(p, "max_bin", "%d", m->c.max_bin);
    ds_xgb_param(p, "seed", "%llu", (unsigned long long)m->c.seed);
    /* base_score: XGBoost's 0.5 for boosters continued by tenant corrections; fresh cluster boosters
     * start from the window's mean (ds_runtime_model_retrain). Starting from 0.5 scored better MAPE
     * and MdAPE on Venus (66% vs 70%) only because the unfinished climb under-predicts, which APE
     * rewards; R2log and the early, few-tree models are better from the mean (docs/predictors.md). */
}

/* The window in age order into tx / ty; returns its row count. */
static int64_t window_rows(ds_runtime_model_t *m)
{
    if (!m->tx) {
        m->tx = ds_xmalloc((size_t)DS_MAX(m->caprows, 1) * DS_RT_NFEAT * sizeof *m->tx);
        m->ty = ds_xmalloc((size_t)DS_MAX(m->caprows, 1) * sizeof *m->ty);
    }
    int64_t first = m->nrows < m->caprows ? 0 : m->head; /* oldest row */
    for (int64_t k = 0; k < m->nrows; k++) {
        int64_t i = (first + k) % m->caprows;
        memcpy(&m->tx[k * DS_RT_NFEAT], &m->x[i * DS_RT_NFEAT], DS_RT_NFEAT * sizeof *m->tx);
        m->ty[k] = m->y[i];
    }
    return m->nrows;
}

int ds_runtime_model_retrain(ds_runtime_model_t *m, ds_error_t *err)
{
    if (!m->c.use_model || m->c.frozen) return DS_OK;
    ensure_tenants(m);
    ds_resid_sort(&m->res);
    m->at_retrain = m->total;
    ds_xgb_params_t p;
    params(m, &p);
    int rc = DS_OK;
    int64_t n = window_rows(m);
    if (n >= m->c.min_train && n >= 1) {
        /* continue boosting on the window while the booster is small enough; otherwise (and at
         * first) grow a fresh one on the whole window: either way the cost is bounded by the window */
        if (m->cluster && m->c.inc_rounds > 0 && ds_xgb_rounds(m->cluster) + m->c.inc_rounds <= m->c.max_trees) {
            /* on the window: fitting the new trees on the new rows alone overfit them (R2 -30 on Venus) */
            rc = ds_xgb_boost(m->cluster, m->tx, m->ty, n, m->c.inc_rounds, err);
        } else {
            ds_xgb_t *b;
            /* a few dozen rows support no more than a few trees; each costs ~1-3 ms however small */
            p.rounds = (int)DS_MIN((int64_t)m->c.rounds, 10 + n / 50);
            /* ... and start from the window's mean ln-duration: from XGBoost's 0.5, ten trees at eta
             * 0.12 reach only ~70% of the way to a typical 6-9 */
            double mean = 0;
            for (int64_t i = 0; i < n; i++) mean += m->ty[i];
            ds_xgb_param(&p, "base_score", "%g", mean / (double)n);
            rc = ds_xgb_train(&b, m->tx, m->ty, n, DS_RT_NFEAT, &p, err);
            if (!rc) {
                ds_xgb_free(m->cluster);
                m->cluster = b;
            }
        }
        if (rc) return rc;
    }
    if (m->c.per_tenant && n) {
        int residual = m->c.per_tenant == DS_RT_TENANT_RESIDUAL;
        if (residual && !m->cluster) goto done; /* nothing to correct yet */
        float *x = ds_xmalloc((size_t)n * DS_RT_NFEAT * sizeof *x);
        float *y = ds_xmalloc((size_t)n * sizeof *y);
        int32_t *rt = ds_xmalloc((size_t)n * sizeof *rt);
        int64_t first = m->nrows < m->caprows ? 0 : m->head;
        for (int64_t k = 0; k < n; k++) rt[k] = m->rt[(first + k) % m->caprows];
        ds_xgb_params_t tp;
        params(m, &tp);
        if (residual) {
            /* corrections: fewer, shallower trees after the cluster model's (one booster: one call) */
            tp.rounds = DS_MAX(1, m->c.rounds / 10);
            for (int i = 0; i < tp.n; i++)
                if (!strcmp(tp.key[i], "max_depth")) snprintf(tp.val[i], sizeof tp.val[i], "%d", DS_MAX(1, m->c.max_depth - 2));
        }
        for (int32_t ten = 0; ten < m->ntenants && !rc; ten++) {
            if (m->tenant_rows[ten] < m->c.min_history || m->tenant_rows[ten] < 1) continue;
            int64_t k = 0;
            for (int64_t i = 0; i < n; i++)
                if (rt[i] == ten) {
                    memcpy(&x[k * DS_RT_NFEAT], &m->tx[i * DS_RT_NFEAT], DS_RT_NFEAT * sizeof *x);
                    y[k++] = m->ty[i];
                }
            if (!k) continue;
            ds_xgb_t *b;
            rc = ds_xgb_train_more(&b, residual ? m->cluster : NULL, x, y, k, DS_RT_NFEAT, residual ? &tp : &p, err);
            if (!rc) {
                ds_xgb_free(m->tenant[ten]);
                m->tenant[ten] = b;
            }
        }
        free(x);
        free(y);
        free(rt);
    }
done:
    m->version++;
    return rc;
}

/* Time went backwards: a new replay of the trace with the same predictor (simulate runs several
 * policies, compare runs variants). Everything learned belongs to the old replay's future. */
static void reset(ds_runtime_model_t *m)
{
    if (!m->c.frozen) free_models(m);
    rt_hist_free(&m->h);
    rt_hist_init(&m->h);
    rt_batches_reset(&m->bt);
    m->rev_job = -1, m->nrev = 0;
    m->nrows = m->head = m->total = m->at_retrain = 0;
    memset(&m->res, 0, sizeof m->res);
    for (int32_t i = 0; i < m->ntenants; i++) m->tenant_rows[i] = 0;
    for (int32_t i = 0; i < m->jcap; i++) m->has_feat[i] = 0, m->observed[i] = 0, m->pver[i] = -1;
    m->version++;
    m->next_retrain = DS_TIME_NEVER;
    m->latest_observed = INT64_MIN;
}

static void maybe_retrain(ds_runtime_model_t *m, int64_t now)
{
    if (now < m->last_now) reset(m);
    m->last_now = now;
    if (m->c.retrain_period <= 0) {
        /* by count: after min_train finishes, then each time the history doubles, then every
         * retrain_every finishes, so early models come fast and later ones cost what is new */
        int64_t fresh = m->total - m->at_retrain;
        if (m->total < m->c.min_train || fresh <= 0) return;
        if (m->at_retrain && fresh < DS_MIN((int64_t)m->c.retrain_every, m->at_retrain)) return;
        ds_error_t err;
        ds_error_clear(&err);
        if (ds_runtime_model_retrain(m, &err) && !m->logged_err) {
            m->logged_err = 1;
            logf_once(m, "runtime model: retraining failed, keeping the previous models: %s", err.msg);
        }
        return;
    }
    int64_t period = m->c.retrain_period;
    if (m->next_retrain == DS_TIME_NEVER) {
        m->next_retrain = (now / period + 1) * period;
        return;
    }
    if (now < m->next_retrain) return;
    m->next_retrain = (now / period + 1) * period;
    ds_error_t err;
    ds_error_clear(&err);
    if (ds_runtime_model_retrain(m, &err) && !m->logged_err) {
        m->logged_err = 1;
        logf_once(m, "runtime model: retraining failed, keeping the previous models: %s", err.msg);
    }
}

static double heuristic(const ds_runtime_model_t *m, const ds_job_t *j)
{
    double v = NAN;
    if (j->user >= 0 && j->user < m->h.nusers) v = rt_ring_median_seconds(&m->h.user[j->user]);
    if (isnan(v) && j->tenant >= 0 && j->tenant < m->h.ntenants) v = rt_ring_median_seconds(&m->h.tenant[j->tenant]);
    if (isnan(v)) v = rt_ring_median_seconds(&m->h.cluster);
    return isnan(v) ? DEFAULT_SECONDS : v;
}

double ds_runtime_model_predict(ds_runtime_model_t *m, int32_t job, int64_t now)
{
    DS_ASSERT(job >= 0 && job < m->t->njobs);
    maybe_retrain(m, now);
    ensure_jobs(m, job);
    ensure_tenants(m);
    if (m->pver[job] == m->version) {
        m->last_source = m->psrc[job];
        return m->pred[job];
    }
    float *x = &m->feat[(size_t)job * DS_RT_NFEAT];
    if (!m->has_feat[job]) {
        rt_features(&m->h, m->t, job, x);
        m->has_feat[job] = 1;
    }
    const ds_job_t *j = &m->t->jobs[job];
    ds_xgb_t *b = NULL;
    int src = SRC_HEURISTIC;
    if (m->c.use_model) {
        if (m->c.per_tenant && j->tenant >= 0 && m->tenant[j->tenant]) b = m->tenant[j->tenant], src = j->tenant;
        else if (m->cluster) {
            b = m->cluster, src = SRC_CLUSTER;
            if (m->c.per_tenant && j->tenant >= 0 && !m->logged[j->tenant]) {
                m->logged[j->tenant] = 1;
                logf_once(m, "runtime model: tenant %s has no model of its own yet (fewer than %d finished jobs at "
                          "the last retrain): using the cluster model", m->t->tenants[j->tenant].name, m->c.min_history);
            }
        } else if (!m->logged_none) {
            m->logged_none = 1;
            logf_once(m, "runtime model: no trained model yet (fewer than %d finished jobs): predicting the median "
                      "of the user's recent durations", m->c.min_train);
        }
    }
    double v = NAN;
    if (b) {
        double lv = ds_xgb_predict1(b, x);
        if (!isnan(lv)) v = exp(lv < 20 ? lv : 20);
    }
    if (isnan(v)) v = heuristic(m, j), src = SRC_HEURISTIC;
    if (v < 1) v = 1;
    m->pred[job] = v;
    m->pver[job] = m->version;
    m->psrc[job] = (int8_t)src;
    m->last_source = src;
    return v;
}

void ds_runtime_model_observe(ds_runtime_model_t *m, int32_t job, int64_t now)
{
    DS_ASSERT(job >= 0 && job < m->t->njobs);
    maybe_retrain(m, now);
    ensure_jobs(m, job);
    ensure_tenants(m);
    if (m->observed[job]) return;
    m->observed[job] = 1;
    float *x = &m->feat[(size_t)job * DS_RT_NFEAT];
    if (!m->has_feat[job]) {
        rt_features(&m->h, m->t, job, x);
        m->has_feat[job] = 1;
    }
    const ds_job_t *j = &m->t->jobs[job];
    if (m->nrows == m->caprows && (m->c.window <= 0 || m->caprows < m->c.window)) {
        /* grow (the ring is full only once caprows reaches the window, so rows are still in order) */
        m->caprows = m->caprows ? 2 * m->caprows : 1024;
        if (m->c.window > 0 && m->caprows > m->c.window) m->caprows = m->c.window;
        m->x = ds_xrealloc(m->x, (size_t)m->caprows * DS_RT_NFEAT * sizeof *m->x);
        m->y = ds_xrealloc(m->y, (size_t)m->caprows * sizeof *m->y);
        m->rt = ds_xrealloc(m->rt, (size_t)m->caprows * sizeof *m->rt);
        free(m->tx), free(m->ty);
        m->tx = m->ty = NULL;
        m->head = m->nrows;
    }
    float ly = (float)log(j->duration > 1 ? (double)j->duration : 1.0);
    memcpy(&m->x[m->head * DS_RT_NFEAT], x, DS_RT_NFEAT * sizeof *x);
    m->y[m->head] = ly;
    m->rt[m->head] = j->tenant;
    m->head = (m->head + 1) % m->caprows;
    if (m->nrows < m->caprows) m->nrows++;
    m->total++;
    if (m->pver[job] >= 0) { /* predicted before it ran: how far off was it? */
        ds_resid_add(&m->res, ly - (float)log(m->pred[job]));
    }
    if (j->tenant >= 0) m->tenant_rows[j->tenant]++;
    rt_hist_add(&m->h, m->t, job, now);
    if (now > m->latest_observed) m->latest_observed = now;
    m->rev = rt_batches_finish(&m->bt, m->t, job, now, m->pver[job] >= 0 ? m->pred[job] : 0, &m->nrev);
    m->rev_job = job;
}

const int32_t *ds_runtime_model_batch_revised(const ds_runtime_model_t *m, int32_t job, int32_t *n)
{
    *n = job == m->rev_job ? m->nrev : 0;
    return m->rev;
}

double ds_runtime_model_batch_total(ds_runtime_model_t *m, int32_t job, int64_t elapsed)
{
    DS_ASSERT(job >= 0 && job < m->t->njobs);
    return rt_batches_total(&m->bt, m->t, job, elapsed);
}

int32_t ds_runtime_model_batch_of(ds_runtime_model_t *m, int32_t job)
{
    DS_ASSERT(job >= 0 && job < m->t->njobs);
    return rt_batches_of(&m->bt, m->t, job);
}

int ds_runtime_model_batch_trusted(const ds_runtime_model_t *m) { return m->c.batch_gap > 0 && m->bt.trusted; }

void ds_runtime_model_batch_carry(ds_runtime_model_t *to, const ds_runtime_model_t *from)
{
    rt_batches_carry_record(&to->bt, &from->bt);
}

double ds_runtime_model_beyond(const ds_runtime_model_t *m, double pred, int64_t elapsed)
{
    return ds_resid_beyond(&m->res, pred, elapsed);
}

double ds_runtime_model_remaining(const ds_runtime_model_t *m, double pred, int64_t elapsed)
{
    double simple = pred - (double)elapsed > 1 ? pred - (double)elapsed : 1;
    double r = m->c.conditional ? ds_runtime_model_beyond(m, pred, elapsed) : -1;
    return r >= 0 ? r : simple;
}

static double rt_predict_cb(void *ctx, const ds_trace_t *t, int32_t job, int64_t now)
{
    (void)t;
    return ds_runtime_model_predict(ctx, job, now);
}

static double rt_batch_total_cb(void *ctx, const ds_trace_t *t, int32_t job, int64_t elapsed)
{
    (void)t;
    return ds_runtime_model_batch_total(ctx, job, elapsed);
}

static const int32_t *rt_batch_revised_cb(void *ctx, const ds_trace_t *t, int32_t job, int32_t *n)
{
    (void)t;
    return ds_runtime_model_batch_revised(ctx, job, n);
}

static void rt_observe_cb(void *ctx, const ds_trace_t *t, int32_t job, int64_t now)
{
    (void)t;
    ds_runtime_model_observe(ctx, job, now);
}

static double rt_remaining_cb(void *ctx, const ds_trace_t *t, int32_t job, double pred, int64_t elapsed)
{
    (void)t, (void)job;
    return ds_runtime_model_remaining(ctx, pred, elapsed);
}

static double rt_beyond_cb(void *ctx, double pred, int64_t elapsed)
{
    return ds_runtime_model_beyond(ctx, pred, elapsed);
}

void ds_runtime_model_as_predictor(ds_runtime_model_t *m, ds_runtime_predictor_t *p)
{
    p->name = "model";
    p->ctx = m;
    p->predict = rt_predict_cb;
    p->observe_finish = rt_observe_cb;
    p->remaining = rt_remaining_cb;
    p->beyond = rt_beyond_cb;
    p->batch_total = m->c.batch_gap > 0 ? rt_batch_total_cb : NULL;
    p->batch_revised = m->c.batch_gap > 0 ? rt_batch_revised_cb : NULL;
}

int64_t ds_runtime_model_latest_observed(const ds_runtime_model_t *m) { return m->latest_observed; }

int64_t ds_runtime_model_observed(const ds_runtime_model_t *m, int32_t tenant)
{
    if (tenant < 0) return m->total;
    return tenant < m->ntenants ? m->tenant_rows[tenant] : 0;
}

int32_t ds_runtime_model_last_source(const ds_runtime_model_t *m) { return m->last_source; }

int32_t ds_runtime_model_ntrained(const ds_runtime_model_t *m)
{
    int32_t n = m->cluster ? 1 : 0;
    for (int32_t i = 0; i < m->ntenants; i++) n += m->tenant[i] != NULL;
    return n;
}

/* ---- serialization: "deepshare-runtime 3 <nfeat> <nmodels> <tenant mode>\n" then per model
 * "<tenant name or *> <bytes>\n<bytes>\n". */

int ds_runtime_model_save_buf(ds_runtime_model_t *m, char **buf, size_t *len, ds_error_t *err)
{
    size_t cap = 256, n = 0;
    char *out = ds_xmalloc(cap);
    n = (size_t)snprintf(out, cap, "deepshare-runtime %d %d %d %d\n", RT_FILE_VERSION, DS_RT_NFEAT, ds_runtime_model_ntrained(m),
                         m->c.per_tenant);
    for (int32_t i = -1; i < m->ntenants; i++) {
        ds_xgb_t *b = i < 0 ? m->cluster : m->tenant[i];
        if (!b) continue;
        char *mb;
        size_t ml;
        int rc = ds_xgb_save(b, &mb, &ml, err);
        if (rc) {
            free(out);
            return rc;
        }
        const char *name = i < 0 ? "*" : m->t->tenants[i].name;
        if (n + ml + 128 > cap) {
            cap = 2 * (n + ml + 128);
            out = ds_xrealloc(out, cap);
        }
        n += (size_t)snprintf(out + n, cap - n, "%s %zu\n", name, ml);
        memcpy(out + n, mb, ml);
        n += ml;
        out[n++] = '\n';
        free(mb);
    }
    *buf = out;
    *len = n;
    return DS_OK;
}

/* Reads one text line starting at *pos (without the newline); 0 when none. */
static int next_line(const char *buf, size_t len, size_t *pos, char *line, size_t n)
{
    size_t i = *pos;
    while (i < len && buf[i] != '\n') i++;
    if (i >= len || i - *pos >= n) return 0;
    memcpy(line, buf + *pos, i - *pos);
    line[i - *pos] = '\0';
    *pos = i + 1;
    return 1;
}

int ds_runtime_model_load_buf(ds_runtime_model_t *m, const char *buf, size_t len, const char *what, ds_error_t *err)
{
    size_t pos = 0;
    char line[256];
    int ver, nf, nm, mode = -1;
    if (!next_line(buf, len, &pos, line, sizeof line) ||
        sscanf(line, "deepshare-runtime %d %d %d %d", &ver, &nf, &nm, &mode) < 3) {
        ds_error_set(err, what, 0, NULL, "not a deepshare runtime model (bad header)");
        return DS_EPARSE;
    }
    if (ver < RT_FILE_VERSION) {
        ds_error_set(err, what, 0, NULL, "runtime model version %d (%d features) was written by an older deepshare; "
                     "this one reads version %d with %d features: retrain it with 'deepshare train runtime "
                     "--model-out'", ver, nf, RT_FILE_VERSION, DS_RT_NFEAT);
        return DS_EPARSE;
    }
    if (ver != RT_FILE_VERSION || nf != DS_RT_NFEAT || nm < 0 || mode < DS_RT_TENANT_NONE || mode > DS_RT_TENANT_RESIDUAL) {
        ds_error_set(err, what, 0, NULL, "runtime model version %d with %d features: this deepshare reads version %d "
                     "with %d features", ver, nf, RT_FILE_VERSION, DS_RT_NFEAT);
        return DS_EPARSE;
    }
    ensure_tenants(m);
    free_models(m);
    for (int k = 0; k < nm; k++) {
        char name[128];
        unsigned long long ml;
        if (!next_line(buf, len, &pos, line, sizeof line) || sscanf(line, "%127s %llu", name, &ml) != 2 ||
            ml > len - pos || pos + ml >= len || buf[pos + ml] != '\n') {
            ds_error_set(err, what, 0, NULL, "model %d of %d is truncated or malformed", k + 1, nm);
            free_models(m);
            return DS_EPARSE;
        }
        ds_xgb_t *b;
        int rc = ds_xgb_load(&b, buf + pos, (size_t)ml, DS_RT_NFEAT, err);
        if (rc) {
            char msg[400];
            snprintf(msg, sizeof msg, "%.399s", err->msg);
            ds_error_set(err, what, 0, NULL, "model '%.64s': %s", name, msg);
            free_models(m);
            return rc;
        }
        pos += (size_t)ml + 1;
        if (!strcmp(name, "*")) m->cluster = b;
        else {
            int32_t ten = ds_trace_find_tenant(m->t, name);
            if (ten < 0) {
                ds_xgb_free(b); /* a tenant this trace does not have */
                continue;
            }
            m->tenant[ten] = b;
        }
    }
    m->c.per_tenant = mode;
    m->c.frozen = 1;
    m->version++;
    return DS_OK;
}

/* ---- the online protocol over a whole trace ---- */

static const int64_t *sort_end;
static int cmp_end(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    if (sort_end[x] != sort_end[y]) return sort_end[x] < sort_end[y] ? -1 : 1;
    return (x > y) - (x < y);
}

int ds_runtime_online_run(ds_runtime_model_t *m, const int64_t *end, double *pred, int32_t *tenant_hist,
                          int32_t *user_hist, int32_t *source, int64_t *leak)
{
    const ds_trace_t *t = m->t;
    int32_t n = t->njobs;
    int32_t *byend = ds_xmalloc((size_t)(n ? n : 1) * sizeof *byend);
    for (int32_t i = 0; i < n; i++) byend[i] = i;
    sort_end = end;
    qsort(byend, (size_t)n, sizeof *byend, cmp_end);
    int64_t *ucount = ds_xcalloc((size_t)(t->users.n + 1), sizeof *ucount);
    int64_t worst = INT64_MIN;
    int32_t f = 0;
    for (int32_t j = 0; j < n; j++) {
        const ds_job_t *job = &t->jobs[j];
        /* finishes up to and including the submit second come first */
        while (f < n && end[byend[f]] <= job->submit) {
            int32_t k = byend[f++];
            ds_runtime_model_observe(m, k, end[k]);
            if (t->jobs[k].user >= 0) ucount[t->jobs[k].user]++;
        }
        pred[j] = ds_runtime_model_predict(m, j, job->submit);
        int64_t lo = ds_runtime_model_latest_observed(m);
        if (lo != INT64_MIN && lo - job->submit > worst) worst = lo - job->submit;
        if (tenant_hist) tenant_hist[j] = (int32_t)ds_runtime_model_observed(m, job->tenant);
        if (user_hist) user_hist[j] = job->user >= 0 ? (int32_t)ucount[job->user] : 0;
        if (source) source[j] = ds_runtime_model_last_source(m);
    }
    if (leak) *leak = worst;
    free(ucount);
    free(byend);
    return DS_OK;
}

int ds_runtime_online_eval(const ds_trace_t *t, const int64_t *end, const ds_runtime_model_config_t *c, double *pred,
                           int32_t *tenant_hist, int32_t *user_hist, int32_t *source, int64_t *leak, ds_error_t *err)
{
    (void)err;
    ds_runtime_model_t *m = ds_runtime_model_create(t, c);
    int rc = ds_runtime_online_run(m, end, pred, tenant_hist, user_hist, source, leak);
    ds_runtime_model_destroy(m);
    return rc;
}
