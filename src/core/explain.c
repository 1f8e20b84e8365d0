/* explain.c: the lines of a job's explanation that every policy may share (policy.h, ds_explain_fit):
 * whether free GPUs for it exist now, seen as the engine's consolidated placement would find them. */
#include "deepshare/policy.h"

#include <stdlib.h>

int ds_explain_fit(const ds_engine_t *e, int32_t j, ds_buf_t *out)
{
    const ds_job_t *job = &e->trace->jobs[j];
    const ds_jstate_t *js = &e->js[j];
    if (js->status != DS_JS_PENDING) return 0;
    if (js->held) ds_bputs(out, "  held: the driver cannot start it yet, so the policy passes over it\n");
    const ds_part_t *p = &e->parts[js->part];
    int32_t buf[256], *gpus = job->gpus <= 256 ? buf : ds_xmalloc((size_t)job->gpus * sizeof *gpus);
    int ok = ds_engine_find_free(e, j, js->part, gpus);
    if (gpus != buf) free(gpus);
    int32_t nodes = 0;
    for (int32_t n = p->node0; n < p->node0 + p->nnodes; n++)
        nodes += e->nodes[n].nfree >= job->gpus && ds_engine_node_fits(e, n, j);
    const char *where = e->nparts == 1 ? "the cluster" : "its partition";
    if (ok && job->gpus <= e->cfg.gpus_per_node)
        ds_bprintf(out, "  fit: %d node%s could take it now (it waits for the next pass)\n", nodes, nodes == 1 ? "" : "s");
    else if (ok)
        ds_bprintf(out, "  fit: whole free nodes could take it now (it waits for the next pass)\n");
    else if (job->gpus <= e->cfg.gpus_per_node)
        ds_bprintf(out, "  no fit: no node has %d free GPU%s with room for %d CPU%s (%d of %d GPUs free in %s)\n",
                   job->gpus, job->gpus == 1 ? "" : "s", job->cpus, job->cpus == 1 ? "" : "s", p->gpus_free, p->gpus_total,
                   where);
    else
        ds_bprintf(out, "  no fit: not %d GPUs on whole free nodes with room for %d CPU%s (%d of %d GPUs free in %s)\n",
                   job->gpus, job->cpus, job->cpus == 1 ? "" : "s", p->gpus_free, p->gpus_total, where);
    return ok;
}
