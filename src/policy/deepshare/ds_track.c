/* ds_track.c: DeepShare's start/stop bookkeeping, below every stage: a job's first sight (its predicted
 * run time), its start (out of the pending list, onto the running and solo lists, into a pair) and its
 * stop (its partner alone again, a yield or a probe ended). Every stage starts jobs through dsp_start;
 * this file calls no stage. */
#include "ds_internal.h"

void dsp_start(ds_engine_t *e, dsp_t *s, int32_t j, const int32_t *gpus, int32_t partner, int64_t now)
{
    int32_t part = e->js[j].part, g = e->trace->jobs[j].gpus;
    if (partner >= 0) dsp_list_remove(dsp_solo_of(s, e, partner), s->spos, partner);
    if (s->nresv && dsp_resv_backfilled(e, s, j, gpus, g)) s->st.backfills++;
    ds_engine_start(e, j, gpus, now);
    if (e->ntypes > 1) s->wtype[j] = (int8_t)ds_engine_job_type(e, j);
    dsp_pend_remove(s, part, j);
    s->ppend_gpus[part] -= g;
    dsp_list_push(&s->run, s->rpos, j);
    dsp_list_push(&s->trun[e->trace->jobs[j].tenant], s->tpos, j);
    if (partner >= 0) {
        s->pair[j] = partner, s->pair[partner] = j;
        s->low[j] = s->low[partner] = 0;
        s->mon[j] = s->mon[partner] = (dsp_mon_t){0};
    } else if (g <= s->maxg) {
        dsp_list_push(dsp_solo_of(s, e, j), s->spos, j);
    }
    if (e->js[j].klass == DS_CLASS_BE) s->st.lent_jobs++, s->st.lent_gpus += g;
}

/* j stopped running (finished or preempted): its partner, if any, is alone again. */
void dsp_stopped(ds_engine_t *e, dsp_t *s, int32_t j)
{
    /* the work of the run that ended, at its type's speed: the run time the engine counted for it (none for a
     * start taken back) */
    if (e->ntypes > 1 && s->wtype[j] >= 0) {
        s->work[j] += (double)(e->js[j].run_time - s->wseen[j]) * ds_engine_speed(e, j, s->wtype[j]);
        s->wseen[j] = e->js[j].run_time;
        s->wtype[j] = -1;
    }
    dsp_list_remove(&s->run, s->rpos, j);
    dsp_list_remove(&s->trun[e->trace->jobs[j].tenant], s->tpos, j);
    if (s->yielded[j] == DSP_YIELDED) {
        s->yielded[j] = DSP_YIELD_ENDED;
        s->ygpus[e->trace->jobs[j].tenant] -= e->trace->jobs[j].gpus;
    }
    if (s->spos[j] >= 0) dsp_list_remove(dsp_solo_of(s, e, j), s->spos, j);
    int32_t p = s->pair[j];
    if (p >= 0) {
        /* a probe that ended before its first sample leaves the pair to the next one */
        if (s->mon[j].n == 0) {
            int32_t ty = dsp_pair_type(e, s, p);
            dsp_observed_set_probe(s, e->trace, j, p, ty, 0);
            dsp_observed_set_probe(s, e->trace, p, j, ty, 0);
        }
        s->pair[j] = s->pair[p] = -1;
        if (e->js[p].status == DS_JS_RUNNING && e->trace->jobs[p].gpus <= s->maxg)
            dsp_list_push(dsp_solo_of(s, e, p), s->spos, p);
    }
}

/* First sight of a job: count it and predict its run time from what is known now. */
void dsp_first_seen(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now)
{
    s->seen[j] = 1;
    s->nactive++;
    s->min_gmem = DS_MIN(s->min_gmem, e->trace->jobs[j].gmem_mib);
    const ds_runtime_predictor_t *rp = e->predictors ? e->predictors->runtime : NULL;
    s->pred[j] = rp ? rp->predict(rp->ctx, e->trace, j, now) : (double)e->trace->jobs[j].duration;
    if (!(s->pred[j] >= 1.0)) s->pred[j] = 1.0; /* NaN or nonpositive predictions */
}
