/* engine.c: engine life cycle, job state transitions (arrive, start, preempt, finish) and the
 * per-partition bookkeeping every policy relies on. */
#include "deepshare/engine.h"
#include "deepshare/policy.h"
#include "placement.h"

#include <stdlib.h>
#include <string.h>

void ds_engine_config_default(ds_engine_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->mode = DS_MODE_PARTITIONED;
    c->gpus_per_node = 8;
    c->cpus_per_node = 96;
    c->mem_per_node = 0;
    c->gmem_per_gpu = 24576;
    c->k = 2;
    c->enforce_cpu = 1;
    c->restart_small = 40;
    c->restart_large = 60;
}

int32_t ds_engine_add_part(ds_engine_t *e, const char *name, int32_t nnodes)
{
    e->parts = ds_xrealloc(e->parts, (size_t)(e->nparts + 1) * sizeof *e->parts);
    ds_part_t *p = &e->parts[e->nparts];
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->nnodes = nnodes;
    p->tnnodes[0] = nnodes;
    return e->nparts++;
}

int32_t ds_engine_add_part_typed(ds_engine_t *e, const char *name, const int32_t *nodes_t)
{
    int32_t n = 0;
    for (int32_t t = 0; t < e->ntypes; t++) n += nodes_t[t];
    int32_t p = ds_engine_add_part(e, name, n);
    for (int32_t t = 0; t < e->ntypes; t++) e->parts[p].tnnodes[t] = nodes_t[t];
    return p;
}


int32_t ds_engine_quota_nodes(const ds_engine_t *e, int32_t i, int32_t t)
{
    int32_t gpn = ds_engine_type_gpus_per_node(e, t);
    return (e->trace->tenants[i].quota_t[t] + gpn - 1) / gpn;
}

int32_t ds_engine_gpu_gmem(const ds_engine_t *e, int32_t gpu)
{
    if (!e->trace->ngtypes) return e->cfg.gmem_per_gpu;
    int32_t m = e->trace->gtypes[ds_engine_gpu_type(e, gpu)].gmem_per_gpu;
    return m > 0 ? m : e->cfg.gmem_per_gpu;
}

int32_t ds_engine_job_type(const ds_engine_t *e, int32_t j)
{
    return e->js[j].nplaced > 0 ? ds_engine_gpu_type(e, e->jgpus[e->jgpu_off[j]]) : -1;
}

/* Typed clusters: each tenant's quota of a type in whole nodes of that type; pooled, the per-type node
 * counts the cluster file gives instead where it gives them. */
static void typed_layout(ds_engine_t *e)
{
    const ds_trace_t *t = e->trace;
    int32_t n[DS_MAX_GPU_TYPES];
    if (e->cfg.mode == DS_MODE_POOLED) {
        for (int32_t ty = 0; ty < e->ntypes; ty++) {
            n[ty] = 0;
            for (int32_t i = 0; i < t->ntenants; i++) n[ty] += ds_engine_quota_nodes(e, i, ty);
            if (t->gtypes[ty].nodes > 0) n[ty] = t->gtypes[ty].nodes;
        }
        int32_t p = ds_engine_add_part_typed(e, "pool", n);
        for (int32_t i = 0; i < t->ntenants; i++) e->tenant_part[i] = p;
    } else {
        for (int32_t i = 0; i < t->ntenants; i++) {
            for (int32_t ty = 0; ty < e->ntypes; ty++) n[ty] = ds_engine_quota_nodes(e, i, ty);
            e->tenant_part[i] = ds_engine_add_part_typed(e, t->tenants[i].name, n);
        }
    }
}

static void default_layout(ds_engine_t *e)
{
    const ds_trace_t *t = e->trace;
    int32_t gpn = e->cfg.gpus_per_node;
    if (t->ngtypes) {
        typed_layout(e);
        return;
    }
    if (e->cfg.mode == DS_MODE_POOLED) {
        int32_t n = 0;
        for (int32_t i = 0; i < t->ntenants; i++) n += (t->tenants[i].quota_gpus + gpn - 1) / gpn;
        if (e->cfg.pool_nodes > 0) n = e->cfg.pool_nodes;
        int32_t p = ds_engine_add_part(e, "pool", n);
        for (int32_t i = 0; i < t->ntenants; i++) e->tenant_part[i] = p;
    } else {
        for (int32_t i = 0; i < t->ntenants; i++)
            e->tenant_part[i] = ds_engine_add_part(e, t->tenants[i].name, (t->tenants[i].quota_gpus + gpn - 1) / gpn);
    }
}

/* A job on a typed cluster could run when some type it may use has, in its partition, the GPUs for it and a
 * node that can hold its share of CPUs and memory (a job runs on one type). */
static int typed_job_check(ds_engine_t *e, int32_t j, ds_error_t *err)
{
    const ds_trace_t *trace = e->trace;
    const ds_job_t *job = &trace->jobs[j];
    const ds_part_t *p = &e->parts[e->js[j].part];
    int32_t most = 0;
    const char *what = NULL;
    int64_t need = 0, have = 0;
    for (int32_t t = 0; t < e->ntypes; t++) {
        if (!ds_engine_type_ok(e, j, t)) continue;
        most = DS_MAX(most, p->tgpus_total[t]);
        if (job->gpus > p->tgpus_total[t] || p->tnnodes[t] == 0) continue;
        int32_t gpn = ds_engine_type_gpus_per_node(e, t), ngp = DS_MIN(job->gpus, gpn);
        int64_t cpu = job->gpus ? ((int64_t)job->cpus * ngp + job->gpus - 1) / job->gpus : job->cpus;
        int64_t mem = job->gpus ? (job->mem_mib * ngp + job->gpus - 1) / job->gpus : job->mem_mib;
        const ds_node_t *nd = &e->nodes[p->tnode0[t]];
        if (e->cfg.enforce_cpu && cpu > nd->cpus_total) { what = "CPUs", need = cpu, have = nd->cpus_total; continue; }
        if (nd->mem_total > 0 && mem > nd->mem_total) { what = "MiB of memory", need = mem, have = nd->mem_total; continue; }
        if (job->gpus / gpn > 4096) continue; /* ds_engine_find_free places at most 4096 whole nodes */
        return 0;
    }
    char tnb[DS_MAX_GPU_TYPES * DS_GTYPE_NAME] = "";
    for (int32_t t = 0; t < e->ntypes && job->gmask; t++)
        if ((job->gmask >> t) & 1) snprintf(tnb + strlen(tnb), sizeof tnb - strlen(tnb), "%s%s", tnb[0] ? "|" : "", trace->gtypes[t].name);
    const char *tn = tnb[0] ? tnb : NULL;
    if (what)
        ds_error_set(err, trace->source, job->line, what[0] == 'C' ? "cpus" : "mem_mib",
                     "job %lld could never run: it needs %lld %s on one node, a node of %s has %lld%s", (long long)job->id,
                     (long long)need, what, tn ? tn : "the types it fits has", (long long)have,
                     what[0] == 'C' ? " (see --cpus-per-node and --no-cpu-check)" : "");
    else
        ds_error_set(err, trace->source, job->line, tn ? "gpu_type" : "gpus",
                     "job %lld of tenant %s needs %d GPUs %s%s but its partition '%s' has at most %d of %s: it could never "
                     "run%s",
                     (long long)job->id, trace->tenants[job->tenant].name, job->gpus, tn ? "of type " : "on one GPU type",
                     tn ? tn : "", p->name, most, tn ? "it" : "one type",
                     e->cfg.mode == DS_MODE_PARTITIONED ? " (in pooled mode it could run as best effort)" : "");
    return -1;
}

static int validate_config(const ds_engine_config_t *c, ds_error_t *err)
{
    if (c->gpus_per_node < 1 || c->gpus_per_node > DS_MAX_GPUS_PER_NODE) {
        ds_error_set(err, NULL, 0, "gpus-per-node", "must be 1..%d, got %d", DS_MAX_GPUS_PER_NODE, c->gpus_per_node);
        return DS_EINVAL;
    }
    if (c->k < 1 || c->k > DS_MAX_K) {
        ds_error_set(err, NULL, 0, "k", "residents per GPU must be 1..%d, got %d", DS_MAX_K, c->k);
        return DS_EINVAL;
    }
    if (c->cpus_per_node < 0 || c->mem_per_node < 0 || c->gmem_per_gpu < 1 || c->restart_small < 0 ||
        c->restart_large < 0) {
        ds_error_set(err, NULL, 0, NULL, "negative cluster parameter");
        return DS_EINVAL;
    }
    return DS_OK;
}

int ds_engine_create(ds_engine_t **out, const ds_trace_t *trace, const ds_engine_config_t *cfg,
                     const ds_policy_ops_t *ops, const void *policy_config, ds_error_t *err)
{
    *out = NULL;
    int rc = validate_config(cfg, err);
    if (rc) return rc;
    if (trace->ntenants == 0) {
        ds_error_set(err, NULL, 0, NULL, "the trace has no tenants");
        return DS_EINVAL;
    }
    if (trace->ngtypes > 1 && !(ops->props & DS_POLICY_TYPED)) {
        ds_error_set(err, NULL, 0, NULL, "%s does not run on a cluster of several GPU types yet (%d types here)",
                     ops->name, trace->ngtypes);
        return DS_EINVAL;
    }
    ds_engine_t *e = ds_xcalloc(1, sizeof *e);
    e->trace = trace;
    e->cfg = *cfg;
    e->ops = ops;
    e->predictors = cfg->predictors;
    e->ntypes = trace->ngtypes > 0 ? trace->ngtypes : 1;
    e->priv.type_gpn_default = cfg->gpus_per_node;
    e->tenant_part = ds_xcalloc((size_t)trace->ntenants, sizeof *e->tenant_part);
    if (trace->ngtypes) {
        /* the cluster's node size is its largest node type's (jobs up to it restart at the small overhead) */
        int32_t mx = 0;
        for (int32_t t = 0; t < e->ntypes; t++) mx = DS_MAX(mx, ds_engine_type_gpus_per_node(e, t));
        e->cfg.gpus_per_node = mx;
    }
    if (ops->setup) {
        if ((rc = ops->setup(e, policy_config, err))) { ds_engine_destroy(e); return rc; }
    } else {
        default_layout(e);
    }
    int32_t ng = 0;
    for (int32_t p = 0; p < e->nparts; p++) {
        e->nnodes += e->parts[p].nnodes;
        for (int32_t t = 0; t < e->ntypes; t++) ng += e->parts[p].tnnodes[t] * ds_engine_type_gpus_per_node(e, t);
    }
    e->nodes = ds_xcalloc((size_t)e->nnodes, sizeof *e->nodes);
    e->ngpus = ng;
    e->gpus = ds_xcalloc((size_t)(ng ? ng : 1), sizeof *e->gpus);
    int32_t n = 0, g0 = 0;
    for (int32_t p = 0; p < e->nparts; p++) {
        ds_part_t *pp = &e->parts[p];
        pp->node0 = n;
        pp->gpus_total = 0;
        for (int32_t t = 0; t < e->ntypes; t++) {
            int32_t gpn = ds_engine_type_gpus_per_node(e, t);
            const ds_gtype_t *gt = trace->ngtypes ? &trace->gtypes[t] : NULL;
            pp->tnode0[t] = n;
            pp->tgpus_total[t] = pp->tgpus_free[t] = pp->tnnodes[t] * gpn;
            pp->gpus_total += pp->tgpus_total[t];
            for (int32_t i = 0; i < pp->tnnodes[t]; i++, n++) {
                ds_node_t *nd = &e->nodes[n];
                nd->part = p;
                nd->gtype = t;
                nd->gpu0 = g0;
                nd->ngpus = nd->nfree = gpn;
                nd->cpus_total = gt && gt->cpus_per_node > 0 ? gt->cpus_per_node : cfg->cpus_per_node;
                nd->mem_total = gt && gt->mem_per_node > 0 ? gt->mem_per_node : cfg->mem_per_node;
                for (int32_t g = 0; g < gpn; g++) e->gpus[g0 + g].node = n;
                g0 += gpn;
            }
        }
        pp->gpus_free = pp->gpus_total;
    }
    ds_placement_init(e);
    int32_t nj = trace->njobs, gpn = cfg->gpus_per_node;
    e->js = ds_xcalloc((size_t)nj, sizeof *e->js);
    e->jgpu_off = ds_xmalloc((size_t)(nj + 1) * sizeof *e->jgpu_off);
    int64_t off = 0;
    for (int32_t j = 0; j < nj; j++) {
        const ds_job_t *job = &trace->jobs[j];
        e->jgpu_off[j] = off;
        off += job->gpus;
        ds_jstate_t *s = &e->js[j];
        s->part = e->tenant_part[job->tenant];
        s->first_start = s->end = -1;
        s->partner = -1;
        if (e->ntypes > 1 || trace->ngtypes) {
            if (typed_job_check(e, j, err)) {
                ds_engine_destroy(e);
                return DS_EINVAL;
            }
            continue;
        }
        if (job->gpus > e->parts[s->part].gpus_total) {
            ds_error_set(err, trace->source, job->line, "gpus",
                         "job %lld of tenant %s needs %d GPUs but its partition '%s' has only %d: it could never "
                         "run%s",
                         (long long)job->id, trace->tenants[job->tenant].name, job->gpus, e->parts[s->part].name,
                         e->parts[s->part].gpus_total,
                         cfg->mode == DS_MODE_PARTITIONED ? " (in pooled mode it could run as best effort)" : "");
            ds_engine_destroy(e);
            return DS_EINVAL;
        }
        /* A job that no empty node could hold would wait forever: FIFO stalls on it and timer-driven policies
         * (Tiresias) loop without end. The busiest node of a placement holds min(gpus, gpus_per_node) of its
         * GPUs and that share of its CPUs and memory (placement.c). */
        int32_t ngp = DS_MIN(job->gpus, gpn);
        int64_t cpu = job->gpus ? ((int64_t)job->cpus * ngp + job->gpus - 1) / job->gpus : job->cpus;
        int64_t mem = job->gpus ? (job->mem_mib * ngp + job->gpus - 1) / job->gpus : job->mem_mib;
        const char *what = NULL;
        if (cfg->enforce_cpu && cpu > cfg->cpus_per_node) what = "CPUs";
        else if (cfg->mem_per_node > 0 && mem > cfg->mem_per_node) what = "MiB of memory";
        if (what) {
            int cpus = what[0] == 'C';
            ds_error_set(err, trace->source, job->line, cpus ? "cpus" : "mem_mib",
                         "job %lld could never run: it needs %lld %s on one node, a node has %lld%s", (long long)job->id,
                         (long long)(cpus ? cpu : mem), what, (long long)(cpus ? cfg->cpus_per_node : cfg->mem_per_node),
                         cpus ? " (see --cpus-per-node and --no-cpu-check)" : "");
            ds_engine_destroy(e);
            return DS_EINVAL;
        }
        if (job->gpus / gpn > DS_MAX_JOB_NODES) { /* ds_engine_find_free places at most 4096 whole nodes */
            ds_error_set(err, trace->source, job->line, "gpus", "job %lld could never run: it spans more than %d nodes",
                         (long long)job->id, DS_MAX_JOB_NODES);
            ds_engine_destroy(e);
            return DS_EINVAL;
        }
    }
    e->jgpu_off[nj] = off;
    e->priv.rate_dirty = ds_xmalloc((size_t)(nj ? nj : 1) * sizeof *e->priv.rate_dirty);
    e->priv.is_rate_dirty = ds_xcalloc((size_t)(nj ? nj : 1), 1);
    e->jgpus = ds_xmalloc((size_t)(off ? off : 1) * sizeof *e->jgpus);
    int32_t nt = trace->ntenants;
    e->tenant_g_gpus = ds_xcalloc((size_t)nt, sizeof(int64_t));
    e->tenant_be_gpus = ds_xcalloc((size_t)nt, sizeof(int64_t));
    e->tenant_pending_gpus = ds_xcalloc((size_t)nt, sizeof(int64_t));
    e->tenant_running = ds_xcalloc((size_t)nt, sizeof(int64_t));
    e->tenant_quota = ds_xmalloc((size_t)nt * sizeof(int64_t));
    size_t ntt = (size_t)nt * (size_t)e->ntypes;
    e->tenant_g_gpus_t = ds_xcalloc(ntt, sizeof(int64_t));
    e->tenant_be_gpus_t = ds_xcalloc(ntt, sizeof(int64_t));
    e->tenant_pend_t = ds_xcalloc(ntt, sizeof(int64_t));
    e->tenant_quota_t = ds_xcalloc(ntt, sizeof(int64_t));
    for (int32_t i = 0; i < nt; i++)
        for (int32_t t = 0; t < e->ntypes; t++)
            e->tenant_quota_t[(size_t)i * (size_t)e->ntypes + (size_t)t] =
                trace->ngtypes ? trace->tenants[i].quota_t[t] : trace->tenants[i].quota_gpus;
    for (int32_t i = 0; i < nt; i++) e->tenant_quota[i] = trace->tenants[i].quota_gpus;
    if (ops->init && (rc = ops->init(e, policy_config, &e->pstate, err))) {
        ds_engine_destroy(e);
        return rc;
    }
    *out = e;
    return DS_OK;
}

void ds_engine_destroy(ds_engine_t *e)
{
    if (!e) return;
    if (e->ops && e->ops->fini && e->pstate) e->ops->fini(e->pstate);
    ds_placement_free(e);
    free(e->nodes);
    free(e->gpus);
    free(e->parts);
    free(e->tenant_part);
    free(e->js);
    free(e->jgpus);
    free(e->jgpu_off);
    free(e->tenant_g_gpus);
    free(e->tenant_be_gpus);
    free(e->tenant_pending_gpus);
    free(e->tenant_running);
    free(e->tenant_quota);
    free(e->tenant_g_gpus_t);
    free(e->tenant_be_gpus_t);
    free(e->tenant_pend_t);
    free(e->tenant_quota_t);
    free(e->priv.dec);
    free(e->priv.rate_dirty);
    free(e->priv.is_rate_dirty);
    free(e);
}

void ds_engine_record(ds_engine_t *e, int32_t type, int32_t job, int32_t other, int32_t reason)
{
    if (e->priv.ndec == e->priv.capdec) {
        e->priv.capdec = e->priv.capdec ? e->priv.capdec * 2 : 256;
        e->priv.dec = ds_xrealloc(e->priv.dec, (size_t)e->priv.capdec * sizeof *e->priv.dec);
    }
    e->priv.dec[e->priv.ndec++] = (ds_decision_t){type, job, other, reason, e->now};
}

/* A pending job that asks for a type counts in its tenant's pending GPUs of that type (typed clusters). */
static inline void pend_typed(ds_engine_t *e, int32_t j, int sign)
{
    const ds_job_t *job = &e->trace->jobs[j];
    if (e->ntypes > 1 && job->gtype >= 0) e->tenant_pend_t[(size_t)job->tenant * (size_t)e->ntypes + (size_t)job->gtype] += sign * job->gpus;
}

/* GPUs a running job holds, by class, in its tenant's per-type counters (typed clusters). */
static inline void held_typed(ds_engine_t *e, int32_t j, int klass, int sign)
{
    if (e->ntypes < 2) return;
    const ds_job_t *job = &e->trace->jobs[j];
    size_t k = (size_t)job->tenant * (size_t)e->ntypes + (size_t)ds_engine_job_type(e, j);
    (klass == DS_CLASS_BE ? e->tenant_be_gpus_t : e->tenant_g_gpus_t)[k] += sign * job->gpus;
}

/* Closes a pending job's stretch in its present class at now (queued_g / queued_be). */
static void class_time(ds_jstate_t *s, int64_t now)
{
    int64_t from = DS_MAX(s->pend_since, s->class_since), d = now - from;
    if (d > 0 && s->klass == DS_CLASS_G) s->queued_g += d;
    else if (d > 0 && s->klass == DS_CLASS_BE) s->queued_be += d;
    s->class_since = now;
}

static void make_pending(ds_engine_t *e, int32_t j, int64_t now)
{
    ds_jstate_t *s = &e->js[j];
    s->status = DS_JS_PENDING;
    s->pend_since = now;
    s->arrival_seq = ++e->priv.seq;
    e->parts[s->part].npending++;
    e->parts[s->part].dirty = 1;
    e->tenant_pending_gpus[e->trace->jobs[j].tenant] += e->trace->jobs[j].gpus;
    pend_typed(e, j, +1);
    if (e->ops->enqueue) e->ops->enqueue(e, e->pstate, j, now);
}

void ds_engine_arrive(ds_engine_t *e, int32_t j, int64_t now)
{
    DS_ASSERT(e->js[j].status == DS_JS_FUTURE);
    e->now = now;
    make_pending(e, j, now);
}

int32_t ds_engine_restart_overhead(const ds_engine_t *e, int32_t j)
{
    return e->trace->jobs[j].gpus <= e->cfg.gpus_per_node ? e->cfg.restart_small : e->cfg.restart_large;
}

int64_t ds_engine_elapsed(const ds_engine_t *e, int32_t j, int64_t now)
{
    const ds_jstate_t *s = &e->js[j];
    return s->run_time + (s->status == DS_JS_RUNNING ? now - s->last_start : 0);
}

int64_t ds_engine_ckpt_interval(const ds_engine_t *e, int32_t j)
{
    int32_t c = e->trace->jobs[j].ckpt;
    return c > 0 ? c : DS_MAX(0, e->cfg.ckpt_default);
}

int64_t ds_engine_at_risk(const ds_engine_t *e, int32_t j, int64_t now)
{
    const ds_jstate_t *s = &e->js[j];
    if (s->status != DS_JS_RUNNING) return 0;
    int64_t c = ds_engine_ckpt_interval(e, j), run = DS_MAX(0, now - s->last_start);
    return c > 0 ? run % c : ds_engine_elapsed(e, j, now);
}

static void mark_rate(ds_engine_t *e, int32_t j)
{
    if (e->priv.is_rate_dirty[j]) return;
    e->priv.is_rate_dirty[j] = 1;
    e->priv.rate_dirty[e->priv.nrate_dirty++] = j;
}

/* Adds (sign +1) or removes (-1) a GPU's contribution to the utilization totals. */
static void util_account(ds_engine_t *e, const ds_gpu_t *g, int sign)
{
    if (g->nres == 0 || e->parts[e->nodes[g->node].part].no_util) return;
    e->util_busy += sign;
    e->util_sm += sign * (double)DS_MIN(100.0f, g->util_sum);
    e->util_gmem += sign * (double)DS_MIN(100.0f, g->gmem_util_sum);
}

static void refresh_shared(ds_engine_t *e, int32_t j)
{
    ds_jstate_t *s = &e->js[j];
    const int32_t *g = &e->jgpus[e->jgpu_off[j]];
    s->shared = 0;
    s->partner = -1;
    for (int32_t i = 0; i < s->nplaced; i++) {
        const ds_gpu_t *gp = &e->gpus[g[i]];
        for (int32_t r = 0; r < gp->nres; r++)
            if (gp->res[r] != j) { s->shared = 1; s->partner = gp->res[r]; return; }
    }
}

void ds_engine_start(ds_engine_t *e, int32_t j, const int32_t *gpus, int64_t now)
{
    ds_jstate_t *s = &e->js[j];
    const ds_job_t *job = &e->trace->jobs[j];
    DS_ASSERT(s->status == DS_JS_PENDING && !s->held);
    e->now = now;
    int32_t *mine = &e->jgpus[e->jgpu_off[j]];
    int shared = 0;
    for (int32_t i = 0; i < job->gpus; i++) {
        ds_gpu_t *g = &e->gpus[gpus[i]];
        DS_ASSERT(g->nres < DS_MAX_K);
        if (g->nres == 0) ds_placement_take(e, g->node, 1);
        else shared = 1;
        for (int32_t r = 0; r < g->nres; r++) mark_rate(e, g->res[r]);
        util_account(e, g, -1);
        g->res[g->nres++] = j;
        g->gmem_used += job->gmem_mib;
        g->util_sum += job->gpu_util;
        g->gmem_util_sum += job->gmem_util;
        util_account(e, g, +1);
        mine[i] = gpus[i];
    }
    s->nplaced = job->gpus;
    mark_rate(e, j);
    ds_placement_charge(e, j, +1);
    ds_part_t *p = &e->parts[s->part];
    p->npending--;
    class_time(s, now); /* a cancelled start leaves class_since at it: the stretch after goes on from there */
    s->status = DS_JS_RUNNING;
    s->queued += now - s->pend_since;
    if (s->first_start < 0) s->first_start = now;
    s->last_start = now;
    e->tenant_pending_gpus[job->tenant] -= job->gpus;
    e->tenant_running[job->tenant]++;
    if (s->klass == DS_CLASS_BE) e->tenant_be_gpus[job->tenant] += job->gpus;
    else e->tenant_g_gpus[job->tenant] += job->gpus;
    pend_typed(e, j, -1);
    held_typed(e, j, s->klass, +1);
    int32_t other = -1;
    if (shared) {
        refresh_shared(e, j);
        other = s->partner;
        for (int32_t i = 0; i < job->gpus; i++) {
            const ds_gpu_t *g = &e->gpus[gpus[i]];
            for (int32_t r = 0; r < g->nres; r++)
                if (g->res[r] != j) refresh_shared(e, g->res[r]);
        }
        e->n_colocations++;
    }
    ds_engine_record(e, DS_DEC_START, j, other, 0);
}

int ds_engine_place(ds_engine_t *e, int32_t j, int64_t now)
{
    if (e->js[j].held) return 0;
    int32_t buf[256];
    int32_t g = e->trace->jobs[j].gpus;
    int32_t *out = g <= 256 ? buf : ds_xmalloc((size_t)g * sizeof *out);
    int ok = ds_engine_find_free(e, j, e->js[j].part, out);
    if (ok) ds_engine_start(e, j, out, now);
    if (out != buf) free(out);
    return ok;
}

/* Takes the job off its GPUs and updates partners, nodes and tenant counts. */
static void release(ds_engine_t *e, int32_t j, int64_t now)
{
    ds_jstate_t *s = &e->js[j];
    const ds_job_t *job = &e->trace->jobs[j];
    DS_ASSERT(s->status == DS_JS_RUNNING);
    int32_t *mine = &e->jgpus[e->jgpu_off[j]];
    int32_t partners[DS_MAX_K * 2];
    int32_t np = 0;
    for (int32_t i = 0; i < s->nplaced; i++) {
        ds_gpu_t *g = &e->gpus[mine[i]];
        util_account(e, g, -1);
        int32_t w = 0;
        for (int32_t r = 0; r < g->nres; r++) {
            if (g->res[r] == j) continue;
            g->res[w++] = g->res[r];
            int seen = 0;
            for (int32_t q = 0; q < np; q++) seen |= partners[q] == g->res[r];
            if (!seen && np < DS_MAX_K * 2) partners[np++] = g->res[r];
            mark_rate(e, g->res[r]);
        }
        DS_ASSERT(w == g->nres - 1);
        g->nres = w;
        g->gmem_used -= job->gmem_mib;
        g->util_sum -= job->gpu_util;
        g->gmem_util_sum -= job->gmem_util;
        if (w == 0) g->util_sum = g->gmem_util_sum = 0; /* no float residue on idle GPUs */
        util_account(e, g, +1);
        if (w == 0) ds_placement_take(e, g->node, -1);
    }
    ds_placement_charge(e, j, -1);
    held_typed(e, j, s->klass, -1);
    s->cpu_scale = 0; /* a restart asks for its full request again */
    s->nplaced = 0;
    s->run_time += now - s->last_start;
    s->shared = 0;
    s->partner = -1;
    for (int32_t q = 0; q < np; q++) refresh_shared(e, partners[q]);
    e->tenant_running[job->tenant]--;
    if (s->klass == DS_CLASS_BE) e->tenant_be_gpus[job->tenant] -= job->gpus;
    else e->tenant_g_gpus[job->tenant] -= job->gpus;
    e->parts[s->part].dirty = 1;
}

void ds_engine_preempt(ds_engine_t *e, int32_t j, int64_t now, int32_t reason)
{
    e->now = now;
    release(e, j, now);
    ds_jstate_t *s = &e->js[j];
    s->preemptions++;
    s->overhead += ds_engine_restart_overhead(e, j);
    e->n_preemptions++;
    ds_engine_record(e, DS_DEC_PREEMPT, j, -1, reason);
    make_pending(e, j, now);
}

void ds_engine_cancel_start(ds_engine_t *e, int32_t j, int64_t now)
{
    ds_jstate_t *s = &e->js[j];
    DS_ASSERT(s->status == DS_JS_RUNNING);
    e->now = now;
    int64_t started = s->last_start;
    /* released as of its start: the time since was never run, so run_time does not grow */
    release(e, j, started);
    /* the pending spell the start ended goes on: its stamp and its place in the order are kept */
    s->queued -= started - s->pend_since;
    if (s->first_start == started && s->run_time == 0) s->first_start = -1;
    s->status = DS_JS_PENDING;
    e->parts[s->part].npending++;
    e->tenant_pending_gpus[e->trace->jobs[j].tenant] += e->trace->jobs[j].gpus;
    pend_typed(e, j, +1);
    if (e->ops->cancel_start) e->ops->cancel_start(e, e->pstate, j, now);
    else if (e->ops->enqueue) e->ops->enqueue(e, e->pstate, j, now);
}

void ds_engine_adopt(ds_engine_t *e, int32_t j, const int32_t *gpus, int klass, int64_t now)
{
    ds_jstate_t *s = &e->js[j];
    DS_ASSERT(s->status == DS_JS_FUTURE);
    e->now = now;
    /* pending for an instant, but never queued with the policy: it only hears of the running job */
    s->status = DS_JS_PENDING;
    s->pend_since = now;
    s->arrival_seq = ++e->priv.seq;
    s->klass = (uint8_t)klass;
    e->parts[s->part].npending++;
    e->tenant_pending_gpus[e->trace->jobs[j].tenant] += e->trace->jobs[j].gpus;
    pend_typed(e, j, +1);
    ds_engine_start(e, j, gpus, now);
    if (e->ops->adopt) e->ops->adopt(e, e->pstate, j, now);
}

int ds_engine_move(ds_engine_t *e, int32_t j, const int32_t *gpus) { return ds_engine_move_many(e, 1, &j, gpus); }

/* Whether job j is one of jobs[0..n). */
static int among(const int32_t *jobs, int32_t n, int32_t j)
{
    for (int32_t k = 0; k < n; k++)
        if (jobs[k] == j) return 1;
    return 0;
}

int ds_engine_move_many(ds_engine_t *e, int32_t n, const int32_t *jobs, const int32_t *gpus)
{
    /* every target checked before anything moves: a refused set leaves the engine as it was */
    int64_t off = 0;
    for (int32_t k = 0; k < n; k++) {
        int32_t j = jobs[k];
        const ds_jstate_t *s = &e->js[j];
        if (s->status != DS_JS_RUNNING || s->shared || among(jobs, k, j)) return DS_EINVAL;
        int32_t type = ds_engine_gpu_type(e, e->jgpus[e->jgpu_off[j]]);
        for (int32_t i = 0; i < s->nplaced; i++) {
            const ds_gpu_t *g = &e->gpus[gpus[off + i]];
            /* a target may be held only by a job of the set, which leaves it */
            if (g->nres > 1 || (g->nres == 1 && !among(jobs, n, g->res[0]))) return DS_EINVAL;
            /* a job runs on one GPU type: a move keeps it on the type it runs on */
            if (ds_engine_gpu_type(e, gpus[off + i]) != type) return DS_EINVAL;
            for (int64_t m = 0; m < off + i; m++)
                if (gpus[m] == gpus[off + i]) return DS_EINVAL;
        }
        off += s->nplaced;
    }
    for (int32_t k = 0; k < n; k++) {
        int32_t j = jobs[k];
        const ds_jstate_t *s = &e->js[j];
        const int32_t *mine = &e->jgpus[e->jgpu_off[j]];
        ds_placement_charge(e, j, -1);
        for (int32_t i = 0; i < s->nplaced; i++) {
            ds_gpu_t *g = &e->gpus[mine[i]];
            util_account(e, g, -1);
            g->nres = 0;
            g->gmem_used -= e->trace->jobs[j].gmem_mib;
            g->util_sum = g->gmem_util_sum = 0;
            ds_placement_take(e, g->node, -1);
        }
    }
    off = 0;
    for (int32_t k = 0; k < n; k++) {
        int32_t j = jobs[k];
        const ds_jstate_t *s = &e->js[j];
        const ds_job_t *job = &e->trace->jobs[j];
        int32_t *mine = &e->jgpus[e->jgpu_off[j]];
        for (int32_t i = 0; i < s->nplaced; i++) {
            ds_gpu_t *g = &e->gpus[gpus[off + i]];
            ds_placement_take(e, g->node, 1);
            g->res[g->nres++] = j;
            g->gmem_used += job->gmem_mib;
            g->util_sum = job->gpu_util;
            g->gmem_util_sum = job->gmem_util;
            util_account(e, g, +1);
            mine[i] = gpus[off + i];
        }
        off += s->nplaced;
        ds_placement_charge(e, j, +1);
        mark_rate(e, j);
    }
    return DS_OK;
}

void ds_engine_clear_rate_changes(ds_engine_t *e)
{
    for (int32_t i = 0; i < e->priv.nrate_dirty; i++) e->priv.is_rate_dirty[e->priv.rate_dirty[i]] = 0;
    e->priv.nrate_dirty = 0;
}

void ds_engine_set_hooks(ds_engine_t *e, const ds_driver_hooks_t *hooks) { e->hooks = *hooks; }

void ds_engine_set_preemptions(ds_engine_t *e, int32_t j, int32_t n) { e->js[j].preemptions = n; }

void ds_engine_set_class(ds_engine_t *e, int32_t j, int klass)
{
    ds_jstate_t *s = &e->js[j];
    if (s->klass == klass) return;
    if (s->status == DS_JS_PENDING) class_time(s, e->now);
    if (s->status == DS_JS_RUNNING) {
        int32_t t = e->trace->jobs[j].tenant, g = e->trace->jobs[j].gpus;
        int64_t *from = s->klass == DS_CLASS_BE ? e->tenant_be_gpus : e->tenant_g_gpus;
        int64_t *to = klass == DS_CLASS_BE ? e->tenant_be_gpus : e->tenant_g_gpus;
        from[t] -= g;
        to[t] += g;
        held_typed(e, j, s->klass, -1);
        held_typed(e, j, klass, +1);
        if (s->klass == DS_CLASS_BE) ds_engine_record(e, DS_DEC_PROMOTE, j, -1, 0);
    }
    s->klass = (uint8_t)klass;
}

void ds_engine_revoke(ds_engine_t *e, int32_t victim, int32_t kept, int64_t now, int32_t reason)
{
    e->now = now;
    e->n_revocations++;
    ds_engine_record(e, DS_DEC_REVOKE, victim, kept, reason);
    ds_engine_preempt(e, victim, now, reason);
}

void ds_engine_finish(ds_engine_t *e, int32_t j, int64_t now)
{
    e->now = now;
    release(e, j, now);
    ds_jstate_t *s = &e->js[j];
    s->status = DS_JS_DONE;
    s->end = now;
    e->n_finished++;
    if (e->ops->on_finish) e->ops->on_finish(e, e->pstate, j, now);
}

void ds_engine_hold(ds_engine_t *e, int32_t j, int held)
{
    ds_jstate_t *s = &e->js[j];
    if (!held) {
        if (s->held) e->parts[s->part].dirty = 1, e->priv.nheld--;
        s->held = 0;
        return;
    }
    DS_ASSERT(s->status == DS_JS_PENDING);
    e->priv.nheld += !s->held;
    s->held = 1;
}

void ds_engine_withdraw(ds_engine_t *e, int32_t j, int64_t now)
{
    ds_jstate_t *s = &e->js[j];
    DS_ASSERT(s->status == DS_JS_PENDING);
    e->now = now;
    if (s->held) s->held = 0, e->priv.nheld--;
    s->status = DS_JS_FUTURE;
    s->queued += now - s->pend_since; /* the pending spell ends here; a new arrival starts another */
    e->parts[s->part].npending--;
    e->parts[s->part].dirty = 1;
    e->tenant_pending_gpus[e->trace->jobs[j].tenant] -= e->trace->jobs[j].gpus;
    pend_typed(e, j, -1); /* and its type's pending GPUs (typed clusters), as a start takes them */
    e->ops->withdraw(e, e->pstate, j, now);
}

void ds_engine_set_node_down(ds_engine_t *e, int32_t node, int down)
{
    ds_node_t *nd = &e->nodes[node];
    if (nd->down == !!down) return;
    if (down) {
        ds_placement_take(e, node, nd->nfree); /* its idle GPUs leave the free counts */
        nd->down = 1;
        return;
    }
    nd->down = 0;
    int32_t idle = 0;
    for (int32_t g = nd->gpu0; g < nd->gpu0 + nd->ngpus; g++) idle += e->gpus[g].nres == 0;
    ds_placement_take(e, node, -idle);
    e->parts[nd->part].dirty = 1;
}

void ds_engine_schedule(ds_engine_t *e, int64_t now, int timer)
{
    e->now = now;
    for (int32_t p = 0; p < e->nparts; p++) {
        if (!timer && !e->parts[p].dirty) continue;
        e->parts[p].dirty = 0;
        e->ops->schedule(e, e->pstate, p, now, timer);
    }
}

int64_t ds_engine_next_timer(const ds_engine_t *e, int64_t now)
{
    return e->ops->next_timer ? e->ops->next_timer(e, e->pstate, now) : DS_TIME_NEVER;
}

/* Typed clusters (docs/heterogeneous.md): a job runs on one GPU type, one it may use, and the per-type
 * counters add up to the untyped ones. */
static int check_typed(const ds_engine_t *e, char *msg, size_t n)
{
    for (int32_t p = 0; p < e->nparts; p++)
        for (int32_t t = 0; t < e->ntypes; t++) {
            const ds_part_t *pp = &e->parts[p];
            int32_t fr = 0;
            for (int32_t i = pp->tnode0[t]; i < pp->tnode0[t] + pp->tnnodes[t]; i++) fr += e->nodes[i].nfree;
            if (fr != pp->tgpus_free[t]) {
                snprintf(msg, n, "partition %s: %d free GPUs of type %d, counted %d", pp->name, fr, t, pp->tgpus_free[t]);
                return -1;
            }
        }
    int32_t nt = e->trace->ntenants;
    int64_t *g = ds_xcalloc((size_t)nt * (size_t)e->ntypes * 3, sizeof *g);
    for (int32_t j = 0; j < e->trace->njobs; j++) {
        const ds_jstate_t *s = &e->js[j];
        const ds_job_t *job = &e->trace->jobs[j];
        size_t k = (size_t)job->tenant * (size_t)e->ntypes;
        if (s->status == DS_JS_PENDING && job->gtype >= 0) g[2 * (size_t)nt * (size_t)e->ntypes + k + (size_t)job->gtype] += job->gpus;
        if (s->status != DS_JS_RUNNING) continue;
        const int32_t *mine = &e->jgpus[e->jgpu_off[j]];
        int32_t t = ds_engine_gpu_type(e, mine[0]);
        for (int32_t i = 1; i < s->nplaced; i++)
            if (ds_engine_gpu_type(e, mine[i]) != t) {
                snprintf(msg, n, "job %lld runs on more than one GPU type", (long long)job->id);
                free(g);
                return -1;
            }
        if (!ds_engine_type_ok(e, j, t)) {
            snprintf(msg, n, "job %lld may run on the types of mask 0x%x, runs on type %d", (long long)job->id, job->gmask, t);
            free(g);
            return -1;
        }
        g[(s->klass == DS_CLASS_BE ? (size_t)nt * (size_t)e->ntypes : 0) + k + (size_t)t] += job->gpus;
    }
    int bad = 0;
    for (size_t k = 0; k < (size_t)nt * (size_t)e->ntypes && !bad; k++)
        bad = g[k] != e->tenant_g_gpus_t[k] || g[(size_t)nt * (size_t)e->ntypes + k] != e->tenant_be_gpus_t[k] ||
              g[2 * (size_t)nt * (size_t)e->ntypes + k] != e->tenant_pend_t[k];
    free(g);
    if (bad) snprintf(msg, n, "per-type GPU counters of the tenants do not add up");
    return bad ? -1 : 0;
}

int ds_engine_check(const ds_engine_t *e, char *msg, size_t n)
{
    for (int32_t j = 0; e->priv.nheld > 0 && j < e->trace->njobs; j++)
        if (e->js[j].held && e->js[j].status != DS_JS_PENDING) {
            snprintf(msg, n, "job %d is held but not pending", j);
            return -1;
        }
    for (int32_t p = 0; p < e->nparts; p++) {
        const ds_part_t *pp = &e->parts[p];
        int32_t fr = 0;
        for (int32_t i = pp->node0; i < pp->node0 + pp->nnodes; i++) {
            const ds_node_t *nd = &e->nodes[i];
            int32_t nf = 0;
            for (int32_t g = nd->gpu0; g < nd->gpu0 + nd->ngpus; g++) {
                const ds_gpu_t *gp = &e->gpus[g];
                if (gp->nres > e->cfg.k) { snprintf(msg, n, "GPU %d has %d residents > k=%d", g, gp->nres, e->cfg.k); return -1; }
                if (gp->nres > 1 && gp->gmem_used > ds_engine_gpu_gmem(e, g)) {
                    snprintf(msg, n, "GPU %d memory %d MiB over %d", g, gp->gmem_used, ds_engine_gpu_gmem(e, g));
                    return -1;
                }
                for (int32_t r = 0; r < gp->nres; r++)
                    if (e->js[gp->res[r]].status != DS_JS_RUNNING) { snprintf(msg, n, "GPU %d holds a job that is not running", g); return -1; }
                nf += gp->nres == 0;
            }
            if (nd->down) nf = 0; /* capacity withdrawn */
            if (nf != nd->nfree) { snprintf(msg, n, "node %d free count %d != %d", i, nd->nfree, nf); return -1; }
            if (e->cfg.enforce_cpu && nd->cpus_used > nd->cpus_total) {
                snprintf(msg, n, "node %d uses %d CPUs of %d", i, nd->cpus_used, nd->cpus_total);
                return -1;
            }
            if (nd->mem_total > 0 && nd->mem_used > nd->mem_total) {
                snprintf(msg, n, "node %d uses %lld MiB of %lld", i, (long long)nd->mem_used, (long long)nd->mem_total);
                return -1;
            }
            fr += nf;
        }
        if (fr != pp->gpus_free) { snprintf(msg, n, "partition %s free count %d != %d", pp->name, pp->gpus_free, fr); return -1; }
    }
    if (e->ntypes > 1) return check_typed(e, msg, n);
    return 0;
}

int ds_engine_set_quota(ds_engine_t *e, int32_t tenant, int64_t gpus)
{
    if (tenant < 0 || tenant >= e->trace->ntenants || gpus < 0 || gpus > DS_MAX_QUOTA_GPUS) return DS_EINVAL;
    if (gpus == e->tenant_quota[tenant]) return DS_OK;
    /* partitions sized from quotas at create: a new quota would need other nodes */
    if (e->cfg.mode != DS_MODE_POOLED || e->ops->setup) return DS_EINVAL;
    /* typed: which type's quota a new total changes is not said; ds_engine_set_quota_typed says it */
    if (e->trace->ngtypes > 1) return DS_EINVAL;
    e->tenant_quota[tenant] = gpus;
    e->tenant_quota_t[(size_t)tenant * (size_t)e->ntypes] = gpus;
    for (int32_t p = 0; p < e->nparts; p++) e->parts[p].dirty = 1;
    return DS_OK;
}

int ds_engine_set_quota_typed(ds_engine_t *e, int32_t tenant, const int64_t *gpus_t)
{
    if (tenant < 0 || tenant >= e->trace->ntenants) return DS_EINVAL;
    int64_t sum = 0;
    for (int32_t t = 0; t < e->ntypes; t++) {
        if (gpus_t[t] < 0 || gpus_t[t] > DS_MAX_QUOTA_GPUS) return DS_EINVAL;
        sum += gpus_t[t];
    }
    if (sum > DS_MAX_QUOTA_GPUS) return DS_EINVAL;
    int same = sum == e->tenant_quota[tenant];
    for (int32_t t = 0; t < e->ntypes; t++) same &= gpus_t[t] == ds_engine_quota_t(e, tenant, t);
    if (same) return DS_OK;
    if (e->cfg.mode != DS_MODE_POOLED || e->ops->setup) return DS_EINVAL;
    e->tenant_quota[tenant] = sum;
    for (int32_t t = 0; t < e->ntypes; t++) e->tenant_quota_t[(size_t)tenant * (size_t)e->ntypes + (size_t)t] = gpus_t[t];
    for (int32_t p = 0; p < e->nparts; p++) e->parts[p].dirty = 1;
    return DS_OK;
}

static _Thread_local const ds_engine_t *order_e;
static int cmp_arrival(const void *a, const void *b)
{
    int64_t x = order_e->js[*(const int32_t *)a].arrival_seq, y = order_e->js[*(const int32_t *)b].arrival_seq;
    return (x > y) - (x < y);
}

int32_t ds_engine_pending_order(const ds_engine_t *e, int32_t *out, int32_t max)
{
    if (e->ops->pending_order) return e->ops->pending_order(e, e->pstate, out, max);
    int32_t n = 0;
    for (int32_t p = 0; p < e->nparts; p++) n += e->parts[p].npending;
    int32_t *v = ds_xmalloc((size_t)(n ? n : 1) * sizeof *v), k = 0;
    for (int32_t j = 0; j < e->trace->njobs && k < n; j++)
        if (e->js[j].status == DS_JS_PENDING) v[k++] = j;
    order_e = e;
    qsort(v, (size_t)k, sizeof *v, cmp_arrival);
    memcpy(out, v, (size_t)DS_MIN(k, max) * sizeof *v);
    free(v);
    return k;
}
