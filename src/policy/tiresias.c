/* tiresias.c: Tiresias, discretized two-queue least-attained-service: every 60 s, walk the high
 * queue (attained <= 18,000 GPU-s) then the low queue, each in submit order, granting GPUs up to the
 * partition's capacity; running jobs left out are preempted, waiting jobs that do not fit skipped.
 *
 * The walk order is kept incrementally instead of sorting every job at every tick: per partition and
 * queue level, running and pending jobs sit in two arrays sorted by (submit, order stamp), merged at
 * walk time. Entries are removed lazily (a job's current entry carries its stamp), and the pending
 * walk stops as soon as no remaining pending job could fit, so a tick costs about the number of
 * running jobs, not the length of the queue. A round that would see exactly what the last one saw
 * (no job came, went or changed queue, and the last round decided nothing) is skipped.
 *
 * The reference simulator, each second, first ends the jobs whose remaining work is zero and only
 * then steps the others' work, so it notices a finished job one second after its work ran out and
 * the job holds its GPUs for that second; --tiresias-finish-lag (1) reproduces it, and with it the
 * reference's Venus averages to the second. */
#include "deepshare/policy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIRESIAS_PERIOD 60
#define TIRESIAS_THRESHOLD 18000.0
#define HIST_MAX 64 /* GPU counts above this share one histogram bucket */

typedef struct entry {
    int64_t submit, seq;  /* sort key */
    int32_t job;
    uint32_t stamp;       /* live while it equals the job's stamp */
} entry_t;

typedef struct elist {
    entry_t *a;
    int32_t n, cap, live;
} elist_t;

typedef struct tpart {
    elist_t run[2], pend[2];          /* [level]: 0 high queue, 1 low queue */
    int64_t hist[HIST_MAX + 2];       /* pending jobs by GPU count */
    int changed;                      /* jobs came, went or moved since the last round */
    int64_t next_cross;               /* earliest time a running job leaves the high queue */
} tpart_t;

typedef struct tiresias_config {
    int32_t finish_lag;  /* seconds a job holds its GPUs after its work is done */
} tiresias_config_t;

typedef struct tiresias {
    tiresias_config_t cfg;
    tpart_t *parts;
    int32_t nparts;
    uint32_t *stamp;
    uint8_t *where;      /* list holding a job's live entry: 0 none, 1 + 2 x pending + level */
    int64_t *run_seq;    /* order jobs entered the running list (ties among running jobs) */
    int64_t seq;
    int32_t *prerun, *victims;
    int64_t npending_total;
} tiresias_t;

static int key_less(const entry_t *x, int64_t submit, int64_t seq)
{
    return x->submit < submit || (x->submit == submit && x->seq < seq);
}

static void compact(elist_t *l, const uint32_t *stamp)
{
    int32_t w = 0;
    for (int32_t i = 0; i < l->n; i++)
        if (l->a[i].stamp == stamp[l->a[i].job]) l->a[w++] = l->a[i];
    l->n = w;
    l->live = w;
}

/* Inserts in key order; arrivals come in submit order, so this is almost always an append. */
static void insert(elist_t *l, const uint32_t *stamp, int64_t submit, int64_t seq, int32_t job)
{
    if (l->n - l->live > 64 && l->n - l->live > l->live) compact(l, stamp);
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 64;
        l->a = ds_xrealloc(l->a, (size_t)l->cap * sizeof *l->a);
    }
    int32_t lo = l->n;
    if (lo > 0 && !key_less(&l->a[lo - 1], submit, seq)) {
        int32_t a = 0, b = l->n; /* first entry not less than the key */
        while (a < b) {
            int32_t m = a + (b - a) / 2;
            if (key_less(&l->a[m], submit, seq)) a = m + 1;
            else b = m;
        }
        lo = a;
        memmove(&l->a[lo + 1], &l->a[lo], (size_t)(l->n - lo) * sizeof *l->a);
    }
    l->a[lo] = (entry_t){submit, seq, job, stamp[job]};
    l->n++;
    l->live++;
}

static elist_t *list_of(tpart_t *tp, int w) { return w >= 3 ? &tp->pend[w - 3] : &tp->run[w - 1]; }

/* Ends a job's live entry (its list keeps a dead one until compaction). */
static void drop(tiresias_t *s, tpart_t *tp, int32_t j)
{
    s->stamp[j]++;
    if (s->where[j]) list_of(tp, s->where[j])->live--;
    s->where[j] = 0;
}

/* Gives a job a live entry in a list: w = 1 + level (running) or 3 + level (pending). */
static void put(tiresias_t *s, tpart_t *tp, int32_t j, int w, int64_t submit, int64_t seq)
{
    drop(s, tp, j);
    insert(list_of(tp, w), s->stamp, submit, seq, j);
    s->where[j] = (uint8_t)w;
}

static int hbucket(int32_t g) { return g > HIST_MAX ? HIST_MAX + 1 : g; }

static double attained(const ds_engine_t *e, int32_t j, int64_t now)
{
    return (double)e->trace->jobs[j].gpus * (double)ds_engine_elapsed(e, j, now);
}

/* First time a running job's attained service exceeds the threshold: gpus x elapsed > 18,000. */
static int64_t cross_time(const ds_engine_t *e, int32_t j)
{
    const ds_jstate_t *js = &e->js[j];
    int64_t need = (int64_t)(TIRESIAS_THRESHOLD / e->trace->jobs[j].gpus) + 1; /* elapsed seconds */
    while ((double)e->trace->jobs[j].gpus * (double)(need - 1) > TIRESIAS_THRESHOLD) need--;
    return js->last_start + (need - js->run_time);
}

static void *tiresias_config_new(void)
{
    tiresias_config_t *c = ds_xcalloc(1, sizeof *c);
    c->finish_lag = 1;
    return c;
}

static void tiresias_config_free(void *config) { free(config); }

static int tiresias_config_set(void *config, const char *key, const char *value, ds_error_t *err)
{
    tiresias_config_t *c = config;
    if (strcmp(key, "tiresias-finish-lag")) return DS_ENOTFOUND;
    char *end;
    long v = strtol(value, &end, 10);
    if (!*value || *end || v < 0 || v > 255) {
        ds_error_set(err, NULL, 0, NULL, "option --%s: '%s' is not an integer in [0, 255]", key, value);
        return DS_EINVAL;
    }
    c->finish_lag = (int32_t)v;
    return DS_OK;
}

static void tiresias_config_help(FILE *f)
{
    fprintf(f, "  --tiresias-finish-lag S      seconds a job keeps its GPUs after its work is done (1: the\n"
               "                               reference notices a finished job one second late)\n");
}

static int tiresias_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    (void)err;
    tiresias_t *s = ds_xcalloc(1, sizeof *s);
    s->cfg.finish_lag = 1;
    if (config) s->cfg = *(const tiresias_config_t *)config;
    int32_t nj = e->trace->njobs ? e->trace->njobs : 1;
    s->nparts = e->nparts;
    s->parts = ds_xcalloc((size_t)(e->nparts ? e->nparts : 1), sizeof *s->parts);
    s->stamp = ds_xcalloc((size_t)nj, sizeof *s->stamp);
    s->where = ds_xcalloc((size_t)nj, 1);
    s->run_seq = ds_xcalloc((size_t)nj, sizeof *s->run_seq);
    s->prerun = ds_xmalloc((size_t)nj * sizeof *s->prerun);
    s->victims = ds_xmalloc((size_t)nj * sizeof *s->victims);
    *state = s;
    return DS_OK;
}

static void tiresias_fini(void *state)
{
    tiresias_t *s = state;
    for (int32_t p = 0; p < s->nparts; p++)
        for (int l = 0; l < 2; l++) free(s->parts[p].run[l].a), free(s->parts[p].pend[l].a);
    free(s->parts);
    free(s->stamp);
    free(s->where);
    free(s->run_seq);
    free(s->prerun);
    free(s->victims);
    free(s);
}

static void tiresias_enqueue(ds_engine_t *e, void *state, int32_t job, int64_t now)
{
    tiresias_t *s = state;
    s->npending_total++;
    tpart_t *tp = &s->parts[e->js[job].part];
    int level = attained(e, job, now) > TIRESIAS_THRESHOLD; /* fixed while it waits */
    put(s, tp, job, 3 + level, e->trace->jobs[job].submit, e->js[job].arrival_seq);
    tp->changed = 1;
    tp->hist[hbucket(e->trace->jobs[job].gpus)]++;
}

static void tiresias_withdraw(ds_engine_t *e, void *state, int32_t job, int64_t now)
{
    (void)now;
    tiresias_t *s = state;
    tpart_t *tp = &s->parts[e->js[job].part];
    drop(s, tp, job);
    tp->hist[hbucket(e->trace->jobs[job].gpus)]--;
    s->npending_total--;
    tp->changed = 1;
}

static void tiresias_on_finish(ds_engine_t *e, void *state, int32_t job, int64_t now)
{
    (void)now;
    tiresias_t *s = state;
    tpart_t *tp = &s->parts[e->js[job].part];
    drop(s, tp, job);
    tp->changed = 1;
}

/* Pending jobs with at most q GPUs, from the histogram of those not yet walked. */
static int any_fits(const int64_t *h, int64_t q)
{
    for (int64_t g = 1; g <= q && g <= HIST_MAX; g++)
        if (h[g]) return 1;
    return q > HIST_MAX && h[HIST_MAX + 1] > 0;
}

static void tiresias_schedule(ds_engine_t *e, void *state, int32_t part, int64_t now, int timer)
{
    tiresias_t *s = state;
    if (!timer || now % TIRESIAS_PERIOD != 0 || e->parts[part].npending == 0) return;
    tpart_t *tp = &s->parts[part];
    if (!tp->changed && now < tp->next_cross) return; /* the same walk as last round: nothing to do */
    /* Running jobs whose attained service passed the threshold move to the low queue. */
    elist_t *r0 = &tp->run[0];
    tp->next_cross = DS_TIME_NEVER;
    for (int32_t i = 0; i < r0->n; i++) {
        entry_t *x = &r0->a[i];
        if (x->stamp != s->stamp[x->job]) continue;
        if (attained(e, x->job, now) > TIRESIAS_THRESHOLD) {
            entry_t moved = *x;
            put(s, tp, moved.job, 2, moved.submit, moved.seq);
        } else {
            tp->next_cross = DS_MIN(tp->next_cross, cross_time(e, x->job));
        }
    }
    int64_t rest[HIST_MAX + 2];
    memcpy(rest, tp->hist, sizeof rest);
    int64_t quota = e->parts[part].gpus_total, fit_quota = -1;
    int fits = 1;
    int32_t npre = 0, nvic = 0;
    int held = 0;
    for (int l = 0; l < 2; l++) {
        elist_t *rl = &tp->run[l], *pl = &tp->pend[l];
        int32_t i = 0, k = 0;
        for (;;) {
            while (i < rl->n && rl->a[i].stamp != s->stamp[rl->a[i].job]) i++;
            int pend_open = quota > 0 && fits;
            if (pend_open)
                while (k < pl->n && pl->a[k].stamp != s->stamp[pl->a[k].job]) k++;
            int has_r = i < rl->n, has_p = pend_open && k < pl->n;
            if (!has_r && !has_p) break;
            /* Merge on submit time; the reference walks running jobs before pending ones on ties. */
            if (has_r && (!has_p || rl->a[i].submit <= pl->a[k].submit)) {
                int32_t j = rl->a[i++].job, g = e->trace->jobs[j].gpus;
                if (g <= quota) quota -= g;
                else s->victims[nvic++] = j;
                continue;
            }
            int32_t j = pl->a[k++].job, g = e->trace->jobs[j].gpus;
            rest[hbucket(g)]--;
            if (e->js[j].held) {
                held = 1; /* the driver cannot start it yet: it claims no quota; walked again next round */
                continue;
            }
            if (g <= quota) {
                quota -= g;
                s->prerun[npre++] = j;
            }
            if (quota != fit_quota) {
                fit_quota = quota;
                fits = any_fits(rest, quota);
            }
        }
    }
    tp->changed = nvic > 0 || held;
    for (int32_t i = 0; i < nvic; i++) ds_engine_preempt(e, s->victims[i], now, 0);
    for (int32_t i = 0; i < npre; i++) {
        int32_t j = s->prerun[i];
        if (ds_engine_place(e, j, now)) {
            e->js[j].finish_lag = (uint8_t)s->cfg.finish_lag;
            tp->changed = 1;
            tp->hist[hbucket(e->trace->jobs[j].gpus)]--;
            int level = attained(e, j, now) > TIRESIAS_THRESHOLD;
            s->run_seq[j] = ++s->seq;
            put(s, tp, j, 1 + level, e->trace->jobs[j].submit, s->run_seq[j]);
            if (!level) tp->next_cross = DS_MIN(tp->next_cross, cross_time(e, j));
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

/* GPUs that the round's walk grants before job j: the live running and waiting (not held) jobs of higher
 * queues, and of j's queue those submitted earlier (running jobs first on a tie, as the walk merges). */
static int64_t gpus_ahead(const tiresias_t *s, const ds_engine_t *e, int32_t j, int level)
{
    const tpart_t *tp = &s->parts[e->js[j].part];
    int64_t sum = 0, sub = e->trace->jobs[j].submit, seq = e->js[j].arrival_seq;
    for (int l = 0; l <= level; l++)
        for (int pend = 0; pend < 2; pend++) {
            const elist_t *L = pend ? &tp->pend[l] : &tp->run[l];
            for (int32_t i = 0; i < L->n; i++) {
                const entry_t *x = &L->a[i];
                if (x->stamp != s->stamp[x->job] || x->job == j || e->js[x->job].held) continue;
                if (l == level && !(x->submit < sub || (x->submit == sub && (!pend || x->seq < seq)))) continue;
                sum += e->trace->jobs[x->job].gpus;
            }
        }
    return sum;
}

static void tiresias_explain(const ds_engine_t *e, const void *state, int32_t j, int64_t now, ds_buf_t *out)
{
    const tiresias_t *s = state;
    const ds_jstate_t *js = &e->js[j];
    if (js->status != DS_JS_PENDING && js->status != DS_JS_RUNNING) return;
    double a = attained(e, j, now);
    int level = s->where[j] ? (s->where[j] - 1) % 2 : a > TIRESIAS_THRESHOLD;
    ds_bprintf(out, "  order: least attained service in two queues: %.0f GPU-s attained, so the %s queue (split at %.0f "
               "GPU-s); the high queue first, each in submit order, every %d s\n", a, level ? "low" : "high",
               TIRESIAS_THRESHOLD, TIRESIAS_PERIOD);
    int64_t ahead = gpus_ahead(s, e, j, level), cap = e->parts[js->part].gpus_total;
    int32_t g = e->trace->jobs[j].gpus;
    int64_t next = tiresias_next_timer(e, s, now);
    if (js->status == DS_JS_RUNNING) {
        ds_bprintf(out, "  preemption: jobs ahead of it in the walk hold or ask for %lld of %lld GPUs; it is stopped at a "
                   "round when they need its %d\n", (long long)ahead, (long long)cap, g);
        return;
    }
    if (next != DS_TIME_NEVER)
        ds_bprintf(out, "  round: the next at t=%lld\n", (long long)next);
    ds_bprintf(out, "  capacity: jobs ahead of it in the walk hold or ask for %lld of %lld GPUs; it is granted when its %d "
               "fit beside them%s\n", (long long)ahead, (long long)cap, g,
               ahead + g <= cap ? " (they do: it starts at the next round where GPUs for it are free)" : "");
    ds_explain_fit(e, j, out);
}

const ds_policy_ops_t ds_policy_tiresias = {
    .name = "tiresias",
    .summary = "discretized 2D-LAS: two queues split at 18,000 GPU-s, 60 s rounds, preemptive",
    .props = DS_POLICY_PREEMPTIVE | DS_POLICY_EXACT_HOLD | DS_POLICY_TYPED,
    .init = tiresias_init,
    .fini = tiresias_fini,
    .enqueue = tiresias_enqueue,
    .withdraw = tiresias_withdraw,
    .on_finish = tiresias_on_finish,
    .schedule = tiresias_schedule,
    .next_timer = tiresias_next_timer,
    .config_new = tiresias_config_new,
    .config_free = tiresias_config_free,
    .config_set = tiresias_config_set,
    .config_help = tiresias_config_help,
    .explain = tiresias_explain,
};
