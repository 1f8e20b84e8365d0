/* screen.c: which Slurm jobs deepshared takes. A job waiting in staging is checked for what the daemon can
 * schedule as Slurm would run it: its tenant (the account, and whether its user may charge it), its GPU
 * request (the comment's hints parsed strictly, the GRES Slurm would allocate), and requests Slurm would
 * carry out otherwise than the policy decides (arrays, several nodes, whole nodes, constraints), or not
 * yet (a begin time, a dependency). Jobs in deepshared's partitions that it did not dispatch are told apart
 * here too. Nothing here logs or calls Slurm: the callers log a refusal once per job. */
#include "daemon/daemon.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int32_t screen_tenant(const daemon_t *d, const char *account)
{
    for (int i = 0; i < d->cfg.ntenants; i++)
        if (!strcasecmp(d->cfg.tenants[i].name, account)) return i;
    return -1;
}

int screen_ours(const sl_job_t *j) { return !strncmp(j->admin_comment, "deepshare ", 10); }

void screen_escape(const char *s, char *out, size_t n)
{
    size_t o = 0;
    if (!n) return;
    for (; *s && o + 5 < n; s++) {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20 || c == 0x7f || c == '\\') o += (size_t)snprintf(out + o, n - o, c == '\\' ? "\\\\" : "\\x%02x", c);
        else out[o++] = (char)c;
    }
    out[o] = 0;
}

static int why(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int why(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return -1;
}

/* An integer value of a hint in [lo, hi]: digits only (no sign, no spaces, no fraction, no overflow). */
static int hint_int(const char *key, const char *v, long lo, long hi, int *out, char *w, size_t n)
{
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (!isdigit((unsigned char)v[0]) || *end || errno || x < lo || x > hi) {
        char shown[48];
        screen_escape(v, shown, sizeof shown);
        return why(w, n, "comment: %s=%s is not a whole number in [%ld, %ld]", key, shown, lo, hi);
    }
    *out = (int)x;
    return 0;
}

/* A name hint (model, dataset): letters, digits, '_', '.', '-', at most 31. */
static int hint_name(const char *key, const char *v, char *dst, size_t dn, char *w, size_t n)
{
    size_t len = strlen(v);
    int ok = len > 0 && len < dn;
    for (const char *p = v; ok && *p; p++) ok = isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '-';
    if (!ok) return why(w, n, "comment: %s= takes 1 to %zu letters, digits, '_', '.' or '-'", key, dn - 1);
    memcpy(dst, v, len + 1);
    return 0;
}

/* words are separated by commas, semicolons and white space */
#define SEPS ", ;\t\n\r\v\f"

int screen_hints(const char *comment, screen_hints_t *h, char *w, size_t n)
{
    memset(h, 0, sizeof *h);
    h->gmem = -1;
    char buf[sizeof ((sl_job_t *)0)->comment];
    snprintf(buf, sizeof buf, "%s", comment);
    static const char *const keys[] = {"gpus", "batch", "amp", "gmem", "model", "dataset", "class", "ckpt"};
    unsigned seen = 0;
    char *save = NULL;
    for (char *tok = strtok_r(buf, SEPS, &save); tok; tok = strtok_r(NULL, SEPS, &save)) {
        char *eq = strchr(tok, '=');
        char shown[48];
        screen_escape(tok, shown, sizeof shown);
        if (!eq) return why(w, n, "comment: '%s' is not KEY=VALUE (keys: gpus, batch, amp, gmem, model, dataset, class, ckpt)", shown);
        *eq = 0;
        const char *v = eq + 1;
        int k = -1;
        for (int i = 0; i < (int)(sizeof keys / sizeof keys[0]); i++)
            if (!strcmp(tok, keys[i])) k = i;
        screen_escape(tok, shown, sizeof shown);
        if (k < 0) return why(w, n, "comment: unknown key '%s' (keys: gpus, batch, amp, gmem, model, dataset, class, ckpt)", shown);
        if (seen & (1u << k)) return why(w, n, "comment: %s given twice", keys[k]);
        seen |= 1u << k;
        int rc = 0;
        switch (k) {
        case 0: rc = hint_int("gpus", v, 0, SL_MAX_GPUS, &h->gpus, w, n); break;
        case 1: rc = hint_int("batch", v, 1, 1000000, &h->batch, w, n); break;
        case 2: rc = hint_int("amp", v, 0, 1, &h->amp, w, n); break;
        case 3: rc = hint_int("gmem", v, 0, 10000000, &h->gmem, w, n); break;
        case 4: rc = hint_name("model", v, h->model, sizeof h->model, w, n); break;
        case 5: rc = hint_name("dataset", v, h->dataset, sizeof h->dataset, w, n); break;
        case 7: rc = hint_int("ckpt", v, 0, (int)DS_MAX_DURATION, &h->ckpt, w, n); break;
        default:
            if (!strcasecmp(v, "BE")) h->klass = DS_CLASS_BE;
            else if (!strcasecmp(v, "G")) h->klass = DS_CLASS_G;
            else rc = why(w, n, "comment: class= takes BE or G");
        }
        if (rc) return rc;
    }
    h->has_gpus = (seen & 1u) != 0;
    return 0;
}

int screen_gpus(const sl_job_t *j)
{
    /* an untyped request, the GPUs pinned (ours, or typed by the user), else every typed request: what
     * Slurm allocates; the comment only when Slurm was asked for no GPU */
    if (j->untyped_gpus > 0) return j->untyped_gpus;
    if (j->ngpu_idx > 0) return j->ngpu_idx;
    if (j->gres_gpus > 0) return j->gres_gpus;
    screen_hints_t h;
    char w[8];
    if (screen_hints(j->comment, &h, w, sizeof w)) return 0;
    return h.gpus;
}

void screen_model_constraints(daemon_t *d)
{
    int nt = d->ntypes ? d->ntypes : d->typed;
    for (int i = 0; d->model_pins && i < d->nsj; i++) {
        sl_job_t *j = &d->sj[i];
        if (j->gpu_type[0] || !j->features[0]) continue;
        for (int k = 0; k < nt; k++)
            if (!strcmp(d->tname[k], j->features)) {
                snprintf(j->gpu_type, sizeof j->gpu_type, "%s", j->features);
                j->has_features = 0;
            }
    }
}

int screen_job(const daemon_t *d, const sl_job_t *j, char *w, size_t n)
{
    char acct[64 * 4 + 1];
    screen_escape(j->account, acct, sizeof acct);
    int32_t t = screen_tenant(d, j->account);
    if (t < 0) return why(w, n, "account '%.120s' is not a tenant in %.100s", acct, d->cfg.path);
    const dc_tenant_t *ten = &d->cfg.tenants[t];
    if (!dconfig_member(ten, j->user)) {
        char user[64 * 4 + 1];
        screen_escape(j->user, user, sizeof user);
        return why(w, n, "user %.120s is not a member of tenant %s (users= on line %d of %.100s): not charged to it", user,
                   ten->name, ten->line, d->cfg.path);
    }
    if (j->comment_long) return why(w, n, "comment: longer than %zu characters", sizeof j->comment - 1);
    screen_hints_t h;
    if (screen_hints(j->comment, &h, w, n)) return -1;
    if (j->array) return why(w, n, "a job array: deepshared schedules single jobs (submit one job per task)");
    if (j->min_nodes > 1) return why(w, n, "asks for %d nodes: deepshared places jobs on one node", j->min_nodes);
    if (j->exclusive) return why(w, n, "--exclusive asks for whole nodes: deepshared places GPUs, not nodes (submit without it)");
    if (j->has_features)
        return why(w, n, "--constraint: deepshared chooses the node and would not honour it%s",
                   d->model_pins ? " (a GPU model alone is honoured: --constraint=MODEL)" : "");
    if (j->other_gpus)
        return why(w, n, "asks for GPUs with --gpus, --gpus-per-task or --gpus-per-socket: use --gres=gpu:N or "
                   "--comment=gpus=N");
    /* a job we requeued carries our pins (gpu:gN:1 or shard:gN:1 each): those are not the user's asking */
    int ours = screen_ours(j);
    if (!ours && j->gres_shards > 0)
        return why(w, n, "asks for shards (--gres=shard): deepshared decides which jobs share a GPU");
    int g = ours ? screen_gpus(j) : j->gres_gpus > 0 ? j->gres_gpus : h.gpus;
    if (!ours && j->gres_gpus > 0 && h.has_gpus && h.gpus != j->gres_gpus) {
        char tres[sizeof j->tres_per_node * 4 + 1];
        screen_escape(j->tres_per_node, tres, sizeof tres);
        return why(w, n, "gpus=%d in its comment but Slurm allocates %d (%.100s): give one of them", h.gpus, j->gres_gpus,
                   tres);
    }
    if (g < 1) return why(w, n, "asks for no GPU (use --comment=gpus=N or --gres=gpu:N)");
    if (g > d->gpn) return why(w, n, "asks for %d GPUs but a node has %d", g, d->gpn);
    if (j->gpu_type[0]) {
        /* a request typed by model: a type of the nodes, and no more GPUs than a node of it has */
        int ty = -1, nt = d->ntypes ? d->ntypes : d->typed;
        for (int k = 0; k < nt; k++)
            if (!strcmp(d->tname[k], j->gpu_type)) ty = k;
        char gt[sizeof j->gpu_type * 4 + 1];
        screen_escape(j->gpu_type, gt, sizeof gt);
        if (ty < 0)
            return why(w, n, "asks for GPUs of type %.60s (--gres=gpu:%.60s:N), which no node has%s%s%s", gt, gt,
                       d->typed ? " (types: " : " (the nodes' GPUs have no model type)", d->typed ? d->tname[0] : "",
                       d->typed ? (nt > 1 ? ", ...)" : ")") : "");
        if (g > d->tgpn[ty]) return why(w, n, "asks for %d GPUs of type %.60s but a node of it has %d", g, gt, d->tgpn[ty]);
    }
    if (d->cpn > 0 && j->cpus > d->cpn) return why(w, n, "asks for %d CPUs but a node has %d", j->cpus, d->cpn);
    if (d->mpn > 0 && j->mem_mib > d->mpn)
        return why(w, n, "asks for %lld MiB of memory but a node has %lld", (long long)j->mem_mib, (long long)d->mpn);
    if (j->dep_never) return why(w, n, "its dependency can never be satisfied (Slurm: DependencyNeverSatisfied)");
    if (j->wait_dep) {
        why(w, n, "waits for its dependency (Slurm: Dependency): offered to the policy once Slurm would start it");
        return 1;
    }
    /* Slurm's begin time; a job we requeued has one too (Slurm's 120 s), which the dispatch resets */
    int64_t now = d->now;
    if (j->restarts == 0 && (j->eligible > now || (j->wait_begin && j->eligible <= 0))) {
        why(w, n, "waits for its begin time (--begin): offered to the policy once Slurm would start it");
        return 1;
    }
    return 0;
}
