/* residuals.h: a ring of a runtime predictor's recent errors (ln actual - ln predicted) and what they
 * say remains of a running job that has outlived its prediction: the estimate behind
 * `--remaining conditional` and the overrun yield's heavy-tail test (docs/policy.md §2). */
#ifndef DS_RESIDUALS_H
#define DS_RESIDUALS_H

#include <stdint.h>

#define DS_RESID_N 2048 /* recent errors kept */
#define DS_RESID_MIN 50 /* errors needed, in the sorted copy, before an estimate is given */

typedef struct ds_resid {
    float ring[DS_RESID_N], sorted[DS_RESID_N];
    int32_t n, head, nsorted;
} ds_resid_t;

/* Adds one error (non-finite values are ignored). */
void ds_resid_add(ds_resid_t *r, double log_err);
/* Takes the sorted copy that ds_resid_beyond reads (O(n log n): the caller decides how often). */
void ds_resid_sort(ds_resid_t *r);
/* Remaining time of a job predicted at pred seconds that has run elapsed seconds: the median of
 * pred x exp(e) - elapsed over the sorted errors e with pred x exp(e) > elapsed; elapsed when it
 * outlived them all (a heavy tail: as long again); -1 while fewer than DS_RESID_MIN are sorted. */
double ds_resid_beyond(const ds_resid_t *r, double pred, int64_t elapsed);

#endif
