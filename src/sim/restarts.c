/* restarts.c: the live Slurm cluster's restart rules in the simulator -- a requeued job restarts only on the
 * GPU indices of its first start (every job, pinned = 1; one-GPU jobs only, pinned = 2: deepshared's shard
 * jobs, since it sends a whole-GPU job's pins anew; pinned = 3: a restart as best effort only, one as
 * guaranteed is pinned anew where the policy puts it, deepshared's repin = 2), and not within a settle time
 * of its requeue -- carried
 * out as deepshared carries them out (hold, move, take back), so that a simulated schedule pays what a live
 * one pays. */
#include "restarts.h"

#include "deepshare/common.h"

#include <stdlib.h>
#include <string.h>

#define R_MAX_PIN 64 /* pins kept per job; a job of more GPUs than a node has is never pinned (it spans nodes) */

struct sim_restarts {
    int pinned;
    int64_t settle;
    int32_t njobs;
    int16_t *npin;       /* per job: pinned indices (0: none yet), in pin[off[j] ..] */
    int64_t *off;
    int16_t *pin;
    int64_t npool, cappool;
    int64_t *requeued;   /* per job: time of its last requeue, -1 */
    uint8_t *skip;       /* taken back in the last check */
    uint8_t *pass_hold;  /* held for the rest of this pass */
    int32_t *pend;       /* jobs requeued at least once and not finished: the only ones these rules hold */
    int32_t npend;
    uint8_t *in_pend;
    int64_t taken_back;
};

sim_restarts_t *sim_restarts_create(const ds_engine_t *e, int pinned, int64_t settle)
{
    sim_restarts_t *r = ds_xcalloc(1, sizeof *r);
    int32_t n = (int32_t)e->trace->njobs;
    r->pinned = pinned;
    r->settle = settle > 0 ? settle : 0;
    r->njobs = n;
    r->npin = ds_xcalloc((size_t)n + 1, sizeof *r->npin);
    r->off = ds_xcalloc((size_t)n + 1, sizeof *r->off);
    r->requeued = ds_xmalloc(((size_t)n + 1) * sizeof *r->requeued);
    for (int32_t j = 0; j < n; j++) r->requeued[j] = -1;
    r->skip = ds_xcalloc((size_t)n + 1, 1);
    r->pass_hold = ds_xcalloc((size_t)n + 1, 1);
    r->pend = ds_xmalloc(((size_t)n + 1) * sizeof *r->pend);
    r->in_pend = ds_xcalloc((size_t)n + 1, 1);
    return r;
}

void sim_restarts_destroy(sim_restarts_t *r)
{
    if (!r) return;
    free(r->npin);
    free(r->off);
    free(r->pin);
    free(r->requeued);
    free(r->skip);
    free(r->pass_hold);
    free(r->pend);
    free(r->in_pend);
    free(r);
}

static int cmp_i16(const void *a, const void *b)
{
    return *(const int16_t *)a - *(const int16_t *)b;
}

/* The job's GPU indices on its node, sorted, into idx; their count. */
static int32_t indices_of(const ds_engine_t *e, int32_t j, int16_t *idx)
{
    const int32_t *g = ds_engine_job_gpus(e, j);
    int32_t n = DS_MIN(ds_engine_job(e, j)->nplaced, R_MAX_PIN);
    for (int32_t i = 0; i < n; i++) idx[i] = (int16_t)(g[i] - e->nodes[e->gpus[g[i]].node].gpu0);
    qsort(idx, (size_t)n, sizeof *idx, cmp_i16);
    return n;
}

/* Whether job j (running or pending) can have its pinned indices on node m: each exists there and holds no
 * job but j itself. Fills gpus with those GPUs. */
static int pins_free_on(const sim_restarts_t *r, const ds_engine_t *e, int32_t j, int32_t m, int32_t *gpus)
{
    const ds_node_t *nd = &e->nodes[m];
    for (int32_t i = 0; i < r->npin[j]; i++) {
        int32_t c = r->pin[r->off[j] + i];
        if (c >= nd->ngpus) return 0;
        const ds_gpu_t *g = &e->gpus[nd->gpu0 + c];
        if (g->nres > 1 || (g->nres == 1 && g->res[0] != j)) return 0;
        gpus[i] = nd->gpu0 + c;
    }
    return 1;
}

static int settling(const sim_restarts_t *r, int32_t j, int64_t now)
{
    return r->settle > 0 && r->requeued[j] >= 0 && now < r->requeued[j] + r->settle;
}

/* A pinned pending job that fits on no node with its indices free (in its partition's nodes). */
static int pins_closed(const sim_restarts_t *r, const ds_engine_t *e, int32_t j)
{
    /* pinned = 3: whether it restarts as G (anywhere) or BE (on its pins) is the pass's to say */
    if (!r->pinned || r->npin[j] == 0 || r->pinned == 3) return 0;
    int32_t gpus[R_MAX_PIN];
    const ds_part_t *p = &e->parts[ds_engine_job(e, j)->part];
    for (int32_t m = p->node0; m < p->node0 + p->nnodes; m++)
        if (ds_engine_node_fits(e, m, j) && pins_free_on(r, e, j, m, gpus)) return 0;
    return 1;
}

void sim_restarts_hold(sim_restarts_t *r, ds_engine_t *e, int64_t now)
{
    for (int32_t k = 0; k < r->npend; k++) {
        int32_t j = r->pend[k];
        const ds_jstate_t *s = ds_engine_job(e, j);
        if (s->status == DS_JS_DONE) {
            r->in_pend[j] = 0;
            r->pend[k--] = r->pend[--r->npend];
            continue;
        }
        if (s->status != DS_JS_PENDING) continue;
        int hold = settling(r, j, now) || pins_closed(r, e, j);
        if (hold != s->held) ds_engine_hold(e, j, hold);
    }
}

/* Carries out one start of a pinned job on its indices: where the policy put it, else moved; 0 when
 * neither (taken back by the caller). */
static int place_on_pins(sim_restarts_t *r, ds_engine_t *e, int32_t j)
{
    int16_t idx[R_MAX_PIN];
    int32_t n = indices_of(e, j, idx), gpus[R_MAX_PIN];
    if (n != r->npin[j]) return 0;
    if (!memcmp(idx, &r->pin[r->off[j]], (size_t)n * sizeof *idx)) return 1;
    if (ds_engine_job(e, j)->shared) return 0;
    int32_t home = e->gpus[ds_engine_job_gpus(e, j)[0]].node;
    const ds_part_t *p = &e->parts[ds_engine_job(e, j)->part];
    if (pins_free_on(r, e, j, home, gpus) && ds_engine_move(e, j, gpus) == DS_OK) return 1;
    for (int32_t m = p->node0; m < p->node0 + p->nnodes; m++)
        if (m != home && ds_engine_node_fits(e, m, j) && pins_free_on(r, e, j, m, gpus) &&
            ds_engine_move(e, j, gpus) == DS_OK)
            return 1;
    return 0;
}

int32_t sim_restarts_check(sim_restarts_t *r, ds_engine_t *e, int64_t now)
{
    int32_t nd, undone = 0;
    const ds_decision_t *dec = ds_engine_decisions(e, &nd);
    memset(r->skip, 0, (size_t)r->njobs);
    for (int32_t i = 0; i < nd; i++) {
        int32_t j = dec[i].job;
        const ds_jstate_t *s = ds_engine_job(e, j);
        if (dec[i].type == DS_DEC_PREEMPT) {
            r->requeued[j] = now;
            if (!r->in_pend[j]) r->in_pend[j] = 1, r->pend[r->npend++] = j;
            continue;
        }
        if (dec[i].type != DS_DEC_START || s->status != DS_JS_RUNNING || r->skip[j]) continue;
        /* a start the job's later decisions in this pass undid is not this start's concern */
        int later = 0;
        for (int32_t k = i + 1; k < nd && !later; k++) later = dec[k].job == j;
        if (later) continue;
        int ok = !settling(r, j, now);
        if (ok && r->pinned) {
            if (r->npin[j] > 0 && r->pinned == 3 && s->klass == DS_CLASS_G) {
                /* a guaranteed restart is never preempted again: pinned anew where the policy put it (the
                 * same job: as many indices as its first start's) */
                int16_t idx[R_MAX_PIN];
                if (indices_of(e, j, idx) == r->npin[j]) memcpy(&r->pin[r->off[j]], idx, (size_t)r->npin[j] * sizeof *idx);
            } else if (r->npin[j] == 0) {
                /* its first start: the indices Slurm will keep (a job over R_MAX_PIN GPUs stays unpinned;
                 * with pinned = 2 only a one-GPU job, deepshared's shard job, is pinned for life) */
                if (s->nplaced <= R_MAX_PIN && (r->pinned != 2 || s->nplaced == 1)) {
                    int16_t idx[R_MAX_PIN];
                    int32_t n = indices_of(e, j, idx);
                    if (r->npool + n > r->cappool) {
                        r->cappool = DS_MAX(r->cappool * 2, r->npool + n + 256);
                        r->pin = ds_xrealloc(r->pin, (size_t)r->cappool * sizeof *r->pin);
                    }
                    r->off[j] = r->npool;
                    memcpy(&r->pin[r->npool], idx, (size_t)n * sizeof *idx);
                    r->npool += n;
                    r->npin[j] = (int16_t)n;
                }
            } else {
                ok = place_on_pins(r, e, j);
            }
        }
        if (ok) continue;
        ds_engine_cancel_start(e, j, now);
        ds_engine_hold(e, j, 1);
        r->pass_hold[j] = 1;
        r->skip[j] = 1;
        undone++;
    }
    r->taken_back += undone;
    return undone;
}

int sim_restarts_skipped(const sim_restarts_t *r, int32_t job)
{
    return r->skip[job];
}

void sim_restarts_end_pass(sim_restarts_t *r, ds_engine_t *e)
{
    for (int32_t k = 0; k < r->npend; k++) {
        int32_t j = r->pend[k];
        if (!r->pass_hold[j]) continue;
        r->pass_hold[j] = 0;
        if (ds_engine_job(e, j)->status == DS_JS_PENDING) ds_engine_hold(e, j, 0);
    }
}

int64_t sim_restarts_next(const sim_restarts_t *r, int64_t now)
{
    int64_t t = DS_TIME_NEVER;
    if (r->settle <= 0) return t;
    for (int32_t k = 0; k < r->npend; k++) {
        int64_t u = r->requeued[r->pend[k]] + r->settle;
        if (u > now && u < t) t = u;
    }
    return t;
}

int64_t sim_restarts_taken_back(const sim_restarts_t *r)
{
    return r->taken_back;
}
