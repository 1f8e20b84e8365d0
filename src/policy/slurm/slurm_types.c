/* slurm_types.c: the simulated Slurm on a cluster of several GPU types (docs/peers.md, "Slurm on several GPU
 * types"): typed GRES requests and typed TRES limits, read from SchedMD/slurm 22.05.
 *
 * A job that names a type (--gres=gpu:v100:2) goes only to nodes with that type's GRES; one that does not
 * (--gres=gpu:2) to any node with GPUs (the trace's sets of types, e.g. Alibaba's gpu_spec, are a node
 * feature constraint with an untyped request: no typed TRES). A job runs on one type (SPEC 8), so a job
 * over several nodes that takes any type is placed on one type at a time, the earliest start first.
 * Typed TRES (src/slurmctld/gres_ctld.c): a job's requested TRES count gres/gpu:TYPE only when it names the
 * type (_set_type_tres_cnt on gres_list_req), but its allocated TRES count the type it got for every job
 * (_job_alloc fills gres_list_alloc with one entry per allocated type), and acct_policy adds the allocated
 * TRES to the association's usage at job begin. So GrpTRES=gres/gpu:v100=4 holds back only jobs that ask for
 * v100 by name, against every job of the account running on v100s. */
#include "slurm_internal.h"

#include <stdio.h>
#include <stdlib.h>

int32_t slm_named_type(const slm_state_t *s, int32_t j)
{
    return s->typed ? s->e->trace->jobs[j].gtype : -1;
}

int32_t slm_ranges(const slm_state_t *s, int32_t j, int32_t p, int multi, int32_t *lo, int32_t *hi)
{
    const ds_engine_t *e = s->e;
    const ds_part_t *P = &e->parts[p];
    if (!s->typed || (!multi && !e->trace->jobs[j].gmask)) {
        lo[0] = P->node0, hi[0] = P->node0 + P->nnodes;
        return 1;
    }
    int32_t k = 0;
    for (int32_t t = 0; t < e->ntypes; t++)
        if (P->tnnodes[t] > 0 && ds_engine_type_ok(e, j, t)) lo[k] = P->tnode0[t], hi[k] = P->tnode0[t] + P->tnnodes[t], k++;
    return k;
}

void slm_types_run(slm_state_t *s, int32_t j, int start)
{
    if (!s->typed) return;
    const ds_job_t *jb = &s->e->trace->jobs[j];
    if (start) s->jtype[j] = (int8_t)ds_engine_job_type(s->e, j);
    int32_t t = s->jtype[j];
    DS_ASSERT(t >= 0);
    s->ten_run_t[(size_t)jb->tenant * (size_t)s->e->ntypes + (size_t)t] += start ? jb->gpus : -jb->gpus;
    if (!start) s->jtype[j] = -1;
}

void slm_types_normal(slm_state_t *s, int32_t j, int add)
{
    int32_t t = slm_named_type(s, j);
    if (t < 0) return;
    const ds_job_t *jb = &s->e->trace->jobs[j];
    s->ten_normal_t[(size_t)jb->tenant * (size_t)s->e->ntypes + (size_t)t] += add ? jb->gpus : -jb->gpus;
}

int slm_types_limit_ok(const slm_state_t *s, int32_t j)
{
    int32_t t = slm_named_type(s, j);
    if (t < 0 || !s->cfg.grp_tres || !s->cfg.grp_tres_types) return 1;
    const ds_job_t *jb = &s->e->trace->jobs[j];
    return s->ten_run_t[(size_t)jb->tenant * (size_t)s->e->ntypes + (size_t)t] + jb->gpus <=
           ds_engine_quota_t(s->e, jb->tenant, t);
}

int slm_types_over_quota(const slm_state_t *s, int32_t j)
{
    int32_t t = slm_named_type(s, j);
    if (t < 0 || !s->cfg.route_types) return 0;
    const ds_job_t *jb = &s->e->trace->jobs[j];
    return s->ten_normal_t[(size_t)jb->tenant * (size_t)s->e->ntypes + (size_t)t] + jb->gpus >
           ds_engine_quota_t(s->e, jb->tenant, t);
}

int slm_types_check(const slm_state_t *s, char *msg, size_t n)
{
    if (!s->typed) return 0;
    const ds_engine_t *e = s->e;
    const ds_trace_t *t = e->trace;
    size_t nt = (size_t)e->ntypes, cells = (size_t)(t->ntenants ? t->ntenants : 1) * nt;
    int64_t *run = ds_xcalloc(cells, sizeof *run), *normal = ds_xcalloc(cells, sizeof *normal);
    int bad = 0;
    for (int32_t j = 0; j < t->njobs && !bad; j++) {
        const ds_jstate_t *js = &e->js[j];
        size_t a = (size_t)t->jobs[j].tenant * nt;
        if (js->status == DS_JS_RUNNING) {
            int32_t ty = ds_engine_job_type(e, j);
            if (ty != s->jtype[j]) {
                snprintf(msg, n, "slurm: job %lld runs on type %d, bookkeeping says %d", (long long)t->jobs[j].id, ty,
                         s->jtype[j]);
                bad = 1;
            } else if (ty >= 0) {
                run[a + (size_t)ty] += t->jobs[j].gpus;
            }
        }
        if ((js->status == DS_JS_RUNNING || js->status == DS_JS_PENDING) && s->qos[j] == SLM_QOS_NORMAL &&
            slm_named_type(s, j) >= 0)
            normal[a + (size_t)slm_named_type(s, j)] += t->jobs[j].gpus;
    }
    for (size_t c = 0; c < cells && !bad; c++) {
        const char *acct = t->tenants[c / nt].name, *ty = t->gtypes[c % nt].name;
        if (run[c] != s->ten_run_t[c]) {
            snprintf(msg, n, "slurm: account %s holds %lld %s GPUs, bookkeeping says %lld", acct, (long long)run[c], ty,
                     (long long)s->ten_run_t[c]);
            bad = 1;
        } else if (normal[c] != s->ten_normal_t[c]) {
            snprintf(msg, n, "slurm: account %s has %lld GPUs named %s in QOS normal, bookkeeping says %lld", acct,
                     (long long)normal[c], ty, (long long)s->ten_normal_t[c]);
            bad = 1;
        }
    }
    free(run);
    free(normal);
    return bad;
}
