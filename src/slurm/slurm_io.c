/* slurm_io.c: libslurm calls of the daemon: job and node loads copied into plain structs, and the few
 * updates that apply the engine's decisions. Everything Slurm-version specific lives here. */
#include "slurm_io.h"

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

/* "1-3,5" -> indices */
static void parse_idx_list(const char *s, sl_job_t *j)
{
    while (*s && *s != ')') {
        char *end;
        long a = strtol(s, &end, 10), b = a;
        if (end == s) return;
        s = end;
        if (*s == '-') { b = strtol(s + 1, &end, 10); s = end; }
        for (long i = a; i <= b && j->ngpu_idx < SL_MAX_GPUS; i++) j->gpu_idx[j->ngpu_idx++] = (int)i;
        if (*s == ',') s++;
        else break;
    }
}

/* The count of one GRES entry "gpu:N", "gpu:TYPE:N" (after "gres:"), -1 when it has none. */
static long gres_count(const char *rest)
{
    const char *c = strrchr(rest, ':');
    c = c ? c + 1 : rest;
    char *end;
    long n = strtol(c, &end, 10);
    if (end == c || n < 0) return -1;
    return n;
}

/* Whether a TRES list ("gres:gpu:2", "gres/gpu=2") asks for GPUs. */
static int asks_gpus(const char *tres) { return tres && (strstr(tres, "gpu:") || strstr(tres, "gpu=")); }

static int name_char(char c)
{
    return c == '-' || c == '_' || c == '.' || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

int sl_pin_type(const char *rest, int *idx, char *model, size_t mn)
{
    size_t len = strcspn(rest, ":("), g = len;
    while (g > 0 && rest[g - 1] >= '0' && rest[g - 1] <= '9') g--;
    /* "g" and 1 to 3 digits, alone or after "MODEL_" */
    if (g == len || len - g > 3 || g == 0 || rest[g - 1] != 'g') return 0;
    size_t ml = g - 1;
    if (ml && (ml < 2 || rest[ml - 1] != '_')) return 0;
    ml = ml ? ml - 1 : 0;
    if (ml >= mn) return 0;
    for (size_t i = 0; i < ml; i++)
        if (!name_char(rest[i])) return 0;
    *idx = atoi(rest + g);
    memcpy(model, rest, ml);
    model[ml] = 0;
    return 1;
}

/* The model type of a GRES entry's rest "TYPE:N" (not a per-GPU type gN or MODEL_gN) into out (size n); 0
 * when it has none. */
static int model_type(const char *rest, char *out, size_t n)
{
    const char *c = strchr(rest, ':');
    size_t len = c ? (size_t)(c - rest) : 0;
    int idx;
    char m[64];
    if (!c || !len || len >= n || sl_pin_type(rest, &idx, m, sizeof m)) return 0;
    for (size_t i = 0; i < len; i++)
        if (!name_char(rest[i])) return 0;
    memcpy(out, rest, len);
    out[len] = 0;
    return 1;
}

/* Typed pins "gres:gpu:g2:1,gres:shard:g3:1" (or "gres:gpu:v100_g2:1": per-GPU types with the model) ->
 * indices; a request typed by model "gres:gpu:v100:2" ->
 * gpu_type; untyped "gres:gpu:N" -> untyped_gpus; every gpu
 * and shard entry, typed or not, counted into gres_gpus and gres_shards. */
static void parse_tres(const char *tres, sl_job_t *j)
{
    char buf[256];
    copy(buf, sizeof buf, tres);
    char *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (!strncmp(tok, "gres:", 5)) tok += 5;
        else if (!strncmp(tok, "gres/", 5)) tok += 5;
        int shard = !strncmp(tok, "shard:", 6);
        if (!shard && strncmp(tok, "gpu:", 4)) continue;
        char *rest = tok + (shard ? 6 : 4);
        int idx;
        char pm[32];
        long cnt, all = gres_count(rest);
        if (all > 0) {
            int *sum = shard ? &j->gres_shards : &j->gres_gpus;
            *sum = (int)DS_SL_MIN((long)*sum + all, 1000000L);
        }
        if (strchr(rest, ':') && sl_pin_type(rest, &idx, pm, sizeof pm)) {
            if (j->ngpu_idx < SL_MAX_GPUS) j->gpu_idx[j->ngpu_idx++] = idx;
            j->on_shard |= shard;
        } else if (!shard && model_type(rest, j->gpu_type, sizeof j->gpu_type)) {
            /* counted into gres_gpus above */
        } else if (!shard && sscanf(rest, "%ld", &cnt) == 1) {
            j->untyped_gpus = (int)cnt;
        }
    }
}

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
        parse_tres(j->tres_per_node, j);
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
        if (j->ngpu_idx == 0 && j->state == SL_RUNNING && s->gres_detail_cnt > 0 && s->gres_detail_str &&
            s->gres_detail_str[0]) {
            const char *p = strstr(s->gres_detail_str[0], "IDX:");
            if (p) parse_idx_list(p + 4, j);
        }
    }
    free(*jobs);
    *jobs = v;
    *njobs = (int)msg->record_count;
    return 0;
}

/* One GRES list of a node: the count of each typed shard entry "shard:gN:C" goes to shards[N]
 * (entries absent leave it as it was); returns the GPUs its "gpu:..." entries add up to. With nd, the
 * model type of its gpu entries goes to nd->gpu_type (nd->types: how many distinct ones). */
static int scan_gres(const char *gres, int *shards, sl_node_t *nd)
{
    char buf[4096], *save = NULL;
    int gpus = 0;
    copy(buf, sizeof buf, gres);
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *paren = strchr(tok, '(');
        if (paren) *paren = 0;
        int idx;
        char ty[sizeof nd->gpu_type];
        const char *c = strrchr(tok, ':');
        long cnt = c ? gres_count(c + 1) : -1;
        if (!strncmp(tok, "shard:", 6) && strchr(tok + 6, ':') && sl_pin_type(tok + 6, &idx, ty, sizeof ty) &&
            idx >= 0 && idx < SL_MAX_GPUS && cnt >= 0)
            shards[idx] = (int)DS_SL_MIN(cnt, 1000000L);
        if (!strncmp(tok, "gpu:", 4) && c) {
            gpus += (int)DS_SL_MIN(cnt > 0 ? cnt : 0, 1000000L);
            /* a model: from a per-GPU type "v100_g0" (deepshared pins them) or a model type "v100" (Slurm picks) */
            int pin = strchr(tok + 4, ':') && sl_pin_type(tok + 4, &idx, ty, sizeof ty) && ty[0];
            if (nd && pin) nd->model_pins = 1;
            else if (nd && model_type(tok + 4, ty, sizeof ty)) nd->model_picks = 1;
            if (nd && (pin || nd->model_picks) && ty[0] && strcmp(ty, nd->gpu_type)) {
                if (!nd->types++) snprintf(nd->gpu_type, sizeof nd->gpu_type, "%s", ty);
            }
        }
    }
    return gpus;
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
        d->gpus = scan_gres(s->gres, d->shards, d);
        /* GresUsed: "gpu:g0:0(IDX:N/A),...,shard:g1:1(IDX:1),..." */
        scan_gres(s->gres_used, d->shards_used, NULL);
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
