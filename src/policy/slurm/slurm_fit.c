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

static int allowed(const slm_state_t *s, const slm_fit_t *f, int32_t n)
{
    if (f->blocked && f->blocked[n]) return 0;
    return !f->tmask || ((f->tmask >> s->e->nodes[n].gtype) & 1u);
}

/* A wholly free allowed node joins the counts. */
static void count_full(const slm_state_t *s, slm_fit_t *f, int32_t n)
{
    f->full++;
    if (f->typed) f->fullt[s->e->nodes[n].gtype]++;
}

/* An allowed node that could hold the remainder but is not wholly free: free GPUs in rem .. gpn - 1. */
static int is_partial(const slm_fit_t *f, int64_t fr) { return f->rem && fr >= f->rem && fr < f->gpn; }

static void count_partial(const slm_state_t *s, slm_fit_t *f, int32_t n, int32_t d)
{
    f->partial += d;
    if (f->typed) f->partialt[s->e->nodes[n].gtype] += d;
}

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
    f->typed = e->ntypes > 1;
    f->tmask = f->typed ? e->trace->jobs[job].gmask : 0;
    if (f->whole) {
        const ds_part_t *P = &e->parts[part];
        for (int32_t n = P->node0; n < P->node0 + P->nnodes; n++)
            if (allowed(s, f, n)) {
                if (e->nodes[n].nfree == f->gpn) count_full(s, f, n);
                else if (is_partial(f, e->nodes[n].nfree)) count_partial(s, f, n, 1);
            }
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
        if (!allowed(s, f, n)) continue;
        if (f->whole && s->nfree[n] == f->gpn) count_full(s, f, n);
        if (f->whole && is_partial(f, before) != is_partial(f, before + 1)) count_partial(s, f, n, is_partial(f, before) ? -1 : 1);
        if (!f->whole && s->nfree[n] >= f->need) f->single_ok = 1;
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

/* Whether the job fits over several nodes of a range (allowed nodes there wholly free: full, with room for
 * the remainder only: partial). */
static int multi_fits(const slm_fit_t *f, int32_t full, int32_t partial)
{
    if (full < f->whole) return 0;
    return !f->rem || full > f->whole || partial > 0;
}

/* The type a multi-node job fits on first (type order), -1: none (several GPU types only). */
static int32_t multi_type(slm_state_t *s, const slm_fit_t *f)
{
    const ds_part_t *P = &s->e->parts[f->part];
    for (int32_t t = 0; t < s->e->ntypes; t++)
        if (P->tnnodes[t] > 0 && (!f->tmask || ((f->tmask >> t) & 1u)) &&
            multi_fits(f, f->fullt[t], f->partialt[t]))
            return t;
    return -1;
}

int slm_fit_ok(slm_state_t *s, const slm_fit_t *f)
{
    if (!f->whole) return f->single_ok;
    if (f->typed) return multi_type(s, f) >= 0;
    return multi_fits(f, f->full, f->partial);
}

int32_t slm_fit_nodes(slm_state_t *s, const slm_fit_t *f, int32_t *nodes)
{
    if (!f->whole) {
        int32_t b = best_grown(s, f);
        if (b < 0) return 0;
        nodes[0] = b;
        return 1;
    }
    /* whole free nodes in index order, the remainder on the node with the most free GPUs (on the first type
     * that fits, on several GPU types) */
    const ds_part_t *P = &s->e->parts[f->part];
    int32_t lo = P->node0, hi = P->node0 + P->nnodes;
    if (f->typed) {
        int32_t t = multi_type(s, f);
        if (t < 0) return 0;
        lo = P->tnode0[t], hi = P->tnode0[t] + P->tnnodes[t];
    }
    int32_t k = 0, rem_node = -1;
    for (int32_t n = lo; n < hi && k < f->whole; n++)
        if (allowed(s, f, n) && slm_sfree(s, n) == f->gpn) nodes[k++] = n;
    if (k < f->whole) return 0;
    if (f->rem) {
        for (int32_t n = lo; n < hi; n++) {
            if (!allowed(s, f, n) || slm_sfree(s, n) < f->rem) continue;
            int used = 0;
            for (int32_t i = 0; i < k && !used; i++) used = nodes[i] == n;
            if (!used && (rem_node < 0 || slm_sfree(s, n) > slm_sfree(s, rem_node))) rem_node = n;
        }
        if (rem_node < 0) return 0;
        nodes[k++] = rem_node;
    }
    return k;
}
