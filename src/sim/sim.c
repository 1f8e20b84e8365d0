/* sim.c: the event-driven simulator: arrivals, completions and policy timers drive the engine; the
 * execution model turns residency into progress rates; metrics integrate between events. */
#include "deepshare/sim.h"
#include "deepshare/qad.h"
#include "restarts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void ds_sim_config_default(ds_sim_config_t *c)
{
    memset(c, 0, sizeof *c);
    ds_engine_config_default(&c->engine);
    c->window_start = c->window_end = -1;
    c->cycle = 60;
    c->qad_lambda = 0.3;
    c->qad_theta = 0.95;
    c->noise_sigma = 0.05;
    c->seed = 1;
    c->keep_series = 1;
    c->grace_save = -1;
}

/* How long a victim signalled at a grace holds its GPUs: its save when it finishes in the grace, else the
 * whole grace. */
static int64_t grace_hold_for(const ds_sim_config_t *c)
{
    return c->grace_save >= 0 && c->grace_save <= c->grace ? c->grace_save : c->grace;
}

typedef struct ev {
    int64_t t;
    int32_t job;
    uint32_t ver;
} ev_t;

typedef struct sim {
    const ds_trace_t *trace;
    const ds_sim_config_t *cfg;
    ds_engine_t *e;
    double *left, *rate;
    int64_t *tupd;
    int64_t *tstart;      /* when its current run started */
    double *left_start;   /* its work left then: what it has done since is what a rollback can lose */
    uint32_t *ver;
    ev_t *heap;
    int64_t nheap, capheap;
    uint64_t rng[2];
    double (*qad)(const ds_engine_t *, int32_t, ds_qad_kind_t); /* the engine's QAD, chosen once for its types */
    int64_t capev;
    /* graceful preemption (cfg->grace > 0): a victim runs on for the grace on its GPUs */
    int32_t *jg;          /* GPUs of each job's current (or last) run: jg[e->jgpu_off[j] ..] */
    int64_t *gpu_until;   /* per engine GPU: a victim holds it until then */
    int64_t *grace_until; /* per job: in its grace until then (held pending), 0 none */
    int32_t *graced;      /* the jobs in their grace */
    int32_t ngraced;
    uint8_t *undone;      /* started in this round onto a held GPU (or while in its grace): taken back */
    uint8_t *fresh;       /* started earlier in this round's decisions (take_back) */
    int32_t *taken;       /* the jobs taken back in this pass, held until it ends */
    int32_t ntaken;
    sim_restarts_t *restarts; /* the live cluster's restart rules (cfg->restart_pinned, requeue_settle), or NULL */
} sim_t;

/* Appends one event to the result's log (keep_events). */
static void log_event(sim_t *s, ds_sim_result_t *res, int64_t t, int32_t type, int32_t job, int32_t other, int32_t reason)
{
    if (res->nevents == s->capev) {
        s->capev = s->capev ? s->capev * 2 : 4096;
        res->events = ds_xrealloc(res->events, (size_t)s->capev * sizeof *res->events);
    }
    res->events[res->nevents++] = (ds_sim_event_t){t, type, job, other, reason, ds_engine_job(s->e, job)->klass};
}

static int ev_less(const ev_t *a, const ev_t *b)
{
    if (a->t != b->t) return a->t < b->t;
    return a->job < b->job;
}

static void heap_push(sim_t *s, ev_t v)
{
    if (s->nheap == s->capheap) {
        s->capheap = s->capheap ? s->capheap * 2 : 1024;
        s->heap = ds_xrealloc(s->heap, (size_t)s->capheap * sizeof *s->heap);
    }
    int64_t i = s->nheap++;
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (!ev_less(&v, &s->heap[p])) break;
        s->heap[i] = s->heap[p];
        i = p;
    }
    s->heap[i] = v;
}

static ev_t heap_pop(sim_t *s)
{
    ev_t top = s->heap[0], v = s->heap[--s->nheap];
    int64_t i = 0;
    for (;;) {
        int64_t l = 2 * i + 1, r = l + 1, m = i;
        const ev_t *best = &v;
        if (l < s->nheap && ev_less(&s->heap[l], best)) { m = l; best = &s->heap[l]; }
        if (r < s->nheap && ev_less(&s->heap[r], best)) { m = r; }
        if (m == i) break;
        s->heap[i] = s->heap[m];
        i = m;
    }
    if (s->nheap) s->heap[i] = v;
    return top;
}

/* Drops completion events made stale by a rate change. */
static int64_t heap_next_time(sim_t *s)
{
    while (s->nheap && s->heap[0].ver != s->ver[s->heap[0].job]) heap_pop(s);
    return s->nheap ? s->heap[0].t : DS_TIME_NEVER;
}

static uint64_t rng_next(sim_t *s)
{
    uint64_t s0 = s->rng[0], s1 = s->rng[1], r = s0 + s1;
    s1 ^= s0;
    s->rng[0] = ((s0 << 55) | (s0 >> 9)) ^ s1 ^ (s1 << 14);
    s->rng[1] = (s1 << 36) | (s1 >> 28);
    return r;
}

static double rng_normal(sim_t *s)
{
    double u1 = ((double)(rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
    double u2 = ((double)(rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* A job's speed on the GPU type it runs on, relative to its duration's reference type (typed clusters). */
static double type_rate(const sim_t *s, int32_t j)
{
    if (!s->cfg->speeds || s->e->ntypes < 2) return 1.0;
    return ds_speeds_rate(s->cfg->speeds, s->trace, j, ds_engine_job_type(s->e, j));
}

/* Typed clusters: the type's speed times the lowest retention over its GPUs, as measured on that type. */
static double true_rate_typed(const sim_t *s, int32_t j)
{
    const ds_engine_t *e = s->e;
    double base = type_rate(s, j);
    if (!ds_engine_job(e, j)->shared) return base;
    int32_t ty = ds_engine_job_type(e, j);
    double r = INFINITY;
    const int32_t *g = ds_engine_job_gpus(e, j);
    for (int32_t i = 0; i < ds_engine_job(e, j)->nplaced; i++) {
        const ds_gpu_t *gp = ds_engine_gpu(e, g[i]);
        double gr = gp->nres > 1 ? INFINITY : 1.0;
        for (int32_t k = 0; k < gp->nres; k++) {
            if (gp->res[k] == j) continue;
            double x = s->cfg->coloc ? ds_coloc_rho_on(s->cfg->coloc, j, gp->res[k], ty) : 1.0;
            if (x < gr) gr = x;
        }
        if (gr < r) r = gr;
    }
    if (!(r < INFINITY)) r = 1.0;
    r *= base;
    return r > 1e-6 ? r : 1e-6;
}

/* Execution model: a job runs at the lowest retention over its GPUs (1 on a GPU it has alone). A
 * retention above 1 (the profile has pairs up to 1.5) speeds the job up, as in the reference. */
static double true_rate(const sim_t *s, int32_t j)
{
    const ds_engine_t *e = s->e;
    if (e->ntypes > 1) return true_rate_typed(s, j);
    if (!ds_engine_job(e, j)->shared) return 1.0;
    double r = INFINITY;
    const int32_t *g = ds_engine_job_gpus(e, j);
    for (int32_t i = 0; i < ds_engine_job(e, j)->nplaced; i++) {
        const ds_gpu_t *gp = ds_engine_gpu(e, g[i]);
        double gr = gp->nres > 1 ? INFINITY : 1.0;
        for (int32_t k = 0; k < gp->nres; k++) {
            if (gp->res[k] == j) continue;
            double x = s->cfg->coloc ? ds_coloc_rho(s->cfg->coloc, j, gp->res[k]) : 1.0;
            if (x < gr) gr = x;
        }
        if (gr < r) r = gr;
    }
    if (!(r < INFINITY)) r = 1.0;
    return r > 1e-6 ? r : 1e-6;
}

static void advance(sim_t *s, int32_t j, int64_t now)
{
    s->left[j] -= s->rate[j] * (double)(now - s->tupd[j]);
    if (s->left[j] < 0) s->left[j] = 0;
    s->tupd[j] = now;
}

static void schedule_end(sim_t *s, int32_t j)
{
    s->ver[j]++;
    double dt = s->left[j] / s->rate[j];
    int64_t d = (int64_t)ceil(dt - 1e-9);
    heap_push(s, (ev_t){s->tupd[j] + (d > 0 ? d : 0) + ds_engine_job(s->e, j)->finish_lag, j, s->ver[j]});
}

static double hook_observe(void *ctx, int32_t j, int64_t now)
{
    sim_t *s = ctx;
    (void)now;
    /* the rate the execution model runs j at, kept current after every pass (apply); a job that keeps
     * its packed rate alone (Lucid's reference) is never sampled: only shared jobs are */
    double r = s->rate[j];
    return r * exp(s->cfg->noise_sigma * rng_normal(s));
}

/* The same on a typed cluster: the retention beside the partner, not the GPU type's own speed. */
static double hook_observe_typed(void *ctx, int32_t j, int64_t now)
{
    sim_t *s = ctx;
    (void)now;
    double r = s->rate[j] / type_rate(s, j);
    return r * exp(s->cfg->noise_sigma * rng_normal(s));
}

/* Graceful preemption, as deepshared does it (src/daemon/grace.c): a victim in its grace is held out of
 * the policy's pass, and a start onto a GPU a victim still holds is taken back (the job held for the rest
 * of the pass, the policy run again on what is left). Holds the victims whose grace lasts past t, lets go
 * of the others; returns the earliest end of a grace still running (DS_TIME_NEVER when none). */
static int64_t grace_hold(sim_t *s, int64_t t)
{
    int64_t next = DS_TIME_NEVER;
    for (int32_t i = 0; i < s->ngraced;) {
        int32_t j = s->graced[i];
        if (s->grace_until[j] > t) {
            if (ds_engine_job(s->e, j)->status == DS_JS_PENDING) ds_engine_hold(s->e, j, 1);
            next = DS_MIN(next, s->grace_until[j]);
            i++;
            continue;
        }
        s->grace_until[j] = 0;
        if (ds_engine_job(s->e, j)->status == DS_JS_PENDING) ds_engine_hold(s->e, j, 0);
        s->graced[i] = s->graced[--s->ngraced];
    }
    return next;
}

/* Takes back this round's starts onto GPUs a victim holds in its grace, and of victims in theirs; returns
 * how many. */
static int32_t take_back(sim_t *s, int64_t t)
{
    ds_engine_t *e = s->e;
    int32_t nd, n = 0;
    const ds_decision_t *dec = ds_engine_decisions(e, &nd);
    /* this round's victims enter their grace (a run begun in this pass leaves at once, as apply has it) */
    for (int32_t i = 0; i < nd; i++) {
        int32_t j = dec[i].job;
        if (dec[i].type == DS_DEC_START) s->fresh[j] = 1;
        if (dec[i].type != DS_DEC_PREEMPT || s->fresh[j] || s->tstart[j] >= t) continue;
        int64_t end = t + grace_hold_for(s->cfg);
        for (int32_t k = 0; k < s->trace->jobs[j].gpus; k++) {
            int32_t g = s->jg[e->jgpu_off[j] + k];
            s->gpu_until[g] = DS_MAX(s->gpu_until[g], end);
        }
        if (!s->grace_until[j]) s->graced[s->ngraced++] = j;
        s->grace_until[j] = end;
    }
    for (int32_t i = 0; i < nd; i++) s->fresh[dec[i].job] = 0;
    for (int32_t i = 0; i < nd; i++) {
        int32_t j = dec[i].job;
        if (dec[i].type != DS_DEC_START || ds_engine_job(e, j)->status != DS_JS_RUNNING || s->undone[j]) continue;
        const int32_t *g = ds_engine_job_gpus(e, j);
        int busy = s->grace_until[j] > t; /* preempted earlier in this pass: in its grace already */
        for (int32_t k = 0; k < ds_engine_job(e, j)->nplaced && !busy; k++) busy = s->gpu_until[g[k]] > t;
        if (!busy) continue;
        ds_engine_cancel_start(e, j, t);
        ds_engine_hold(e, j, 1);
        s->undone[j] = 1;
        s->taken[s->ntaken++] = j;
        n++;
    }
    return n;
}

/* Applies the pass's decisions to the execution model. */
static void apply(sim_t *s, ds_sim_result_t *res, int64_t now)
{
    ds_engine_t *e = s->e;
    int32_t nd, nr;
    const ds_decision_t *dec = ds_engine_decisions(e, &nd);
    for (int32_t i = 0; i < nd; i++) {
        const ds_decision_t *d = &dec[i];
        int32_t j = d->job;
        /* a start the restart rules took back never ran */
        if (d->type == DS_DEC_START && s->restarts && sim_restarts_skipped(s->restarts, j)) continue;
        if (s->cfg->keep_events) log_event(s, res, d->time, d->type, j, d->other, d->reason);
        if (d->type == DS_DEC_START && s->undone && s->undone[j]) continue; /* taken back (take_back) */
        if (d->type == DS_DEC_START) {
            if (s->jg) {
                const int32_t *g = ds_engine_job_gpus(e, j);
                for (int32_t k = 0; k < ds_engine_job(e, j)->nplaced; k++) s->jg[e->jgpu_off[j] + k] = g[k];
            }
            s->tupd[j] = now;
            s->tstart[j] = now;
            s->left_start[j] = s->left[j];
            s->rate[j] = 1.0;
            if (res->gtype) res->gtype[j] = (int8_t)ds_engine_job_type(e, j);
            if (d->other >= 0) {
                res->colocated[j] = 1;
                res->colocated[d->other] = 1;
            }
        } else if (d->type == DS_DEC_PREEMPT) {
            /* With a grace the victim runs on, signalled, on its GPUs until `end` (no other job starts there,
             * take_back); a run that began in this very pass leaves at once. */
            int graced = s->cfg->grace > 0 && s->tstart[j] < now;
            int64_t end = graced ? now + grace_hold_for(s->cfg) : now; /* (take_back) */
            /* A victim that saves on the signal keeps its progress as of the signal and makes none while it
             * writes: its GPUs are held for the save, nothing is rolled back */
            int saves = graced && s->cfg->grace_save >= 0 && s->cfg->grace_save <= s->cfg->grace;
            advance(s, j, saves ? now : end);
            /* It resumes from its last checkpoint: with an interval c it checkpointed every c s of this run,
             * so the work of the last (run mod c) s is done again (pro rata: the run's rate may have varied);
             * with none known, progress is kept whole, as in the reference simulators. */
            int64_t c = ds_engine_ckpt_interval(e, j), run = end - s->tstart[j];
            double done = DS_MAX(0.0, s->left_start[j] - s->left[j]);
            double lost = c > 0 && run > 0 && !saves ? done * (double)(run % c) / (double)run : 0.0;
            int32_t oh = ds_engine_restart_overhead(e, j);
            if (s->left[j] <= 0) lost = 0, oh = 0; /* its work ended in the grace: nothing to do again */
            double g = (double)s->trace->jobs[j].gpus, held = saves ? (double)(end - now) : 0.0;
            s->left[j] += lost + oh;
            res->rollback_gpu_hours += lost * g / 3600.0;
            res->lost_gpu_hours += (lost + oh + held) * g / 3600.0;
            s->ver[j]++; /* cancels its completion */
        }
    }
    ds_engine_clear_decisions(e);
    const int32_t *changed = ds_engine_rate_changes(e, &nr);
    for (int32_t i = 0; i < nr; i++) {
        int32_t j = changed[i];
        const ds_jstate_t *js = ds_engine_job(e, j);
        if (js->status != DS_JS_RUNNING) continue;
        if (s->tupd[j] != now) advance(s, j, now);
        double r = true_rate(s, j);
        if (!js->shared && js->keep_rate) r = s->rate[j]; /* alone again, as slow as when packed */
        s->rate[j] = r;
        schedule_end(s, j);
    }
    ds_engine_clear_rate_changes(e);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

ds_dist_t ds_dist_of(const double *v, int64_t n)
{
    ds_dist_t d = {0, 0, 0, 0, 0};
    if (n <= 0) return d;
    double *x = ds_xmalloc((size_t)n * sizeof *x);
    double sum = 0;
    for (int64_t i = 0; i < n; i++) x[i] = v[i], sum += v[i];
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    d.avg = sum / (double)n;
    /* nearest-rank percentiles */
    double q[4] = {0.5, 0.95, 0.99, 0.999};
    double *out[4] = {&d.p50, &d.p95, &d.p99, &d.p999};
    for (int k = 0; k < 4; k++) {
        int64_t r = (int64_t)ceil(q[k] * (double)n);
        if (r < 1) r = 1;
        *out[k] = x[r - 1];
    }
    free(x);
    return d;
}


typedef struct acc {
    int64_t last_t;
    double busy, sm, gmem;      /* integrals inside the window */
    int64_t next_sample;
    double *qs, *qs_g;          /* smoothed QAD per tenant: reported (all GPUs) and G-only */
    int qs_init;
    double *qad_sum;
    int64_t *qad_n, *qad_ok, *qad_all_ok, *qad_all_n, *qad_g_n, *qad_g_ok;
    int64_t cap_series;
} acc_t;


static void sample(sim_t *s, acc_t *a, ds_sim_result_t *res, int64_t t)
{
    const ds_engine_t *e = s->e;
    const ds_trace_t *tr = s->trace;
    int32_t nt = tr->ntenants;
    int keep = s->cfg->keep_series;
    if (keep && res->nseries == a->cap_series) {
        a->cap_series = a->cap_series ? a->cap_series * 2 : 4096;
        res->series = ds_xrealloc(res->series, (size_t)a->cap_series * sizeof *res->series);
        res->qad = ds_xrealloc(res->qad, (size_t)a->cap_series * (size_t)nt * sizeof *res->qad);
        res->qad_smooth = ds_xrealloc(res->qad_smooth, (size_t)a->cap_series * (size_t)nt * sizeof *res->qad_smooth);
        res->tusage = ds_xrealloc(res->tusage, (size_t)a->cap_series * (size_t)nt * 3 * sizeof *res->tusage);
    }
    if (!a->qs) a->qs = ds_xcalloc((size_t)nt, sizeof *a->qs), a->qs_g = ds_xcalloc((size_t)nt, sizeof *a->qs_g);
    double l = s->cfg->qad_lambda, th = s->cfg->qad_theta;
    for (int32_t i = 0; i < nt; i++) {
        double q = s->qad(e, i, DS_QAD_ALL), qg = s->qad(e, i, DS_QAD_G);
        double sm = a->qs_init ? ds_qad_smooth(a->qs[i], q, l) : q;
        double smg = a->qs_init ? ds_qad_smooth(a->qs_g[i], qg, l) : qg;
        a->qs[i] = sm;
        a->qs_g[i] = smg;
        if (ds_engine_qad_demand(e, i, DS_QAD_ALL)) {
            a->qad_sum[i] += sm;
            a->qad_n[i]++;
            a->qad_ok[i] += sm >= th;
        }
        if (ds_engine_qad_demand(e, i, DS_QAD_G)) {
            a->qad_g_n[i]++;
            a->qad_g_ok[i] += smg >= th;
        }
        a->qad_all_n[i]++;
        a->qad_all_ok[i] += sm >= th;
        if (keep) {
            res->qad[res->nseries * nt + i] = (float)q;
            res->qad_smooth[res->nseries * nt + i] = (float)sm;
            int32_t *u = &res->tusage[(res->nseries * nt + i) * 3];
            u[0] = (int32_t)e->tenant_g_gpus[i], u[1] = (int32_t)e->tenant_be_gpus[i];
            u[2] = (int32_t)DS_MIN(e->tenant_pending_gpus[i], INT32_MAX);
        }
    }
    a->qs_init = 1;
    if (!keep) return;
    ds_sample_t *x = &res->series[res->nseries++];
    int32_t pend = 0, run = 0;
    int64_t pg = 0;
    for (int32_t i = 0; i < nt; i++) run += (int32_t)e->tenant_running[i], pg += e->tenant_pending_gpus[i];
    for (int32_t p = 0; p < e->nparts; p++) pend += e->parts[p].npending;
    x->time = t;
    x->busy_gpus = (int32_t)e->util_busy;
    x->idle_gpus = (int32_t)(res->total_gpus - e->util_busy);
    x->running_jobs = run;
    x->pending_jobs = pend;
    x->pending_gpus = pg;
    x->sm_util = (float)(e->util_sm / (100.0 * (double)res->total_gpus));
    x->gmem_util = (float)(e->util_gmem / (100.0 * (double)res->total_gpus));
    x->preemptions = e->n_preemptions;
    x->colocations = e->n_colocations;
}

/* Integrates utilization over [a->last_t, t) and emits the cycle samples inside it. */
static void integrate(sim_t *s, acc_t *a, ds_sim_result_t *res, int64_t t)
{
    const ds_engine_t *e = s->e;
    int64_t lo = DS_MAX(a->last_t, res->window_start), hi = DS_MIN(t, res->window_end);
    if (hi > lo) {
        double len = (double)(hi - lo);
        a->busy += (double)e->util_busy * len;
        a->sm += e->util_sm * len;
        a->gmem += e->util_gmem * len;
    }
    while (a->next_sample < t) {
        sample(s, a, res, a->next_sample);
        a->next_sample += s->cfg->cycle;
    }
    a->last_t = t;
}

static void finish_result(sim_t *s, acc_t *a, ds_sim_result_t *res)
{
    const ds_trace_t *tr = s->trace;
    const ds_engine_t *e = s->e;
    int64_t n = tr->njobs;
    double *jct = ds_xmalloc((size_t)(n ? n : 1) * sizeof *jct), *que = ds_xmalloc((size_t)(n ? n : 1) * sizeof *que);
    int64_t last_end = res->window_start;
    for (int64_t j = 0; j < n; j++) {
        res->submit[j] = tr->jobs[j].submit;
        res->start[j] = ds_engine_job(e, j)->first_start;
        res->end[j] = ds_engine_job(e, j)->end;
        res->queued[j] = ds_engine_job(e, j)->queued;
        res->queued_g[j] = ds_engine_job(e, j)->queued_g;
        res->queued_be[j] = ds_engine_job(e, j)->queued_be;
        res->preempts[j] = ds_engine_job(e, j)->preemptions;
        jct[j] = (double)(ds_engine_job(e, j)->end - tr->jobs[j].submit);
        que[j] = (double)ds_engine_job(e, j)->queued;
        if (ds_engine_job(e, j)->end > last_end) last_end = ds_engine_job(e, j)->end;
        res->colocated_jobs += res->colocated[j];
    }
    res->jct = ds_dist_of(jct, n);
    res->queue = ds_dist_of(que, n);
    res->makespan = last_end - res->window_start;
    double win = (double)(res->window_end - res->window_start) * (double)res->total_gpus;
    res->gpu_alloc = win > 0 ? a->busy / win : 0;
    res->sm_util = win > 0 ? a->sm / (100.0 * win) : 0;
    res->gmem_util = win > 0 ? a->gmem / (100.0 * win) : 0;
    res->preemptions = e->n_preemptions;
    res->colocations = e->n_colocations;
    res->revocations = e->n_revocations;
    res->ntenants = tr->ntenants;
    res->tenants = ds_xcalloc((size_t)tr->ntenants, sizeof *res->tenants);
    double qsum = 0;
    int64_t qn = 0, qok = 0, qall = 0, qallok = 0, qgn = 0, qgok = 0;
    for (int32_t i = 0; i < tr->ntenants; i++) {
        ds_tenant_result_t *t = &res->tenants[i];
        snprintf(t->name, sizeof t->name, "%s", tr->tenants[i].name);
        t->quota_gpus = tr->tenants[i].quota_gpus;
        int64_t m = 0;
        for (int64_t j = 0; j < n; j++) {
            if (tr->jobs[j].tenant != i) continue;
            jct[m] = (double)(ds_engine_job(e, j)->end - tr->jobs[j].submit);
            que[m] = (double)ds_engine_job(e, j)->queued;
            t->preemptions += ds_engine_job(e, j)->preemptions;
            m++;
        }
        t->jobs = m;
        t->jct = ds_dist_of(jct, m);
        t->queue = ds_dist_of(que, m);
        t->qad_mean = a->qad_n[i] ? a->qad_sum[i] / (double)a->qad_n[i] : 1.0;
        t->qad_compliance = a->qad_n[i] ? (double)a->qad_ok[i] / (double)a->qad_n[i] : 1.0;
        t->qad_compliance_g = a->qad_g_n[i] ? (double)a->qad_g_ok[i] / (double)a->qad_g_n[i] : 1.0;
        qgn += a->qad_g_n[i];
        qgok += a->qad_g_ok[i];
        qsum += a->qad_sum[i];
        qn += a->qad_n[i];
        qok += a->qad_ok[i];
        qall += a->qad_all_n[i];
        qallok += a->qad_all_ok[i];
    }
    res->qad_mean = qn ? qsum / (double)qn : 1.0;
    res->qad_compliance = qn ? (double)qok / (double)qn : 1.0;
    res->qad_compliance_all = qall ? (double)qallok / (double)qall : 1.0;
    res->qad_compliance_g = qgn ? (double)qgok / (double)qgn : 1.0;
    if (e->ops->stats) res->npstats = e->ops->stats(e, e->pstate, res->pstats, (int)(sizeof res->pstats / sizeof res->pstats[0]));
    free(jct);
    free(que);
}

/* Names the first job still waiting, with its file and line: the message must lead to the row. */
static void stall_error(const sim_t *s, int64_t now, ds_error_t *err)
{
    const ds_engine_t *e = s->e;
    const ds_trace_t *t = s->trace;
    int64_t pend = 0;
    int32_t first = -1;
    for (int32_t j = 0; j < t->njobs; j++)
        if (e->js[j].status == DS_JS_PENDING) {
            pend++;
            if (first < 0) first = j;
        }
    if (first < 0) {
        ds_error_set(err, t->source, 0, NULL, "simulation stalled at t=%lld: no job can ever start", (long long)now);
        return;
    }
    const ds_job_t *j = &t->jobs[first];
    ds_error_set(err, t->source, j->line, NULL,
                 "simulation stalled at t=%lld: %lld jobs pending and none can ever start, the first is job %lld "
                 "(tenant %s, %d GPUs, %d CPUs, submitted at %lld)",
                 (long long)now, (long long)pend, (long long)j->id, t->tenants[j->tenant].name, j->gpus, j->cpus,
                 (long long)j->submit);
}

int ds_sim_run(const ds_trace_t *trace, const ds_sim_config_t *cfg, ds_sim_result_t *res, ds_error_t *err)
{
    memset(res, 0, sizeof *res);
    if (!cfg->policy) {
        ds_error_set(err, NULL, 0, "policy", "no policy given");
        return DS_EINVAL;
    }
    if (trace->njobs == 0) {
        ds_error_set(err, trace->source, 0, NULL, "the trace has no jobs");
        return DS_EINVAL;
    }
    if (cfg->cycle < 1) {
        ds_error_set(err, NULL, 0, "cycle", "must be at least 1 second");
        return DS_EINVAL;
    }
    sim_t s;
    memset(&s, 0, sizeof s);
    s.trace = trace;
    s.cfg = cfg;
    int rc = ds_engine_create(&s.e, trace, &cfg->engine, cfg->policy, cfg->policy_config, err);
    if (rc) return rc;
    ds_engine_t *e = s.e;
    if (cfg->restart_pinned || cfg->requeue_settle > 0)
        s.restarts = sim_restarts_create(e, cfg->restart_pinned, cfg->requeue_settle);
    s.qad = e->ntypes > 1 ? ds_engine_qad_typed : ds_engine_qad_one_type;
    ds_engine_set_hooks(e, &(ds_driver_hooks_t){.ctx = &s, .observe_retention = e->ntypes > 1 ? hook_observe_typed : hook_observe});
    s.rng[0] = cfg->seed * 0x9E3779B97F4A7C15ULL + 1;
    s.rng[1] = (cfg->seed ^ 0xD1B54A32D192ED03ULL) * 0xBF58476D1CE4E5B9ULL + 7;
    int64_t n = trace->njobs;
    s.left = ds_xcalloc((size_t)n, sizeof *s.left);
    s.rate = ds_xcalloc((size_t)n, sizeof *s.rate);
    s.tupd = ds_xcalloc((size_t)n, sizeof *s.tupd);
    s.tstart = ds_xcalloc((size_t)n, sizeof *s.tstart);
    s.left_start = ds_xcalloc((size_t)n, sizeof *s.left_start);
    s.ver = ds_xcalloc((size_t)n, sizeof *s.ver);
    snprintf(res->policy, sizeof res->policy, "%s", cfg->policy->name);
    res->mode = cfg->engine.mode;
    res->jobs = n;
    res->submit = ds_xmalloc((size_t)n * sizeof *res->submit);
    res->start = ds_xmalloc((size_t)n * sizeof *res->start);
    res->end = ds_xmalloc((size_t)n * sizeof *res->end);
    res->queued = ds_xmalloc((size_t)n * sizeof *res->queued);
    res->queued_g = ds_xmalloc((size_t)n * sizeof *res->queued_g);
    res->queued_be = ds_xmalloc((size_t)n * sizeof *res->queued_be);
    res->preempts = ds_xmalloc((size_t)n * sizeof *res->preempts);
    res->colocated = ds_xcalloc((size_t)n, 1);
    if (e->ntypes > 1) {
        res->gtype = ds_xmalloc((size_t)n);
        memset(res->gtype, -1, (size_t)n);
    }
    for (int32_t p = 0; p < e->nparts; p++)
        if (!e->parts[p].no_util) res->total_gpus += e->parts[p].gpus_total;
    int64_t first = trace->jobs[0].submit, lastsub = trace->jobs[n - 1].submit;
    res->window_start = cfg->window_start >= 0 ? cfg->window_start : first - first % 86400;
    res->window_end = cfg->window_end >= 0 ? cfg->window_end : (lastsub + 86399) / 86400 * 86400;
    if (res->window_end <= res->window_start) res->window_end = res->window_start + 1;
    acc_t a;
    memset(&a, 0, sizeof a);
    int32_t nt = trace->ntenants;
    a.qad_sum = ds_xcalloc((size_t)nt, sizeof *a.qad_sum);
    a.qad_n = ds_xcalloc((size_t)nt, sizeof *a.qad_n);
    a.qad_ok = ds_xcalloc((size_t)nt, sizeof *a.qad_ok);
    a.qad_all_n = ds_xcalloc((size_t)nt, sizeof *a.qad_all_n);
    a.qad_all_ok = ds_xcalloc((size_t)nt, sizeof *a.qad_all_ok);
    a.qad_g_n = ds_xcalloc((size_t)nt, sizeof *a.qad_g_n);
    a.qad_g_ok = ds_xcalloc((size_t)nt, sizeof *a.qad_g_ok);
    a.last_t = first;
    a.next_sample = first - first % cfg->cycle;
    if (a.next_sample < first) a.next_sample += cfg->cycle;
    int64_t next_arr = 0, timer_at = DS_TIME_NEVER, idle_since = -1, grace_next = DS_TIME_NEVER;
    if (cfg->grace > 0) {
        s.jg = ds_xcalloc((size_t)(e->jgpu_off[n] ? e->jgpu_off[n] : 1), sizeof *s.jg);
        s.gpu_until = ds_xcalloc((size_t)(e->ngpus ? e->ngpus : 1), sizeof *s.gpu_until);
        s.grace_until = ds_xcalloc((size_t)n, sizeof *s.grace_until);
        s.graced = ds_xmalloc((size_t)n * sizeof *s.graced);
        s.undone = ds_xcalloc((size_t)n, 1);
        s.fresh = ds_xcalloc((size_t)n, 1);
        s.taken = ds_xmalloc((size_t)n * sizeof *s.taken);
    }
    rc = DS_OK;
    while (e->n_finished < n) {
        int64_t t = heap_next_time(&s);
        if (next_arr < n && trace->jobs[next_arr].submit < t) t = trace->jobs[next_arr].submit;
        if (timer_at < t) t = timer_at;
        if (grace_next < t) t = grace_next;
        if (s.restarts) {
            int64_t u = sim_restarts_next(s.restarts, a.last_t);
            if (u < t) t = u;
        }
        /* Nothing running, every job arrived, yet jobs wait: with only timers left (Tiresias) time would advance
         * forever, so a cluster idle that long with work pending is a stall too. */
        if (heap_next_time(&s) == DS_TIME_NEVER && next_arr == n) {
            if (idle_since < 0) idle_since = a.last_t;
        } else {
            idle_since = -1;
        }
        if (t == DS_TIME_NEVER || (idle_since >= 0 && t - idle_since > DS_MAX_DURATION)) {
            stall_error(&s, a.last_t, err);
            rc = DS_EINVAL;
            break;
        }
        integrate(&s, &a, res, t);
        while (heap_next_time(&s) == t) {
            ev_t v = heap_pop(&s);
            advance(&s, v.job, t);
            s.left[v.job] = 0;
            if (cfg->keep_events) log_event(&s, res, t, DS_SIM_EV_FINISH, v.job, -1, 0);
            ds_engine_finish(e, v.job, t);
        }
        while (next_arr < n && trace->jobs[next_arr].submit == t) {
            s.left[next_arr] = (double)trace->jobs[next_arr].duration;
            ds_engine_arrive(e, (int32_t)next_arr, t);
            next_arr++;
        }
        int timer = ds_engine_next_timer(e, t - 1) <= t;
        if (s.jg) grace_next = grace_hold(&s, t); /* graces over: their victims may start again */
        if (s.restarts) sim_restarts_hold(s.restarts, e, t);
        if (s.jg) grace_next = grace_hold(&s, t); /* a victim in its grace stays held, whatever the rules above */
        ds_engine_schedule(e, t, timer);
        if (s.restarts || s.jg) {
            /* as deepshared: starts Slurm cannot carry out (onto GPUs a victim still holds in its grace; the
             * restart rules) are taken back and the policy runs again on what they left, up to 4 rounds a
             * pass (D_PASS_ROUNDS) */
            for (int round = 1;; round++) {
                int32_t first = s.ntaken;
                int32_t undone = s.jg ? take_back(&s, t) : 0;
                if (s.restarts) {
                    undone += sim_restarts_check(s.restarts, e, t);
                    if (s.jg) undone += take_back(&s, t); /* a pinned start moved onto a GPU in a grace */
                }
                apply(&s, res, t);
                for (int32_t i = first; i < s.ntaken; i++) s.undone[s.taken[i]] = 0;
                if (!undone || round == 4) break;
                ds_engine_schedule(e, t, 0);
            }
            if (s.restarts) sim_restarts_end_pass(s.restarts, e);
            if (s.jg) {
                for (int32_t i = 0; i < s.ntaken; i++)
                    if (!s.grace_until[s.taken[i]] && ds_engine_job(e, s.taken[i])->status == DS_JS_PENDING)
                        ds_engine_hold(e, s.taken[i], 0);
                s.ntaken = 0;
                grace_next = grace_hold(&s, t);
            }
        } else {
            apply(&s, res, t);
        }
        if (cfg->after_pass) cfg->after_pass(cfg->after_pass_ctx, e, t);
        if (cfg->check_invariants) {
            char msg[200];
            if (ds_engine_check(e, msg, sizeof msg) || (e->ops->check && e->ops->check(e, e->pstate, msg, sizeof msg))) {
                snprintf(res->invariant_error, sizeof res->invariant_error, "t=%lld: %s", (long long)t, msg);
                ds_error_set(err, NULL, 0, NULL, "invariant broken at %s", res->invariant_error);
                rc = DS_EINVAL;
                break;
            }
        }
        timer_at = ds_engine_next_timer(e, t);
    }
    if (rc == DS_OK) {
        integrate(&s, &a, res, a.last_t + 1);
        finish_result(&s, &a, res);
        if (s.restarts) res->starts_taken_back = sim_restarts_taken_back(s.restarts);
    }
    free(a.qs);
    free(a.qs_g);
    free(a.qad_sum);
    free(a.qad_n);
    free(a.qad_ok);
    free(a.qad_all_n);
    free(a.qad_all_ok);
    free(a.qad_g_n);
    free(a.qad_g_ok);
    free(s.left);
    free(s.rate);
    free(s.tupd);
    free(s.tstart);
    free(s.left_start);
    free(s.ver);
    free(s.jg);
    free(s.gpu_until);
    free(s.grace_until);
    free(s.graced);
    free(s.undone);
    free(s.fresh);
    free(s.taken);
    free(s.heap);
    sim_restarts_destroy(s.restarts);
    ds_engine_destroy(e);
    return rc;
}

void ds_sim_result_free(ds_sim_result_t *r)
{
    free(r->tenants);
    free(r->submit);
    free(r->start);
    free(r->end);
    free(r->queued);
    free(r->queued_g);
    free(r->queued_be);
    free(r->events);
    free(r->preempts);
    free(r->colocated);
    free(r->gtype);
    free(r->series);
    free(r->qad);
    free(r->qad_smooth);
    free(r->tusage);
    memset(r, 0, sizeof *r);
}
