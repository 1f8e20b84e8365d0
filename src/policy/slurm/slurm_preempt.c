/* slurm_preempt.c: preempt/qos with PreemptMode=REQUEUE: which running jobs a job of QOS normal stops.
 *
 * Candidates (slurm_find_preemptable_jobs, src/slurmctld/preempt.c): running jobs of a QOS the
 * preemptor's QOS lists (normal lists borrow), not exempt (PreemptExemptTime: run less than that since
 * their start), on the preemptor's nodes; sorted by preempt_qos.c's priority, QOS priority << 16 plus the
 * job's node count, lowest first (the smaller job goes first), ties in job-list order (submission), or
 * youngest start first with preempt_youngest_first. The victims (_run_now in
 * src/plugins/select/cons_common/job_test.c): candidates are removed from a simulated cluster one at a
 * time until the job fits; then the list is re-ordered to preempt fewer jobs (the last one removed first,
 * then those on the nodes the job got, by how many of those nodes they hold; strict_order: only the last
 * one moves) and searched again, reorder_count times; the victims are the removed candidates on the nodes
 * the job gets. A job of QOS normal is never a candidate: slm_requeue counts one as a broken invariant. */
#include "slurm_internal.h"

#include <stdlib.h>
#include <string.h>

static int64_t cand_key(const slm_state_t *s, int32_t j)
{
    if (s->cfg.youngest_first) return -s->e->js[j].last_start;
    int32_t qp = s->qos[j] == SLM_QOS_NORMAL ? s->cfg.qos_prio_normal : s->cfg.qos_prio_borrow;
    int64_t g = s->e->trace->jobs[j].gpus, gpn = s->e->cfg.gpus_per_node;
    return ((int64_t)DS_MIN(qp, 0xffff) << 16) + (g + gpn - 1) / gpn;
}

typedef struct ckey {
    int64_t key;
    int32_t job;
} ckey_t;

static int ckey_cmp(const void *a, const void *b)
{
    const ckey_t *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->job > y->job) - (x->job < y->job);
}

/* By key, ties in job-list order (trace index): one sort on (key, job), which is what a stable sort by key
 * of the list in job order gives, in n log n (there may be thousands of candidates at 10,000 GPUs). */
static void sort_cands(const slm_state_t *s, int32_t *c, int32_t n)
{
    ckey_t *k = ds_xmalloc((size_t)n * sizeof *k);
    for (int32_t i = 0; i < n; i++) k[i] = (ckey_t){cand_key(s, c[i]), c[i]};
    qsort(k, (size_t)n, sizeof *k, ckey_cmp);
    for (int32_t i = 0; i < n; i++) c[i] = k[i].job;
    free(k);
}

static int on_nodes(const slm_state_t *s, int32_t j, const int32_t *nodes, int32_t nn)
{
    const ds_engine_t *e = s->e;
    const int32_t *g = ds_engine_job_gpus(e, j);
    int hits = 0;
    for (int32_t i = 0; i < e->js[j].nplaced; i++)
        for (int32_t k = 0; k < nn; k++)
            if (e->gpus[g[i]].node == nodes[k]) {
                hits++;
                break;
            }
    return hits;
}

int32_t slm_find_victims(ds_engine_t *e, slm_state_t *s, int32_t job, const uint8_t *blocked, int64_t now,
                        int32_t *victims)
{
    int32_t part = e->js[job].part, nc = 0;
    const slm_list_t *r = &s->parts[part].run;
    int32_t *c = s->cand;
    for (int32_t i = 0; i < r->n; i++) {
        int32_t j = r->job[i];
        if (r->stamp[i] != s->rstamp[j] || !slm_preemptable(s, j, now)) continue;
        if (s->typed && !ds_engine_type_ok(e, job, s->jtype[j])) continue; /* on a type the job does not take */
        if (blocked) { /* a candidate with no allowed node cannot make room */
            const int32_t *g = ds_engine_job_gpus(e, j);
            int any = 0;
            for (int32_t k = 0; k < e->js[j].nplaced && !any; k++) any = !blocked[e->gpus[g[k]].node];
            if (!any) continue;
        }
        c[nc++] = j;
    }
    if (!nc) return 0;
    /* job-list order (submission, i.e. trace order) under the preemption priority */
    sort_cands(s, c, nc);
    int32_t nodes[4096], nn = 0, upto = -1;
    for (int32_t pass = 0;;) {
        slm_fit_t f;
        slm_fit_begin(s, &f, job, part, blocked);
        upto = -1;
        for (int32_t i = 0; i < nc; i++) {
            slm_fit_free_job(s, &f, c[i]);
            if (slm_fit_ok(s, &f)) {
                upto = i;
                break;
            }
        }
        if (upto < 0) return 0;
        nn = slm_fit_nodes(s, &f, nodes);
        if (nn == 0) return 0;
        if (pass++ > s->cfg.reorder_count || nc <= pass) break;
        int32_t last = c[upto];
        if (s->cfg.strict_order) {
            memmove(&c[1], &c[0], (size_t)upto * sizeof *c);
            c[0] = last;
        } else {
            /* usable nodes: the last victim first (99999), then those before it by their nodes among the
             * job's, the rest 0; a stable sort, highest first */
            int32_t *u = s->usable;
            for (int32_t i = 0; i < nc; i++) u[i] = i < upto ? on_nodes(s, c[i], nodes, nn) : i == upto ? 99999 : 0;
            for (int32_t i = 1; i < nc; i++) {
                int32_t x = c[i], ux = u[i], k = i;
                while (k > 0 && u[k - 1] < ux) c[k] = c[k - 1], u[k] = u[k - 1], k--;
                c[k] = x, u[k] = ux;
            }
        }
    }
    int32_t nv = 0;
    for (int32_t i = 0; i <= upto; i++)
        if (on_nodes(s, c[i], nodes, nn)) victims[nv++] = c[i];
    return nv;
}

int slm_preempt_for(ds_engine_t *e, slm_state_t *s, int32_t job, const int32_t *victims, int32_t nv, int64_t now,
                   int by_backfill)
{
    int32_t part = e->js[job].part;
    if (s->cfg.grace_time > 0) {
        /* GraceTime: the victims get SIGTERM now and are requeued when it runs out; the job waits */
        for (int32_t i = 0; i < nv; i++) s->stop_at[victims[i]] = now + s->cfg.grace_time;
        s->stop_at[job] = now + s->cfg.grace_time;
        s->reason[job] = SLM_W_PREEMPTING;
        slm_want_pass(s, part, now + s->cfg.grace_time);
        return 0;
    }
    for (int32_t i = 0; i < nv; i++) slm_requeue(e, s, victims[i], now);
    /* the victims' GPUs hold the job now (a requeued job's are free at once: SPEC's restart overhead
     * stands for the stop and the restart) */
    const uint8_t *blocked = by_backfill ? s->blocked : NULL;
    if (!ds_engine_find_free_masked(e, job, part, blocked, s->gbuf)) return 0;
    slm_start(e, s, job, s->gbuf, now, by_backfill);
    return 1;
}
