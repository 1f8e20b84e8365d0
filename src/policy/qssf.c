/* qssf.c: Quasi-Shortest-Service-First: order by estimated GPU-time (estimate x GPUs), non-preemptive,
 * head-of-line blocking. As in the reference, a queue holding only this second's arrivals is ordered
 * by GPU count instead, and the estimate order takes over one second later. Jobs without an estimate
 * get the runtime predictor's at arrival (online: it learns from the finishes it is told of). */
#include "queue.h"
#include "deepshare/predictor.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct qssf {
    ds_pqueue_t q;
    const ds_engine_t *e;
    double *est;         /* per job: the estimate it is ranked by */
    int64_t *arr_time;   /* per partition: time of the latest arrivals */
    int32_t *arr_count;  /* and how many arrived then */
    int64_t *wake;       /* per partition: re-run at this time (estimate order takes over) */
    int32_t *tmp;
} qssf_t;

static double service(const qssf_t *s, int32_t j) { return s->est[j] * s->e->trace->jobs[j].gpus; }

static int cmp_qssf(const void *ctx, int32_t a, int32_t b)
{
    const qssf_t *s = ctx;
    const ds_engine_t *e = s->e;
    double sa = service(s, a), sb = service(s, b);
    if (sa != sb) return sa < sb ? -1 : 1;
    return ds_cmp_keys(e->trace->jobs[a].gpus, e->trace->jobs[b].gpus, e->js[a].arrival_seq, e->js[b].arrival_seq);
}

static _Thread_local const ds_engine_t *sort_ctx; /* qsort has no context argument */
static int cmp_gpus(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    return ds_cmp_keys(sort_ctx->trace->jobs[a].gpus, sort_ctx->trace->jobs[b].gpus, sort_ctx->js[a].arrival_seq,
                       sort_ctx->js[b].arrival_seq);
}

static int qssf_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    (void)config;
    const ds_runtime_predictor_t *rp = e->predictors ? e->predictors->runtime : NULL;
    for (int32_t j = 0; j < e->trace->njobs && !rp; j++) {
        if (isnan(e->trace->jobs[j].estimate)) {
            ds_error_set(err, e->trace->source, e->trace->jobs[j].line, "estimate",
                         "qssf needs a duration estimate for every job; job %lld has none (give --estimates FILE)",
                         (long long)e->trace->jobs[j].id);
            return DS_EINVAL;
        }
    }
    qssf_t *s = ds_xcalloc(1, sizeof *s);
    s->e = e;
    s->est = ds_xmalloc((size_t)(e->trace->njobs ? e->trace->njobs : 1) * sizeof *s->est);
    for (int32_t j = 0; j < e->trace->njobs; j++) s->est[j] = e->trace->jobs[j].estimate;
    ds_pqueue_init(&s->q, e, cmp_qssf, s);
    s->arr_time = ds_xmalloc((size_t)e->nparts * sizeof *s->arr_time);
    s->arr_count = ds_xcalloc((size_t)e->nparts, sizeof *s->arr_count);
    s->wake = ds_xmalloc((size_t)e->nparts * sizeof *s->wake);
    for (int32_t p = 0; p < e->nparts; p++) s->arr_time[p] = -1, s->wake[p] = DS_TIME_NEVER;
    s->tmp = ds_xmalloc((size_t)(e->trace->njobs ? e->trace->njobs : 1) * sizeof *s->tmp);
    *state = s;
    return DS_OK;
}

static void qssf_fini(void *state)
{
    qssf_t *s = state;
    ds_pqueue_free(&s->q);
    free(s->arr_time);
    free(s->arr_count);
    free(s->wake);
    free(s->tmp);
    free(s->est);
    free(s);
}

static void qssf_enqueue(ds_engine_t *e, void *state, int32_t job, int64_t now)
{
    qssf_t *s = state;
    if (isnan(s->est[job])) {
        /* predicted once, at arrival, from the finishes reported so far */
        const ds_runtime_predictor_t *rp = e->predictors->runtime;
        double v = rp->predict(rp->ctx, e->trace, job, now);
        s->est[job] = v >= 1 ? v : 1;
    }
    int32_t p = e->js[job].part;
    if (s->arr_time[p] != now) s->arr_time[p] = now, s->arr_count[p] = 0;
    s->arr_count[p]++;
    ds_pqueue_push(&s->q, e, job);
}

/* A withdrawn job leaves the queue; if it arrived this second it no longer counts among the fresh
 * arrivals that wait in GPU-count order. */
static void qssf_withdraw(ds_engine_t *e, void *state, int32_t job, int64_t now)
{
    qssf_t *s = state;
    int32_t p = e->js[job].part;
    ds_pqueue_remove(&s->q, e, job);
    if (s->arr_time[p] == now && e->js[job].pend_since == now && s->arr_count[p] > 0) s->arr_count[p]--;
}

static void qssf_on_finish(ds_engine_t *e, void *state, int32_t job, int64_t now)
{
    (void)state;
    const ds_runtime_predictor_t *rp = e->predictors ? e->predictors->runtime : NULL;
    if (rp && rp->observe_finish) rp->observe_finish(rp->ctx, e->trace, job, now);
}

static void qssf_schedule(ds_engine_t *e, void *state, int32_t part, int64_t now, int timer)
{
    (void)timer;
    qssf_t *s = state;
    ds_jheap_t *h = &s->q.heaps[part];
    int32_t fresh = s->arr_time[part] == now ? s->arr_count[part] : 0;
    if (s->wake[part] <= now) s->wake[part] = DS_TIME_NEVER;
    if (h->n == 0) return;
    if (h->n > fresh) {
        ds_pqueue_place_blocking(&s->q, e, part, now);
        return;
    }
    /* Only new arrivals wait: GPU-count order, stable in arrival order. */
    int32_t n = h->n;
    for (int32_t i = 0; i < n; i++) s->tmp[i] = h->a[i];
    sort_ctx = e;
    qsort(s->tmp, (size_t)n, sizeof *s->tmp, cmp_gpus);
    for (int32_t i = 0; i < n; i++) {
        if (!ds_engine_place(e, s->tmp[i], now)) break;
        ds_jheap_remove(h, s->tmp[i]);
    }
    if (h->n > 0) {
        s->wake[part] = now + 1;
        e->parts[part].dirty = 1;
    }
}

static int64_t qssf_next_timer(const ds_engine_t *e, const void *state, int64_t now)
{
    const qssf_t *s = state;
    int64_t t = DS_TIME_NEVER;
    for (int32_t p = 0; p < e->nparts; p++)
        if (s->wake[p] > now && s->wake[p] < t) t = s->wake[p];
    return t;
}

static void qssf_explain(const ds_engine_t *e, const void *state, int32_t job, int64_t now, ds_buf_t *out)
{
    const qssf_t *s = state;
    char order[200];
    if (isnan(s->est[job]))
        snprintf(order, sizeof order, "smallest estimated GPU-time first (its estimate is made when it arrives)");
    else
        snprintf(order, sizeof order, "smallest estimated GPU-time first: %.0f GPU-s (estimate %.0f s x %d GPU%s)",
                 service(s, job), s->est[job], e->trace->jobs[job].gpus, e->trace->jobs[job].gpus == 1 ? "" : "s");
    ds_pqueue_explain(&s->q, e, job, "qssf", order, out);
    const ds_jstate_t *js = &e->js[job];
    if (js->status == DS_JS_PENDING && s->arr_time[js->part] == now && s->q.heaps[js->part].n <= s->arr_count[js->part])
        ds_bputs(out, "  fresh: only this second's arrivals wait, so they go in GPU-count order; the estimate order "
                      "takes over a second later\n");
}

const ds_policy_ops_t ds_policy_qssf = {
    .name = "qssf",
    .summary = "quasi-shortest-service-first on estimated GPU-time (--estimates FILE, else the runtime predictor); "
               "head-of-line blocking",
    .props = DS_POLICY_EXACT_HOLD | DS_POLICY_NEEDS_ESTIMATES | DS_POLICY_USES_ESTIMATES | DS_POLICY_TYPED,
    .init = qssf_init,
    .fini = qssf_fini,
    .enqueue = qssf_enqueue,
    .withdraw = qssf_withdraw,
    .on_finish = qssf_on_finish,
    .schedule = qssf_schedule,
    .next_timer = qssf_next_timer,
    .explain = qssf_explain,
};
