/* usage_prom.c: the reader of 'deepshare usage --metrics' (deepshare/usage.h): deepshared's per-tenant series
 * as a Prometheus server keeps them, from its query_range answers (JSON, read with jansson), turned into the
 * per-tenant samples a simulator run's tenant_usage.csv gives, so that a live and a simulated month read
 * alike. Strict and bounded like the other readers: an answer that is not a Prometheus matrix, a value out of
 * range, a tenant name too long, too many points are errors naming the metric and the field. */
#include "deepshare/usage.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const ds_usage_prom_metric[DS_PROM_NFIELDS] = {
    "deepshare_tenant_quota_gpus",    "deepshare_tenant_guaranteed_gpus",         "deepshare_tenant_best_effort_gpus",
    "deepshare_tenant_pending_gpus",  "deepshare_tenant_qad_reported_ratio",      "deepshare_tenant_qad_reported_smoothed_ratio",
    "deepshare_tenant_preemptions_total",
};

struct prom_point {
    int64_t time;
    int32_t tenant;
    int32_t series; /* counters: the series (its label set), since each instance counts on its own */
    int32_t field;
    double v;
};
typedef struct prom_point prom_point_t;

void ds_usage_prom_init(ds_usage_prom_t *p) { memset(p, 0, sizeof *p); }

void ds_usage_prom_free(ds_usage_prom_t *p)
{
    free(p->pts);
    ds_strtab_free(&p->series);
    memset(p, 0, sizeof *p);
}

static int bad(ds_error_t *err, int field, const char *where, const char *fmt, const char *detail)
{
    char what[96];
    snprintf(what, sizeof what, "Prometheus %s", ds_usage_prom_metric[field]);
    ds_error_set(err, what, 0, where, fmt, detail);
    return DS_EPARSE;
}

/* A value as Prometheus writes it: a string ("3", "0.95", "NaN", "+Inf"). */
static int value_of(json_t *v, double *out)
{
    if (!json_is_string(v)) return -1;
    const char *s = json_string_value(v);
    char *end;
    double x = strtod(s, &end);
    if (end == s || *end) return -1;
    *out = x;
    return 0;
}

static int push(ds_usage_prom_t *p, prom_point_t pt, int field, ds_error_t *err)
{
    if (p->npts >= DS_USAGE_MAX_ROWS) return bad(err, field, NULL, "more than %s points in all", "50000000");
    if (p->npts == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 4096;
        p->pts = ds_xrealloc(p->pts, (size_t)p->cap * sizeof *p->pts);
    }
    p->pts[p->npts++] = pt;
    return DS_OK;
}

int ds_usage_prom_add(ds_usage_prom_t *p, ds_usage_data_t *d, int field, const char *buf, size_t n, ds_error_t *err)
{
    if (field < 0 || field >= DS_PROM_NFIELDS) return bad(err, 0, NULL, "%s", "unknown field");
    json_error_t je;
    json_t *root = json_loadb(buf, n, JSON_REJECT_DUPLICATES, &je);
    if (!root) return bad(err, field, NULL, "the answer is not JSON: %s", je.text);
    int rc = DS_OK;
    json_t *status = json_object_get(root, "status");
    if (!json_is_string(status) || strcmp(json_string_value(status), "success")) {
        json_t *e = json_object_get(root, "error");
        rc = bad(err, field, "status", "the query failed: %s",
                 json_is_string(e) ? json_string_value(e) : "no \"status\":\"success\" (not a Prometheus query answer)");
        goto out;
    }
    json_t *data = json_object_get(root, "data"), *type = json_object_get(data, "resultType");
    if (!json_is_string(type) || strcmp(json_string_value(type), "matrix")) {
        rc = bad(err, field, "data.resultType", "%s", "expected a matrix (a query_range answer)");
        goto out;
    }
    json_t *result = json_object_get(data, "result");
    if (!json_is_array(result)) {
        rc = bad(err, field, "data.result", "%s", "expected an array of series");
        goto out;
    }
    size_t i, k;
    json_t *ser;
    json_array_foreach(result, i, ser) {
        json_t *metric = json_object_get(ser, "metric"), *values = json_object_get(ser, "values");
        json_t *ten = json_object_get(metric, "tenant");
        if (!json_is_string(ten) || !json_is_array(values)) {
            rc = bad(err, field, "data.result", "%s", "a series without a \"tenant\" label or \"values\" array");
            goto out;
        }
        const char *name = json_string_value(ten);
        size_t len = strlen(name);
        if (len == 0 || len > DS_USAGE_MAX_NAME || memchr(name, '\n', len) || memchr(name, ',', len)) {
            rc = bad(err, field, "tenant", "a tenant name empty, longer than 127 bytes or with a comma or newline: '%.60s'", name);
            goto out;
        }
        int32_t t = ds_strtab_find(&d->tenants, name);
        if (t < 0) {
            if (d->tenants.n >= DS_USAGE_MAX_TENANTS) {
                rc = bad(err, field, "tenant", "more than %s tenants", "4096");
                goto out;
            }
            t = ds_strtab_intern(&d->tenants, name);
        }
        int32_t sid = -1;
        if (field == DS_PROM_PREEMPTIONS) {
            char *key = json_dumps(metric, JSON_COMPACT | JSON_SORT_KEYS);
            if (!key) { rc = bad(err, field, "metric", "%s", "unreadable label set"); goto out; }
            sid = ds_strtab_find(&p->series, key);
            if (sid < 0) {
                if (p->series.n >= DS_USAGE_MAX_TENANTS * 16) {
                    free(key);
                    rc = bad(err, field, "metric", "more than %s series", "65536");
                    goto out;
                }
                sid = ds_strtab_intern(&p->series, key);
            }
            free(key);
        }
        json_t *pt;
        json_array_foreach(values, k, pt) {
            json_t *tj = json_array_get(pt, 0);
            double x, tv = json_is_number(tj) ? json_number_value(tj) : NAN;
            if (!json_is_array(pt) || json_array_size(pt) != 2 || !(fabs(tv) <= (double)DS_USAGE_MAX_TIME) ||
                value_of(json_array_get(pt, 1), &x)) {
                rc = bad(err, field, "values", "%s", "expected [unix seconds, \"value\"] points");
                goto out;
            }
            if (isnan(x)) continue; /* NaN: the daemon had no figure then (e.g. no cycle yet) */
            double hi = field == DS_PROM_QAD || field == DS_PROM_SMOOTHED ? 1.0 : field == DS_PROM_QUOTA ? DS_MAX_QUOTA_GPUS
                                                                                                       : (double)INT32_MAX;
            if (!(x >= 0 && x <= hi)) {
                char v[40];
                snprintf(v, sizeof v, "%g", x);
                rc = bad(err, field, "values", "a value out of range: %s", v);
                goto out;
            }
            prom_point_t q = {.time = (int64_t)floor(tv), .tenant = t, .series = sid, .field = field, .v = x};
            if ((rc = push(p, q, field, err))) goto out;
        }
    }
out:
    json_decref(root);
    return rc;
}

static int cmp_point(const void *a, const void *b)
{
    const prom_point_t *x = a, *y = b;
    if (x->field == DS_PROM_PREEMPTIONS || y->field == DS_PROM_PREEMPTIONS) {
        /* counters after gauges, by series then time */
        if ((x->field == DS_PROM_PREEMPTIONS) != (y->field == DS_PROM_PREEMPTIONS)) return x->field == DS_PROM_PREEMPTIONS ? 1 : -1;
        if (x->series != y->series) return x->series < y->series ? -1 : 1;
        return (x->time > y->time) - (x->time < y->time);
    }
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    if (x->tenant != y->tenant) return x->tenant < y->tenant ? -1 : 1;
    return (x->field > y->field) - (x->field < y->field);
}

int ds_usage_prom_finish(ds_usage_prom_t *p, ds_usage_data_t *d, int64_t step, int64_t from, int64_t to,
                         int64_t *incomplete, ds_error_t *err)
{
    (void)err;
    prom_point_t *pt = p->pts;
    if (p->npts > 1) qsort(pt, (size_t)p->npts, sizeof *pt, cmp_point);
    *incomplete = 0;
    int64_t k = 0;
    /* gauges: one sample per (time, tenant) that has all six figures (the daemon exports them together);
     * a point repeated by overlapping queries counts once */
    while (k < p->npts && pt[k].field != DS_PROM_PREEMPTIONS) {
        int64_t t = pt[k].time;
        int32_t ten = pt[k].tenant;
        double v[DS_PROM_NGAUGES];
        int have = 0;
        for (; k < p->npts && pt[k].field != DS_PROM_PREEMPTIONS && pt[k].time == t && pt[k].tenant == ten; k++)
            v[pt[k].field] = pt[k].v, have |= 1 << pt[k].field;
        if (t < from || t >= to) continue;
        if (have != (1 << DS_PROM_NGAUGES) - 1) {
            ++*incomplete;
            continue;
        }
        if (d->nsamples == d->capsamples) {
            d->capsamples = d->capsamples ? d->capsamples * 2 : 4096;
            d->samples = ds_xrealloc(d->samples, (size_t)d->capsamples * sizeof *d->samples);
        }
        d->samples[d->nsamples++] = (ds_usage_sample_t){
            .time = t, .tenant = ten, .quota = (int32_t)v[DS_PROM_QUOTA], .g = (int32_t)v[DS_PROM_G],
            .be = (int32_t)v[DS_PROM_BE], .pending = (int32_t)v[DS_PROM_PENDING], .qad = (float)v[DS_PROM_QAD],
            .smoothed = (float)v[DS_PROM_SMOOTHED]};
    }
    if (d->nsamples > 0) d->step = step;
    /* the counter: its increases between consecutive points inside [from, to], per series (a drop is a
     * restart of that instance, which counts from 0 again), summed per tenant */
    if (k < p->npts) {
        free(d->preempted);
        d->preempted = ds_xcalloc((size_t)(d->tenants.n ? d->tenants.n : 1), sizeof *d->preempted);
        d->npreempted = d->tenants.n;
    }
    for (int64_t prev = -1; k < p->npts; k++) {
        if (pt[k].time < from || pt[k].time > to) continue;
        if (prev >= 0 && pt[prev].series == pt[k].series && pt[k].time > pt[prev].time) {
            double inc = pt[k].v >= pt[prev].v ? pt[k].v - pt[prev].v : pt[k].v;
            d->preempted[pt[k].tenant] += inc;
        }
        if (prev < 0 || pt[prev].series != pt[k].series || pt[k].time > pt[prev].time) prev = k;
    }
    return DS_OK;
}
