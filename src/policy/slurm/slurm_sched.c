/* slurm_sched.c: Slurm's main scheduler (_schedule in src/slurmctld/job_scheduler.c): on a submission or
 * completion it looks at up to default_queue_depth jobs in queue order (every job at the periodic pass),
 * starts each that fits, and at the first that does not fit for resources marks its partition failed:
 * the jobs behind it wait (reason Priority) for backfill. A job its association's limits hold back
 * (GrpTRES: ESLURM_ACCOUNTING_POLICY) is passed over without stopping the partition (assoc_limit_stop is
 * off by default). With preempt/qos a job of QOS normal that does not fit asks the select plugin for
 * victims (_run_now); when it finds some, the victims are requeued and the partition stops for this pass
 * (select_nodes answers ESLURM_NODES_BUSY while they are being stopped). */
#include "slurm_internal.h"

void slm_main_pass(ds_engine_t *e, slm_state_t *s, int32_t p, int64_t now, int32_t depth)
{
    slm_part_t *P = &s->parts[p];
    P->main_blocker = -1;
    P->main_at = now;
    slm_walk_t w;
    slm_walk_begin(s, p, &w);
    /* capped groups are passed by; a depth-limited pass still counts their jobs it would have looked at */
    w.skip_capped = 1;
    int32_t looked = 0, j;
    while ((j = slm_walk_next(s, &w)) >= 0) {
        if (!ds_engine_startable(e, j)) {
            s->reason[j] = SLM_W_HELD;
            continue;
        }
        if (s->eligible[j] > now) { /* not independent yet: not in the job queue at all */
            s->reason[j] = SLM_W_BEGIN;
            continue;
        }
        if (depth && looked + slm_walk_capped_before(s, &w, j, depth) >= depth) {
            P->truncated = 1;
            break;
        }
        looked++;
        if (s->stop_at[j] > now) { /* its victims are still being stopped */
            s->reason[j] = SLM_W_PREEMPTING;
            P->main_blocker = j;
            break;
        }
        if (!slm_limits_ok(s, j)) continue;
        if (ds_engine_find_free(e, j, p, s->gbuf)) {
            slm_start(e, s, j, s->gbuf, now, 0);
            continue;
        }
        if (s->cfg.preempt && s->qos[j] == SLM_QOS_NORMAL && P->nborrow > 0) {
            int32_t nv = slm_find_victims(e, s, j, NULL, now, s->removed);
            if (nv == 0 && s->cfg.exempt_time >= 0) {
                /* the candidates still exempt: look again once the first of them is past PreemptExemptTime */
                int64_t first = DS_TIME_NEVER;
                const slm_list_t *r = &P->run;
                for (int32_t i = 0; i < r->n; i++) {
                    int32_t v = r->job[i];
                    if (r->stamp[i] == s->rstamp[v] && s->qos[v] == SLM_QOS_BORROW && s->stop_at[v] < 0)
                        first = DS_MIN(first, e->js[v].last_start + s->cfg.exempt_time);
                }
                if (first != DS_TIME_NEVER && first > now) slm_want_periodic(s, p, first);
            }
            if (nv > 0) {
                slm_preempt_for(e, s, j, s->removed, nv, now, 0);
                /* the victims' completion wakes the scheduler again */
                slm_want_pass(s, p, now + 1);
                P->main_blocker = j;
                break;
            }
        }
        s->reason[j] = SLM_W_RESOURCES;
        P->main_blocker = j;
        break;
    }
    /* the queue ran out: Slurm would have looked at the capped jobs left too, and stopped at the depth */
    if (j < 0 && depth && looked + slm_walk_capped_before(s, &w, -1, depth + 1) > depth) P->truncated = 1;
    slm_walk_end(s, &w);
}
