/* residuals.c: the ring of a runtime predictor's recent log errors and the remaining-time estimate
 * conditional on a job's elapsed time (deepshare/residuals.h). */
#include "deepshare/residuals.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ds_resid_add(ds_resid_t *r, double log_err)
{
    if (!isfinite(log_err)) return;
    r->ring[r->head] = (float)log_err;
    r->head = (r->head + 1) % DS_RESID_N;
    if (r->n < DS_RESID_N) r->n++;
}

static int cmp_f(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

void ds_resid_sort(ds_resid_t *r)
{
    r->nsorted = r->n;
    memcpy(r->sorted, r->ring, (size_t)r->n * sizeof *r->sorted);
    qsort(r->sorted, (size_t)r->nsorted, sizeof *r->sorted, cmp_f);
}

double ds_resid_beyond(const ds_resid_t *r, double pred, int64_t elapsed)
{
    if (r->nsorted < DS_RESID_MIN || !(pred >= 1)) return -1;
    int32_t lo = 0, hi = r->nsorted;
    if (elapsed >= 1) {
        float cut = (float)log((double)elapsed / pred);
        while (lo < hi) {
            int32_t mid = (lo + hi) / 2;
            if (r->sorted[mid] <= cut) lo = mid + 1;
            else hi = mid;
        }
        hi = r->nsorted;
    }
    if (lo >= hi) return elapsed > 1 ? (double)elapsed : 1;
    double rem = pred * exp(r->sorted[lo + (hi - lo) / 2]) - (double)elapsed;
    return rem > 1 ? rem : 1;
}
