/* measure.c: telemetry -> the policy's monitor: each cycle the retention source is polled, jobs running
 * alone add to their exclusive baselines, and the engine's observe_retention hook answers for a shared
 * job from the samples (NaN, no sample, when they are missing or stale: docs/deepshared.md, Telemetry). */
#include "daemon/daemon.h"

#include <math.h>

/* Job j's GPUs also hold a job on its way out: a preemption victim in its grace (grace.c), or one Slurm is
 * still ending. The engine has j alone there already; the GPU does not yet. */
static int beside_leaver(const daemon_t *d, int32_t j)
{
    const int32_t *g = ds_engine_job_gpus(d->e, j);
    int ng = d->nodes ? d->gpn * d->nnodes : 0;
    for (int32_t k = 0; k < ds_engine_job(d->e, j)->nplaced; k++) {
        if (g[k] < 0 || g[k] >= ng || d->gpn <= 0) continue;
        int node = g[k] / d->gpn, idx = g[k] % d->gpn;
        if (d->completing && d->completing[g[k]]) return 1;
        for (int32_t i = 0; i < d->ngrace; i++)
            for (int m = 0; d->grace[i].node == node && m < d->grace[i].n; m++)
                if (d->grace[i].idx[m] == idx) return 1;
    }
    return 0;
}

void daemon_measure(daemon_t *d)
{
    if (d->cfg.tel.kind == TEL_OFF) return;
    double now = tel_now();
    int64_t errs = d->tel.poll_errors;
    tel_poll(&d->tel, now);
    /* one line when the source fails and one when it answers again: a poll every cycle must not flood the log */
    if (d->tel.poll_errors > errs && !d->tel_down) dlog(0, "telemetry (%s): %s; no retention samples until it answers "
                                                         "(no pair is revoked on that)", tel_kind_name(d->cfg.tel.kind),
                                                         d->tel.last_error);
    else if (d->tel.poll_errors == errs && d->tel_down) dlog(0, "telemetry (%s) answers again", tel_kind_name(d->cfg.tel.kind));
    d->tel_down = d->tel.poll_errors > errs;
    if (!d->e) return;
    double span = tel_span(&d->cfg.tel);
    for (int32_t j = 0; j < d->nslots; j++) {
        const ds_jstate_t *s = ds_engine_job(d->e, j);
        dslot_t *sl = &d->slot[j];
        if (s->status != DS_JS_RUNNING) continue;
        if (s->shared || beside_leaver(d, j)) {
            sl->tel_shared = 1;
            continue;
        }
        if (sl->tel_shared) sl->tel_shared = 0, sl->t_alone_wall = now;
        /* Only a sample of its time alone is its solo speed: the last one may be from before this run (a
         * requeued job's file; Slurm's start, a lower bound, so its first reports count) or from while its
         * partner still ran (its slowed rate, or the GPU's activity of both; from the first measure that
         * found it alone). A sample at ts shows the GPU since ts - span (the query's window, the scrape and
         * the exporter's lag): a Prometheus answer just after the pair broke is still the pair's. */
        double age = tel_age(&d->tel, sl->id, now), since = DS_MAX(sl->t_start_wall, sl->t_alone_wall);
        if (age >= 0 && now - age - span < since) continue;
        tel_note_alone(&d->tel, sl->id, daemon_workload(d, j), now);
    }
}

uint32_t daemon_workload(const daemon_t *d, int32_t j)
{
    const ds_job_t *job = &d->trace.jobs[j];
    if (job->model < 0) return 0;
    return tel_workload_key(d->trace.models.s[job->model], job->dataset >= 0 ? d->trace.datasets.s[job->dataset] : "",
                            job->batch, job->amp);
}

double daemon_pair_estimate(const daemon_t *d, int32_t j, double wall, int *before_pair)
{
    if (before_pair) *before_pair = 0;
    if (d->cfg.tel.kind == TEL_OFF || !d->e || j < 0 || j >= d->nslots) return NAN;
    int32_t p = ds_engine_job(d->e, j)->partner;
    if (p < 0 || p >= d->nslots) return NAN;
    /* A sample from before both jobs ran (as the daemon saw them in Slurm) is the older job's solo speed,
     * not the pair's: read as the pair's it says "no slowdown" and resets the monitor's count of low
     * samples. It is no sample, as a missing one. So is one whose span (tel_span: the query's window, the
     * scrape and the exporter's lag) reaches back before the pair: part solo, it reads the older job's own
     * activity over both baselines as a slowdown (0.5 / (0.5 + 0.5) for a job alone), which would revoke
     * a good pair. */
    double age = tel_age(&d->tel, d->slot[j].id, wall), paired = DS_MAX(d->slot[j].t_run_wall, d->slot[p].t_run_wall);
    if (paired > 0 && age >= 0 && wall - age - tel_span(&d->cfg.tel) < paired) {
        if (before_pair) *before_pair = 1;
        return NAN;
    }
    /* a job that never ran alone is compared with its workload's jobs that did */
    return tel_estimate(&d->tel, d->slot[j].id, d->slot[p].id, wall, tel_workload_base(&d->tel, daemon_workload(d, j)),
                        tel_workload_base(&d->tel, daemon_workload(d, p)));
}

double daemon_observe_retention(void *ctx, int32_t j, int64_t now)
{
    daemon_t *d = ctx;
    (void)now; /* samples carry wall times of their own */
    if (d->cfg.tel.kind == TEL_OFF) return NAN;
    double r = daemon_pair_estimate(d, j, tel_now(), NULL);
    d->tel.asked++;
    if (isnan(r)) d->tel.missing++;
    return r;
}
