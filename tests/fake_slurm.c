/* fake_slurm.c: the in-memory Slurm of fake_slurm.h. It keeps what the daemon relies on of Slurm 22.05:
 * pins added by a dispatch add to the job's earlier ones unless cleared first, a shard job starts only on
 * the GPU index of its first shard pin, a requeue holds the job, a restage releases it. */
#include "fake_slurm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FS_MAX 256

static sl_job_t jobs[FS_MAX];
static int njobs;
static sl_node_t nodes[FS_MAX];
static int nnodes;
static int dirty = 1;
static int model_gpus;
static int phantom[FS_MAX][SL_MAX_GPUS];
static int fail_left[FS_NOPS], calls[FS_NOPS];
static uint32_t last_id[FS_NOPS];
static uint8_t script_ended[FS_MAX]; /* 2: ended, slurmctld not told yet (the requeue race) */
static int reruns;
static int signal_of[FS_MAX];
static int accounts_enforced;
/* 1 + the GPU index of a job's first shard pin, 0 none: 22.05 takes a shard job's GRES cleared and pinned
 * anew but never starts it on another index (the local cluster: pending, reason Resources, on an idle node) */
static int8_t shard_life[FS_MAX];

void fs_reset(void)
{
    sl_set_fence(NULL, NULL);
    memset(jobs, 0, sizeof jobs);
    memset(nodes, 0, sizeof nodes);
    memset(fail_left, 0, sizeof fail_left);
    memset(calls, 0, sizeof calls);
    memset(last_id, 0, sizeof last_id);
    memset(phantom, 0, sizeof phantom);
    memset(script_ended, 0, sizeof script_ended);
    memset(signal_of, 0, sizeof signal_of);
    memset(shard_life, 0, sizeof shard_life);
    reruns = 0;
    accounts_enforced = 0;
    model_gpus = 0;
    njobs = nnodes = 0;
    dirty = 1;
}

void fs_add_node(const char *name, int cpus, int gpus)
{
    sl_node_t *n = &nodes[nnodes++];
    snprintf(n->name, sizeof n->name, "%s", name);
    n->cpus = cpus;
    n->mem_mib = 1 << 20;
    n->gpus = gpus;
    n->up = 1;
    for (int k = 0; k < SL_MAX_GPUS; k++) n->shards[k] = k < gpus ? 2 : -1;
    dirty = 1;
}

void fs_set_node_down(const char *node, const char *why)
{
    for (int i = 0; i < nnodes; i++)
        if (!strcmp(nodes[i].name, node)) {
            nodes[i].up = !why;
            snprintf(nodes[i].down_why, sizeof nodes[i].down_why, "%s", why ? why : "");
        }
}

void fs_add_typed_node(const char *name, int cpus, int gpus, const char *type)
{
    fs_add_node(name, cpus, gpus);
    sl_node_t *n = &nodes[nnodes - 1];
    snprintf(n->gpu_type, sizeof n->gpu_type, "%s", type);
    n->types = 1;
    n->model_picks = 1;
    for (int k = 0; k < SL_MAX_GPUS; k++) n->shards[k] = -1;
}

void fs_add_model_pinned_node(const char *name, int cpus, int gpus, const char *model)
{
    fs_add_node(name, cpus, gpus);
    sl_node_t *n = &nodes[nnodes - 1];
    snprintf(n->gpu_type, sizeof n->gpu_type, "%s", model);
    n->types = 1;
    n->model_pins = 1;
}

void fs_request_model(sl_job_t *j, const char *model, int n)
{
    if (n > 0) fs_request_gpus(j, NULL, n);
    snprintf(j->features, sizeof j->features, "%s", model);
    j->has_features = 1;
    dirty = 1;
}

void fs_request_gpus(sl_job_t *j, const char *type, int n)
{
    snprintf(j->tres_per_node, sizeof j->tres_per_node, "gres:gpu:%s%s%d", type ? type : "", type ? ":" : "", n);
    snprintf(j->gpu_type, sizeof j->gpu_type, "%s", type ? type : "");
    j->gres_gpus = n;
    j->untyped_gpus = type ? 0 : n;
    dirty = 1;
}

static const sl_node_t *node_named(const char *name)
{
    for (int i = 0; i < nnodes; i++)
        if (!strcmp(nodes[i].name, name)) return &nodes[i];
    return NULL;
}

void fs_set_shards(const char *node, int idx, int count)
{
    for (int i = 0; i < nnodes; i++)
        if (!strcmp(nodes[i].name, node)) nodes[i].shards[idx] = count;
}

void fs_model_gpus(int on) { model_gpus = on; }

void fs_set_phantom(const char *node, int idx, int count)
{
    for (int i = 0; i < nnodes; i++)
        if (!strcmp(nodes[i].name, node)) phantom[i][idx] = count;
}

/* What running jobs hold of GPU idx of node: shards, and whether a job holds it whole. */
static void gpu_use(const char *node, int idx, int *shards, int *whole)
{
    *shards = *whole = 0;
    for (int i = 0; i < njobs; i++) {
        const sl_job_t *r = &jobs[i];
        if (r->state != SL_RUNNING || strcmp(r->nodes, node)) continue;
        for (int k = 0; k < r->ngpu_idx; k++) {
            if (r->gpu_idx[k] != idx) continue;
            if (r->on_shard) ++*shards;
            else *whole = 1;
        }
    }
}

/* Whether Slurm can start job j where it was dispatched: a shard pin needs a shard left on its GPU;
 * with the GPU model on, a whole GPU needs nothing else on it. */
static int typed_pick(const sl_job_t *j, int *out);

/* Slurm picks the GPUs of a job asking gpu:TYPE:N or an untyped gpu:N (nothing pinned by index) */
static int slurm_picks(const sl_job_t *j) { return j->gpu_type[0] || (j->untyped_gpus > 0 && j->untyped_gpus == j->gres_gpus); }

static int startable(const sl_job_t *j)
{
    int pick[SL_MAX_GPUS];
    if (slurm_picks(j)) return typed_pick(j, pick) == j->gres_gpus;
    int life = shard_life[j - jobs];
    if (life && (!j->on_shard || j->ngpu_idx != 1 || j->gpu_idx[0] != life - 1)) return 0;
    for (int i = 0; i < nnodes; i++) {
        if (strcmp(nodes[i].name, j->req_nodes)) continue;
        for (int k = 0; k < j->ngpu_idx; k++) {
            int idx = j->gpu_idx[k], used, whole;
            if (j->on_shard && nodes[i].shards[idx] < 1) return 0;
            if (!model_gpus) continue;
            gpu_use(nodes[i].name, idx, &used, &whole);
            /* a shard allocated to no job: the soak saw no job of either kind start on that GPU */
            if (phantom[i][idx] || whole || (j->on_shard ? used + 1 > nodes[i].shards[idx] : used > 0)) return 0;
        }
    }
    return 1;
}

/* A job asking gpu:TYPE:N on a node of that type: the lowest GPU indices no running job holds, as many as
 * it asks when there are (Slurm's cons_tres picks them so); how many were found. */
static int typed_pick(const sl_job_t *j, int *out)
{
    const sl_node_t *nd = node_named(j->req_nodes);
    /* an untyped gpu:N takes GPUs of any type */
    if (!nd || (j->gpu_type[0] && strcmp(nd->gpu_type, j->gpu_type))) return 0;
    int k = 0;
    for (int g = 0; g < nd->gpus && k < j->gres_gpus; g++) {
        int used, whole;
        gpu_use(nd->name, g, &used, &whole);
        if (!used && !whole) out[k++] = g;
    }
    return k;
}

sl_job_t *fs_add_job(uint32_t id, const char *account, const char *partition, const char *comment)
{
    sl_job_t *j = &jobs[njobs++];
    memset(j, 0, sizeof *j);
    j->id = id;
    snprintf(j->account, sizeof j->account, "%s", account);
    snprintf(j->user, sizeof j->user, "u%s", account);
    snprintf(j->partition, sizeof j->partition, "%s", partition);
    snprintf(j->comment, sizeof j->comment, "%s", comment);
    j->state = SL_PENDING;
    j->priority = 1000;
    j->submit = id;
    j->cpus = 1;
    j->num_tasks = 1;
    j->min_nodes = 1;
    dirty = 1;
    return j;
}

sl_job_t *fs_job(uint32_t id)
{
    for (int i = 0; i < njobs; i++)
        if (jobs[i].id == id) return &jobs[i];
    return NULL;
}

void fs_touch(void) { dirty = 1; }

void fs_end_script(uint32_t id, int race)
{
    sl_job_t *j = fs_job(id);
    if (!j || j->state != SL_RUNNING) return;
    script_ended[j - jobs] = race ? 2 : 1;
    /* slurmctld knows: the job is completing, which the daemon reads at its next load (kept stale
     * until then: no dirty mark) */
    if (!race) j->state = SL_COMPLETED, j->completing = 1;
}

int fs_reruns(void) { return reruns; }


void fs_pin(sl_job_t *j, const char *node, const int *idx, int n)
{
    snprintf(j->req_nodes, sizeof j->req_nodes, "%s", node);
    for (int i = 0; i < n && j->ngpu_idx < SL_MAX_GPUS; i++) j->gpu_idx[j->ngpu_idx++] = idx[i];
    if (j >= jobs && j < jobs + FS_MAX && j->on_shard && n > 0 && !shard_life[j - jobs])
        shard_life[j - jobs] = (int8_t)(1 + idx[0]);
    size_t off = 0;
    j->tres_per_node[0] = 0;
    const sl_node_t *nd = node_named(node);
    const char *m = nd && nd->model_pins ? nd->gpu_type : "";
    for (int i = 0; i < j->ngpu_idx && off < sizeof j->tres_per_node; i++)
        off += (size_t)snprintf(j->tres_per_node + off, sizeof j->tres_per_node - off, "%sgres:%s:%s%sg%d:1",
                                i ? "," : "", j->on_shard ? "shard" : "gpu", m, m[0] ? "_" : "", j->gpu_idx[i]);
    dirty = 1;
}

/* Starts job j when Slurm would (dispatched, not held, its node up, its GPUs there); 1 when it started. */
static int run_one(sl_job_t *j, const char *staging)
{
    if (j->state != SL_PENDING || j->held || !strcmp(j->partition, staging) || !j->req_nodes[0]) return 0;
    if (!startable(j)) return 0;
    int up = 1; /* Slurm starts nothing on a node out of service */
    for (int k = 0; k < nnodes; k++)
        if (!strcmp(nodes[k].name, j->req_nodes)) up = nodes[k].up;
    if (!up) return 0;
    if (slurm_picks(j)) j->ngpu_idx = typed_pick(j, j->gpu_idx); /* gres_detail's IDX */
    j->state = SL_RUNNING;
    j->start = j->submit + 1;
    _Static_assert(sizeof j->nodes == sizeof j->req_nodes, "node name fields differ");
    memcpy(j->nodes, j->req_nodes, sizeof j->nodes); /* snprintf here trips gcc's -Wrestrict (one struct) */
    dirty = 1;
    return 1;
}

int fs_run_dispatched(const char *staging)
{
    int n = 0;
    for (int i = 0; i < njobs; i++) n += run_one(&jobs[i], staging);
    return n;
}

int fs_run_job(uint32_t id, const char *staging)
{
    sl_job_t *j = fs_job(id);
    return j ? run_one(j, staging) : 0;
}

void fs_fail(fs_op_t op, int n) { fail_left[op] = n; }
int fs_calls(fs_op_t op) { return calls[op]; }
uint32_t fs_last_id(fs_op_t op) { return last_id[op]; }

/* Counts the call; returns -1 with err filled when the test asked it to fail. */
static int enter(fs_op_t op, uint32_t id, char *err, size_t errn)
{
    calls[op]++;
    last_id[op] = id;
    if (fail_left[op] <= 0) return 0;
    fail_left[op]--;
    snprintf(err, errn, "fake slurm: operation %d on job %u: Unable to contact slurm controller", (int)op, id);
    return -1;
}

static int (*fence_fn)(void *);
static void *fence_ctx;

void sl_set_fence(int (*may_write)(void *ctx), void *ctx)
{
    fence_fn = may_write;
    fence_ctx = ctx;
}

/* 1 (err filled) when the fence refuses the write */
static int fenced(uint32_t id, char *err, size_t errn)
{
    if (!fence_fn || fence_fn(fence_ctx)) return 0;
    snprintf(err, errn, "job %u: not written to Slurm: this instance is not the leader (its lease lapsed)", id);
    return 1;
}

static sl_job_t *update_target(fs_op_t op, uint32_t id, char *err, size_t errn)
{
    if (enter(op, id, err, errn)) return NULL;
    if (fenced(id, err, errn)) return NULL;
    sl_job_t *j = fs_job(id);
    if (!j) snprintf(err, errn, "fake slurm: job %u: Invalid job id specified", id);
    else dirty = 1;
    return j;
}

int sl_job_running(uint32_t id, char *err, size_t errn)
{
    if (enter(FS_LOAD_JOB, id, err, errn)) return -1;
    const sl_job_t *j = fs_job(id);
    return j && j->state == SL_RUNNING && !j->completing;
}

void sl_init(const char *conf) { (void)conf; }
void fs_set_accounts_enforced(int on) { accounts_enforced = on; }
int sl_accounts_enforced(char *err, size_t errn)
{
    (void)err, (void)errn;
    return accounts_enforced;
}
void sl_fini(void) {}
void sl_jobs_reset(void) { dirty = 1; }

int sl_load_jobs(sl_job_t **out, int *n, int *changed, char *err, size_t errn)
{
    if (enter(FS_LOAD_JOBS, 0, err, errn)) return -1;
    *changed = dirty;
    if (!dirty && *out) return 0;
    sl_job_t *v = calloc(njobs ? (size_t)njobs : 1, sizeof *v);
    memcpy(v, jobs, (size_t)njobs * sizeof *v);
    free(*out);
    *out = v;
    *n = njobs;
    dirty = 0;
    return 0;
}

int sl_load_nodes(sl_node_t **out, int *n, char *err, size_t errn)
{
    if (enter(FS_LOAD_NODES, 0, err, errn)) return -1;
    sl_node_t *v = calloc(nnodes ? (size_t)nnodes : 1, sizeof *v);
    memcpy(v, nodes, (size_t)nnodes * sizeof *v);
    /* GresUsed: the shards running jobs hold, and those held by no job */
    for (int i = 0; i < nnodes; i++)
        for (int k = 0; k < SL_MAX_GPUS; k++) {
            int used, whole;
            gpu_use(nodes[i].name, k, &used, &whole);
            v[i].shards_used[k] = used + phantom[i][k];
        }
    *out = v;
    *n = nnodes;
    return 0;
}

int sl_dispatch(uint32_t id, const char *partition, const char *node, const int *idx, int n, int shard,
                const char *pin_model, const char *gpu_type, int clear_first, int fix_tasks, const char *admin_comment, uint32_t priority,
                char *err, size_t errn)
{
    sl_job_t *j = update_target(FS_DISPATCH, id, err, errn);
    if (!j) return -1;
    if (j->state != SL_PENDING || j->held) {
        snprintf(err, errn, "fake slurm: job %u: Job is no longer pending execution", id);
        return -1;
    }
    const sl_node_t *nd = node_named(node);
    if (gpu_type && gpu_type[0] && (!nd || strcmp(nd->gpu_type, gpu_type) || (j->gres_gpus && !clear_first))) {
        /* Slurm refuses a type the node does not have; a second typed request would add to the first */
        snprintf(err, errn, "fake slurm: job %u: Requested node configuration is not available", id);
        return -1;
    }
    /* a pin must name the node's GPU types: gN, or MODEL_gN where the per-GPU types carry the model */
    int pin_ok = nd && (nd->model_pins ? pin_model && !strcmp(pin_model, nd->gpu_type)
                                       : !nd->gpu_type[0] && !(pin_model && pin_model[0]));
    if ((!gpu_type || !gpu_type[0]) && nd && n > 0 && !pin_ok) {
        snprintf(err, errn, "fake slurm: job %u: Invalid generic resource (gres) specification", id);
        return -1;
    }
    if (nd && j->has_features && strcmp(j->features, nd->gpu_type)) {
        /* a constraint (the node's features are its model here) the node does not satisfy */
        snprintf(err, errn, "fake slurm: job %u: Requested node configuration is not available", id);
        return -1;
    }
    /* 22.05 keeps a typed request's types (count 0) through a clear */
    int had_typed = j->gres_gpus > j->untyped_gpus;
    snprintf(j->partition, sizeof j->partition, "%s", partition);
    if (clear_first) {
        j->untyped_gpus = j->gres_gpus = j->ngpu_idx = 0; /* the GRES asked at submit goes */
        j->gpu_type[0] = j->tres_per_node[0] = 0;
    }
    if (fix_tasks) j->num_tasks = 1;
    j->on_shard = shard;
    if (gpu_type && !gpu_type[0]) {
        /* gpu:N, any type: a second request would add to the first, as a typed one does */
        if (n > 0 && had_typed) {
            snprintf(err, errn, "fake slurm: job %u: Invalid GRES specification (with and without type identification)", id);
            return -1;
        }
        if (n > 0 && j->gres_gpus) {
            snprintf(err, errn, "fake slurm: job %u: a second GRES request would add to the first", id);
            return -1;
        }
        snprintf(j->req_nodes, sizeof j->req_nodes, "%s", node);
        if (n > 0) fs_request_gpus(j, NULL, n);
        j->ngpu_idx = 0;
        snprintf(j->admin_comment, sizeof j->admin_comment, "%s", admin_comment);
        j->priority = priority;
        return 0;
    }
    if (gpu_type && gpu_type[0]) {
        snprintf(j->req_nodes, sizeof j->req_nodes, "%s", node);
        fs_request_gpus(j, gpu_type, n);
        snprintf(j->admin_comment, sizeof j->admin_comment, "%s", admin_comment);
        j->priority = priority;
        return 0;
    }
    /* 22.05 adds a new GRES request to the earlier one: a second pin would grow the job */
    fs_pin(j, node, idx, n);
    snprintf(j->admin_comment, sizeof j->admin_comment, "%s", admin_comment);
    j->priority = priority;
    return 0;
}

int fs_signal_of(uint32_t id)
{
    const sl_job_t *j = fs_job(id);
    return j ? signal_of[j - jobs] : 0;
}

int sl_signal(uint32_t id, int sig, char *err, size_t errn)
{
    if (enter(FS_SIGNAL, id, err, errn)) return -1;
    sl_job_t *j = fs_job(id);
    if (!j || j->state != SL_RUNNING) {
        snprintf(err, errn, "fake slurm: signal to job %u: Job/step already completing or completed", id);
        return -1;
    }
    signal_of[j - jobs] = sig;
    return 0;
}

int sl_requeue_hold(uint32_t id, char *err, size_t errn)
{
    sl_job_t *j = update_target(FS_REQUEUE, id, err, errn);
    if (!j) return -1;
    /* Slurm requeues a running job, or a batch job that has ended (scontrol(1): "running, suspended or
     * finished"), but not one still completing */
    if (j->state == SL_PENDING || j->completing) {
        snprintf(err, errn, "fake slurm: requeue of job %u: %s", id,
                 j->completing ? "Job is in transition" : "Job is pending execution");
        return -1;
    }
    if (script_ended[j - jobs] == 2) reruns++; /* its script had ended: Slurm will run it again */
    script_ended[j - jobs] = 0;
    j->state = SL_PENDING;
    j->held = 1;
    j->priority = 0;
    j->restarts++;
    j->nodes[0] = 0;
    signal_of[j - jobs] = 0;
    if (slurm_picks(j)) j->ngpu_idx = 0; /* Slurm picked them: no gres_detail while pending */
    return 0;
}

int sl_restage(uint32_t id, const char *staging, char *err, size_t errn)
{
    sl_job_t *j = update_target(FS_RESTAGE, id, err, errn);
    if (!j) return -1;
    if (j->state != SL_PENDING) {
        snprintf(err, errn, "fake slurm: job %u: Job is no longer pending execution", id);
        return -1;
    }
    snprintf(j->partition, sizeof j->partition, "%s", staging);
    j->req_nodes[0] = 0;
    j->held = 0;
    j->priority = 1000;
    return 0;
}

int sl_set_admin_comment(uint32_t id, const char *text, char *err, size_t errn)
{
    sl_job_t *j = update_target(FS_ADMIN_COMMENT, id, err, errn);
    if (!j) return -1;
    snprintf(j->admin_comment, sizeof j->admin_comment, "%s", text);
    return 0;
}

int sl_set_priority(uint32_t id, uint32_t priority, char *err, size_t errn)
{
    sl_job_t *j = update_target(FS_PRIORITY, id, err, errn);
    if (!j) return -1;
    j->priority = priority;
    return 0;
}
