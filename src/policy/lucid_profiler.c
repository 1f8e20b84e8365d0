/* lucid_profiler.c: Lucid's profiler as a pure function of the trace (least-GPU-first on its own small
 * partition, elastic by one node), plus the lookups of Lucid's input tables. */
#include "deepshare/lucid.h"

#include <stdlib.h>
#include <string.h>

int64_t ds_lucid_series_time(const ds_lucid_config_t *c, int32_t i)
{
    return c->series.is_datetime ? c->series.time[i] - c->clock_origin : c->series.time[i];
}

double ds_lucid_future_mean(const ds_lucid_config_t *c, int64_t t, int which, double fallback)
{
    const ds_lucid_series_t *s = &c->series;
    int32_t lo = 0, hi = s->n; /* first bin with time > t */
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (ds_lucid_series_time(c, mid) > t) hi = mid;
        else lo = mid + 1;
    }
    int32_t n = DS_MIN(c->pas_bins, s->n - lo);
    if (n <= 0) return fallback;
    const double *v = which ? s->pred_gpus : s->pred_jobs;
    double sum = 0;
    for (int32_t i = lo; i < lo + n; i++) sum += v[i];
    return sum / n;
}

void ds_lucid_scores(const ds_lucid_config_t *c, const ds_trace_t *t, int8_t *out)
{
    int32_t *lm = ds_xmalloc((size_t)(c->nlabels ? c->nlabels : 1) * sizeof *lm);
    int32_t *ld = ds_xmalloc((size_t)(c->nlabels ? c->nlabels : 1) * sizeof *ld);
    for (int32_t i = 0; i < c->nlabels; i++) {
        lm[i] = ds_strtab_find(&t->models, c->labels[i].model);
        ld[i] = ds_strtab_find(&t->datasets, c->labels[i].dataset);
    }
    for (int32_t j = 0; j < t->njobs; j++) {
        const ds_job_t *job = &t->jobs[j];
        out[j] = (int8_t)c->default_score;
        for (int32_t i = 0; i < c->nlabels; i++) {
            if (lm[i] < 0 || lm[i] != job->model || ld[i] != job->dataset || c->labels[i].batch != job->batch ||
                c->labels[i].amp != job->amp)
                continue;
            out[j] = (int8_t)c->labels[i].label;
            break;
        }
    }
    free(lm);
    free(ld);
}

static int64_t next_multiple(int64_t t, int64_t m)
{
    int64_t r = ((t % m) + m) % m;
    return t - r + m;
}

static void record_scale(ds_lucid_prof_t *p, int32_t *cap, int64_t t, int delta)
{
    if (p->nscale == *cap) {
        *cap = *cap ? *cap * 2 : 64;
        p->scale_time = ds_xrealloc(p->scale_time, (size_t)*cap * sizeof *p->scale_time);
        p->scale_delta = ds_xrealloc(p->scale_delta, (size_t)*cap * sizeof *p->scale_delta);
    }
    p->scale_time[p->nscale] = t;
    p->scale_delta[p->nscale++] = (int8_t)delta;
}

typedef struct prun {
    int64_t end;
    int32_t job, slot;
} prun_t;

void ds_lucid_profile(ds_lucid_prof_t *p, const ds_trace_t *t, const ds_lucid_config_t *c, int32_t gpn, int scaling,
                      const int64_t *wall_of)
{
    memset(p, 0, sizeof *p);
    int32_t nj = t->njobs, n1 = nj ? nj : 1;
    p->start = ds_xmalloc((size_t)n1 * sizeof *p->start);
    p->queue = ds_xcalloc((size_t)n1, sizeof *p->queue);
    p->done = ds_xcalloc((size_t)n1, 1);
    p->slot = ds_xmalloc((size_t)n1);
    for (int32_t j = 0; j < nj; j++) p->start[j] = -1, p->slot[j] = -1;
    if (!c->profiler || nj == 0) return;
    /* A profiled job runs on one node. */
    int32_t limit = DS_MIN(c->prof_gpu_limit, gpn);
    int32_t nbase = c->prof_nodes, nslots = nbase + (scaling ? 1 : 0), temp = nbase;
    int32_t *freeg = ds_xmalloc((size_t)nslots * sizeof *freeg);
    for (int32_t s = 0; s < nslots; s++) freeg[s] = gpn;
    int temp_online = 0;
    /* Pending jobs: one FIFO per GPU count, so "stable sort by GPU count" is a walk of the buckets. */
    int32_t *head = ds_xmalloc((size_t)(limit + 1) * sizeof *head), *tail = ds_xmalloc((size_t)(limit + 1) * sizeof *tail);
    int32_t *next = ds_xmalloc((size_t)n1 * sizeof *next);
    for (int32_t g = 0; g <= limit; g++) head[g] = tail[g] = -1;
    int32_t qlen = 0;
    prun_t *run = ds_xmalloc((size_t)(nslots * gpn + 1) * sizeof *run);
    int32_t nrun = 0, cap = 0, ai = 0;
    int64_t now = t->jobs[0].submit, up_since = -1;
    for (;;) {
        /* 1. jobs whose profiling ends now leave */
        for (int32_t i = 0; i < nrun;) {
            if (run[i].end == now) {
                freeg[run[i].slot] += t->jobs[run[i].job].gpus;
                run[i] = run[--nrun];
            } else {
                i++;
            }
        }
        /* 2. arrivals, in trace order */
        for (; ai < nj && t->jobs[ai].submit <= now; ai++) {
            int32_t g = t->jobs[ai].gpus;
            if (g < 1 || g > limit || (wall_of && wall_of[ai] < 0)) continue;
            next[ai] = -1;
            if (tail[g] >= 0) next[tail[g]] = ai;
            else head[g] = ai;
            tail[g] = ai;
            qlen++;
        }
        /* 3. least GPUs first, stopping at the first job that does not fit */
        int blocked = 0;
        for (int32_t g = 1; g <= limit && !blocked; g++) {
            while (head[g] >= 0) {
                int32_t best = -1;
                for (int32_t s = 0; s < nslots; s++) {
                    if (s == temp && !temp_online) continue;
                    if (freeg[s] >= g && (best < 0 || freeg[s] < freeg[best])) best = s;
                }
                if (best < 0) { blocked = 1; break; }
                int32_t j = head[g];
                head[g] = next[j];
                if (head[g] < 0) tail[g] = -1;
                qlen--;
                freeg[best] -= g;
                const ds_job_t *job = &t->jobs[j];
                p->start[j] = now;
                p->queue[j] = now - job->submit;
                p->slot[j] = (int8_t)best;
                int64_t wall = wall_of ? wall_of[j] : job->duration;
                p->done[j] = wall <= c->prof_time;
                p->profiled++;
                p->finished += p->done[j];
                run[nrun++] = (prun_t){now + (p->done[j] ? wall : c->prof_time), j, best};
            }
        }
        /* 4. elastic scaling: borrow a node while the queue is long, return it when short and quiet */
        int grew = 0;
        if (scaling) {
            if (now % 10 == 0 && qlen > c->prof_scale_queue && !temp_online) {
                temp_online = 1;
                up_since = now;
                record_scale(p, &cap, now, +1);
                grew = 1;
            }
            if (now % 100 == 0 && qlen < c->prof_scale_down_queue && temp_online && freeg[temp] == gpn &&
                ds_lucid_future_mean(c, now, 1, -1.0) <= (double)limit * c->prof_scale_down_factor) {
                temp_online = 0;
                p->scale_up_seconds += now - up_since;
                record_scale(p, &cap, now, -1);
            }
        }
        /* next instant at which anything can change */
        int64_t nxt = DS_TIME_NEVER;
        if (ai < nj) nxt = t->jobs[ai].submit;
        for (int32_t i = 0; i < nrun; i++) nxt = DS_MIN(nxt, run[i].end);
        if (grew && qlen > 0) nxt = DS_MIN(nxt, now + 1);
        if (scaling && qlen > c->prof_scale_queue && !temp_online) nxt = DS_MIN(nxt, next_multiple(now, 10));
        if (scaling && temp_online && qlen < c->prof_scale_down_queue && freeg[temp] == gpn)
            nxt = DS_MIN(nxt, next_multiple(now, 100));
        if (nxt == DS_TIME_NEVER) break;
        now = nxt;
    }
    free(freeg);
    free(head);
    free(tail);
    free(next);
    free(run);
}

void ds_lucid_prof_free(ds_lucid_prof_t *p)
{
    free(p->start);
    free(p->queue);
    free(p->done);
    free(p->slot);
    free(p->scale_time);
    free(p->scale_delta);
    memset(p, 0, sizeof *p);
}
