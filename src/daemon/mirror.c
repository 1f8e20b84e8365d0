/* mirror.c: Slurm -> engine. Reads Slurm (nodes through gpumap.c, jobs when they changed) and mirrors it
 * into the engine: a growing table of job slots filled from the jobs' comments and admin comments, each
 * Slurm job reconciled with its slot (finished, requeued, started elsewhere, a dispatch Slurm does not
 * start), and the engine rebuilt from Slurm alone after a restart or a surprise. */
#include "daemon/daemon.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int32_t daemon_slot_of(const daemon_t *d, uint32_t id) { return ds_idmap_get(&d->byid, id); }

static int is_ours(const daemon_t *d, const char *part)
{
    return !strcmp(part, d->cfg.g_partition) || !strcmp(part, d->cfg.be_partition);
}

int mirror_typed_quota(const daemon_t *d, const dc_tenant_t *t, int64_t *qt, ds_error_t *err)
{
    int nt = d->ntypes ? d->ntypes : 1;
    for (int k = 0; k < DS_MAX_GPU_TYPES; k++) qt[k] = 0;
    if (!t->ntq) {
        if (d->ntypes) {
            ds_error_set(err, d->cfg.path, t->line, "tenant", "tenant '%s': a quota of %d GPUs without GPU types, but "
                         "Slurm's nodes have several (%s, %s%s): give it per type ('tenant %s %s:N,%s:N')", t->name, t->quota,
                         d->tname[0], d->tname[1], d->ntypes > 2 ? ", ..." : "", t->name, d->tname[0], d->tname[1]);
            return DS_EINVAL;
        }
        qt[0] = t->quota;
        return DS_OK;
    }
    for (int k = 0; k < t->ntq; k++) {
        int ty = -1;
        for (int m = 0; d->typed && m < nt; m++)
            if (!strcasecmp(d->tname[m], t->tq_name[k])) ty = m;
        if (ty < 0) {
            ds_error_set(err, d->cfg.path, t->line, "tenant", "tenant '%s': GPU type '%s' is no model type of Slurm's "
                         "nodes (%s%s%s)", t->name, t->tq_name[k], d->typed ? "types: " : "their GPUs have no model type",
                         d->typed ? d->tname[0] : "", d->ntypes > 1 ? ", ..." : "");
            return DS_EINVAL;
        }
        qt[ty] = t->tq[k];
    }
    return DS_OK;
}

/* The engine GPUs a dispatched or running job holds, from its node and pinned indices; on a node typed by
 * model (Slurm picks the GPUs) a dispatched job's are the engine's own choice there until Slurm runs it,
 * else (a rebuild) the node's first free ones, and a running job's those Slurm reports (gres_detail). */
static int job_engine_gpus(const daemon_t *d, const sl_job_t *j, int32_t *out)
{
    const char *node = j->nodes[0] ? j->nodes : j->req_nodes;
    int n = gpumap_node(d, node);
    if (n >= 0 && gpumap_picks_whole(d) && j->ngpu_idx == 0 && j->gres_gpus > 0 && j->state == SL_PENDING) {
        int32_t s = daemon_slot_of(d, j->id);
        const ds_jstate_t *js = s >= 0 && s < d->nslots ? ds_engine_job(d->e, s) : NULL;
        if (js && js->status == DS_JS_RUNNING && js->nplaced == j->gres_gpus &&
            d->e->gpus[ds_engine_job_gpus(d->e, s)[0]].node == n) {
            memcpy(out, ds_engine_job_gpus(d->e, s), (size_t)js->nplaced * sizeof *out);
            return js->nplaced;
        }
        int k = 0;
        for (int g = 0; g < d->e->nodes[n].ngpus && k < j->gres_gpus; g++)
            if (ds_engine_gpu(d->e, d->e->nodes[n].gpu0 + g)->nres == 0) out[k++] = d->e->nodes[n].gpu0 + g;
        return k;
    }
    if (n < 0 || j->ngpu_idx == 0) return 0;
    for (int i = 0; i < j->ngpu_idx; i++) {
        if (j->gpu_idx[i] < 0 || j->gpu_idx[i] >= d->e->nodes[n].ngpus) return 0;
        out[i] = d->e->nodes[n].gpu0 + j->gpu_idx[i];
    }
    return j->ngpu_idx;
}

static void warn_once(daemon_t *d, uint32_t id, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void warn_once(daemon_t *d, uint32_t id, const char *fmt, ...)
{
    if (ds_idmap_put(&d->warned, id, 1) >= 0) return;
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    dlog(0, "job %u: %s", id, msg);
}

/* Why a Slurm job that is live in Slurm is not scheduled by us (NULL when it is): a job waiting in staging
 * as screen.c screens it (*wait set when it only waits for Slurm: a begin time, a dependency); one in our
 * partitions must be one we dispatched (an operator's own job there is left alone) of a tenant. */
static const char *unschedulable(daemon_t *d, const sl_job_t *j, char *buf, size_t n, int *wait)
{
    *wait = 0;
    if (!strcmp(j->partition, d->cfg.staging)) {
        int rc = screen_job(d, j, buf, n);
        if (rc > 0) *wait = 1;
        return rc ? buf : NULL;
    }
    if (!screen_ours(j)) {
        snprintf(buf, n, "%s in %s but not dispatched by deepshared (submitted or moved there by root or SlurmUser?): "
                 "left alone, its GPUs are given to no other job", j->state == SL_RUNNING ? "runs" : "waits",
                 j->partition);
        return buf;
    }
    if (screen_tenant(d, j->account) < 0) {
        char acct[64 * 4 + 1];
        screen_escape(j->account, acct, sizeof acct);
        snprintf(buf, n, "account '%.120s' is not a tenant in %.100s; left in partition %.60s", acct, d->cfg.path,
                 j->partition);
        return buf;
    }
    return NULL;
}

/* The speed table over the slots (before the engine is made): every workload name of the table interned, so
 * a slot filled later finds its workload (ds_speeds_bind_job); each type's weight in effective GPUs from the
 * table, as the simulator's (durations learned from the journal are on the first type, the reference). */
static void speeds_to_trace(daemon_t *d, ds_trace_t *t)
{
    ds_speeds_intern(&d->speeds, t);
    t->ref_gtype = 0;
    ds_speeds_bind(&d->speeds, t);
    char line[400];
    size_t n = 0;
    for (int32_t k = 0; k < t->ngtypes; k++) {
        int known = 0;
        for (int32_t i = 0; i < d->speeds.nrows && !known; i++) known = !strcasecmp(d->speeds.rows[i].gtype, t->gtypes[k].name);
        t->gtypes[k].weight = ds_speeds_type_weight(&d->speeds, t, k);
        if (n < sizeof line)
            n += (size_t)snprintf(line + n, sizeof line - n, "%s%s x%.2f%s", k ? ", " : "", t->gtypes[k].name,
                                  t->gtypes[k].weight, known ? "" : " (not in the table: as fast as the reference)");
    }
    if (!d->rebuilds) dlog(0, "speeds: effective GPUs per GPU of each type against %s: %s", t->gtypes[0].name, line);
}

/* Fills slot s (an unused placeholder) with Slurm job j. */
static int32_t add_slot(daemon_t *d, const sl_job_t *j)
{
    int32_t s = d->nslots++;
    ds_job_t *job = &d->trace.jobs[s];
    screen_hints_t h;
    char w[8];
    screen_hints(j->comment, &h, w, sizeof w); /* screened before (a job we dispatched: as far as it parses) */
    job->id = j->id;
    job->submit = j->submit;
    job->tenant = screen_tenant(d, j->account);
    job->user = ds_strtab_intern(&d->trace.users, j->user);
    job->gpus = screen_gpus(j);
    /* a request typed by model (screened: a type of the nodes) runs on that type only */
    int32_t ty = d->ntypes && j->gpu_type[0] ? ds_trace_find_gtype(&d->trace, j->gpu_type) : -1;
    job->gtype = (int8_t)ty;
    job->gmask = ty >= 0 ? (uint8_t)(1u << ty) : 0;
    job->cpus = j->cpus > 0 ? j->cpus : 1;
    job->mem_mib = j->mem_mib;
    job->model = h.model[0] ? ds_strtab_intern(&d->trace.models, h.model) : -1;
    job->dataset = h.dataset[0] ? ds_strtab_intern(&d->trace.datasets, h.dataset) : -1;
    job->batch = h.batch;
    job->amp = h.amp;
    job->gmem_mib = h.gmem >= 0 ? h.gmem : d->cfg.default_gmem_mib;
    job->klass = (uint8_t)h.klass;
    job->ckpt = h.ckpt; /* the preemption cost counts from its last checkpoint (docs/policy.md §4.1) */
    /* its time limit caps what is predicted of it, and foretells it for a user whose limits have (limits.h) */
    job->limit = (int32_t)(j->limit_s > 0 && j->limit_s <= DS_MAX_DURATION ? j->limit_s : 0);
    double p = d->rt.predict(d->rt.ctx, &d->trace, s, d->now > 0 ? d->now : (int64_t)time(NULL));
    job->estimate = p;
    job->duration = (int64_t)ceil(p); /* what "oracle" policies see: the daemon has no truth */
    job->line = 0;
    if (d->have_speeds) ds_speeds_bind_job(&d->speeds, &d->trace, s);
    dslot_t *sl = &d->slot[s];
    memset(sl, 0, sizeof *sl);
    sl->id = j->id;
    sl->t_seen = daemon_now_mono();
    /* Slurm 22.05 refuses a shard on a job that asked for a GPU GRES at submit, and a shard holds one GPU */
    sl->shareable = job->gpus == 1 && j->untyped_gpus == 0 && j->gres_gpus == 0 && !(j->ngpu_idx > 0 && !j->on_shard);
    /* our own record in the admin comment: "deepshare class=G gres=shard pin=2" */
    const char *g = strstr(j->admin_comment, "gres=");
    if (g) sl->shareable = job->gpus == 1 && !strncmp(g + 5, "shard", 5);
    if (!d->cfg.gpu_sharing && !g) sl->shareable = 0;
    if (gpumap_slurm_picks(d)) sl->shareable = 0; /* GPUs typed by model carry no per-GPU shards to pin */
    const char *pin = strstr(j->admin_comment, "pin=");
    if (pin) {
        pin += 4;
        while (sl->npin < SL_MAX_GPUS && *pin >= '0' && *pin <= '9') {
            char *end;
            sl->pin[sl->npin++] = (int8_t)strtol(pin, &end, 10);
            pin = *end == ',' ? end + 1 : end;
        }
    }
    ds_idmap_put(&d->byid, j->id, s);
    return s;
}

static int cmp_submit(const void *a, const void *b)
{
    const sl_job_t *x = *(sl_job_t *const *)a, *y = *(sl_job_t *const *)b;
    if (x->submit != y->submit) return x->submit < y->submit ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/* Live = pending in staging, dispatched or running in our partitions, for a known tenant. */
static int is_live(daemon_t *d, const sl_job_t *j)
{
    if (j->state == SL_PENDING && !strcmp(j->partition, d->cfg.staging)) return 1;
    if (j->state == SL_RUNNING && is_ours(d, j->partition)) return 1;
    if (j->state == SL_PENDING && is_ours(d, j->partition)) return 1;
    return 0;
}

/* Running (or dispatched, not held) in one of our partitions: holds its pinned GPUs. */
static int holds_gpus(daemon_t *d, const sl_job_t *j)
{
    if (!is_ours(d, j->partition)) return 0;
    if (j->state == SL_RUNNING) return 1;
    return j->state == SL_PENDING && !j->held;
}

/* Node states as Slurm reports them, into the engine: a node drained, down, failing or not responding takes
 * no placements (ds_engine_set_node_down); the jobs running there are left as Slurm reports them (a drain
 * lets them run, a node failure requeues or ends them: the mirror sees it). A node back is offered again.
 * Returns how many nodes changed. */
static int nodes_to_engine(daemon_t *d)
{
    int changed = 0, down = 0;
    for (int32_t n = 0; d->e && n < d->e->nnodes && n < d->nnodes; n++) {
        const sl_node_t *nd = &d->nodes[n];
        down += !nd->up;
        if (ds_engine_node_down(d->e, n) == !nd->up) continue;
        changed++;
        ds_engine_set_node_down(d->e, n, !nd->up);
        int running = 0;
        for (int32_t g = d->e->nodes[n].gpu0; g < d->e->nodes[n].gpu0 + d->e->nodes[n].ngpus; g++)
            running += ds_engine_gpu(d->e, g)->nres;
        if (!nd->up) {
            d->node_outages++;
            dlog(0, "node %s %s in Slurm: no placements there until it is back (%d job%s running there, kept as Slurm "
                 "reports them)", nd->name, nd->down_why, running, running == 1 ? "" : "s");
        } else {
            dlog(0, "node %s back in service: offered to the policy again", nd->name);
        }
    }
    d->nodes_down = down;
    return changed;
}

/* Builds the engine from the Slurm snapshot alone: the start state and the state after a restart
 * (docs/policy.md §1: the policy warm-starts its QAD from the first cycle; nothing else is stored). */
static int rebuild(daemon_t *d, ds_error_t *err)
{
    if (d->e) ds_engine_destroy(d->e);
    d->e = NULL;
    int32_t live = 0;
    sl_job_t **v = ds_xmalloc((size_t)(d->nsj ? d->nsj : 1) * sizeof *v);
    char why[300];
    for (int i = 0; i < d->nsj; i++) {
        sl_job_t *j = &d->sj[i];
        if (!is_live(d, j)) continue;
        if (j->state == SL_PENDING && !strcmp(j->partition, d->cfg.staging) && j->held) continue;
        int wait;
        if (unschedulable(d, j, why, sizeof why, &wait)) continue; /* logged by daemon_sync */
        v[live++] = j;
    }
    qsort(v, (size_t)live, sizeof *v, cmp_submit);
    int32_t cap = d->cfg.job_capacity;
    while (cap < 2 * live + 16) cap *= 2;
    /* placeholder slots: a policy sizes its per-job arrays once, at init */
    ds_trace_t *t = &d->trace;
    ds_trace_free(t);
    ds_trace_init(t);
    snprintf(t->source, sizeof t->source, "slurm");
    for (int k = 0; k < d->ntypes; k++) {
        /* the nodes' GPU models are the engine's node types (sorted by name, the nodes by type) */
        int32_t ty = ds_trace_add_gtype(t, d->tname[k]);
        if (ty < 0) {
            ds_error_set(err, NULL, 0, "gres", "Slurm's GPU type '%s' cannot be a node type", d->tname[k]);
            free(v);
            return DS_EINVAL;
        }
        ds_gtype_t *gt = &t->gtypes[ty];
        gt->gpus_per_node = d->tgpn[k];
        gt->cpus_per_node = d->tcpn[k];
        gt->mem_per_node = d->tmpn[k];
        gt->gmem_per_gpu = d->cfg.gmem_mib;
        gt->nodes = d->tnodes[k];
    }
    for (int i = 0; i < d->cfg.ntenants; i++) {
        int64_t qt[DS_MAX_GPU_TYPES];
        int qrc = mirror_typed_quota(d, &d->cfg.tenants[i], qt, err);
        if (qrc) {
            free(v);
            return qrc;
        }
        int32_t ti = ds_trace_add_tenant(t, d->cfg.tenants[i].name, d->cfg.tenants[i].quota);
        for (int k = 0; k < d->ntypes; k++) t->tenants[ti].quota_t[k] = (int32_t)qt[k];
    }
    for (int32_t s = 0; s < cap; s++) {
        ds_job_t *job = ds_trace_add_job(t);
        job->id = -1 - s;
        job->gpus = d->gpn;
        job->cpus = 1;
        job->duration = 1;
        job->user = -1;
    }
    ds_strtab_intern(&t->users, "?");
    if (d->have_speeds && d->ntypes > 1) speeds_to_trace(d, t);
    d->slot = ds_xrealloc(d->slot, (size_t)cap * sizeof *d->slot);
    memset(d->slot, 0, (size_t)cap * sizeof *d->slot);
    ds_idmap_free(&d->byid);
    ds_idmap_init(&d->byid);
    d->nslots = 0;
    ds_engine_config_t ec;
    ds_engine_config_default(&ec);
    ec.mode = DS_MODE_POOLED;
    ec.pool_nodes = d->nnodes;
    ec.gpus_per_node = d->gpn;
    ec.cpus_per_node = d->cpn;
    ec.mem_per_node = d->mpn;
    ec.gmem_per_gpu = d->cfg.gmem_mib;
    ec.k = d->cfg.k;
    ec.predictors = &d->preds;
    /* slot fields are filled before arrival, so a policy reading jobs at arrival sees the real job */
    int rc = ds_engine_create(&d->e, t, &ec, d->ops, d->pconfig, err);
    if (rc) { free(v); return rc; }
    ds_engine_set_hooks(d->e, &(ds_driver_hooks_t){.ctx = d, .observe_retention = daemon_observe_retention});
    d->now = DS_MAX(d->now, (int64_t)time(NULL));
    int32_t gbuf[SL_MAX_GPUS];
    int32_t *slots = ds_xmalloc((size_t)(live ? live : 1) * sizeof *slots);
    for (int32_t i = 0; i < live; i++) slots[i] = add_slot(d, v[i]);
    /* Running jobs first, dispatched ones after: when a requeue failed, Slurm still runs the job on the
     * GPU a later dispatch was pinned to; that dispatch waits in Slurm, so it goes back to staging. */
    for (int pass = 0; pass < 2; pass++)
    for (int32_t i = 0; i < live; i++) {
        sl_job_t *j = v[i];
        int32_t s = slots[i];
        int dispatched = j->state == SL_PENDING && holds_gpus(d, j);
        if (dispatched != pass) continue;
        if (holds_gpus(d, j) && daemon_grace_find(d, j->id) >= 0) {
            /* preempted, in its grace: pending, as the policy left it; its GPUs stay refused (gpumap.c) */
            ds_engine_set_preemptions(d->e, s, j->restarts);
            ds_engine_arrive(d->e, s, d->now);
            continue;
        }
        if (holds_gpus(d, j)) {
            int n = job_engine_gpus(d, j, gbuf);
            if (n != t->jobs[s].gpus) {
                dlog(0, "job %u: running in %s without GPUs deepshared can place (%s on %s); treated as pending",
                     j->id, j->partition, j->tres_per_node, j->nodes[0] ? j->nodes : j->req_nodes);
                d->slot[s].requeued = 1;
                ds_engine_arrive(d->e, s, d->now);
                continue;
            }
            int ok = 1, room = 1;
            for (int k = 0; k < n; k++) {
                ok &= ds_engine_gpu(d->e, gbuf[k])->nres < DS_MAX_K;
                room &= ds_engine_gpu(d->e, gbuf[k])->nres < d->cfg.k;
            }
            if (dispatched && !room) {
                char err[300];
                dlog(0, "job %u: dispatched to a GPU another job holds; back to staging", j->id);
                if (sl_restage(j->id, d->cfg.staging, err, sizeof err)) dlog(0, "%s", err), d->errors++;
                else {
                    snprintf(j->partition, sizeof j->partition, "%s", d->cfg.staging), j->req_nodes[0] = 0;
                    gpumap_note_bounce(d, j->id, gpumap_dgpu(d, gbuf[0]));
                }
                ds_engine_set_preemptions(d->e, s, j->restarts);
                ds_engine_arrive(d->e, s, d->now);
                continue;
            }
            if (!ok) { dlog(0, "job %u: more residents on its GPU than supported; ignored", j->id); continue; }
            int klass = strstr(j->admin_comment, "class=BE") ? DS_CLASS_BE
                      : strstr(j->admin_comment, "class=G") ? DS_CLASS_G
                      : !strcmp(j->partition, d->cfg.be_partition) ? DS_CLASS_BE : DS_CLASS_G;
            ds_engine_adopt(d->e, s, gbuf, klass, d->now);
            ds_engine_set_preemptions(d->e, s, j->restarts);
            d->slot[s].seen_running = j->state == SL_RUNNING;
            d->slot[s].t_dispatch = j->state == SL_PENDING ? daemon_now_mono() : 0;
        } else {
            ds_engine_set_preemptions(d->e, s, j->restarts);
            if (j->state == SL_PENDING && is_ours(d, j->partition)) d->slot[s].requeued = 1; /* held by our requeue */
            ds_engine_arrive(d->e, s, d->now);
        }
    }
    free(slots);
    ds_engine_clear_decisions(d->e);
    ds_engine_clear_rate_changes(d->e);
    if (d->have_coloc) ds_coloc_bind(&d->coloc, t);
    free(v);
    d->rebuilds++;
    d->need_rebuild = 0;
    nodes_to_engine(d);
    dlog(0, "state rebuilt from Slurm: %d live jobs, capacity %d", live, cap);
    return DS_OK;
}

/* A finished job's run time as the journal learns it: all its runs, the earlier ones as the engine counted
 * them, since a prediction is compared with what the job has run in all (a requeued job that resumed from
 * its checkpoint ran only what was left in its last run). With a speed table on several types, in seconds of
 * the reference type (the first), as the simulator's durations and the policy's work done count it -- its
 * run time there times its rate on the type it ran on. A job whose slot is gone (it ended while deepshared
 * was down) is learned from its last run. */
static double journal_seconds(const daemon_t *d, const sl_job_t *j)
{
    double secs = (double)(j->end - j->start);
    int32_t s = daemon_slot_of(d, j->id);
    const ds_jstate_t *js = d->e && s >= 0 ? ds_engine_job(d->e, s) : NULL;
    if (js && js->status == DS_JS_RUNNING) secs += (double)js->run_time;
    if (!d->have_speeds || d->ntypes < 2 || !js) return secs;
    int node = gpumap_node(d, j->nodes);
    int32_t ty = node >= 0 ? d->node_type[node] : ds_engine_job_type(d->e, s);
    return ty >= 0 ? secs * ds_engine_speed(d->e, s, ty) : secs;
}

static void journal_finished(daemon_t *d, const sl_job_t *j)
{
    if (j->state != SL_COMPLETED || !is_ours(d, j->partition) || j->start <= 0 || j->end < j->start) return;
    if (hist_seen(&d->hist, j->id, j->end)) return;
    if (daemon_grace_find(d, j->id) >= 0) return; /* ended on our signal: a preempted run, not its runtime */
    int32_t t = screen_tenant(d, j->account);
    if (t < 0 || !screen_ours(j)) return;
    char err[300];
    if (hist_record(&d->hist, j->id, j->account, j->user, screen_gpus(j), journal_seconds(d, j), j->end, j->start,
                    j->submit, j->limit_s, err, sizeof err)) {
        dlog(0, "%s", err);
        d->errors++;
    }
}

static void finish_slot(daemon_t *d, int32_t s, const char *how)
{
    ds_engine_finish(d->e, s, d->now);
    d->finished++;
    dlog(1, "job %u %s", d->slot[s].id, how);
}

/* A pending job leaves the engine (ds_engine_withdraw): every other job's state and every tenant's smoothed
 * QAD stay as they are, where a rebuild would warm-start them all. how: D_AWAY (it may come back) or D_GONE. */
static void withdraw_slot(daemon_t *d, int32_t s, int how, const char *why)
{
    ds_engine_withdraw(d->e, s, d->now);
    d->slot[s].withdrawn = (uint8_t)how;
    d->slot[s].t_dispatch = 0;
    d->withdrawals++;
    dlog(1, "job %u %s: withdrawn from the engine", d->slot[s].id, why);
}

/* Pending in Slurm but not for deepshared to start now: held by its owner in staging, or moved by its owner
 * to a partition that is not deepshared's. Our own requeue holds are in our partitions. */
static const char *away_why(const daemon_t *d, const sl_job_t *j)
{
    if (j->state != SL_PENDING) return NULL;
    int staged = !strcmp(j->partition, d->cfg.staging);
    if (staged && j->held) return "held by its owner";
    if (!staged && !is_ours(d, j->partition)) return "moved out of deepshared's partitions";
    return NULL;
}

/* Fencing, the new leader's side: a job Slurm has pending where a dispatch of an older epoch sent it, after
 * this instance took over and saw it waiting (a deposed leader that wrote after losing its lease), goes back
 * to staging and is scheduled again by this leader; one that already runs is adopted (the caller's
 * rebuild). Returns 1 when it sent the job back. */
static int stale_dispatch(daemon_t *d, const sl_job_t *j)
{
    int64_t ep = lease_comment_epoch(j->admin_comment);
    if (j->state != SL_PENDING || !d->lease.epoch || ep <= 0 || ep >= d->lease.epoch) return 0;
    char err[300];
    dlog(0, "job %u: dispatched under epoch %lld, a deposed leader's, after this instance took over (epoch %lld): "
         "back to staging", j->id, (long long)ep, (long long)d->lease.epoch);
    if (sl_restage(j->id, d->cfg.staging, err, sizeof err)) {
        dlog(0, "%s", err), d->errors++;
        return 0;
    }
    d->stale_rejected++;
    return 1;
}

/* Notes that job slot s runs on engine GPUs g[0..n) in Slurm (moved by apply_moves). */
static void defer_move(daemon_t *d, int32_t s, const int32_t *g, int n)
{
    if (d->nmv == d->capmv) {
        d->capmv = d->capmv ? 2 * d->capmv : 16;
        d->mv_slot = ds_xrealloc(d->mv_slot, (size_t)d->capmv * sizeof *d->mv_slot);
        d->mv_gpus = ds_xrealloc(d->mv_gpus, (size_t)d->capmv * SL_MAX_GPUS * sizeof *d->mv_gpus);
    }
    d->mv_slot[d->nmv++] = s;
    memcpy(d->mv_gpus + d->mv_ngpus, g, (size_t)n * sizeof *g);
    d->mv_ngpus += n;
}

/* Moves the engine's jobs onto the GPUs Slurm picked for them, all at once: where Slurm started two jobs sent
 * to one node in the other order (a prod job before a batch job dispatched earlier: prod's priority tier is
 * higher), each holds GPUs the engine gave the other, and only together do they fit. What does not fit is a
 * state the engine cannot follow: a rebuild. */
static void apply_moves(daemon_t *d)
{
    if (!d->nmv) return;
    if (ds_engine_move_many(d->e, d->nmv, d->mv_slot, d->mv_gpus) == DS_OK) {
        for (int32_t k = 0; k < d->nmv; k++) {
            const sl_job_t *j = daemon_find_job(d, d->slot[d->mv_slot[k]].id);
            if (j) dlog(1, "job %u: Slurm runs it on GPU %d%s of %s: moved there", j->id, j->gpu_idx[0],
                        j->ngpu_idx > 1 ? "+" : "", j->nodes);
        }
    } else if (!d->need_rebuild) {
        d->need_rebuild = 1;
        snprintf(d->rebuild_why, sizeof d->rebuild_why, "job %u holds other GPUs in Slurm", d->slot[d->mv_slot[0]].id);
    }
    d->nmv = d->mv_ngpus = 0;
}

/* Mirrors one Slurm job into its slot. */
static void reconcile(daemon_t *d, int32_t s, const sl_job_t *j, double mono)
{
    const ds_jstate_t *js = ds_engine_job(d->e, s);
    dslot_t *sl = &d->slot[s];
    char err[300];
    /* a preemption victim in its grace: pending for the engine, still on its GPUs in Slurm (or just ended
     * there) until grace.c requeues it -- expected, no surprise */
    if (js->status == DS_JS_PENDING && daemon_grace_find(d, j->id) >= 0) return;
    if (j->state == SL_COMPLETED || j->state == SL_ENDED) {
        if (js->status == DS_JS_RUNNING) finish_slot(d, s, j->state == SL_COMPLETED ? "completed" : "ended");
        else if (js->status == DS_JS_PENDING) withdraw_slot(d, s, D_GONE, "ended while pending (cancelled?)");
        else if (sl->withdrawn) sl->withdrawn = D_GONE;
        return;
    }
    const char *away = away_why(d, j);
    if (js->status == DS_JS_PENDING && away && !sl->requeued) {
        withdraw_slot(d, s, D_AWAY, away);
        return;
    }
    if (sl->withdrawn) {
        /* back in staging and released: it arrives again, its record so far kept */
        if (sl->withdrawn == D_AWAY && !away && j->state == SL_PENDING && !strcmp(j->partition, d->cfg.staging) &&
            js->status == DS_JS_FUTURE) {
            sl->withdrawn = 0;
            ds_engine_arrive(d->e, s, d->now);
            dlog(1, "job %u back in staging: queued again", j->id);
        }
        if (sl->withdrawn && holds_gpus(d, j)) {
            d->need_rebuild = 1; /* started in our partitions by someone else: the rebuild leaves it alone (screen_ours) */
            snprintf(d->rebuild_why, sizeof d->rebuild_why, "withdrawn job %u was started outside deepshared", j->id);
        }
        if (sl->withdrawn) return;
    }
    if (j->state == SL_RUNNING && !sl->seen_running && is_ours(d, j->partition)) {
        sl->seen_running = 1;
        sl->t_run_wall = tel_now(); /* telemetry older than this is of the time before (measure.c) */
        sl->t_start_wall = j->start > 0 ? (double)j->start : 0;
        if (j->start >= j->submit && j->restarts == 0) d->s2r_samples[d->s2r_n++ % D_SAMPLES] = (double)(j->start - j->submit);
        if (sl->t_dispatch > 0) {
            /* where a start's latency goes (docs/deepshared.md, Latency): the daemon's own steps, then Slurm's
             * (slurmctld starts an updated job at its next 1-second background loop), seen at a poll */
            double d2r = mono - sl->t_dispatch;
            d->d2r_samples[d->d2r_n++ % D_SAMPLES] = d2r;
            d->d2r_sum += d2r;
            dlog(1, "job %u running: seen -> pass %.3f s, pass -> dispatched %.3f s, dispatched -> running seen %.3f s",
                 j->id, sl->t_seen > 0 && sl->t_decided >= sl->t_seen ? sl->t_decided - sl->t_seen : 0.0,
                 sl->t_dispatch - sl->t_decided, d2r);
        }
    }
    if (j->state == SL_PENDING) sl->seen_running = 0, sl->t_run_wall = sl->t_start_wall = sl->t_alone_wall = 0, sl->tel_shared = 0;
    int holds = holds_gpus(d, j);
    if (js->status == DS_JS_RUNNING) {
        if (!holds) {
            /* Slurm has it pending without our pins (requeued, dispatch undone): pending here too. The
             * policy did not stop it, so the engine takes the start back instead of preempting it. */
            ds_engine_cancel_start(d->e, s, d->now);
            /* requeued by Slurm itself (a node failure): settle before its next launch, as after ours */
            if (j->restarts > js->preemptions && sl->t_requeue < mono - D_REQUEUE_SETTLE) sl->t_requeue = mono;
            ds_engine_set_preemptions(d->e, s, j->restarts);
            if (j->state == SL_PENDING && is_ours(d, j->partition) && j->held && !j->completing) {
                if (sl_restage(j->id, d->cfg.staging, err, sizeof err)) dlog(0, "%s", err), d->errors++;
                else sl->requeued = 0;
            }
        } else {
            int32_t g[SL_MAX_GPUS];
            int n = job_engine_gpus(d, j, g);
            int same = n == js->nplaced;
            for (int i = 0; same && i < n; i++) same = g[i] == ds_engine_job_gpus(d->e, s)[i];
            if (!same && gpumap_picks_whole(d) && n == js->nplaced && j->state == SL_RUNNING) {
                /* Slurm picked other GPUs of the node than the engine had (it picks them: gpumap_picks_whole);
                 * moved once the sync has seen every job, as another job Slurm started may hold them here */
                defer_move(d, s, g, n);
            } else if (!same) {
                d->need_rebuild = 1;
                snprintf(d->rebuild_why, sizeof d->rebuild_why, "job %u holds other GPUs in Slurm", j->id);
            } else if (j->state == SL_PENDING && (sl->t_dispatch > 0 || ds_engine_node_down(d->e, d->e->gpus[g[0]].node))) {
                /* a dispatch Slurm does not start: onto shards that are gone or a node out of service (it
                 * would wait forever; a job Slurm requeued from a node that went down waits for that node
                 * too), or anything past dispatch_timeout */
                int dg = gpumap_dgpu(d, g[0]), lost = j->on_shard && d->shardless[dg];
                int down = ds_engine_node_down(d->e, d->e->gpus[g[0]].node);
                if (lost || down || mono - sl->t_dispatch > d->cfg.dispatch_timeout) {
                    if (down) dlog(0, "job %u: waits in Slurm for %s, which is %s; back to staging", j->id,
                                   d->nodes[dg / d->gpn].name, d->nodes[dg / d->gpn].down_why);
                    else if (lost) dlog(0, "job %u: dispatched onto shard:g%d of %s, which lost its shards; back to staging", j->id,
                                   dg % d->gpn, d->nodes[dg / d->gpn].name);
                    else dlog(0, "job %u: dispatched %.0f s ago and still not running (%s); back to staging", j->id,
                              mono - sl->t_dispatch, j->partition);
                    if (sl_restage(j->id, d->cfg.staging, err, sizeof err)) dlog(0, "%s", err), d->errors++;
                    else if (!down) gpumap_note_bounce(d, j->id, dg); /* the node back is a fine place again */
                    /* Slurm requeued it from the failed node: its next launch waits as after our own requeue
                     * (slurmd refuses a credential from the second the old one was revoked in) */
                    if (down && j->restarts > 0) sl->t_requeue = mono;
                    sl->t_dispatch = 0;
                }
            }
        }
    } else if (js->status == DS_JS_PENDING) {
        if (holds && stale_dispatch(d, j)) return;
        if (holds) {
            d->need_rebuild = 1;
            snprintf(d->rebuild_why, sizeof d->rebuild_why, "job %u was started outside deepshared", j->id);
        } else if (j->state == SL_PENDING && is_ours(d, j->partition) && j->held && !j->completing) {
            /* our requeue completed: back to staging, released, where only we start it */
            if (sl_restage(j->id, d->cfg.staging, err, sizeof err)) dlog(0, "%s", err), d->errors++;
            else sl->requeued = 0;
        }
    }
}

int daemon_sync(daemon_t *d, int force, char *err, size_t errn)
{
    int nodes_read = 0;
    if (!d->nodes) {
        if (gpumap_load_nodes(d, err, errn)) return -1;
        nodes_read = 1;
    }
    int changed = 0;
    if (force) sl_jobs_reset();
    if (sl_load_jobs(&d->sj, &d->nsj, &changed, err, errn)) return -1;
    if (changed) screen_model_constraints(d);
    /* The nodes after the jobs, and again whenever the job list changed: a job that ended may have left
     * its shard allocated (GresUsed), which must be known before its GPU is offered to the next job. */
    if (!nodes_read && (force || changed || !d->slurm_up || daemon_now_mono() - d->t_nodes >= D_NODE_REFRESH)) {
        if (gpumap_refresh_nodes(d, err, errn)) return -1;
        nodes_read = 1;
    }
    if (nodes_read) gpumap_update_leftover(d);
    d->now = DS_MAX(d->now, (int64_t)time(NULL));
    if (nodes_read && nodes_to_engine(d) && d->e) {
        ds_engine_clear_decisions(d->e);
        if (!changed && !d->need_rebuild) return 1; /* capacity changed: the caller runs a pass */
    }
    if (!changed && !d->need_rebuild) return 0;
    ds_error_t e2;
    ds_error_clear(&e2);
    if (d->need_rebuild || !d->e) {
        if (rebuild(d, &e2)) {
            char m[600];
            ds_error_format(&e2, m, sizeof m);
            snprintf(err, errn, "cannot build the engine: %s", m);
            return -1;
        }
    }
    double mono = daemon_now_mono();
    ds_idmap_t present;
    ds_idmap_init(&present);
    char why[400];
    int32_t nrefused = 0, nwaiting = 0, nforeign = 0;
    for (int i = 0; i < d->nsj; i++) {
        const sl_job_t *j = &d->sj[i];
        ds_idmap_put(&present, j->id, i);
        journal_finished(d, j);
        int32_t s = daemon_slot_of(d, j->id);
        if (s >= 0) { reconcile(d, s, j, mono); continue; }
        if (!is_live(d, j)) continue;
        if (j->state == SL_PENDING && !strcmp(j->partition, d->cfg.staging) && j->held) continue; /* user hold */
        int wait;
        if (unschedulable(d, j, why, sizeof why, &wait)) {
            /* once per job, not every pass: its Slurm state is read again at every change */
            warn_once(d, j->id, "%s%s", why, wait || strcmp(j->partition, d->cfg.staging) ? "" : "; left in staging");
            if (wait) nwaiting++;
            else if (!strcmp(j->partition, d->cfg.staging)) nrefused++;
            else nforeign += !screen_ours(j);
            continue;
        }
        if (holds_gpus(d, j) && stale_dispatch(d, j)) continue;
        if (holds_gpus(d, j) || is_ours(d, j->partition)) {
            d->need_rebuild = 1;
            snprintf(d->rebuild_why, sizeof d->rebuild_why, "job %u appeared in %s", j->id, j->partition);
            continue;
        }
        if (d->nslots == d->trace.njobs) {
            d->need_rebuild = 1;
            snprintf(d->rebuild_why, sizeof d->rebuild_why, "job table full (%d slots)", d->trace.njobs);
            continue;
        }
        int32_t ns = add_slot(d, j);
        if (d->have_coloc) ds_coloc_bind(&d->coloc, &d->trace);
        ds_engine_arrive(d->e, ns, d->now);
        dlog(1, "job %u (%s, %d GPUs) queued", j->id, j->account, d->trace.jobs[ns].gpus);
    }
    d->nrefused = nrefused;
    d->nwaiting = nwaiting;
    d->nforeign = nforeign;
    /* jobs Slurm no longer knows */
    for (int32_t s = 0; s < d->nslots; s++) {
        if (ds_idmap_get(&present, d->slot[s].id) >= 0) continue;
        if (ds_engine_job(d->e, s)->status == DS_JS_RUNNING) finish_slot(d, s, "vanished from Slurm");
        else if (ds_engine_job(d->e, s)->status == DS_JS_PENDING) withdraw_slot(d, s, D_GONE, "vanished from Slurm while pending");
        else if (d->slot[s].withdrawn) d->slot[s].withdrawn = D_GONE;
    }
    ds_idmap_free(&present);
    apply_moves(d);
    ds_engine_clear_decisions(d->e);
    ds_engine_clear_rate_changes(d->e);
    if (d->need_rebuild) {
        dlog(0, "rebuilding state: %s", d->rebuild_why);
        if (rebuild(d, &e2)) {
            char m[600];
            ds_error_format(&e2, m, sizeof m);
            snprintf(err, errn, "cannot build the engine: %s", m);
            return -1;
        }
    }
    return 1;
}

const sl_job_t *daemon_find_job(const daemon_t *d, uint32_t id)
{
    for (int i = 0; i < d->nsj; i++)
        if (d->sj[i].id == id) return &d->sj[i];
    return NULL;
}
