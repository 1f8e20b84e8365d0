/* replay.c: the 'replay' policy (include/deepshare/replay.h): replays an observed schedule. A job starts
 * when its next run started on the live cluster, on the node it ran on when that node has the GPUs free
 * (else wherever the engine finds them: rounding to whole trace seconds can make a run start a second
 * before the one it followed on that node ended), with the class it ran as, and is preempted after as
 * many seconds as that run lasted, unless it is the run that completed it: that one ends by its work. A
 * run that cannot start at its time (no GPUs yet) starts at the first pass that finds them and keeps its
 * length, so every job does exactly its observed work. */
#include "deepshare/replay.h"

#include <stdlib.h>
#include <string.h>

typedef struct rstate {
    const ds_script_t *sc;
    int64_t *cur;      /* per job: index of its current (running) or next (pending) spell */
    int64_t *stop_at;  /* per running job: when its current run ends (DS_TIME_NEVER for the last run) */
    int32_t *pend, npend, *pend_pos;  /* pending jobs (unordered), position of each, -1 when not pending */
    int32_t *run, nrun, *run_pos;     /* running jobs (unordered), position of each, -1 when not running */
    int32_t *scratch;
    struct due { int64_t start; int32_t job; } *due;
    int32_t *gpus;     /* placement buffer */
    int64_t starts, stops, fallbacks; /* counters for stats */
} rstate_t;

static void list_add(int32_t *list, int32_t *n, int32_t *pos, int32_t j)
{
    if (pos[j] >= 0) return;
    pos[j] = *n;
    list[(*n)++] = j;
}

static void list_del(int32_t *list, int32_t *n, int32_t *pos, int32_t j)
{
    int32_t i = pos[j];
    if (i < 0) return;
    int32_t last = list[--*n];
    list[i] = last;
    pos[last] = i;
    pos[j] = -1;
}

static int replay_init(ds_engine_t *e, const void *config, void **state, ds_error_t *err)
{
    const ds_script_t *sc = config;
    const ds_trace_t *t = e->trace;
    if (!sc || sc->njobs != t->njobs || !sc->first || (t->njobs && !sc->spells)) {
        ds_error_set(err, NULL, 0, "replay", "the replay policy needs a schedule with one entry per job of the trace");
        return DS_EINVAL;
    }
    for (int32_t j = 0; j < t->njobs; j++) {
        int64_t a = sc->first[j], b = sc->first[j + 1];
        if (b <= a) {
            ds_error_set(err, t->source, t->jobs[j].line, "replay", "job %lld has no run in the schedule", (long long)t->jobs[j].id);
            return DS_EINVAL;
        }
        int64_t work = 0;
        for (int64_t s = a; s < b; s++) {
            const ds_spell_t *x = &sc->spells[s];
            if (x->end < x->start || x->last != (s == b - 1) || (s > a && x->start < sc->spells[s - 1].end) ||
                x->start < t->jobs[j].submit || (x->klass != DS_CLASS_G && x->klass != DS_CLASS_BE)) {
                ds_error_set(err, t->source, t->jobs[j].line, "replay",
                             "job %lld: run %lld is not a valid run of the schedule (runs must be in time order, after the "
                             "submit, the last one alone marked last, class G or BE)",
                             (long long)t->jobs[j].id, (long long)(s - a + 1));
                return DS_EINVAL;
            }
            work += x->end - x->start;
        }
        if (work != t->jobs[j].duration) {
            ds_error_set(err, t->source, t->jobs[j].line, "replay",
                         "job %lld: its duration %lld is not the %lld s its runs last", (long long)t->jobs[j].id,
                         (long long)t->jobs[j].duration, (long long)work);
            return DS_EINVAL;
        }
    }
    if (e->cfg.restart_small || e->cfg.restart_large) {
        ds_error_set(err, NULL, 0, "replay", "the replay policy needs restart overheads of 0 (the runs include them)");
        return DS_EINVAL;
    }
    rstate_t *s = ds_xcalloc(1, sizeof *s);
    int32_t n = t->njobs, maxg = 1;
    for (int32_t j = 0; j < n; j++) maxg = DS_MAX(maxg, t->jobs[j].gpus);
    s->sc = sc;
    s->cur = ds_xmalloc((size_t)(n ? n : 1) * sizeof *s->cur);
    s->stop_at = ds_xmalloc((size_t)(n ? n : 1) * sizeof *s->stop_at);
    s->pend = ds_xmalloc((size_t)(n ? n : 1) * sizeof *s->pend);
    s->pend_pos = ds_xmalloc((size_t)(n ? n : 1) * sizeof *s->pend_pos);
    s->run = ds_xmalloc((size_t)(n ? n : 1) * sizeof *s->run);
    s->run_pos = ds_xmalloc((size_t)(n ? n : 1) * sizeof *s->run_pos);
    s->scratch = ds_xmalloc((size_t)(n ? n : 1) * sizeof *s->scratch);
    s->due = ds_xmalloc((size_t)(n ? n : 1) * sizeof *s->due);
    s->gpus = ds_xmalloc((size_t)maxg * sizeof *s->gpus);
    for (int32_t j = 0; j < n; j++) {
        s->cur[j] = sc->first[j];
        s->stop_at[j] = DS_TIME_NEVER;
        s->pend_pos[j] = s->run_pos[j] = -1;
    }
    *state = s;
    return DS_OK;
}

static void replay_fini(void *state)
{
    rstate_t *s = state;
    if (!s) return;
    free(s->cur);
    free(s->stop_at);
    free(s->pend);
    free(s->pend_pos);
    free(s->run);
    free(s->run_pos);
    free(s->scratch);
    free(s->due);
    free(s->gpus);
    free(s);
}

static void replay_enqueue(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    rstate_t *s = state;
    (void)e, (void)now;
    list_del(s->run, &s->nrun, s->run_pos, j);
    s->stop_at[j] = DS_TIME_NEVER;
    list_add(s->pend, &s->npend, s->pend_pos, j);
}

static void replay_withdraw(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    rstate_t *s = state;
    (void)e, (void)now;
    list_del(s->pend, &s->npend, s->pend_pos, j);
}

static void replay_on_finish(ds_engine_t *e, void *state, int32_t j, int64_t now)
{
    rstate_t *s = state;
    (void)e, (void)now;
    list_del(s->run, &s->nrun, s->run_pos, j);
    list_del(s->pend, &s->npend, s->pend_pos, j);
}

/* GPUs for job j: on node `node` when it has enough empty GPUs, else anywhere the engine finds them. */
static int find_gpus(const ds_engine_t *e, rstate_t *s, int32_t j, int32_t node, int32_t part)
{
    int32_t need = e->trace->jobs[j].gpus;
    if (node >= 0 && node < e->nnodes && need <= e->nodes[node].ngpus && ds_engine_node_fits(e, node, j) &&
        ds_engine_type_ok(e, j, e->nodes[node].gtype)) {
        const ds_node_t *nd = &e->nodes[node];
        int32_t got = 0;
        for (int32_t g = nd->gpu0; g < nd->gpu0 + nd->ngpus && got < need; g++)
            if (e->gpus[g].nres == 0) s->gpus[got++] = g;
        if (got == need) return 1;
    }
    if (ds_engine_find_free(e, j, part, s->gpus)) {
        if (node >= 0) s->fallbacks++;
        return 1;
    }
    return 0;
}

static int cmp_due(const void *a, const void *b)
{
    const struct due *x = a, *y = b;
    if (x->start != y->start) return x->start < y->start ? -1 : 1;
    return (x->job > y->job) - (x->job < y->job);
}

static void replay_schedule(ds_engine_t *e, void *state, int32_t part, int64_t now, int timer)
{
    rstate_t *s = state;
    const ds_script_t *sc = s->sc;
    (void)timer;
    /* runs that ended on the cluster by a preemption end here too (first: their GPUs may be what the
     * starts below need) */
    int32_t m = 0;
    for (int32_t i = 0; i < s->nrun; i++) {
        int32_t j = s->run[i];
        if (e->js[j].part == part && s->stop_at[j] <= now) s->scratch[m++] = j;
    }
    for (int32_t i = 0; i < m; i++) {
        int32_t j = s->scratch[i];
        s->cur[j]++;
        s->stops++;
        ds_engine_preempt(e, j, now, 0); /* re-enters replay_enqueue */
    }
    /* runs due to start, in the order they started on the cluster */
    m = 0;
    for (int32_t i = 0; i < s->npend; i++) {
        int32_t j = s->pend[i];
        if (e->js[j].part == part && sc->spells[s->cur[j]].start <= now)
            s->due[m++] = (struct due){sc->spells[s->cur[j]].start, j};
    }
    qsort(s->due, (size_t)m, sizeof *s->due, cmp_due);
    for (int32_t i = 0; i < m; i++) {
        int32_t j = s->due[i].job;
        const ds_spell_t *x = &sc->spells[s->cur[j]];
        if (!find_gpus(e, s, j, x->node, part)) continue;
        ds_engine_set_class(e, j, x->klass);
        ds_engine_start(e, j, s->gpus, now);
        list_del(s->pend, &s->npend, s->pend_pos, j);
        list_add(s->run, &s->nrun, s->run_pos, j);
        s->stop_at[j] = x->last ? DS_TIME_NEVER : now + (x->end - x->start);
        s->starts++;
    }
}

static int64_t replay_next_timer(const ds_engine_t *e, const void *state, int64_t now)
{
    const rstate_t *s = state;
    (void)e;
    int64_t t = DS_TIME_NEVER;
    for (int32_t i = 0; i < s->npend; i++) {
        int64_t x = s->sc->spells[s->cur[s->pend[i]]].start;
        if (x > now && x < t) t = x;
    }
    for (int32_t i = 0; i < s->nrun; i++) {
        int64_t x = s->stop_at[s->run[i]];
        if (x > now && x < t) t = x;
    }
    return t;
}

static int replay_stats(const ds_engine_t *e, const void *state, ds_policy_stat_t *out, int max)
{
    const rstate_t *s = state;
    (void)e;
    const struct { const char *name; int64_t v; } st[] = {
        {"replay_starts", s->starts}, {"replay_stops", s->stops}, {"replay_node_fallbacks", s->fallbacks}};
    int n = 0;
    for (int i = 0; i < 3 && n < max; i++, n++) {
        snprintf(out[n].name, sizeof out[n].name, "%s", st[i].name);
        out[n].value = (double)st[i].v;
    }
    return n;
}

static void replay_explain(const ds_engine_t *e, const void *state, int32_t j, int64_t now, ds_buf_t *out)
{
    (void)now;
    const rstate_t *s = state;
    const ds_jstate_t *js = &e->js[j];
    int64_t k = s->cur[j], a = s->sc->first[j], b = s->sc->first[j + 1];
    if (k < a || k >= b) return;
    const ds_spell_t *x = &s->sc->spells[k];
    if (js->status == DS_JS_RUNNING)
        ds_bprintf(out, "  replay: run %lld of %lld of the observed schedule, as %s%s\n", (long long)(k - a + 1),
                   (long long)(b - a), x->klass == DS_CLASS_BE ? "BE" : "G",
                   x->last ? ", the run that completes it" : "; stopped when that run stopped");
    else if (js->status == DS_JS_PENDING) {
        ds_bprintf(out, "  replay: run %lld of %lld of the observed schedule starts at t=%lld, as it did\n",
                   (long long)(k - a + 1), (long long)(b - a), (long long)x->start);
        ds_explain_fit(e, j, out);
    }
}

const ds_policy_ops_t ds_policy_replay = {
    .name = "replay",
    .summary = "replays an observed schedule (a live run): starts, preemptions, nodes and classes as observed",
    .props = DS_POLICY_PREEMPTIVE | DS_POLICY_CLASSES | DS_POLICY_TYPED,
    .init = replay_init,
    .fini = replay_fini,
    .enqueue = replay_enqueue,
    .withdraw = replay_withdraw,
    .on_finish = replay_on_finish,
    .schedule = replay_schedule,
    .next_timer = replay_next_timer,
    .stats = replay_stats,
    .explain = replay_explain,
};
