/* batches.c: submission batches (rt_batches.h): which jobs were submitted together by one owner with one
 * GPU count, and what their finished members say of the others' run times. */
#include "rt_batches.h"
#include "deepshare/models.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void rt_batches_init(rt_batches_t *bt, int64_t gap, int32_t min_record)
{
    memset(bt, 0, sizeof *bt);
    bt->gap = gap;
    bt->min_record = min_record > RT_BATCH_REC ? RT_BATCH_REC : min_record;
    bt->trusted = bt->min_record <= 0;
}

void rt_batches_free(rt_batches_t *bt)
{
    for (int32_t i = 0; i < bt->nb; i++) free(bt->b[i].fin);
    free(bt->b);
    free(bt->of);
    free(bt->next);
    free(bt->done);
    free(bt->end);
    ds_idmap_free(&bt->keys);
    free(bt->open);
    free(bt->out);
    memset(bt, 0, sizeof *bt);
}

void rt_batches_reset(rt_batches_t *bt)
{
    bt->nrec = bt->hrec = bt->wins = 0;
    bt->trusted = bt->min_record <= 0;
    for (int32_t i = 0; i < bt->nb; i++) bt->b[i].nfin = 0;
    if (bt->done) memset(bt->done, 0, (size_t)bt->prepared);
}

static int64_t key_of(const ds_job_t *j)
{
    int32_t owner = j->user >= 0 ? j->user : -1 - j->tenant;
    return (int64_t)((uint64_t)(uint32_t)owner << 32 | (uint32_t)j->gpus);
}

/* The slot of a (owner, GPU count) key in open[], added (with no open batch) when new. */
static int32_t key_slot(rt_batches_t *bt, int64_t k)
{
    int32_t s = ds_idmap_put(&bt->keys, k, bt->nkeys);
    if (s >= 0) return s;
    if (bt->nkeys == bt->capkeys) {
        bt->capkeys = bt->capkeys ? 2 * bt->capkeys : 256;
        bt->open = ds_xrealloc(bt->open, (size_t)bt->capkeys * sizeof *bt->open);
    }
    bt->open[bt->nkeys] = -1;
    return bt->nkeys++;
}

/* Batches of jobs up to job, in trace (submit) order: a job joins only what was submitted before it. */
static void prepare(rt_batches_t *bt, const ds_trace_t *t, int32_t job)
{
    if (job < bt->prepared) return;
    if (job >= bt->cap) {
        int32_t cap = DS_MAX(job + 1, DS_MAX(t->njobs, 2 * bt->cap));
        bt->of = ds_xrealloc(bt->of, (size_t)cap * sizeof *bt->of);
        bt->next = ds_xrealloc(bt->next, (size_t)cap * sizeof *bt->next);
        bt->done = ds_xrealloc(bt->done, (size_t)cap);
        bt->end = ds_xrealloc(bt->end, (size_t)cap * sizeof *bt->end);
        bt->cap = cap;
    }
    for (int32_t i = bt->prepared; i <= job; i++) {
        const ds_job_t *j = &t->jobs[i];
        bt->next[i] = -1;
        bt->done[i] = 0;
        int32_t s = key_slot(bt, key_of(j)), b = bt->open[s];
        /* A trace is in submit order, and there a job joins when within the gap after the batch's latest
         * submission. The daemon's table (src/daemon/rtmodel.c) is in the order it first saw each job (a journal
         * replayed at start: in order of finish), so a job joins when within the gap of the batch's submissions
         * either way, and one submitted long before (a straggler) has a batch of its own that does not close
         * the open one. */
        const rt_batch_t *o = b >= 0 ? &bt->b[b] : NULL;
        if (o && j->submit >= o->lo - bt->gap && j->submit <= o->hi + bt->gap && o->size < RT_BATCH_MAX) {
            bt->next[o->last] = i;
            bt->b[b].last = i;
            bt->b[b].size++;
            bt->b[b].lo = DS_MIN(o->lo, j->submit), bt->b[b].hi = DS_MAX(o->hi, j->submit);
        } else {
            int opens = !o || j->submit >= o->hi;
            if (bt->nb == bt->capb) {
                bt->capb = bt->capb ? 2 * bt->capb : 1024;
                bt->b = ds_xrealloc(bt->b, (size_t)bt->capb * sizeof *bt->b);
            }
            b = bt->nb++;
            bt->b[b] = (rt_batch_t){.first = i, .last = i, .size = 1, .lo = j->submit, .hi = j->submit};
            if (opens) bt->open[s] = b;
        }
        bt->of[i] = b;
    }
    bt->prepared = job + 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n), ascending, n > 0. */
static double median_sorted(const double *v, int32_t n)
{
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static double seconds(const ds_job_t *j) { return j->duration > 1 ? (double)j->duration : 1.0; }

/* What the evidence said of job while it waited: the median of its siblings that had finished (done, end) by
 * its start; < 0 when none had. At most limit members are looked at, so a huge batch costs a bounded scan. */
static double estimate_at_start(const rt_batches_t *bt, const ds_trace_t *t, int32_t job, int64_t start, int32_t limit)
{
    double v[RT_BATCH_MAX];
    int32_t n = 0, seen = 0;
    for (int32_t x = bt->b[bt->of[job]].first; x >= 0 && seen < limit; x = bt->next[x], seen++)
        if (x != job && bt->done[x] && bt->end[x] <= start) v[n++] = seconds(&t->jobs[x]);
    if (!n) return -1;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return median_sorted(v, n);
}

/* Whether batches are alike is a property of the workload (sweeps and arrays are; a generator's independent
 * draws are not): the evidence earns its use on the jobs that finished with both estimates, by erring less
 * than the model on clearly more than half of the latest of them (a sign test, two standard deviations). */
static int earned(const rt_batches_t *bt)
{
    return bt->min_record <= 0 || (bt->nrec >= bt->min_record && bt->wins - 0.5 * bt->nrec > sqrt((double)bt->nrec));
}

static void record(rt_batches_t *bt, double actual, double batch, double model)
{
    uint8_t win = fabs(log(actual / batch)) < fabs(log(actual / model));
    if (bt->nrec == RT_BATCH_REC) bt->wins -= bt->win[bt->hrec];
    else bt->nrec++;
    bt->win[bt->hrec] = win;
    bt->wins += win;
    bt->hrec = (bt->hrec + 1) % RT_BATCH_REC;
    bt->trusted = earned(bt);
}

const int32_t *rt_batches_finish(rt_batches_t *bt, const ds_trace_t *t, int32_t job, int64_t now, double model_pred,
                                 int32_t *n)
{
    *n = 0;
    if (bt->gap <= 0) return bt->out;
    prepare(bt, t, job);
    if (bt->done[job]) return bt->out;
    bt->done[job] = 1;
    bt->end[job] = now;
    /* kept even when alone so far: later submissions may still join its batch */
    rt_batch_t *b = &bt->b[bt->of[job]];
    if (b->nfin == b->capfin) {
        b->capfin = b->capfin ? 2 * b->capfin : 4;
        b->fin = ds_xrealloc(b->fin, (size_t)b->capfin * sizeof *b->fin);
    }
    double d = seconds(&t->jobs[job]);
    /* its start taken as its finish less its run time: a lower bound where it was preempted */
    if (b->nfin > 0 && model_pred > 0) {
        double est = estimate_at_start(bt, t, job, now - (int64_t)d, RT_BATCH_SCAN);
        if (est > 0) record(bt, d, est, model_pred);
    }
    int32_t i = b->nfin++;
    while (i > 0 && b->fin[i - 1] > d) b->fin[i] = b->fin[i - 1], i--;
    b->fin[i] = d;
    for (int32_t x = b->first; x >= 0; x = bt->next[x]) {
        if (bt->done[x]) continue;
        if (*n == bt->capout) {
            bt->capout = bt->capout ? 2 * bt->capout : 16;
            bt->out = ds_xrealloc(bt->out, (size_t)bt->capout * sizeof *bt->out);
        }
        bt->out[(*n)++] = x;
    }
    return bt->out;
}

int32_t ds_runtime_batch_at_start(const ds_trace_t *t, const int64_t *end, int64_t gap, const double *pred, double *out,
                                  uint8_t *has)
{
    rt_batches_t bt;
    rt_batches_init(&bt, gap, 0);
    int32_t used = 0;
    for (int32_t i = 0; i < t->njobs; i++) out[i] = pred[i];
    if (has) memset(has, 0, (size_t)t->njobs);
    if (gap > 0 && t->njobs > 0) {
        prepare(&bt, t, t->njobs - 1);
        /* every job has ended, at end[] */
        memset(bt.done, 1, (size_t)t->njobs);
        memcpy(bt.end, end, (size_t)t->njobs * sizeof *end);
        for (int32_t i = 0; i < t->njobs; i++) {
            double est = estimate_at_start(&bt, t, i, end[i] - t->jobs[i].duration, RT_BATCH_MAX);
            if (est < 0) continue;
            out[i] = est;
            if (has) has[i] = 1;
            used++;
        }
    }
    rt_batches_free(&bt);
    return used;
}

double rt_batches_total(rt_batches_t *bt, const ds_trace_t *t, int32_t job, int64_t elapsed)
{
    if (bt->gap <= 0) return -1;
    prepare(bt, t, job); /* a job asked about is in its batch from then on, trusted or not */
    if (!bt->trusted) return -1;
    const rt_batch_t *b = &bt->b[bt->of[job]];
    int32_t n = b->nfin;
    if (n == 0) return -1;
    double el = elapsed > 0 ? (double)elapsed : 0.0, hi = b->fin[n - 1];
    if (el > 2 * hi) return -1;
    /* the siblings that ran longer than it has: it is one of them, expected at their median */
    int32_t lo = 0, up = n;
    while (lo < up) {
        int32_t mid = lo + (up - lo) / 2;
        if (b->fin[mid] > el) up = mid;
        else lo = mid + 1;
    }
    if (lo < n) return median_sorted(b->fin + lo, n - lo);
    /* It has outrun every finished sibling: the last of a batch usually ends within the batch's own
     * spread of the others (the ratio of its longest to its shortest run; 10% while one has finished,
     * at least 5%, at least a minute). */
    double spread = n > 1 ? log(hi / b->fin[0]) : 0.1;
    if (spread < 0.05) spread = 0.05;
    double more = el * spread;
    return el + (more > 60 ? more : 60);
}

int32_t rt_batches_of(rt_batches_t *bt, const ds_trace_t *t, int32_t job)
{
    if (bt->gap <= 0) return -1;
    prepare(bt, t, job);
    return bt->of[job];
}

void rt_batches_carry_record(rt_batches_t *to, const rt_batches_t *from)
{
    memcpy(to->win, from->win, sizeof to->win);
    to->nrec = from->nrec, to->hrec = from->hrec, to->wins = from->wins;
    to->trusted = earned(to);
}
