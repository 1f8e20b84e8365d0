/* slurm_io.c: libslurm calls of the daemon: job and node loads copied into plain structs, and the few
 * updates that apply the engine's decisions. Everything Slurm-version specific lives here. */
#include "slurm_io.h"
#include "gres_parse.h"

#include <pwd.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static job_info_msg_t *last_jobs;
static time_t last_update;

void sl_init(const char *conf) { slurm_init(conf); }

void sl_fini(void)
{
    if (last_jobs) slurm_free_job_info_msg(last_jobs);
    last_jobs = NULL;
    slurm_fini();
}

void sl_jobs_reset(void) { last_update = 0; }

static void copy(char *dst, size_t n, const char *src) { snprintf(dst, n, "%s", src ? src : ""); }

#define DS_SL_MIN(a, b) ((a) < (b) ? (a) : (b))
/* AccountingStorageEnforce=associations (Slurm's src/common/slurm_accounting_storage.h; not in slurm.h) */
#ifndef ACCOUNTING_ENFORCE_ASSOCS
#define ACCOUNTING_ENFORCE_ASSOCS 0x0001
#endif

static void seterr(char *err, size_t n, const char *what)
{
    snprintf(err, n, "%s: %s", what, slurm_strerror(slurm_get_errno()));
}

/* Whether a TRES list ("gres:gpu:2", "gres/gpu=2") asks for GPUs. */
static int asks_gpus(const char *tres) { return tres && (strstr(tres, "gpu:") || strstr(tres, "gpu=")); }

static int map_state(uint32_t st, uint32_t exit_code)
{
    switch (st & JOB_STATE_BASE) {
    case JOB_PENDING: return SL_PENDING;
    case JOB_RUNNING:
    case JOB_SUSPENDED: return SL_RUNNING;
    case JOB_COMPLETE: return exit_code == 0 ? SL_COMPLETED : SL_ENDED;
    default: return SL_ENDED;
    }
}

static void user_name(uint32_t uid, const char *given, char *dst, size_t n)
{
    if (given && *given) { copy(dst, n, given); return; }
    struct passwd pw, *res = NULL;
    char buf[1024];
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &res) == 0 && res) copy(dst, n, pw.pw_name);
    else snprintf(dst, n, "uid%u", uid);
}

int sl_load_jobs(sl_job_t **jobs, int *njobs, int *changed, char *err, size_t errn)
{
    job_info_msg_t *msg = NULL;
    *changed = 1;
    int rc = slurm_load_jobs(last_jobs ? last_update : 0, &msg, SHOW_ALL | SHOW_DETAIL);
    if (rc != SLURM_SUCCESS) {
        if (slurm_get_errno() == SLURM_NO_CHANGE_IN_DATA && last_jobs) {
            *changed = 0;
            return 0;
        }
        seterr(err, errn, "loading jobs");
        return -1;
    }
    if (last_jobs) slurm_free_job_info_msg(last_jobs);
    last_jobs = msg;
    last_update = msg->last_update;
    sl_job_t *v = calloc(msg->record_count ? msg->record_count : 1, sizeof *v);
    if (!v) { snprintf(err, errn, "out of memory"); return -1; }
    for (uint32_t i = 0; i < msg->record_count; i++) {
        const slurm_job_info_t *s = &msg->job_array[i];
        sl_job_t *j = &v[i];
        j->id = s->job_id;
        j->uid = s->user_id;
        copy(j->account, sizeof j->account, s->account);
        user_name(s->user_id, s->user_name, j->user, sizeof j->user);
        copy(j->partition, sizeof j->partition, s->partition);
        j->state = map_state(s->job_state, s->exit_code);
        j->completing = (s->job_state & JOB_COMPLETING) != 0;
        j->held = s->priority == 0;
        j->priority = s->priority;
        j->submit = s->submit_time;
        j->start = s->start_time;
        j->end = s->end_time;
        j->restarts = s->restart_cnt;
        j->cpus = (int)s->num_cpus;
        j->num_tasks = (int)s->num_tasks;
        uint64_t m = s->pn_min_memory;
        if (m == NO_VAL64) m = 0;
        if (m & MEM_PER_CPU) m = (m & ~MEM_PER_CPU) * (uint64_t)(j->cpus ? j->cpus : 1);
        j->mem_mib = (int64_t)m;
        copy(j->tres_per_node, sizeof j->tres_per_node, s->tres_per_node);
        copy(j->comment, sizeof j->comment, s->comment);
        copy(j->admin_comment, sizeof j->admin_comment, s->admin_comment);
        copy(j->nodes, sizeof j->nodes, s->nodes);
        copy(j->req_nodes, sizeof j->req_nodes, s->req_nodes);
        sl_parse_tres(j->tres_per_node, j);
        j->comment_long = s->comment && strlen(s->comment) >= sizeof j->comment;
        j->other_gpus = asks_gpus(s->tres_per_job) || asks_gpus(s->tres_per_task) || asks_gpus(s->tres_per_socket);
        j->array = s->array_task_id != NO_VAL || (s->array_task_str && s->array_task_str[0]) ||
                   (s->array_job_id != 0 && s->array_job_id != NO_VAL);
        j->min_nodes = s->num_nodes == NO_VAL || s->num_nodes == 0 ? 1 : (int)DS_SL_MIN(s->num_nodes, 1000000u);
        j->exclusive = s->shared == JOB_SHARED_NONE;
        j->has_features = s->features && s->features[0];
        if (j->has_features && strlen(s->features) < sizeof j->features) copy(j->features, sizeof j->features, s->features);
        j->reason = s->state_reason;
        j->wait_begin = s->state_reason == WAIT_TIME;
        j->wait_dep = s->state_reason == WAIT_DEPENDENCY || (s->dependency && strstr(s->dependency, "(unfulfilled)"));
        j->dep_never = s->state_reason == WAIT_DEP_INVALID || (s->dependency && strstr(s->dependency, "(failed)"));
        j->eligible = s->eligible_time;
        /* minutes; INFINITE and NO_VAL (none asked, none defaulted) are no limit */
        j->limit_s = s->time_limit == INFINITE || s->time_limit == NO_VAL ? 0 : (int64_t)s->time_limit * 60;
        if (j->ngpu_idx == 0 && j->state == SL_RUNNING && s->gres_detail_cnt > 0 && s->gres_detail_str &&
            s->gres_detail_str[0]) {
            sl_parse_gres_detail(s->gres_detail_str[0], j);
        }
    }
    free(*jobs);
    *jobs = v;
    *njobs = (int)msg->record_count;
    return 0;
}

int sl_accounts_enforced(char *err, size_t errn)
{
    slurm_conf_t *c = NULL;
    if (slurm_load_ctl_conf(0, &c) != SLURM_SUCCESS) {
        seterr(err, errn, "loading Slurm's configuration");
        return -1;
    }
    int on = c->accounting_storage_type && !strstr(c->accounting_storage_type, "none") &&
             (c->accounting_storage_enforce & ACCOUNTING_ENFORCE_ASSOCS);
    slurm_free_ctl_conf(c);
    return on;
}

int sl_load_nodes(sl_node_t **nodes, int *nnodes, char *err, size_t errn)
{
    node_info_msg_t *msg = NULL;
    /* SHOW_DETAIL: without it 22.05 sends no gres_used (NULL; checked on the local cluster) */
    if (slurm_load_node(0, &msg, SHOW_ALL | SHOW_DETAIL) != SLURM_SUCCESS) {
        seterr(err, errn, "loading nodes");
        return -1;
    }
    sl_node_t *v = calloc(msg->record_count ? msg->record_count : 1, sizeof *v);
    int n = 0;
    for (uint32_t i = 0; i < msg->record_count; i++) {
        const node_info_t *s = &msg->node_array[i];
        if (!s->name) continue;
        sl_node_t *d = &v[n++];
        copy(d->name, sizeof d->name, s->name);
        d->cpus = s->cpus;
        d->mem_mib = (int64_t)s->real_memory;
        uint32_t base = s->node_state & NODE_STATE_BASE;
        d->up = base != NODE_STATE_DOWN && base != NODE_STATE_UNKNOWN && base != NODE_STATE_FUTURE &&
                !(s->node_state & (NODE_STATE_DRAIN | NODE_STATE_NO_RESPOND | NODE_STATE_FAIL));
        if (!d->up)
            copy(d->down_why, sizeof d->down_why,
                 s->node_state & NODE_STATE_NO_RESPOND ? "not responding"
                 : base == NODE_STATE_DOWN             ? "down"
                 : s->node_state & NODE_STATE_FAIL     ? "failing"
                 : s->node_state & NODE_STATE_DRAIN    ? (base == NODE_STATE_IDLE ? "drained" : "draining")
                 : base == NODE_STATE_FUTURE           ? "future"
                                                       : "unknown");
        /* Gres: "gpu:g0:1,...,shard:g0:2,..." or "gpu:4,shard:8" (may carry "(S:0)" socket suffixes) */
        for (int k = 0; k < SL_MAX_GPUS; k++) d->shards[k] = -1;
        d->gpus = sl_scan_gres(s->gres, d->shards, d);
        /* GresUsed: "gpu:g0:0(IDX:N/A),...,shard:g1:1(IDX:1),..." */
        sl_scan_gres(s->gres_used, d->shards_used, NULL);
    }
    slurm_free_node_info_msg(msg);
    *nodes = v;
    *nnodes = n;
    return 0;
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

static int update(job_desc_msg_t *d, char *err, size_t errn, const char *what)
{
    if (fenced(d->job_id, err, errn)) return -1;
    if (slurm_update_job(d) != SLURM_SUCCESS) {
        char w[128];
        snprintf(w, sizeof w, "%s of job %u", what, d->job_id);
        seterr(err, errn, w);
        return -1;
    }
    return 0;
}

int sl_dispatch(uint32_t id, const char *partition, const char *node, const int *idx, int n, int shard,
                const char *pin_model, const char *gpu_type, int clear_first, int fix_tasks, const char *admin_comment, uint32_t priority,
                char *err, size_t errn)
{
    job_desc_msg_t d;
    if (clear_first) {
        slurm_init_job_desc_msg(&d);
        d.job_id = id;
        d.tres_per_node = "";
        if (update(&d, err, errn, "clearing the GRES request")) return -1;
    }
    char tres[1024] = "", part[64], nodes[128], ac[256];
    size_t off = 0;
    if (gpu_type && gpu_type[0])
        snprintf(tres, sizeof tres, "gres:gpu:%.64s:%d", gpu_type, n);
    else if (gpu_type)
        snprintf(tres, sizeof tres, "gres:gpu:%d", n);
    else
        for (int i = 0; i < n && off < sizeof tres; i++)
            off += (size_t)snprintf(tres + off, sizeof tres - off, "%sgres:%s:%.64s%sg%d:1", i ? "," : "",
                                    shard ? "shard" : "gpu", pin_model ? pin_model : "", pin_model && pin_model[0] ? "_" : "",
                                    idx[i]);
    copy(part, sizeof part, partition);
    copy(nodes, sizeof nodes, node);
    copy(ac, sizeof ac, admin_comment);
    slurm_init_job_desc_msg(&d);
    d.job_id = id;
    d.partition = part;
    d.req_nodes = nodes;
    if (n > 0) d.tres_per_node = tres;
    d.admin_comment = ac;
    d.priority = priority;
    if (fix_tasks) d.num_tasks = 1;
    /* a requeued job is not eligible for 120 s (Slurm's begin time): we start it now */
    d.begin_time = time(NULL);
    return update(&d, err, errn, "dispatch");
}

int sl_job_running(uint32_t id, char *err, size_t errn)
{
    job_info_msg_t *msg = NULL;
    if (slurm_load_job(&msg, id, SHOW_ALL) != SLURM_SUCCESS) {
        if (slurm_get_errno() == ESLURM_INVALID_JOB_ID) return 0;
        char w[64];
        snprintf(w, sizeof w, "loading job %u", id);
        seterr(err, errn, w);
        return -1;
    }
    int run = msg->record_count > 0 && (msg->job_array[0].job_state & JOB_STATE_BASE) == JOB_RUNNING &&
              !(msg->job_array[0].job_state & JOB_COMPLETING);
    slurm_free_job_info_msg(msg);
    return run;
}

int sl_signal(uint32_t id, int sig, char *err, size_t errn)
{
    if (slurm_kill_job(id, (uint16_t)sig, KILL_FULL_JOB) != SLURM_SUCCESS) {
        char w[64];
        snprintf(w, sizeof w, "signal %d to job %u", sig, id);
        seterr(err, errn, w);
        return -1;
    }
    return 0;
}

int sl_requeue_hold(uint32_t id, char *err, size_t errn)
{
    if (fenced(id, err, errn)) return -1;
    if (slurm_requeue(id, JOB_REQUEUE_HOLD) != SLURM_SUCCESS) {
        char w[64];
        snprintf(w, sizeof w, "requeue of job %u", id);
        seterr(err, errn, w);
        return -1;
    }
    return 0;
}

int sl_restage(uint32_t id, const char *staging, char *err, size_t errn)
{
    job_desc_msg_t d;
    char part[64];
    copy(part, sizeof part, staging);
    slurm_init_job_desc_msg(&d);
    d.job_id = id;
    d.partition = part;
    d.req_nodes = "";
    d.priority = INFINITE; /* releases the hold of the requeue */
    d.begin_time = time(NULL);
    return update(&d, err, errn, "move back to staging");
}

int sl_set_admin_comment(uint32_t id, const char *text, char *err, size_t errn)
{
    job_desc_msg_t d;
    char ac[256];
    copy(ac, sizeof ac, text);
    slurm_init_job_desc_msg(&d);
    d.job_id = id;
    d.admin_comment = ac;
    return update(&d, err, errn, "admin comment");
}

int sl_set_priority(uint32_t id, uint32_t priority, char *err, size_t errn)
{
    job_desc_msg_t d;
    slurm_init_job_desc_msg(&d);
    d.job_id = id;
    d.priority = priority;
    return update(&d, err, errn, "priority");
}
