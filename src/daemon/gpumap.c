/* gpumap.c: deepshared's map of the GPUs as Slurm will use them, below both flows: the nodes and their shard
 * counts (GPUs that lost their shards, GPUs Slurm keeps shards of no job on, GPUs a completing job still
 * holds), the GPUs a dispatch came back from, and from these whether Slurm would start a job on a GPU or run
 * a pair there (the interference predictor the policy sees). */
#include "daemon/daemon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int gpumap_node(const daemon_t *d, const char *name)
{
    for (int i = 0; i < d->nnodes; i++)
        if (!strcmp(d->nodes[i].name, name)) return i;
    return -1;
}

/* The daemon's index of a GPU (node-major: node x gpn + index on the node) from the engine's. */
int gpumap_dgpu(const daemon_t *d, int32_t engine_gpu)
{
    int32_t node = d->e->gpus[engine_gpu].node;
    return node * d->gpn + (engine_gpu - d->e->nodes[node].gpu0);
}

/* A dispatch of job id onto daemon GPU g went back to staging without starting. */
void gpumap_note_bounce(daemon_t *d, uint32_t id, int g)
{
    int32_t i = ds_idmap_put(&d->bounce_of, id, d->nbounce);
    if (i < 0) {
        if ((d->nbounce & (d->nbounce - 1)) == 0)
            d->bounce = ds_xrealloc(d->bounce, (size_t)(d->nbounce ? 2 * d->nbounce : 1) * sizeof *d->bounce);
        i = d->nbounce++;
        memset(&d->bounce[i], 0, sizeof d->bounce[i]);
        d->bounce[i].id = id;
    }
    dbounce_t *b = &d->bounce[i];
    b->t[b->n % D_BOUNCE_GPUS] = daemon_now_mono();
    b->gpu[b->n++ % D_BOUNCE_GPUS] = g;
    d->bounces++;
    dlog(0, "job %u: back to staging from a dispatch to GPU %s:g%d (%d time%s in all); not sent there again for %.0f s",
         id, d->nodes[g / d->gpn].name, g % d->gpn, b->n, b->n == 1 ? "" : "s", D_BOUNCE_FORGET);
}

/* Why slot j must not be dispatched onto GPU idx of node (buf), NULL when it may: a GPU that lost its
 * shards takes no shard job, and a GPU a dispatch of the job came back from is not tried again for a
 * while (D_BOUNCE_FORGET). */
const char *gpumap_refuses(const daemon_t *d, int32_t j, int node, int idx, char *buf, size_t n)
{
    int g = node * d->gpn + idx;
    int32_t b = ds_idmap_get(&d->bounce_of, d->slot[j].id);
    double now = daemon_now_mono();
    for (int i = 0; b >= 0 && i < DS_MIN(d->bounce[b].n, D_BOUNCE_GPUS); i++) {
        const dbounce_t *r = &d->bounce[b];
        if (r->gpu[i] == g && r->t[i] > d->bounce_reset && now - r->t[i] < D_BOUNCE_FORGET) {
            snprintf(buf, n, "a dispatch to GPU %.32s:g%d came back to staging without a start %.0f s ago: not sent "
                     "there again for %.0f s", d->nodes[node].name, idx, now - r->t[i], D_BOUNCE_FORGET);
            return buf;
        }
    }
    if (d->slot[j].shareable && d->shardless && d->shardless[g]) {
        snprintf(buf, n, "GPU %.32s:g%d lost its shards after a slurmctld restart: no shard jobs placed there",
                 d->nodes[node].name, idx);
        return buf;
    }
    int left = d->leftover ? d->leftover[g] : 0;
    if (left) {
        /* seen in the soak: neither a whole-GPU nor a shard job started there, shards left or not */
        snprintf(buf, n, "GPU %.32s:g%d keeps %d shard%s of no job since a slurmctld restart: Slurm starts no job "
                 "there", d->nodes[node].name, idx, left, left == 1 ? "" : "s");
        return buf;
    }
    if (d->foreign && d->foreign[g]) {
        snprintf(buf, n, "GPU %.32s:g%d runs a job deepshared did not dispatch", d->nodes[node].name, idx);
        return buf;
    }
    if (d->completing && d->completing[g]) {
        snprintf(buf, n, "a job on GPU %.32s:g%d is still completing in Slurm", d->nodes[node].name, idx);
        return buf;
    }
    for (int32_t i = 0; i < d->ngrace; i++) {
        /* a preemption victim checkpointing in its grace (grace.c) still runs there in Slurm */
        const dgrace_t *v = &d->grace[i];
        for (int k = 0; v->node == node && k < v->n; k++)
            if (v->idx[k] == idx) {
                snprintf(buf, n, "GPU %.32s:g%d: preempted job %u still runs there, in its grace (signalled %.1f s ago, "
                         "requeued when it ends or after %.0f s)", d->nodes[node].name, idx, v->id, now - v->t_signal,
                         d->cfg.grace);
                return buf;
            }
    }
    return NULL;
}

/* Whether Slurm can run job a beside job b on b's GPU: both on shards, and the GPU is where each of
 * them may run (its index is the one a job was pinned to at its first start; it has its shards; a was
 * not bounced from it). b is running, or was started in this pass and not dispatched yet. */
static int pair_runs_in_slurm(const daemon_t *d, int32_t a, int32_t b)
{
    const ds_engine_t *e = d->e;
    if (!e || a >= d->nslots || b >= d->nslots) return 1;
    const dslot_t *x = &d->slot[a], *y = &d->slot[b];
    if (!x->shareable || !y->shareable) return 0;
    const ds_jstate_t *jb = ds_engine_job(e, b);
    if (jb->status != DS_JS_RUNNING || jb->nplaced != 1) return 1;
    int32_t g = ds_engine_job_gpus(e, b)[0], node = e->gpus[g].node, idx = g - e->nodes[node].gpu0;
    if ((x->npin && x->pin[0] != idx) || (y->npin && y->pin[0] != idx)) return 0;
    char why[160];
    return !gpumap_refuses(d, a, node, idx, why, sizeof why) && !gpumap_refuses(d, b, node, idx, why, sizeof why);
}

/* The interference predictor the policy sees. A pair Slurm cannot run there is predicted to retain
 * nothing, so the policy never proposes it: such a shared start was taken back, and the policy, finding
 * the same pair the next pass, kept both jobs waiting for good (the soak's stuck pinned jobs). */
double gpumap_retention(void *ctx, const ds_trace_t *t, int32_t a, int32_t b)
{
    daemon_t *d = ctx;
    (void)t;
    if (!pair_runs_in_slurm(d, a, b)) return 0.0;
    if (d->have_coloc) return ds_coloc_rho(&d->coloc, a, b);
    return d->cfg.missing_rho;
}

/* Marks the GPUs Slurm reports with fewer than D_SHARDS_NEEDED shards (typed "shard:gN:C" entries;
 * 22.05 recovers C = 0 for a GPU that a running shard job held across a slurmctld restart), logging
 * each change once. */
static void update_shards(daemon_t *d, const sl_node_t *nodes)
{
    int count = 0;
    for (int i = 0; i < d->nnodes; i++)
        for (int k = 0; k < d->gpn; k++) {
            int c = k < SL_MAX_GPUS ? nodes[i].shards[k] : -1;
            uint8_t *was = &d->shardless[i * d->gpn + k];
            /* no typed count (slurmd not registered yet after a restart, untyped shards): keep what we knew */
            uint8_t lost = c < 0 ? *was : c < D_SHARDS_NEEDED;
            if (lost && !*was)
                dlog(0, "GPU %s:g%d lost its shards (Slurm reports shard:g%d:%d, %d needed; a slurmctld restart while a "
                     "shard job held it?): no shard jobs placed there until they come back", nodes[i].name, k, k, c,
                     D_SHARDS_NEEDED);
            else if (!lost && *was) {
                dlog(0, "GPU %s:g%d has its shards again (shard:g%d:%d): shard jobs placed there again", nodes[i].name,
                     k, k, c);
                d->bounce_reset = daemon_now_mono();
            }
            *was = lost;
            count += lost;
        }
    d->nshardless = count;
}

/* Counts, per GPU, the shards Slurm has allocated (GresUsed, from the node read just after the job read)
 * beyond those its running, completing and dispatched jobs hold: what a slurmctld restart left allocated
 * to no job (the shards of shard jobs that ran across the restart are not released when they end). Also
 * marks the GPUs of jobs still completing, which Slurm has not released yet. A job that ends between the
 * two reads changes the job list, so the next sync reads the nodes again before its GPU is offered to
 * another job. Each change is logged once, and a GPU whose leftovers are gone forgives the bounces from
 * it (Slurm repaired). */
void gpumap_update_leftover(daemon_t *d)
{
    int ng = d->nnodes * d->gpn, count = 0;
    int *held = ds_xcalloc((size_t)ng, sizeof *held);
    memset(d->completing, 0, (size_t)ng);
    memset(d->foreign, 0, (size_t)ng);
    for (int i = 0; i < d->nsj; i++) {
        const sl_job_t *j = &d->sj[i];
        if (j->state == SL_RUNNING && !screen_ours(j)) {
            /* an operator's job (or one Slurm ran on its own): its GPUs are taken */
            int n = gpumap_node(d, j->nodes);
            for (int k = 0; n >= 0 && k < j->ngpu_idx; k++)
                if (j->gpu_idx[k] >= 0 && j->gpu_idx[k] < d->gpn) d->foreign[n * d->gpn + j->gpu_idx[k]] = 1;
        }
        /* dispatched (pending where we sent it): Slurm may have started it since the job read */
        int sent = j->state == SL_PENDING && !j->held && j->req_nodes[0] && strcmp(j->partition, d->cfg.staging);
        if (j->state != SL_RUNNING && !j->completing && !sent) continue;
        int n = gpumap_node(d, j->state == SL_RUNNING || j->completing ? j->nodes : j->req_nodes);
        for (int k = 0; n >= 0 && k < j->ngpu_idx; k++) {
            int g = j->gpu_idx[k];
            if (g < 0 || g >= d->gpn) continue;
            held[n * d->gpn + g] += j->on_shard;
            if (j->state != SL_RUNNING && !sent) d->completing[n * d->gpn + g] = 1;
        }
    }
    for (int g = 0; g < ng; g++) {
        const sl_node_t *nd = &d->nodes[g / d->gpn];
        int k = g % d->gpn, used = k < SL_MAX_GPUS ? nd->shards_used[k] : 0;
        int left = DS_MAX(0, DS_MIN(used - held[g], 255));
        if (left && !d->leftover[g])
            dlog(0, "GPU %s:g%d: Slurm has %d shard%s allocated to no job (GresUsed shard:g%d:%d, jobs hold %d; a "
                 "slurmctld restart?): no job placed there until they are gone",
                 nd->name, k, left, left == 1 ? "" : "s", k, used, held[g]);
        else if (!left && d->leftover[g]) {
            dlog(0, "GPU %s:g%d: no shards allocated to no job any more: jobs placed there again", nd->name, k);
            d->bounce_reset = daemon_now_mono();
        }
        d->leftover[g] = (uint8_t)left;
        count += left > 0;
    }
    free(held);
    d->nleftover = count;
}

/* Sorts nodes by GPU type, types in the order of names (stable within a type): the engine lays out a
 * typed cluster's nodes type by type. */
static const char (*sort_names)[DS_GTYPE_NAME];
static int sort_ntypes;
static int type_index(const char (*names)[DS_GTYPE_NAME], int nt, const char *t)
{
    for (int k = 0; k < nt; k++)
        if (!strcmp(names[k], t)) return k;
    return -1;
}
static int cmp_type(const void *a, const void *b)
{
    const sl_node_t *x = a, *y = b;
    int tx = type_index(sort_names, sort_ntypes, x->gpu_type), ty = type_index(sort_names, sort_ntypes, y->gpu_type);
    if (tx != ty) return tx < ty ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}
static void sort_by_type(sl_node_t *nodes, int n, const char (*names)[DS_GTYPE_NAME], int nt)
{
    for (int i = 0; i < n; i++) nodes[i].pos = i;
    sort_names = names, sort_ntypes = nt;
    qsort(nodes, (size_t)n, sizeof *nodes, cmp_type);
}

/* The GPU types of the nodes (d->typed, ntypes, tname, per-type shapes), the nodes sorted by type; -1 with
 * err when Slurm's nodes mix GPUs typed by model with others, or a node has GPUs of two models. */
static int node_types(daemon_t *d, sl_node_t *nodes, int n, char *err, size_t errn)
{
    int nt = 0, typed = 0, untyped = -1, pins = -1, picks = -1;
    char names[DS_MAX_GPU_TYPES][DS_GTYPE_NAME];
    for (int i = 0; i < n; i++) {
        if (nodes[i].model_pins && pins < 0) pins = i;
        if (nodes[i].model_picks && picks < 0) picks = i;
        if (nodes[i].model_pins && nodes[i].model_picks) {
            snprintf(err, errn, "node %s has GPUs typed by model (gpu:%s:N) and per GPU (gpu:%s_gN:1): deepshared "
                     "needs one or the other", nodes[i].name, nodes[i].gpu_type, nodes[i].gpu_type);
            return -1;
        }
        if (nodes[i].types > 1) {
            snprintf(err, errn, "node %s has GPUs of several models (Gres %s...): deepshared needs one GPU type per node",
                     nodes[i].name, nodes[i].gpu_type);
            return -1;
        }
        if (!nodes[i].gpu_type[0]) {
            if (untyped < 0) untyped = i;
            continue;
        }
        typed = 1;
        if (type_index(names, nt, nodes[i].gpu_type) >= 0) continue;
        if (nt == DS_MAX_GPU_TYPES) {
            snprintf(err, errn, "Slurm's nodes have more than %d GPU types", DS_MAX_GPU_TYPES);
            return -1;
        }
        snprintf(names[nt++], sizeof names[0], "%s", nodes[i].gpu_type);
    }
    if (typed && untyped >= 0) {
        snprintf(err, errn, "node %s has GPUs without a model type while others have one (%s): give every node's "
                 "gpu GRES a model type (Gres=gpu:TYPE:N) or none (docs/deepshared.md, GPU types)",
                 nodes[untyped].name, names[0]);
        return -1;
    }
    if (pins >= 0 && picks >= 0) {
        snprintf(err, errn, "node %s has per-GPU types with the model (gpu:%s_g0:1,...) while node %s has GPUs typed "
                 "by model (gpu:%s:N): configure every node one way (docs/deepshared.md, GPU types)", nodes[pins].name,
                 nodes[pins].gpu_type, nodes[picks].name, nodes[picks].gpu_type);
        return -1;
    }
    /* by name, so the engine's type indices do not depend on Slurm's node order */
    qsort(names, (size_t)nt, sizeof names[0], (int (*)(const void *, const void *))strcmp);
    sort_by_type(nodes, n, (const char (*)[DS_GTYPE_NAME])names, nt);
    d->typed = typed;
    d->model_pins = typed && pins >= 0;
    d->ntypes = nt > 1 ? nt : 0;
    memset(d->tnodes, 0, sizeof d->tnodes);
    memset(d->tgpn, 0, sizeof d->tgpn);
    memset(d->tcpn, 0, sizeof d->tcpn);
    memset(d->tmpn, 0, sizeof d->tmpn);
    memcpy(d->tname, names, sizeof names[0] * (size_t)nt);
    free(d->node_type);
    d->node_type = ds_xcalloc((size_t)(n ? n : 1), sizeof *d->node_type);
    for (int i = 0; i < n; i++) {
        int t = d->ntypes ? type_index(names, nt, nodes[i].gpu_type) : 0;
        d->node_type[i] = (int8_t)t;
        d->tnodes[t]++;
        d->tgpn[t] = DS_MAX(d->tgpn[t], nodes[i].gpus);
        if (!d->tcpn[t] || nodes[i].cpus < d->tcpn[t]) d->tcpn[t] = nodes[i].cpus;
        if (!d->tmpn[t] || nodes[i].mem_mib < d->tmpn[t]) d->tmpn[t] = nodes[i].mem_mib;
    }
    return 0;
}

int gpumap_load_nodes(daemon_t *d, char *err, size_t errn)
{
    sl_node_t *nodes = NULL;
    int n = 0;
    if (sl_load_nodes(&nodes, &n, err, errn)) return -1;
    if (node_types(d, nodes, n, err, errn)) {
        free(nodes);
        return -1;
    }
    int gpn = 0, cpn = 0;
    int64_t mpn = 0;
    for (int i = 0; i < n; i++) {
        if (nodes[i].gpus > gpn) gpn = nodes[i].gpus;
        if (!cpn || nodes[i].cpus < cpn) cpn = nodes[i].cpus;
        if (!mpn || nodes[i].mem_mib < mpn) mpn = nodes[i].mem_mib;
    }
    if (n == 0 || gpn == 0) {
        snprintf(err, errn, "Slurm reports %d nodes and no GPUs (gres gpu) on them", n);
        free(nodes);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        int t = d->node_type[i], tg = d->ntypes ? d->tgpn[t] : gpn;
        if (nodes[i].gpus != tg)
            dlog(0, "node %s has %d GPUs, others%s%s %d: the engine models %d on every %snode", nodes[i].name,
                 nodes[i].gpus, d->ntypes ? " of type " : "", d->ntypes ? d->tname[t] : "", tg, tg,
                 d->ntypes ? "such " : "");
    }
    free(d->nodes);
    d->nodes = nodes;
    d->nnodes = n;
    d->gpn = gpn;
    d->cpn = cpn;
    d->mpn = mpn;
    if (d->ntypes)
        for (int t = 0; t < d->ntypes; t++)
            dlog(0, "cluster: GPU type %s: %d nodes x %d GPUs, %d CPUs, %lld MiB (%s: gres %s:%s%s)", d->tname[t],
                 d->tnodes[t], d->tgpn[t], d->tcpn[t], (long long)d->tmpn[t],
                 d->model_pins ? "pinned per GPU" : "Slurm picks the GPUs", d->model_pins ? "gpu|shard" : "gpu",
                 d->tname[t], d->model_pins ? "_gN:1" : ":N");
    else
        dlog(0, "cluster: %d nodes x %d GPUs, %d CPUs, %lld MiB%s%s%s", n, gpn, cpn, (long long)mpn,
             d->typed ? " of type " : "", d->typed ? d->tname[0] : "",
             !d->typed ? "" : d->model_pins ? " (pinned per GPU)" : " (Slurm picks the GPUs)");
    free(d->shardless);
    d->shardless = ds_xcalloc((size_t)n * (size_t)gpn, 1);
    d->nshardless = 0;
    free(d->leftover);
    free(d->completing);
    free(d->foreign);
    d->leftover = ds_xcalloc((size_t)n * (size_t)gpn, 1);
    d->completing = ds_xcalloc((size_t)n * (size_t)gpn, 1);
    d->foreign = ds_xcalloc((size_t)n * (size_t)gpn, 1);
    d->nleftover = 0;
    update_shards(d, nodes);
    d->t_nodes = daemon_now_mono();
    return 0;
}

/* Reads the nodes again for their shard counts (the topology is read once, at start). */
int gpumap_refresh_nodes(daemon_t *d, char *err, size_t errn)
{
    sl_node_t *nodes = NULL;
    int n = 0;
    if (sl_load_nodes(&nodes, &n, err, errn)) return -1;
    d->t_nodes = daemon_now_mono();
    if (d->typed) sort_by_type(nodes, n, (const char (*)[DS_GTYPE_NAME])d->tname, d->ntypes ? d->ntypes : 1);
    int same = n == d->nnodes;
    for (int i = 0; same && i < n; i++) same = !strcmp(nodes[i].name, d->nodes[i].name);
    if (same) {
        update_shards(d, nodes);
        free(d->nodes);
        d->nodes = nodes;
    } else {
        dlog(1, "Slurm reports %d nodes, deepshared started with %d: restart deepshared to schedule on the new set",
             n, d->nnodes);
        free(nodes);
    }
    return 0;
}
