/* dispatch.c: engine -> Slurm. One pass: holds the jobs Slurm cannot start yet, runs the policy, and carries
 * out its decisions -- a start as a dispatch with pinned GPUs (moved where Slurm would start it, or taken
 * back), a preemption as a requeue, a promotion in the admin comment -- running the policy again on what a
 * taken-back start left; and the squeue priorities that show the policy's order. */
#include "daemon/daemon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Whether a job may start only on the GPU indices of its first dispatch, when it starts as guaranteed (as_g)
 * or best effort: a shard job always, a whole-GPU job with repin = 0 (the default) always, with repin = 2
 * when it starts as best effort, with repin = 1 never. Slurm 22.05 takes a shard job's GRES cleared and
 * typed anew (shard:gM:1) but never starts it on another index (seen on the local cluster: pending, reason
 * Resources, on an idle node), so it restarts on its first index (of any node). A whole-GPU job's pins can be
 * cleared and sent again where the engine puts it (it then runs there). Doing that for every restart
 * (repin = 1) doubled the requeues in the live benchmark: a reclaimed borrower took the next free GPUs as
 * best effort and was reclaimed again. A guaranteed start is never preempted, so repin = 2 pins it anew
 * where the policy puts it, and keeps a best-effort restart to its first indices; live it requeued more
 * too (its restarts reclaim), so it is not the default either (docs/deepshared.md). */
static int pinned_for_life(const daemon_t *d, const dslot_t *sl, int as_g)
{
    return sl->npin > 0 && (sl->shareable || d->cfg.repin == 0 || (d->cfg.repin == 2 && !as_g));
}

static int starts_g(const daemon_t *d, int32_t j) { return ds_engine_job(d->e, j)->klass == DS_CLASS_G; }

/* A colocation Slurm can honour: every resident of the job's GPUs runs on a shard. */
static int coloc_ok(const daemon_t *d, int32_t j)
{
    const ds_engine_t *e = d->e;
    const int32_t *g = ds_engine_job_gpus(e, j);
    int shared = 0, ok = d->slot[j].shareable;
    for (int32_t i = 0; i < ds_engine_job(e, j)->nplaced; i++) {
        const ds_gpu_t *gp = ds_engine_gpu(e, g[i]);
        if (gp->nres > 1) shared = 1;
        for (int32_t r = 0; r < gp->nres; r++) ok &= d->slot[gp->res[r]].shareable;
    }
    return !shared || ok;
}

/* Up to n GPUs of node m, lowest index first, that hold nothing but job j and where Slurm would run it (of its
 * pinned indices only, with pinned): engine indices into tgt, node indices into idx; how many. */
static int lowest_free(const daemon_t *d, int32_t j, int32_t m, int n, int pinned, int32_t *tgt, int *idx)
{
    const ds_engine_t *e = d->e;
    const dslot_t *sl = &d->slot[j];
    char w[160];
    int k = 0;
    for (int c = 0; c < e->nodes[m].ngpus && k < n; c++) {
        int mine = !pinned;
        for (int i = 0; !mine && i < sl->npin; i++) mine = sl->pin[i] == c;
        const ds_gpu_t *gp = ds_engine_gpu(e, e->nodes[m].gpu0 + c);
        if (!mine || gp->nres > 1 || (gp->nres == 1 && gp->res[0] != j) || gpumap_refuses(d, j, m, c, w, sizeof w)) continue;
        tgt[k] = e->nodes[m].gpu0 + c;
        idx[k++] = c;
    }
    return k;
}

/* Moves an unshared start to n GPUs of some node that hold nothing but this job and where Slurm would
 * start it (its indices when it is pinned for life); 1 when moved (node and idx updated). */
static int move_where_slurm_starts(daemon_t *d, int32_t j, int32_t *node, int *idx, int n, const char *why)
{
    ds_engine_t *e = d->e;
    dslot_t *sl = &d->slot[j];
    for (int32_t m = 0; m < d->nnodes; m++) {
        int32_t tgt[SL_MAX_GPUS];
        int c2[SL_MAX_GPUS], k = lowest_free(d, j, m, n, pinned_for_life(d, sl, starts_g(d, j)), tgt, c2);
        if (k < n || (m != *node && !ds_engine_node_fits(e, m, j))) continue;
        if (ds_engine_move(e, j, tgt) != DS_OK) continue;
        dlog(1, "job %u: %s; placed on %s GPU %d%s instead", sl->id, why, d->nodes[m].name, c2[0], n > 1 ? "+" : "");
        d->shard_moves += sl->shareable;
        *node = m;
        for (int i = 0; i < n; i++) idx[i] = c2[i];
        return 1;
    }
    return 0;
}

/* Keeps a start off GPUs where Slurm would not run it (gpu_refuses): the job moves to free GPUs of a
 * node where Slurm would (its pinned indices when it has them); an unpinned shard job alone on a GPU
 * without shards takes the whole GPU instead (it can never share then); otherwise the start is taken
 * back and the job waits, with the reason in explain. Returns 0 when taken back. */
static int place_where_slurm_starts(daemon_t *d, int32_t j, int32_t *node, int *idx, int n)
{
    ds_engine_t *e = d->e;
    dslot_t *sl = &d->slot[j];
    char why[160];
    const char *r = NULL;
    for (int i = 0; i < n && !r; i++) r = gpumap_refuses(d, j, *node, idx[i], why, sizeof why);
    if (!r) return 1;
    if (!ds_engine_job(e, j)->shared && move_where_slurm_starts(d, j, node, idx, n, why)) return 1;
    if (n == 1 && !ds_engine_job(e, j)->shared) {
        char w2[160];
        int g = *node * d->gpn + idx[0];
        if (sl->shareable && sl->npin == 0 && d->shardless[g] && ds_engine_gpu(e, e->nodes[*node].gpu0 + idx[0])->nres == 1) {
            /* the GPU itself works, only its shards are gone */
            sl->shareable = 0;
            if (!gpumap_refuses(d, j, *node, idx[0], w2, sizeof w2)) {
                sl->whole = 1;
                d->shard_moves++;
                snprintf(sl->why, sizeof sl->why, "GPU %.32s:g%d had lost its shards after a slurmctld restart: runs on the "
                         "whole GPU, so it can never share one", d->nodes[*node].name, idx[0]);
                dlog(1, "job %u: %s; takes the whole GPU", sl->id, why);
                return 1;
            }
            sl->shareable = 1;
        }
    }
    snprintf(sl->why, sizeof sl->why, "%s", why);
    sl->undo = 1;
    return 0;
}

/* Whether slot j was requeued by us less than D_REQUEUE_SETTLE seconds before mono (its why says so):
 * seen in the soak, a job requeued and dispatched again 0.9 s later was killed by Slurm for good. */
static int settling(daemon_t *d, int32_t j, double mono)
{
    dslot_t *sl = &d->slot[j];
    double since = mono - sl->t_requeue;
    if (!(sl->t_requeue > 0 && since < D_REQUEUE_SETTLE)) return 0;
    snprintf(sl->why, sizeof sl->why,
             "requeued %.1f s ago: a start within %.0f s of a requeue is refused by slurmd (job credential "
             "revoked) and ends the job, so it waits", since, D_REQUEUE_SETTLE);
    return 1;
}

static void dispatch(daemon_t *d, int32_t j, int32_t other)
{
    ds_engine_t *e = d->e;
    if (settling(d, j, daemon_now_mono())) {
        /* requeued earlier in this same pass: held jobs never get here */
        d->slot[j].undo = 1;
        return;
    }
    const sl_job_t *sj = daemon_find_job(d, d->slot[j].id);
    if (sj && sj->held && sj->state == SL_PENDING) {
        /* requeued by us (or held while dispatched): release it first, or Slurm refuses the update */
        char e1[300];
        if (sl_restage(d->slot[j].id, d->cfg.staging, e1, sizeof e1)) dlog(1, "%s", e1);
    }
    if (!coloc_ok(d, j)) {
        d->coloc_refused++;
        snprintf(d->slot[j].why, sizeof d->slot[j].why,
                 "the policy chose to share a GPU with job %u, but only one-GPU jobs submitted without --gres can "
                 "share a GPU in Slurm 22.05 (shard)", other >= 0 ? d->slot[other].id : 0);
        d->slot[j].undo = 1;
        return;
    }
    const int32_t *g = ds_engine_job_gpus(e, j);
    int idx[SL_MAX_GPUS], n = ds_engine_job(e, j)->nplaced;
    int32_t node = ds_engine_gpu(e, g[0])->node;
    for (int i = 0; i < n; i++) idx[i] = g[i] - e->nodes[node].gpu0;
    dslot_t *sl = &d->slot[j];
    if (pinned_for_life(d, sl, starts_g(d, j))) {
        /* a pinned job can run again only on the GPU indices of its first dispatch (of any node): move it
         * there on the chosen node when they are free */
        int same = sl->npin == n;
        for (int i = 0; same && i < n; i++) same = sl->pin[i] == idx[i];
        if (!same) {
            int32_t tgt[SL_MAX_GPUS];
            int ok = sl->npin == n && !ds_engine_job(e, j)->shared;
            for (int i = 0; ok && i < n; i++) {
                ok = sl->pin[i] >= 0 && sl->pin[i] < e->nodes[node].ngpus;
                tgt[i] = e->nodes[node].gpu0 + (ok ? sl->pin[i] : 0);
            }
            char why[160];
            snprintf(why, sizeof why, "Slurm 22.05 can restart it only on GPU index %d (pinned at its first start)",
                     sl->pin[0]);
            if (ok && ds_engine_move(e, j, tgt) == DS_OK) {
                for (int i = 0; i < n; i++) idx[i] = sl->pin[i];
            } else if (!ok || !move_where_slurm_starts(d, j, &node, idx, n, why)) {
                /* busy here: on another node where those indices are free, else it waits */
                snprintf(sl->why, sizeof sl->why,
                         "Slurm 22.05 can restart it only on GPU index %d (pinned at its first start), busy on %s",
                         sl->pin[0], d->nodes[node].name);
                sl->undo = 1;
                return;
            }
        }
    }
    if (!place_where_slurm_starts(d, j, &node, idx, n)) return;
    /* a whole-GPU job pinned before and sent onto other indices now: its pins are cleared and sent anew */
    int same = sl->npin == n;
    for (int i = 0; same && i < n; i++) same = sl->pin[i] == idx[i];
    int repin = sl->npin > 0 && !same && !pinned_for_life(d, sl, starts_g(d, j));
    int be = ds_engine_job(e, j)->klass == DS_CLASS_BE;
    /* GPUs typed by model: n GPUs of the node's type, which Slurm picks (no pin); per-GPU types with the
     * model: pinned as index types with the node's model in the name */
    const char *gtype = gpumap_slurm_picks(d) ? d->tname[d->node_type[node]] : NULL;
    /* N GPUs of the node (untyped), which Slurm picks: asked once, as a requeued job keeps its request */
    /* not for a job that asked typed GPUs itself: 22.05 keeps its types after a clear and refuses an untyped
     * request beside them ("Invalid GRES specification (with and without type identification)") */
    int typed_ask = sj && sj->gres_gpus > sj->untyped_gpus;
    const char *any = !gtype && sl->npin == 0 && !sl->shareable && !typed_ask && gpumap_picks_whole(d) ? "" : NULL;
    if (any) {
        /* Slurm takes the lowest free indices: the engine holds those, so what it offers next is what is free */
        int32_t tgt[SL_MAX_GPUS];
        int c2[SL_MAX_GPUS];
        if (lowest_free(d, j, node, n, 0, tgt, c2) == n && memcmp(c2, idx, (size_t)n * sizeof *idx) &&
            ds_engine_move(e, j, tgt) == DS_OK)
            memcpy(idx, c2, (size_t)n * sizeof *idx);
    }
    int asked = any && sj && sj->untyped_gpus == n && sj->gres_gpus == n;
    const char *pmodel = d->model_pins ? d->tname[d->node_type[node]] : NULL;
    char ac[128], err[300];
    size_t off = (size_t)snprintf(ac, sizeof ac, "deepshare class=%s gres=%s%s%s pin=", be ? "BE" : "G",
                                  sl->shareable ? "shard" : "gpu", gtype ? ":" : "", gtype ? gtype : "");
    for (int i = 0; !gtype && !any && i < n && off < sizeof ac; i++)
        off += (size_t)snprintf(ac + off, sizeof ac - off, "%s%d", i ? "," : "", idx[i]);
    /* the fencing epoch of the leader that sent it (a deposed leader's late dispatch is told apart by it) */
    if (d->lease.epoch && off < sizeof ac) snprintf(ac + off, sizeof ac - off, " epoch=%lld", (long long)d->lease.epoch);
    /* a GRES asked at submit, or the pins of an earlier dispatch elsewhere, must go before the pin; a typed
     * request goes every time: 22.05 adds a new GRES request to the one a job has */
    int clear = repin || ((sl->npin == 0 || gtype) && !asked && sj && (sj->untyped_gpus > 0 || sj->gres_gpus > 0));
    double t0 = daemon_now_mono();
    /* pins the job has already (the same indices, or a shard job's for life) are not sent again */
    if (sl_dispatch(d->slot[j].id, be ? d->cfg.be_partition : d->cfg.g_partition, d->nodes[node].name, idx,
                    (sl->npin && !gtype && !repin) || asked ? 0 : n, d->slot[j].shareable, pmodel, gtype ? gtype : any, clear,
                    sj && sj->num_tasks == 0, ac,
                    (be ? 10000u : 20000u) - (uint32_t)DS_MIN(d->pass_dispatches, 9999), err, sizeof err)) {
        d->errors++;
        snprintf(d->slot[j].why, sizeof d->slot[j].why, "last dispatch failed: %.120s", err);
        d->slot[j].undo = 1;
        /* one line per job and error, not one per pass; Slurm refusing it D_FAILS_HOLD times in a row holds it */
        uint32_t h = 2166136261u;
        for (const char *p = err; *p; p++) h = (h ^ (uint8_t)*p) * 16777619u;
        if (!h) h = 1;
        if (h != sl->err_logged) dlog(0, "%s", err);
        sl->err_logged = h;
        if (++sl->fails >= D_FAILS_HOLD) {
            sl->fails = 0;
            sl->t_hold_until = daemon_now_mono() + D_FAIL_HOLD;
            dlog(0, "job %u: Slurm refused its dispatch %d times in a row (the error is logged above): held out of "
                 "the policy's pass for %.0f s", sl->id, D_FAILS_HOLD, D_FAIL_HOLD);
        }
        return;
    }
    sl->fails = 0;
    sl->err_logged = 0;
    d->slot[j].t_dispatch = daemon_now_mono();
    d->slot[j].t_decided = d->t_pass;
    if (!sl->whole) d->slot[j].why[0] = 0;
    sl->why_logged = 0;
    if ((sl->npin == 0 || repin) && !gtype && !any) {
        if (repin) d->repins++;
        sl->npin = (int8_t)n;
        for (int i = 0; i < n; i++) sl->pin[i] = (int8_t)idx[i];
    }
    d->dispatches++;
    /* the next dispatch of this pass a step lower: Slurm starts a partition's jobs by priority, so jobs sent to
     * one node start in the order the engine gave them its lowest free GPUs (gpumap_picks_whole) */
    d->pass_dispatches++;
    d->ten[d->trace.jobs[j].tenant].dispatched++;
    if (other >= 0) d->colocations++;
    dlog(1, "job %u -> %s %s GPU %d%s%s (%.1f ms)%s", d->slot[j].id, be ? d->cfg.be_partition : d->cfg.g_partition,
         d->nodes[node].name, idx[0], n > 1 ? "+" : "", d->slot[j].shareable ? " shard" : "",
         (d->slot[j].t_dispatch - t0) * 1e3, other >= 0 ? " shared" : "");
}

static int apply_decisions(daemon_t *d)
{
    ds_engine_t *e = d->e;
    char err[300];
    int nundo = 0, ndec;
    const ds_decision_t *decs = ds_engine_decisions(e, &ndec);
    for (int32_t i = 0; i < ndec; i++) {
        const ds_decision_t *dec = &decs[i];
        int32_t j = dec->job;
        switch (dec->type) {
        case DS_DEC_START:
            if (ds_engine_job(e, j)->status == DS_JS_RUNNING) dispatch(d, j, dec->other);
            nundo += d->slot[j].undo;
            break;
        case DS_DEC_PREEMPT: {
            if (d->slot[j].undo) break; /* never reached Slurm */
            const sl_job_t *sj = daemon_find_job(d, d->slot[j].id);
            int rc;
            if (sj && sj->state == SL_PENDING) {
                /* dispatched but not started yet: taking the dispatch back is enough */
                rc = sl_restage(d->slot[j].id, d->cfg.staging, err, sizeof err);
            } else if (sl_job_running(d->slot[j].id, err, sizeof err) == 0) {
                /* Slurm requeues a job that has ended as readily as a running one, and runs it again:
                 * this one ended (or is ending) since the last load, so it is left to finish. The
                 * engine took it for preempted; the state is rebuilt from Slurm at the next sync. */
                dlog(0, "job %u: not requeued: it ended in Slurm after the pass had read it", d->slot[j].id);
                d->ended_before_requeue++;
                d->need_rebuild = 1;
                snprintf(d->rebuild_why, sizeof d->rebuild_why, "job %u ended before its requeue", d->slot[j].id);
                break;
            } else if ((rc = daemon_grace_begin(d, j, sj, err, sizeof err)) == 0) {
                /* signalled: it checkpoints in its grace, and grace.c requeues it */
                d->ten[d->trace.jobs[j].tenant].preempted++;
                break;
            } else {
                if (rc < 0) dlog(0, "%s; requeued at once", err), d->errors++;
                /* (-1: slurmctld cannot say; the requeue then fails or lands as it would have) */
                rc = sl_requeue_hold(d->slot[j].id, err, sizeof err);
                if (!rc) d->slot[j].t_requeue = daemon_now_mono();
                /* a requeue of a job that had not started holds it anyway: release it in staging */
                if (rc && !sl_restage(d->slot[j].id, d->cfg.staging, err, sizeof err)) rc = 0;
            }
            if (rc) {
                dlog(0, "%s", err);
                d->errors++;
            } else {
                d->slot[j].requeued = 1;
                d->requeues++;
                d->ten[d->trace.jobs[j].tenant].preempted++;
                dlog(1, "job %u requeued (%s, reason %d)", d->slot[j].id,
                     ds_engine_job(e, j)->klass == DS_CLASS_BE ? "BE" : "G", dec->reason);
            }
            break;
        }
        case DS_DEC_PROMOTE:
            {
                char ac[128];
                size_t off = (size_t)snprintf(ac, sizeof ac, "deepshare class=G gres=%s pin=",
                                              d->slot[j].shareable ? "shard" : "gpu");
                for (int i = 0; i < d->slot[j].npin && off < sizeof ac; i++)
                    off += (size_t)snprintf(ac + off, sizeof ac - off, "%s%d", i ? "," : "", d->slot[j].pin[i]);
                if (d->lease.epoch && off < sizeof ac)
                    snprintf(ac + off, sizeof ac - off, " epoch=%lld", (long long)d->lease.epoch);
                if (sl_set_admin_comment(d->slot[j].id, ac, err, sizeof err)) dlog(0, "%s", err), d->errors++;
            }
            break;
        default: break;
        }
    }
    ds_engine_clear_decisions(e);
    ds_engine_clear_rate_changes(e);
    return nundo;
}

/* Logs (verbosity 1) why a job waits though the policy would start it (what: "start taken back", "held"),
 * once per reason and job until it is dispatched: it would otherwise wait without a line in the log. */
static void log_wait(daemon_t *d, int32_t j, const char *what)
{
    dslot_t *sl = &d->slot[j];
    uint32_t h = 2166136261u; /* FNV-1a without digits: "requeued 1.2 s ago" is one reason, not many */
    for (const char *p = sl->why; *p; p++)
        if (*p < '0' || *p > '9') h = (h ^ (uint8_t)*p) * 16777619u;
    if (h == 0) h = 1;
    if (h == sl->why_logged) return;
    sl->why_logged = h;
    dlog(1, "job %u: %s, waits: %s", sl->id, what, sl->why[0] ? sl->why : "(no reason recorded)");
}

/* A shard job pinned for life (Slurm 22.05 restarts it only on the GPU index of its first start) can start
 * only where that index is free, or shared with one shard job: somewhere now? When not, refused gets the
 * last reason a GPU refused it (gpu_refuses), if any. */
static int pins_open(daemon_t *d, int32_t j, char *refused, size_t n)
{
    const ds_engine_t *e = d->e;
    const dslot_t *sl = &d->slot[j];
    char w[160];
    refused[0] = 0;
    for (int32_t m = 0; m < d->nnodes; m++) {
        int ok = ds_engine_node_fits(e, m, j);
        for (int i = 0; ok && i < sl->npin; i++) {
            int c = sl->pin[i];
            if (c < 0 || c >= e->nodes[m].ngpus) ok = 0;
            else if (gpumap_refuses(d, j, m, c, w, sizeof w)) ok = 0, snprintf(refused, n, "%s", w);
            else {
                const ds_gpu_t *gp = ds_engine_gpu(e, e->nodes[m].gpu0 + c);
                ok = gp->nres == 0 || (sl->npin == 1 && sl->shareable && gp->nres == 1 && d->cfg.k > 1 &&
                                       d->slot[gp->res[0]].shareable);
            }
        }
        if (ok) return 1;
    }
    return 0;
}

/* Holds the pending jobs the daemon could not start this pass whatever the policy chose, and releases
 * the others: the policy then gives their GPUs to the next jobs instead of choosing them, seeing the
 * start taken back, and leaving the GPUs idle until the next pass. */
static void hold_unstartable(daemon_t *d)
{
    ds_engine_t *e = d->e;
    double mono = daemon_now_mono();
    int32_t n = 0;
    char refused[160];
    for (int32_t j = 0; j < d->nslots; j++) {
        if (ds_engine_job(e, j)->status != DS_JS_PENDING) continue;
        dslot_t *sl = &d->slot[j];
        int hold = 0;
        int gi = daemon_grace_find(d, sl->id);
        if (gi >= 0) {
            hold = 1;
            snprintf(sl->why, sizeof sl->why, "preempted %.1f s ago and signalled (%d) to checkpoint: still runs in "
                     "Slurm, requeued when it ends or after its grace of %.0f s", mono - d->grace[gi].t_signal,
                     d->grace[gi].sig, d->cfg.grace);
        } else if (settling(d, j, mono)) {
            hold = 1;
        } else if (sl->t_hold_until > mono) {
            hold = 1;
            snprintf(sl->why, sizeof sl->why, "Slurm refused its dispatch %d times in a row: held out of the policy's "
                     "pass for %.0f s more", D_FAILS_HOLD, sl->t_hold_until - mono);
        } else if (pinned_for_life(d, sl, 1) && !pins_open(d, j, refused, sizeof refused)) {
            /* pinned even as G: whatever class the pass gives it (with repin = 2 a whole-GPU job stays in) */
            hold = 1;
            if (refused[0]) snprintf(sl->why, sizeof sl->why, "%s", refused);
            else
                snprintf(sl->why, sizeof sl->why,
                         "Slurm 22.05 can restart it only on GPU index %d%s (pinned at its first start), busy on "
                         "every node: held out of the policy's pass until free", sl->pin[0], sl->npin > 1 ? "+" : "");
        }
        ds_engine_hold(e, j, hold);
        if (hold) log_wait(d, j, "held out of the policy's pass");
        n += hold;
    }
    d->nheld = n;
}

/* One pass: the policy decides, the daemon carries out what Slurm can do; a start it cannot is taken
 * back, its job held for the rest of the pass, and the policy runs again on what is left. */
void daemon_pass(daemon_t *d, int timer)
{
    ds_engine_t *e = d->e;
    if (!e) return;
    d->now = DS_MAX(d->now, (int64_t)time(NULL));
    d->passes++;
    d->pass_dispatches = 0;
    d->t_pass = daemon_now_mono();
    if (d->ngrace) daemon_grace_tick(d);
    hold_unstartable(d);
    ds_engine_schedule(e, d->now, timer);
    int held = 0;
    for (int round = 1;; round++) {
        if (!apply_decisions(d)) break;
        /* take back starts Slurm was not told about: the jobs wait again, with no preemption counted */
        for (int32_t j = 0; j < d->nslots; j++) {
            if (!d->slot[j].undo) continue;
            d->slot[j].undo = 0;
            if (ds_engine_job(e, j)->status != DS_JS_RUNNING) continue;
            ds_engine_cancel_start(e, j, d->now);
            ds_engine_hold(e, j, 1);
            d->slot[j].pass_hold = 1;
            held = 1;
            d->undone++;
            log_wait(d, j, "start taken back");
        }
        ds_engine_clear_decisions(e);
        ds_engine_clear_rate_changes(e);
        if (round == D_PASS_ROUNDS) break;
        ds_engine_schedule(e, d->now, 0);
    }
    for (int32_t j = 0; held && j < d->nslots; j++)
        if (d->slot[j].pass_hold) {
            d->slot[j].pass_hold = 0;
            ds_engine_hold(e, j, 0);
        }
}

/* Shows the policy's order in squeue, whatever the policy: the first D_PRIO_RANKS pending jobs of its order
 * (ds_engine_pending_order) get priorities 2000, 1999, ... in that order, the others 1000. Staging is
 * down, so this orders nothing in Slurm itself; a job is updated only when its priority changes. */
#define D_PRIO_RANKS 100
void daemon_show_priorities(daemon_t *d)
{
    char err[300];
    int32_t ord[D_PRIO_RANKS];
    int32_t n = DS_MIN(ds_engine_pending_order(d->e, ord, D_PRIO_RANKS), D_PRIO_RANKS);
    int16_t *rank = ds_xmalloc((size_t)(d->nslots ? d->nslots : 1) * sizeof *rank);
    for (int32_t s = 0; s < d->nslots; s++) rank[s] = -1;
    for (int32_t k = 0; k < n; k++)
        if (ord[k] < d->nslots) rank[ord[k]] = (int16_t)k;
    for (int i = 0; i < d->nsj; i++) {
        const sl_job_t *j = &d->sj[i];
        if (j->state != SL_PENDING || j->held || strcmp(j->partition, d->cfg.staging)) continue;
        int32_t s = daemon_slot_of(d, j->id);
        if (s < 0 || ds_engine_job(d->e, s)->status != DS_JS_PENDING) continue;
        uint32_t want = rank[s] >= 0 ? 2000 - (uint32_t)rank[s] : 1000;
        if (j->priority == want) continue;
        if (sl_set_priority(j->id, want, err, sizeof err)) dlog(1, "%s", err);
    }
    free(rank);
}
