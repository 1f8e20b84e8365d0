/* slurm_fit.c: "would the job fit if these running jobs were gone": scratch free-GPU counts per node on
 * top of the engine's, for the will-run estimate of backfill and the victim search of preemption. Only
 * nodes whose count grew can newly fit a job that did not fit before, so a test looks at those (single
 * node jobs) or keeps a count of wholly free nodes (jobs over a node). CPUs are not simulated: the
 * production models give a job CPUs in proportion to its GPUs, so freed GPUs free their CPUs too. */
#include "slurm_internal.h"

#include <string.h>

int64_t slm_sfree(slm_state_t *s, int32_t n)
{
    if (s->nstamp[n] != s->cur) {
        s->nstamp[n] = s->cur;
        s->nfree[n] = s->e->nodes[n].nfree;
    }
    return s->nfree[n];
}

static int allowed(const slm_fit_t *f, int32_t n) { return !f->blocked || !f->blocked[n]; }

void slm_fit_begin(slm_state_t *s, slm_fit_t *f, int32_t job, int32_t part, const uint8_t *blocked)
{
    if (++s->cur == 0) {
        memset(s->nstamp, 0, (size_t)s->e->nnodes * sizeof *s->nstamp);
        s->cur = 1;
    }
    const ds_engine_t *e = s->e;
    memset(f, 0, sizeof *f);
    f->job = job;
    f->part = part;
    f->need = e->trace->jobs[job].gpus;
    f->gpn = e->cfg.gpus_per_node;
    f->whole = f->need > f->gpn ? f->need / f->gpn : 0;
    f->rem = f->need > f->gpn ? f->need % f->gpn : 0;
    f->blocked = blocked;
    if (f->whole) {
        const ds_part_t *P = &e->parts[part];
        for (int32_t n = P->node0; n < P->node0 + P->nnodes; n++)
            if (allowed(f, n) && e->nodes[n].nfree == f->gpn) f->full++;
    }
}

void slm_fit_free_job(slm_state_t *s, slm_fit_t *f, int32_t r)
{
    const ds_engine_t *e = s->e;
    const int32_t *g = ds_engine_job_gpus(e, r);
    int32_t ng = e->js[r].nplaced;
    for (int32_t i = 0; i < ng; i++) {
        int32_t n = e->gpus[g[i]].node;
        int64_t before = slm_sfree(s, n);
        s->nfree[n] = before + 1;
        if (!allowed(f, n)) continue;
        if (f->whole && s->nfree[n] == f->gpn) f->full++;
        if (before == e->nodes[n].nfree) s->touched[f->ntouched++] = n; /* first growth of this node */
    }
}

/* Best node for a single-node job among the grown ones: the fullest that fits, lowest index. */
static int32_t best_grown(slm_state_t *s, const slm_fit_t *f)
{
    int32_t best = -1;
    for (int32_t i = 0; i < f->ntouched; i++) {
        int32_t n = s->touched[i];
        int64_t fr = s->nfree[n];
        if (fr < f->need) continue;
        if (best < 0 || fr < s->nfree[best] || (fr == s->nfree[best] && n < best)) best = n;
    }
    return best;
}

int slm_fit_ok(slm_state_t *s, const slm_fit_t *f)
{
    if (!f->whole) return best_grown(s, f) >= 0;
    if (f->full < f->whole) return 0;
    if (!f->rem || f->full > f->whole) return 1;
    const ds_part_t *P = &s->e->parts[f->part];
    for (int32_t n = P->node0; n < P->node0 + P->nnodes; n++)
        if (allowed(f, n) && slm_sfree(s, n) >= f->rem && slm_sfree(s, n) < f->gpn) return 1;
    return 0;
}

int32_t slm_fit_nodes(slm_state_t *s, const slm_fit_t *f, int32_t *nodes)
{
    if (!f->whole) {
        int32_t b = best_grown(s, f);
        if (b < 0) return 0;
        nodes[0] = b;
        return 1;
    }
    /* whole free nodes in index order, the remainder on the node with the most free GPUs */
    const ds_part_t *P = &s->e->parts[f->part];
    int32_t k = 0, rem_node = -1;
    for (int32_t n = P->node0; n < P->node0 + P->nnodes && k < f->whole; n++)
        if (allowed(f, n) && slm_sfree(s, n) == f->gpn) nodes[k++] = n;
    if (k < f->whole) return 0;
    if (f->rem) {
        for (int32_t n = P->node0; n < P->node0 + P->nnodes; n++) {
            if (!allowed(f, n) || slm_sfree(s, n) < f->rem) continue;
            int used = 0;
            for (int32_t i = 0; i < k && !used; i++) used = nodes[i] == n;
            if (!used && (rem_node < 0 || slm_sfree(s, n) > slm_sfree(s, rem_node))) rem_node = n;
        }
        if (rem_node < 0) return 0;
        nodes[k++] = rem_node;
    }
    return k;
}
