/* grace.c: graceful preemption. A victim the policy preempts is sent a signal first (preempt_signal, SIGTERM by
 * default) and keeps running in Slurm for `grace` seconds, as Slurm's own GraceTime
 * does, so it can checkpoint; it is requeued (held, then back to staging as any requeue) as soon as it
 * leaves its GPUs -- it ended with a non-zero exit, or requeued itself -- or when the grace is over; one
 * that ended with exit 0 had finished its work and is left done. The engine has the victim
 * pending from the decision on; until it leaves, its GPUs are refused to every dispatch (gpumap_refuses)
 * and the victim itself is held out of the policy's pass. The list lives outside the job slots, so a
 * rebuild of the engine keeps it. */
#include "daemon/daemon.h"

#include <stdio.h>
#include <string.h>

int daemon_grace_find(const daemon_t *d, uint32_t id)
{
    for (int32_t i = 0; i < d->ngrace; i++)
        if (d->grace[i].id == id) return i;
    return -1;
}

int daemon_grace_begin(daemon_t *d, int32_t s, const sl_job_t *sj, char *err, size_t errn)
{
    if (d->cfg.grace <= 0 || !sj || sj->state != SL_RUNNING || sj->completing) return 1;
    if (d->ngrace == D_GRACE_MAX) {
        dlog(0, "job %u: %d victims already in their grace: requeued at once", sj->id, D_GRACE_MAX);
        return 1;
    }
    int sig = d->cfg.preempt_signal;
    if (sl_signal(sj->id, sig, err, errn)) return -1;
    dgrace_t *g = &d->grace[d->ngrace++];
    memset(g, 0, sizeof *g);
    g->id = sj->id;
    g->sig = sig;
    g->t_signal = daemon_now_mono();
    g->node = (int16_t)gpumap_node(d, sj->nodes);
    for (int k = 0; k < sj->ngpu_idx && k < SL_MAX_GPUS; k++) g->idx[g->n++] = (int8_t)sj->gpu_idx[k];
    d->signalled++;
    snprintf(d->slot[s].why, sizeof d->slot[s].why, "preempted: sent signal %d to checkpoint; requeued when it ends or "
             "after its grace of %.0f s", sig, d->cfg.grace);
    dlog(1, "job %u signalled (%d): requeued when it leaves its GPUs or in %.0f s", sj->id, sig, d->cfg.grace);
    return 0;
}

int daemon_grace_due(const daemon_t *d)
{
    double mono = daemon_now_mono();
    for (int32_t i = 0; i < d->ngrace; i++)
        if (mono - d->grace[i].t_signal >= d->cfg.grace) return 1;
    return 0;
}

/* The entry's job was requeued (by us or by itself): its slot moves back to staging as any requeue does. */
static void requeued(daemon_t *d, int32_t i, const char *how, double mono)
{
    dgrace_t *g = &d->grace[i];
    int32_t s = ds_idmap_get(&d->byid, g->id);
    if (s >= 0) {
        d->slot[s].requeued = 1;
        d->slot[s].t_requeue = mono;
        d->slot[s].why[0] = 0;
    }
    double took = mono - g->t_signal;
    d->grace_sum += took;
    d->grace_n++;
    d->requeues++;
    dlog(1, "job %u requeued: %s %.2f s after its signal", g->id, how, took);
    d->grace[i] = d->grace[--d->ngrace];
}

void daemon_grace_tick(daemon_t *d)
{
    char err[300];
    double mono = daemon_now_mono();
    for (int32_t i = 0; i < d->ngrace;) {
        dgrace_t *g = &d->grace[i];
        const sl_job_t *j = NULL;
        for (int k = 0; k < d->nsj && !j; k++)
            if (d->sj[k].id == g->id) j = &d->sj[k];
        int expired = mono - g->t_signal >= d->cfg.grace;
        if (!j) {
            dlog(0, "job %u vanished from Slurm in its grace: nothing to requeue", g->id);
            d->grace[i] = d->grace[--d->ngrace];
            continue;
        }
        if (j->state == SL_PENDING) {
            /* requeued by itself (or an operator) in its grace: Slurm would start it again on its own in our
             * partition, so it goes back to staging, released, as after our requeue */
            if (!strcmp(j->partition, d->cfg.staging) || !sl_restage(g->id, d->cfg.staging, err, sizeof err)) {
                d->grace_self++;
                requeued(d, i, "it requeued itself", mono);
                continue;
            }
            dlog(0, "%s", err), d->errors++;
        } else if (j->completing) {
            /* leaving: Slurm refuses a requeue until it has released the job */
        } else if (j->state == SL_COMPLETED) {
            /* exit 0: its work was done (a script that saved on the signal exits non-zero): not run again */
            d->grace_done++;
            dlog(1, "job %u completed in its grace (exit 0): not requeued", g->id);
            d->grace[i] = d->grace[--d->ngrace];
            continue;
        } else if (j->state != SL_RUNNING || expired) {
            /* ended non-zero (its checkpoint written; Slurm requeues a batch job that has ended and runs it again), or
             * still running at the end of its grace (Slurm's own requeue ends it) */
            if (!sl_requeue_hold(g->id, err, sizeof err)) {
                if (j->state == SL_RUNNING) d->grace_expired++;
                else d->grace_ended++;
                requeued(d, i, j->state == SL_RUNNING ? "its grace is over," : "it ended", mono);
                continue;
            }
            dlog(0, "%s", err), d->errors++;
            if (mono - g->t_signal > d->cfg.grace + D_GRACE_GIVE_UP) {
                dlog(0, "job %u: not requeued %.0f s after its grace: left as Slurm has it", g->id, D_GRACE_GIVE_UP);
                d->grace[i] = d->grace[--d->ngrace];
                continue;
            }
        }
        i++;
    }
}
