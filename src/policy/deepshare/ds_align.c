/* ds_align.c: which node's free GPUs a job of less than a node takes (docs/policy.md §4, "End-aligned
 * placement"): the fullest node whose residents are predicted to run at least as long as the job, so that
 * the job delays no node's becoming wholly free; where no node is such, the fullest node (the engine's
 * consolidated rule). Below the stages; calls ds_types.c and ds_estimate.c. */
#include "ds_internal.h"

/* Whether every resident of the node is predicted to end no earlier than `end`; a node without residents
 * never is (the job would be what keeps it from being wholly free). */
static int outlasted(const ds_engine_t *e, const dsp_t *s, int32_t node, int64_t now, double end)
{
    const ds_node_t *nd = &e->nodes[node];
    double busy = -1;
    for (int32_t gi = nd->gpu0; gi < nd->gpu0 + nd->ngpus && busy < end; gi++)
        for (int32_t r = 0; r < e->gpus[gi].nres && busy < end; r++) {
            double at = (double)now + dsp_remaining(e, s, e->gpus[gi].res[r], now);
            if (at > busy) busy = at;
        }
    return busy >= end;
}

int dsp_take_free(const ds_engine_t *e, dsp_t *s, int32_t j, int32_t part, uint8_t *blocked, int64_t now, int32_t *out)
{
    int32_t g = e->trace->jobs[j].gpus;
    /* Several GPU types choose by type first (ds_types.c); a job of a whole node or more takes whole nodes. */
    if (!s->cfg.align_ends || !s->cfg.prediction || s->typed || s->type_aware || g >= e->cfg.gpus_per_node)
        return dsp_find_free(e, s, j, part, blocked, out);
    /* The engine's consolidated rule gives the fullest node that fits; a node whose residents would end
     * before j is set aside (marked in the mask, as a reservation's nodes are) and the next fullest tried,
     * until one outlasts j or only nodes with no resident remain. */
    uint8_t *mask = blocked ? blocked : s->align_mask;
    double end = (double)now + dsp_remaining(e, s, j, now);
    int32_t nset = 0, first = -1, found = 0;
    int32_t *first_gpus = s->align_gpus;
    while (dsp_find_free(e, s, j, part, mask, out)) {
        int32_t node = e->gpus[out[0]].node;
        if (first < 0) {
            first = node;
            for (int32_t k = 0; k < g; k++) first_gpus[k] = out[k];
        }
        if (e->nodes[node].nfree == e->nodes[node].ngpus) break; /* only wholly free nodes are left */
        if (outlasted(e, s, node, now, end)) {
            found = 1;
            break;
        }
        mask[node] = 1;
        s->align_set[nset++] = node;
    }
    for (int32_t k = 0; k < nset; k++) mask[s->align_set[k]] = 0;
    if (found) return 1;
    if (first < 0) return 0;
    for (int32_t k = 0; k < g; k++) out[k] = first_gpus[k];
    return 1;
}
