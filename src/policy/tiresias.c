/* tiresias.c: Tiresias, discretized two-queue least-attained-service: every 60 s, walk the high
 * queue (attained <= 18,000 GPU-s) then the low queue, each in submit order, granting GPUs up to the
 * partition's capacity; running jobs left out are preempted, waiting jobs that do not fit skipped. */
#include "deepshare/policy.h"

#include <stdlib.h>

#define TIRESIAS_PERIOD 60
#define TIRESIAS_THRESHOLD 18000.0

typedef struct tiresias {
    int32_t **active;    /* per partition: running and pending jobs */
    int32_t *nactive, *capactive;
    uint8_t *listed;
    int64_t *run_seq;    /* order jobs entered the running list (ties among running jobs) */
    int64_t seq;
    int32_t *order, *prerun, *victims;
    double *attained;
    int64_t npending_total;
    int32_t nparts;
} tiresias_t;

static _Thread_local const ds_engine_t *cmp_e; /* qsort has no context argument */
static _Thread_local const tiresias_t *cmp_s;

static int cmp_walk(const void *x, const void *y)
{
    int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
    const ds_engine_t *e = cmp_e;
    int la = cmp_s->attained[a] > TIRESIAS_THRESHOLD, lb = cmp_s->attained[b] > TIRESIAS_THRESHOLD;
    if (la != lb) return la - lb;
    int64_t sa = e->trace->jobs[a].submit, sb = e->trace->jobs[b].submit;
    if (sa != sb) return sa < sb ? -1 : 1;
    /* The reference walks running jobs before pending ones, each list in insertion order. */
    int pa = e->js[a].status == DS_JS_PENDING, pb = e->js[b].status == DS_JS_PENDING;
    if (pa != pb) return pa - pb;
    int64_t qa = pa ? e->js[a].arrival_seq : cmp_s->run_seq[a], qb = pb ? e->js[b].arrival_seq : cmp_s->run_seq[b];
    return (qa > qb) - (qa < qb);
}

static int tiresias_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    (void)config;
    (void)err;
    tiresias_t *s = ds_xcalloc(1, sizeof *s);
    int32_t nj = e->trace->njobs ? e->trace->njobs : 1;
    s->nparts = e->nparts;
    s->active = ds_xcalloc((size_t)e->nparts, sizeof *s->active);
    s->nactive = ds_xcalloc((size_t)e->nparts, sizeof *s->nactive);
    s->capactive = ds_xcalloc((size_t)e->nparts, sizeof *s->capactive);
    s->listed = ds_xcalloc((size_t)nj, 1);
    s->run_seq = ds_xcalloc((size_t)nj, sizeof *s->run_seq);
    s->order = ds_xmalloc((size_t)nj * sizeof *s->order);
    s->prerun = ds_xmalloc((size_t)nj * sizeof *s->prerun);
    s->victims = ds_xmalloc((size_t)nj * sizeof *s->victims);
    s->attained = ds_xcalloc((size_t)nj, sizeof *s->attained);
    *state = s;
    return DS_OK;
}

static void tiresias_fini(void *state)
{
    tiresias_t *s = state;
    for (int32_t p = 0; p < s->nparts; p++) free(s->active[p]);
    free(s->active);
    free(s->nactive);
    free(s->capactive);
    free(s->listed);
    free(s->run_seq);
    free(s->order);
    free(s->prerun);
    free(s->victims);
    free(s->attained);
    free(s);
}

static void tiresias_enqueue(ds_engine_t *e, void *state, int32_t job, int64_t now)
{
    (void)now;
    tiresias_t *s = state;
    s->npending_total++;
    if (s->listed[job]) return;
    int32_t p = e->js[job].part;
    if (s->nactive[p] == s->capactive[p]) {
        s->capactive[p] = s->capactive[p] ? s->capactive[p] * 2 : 64;
        s->active[p] = ds_xrealloc(s->active[p], (size_t)s->capactive[p] * sizeof **s->active);
    }
    s->active[p][s->nactive[p]++] = job;
    s->listed[job] = 1;
}

static void tiresias_schedule(ds_engine_t *e, void *state, int32_t part, int64_t now, int timer)
{
    tiresias_t *s = state;
    if (!timer || now % TIRESIAS_PERIOD != 0 || e->parts[part].npending == 0) return;
    /* Drop finished jobs, compute attained service. */
    int32_t n = 0, *act = s->active[part];
    for (int32_t i = 0; i < s->nactive[part]; i++) {
        int32_t j = act[i];
        if (e->js[j].status == DS_JS_DONE) { s->listed[j] = 0; continue; }
        act[n++] = j;
        s->attained[j] = (double)e->trace->jobs[j].gpus * (double)ds_engine_elapsed(e, j, now);
    }
    s->nactive[part] = n;
    for (int32_t i = 0; i < n; i++) s->order[i] = act[i];
    cmp_e = e;
    cmp_s = s;
    qsort(s->order, (size_t)n, sizeof *s->order, cmp_walk);
    int64_t quota = e->parts[part].gpus_total;
    int32_t npre = 0, nvic = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t j = s->order[i], g = e->trace->jobs[j].gpus;
        if (g <= quota) {
            quota -= g;
            if (e->js[j].status == DS_JS_PENDING) s->prerun[npre++] = j;
        } else if (e->js[j].status == DS_JS_RUNNING) {
            s->victims[nvic++] = j;
        }
    }
    for (int32_t i = 0; i < nvic; i++) ds_engine_preempt(e, s->victims[i], now, 0);
    for (int32_t i = 0; i < npre; i++) {
        int32_t j = s->prerun[i];
        if (ds_engine_place(e, j, now)) {
            s->run_seq[j] = ++s->seq;
            s->npending_total--;
        }
    }
}

static int64_t tiresias_next_timer(const ds_engine_t *e, const void *state, int64_t now)
{
    (void)e;
    const tiresias_t *s = state;
    if (s->npending_total <= 0) return DS_TIME_NEVER;
    int64_t r = ((now % TIRESIAS_PERIOD) + TIRESIAS_PERIOD) % TIRESIAS_PERIOD; /* floor, also for now < 0 */
    return now - r + TIRESIAS_PERIOD;
}

const ds_policy_ops_t ds_policy_tiresias = {
    .name = "tiresias",
    .summary = "discretized 2D-LAS: two queues split at 18,000 GPU-s, 60 s rounds, preemptive",
    .init = tiresias_init,
    .fini = tiresias_fini,
    .enqueue = tiresias_enqueue,
    .schedule = tiresias_schedule,
    .next_timer = tiresias_next_timer,
};
