/* kai_share.c: KAI's fair-share division of one resource (proportion plugin, resource_division.go at
 * KAI-Scheduler 72de64fc: setDeservedResource, divideUpToFairShare, divideRemainingResource), and the
 * reclaim legality checks of reclaimable.go and strategies.go. Pure functions of the numbers given. */
#include "kai/kai.h"

#include <math.h>
#include <stdlib.h>

void kai_config_default(kai_config_t *c)
{
    c->classes = PQ_CLASSES_QUOTA;
    c->weight_by_quota = 0;
    c->limit_factor = -1;
    c->preempt_min_runtime = 0;
    c->reclaim_min_runtime = 0;
    c->saturation_mult = 1.0;
    c->k_value = 1.0;
    c->period = 1;
}

static double requestable(const kai_share_in_t *q)
{
    return q->limit < 0 ? q->request : fmin(q->limit, q->request);
}

static int satisfied(const kai_share_in_t *q, double fair)
{
    return q->request <= fair || (q->limit >= 0 && q->limit <= fair);
}

static double remaining_requested(const kai_share_in_t *q, double fair)
{
    double r = requestable(q);
    return r < fair ? 0 : r - fair;
}

typedef struct rem {
    double amount;
    int64_t created;
    int32_t i;
} rem_t;

static int cmp_rem(const void *a, const void *b)
{
    const rem_t *x = a, *y = b;
    if (x->amount != y->amount) return x->amount > y->amount ? -1 : 1;
    if (x->created != y->created) return x->created < y->created ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

double kai_share_divide(const kai_share_in_t *q, int32_t n, double total, double k_value, double *fair)
{
    double remaining = total;
    for (int32_t i = 0; i < n; i++) {
        double deserved = q[i].deserved < 0 ? total : q[i].deserved;
        fair[i] = fmin(deserved, requestable(&q[i]));
        remaining -= fair[i];
    }
    if (remaining <= 0) return 0;
    /* Over-quota water-filling: each round hands out shares of what was left at its start, in whole units to
     * a queue that wants more than its share (the fractional part is remembered), and repeats while some
     * queue took less than its share. */
    double *sw = ds_xcalloc((size_t)(n ? n : 1), sizeof *sw);
    double *rem = ds_xcalloc((size_t)(n ? n : 1), sizeof *rem);
    uint8_t *has_rem = ds_xcalloc((size_t)(n ? n : 1), 1);
    for (;;) {
        int again = 0;
        double give_round = remaining, wsum = 0, swsum = 0;
        for (int32_t i = 0; i < n; i++)
            if (remaining_requested(&q[i], fair[i]) > 0) wsum += q[i].weight;
        if (wsum == 0) break;
        for (int32_t i = 0; i < n; i++) {
            sw[i] = 0;
            if (satisfied(&q[i], fair[i])) continue;
            double nw = q[i].weight / wsum;
            sw[i] = fmax(0, nw + k_value * (nw - q[i].usage));
            swsum += sw[i];
        }
        if (swsum == 0) break;
        for (int32_t i = 0; i < n; i++) {
            if (remaining == 0) break;
            if (satisfied(&q[i], fair[i]) || q[i].weight == 0) continue;
            double want = remaining_requested(&q[i], fair[i]);
            double share = give_round * (sw[i] / swsum), give = 0;
            if (want <= share) {
                give = want;
                has_rem[i] = 0;
            } else {
                double whole = floor(share); /* "always done in round numbers" */
                if (whole > 0) give = whole;
                if (share - give > 0) has_rem[i] = 1, rem[i] = share - give;
            }
            if (give == 0) continue;
            fair[i] += give;
            remaining -= give;
            again = again || want < share;
        }
        if (!again || remaining == 0) break;
    }
    /* What the rounding kept back goes one unit at a time to the queues with the largest remainders. */
    rem_t *order = ds_xmalloc((size_t)(n ? n : 1) * sizeof *order);
    int32_t nr = 0;
    for (int32_t i = 0; i < n; i++)
        if (has_rem[i]) order[nr++] = (rem_t){rem[i], q[i].created, i};
    qsort(order, (size_t)nr, sizeof *order, cmp_rem);
    for (int32_t k = 0; k < nr && remaining > 0; k++) {
        double give = fmin(1, remaining);
        fair[order[k].i] += give;
        remaining -= give;
    }
    free(order);
    free(sw);
    free(rem);
    free(has_rem);
    return remaining;
}

double kai_allocatable(const kai_qview_t *q)
{
    double a = fmax(q->deserved, q->fair);
    return q->limit >= 0 ? fmin(q->limit, a) : a;
}

int kai_can_reclaim(const kai_qview_t *r, double req, int nonpreemptible)
{
    if (r->alloc + req > r->fair) return 0;
    return !nonpreemptible || r->alloc_np + req <= r->deserved;
}

/* allocated / fair share, +Inf for a queue holding resources it has no share of */
static double saturation(double alloc, double fair)
{
    if (fair == 0) return alloc > 0 ? INFINITY : 0;
    return alloc / fair;
}

int kai_reclaim_legal(const kai_qview_t *r, double req, int nonpreemptible, const kai_qview_t *vq, int32_t nvq,
                      const int32_t *vof, const double *victims, int32_t nv, double mult, int *why)
{
    double *remaining = ds_xmalloc((size_t)(nvq ? nvq : 1) * sizeof *remaining);
    uint8_t *touched = ds_xcalloc((size_t)(nvq ? nvq : 1), 1);
    int ok = kai_reclaim_legal_ws(r, req, nonpreemptible, vq, nvq, vof, victims, nv, mult, why, remaining, touched);
    free(remaining);
    free(touched);
    return ok;
}

int kai_reclaim_legal_ws(const kai_qview_t *r, double req, int nonpreemptible, const kai_qview_t *vq, int32_t nvq,
                         const int32_t *vof, const double *victims, int32_t nv, double mult, int *why, double *remaining,
                         uint8_t *touched)
{
    int dummy;
    if (!why) why = &dummy;
    *why = KAI_LEGAL;
    for (int32_t v = 0; v < nvq; v++) remaining[v] = vq[v].alloc, touched[v] = 0;
    int within_deserved = r->alloc + req <= r->deserved;
    int ok = 1;
    /* strategies.go: each victim against its queue's share before it is taken */
    for (int32_t k = 0; k < nv && ok; k++) {
        const kai_qview_t *q = &vq[vof[k]];
        double left = remaining[vof[k]];
        int maintain_fair_share = left > kai_allocatable(q);
        int guarantee_deserved = within_deserved && left > q->deserved;
        if (!maintain_fair_share && !guarantee_deserved) ok = 0, *why = KAI_NO_STRATEGY;
        remaining[vof[k]] -= victims[k];
        touched[vof[k]] = 1;
    }
    /* reclaimingQueuesRemainWithinBoundaries: the relative order of saturations is kept */
    double sat_r = saturation(r->alloc + req, r->fair);
    for (int32_t v = 0; v < nvq && ok; v++) {
        if (!touched[v]) continue;
        double sat_v = saturation(remaining[v], vq[v].fair);
        if (sat_r > 1 && vq[v].fair > 0 && sat_r * mult >= sat_v) ok = 0, *why = KAI_SATURATION;
    }
    if (ok && nonpreemptible && r->alloc_np + req > r->deserved) ok = 0, *why = KAI_NP_OVER_QUOTA;
    return ok;
}
