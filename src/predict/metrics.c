/* metrics.c: error measures of duration predictions (MAPE under several definitions, MdAPE, R^2 raw
 * and log, median error): the paper does not define its MAPE, so a reader can pick the like-for-like. */
#include "deepshare/models.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int64_t n)
{
    if (n == 0) return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double lg(double x) { return log(x > 1 ? x : 1); }

void ds_reg_metrics(const double *pred, const double *actual, const uint8_t *mask, int64_t n, ds_reg_metrics_t *m)
{
    m->n = 0;
    m->mape = m->mdape = m->r2 = m->r2_log = m->medae = m->mape60 = m->smape = m->mape_log = NAN;
    m->n60 = 0;
    double sa = 0, sl = 0;
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) {
        if (mask && !mask[i]) continue;
        sa += actual[i];
        sl += lg(actual[i]);
        k++;
    }
    if (!k) return;
    double ma = sa / (double)k, ml = sl / (double)k;
    double *ape = ds_xmalloc((size_t)k * sizeof *ape), *ae = ds_xmalloc((size_t)k * sizeof *ae);
    double res = 0, tot = 0, resl = 0, totl = 0, sape = 0, sape60 = 0, ssape = 0, sapel = 0;
    int64_t n60 = 0;
    int64_t j = 0;
    for (int64_t i = 0; i < n; i++) {
        if (mask && !mask[i]) continue;
        double a = actual[i], p = pred[i];
        ae[j] = fabs(p - a);
        ape[j] = ae[j] / (a > 1 ? a : 1);
        sape += ape[j];
        if (a >= 60) sape60 += ape[j], n60++;
        ssape += (p + a > 0 ? 2 * ae[j] / (fabs(p) + fabs(a)) : 0);
        sapel += fabs(log1p(p > 0 ? p : 0) - log1p(a)) / log1p(a > 1 ? a : 1);
        res += (p - a) * (p - a);
        tot += (a - ma) * (a - ma);
        resl += (lg(p) - lg(a)) * (lg(p) - lg(a));
        totl += (lg(a) - ml) * (lg(a) - ml);
        j++;
    }
    m->n = k;
    m->mape = 100.0 * sape / (double)k;
    m->n60 = n60;
    if (n60) m->mape60 = 100.0 * sape60 / (double)n60;
    m->smape = 100.0 * ssape / (double)k;
    m->mape_log = 100.0 * sapel / (double)k;
    m->mdape = 100.0 * median(ape, k);
    m->medae = median(ae, k);
    m->r2 = tot > 0 ? 1 - res / tot : NAN;
    m->r2_log = totl > 0 ? 1 - resl / totl : NAN;
    free(ape);
    free(ae);
}
