/* state.c: mirrors Slurm into the engine (a growing table of job slots, rebuilt from Slurm alone after
 * a restart) and applies the engine's decisions back: dispatch with pinned GPUs, requeue, promotion. */
#include "daemon/daemon.h"
#include "deepshare/qad.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

int dlog_verbose;

void dlog(int level, const char *fmt, ...)
{
    if (level > dlog_verbose) return;
    char ts[32];
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    struct tm tm;
    gmtime_r(&t.tv_sec, &tm);
    strftime(ts, sizeof ts, "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(stderr, "%s.%03ldZ deepshared: ", ts, t.tv_nsec / 1000000);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
}

double daemon_now_mono(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int32_t daemon_slot_of(const daemon_t *d, uint32_t id) { return ds_idmap_get(&d->byid, id); }

/* Seconds between reads of the nodes' shard counts (also read every cycle and after an outage). */
#define D_NODE_REFRESH 5.0

/* Tenant index (the config's order, which is also the trace's) of a Slurm account, -1 when unknown. */
static int32_t tenant_of(const daemon_t *d, const char *account)
{
    for (int i = 0; i < d->cfg.ntenants; i++)
        if (!strcasecmp(d->cfg.tenants[i].name, account)) return i;
    return -1;
}

/* Workload facts users may give in --comment: "gpus=2 model=resnet50 dataset=imagenet batch=64 amp=1
 * gmem=8000 class=BE" (comma or space separated). */
typedef struct hints {
    int gpus, batch, amp, gmem, klass;
    char model[32], dataset[32];
} hints_t;

static void parse_hints(const char *s, hints_t *h)
{
    memset(h, 0, sizeof *h);
    h->gmem = -1;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ", ;", &save); tok; tok = strtok_r(NULL, ", ;", &save)) {
        char *eq = strchr(tok, '=');
        if (!eq) continue;
        *eq = 0;
        const char *v = eq + 1;
        if (!strcmp(tok, "gpus")) h->gpus = atoi(v);
        else if (!strcmp(tok, "batch")) h->batch = atoi(v);
        else if (!strcmp(tok, "amp")) h->amp = atoi(v);
        else if (!strcmp(tok, "gmem")) h->gmem = atoi(v);
        else if (!strcmp(tok, "model")) snprintf(h->model, sizeof h->model, "%s", v);
        else if (!strcmp(tok, "dataset")) snprintf(h->dataset, sizeof h->dataset, "%s", v);
        else if (!strcmp(tok, "class")) h->klass = !strcasecmp(v, "BE") ? DS_CLASS_BE : !strcasecmp(v, "G") ? DS_CLASS_G : 0;
    }
}

/* GPUs a job asks for: an untyped --gres=gpu:N, our own pins, or gpus= in its comment. */
static int job_gpus(const sl_job_t *j)
{
    if (j->untyped_gpus > 0) return j->untyped_gpus;
    if (j->ngpu_idx > 0) return j->ngpu_idx;
    hints_t h;
    parse_hints(j->comment, &h);
    return h.gpus;
}

static int is_ours(const daemon_t *d, const char *part)
{
    return !strcmp(part, d->cfg.g_partition) || !strcmp(part, d->cfg.be_partition);
}

static int node_index(const daemon_t *d, const char *name)
{
    for (int i = 0; i < d->nnodes; i++)
        if (!strcmp(d->nodes[i].name, name)) return i;
    return -1;
}

/* The engine GPUs a dispatched or running job holds, from its node and pinned indices. */
static int job_engine_gpus(const daemon_t *d, const sl_job_t *j, int32_t *out)
{
    const char *node = j->nodes[0] ? j->nodes : j->req_nodes;
    int n = node_index(d, node);
    if (n < 0 || j->ngpu_idx == 0) return 0;
    for (int i = 0; i < j->ngpu_idx; i++) {
        if (j->gpu_idx[i] < 0 || j->gpu_idx[i] >= d->gpn) return 0;
        out[i] = d->e->nodes[n].gpu0 + j->gpu_idx[i];
    }
    return j->ngpu_idx;
}

/* The daemon's index of a GPU (node-major: node x gpn + index on the node) from the engine's. */
static int dgpu_of(const daemon_t *d, int32_t engine_gpu)
{
    int32_t node = d->e->gpus[engine_gpu].node;
    return node * d->gpn + (engine_gpu - d->e->nodes[node].gpu0);
}

/* A dispatch of job id onto daemon GPU g went back to staging without starting. */
static void note_bounce(daemon_t *d, uint32_t id, int g)
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
static const char *gpu_refuses(const daemon_t *d, int32_t j, int node, int idx, char *buf, size_t n)
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
    if (d->completing && d->completing[g]) {
        snprintf(buf, n, "a job on GPU %.32s:g%d is still completing in Slurm", d->nodes[node].name, idx);
        return buf;
    }
    return NULL;
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

/* Why a Slurm job cannot be scheduled by us (NULL when it can). */
static const char *unschedulable(daemon_t *d, const sl_job_t *j, char *buf, size_t n)
{
    if (tenant_of(d, j->account) < 0) {
        snprintf(buf, n, "account '%s' is not a tenant in %.100s; left in partition %.60s", j->account, d->cfg.path,
                 j->partition);
        return buf;
    }
    int g = job_gpus(j);
    if (g < 1) {
        snprintf(buf, n, "asks for no GPU (use --comment=gpus=N or --gres=gpu:N); left in %s", j->partition);
        return buf;
    }
    if (g > d->gpn) {
        snprintf(buf, n, "asks for %d GPUs but a node has %d; left in %s", g, d->gpn, j->partition);
        return buf;
    }
    return NULL;
}

/* Fills slot s (an unused placeholder) with Slurm job j. */
static int32_t add_slot(daemon_t *d, const sl_job_t *j)
{
    int32_t s = d->nslots++;
    ds_job_t *job = &d->trace.jobs[s];
    hints_t h;
    parse_hints(j->comment, &h);
    job->id = j->id;
    job->submit = j->submit;
    job->tenant = tenant_of(d, j->account);
    job->user = ds_strtab_intern(&d->trace.users, j->user);
    job->gpus = job_gpus(j);
    job->cpus = j->cpus > 0 ? j->cpus : 1;
    job->mem_mib = j->mem_mib;
    job->model = h.model[0] ? ds_strtab_intern(&d->trace.models, h.model) : -1;
    job->dataset = h.dataset[0] ? ds_strtab_intern(&d->trace.datasets, h.dataset) : -1;
    job->batch = h.batch;
    job->amp = h.amp;
    job->gmem_mib = h.gmem >= 0 ? h.gmem : d->cfg.default_gmem_mib;
    job->klass = (uint8_t)h.klass;
    double p = hist_predict(&d->hist, d->trace.tenants[job->tenant].name, j->user);
    job->estimate = p;
    job->duration = (int64_t)ceil(p); /* what "oracle" policies see: the daemon has no truth */
    job->line = 0;
    dslot_t *sl = &d->slot[s];
    memset(sl, 0, sizeof *sl);
    sl->id = j->id;
    /* Slurm 22.05 refuses a shard on a job that asked for a GPU GRES at submit, and a shard holds one GPU */
    sl->shareable = job->gpus == 1 && j->untyped_gpus == 0 && !(j->ngpu_idx > 0 && !j->on_shard);
    /* our own record in the admin comment: "deepshare class=G gres=shard pin=2" */
    const char *g = strstr(j->admin_comment, "gres=");
    if (g) sl->shareable = job->gpus == 1 && !strncmp(g + 5, "shard", 5);
    if (!d->cfg.gpu_sharing && !g) sl->shareable = 0;
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
    return !gpu_refuses(d, a, node, idx, why, sizeof why) && !gpu_refuses(d, b, node, idx, why, sizeof why);
}

/* The interference predictor the policy sees. A pair Slurm cannot run there is predicted to retain
 * nothing, so the policy never proposes it: such a shared start was taken back, and the policy, finding
 * the same pair the next pass, kept both jobs waiting for good (the soak's stuck pinned jobs). */
static double hint_retention(void *ctx, const ds_trace_t *t, int32_t a, int32_t b)
{
    daemon_t *d = ctx;
    (void)t;
    if (!pair_runs_in_slurm(d, a, b)) return 0.0;
    if (d->have_coloc) return ds_coloc_rho(&d->coloc, a, b);
    return d->cfg.missing_rho;
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
        if (unschedulable(d, j, why, sizeof why)) { warn_once(d, j->id, "%s", why); continue; }
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
    for (int i = 0; i < d->cfg.ntenants; i++) ds_trace_add_tenant(t, d->cfg.tenants[i].name, d->cfg.tenants[i].quota);
    for (int32_t s = 0; s < cap; s++) {
        ds_job_t *job = ds_trace_add_job(t);
        job->id = -1 - s;
        job->gpus = d->gpn;
        job->cpus = 1;
        job->duration = 1;
        job->user = -1;
    }
    ds_strtab_intern(&t->users, "?");
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
    ds_engine_set_hooks(d->e, &(ds_driver_hooks_t){.ctx = d});
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
                    note_bounce(d, j->id, dgpu_of(d, gbuf[0]));
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
    dlog(0, "state rebuilt from Slurm: %d live jobs, capacity %d", live, cap);
    return DS_OK;
}

int daemon_setup(daemon_t *d, ds_error_t *err)
{
    pthread_mutex_init(&d->lock, NULL);
    ds_idmap_init(&d->byid);
    ds_idmap_init(&d->warned);
    ds_idmap_init(&d->bounce_of);
    ds_trace_init(&d->trace);
    for (int i = 0; i < D_LAT_BUCKETS; i++) {
        static const double b[D_LAT_BUCKETS] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
        d->lat_bounds[i] = b[i];
    }
    int rc = daemon_policy_config(&d->cfg, &d->ops, &d->pconfig, err);
    if (rc) return rc;
    hist_init(&d->hist, d->cfg.min_history, d->cfg.default_runtime);
    if (d->cfg.journal[0]) {
        if (hist_open(&d->hist, d->cfg.journal, NULL, err)) return DS_EIO;
        dlog(0, "journal %s: learned from %lld finished jobs", d->cfg.journal, (long long)d->hist.records);
    }
    hist_predictor(&d->rt, &d->hist);
    memset(&d->ip, 0, sizeof d->ip);
    d->ip.name = "profile";
    d->ip.ctx = d;
    d->ip.predict = hint_retention;
    d->preds.runtime = &d->rt;
    d->preds.interference = &d->ip;
    if (d->cfg.interference[0]) {
        int rc = ds_coloc_read(&d->coloc, d->cfg.interference, err);
        if (rc) return rc;
        d->coloc.missing_rho = d->cfg.missing_rho;
        d->have_coloc = 1;
    }
    d->ten = ds_xcalloc((size_t)d->cfg.ntenants, sizeof *d->ten);
    d->need_rebuild = 1;
    return DS_OK;
}

void daemon_teardown(daemon_t *d)
{
    if (d->e) ds_engine_destroy(d->e);
    if (d->pconfig && d->ops->config_free) d->ops->config_free(d->pconfig);
    if (d->have_coloc) ds_coloc_free(&d->coloc);
    hist_free(&d->hist);
    ds_trace_free(&d->trace);
    ds_idmap_free(&d->byid);
    ds_idmap_free(&d->warned);
    ds_idmap_free(&d->bounce_of);
    free(d->bounce);
    free(d->shardless);
    free(d->leftover);
    free(d->completing);
    free(d->slot);
    free(d->sj);
    free(d->nodes);
    free(d->ten);
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
static void update_leftover(daemon_t *d)
{
    int ng = d->nnodes * d->gpn, count = 0;
    int *held = ds_xcalloc((size_t)ng, sizeof *held);
    memset(d->completing, 0, (size_t)ng);
    for (int i = 0; i < d->nsj; i++) {
        const sl_job_t *j = &d->sj[i];
        /* dispatched (pending where we sent it): Slurm may have started it since the job read */
        int sent = j->state == SL_PENDING && !j->held && j->req_nodes[0] && strcmp(j->partition, d->cfg.staging);
        if (j->state != SL_RUNNING && !j->completing && !sent) continue;
        int n = node_index(d, j->state == SL_RUNNING || j->completing ? j->nodes : j->req_nodes);
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

static int load_nodes(daemon_t *d, char *err, size_t errn)
{
    sl_node_t *nodes = NULL;
    int n = 0;
    if (sl_load_nodes(&nodes, &n, err, errn)) return -1;
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
    for (int i = 0; i < n; i++)
        if (nodes[i].gpus != gpn)
            dlog(0, "node %s has %d GPUs, others %d: the engine models %d on every node", nodes[i].name, nodes[i].gpus,
                 gpn, gpn);
    free(d->nodes);
    d->nodes = nodes;
    d->nnodes = n;
    d->gpn = gpn;
    d->cpn = cpn;
    d->mpn = mpn;
    dlog(0, "cluster: %d nodes x %d GPUs, %d CPUs, %lld MiB", n, gpn, cpn, (long long)mpn);
    free(d->shardless);
    d->shardless = ds_xcalloc((size_t)n * (size_t)gpn, 1);
    d->nshardless = 0;
    free(d->leftover);
    free(d->completing);
    d->leftover = ds_xcalloc((size_t)n * (size_t)gpn, 1);
    d->completing = ds_xcalloc((size_t)n * (size_t)gpn, 1);
    d->nleftover = 0;
    update_shards(d, nodes);
    d->t_nodes = daemon_now_mono();
    return 0;
}

/* Reads the nodes again for their shard counts (the topology is read once, at start). */
static int refresh_nodes(daemon_t *d, char *err, size_t errn)
{
    sl_node_t *nodes = NULL;
    int n = 0;
    if (sl_load_nodes(&nodes, &n, err, errn)) return -1;
    d->t_nodes = daemon_now_mono();
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

static void journal_finished(daemon_t *d, const sl_job_t *j)
{
    if (j->state != SL_COMPLETED || !is_ours(d, j->partition) || j->start <= 0 || j->end < j->start) return;
    if (hist_seen(&d->hist, j->id, j->end)) return;
    int32_t t = tenant_of(d, j->account);
    if (t < 0) return;
    char err[300];
    if (hist_record(&d->hist, j->id, j->account, j->user, job_gpus(j), (double)(j->end - j->start), j->end, err,
                    sizeof err)) {
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

/* Mirrors one Slurm job into its slot. */
static void reconcile(daemon_t *d, int32_t s, const sl_job_t *j, double mono)
{
    const ds_jstate_t *js = ds_engine_job(d->e, s);
    dslot_t *sl = &d->slot[s];
    char err[300];
    if (j->state == SL_COMPLETED || j->state == SL_ENDED) {
        if (js->status == DS_JS_RUNNING) finish_slot(d, s, j->state == SL_COMPLETED ? "completed" : "ended");
        else if (js->status == DS_JS_PENDING) {
            d->need_rebuild = 1;
            snprintf(d->rebuild_why, sizeof d->rebuild_why, "pending job %u ended in Slurm", j->id);
        }
        return;
    }
    if (j->state == SL_RUNNING && !sl->seen_running && is_ours(d, j->partition)) {
        sl->seen_running = 1;
        if (j->start >= j->submit && j->restarts == 0) d->s2r_samples[d->s2r_n++ % D_SAMPLES] = (double)(j->start - j->submit);
    }
    if (j->state == SL_PENDING) sl->seen_running = 0;
    int holds = holds_gpus(d, j);
    if (js->status == DS_JS_RUNNING) {
        if (!holds) {
            /* Slurm has it pending without our pins (requeued, dispatch undone): pending here too. The
             * policy did not stop it, so the engine takes the start back instead of preempting it. */
            ds_engine_cancel_start(d->e, s, d->now);
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
            if (!same) {
                d->need_rebuild = 1;
                snprintf(d->rebuild_why, sizeof d->rebuild_why, "job %u holds other GPUs in Slurm", j->id);
            } else if (j->state == SL_PENDING && sl->t_dispatch > 0) {
                /* a dispatch Slurm does not start: onto shards that are gone (it would wait forever), or
                 * anything past dispatch_timeout */
                int dg = dgpu_of(d, g[0]), lost = j->on_shard && d->shardless[dg];
                if (lost || mono - sl->t_dispatch > d->cfg.dispatch_timeout) {
                    if (lost) dlog(0, "job %u: dispatched onto shard:g%d of %s, which lost its shards; back to staging", j->id,
                                   dg % d->gpn, d->nodes[dg / d->gpn].name);
                    else dlog(0, "job %u: dispatched %.0f s ago and still not running (%s); back to staging", j->id,
                              mono - sl->t_dispatch, j->partition);
                    if (sl_restage(j->id, d->cfg.staging, err, sizeof err)) dlog(0, "%s", err), d->errors++;
                    else note_bounce(d, j->id, dg);
                    sl->t_dispatch = 0;
                }
            }
        }
    } else if (js->status == DS_JS_PENDING) {
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
        if (load_nodes(d, err, errn)) return -1;
        nodes_read = 1;
    }
    int changed = 0;
    if (force) sl_jobs_reset();
    if (sl_load_jobs(&d->sj, &d->nsj, &changed, err, errn)) return -1;
    /* The nodes after the jobs, and again whenever the job list changed: a job that ended may have left
     * its shard allocated (GresUsed), which must be known before its GPU is offered to the next job. */
    if (!nodes_read && (force || changed || !d->slurm_up || daemon_now_mono() - d->t_nodes >= D_NODE_REFRESH)) {
        if (refresh_nodes(d, err, errn)) return -1;
        nodes_read = 1;
    }
    if (nodes_read) update_leftover(d);
    d->now = DS_MAX(d->now, (int64_t)time(NULL));
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
    char why[300];
    for (int i = 0; i < d->nsj; i++) {
        const sl_job_t *j = &d->sj[i];
        ds_idmap_put(&present, j->id, i);
        journal_finished(d, j);
        int32_t s = daemon_slot_of(d, j->id);
        if (s >= 0) { reconcile(d, s, j, mono); continue; }
        if (!is_live(d, j)) continue;
        if (j->state == SL_PENDING && !strcmp(j->partition, d->cfg.staging) && j->held) continue; /* user hold */
        if (unschedulable(d, j, why, sizeof why)) { warn_once(d, j->id, "%s", why); continue; }
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
    /* jobs Slurm no longer knows */
    for (int32_t s = 0; s < d->nslots; s++) {
        if (ds_idmap_get(&present, d->slot[s].id) >= 0) continue;
        if (ds_engine_job(d->e, s)->status == DS_JS_RUNNING) finish_slot(d, s, "vanished from Slurm");
        else if (ds_engine_job(d->e, s)->status == DS_JS_PENDING) {
            dlog(0, "job %u vanished from Slurm while pending", d->slot[s].id);
            d->need_rebuild = 1;
            snprintf(d->rebuild_why, sizeof d->rebuild_why, "pending job %u vanished", d->slot[s].id);
        }
    }
    ds_idmap_free(&present);
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

/* A colocation Slurm can honour: every resident of the job's GPUs runs on a shard. */
static int coloc_ok(const daemon_t *d, int32_t j)
{
    const ds_engine_t *e = d->e;
    const int32_t *g = ds_engine_job_gpus(e, j);
    int shared = 0, ok = d->slot[j].shareable;
    for (int32_t i = 0; i < ds_engine_job(e, j)->nplaced; i++) {
        const ds_gpu_t *gp = ds_engine_gpu(e, g[i]);
        if (gp->nres > 1) shared = 1;
        for (int32_t r = 0; r < gp->nres; r++) ok &= d->slot[gp->res[r]].shareable;
    }
    return !shared || ok;
}

static const sl_job_t *find_job(const daemon_t *d, uint32_t id)
{
    for (int i = 0; i < d->nsj; i++)
        if (d->sj[i].id == id) return &d->sj[i];
    return NULL;
}

/* Moves an unshared start to n GPUs of some node that hold nothing but this job and where Slurm would
 * start it (its pinned indices when it has them); 1 when moved (node and idx updated). */
static int move_where_slurm_starts(daemon_t *d, int32_t j, int32_t *node, int *idx, int n, const char *why)
{
    ds_engine_t *e = d->e;
    dslot_t *sl = &d->slot[j];
    char w2[160];
    for (int32_t m = 0; m < d->nnodes; m++) {
        int32_t tgt[SL_MAX_GPUS];
        int c2[SL_MAX_GPUS], k = 0;
        for (int c = 0; c < e->nodes[m].ngpus && k < n; c++) {
            if (sl->npin) {
                int pinned = 0;
                for (int i = 0; i < sl->npin; i++) pinned |= sl->pin[i] == c;
                if (!pinned) continue;
            }
            const ds_gpu_t *gp = ds_engine_gpu(e, e->nodes[m].gpu0 + c);
            if (gp->nres > 1 || (gp->nres == 1 && gp->res[0] != j) || gpu_refuses(d, j, m, c, w2, sizeof w2)) continue;
            tgt[k] = e->nodes[m].gpu0 + c;
            c2[k++] = c;
        }
        if (k < n || (m != *node && !ds_engine_node_fits(e, m, j))) continue;
        if (ds_engine_move(e, j, tgt) != DS_OK) continue;
        dlog(1, "job %u: %s; placed on %s GPU %d%s instead", sl->id, why, d->nodes[m].name, c2[0], n > 1 ? "+" : "");
        d->shard_moves += sl->shareable;
        *node = m;
        for (int i = 0; i < n; i++) idx[i] = c2[i];
        return 1;
    }
    return 0;
}

/* Keeps a start off GPUs where Slurm would not run it (gpu_refuses): the job moves to free GPUs of a
 * node where Slurm would (its pinned indices when it has them); an unpinned shard job alone on a GPU
 * without shards takes the whole GPU instead (it can never share then); otherwise the start is taken
 * back and the job waits, with the reason in explain. Returns 0 when taken back. */
static int place_where_slurm_starts(daemon_t *d, int32_t j, int32_t *node, int *idx, int n)
{
    ds_engine_t *e = d->e;
    dslot_t *sl = &d->slot[j];
    char why[160];
    const char *r = NULL;
    for (int i = 0; i < n && !r; i++) r = gpu_refuses(d, j, *node, idx[i], why, sizeof why);
    if (!r) return 1;
    if (!ds_engine_job(e, j)->shared && move_where_slurm_starts(d, j, node, idx, n, why)) return 1;
    if (n == 1 && !ds_engine_job(e, j)->shared) {
        char w2[160];
        int g = *node * d->gpn + idx[0];
        if (sl->shareable && sl->npin == 0 && d->shardless[g] && ds_engine_gpu(e, e->nodes[*node].gpu0 + idx[0])->nres == 1) {
            /* the GPU itself works, only its shards are gone */
            sl->shareable = 0;
            if (!gpu_refuses(d, j, *node, idx[0], w2, sizeof w2)) {
                sl->whole = 1;
                d->shard_moves++;
                snprintf(sl->why, sizeof sl->why, "GPU %.32s:g%d had lost its shards after a slurmctld restart: runs on the "
                         "whole GPU, so it can never share one", d->nodes[*node].name, idx[0]);
                dlog(1, "job %u: %s; takes the whole GPU", sl->id, why);
                return 1;
            }
            sl->shareable = 1;
        }
    }
    snprintf(sl->why, sizeof sl->why, "%s", why);
    sl->undo = 1;
    return 0;
}

/* Whether slot j was requeued by us less than D_REQUEUE_SETTLE seconds before mono (its why says so):
 * seen in the soak, a job requeued and dispatched again 0.9 s later was killed by Slurm for good. */
static int settling(daemon_t *d, int32_t j, double mono)
{
    dslot_t *sl = &d->slot[j];
    double since = mono - sl->t_requeue;
    if (!(sl->t_requeue > 0 && since < D_REQUEUE_SETTLE)) return 0;
    snprintf(sl->why, sizeof sl->why,
             "requeued %.1f s ago: a start within %.0f s of a requeue is refused by slurmd (job credential "
             "revoked) and ends the job, so it waits", since, D_REQUEUE_SETTLE);
    return 1;
}

static void dispatch(daemon_t *d, int32_t j, int32_t other)
{
    ds_engine_t *e = d->e;
    if (settling(d, j, daemon_now_mono())) {
        /* requeued earlier in this same pass: held jobs never get here */
        d->slot[j].undo = 1;
        return;
    }
    const sl_job_t *sj = find_job(d, d->slot[j].id);
    if (sj && sj->held && sj->state == SL_PENDING) {
        /* requeued by us (or held while dispatched): release it first, or Slurm refuses the update */
        char e1[300];
        if (sl_restage(d->slot[j].id, d->cfg.staging, e1, sizeof e1)) dlog(1, "%s", e1);
    }
    if (!coloc_ok(d, j)) {
        d->coloc_refused++;
        snprintf(d->slot[j].why, sizeof d->slot[j].why,
                 "the policy chose to share a GPU with job %u, but only one-GPU jobs submitted without --gres can "
                 "share a GPU in Slurm 22.05 (shard)", other >= 0 ? d->slot[other].id : 0);
        d->slot[j].undo = 1;
        return;
    }
    const int32_t *g = ds_engine_job_gpus(e, j);
    int idx[SL_MAX_GPUS], n = ds_engine_job(e, j)->nplaced;
    int32_t node = ds_engine_gpu(e, g[0])->node;
    for (int i = 0; i < n; i++) idx[i] = g[i] - e->nodes[node].gpu0;
    dslot_t *sl = &d->slot[j];
    if (sl->npin > 0) {
        /* Slurm 22.05 keeps the GPU types of a job's first dispatch: it can run again only on the same
         * GPU indices (of any node). Move it there on the chosen node when those GPUs are free. */
        int same = sl->npin == n;
        for (int i = 0; same && i < n; i++) same = sl->pin[i] == idx[i];
        if (!same) {
            int32_t tgt[SL_MAX_GPUS];
            int ok = sl->npin == n && !ds_engine_job(e, j)->shared;
            for (int i = 0; ok && i < n; i++) {
                ok = sl->pin[i] >= 0 && sl->pin[i] < e->nodes[node].ngpus;
                tgt[i] = e->nodes[node].gpu0 + (ok ? sl->pin[i] : 0);
            }
            char why[160];
            snprintf(why, sizeof why, "Slurm 22.05 can restart it only on GPU index %d (pinned at its first start)",
                     sl->pin[0]);
            if (ok && ds_engine_move(e, j, tgt) == DS_OK) {
                for (int i = 0; i < n; i++) idx[i] = sl->pin[i];
            } else if (!ok || !move_where_slurm_starts(d, j, &node, idx, n, why)) {
                /* busy here: on another node where those indices are free, else it waits */
                snprintf(sl->why, sizeof sl->why,
                         "Slurm 22.05 can restart it only on GPU index %d (pinned at its first start), busy on %s",
                         sl->pin[0], d->nodes[node].name);
                sl->undo = 1;
                return;
            }
        }
    }
    if (!place_where_slurm_starts(d, j, &node, idx, n)) return;
    int be = ds_engine_job(e, j)->klass == DS_CLASS_BE;
    char ac[128], err[300];
    size_t off = (size_t)snprintf(ac, sizeof ac, "deepshare class=%s gres=%s pin=", be ? "BE" : "G",
                                  sl->shareable ? "shard" : "gpu");
    for (int i = 0; i < n && off < sizeof ac; i++) off += (size_t)snprintf(ac + off, sizeof ac - off, "%s%d", i ? "," : "", idx[i]);
    /* a GRES asked at submit must go before the pin */
    int clear = sl->npin == 0 && sj && sj->untyped_gpus > 0;
    double t0 = daemon_now_mono();
    /* the GPU types go to Slurm once in a job's life: a second update adds to the first (22.05) */
    if (sl_dispatch(d->slot[j].id, be ? d->cfg.be_partition : d->cfg.g_partition, d->nodes[node].name, idx,
                    sl->npin ? 0 : n, d->slot[j].shareable, clear, sj && sj->num_tasks == 0, ac, be ? 10000 : 20000,
                    err, sizeof err)) {
        dlog(0, "%s", err);
        d->errors++;
        snprintf(d->slot[j].why, sizeof d->slot[j].why, "last dispatch failed: %.120s", err);
        d->slot[j].undo = 1;
        return;
    }
    d->slot[j].t_dispatch = daemon_now_mono();
    if (!sl->whole) d->slot[j].why[0] = 0;
    sl->why_logged = 0;
    if (sl->npin == 0) {
        sl->npin = (int8_t)n;
        for (int i = 0; i < n; i++) sl->pin[i] = (int8_t)idx[i];
    }
    d->dispatches++;
    d->ten[d->trace.jobs[j].tenant].dispatched++;
    if (other >= 0) d->colocations++;
    dlog(1, "job %u -> %s %s GPU %d%s%s (%.1f ms)%s", d->slot[j].id, be ? d->cfg.be_partition : d->cfg.g_partition,
         d->nodes[node].name, idx[0], n > 1 ? "+" : "", d->slot[j].shareable ? " shard" : "",
         (d->slot[j].t_dispatch - t0) * 1e3, other >= 0 ? " shared" : "");
}

static int apply_decisions(daemon_t *d)
{
    ds_engine_t *e = d->e;
    char err[300];
    int nundo = 0, ndec;
    const ds_decision_t *decs = ds_engine_decisions(e, &ndec);
    for (int32_t i = 0; i < ndec; i++) {
        const ds_decision_t *dec = &decs[i];
        int32_t j = dec->job;
        switch (dec->type) {
        case DS_DEC_START:
            if (ds_engine_job(e, j)->status == DS_JS_RUNNING) dispatch(d, j, dec->other);
            nundo += d->slot[j].undo;
            break;
        case DS_DEC_PREEMPT: {
            if (d->slot[j].undo) break; /* never reached Slurm */
            const sl_job_t *sj = find_job(d, d->slot[j].id);
            int rc;
            if (sj && sj->state == SL_PENDING) {
                /* dispatched but not started yet: taking the dispatch back is enough */
                rc = sl_restage(d->slot[j].id, d->cfg.staging, err, sizeof err);
            } else if (sl_job_running(d->slot[j].id, err, sizeof err) == 0) {
                /* Slurm requeues a job that has ended as readily as a running one, and runs it again:
                 * this one ended (or is ending) since the last load, so it is left to finish. The
                 * engine took it for preempted; the state is rebuilt from Slurm at the next sync. */
                dlog(0, "job %u: not requeued: it ended in Slurm after the pass had read it", d->slot[j].id);
                d->ended_before_requeue++;
                d->need_rebuild = 1;
                snprintf(d->rebuild_why, sizeof d->rebuild_why, "job %u ended before its requeue", d->slot[j].id);
                break;
            } else {
                /* (-1: slurmctld cannot say; the requeue then fails or lands as it would have) */
                rc = sl_requeue_hold(d->slot[j].id, err, sizeof err);
                if (!rc) d->slot[j].t_requeue = daemon_now_mono();
                /* a requeue of a job that had not started holds it anyway: release it in staging */
                if (rc && !sl_restage(d->slot[j].id, d->cfg.staging, err, sizeof err)) rc = 0;
            }
            if (rc) {
                dlog(0, "%s", err);
                d->errors++;
            } else {
                d->slot[j].requeued = 1;
                d->requeues++;
                d->ten[d->trace.jobs[j].tenant].preempted++;
                dlog(1, "job %u requeued (%s, reason %d)", d->slot[j].id,
                     ds_engine_job(e, j)->klass == DS_CLASS_BE ? "BE" : "G", dec->reason);
            }
            break;
        }
        case DS_DEC_PROMOTE:
            {
                char ac[128];
                size_t off = (size_t)snprintf(ac, sizeof ac, "deepshare class=G gres=%s pin=",
                                              d->slot[j].shareable ? "shard" : "gpu");
                for (int i = 0; i < d->slot[j].npin && off < sizeof ac; i++)
                    off += (size_t)snprintf(ac + off, sizeof ac - off, "%s%d", i ? "," : "", d->slot[j].pin[i]);
                if (sl_set_admin_comment(d->slot[j].id, ac, err, sizeof err)) dlog(0, "%s", err), d->errors++;
            }
            break;
        default: break;
        }
    }
    ds_engine_clear_decisions(e);
    ds_engine_clear_rate_changes(e);
    return nundo;
}

/* Logs (verbosity 1) why a job waits though the policy would start it (what: "start taken back", "held"),
 * once per reason and job until it is dispatched: it would otherwise wait without a line in the log. */
static void log_wait(daemon_t *d, int32_t j, const char *what)
{
    dslot_t *sl = &d->slot[j];
    uint32_t h = 2166136261u; /* FNV-1a without digits: "requeued 1.2 s ago" is one reason, not many */
    for (const char *p = sl->why; *p; p++)
        if (*p < '0' || *p > '9') h = (h ^ (uint8_t)*p) * 16777619u;
    if (h == 0) h = 1;
    if (h == sl->why_logged) return;
    sl->why_logged = h;
    dlog(1, "job %u: %s, waits: %s", sl->id, what, sl->why[0] ? sl->why : "(no reason recorded)");
}

/* A pinned job (Slurm 22.05 restarts it only on the GPU indices of its first start) can start only where
 * those indices are free, or, for a one-GPU shard job, shared with one shard job: somewhere now? When
 * not, refused gets the last reason a GPU refused it (gpu_refuses), if any. */
static int pins_open(daemon_t *d, int32_t j, char *refused, size_t n)
{
    const ds_engine_t *e = d->e;
    const dslot_t *sl = &d->slot[j];
    char w[160];
    refused[0] = 0;
    for (int32_t m = 0; m < d->nnodes; m++) {
        int ok = ds_engine_node_fits(e, m, j);
        for (int i = 0; ok && i < sl->npin; i++) {
            int c = sl->pin[i];
            if (c < 0 || c >= e->nodes[m].ngpus) ok = 0;
            else if (gpu_refuses(d, j, m, c, w, sizeof w)) ok = 0, snprintf(refused, n, "%s", w);
            else {
                const ds_gpu_t *gp = ds_engine_gpu(e, e->nodes[m].gpu0 + c);
                ok = gp->nres == 0 || (sl->npin == 1 && sl->shareable && gp->nres == 1 && d->cfg.k > 1 &&
                                       d->slot[gp->res[0]].shareable);
            }
        }
        if (ok) return 1;
    }
    return 0;
}

/* Holds the pending jobs the daemon could not start this pass whatever the policy chose, and releases
 * the others: the policy then gives their GPUs to the next jobs instead of choosing them, seeing the
 * start taken back, and leaving the GPUs idle until the next pass. */
static void hold_unstartable(daemon_t *d)
{
    ds_engine_t *e = d->e;
    double mono = daemon_now_mono();
    int32_t n = 0;
    char refused[160];
    for (int32_t j = 0; j < d->nslots; j++) {
        if (ds_engine_job(e, j)->status != DS_JS_PENDING) continue;
        dslot_t *sl = &d->slot[j];
        int hold = 0;
        if (settling(d, j, mono)) {
            hold = 1;
        } else if (sl->npin > 0 && !pins_open(d, j, refused, sizeof refused)) {
            hold = 1;
            if (refused[0]) snprintf(sl->why, sizeof sl->why, "%s", refused);
            else
                snprintf(sl->why, sizeof sl->why,
                         "Slurm 22.05 can restart it only on GPU index %d%s (pinned at its first start), busy on "
                         "every node: held out of the policy's pass until free", sl->pin[0], sl->npin > 1 ? "+" : "");
        }
        ds_engine_hold(e, j, hold);
        if (hold) log_wait(d, j, "held out of the policy's pass");
        n += hold;
    }
    d->nheld = n;
}

/* One pass: the policy decides, the daemon carries out what Slurm can do; a start it cannot is taken
 * back, its job held for the rest of the pass, and the policy runs again on what is left. */
void daemon_pass(daemon_t *d, int timer)
{
    ds_engine_t *e = d->e;
    if (!e) return;
    d->now = DS_MAX(d->now, (int64_t)time(NULL));
    d->passes++;
    hold_unstartable(d);
    ds_engine_schedule(e, d->now, timer);
    int held = 0;
    for (int round = 1;; round++) {
        if (!apply_decisions(d)) break;
        /* take back starts Slurm was not told about: the jobs wait again, with no preemption counted */
        for (int32_t j = 0; j < d->nslots; j++) {
            if (!d->slot[j].undo) continue;
            d->slot[j].undo = 0;
            if (ds_engine_job(e, j)->status != DS_JS_RUNNING) continue;
            ds_engine_cancel_start(e, j, d->now);
            ds_engine_hold(e, j, 1);
            d->slot[j].pass_hold = 1;
            held = 1;
            d->undone++;
            log_wait(d, j, "start taken back");
        }
        ds_engine_clear_decisions(e);
        ds_engine_clear_rate_changes(e);
        if (round == D_PASS_ROUNDS) break;
        ds_engine_schedule(e, d->now, 0);
    }
    for (int32_t j = 0; held && j < d->nslots; j++)
        if (d->slot[j].pass_hold) {
            d->slot[j].pass_hold = 0;
            ds_engine_hold(e, j, 0);
        }
}

/* Shows the policy's view in squeue: a pending job's priority rises as its tenant's smoothed QAD falls
 * (10 points per QAD band of 0.05). Staging is down, so this orders nothing in Slurm itself. */
static void show_priorities(daemon_t *d)
{
    char err[300];
    for (int i = 0; i < d->nsj; i++) {
        const sl_job_t *j = &d->sj[i];
        if (j->state != SL_PENDING || j->held || strcmp(j->partition, d->cfg.staging)) continue;
        int32_t s = daemon_slot_of(d, j->id);
        if (s < 0 || ds_engine_job(d->e, s)->status != DS_JS_PENDING) continue;
        double S = d->ten[d->trace.jobs[s].tenant].S;
        uint32_t want = 1000 + 10 * (uint32_t)(20 - DS_MIN(20, (int)floor(S / 0.05)));
        if (j->priority == want) continue;
        if (sl_set_priority(j->id, want, err, sizeof err)) dlog(1, "%s", err);
    }
}

void daemon_cycle_figures(daemon_t *d)
{
    const ds_engine_t *e = d->e;
    if (!e) return;
    for (int i = 0; i < d->cfg.ntenants; i++) {
        /* the policy's signal (G GPUs only) and the reported, class-blind figure: one definition each */
        double q = ds_engine_qad(e, i, DS_QAD_G), qr = ds_engine_qad(e, i, DS_QAD_ALL);
        d->ten[i].Q = q;
        d->ten[i].S = d->s_init ? ds_qad_smooth(d->ten[i].S, q, d->cfg.qad_lambda) : q;
        d->ten[i].Qr = qr;
        d->ten[i].Sr = d->s_init ? ds_qad_smooth(d->ten[i].Sr, qr, d->cfg.qad_lambda) : qr;
    }
    d->s_init = 1;
    d->cycles++;
    show_priorities(d);
}
