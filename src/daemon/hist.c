/* hist.c: per-user / per-tenant / cluster mean of log run times learned from finished jobs, and its
 * journal: one CSV line per finished job, appended and fsync'd, replayed at start. */
#include "hist.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void hist_init(hist_t *h, int min_history, double default_runtime)
{
    memset(h, 0, sizeof *h);
    h->min_history = min_history;
    h->default_runtime = default_runtime;
    h->fd = -1;
    ds_idmap_init(&h->recorded);
}

void hist_free(hist_t *h)
{
    if (h->fd >= 0) close(h->fd);
    ds_strtab_free(&h->users);
    ds_strtab_free(&h->tenants);
    free(h->ustat);
    free(h->tstat);
    ds_idmap_free(&h->recorded);
    memset(h, 0, sizeof *h);
    h->fd = -1;
}

static hist_stat_t *stat_of(ds_strtab_t *t, hist_stat_t **v, int32_t *cap, const char *key)
{
    int32_t i = ds_strtab_intern(t, key);
    if (i >= *cap) {
        int32_t nc = *cap ? *cap * 2 : 64;
        while (nc <= i) nc *= 2;
        *v = ds_xrealloc(*v, (size_t)nc * sizeof **v);
        memset(*v + *cap, 0, (size_t)(nc - *cap) * sizeof **v);
        *cap = nc;
    }
    return &(*v)[i];
}

void hist_learn(hist_t *h, const char *tenant, const char *user, double seconds)
{
    double l = log(seconds < 1 ? 1 : seconds);
    char key[192];
    snprintf(key, sizeof key, "%s/%s", tenant, user);
    hist_stat_t *u = stat_of(&h->users, &h->ustat, &h->ucap, key);
    hist_stat_t *t = stat_of(&h->tenants, &h->tstat, &h->tcap, tenant);
    u->sum_log += l, u->n++;
    t->sum_log += l, t->n++;
    h->all.sum_log += l, h->all.n++;
}

double hist_predict(const hist_t *h, const char *tenant, const char *user)
{
    char key[192];
    snprintf(key, sizeof key, "%s/%s", tenant, user);
    int32_t i = ds_strtab_find(&h->users, key);
    if (i >= 0 && h->ustat[i].n >= h->min_history) return exp(h->ustat[i].sum_log / (double)h->ustat[i].n);
    i = ds_strtab_find(&h->tenants, tenant);
    if (i >= 0 && h->tstat[i].n >= h->min_history) return exp(h->tstat[i].sum_log / (double)h->tstat[i].n);
    if (h->all.n > 0) return exp(h->all.sum_log / (double)h->all.n);
    return h->default_runtime;
}

int hist_seen(const hist_t *h, uint32_t id) { return ds_idmap_get(&h->recorded, id) >= 0; }

int hist_open(hist_t *h, const char *path, void (*warn)(const char *msg), ds_error_t *err)
{
    snprintf(h->path, sizeof h->path, "%s", path);
    FILE *f = fopen(path, "r");
    if (f) {
        char buf[512], msg[700];
        long line = 0;
        while (fgets(buf, sizeof buf, f)) {
            line++;
            if (line == 1 && !strncmp(buf, "slurm_job_id", 12)) continue;
            unsigned long id;
            char tenant[128], user[128];
            int gpus;
            double sec;
            long long end;
            if (sscanf(buf, "%lu,%127[^,],%127[^,],%d,%lf,%lld", &id, tenant, user, &gpus, &sec, &end) != 6 ||
                !(sec >= 0)) {
                /* a torn last line after a crash is expected; anything else is worth a look */
                snprintf(msg, sizeof msg, "%s:%ld: malformed journal record skipped", path, line);
                if (warn) warn(msg);
                continue;
            }
            if (ds_idmap_put(&h->recorded, (int64_t)id, 1) >= 0) continue;
            hist_learn(h, tenant, user, sec);
            h->records++;
        }
        fclose(f);
    }
    char dir[256];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = 0;
        if (mkdir(dir, 0755) && errno != EEXIST) { /* reported by the open below */ }
    }
    h->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (h->fd < 0) {
        ds_error_set(err, path, 0, "journal", "cannot open for appending: %s", strerror(errno));
        return -1;
    }
    off_t size = lseek(h->fd, 0, SEEK_END);
    if (size == 0) {
        static const char hdr[] = "slurm_job_id,tenant,user,gpus,seconds,end\n";
        if (write(h->fd, hdr, sizeof hdr - 1) < 0) { /* reported at the first record */ }
    } else if (size > 0) {
        /* a record torn by a crash must not swallow the next one */
        int rfd = open(path, O_RDONLY | O_CLOEXEC);
        char last = '\n';
        if (rfd >= 0) {
            if (pread(rfd, &last, 1, size - 1) != 1) last = '\n';
            close(rfd);
        }
        if (last != '\n' && write(h->fd, "\n", 1) < 0) { /* reported at the first record */ }
    }
    return 0;
}

int hist_record(hist_t *h, uint32_t id, const char *tenant, const char *user, int gpus, double seconds, int64_t end,
                char *err, size_t errn)
{
    if (ds_idmap_put(&h->recorded, id, 1) >= 0) return 0;
    hist_learn(h, tenant, user, seconds);
    h->records++;
    if (h->fd < 0) return 0;
    char line[512];
    int n = snprintf(line, sizeof line, "%u,%s,%s,%d,%.0f,%lld\n", id, tenant, user, gpus, seconds, (long long)end);
    if (write(h->fd, line, (size_t)n) != n || fsync(h->fd) != 0) {
        snprintf(err, errn, "%s: journal write failed: %s", h->path, strerror(errno));
        return -1;
    }
    return 0;
}

static double predict_cb(void *ctx, const ds_trace_t *t, int32_t j, int64_t now)
{
    (void)now;
    const hist_t *h = ctx;
    const ds_job_t *job = &t->jobs[j];
    const char *user = job->user >= 0 && job->user < t->users.n ? t->users.s[job->user] : "";
    return hist_predict(h, t->tenants[job->tenant].name, user);
}

void hist_predictor(ds_runtime_predictor_t *p, hist_t *h)
{
    memset(p, 0, sizeof *p);
    p->name = "history";
    p->ctx = h;
    p->predict = predict_cb;
}
