/* hist.c: per-user / per-tenant / cluster mean of log run times learned from finished jobs, and its
 * journal: one CSV line per finished job, appended and fsync'd, replayed at start. */
#include "hist.h"

#include <errno.h>
#include <stdint.h>
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
    ds_limits_init(&h->lim, min_history);
}

void hist_free(hist_t *h)
{
    if (h->fd >= 0) close(h->fd);
    ds_strtab_free(&h->users);
    ds_strtab_free(&h->tenants);
    free(h->ustat);
    free(h->tstat);
    ds_idmap_free(&h->recorded);
    ds_limits_free(&h->lim);
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
    hist_learn_limit(h, tenant, user, seconds, 0);
}

void hist_learn_limit(hist_t *h, const char *tenant, const char *user, double seconds, double limit)
{
    if (limit > 0) ds_limits_learn(&h->lim, tenant, user, seconds, limit, hist_predict(h, tenant, user));
    double l = log(seconds < 1 ? 1 : seconds);
    ds_resid_add(&h->resid, l - log(hist_predict(h, tenant, user)));
    /* sorted while short, then every 64 finishes: the yield test reads the sorted copy each pass */
    if (h->resid.n <= 256 || ++h->resid_unsorted >= 64) {
        ds_resid_sort(&h->resid);
        h->resid_unsorted = 0;
    }
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

double hist_predict_limit(const hist_t *h, const char *tenant, const char *user, double limit)
{
    return ds_limits_predict(&h->lim, tenant, user, limit, hist_predict(h, tenant, user));
}

/* A Slurm job id is reused after a wrap or a database reset; its end time tells the two jobs apart. End times
 * are Unix seconds, below 2^32 until 2106, so (id, end) packs into the map's 64-bit key without collisions. */
static int64_t rec_key(uint32_t id, int64_t end) { return (int64_t)(((uint64_t)id << 32) | (uint32_t)end); }

int hist_seen(const hist_t *h, uint32_t id, int64_t end) { return ds_idmap_get(&h->recorded, rec_key(id, end)) >= 0; }

static void warn_stderr(const char *msg) { fprintf(stderr, "deepshared: %s\n", msg); }

/* One journal record "id,tenant,user,gpus,seconds,end[,start,submit[,limit]]", strictly: anything else is
 * reported, not guessed at. Journals written before start and submit were recorded hold 6-field records,
 * before time limits 8-field ones, and one journal may hold every kind (a daemon upgraded in place appends
 * to its old file). */
static const char *parse_record(char *buf, uint32_t *id, char **tenant, char **user, int *gpus, double *sec,
                                int64_t *end, int64_t *submit, double *limit)
{
    char *nl = strchr(buf, '\n');
    if (!nl) return "incomplete record (torn by a crash?)";
    *nl = '\0';
    char *f[9];
    int n = 0;
    for (char *p = buf; n < 9; n++) {
        f[n] = p;
        char *c = strchr(p, ',');
        if (!c) { n++; break; }
        *c = '\0';
        p = c + 1;
        if (n == 8) return "more than 9 fields";
    }
    if (n != 6 && n != 8 && n != 9)
        return "expected 6, 8 or 9 fields: slurm_job_id,tenant,user,gpus,seconds,end[,start,submit[,limit]]";
    char *e;
    errno = 0;
    unsigned long long v = strtoull(f[0], &e, 10);
    if (errno || e == f[0] || *e || f[0][0] == '-' || v == 0 || v > 0xffffffffULL) return "bad slurm_job_id";
    *id = (uint32_t)v;
    if (!*f[1] || !*f[2] || strlen(f[1]) > 127 || strlen(f[2]) > 127) return "bad tenant or user";
    long g = strtol(f[3], &e, 10);
    if (e == f[3] || *e || g < 0 || g > 1000000) return "bad gpus";
    *gpus = (int)g;
    *sec = strtod(f[4], &e);
    /* inf or 1e308 seconds would poison every later mean: a year is the longest run time believed */
    if (e == f[4] || *e || !(*sec >= 0 && *sec <= HIST_MAX_SECONDS)) return "bad seconds (not a finite run time of at most a year)";
    errno = 0;
    long long en = strtoll(f[5], &e, 10);
    if (errno || e == f[5] || *e || en < 0 || en > 0xffffffffLL) return "bad end time";
    *limit = 0;
    *submit = 0;
    if (n == 9) {
        /* whole seconds, 0: none; at most a year, as a run time */
        errno = 0;
        long long li = strtoll(f[8], &e, 10);
        if (errno || e == f[8] || *e || li < 0 || li > (long long)HIST_MAX_SECONDS)
            return "bad limit (not a time limit of at most a year in whole seconds, 0: none)";
        *limit = (double)li;
    }
    if (n >= 8) {
        errno = 0;
        long long st = strtoll(f[6], &e, 10);
        if (errno || e == f[6] || *e || st < 0 || st > en) return "bad start time (not a Unix time at most the end)";
        errno = 0;
        long long su = strtoll(f[7], &e, 10);
        if (errno || e == f[7] || *e || su < 0 || su > st) return "bad submit time (not a Unix time at most the start)";
        *submit = su;
    }
    *end = en;
    *tenant = f[1];
    *user = f[2];
    return NULL;
}

int hist_open(hist_t *h, const char *path, void (*warn)(const char *msg), ds_error_t *err)
{
    snprintf(h->path, sizeof h->path, "%s", path);
    if (!warn) warn = warn_stderr;
    FILE *f = fopen(path, "r");
    if (f) {
        char *buf = NULL;
        size_t cap = 0;
        char msg[700];
        long line = 0;
        ssize_t got;
        while ((got = getline(&buf, &cap, f)) >= 0) {
            line++;
            if (line == 1 && !strncmp(buf, "slurm_job_id", 12)) continue;
            if (got == 1 && buf[0] == '\n') continue;
            uint32_t id;
            char *tenant, *user;
            int gpus;
            double sec, limit;
            int64_t end, submit;
            const char *why = (size_t)got != strlen(buf) ? "NUL byte in record"
                              : got > 600 ? "record longer than 600 bytes"
                                          : parse_record(buf, &id, &tenant, &user, &gpus, &sec, &end, &submit, &limit);
            if (why) {
                /* a torn last line after a crash is expected; anything else is worth a look */
                snprintf(msg, sizeof msg, "%s:%ld: malformed journal record skipped: %s", path, line, why);
                warn(msg);
                h->skipped++;
                continue;
            }
            if (ds_idmap_put(&h->recorded, rec_key(id, end), 1) >= 0) continue;
            hist_learn_limit(h, tenant, user, sec, limit);
            if (h->on_learn) h->on_learn(h->on_learn_ctx, id, tenant, user, gpus, sec, end, submit, limit);
            h->records++;
        }
        free(buf);
        fclose(f);
    }
    char dir[256];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = 0;
        if (mkdir(dir, 0750) && errno != EEXIST) { /* reported by the open below */ }
    }
    /* who ran what for how long: as private as Slurm's accounting (owner and group only) */
    h->fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
    if (h->fd < 0) {
        ds_error_set(err, path, 0, "journal", "cannot open for appending: %s", strerror(errno));
        return -1;
    }
    off_t size = lseek(h->fd, 0, SEEK_END);
    if (size == 0) {
        static const char hdr[] = "slurm_job_id,tenant,user,gpus,seconds,end,start,submit,limit\n";
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
                int64_t start, int64_t submit, int64_t limit, char *err, size_t errn)
{
    if (!(seconds >= 0 && seconds <= HIST_MAX_SECONDS) || end < 0 || end > 0xffffffffLL || start > end) {
        snprintf(err, errn, "%s: job %u not journaled: run time %g s, start %lld or end %lld out of range", h->path,
                 id, seconds, (long long)start, (long long)end);
        return -1;
    }
    /* a submit time Slurm did not give (0) or one after the start (a clock step) is journaled as unknown */
    if (submit < 0 || submit > start) submit = 0;
    if (limit < 0 || limit > (int64_t)HIST_MAX_SECONDS) limit = 0;
    if (ds_idmap_put(&h->recorded, rec_key(id, end), 1) >= 0) return 0;
    hist_learn_limit(h, tenant, user, seconds, (double)limit);
    if (h->on_learn) h->on_learn(h->on_learn_ctx, id, tenant, user, gpus, seconds, end, submit, (double)limit);
    h->records++;
    if (h->fd < 0) return 0;
    char line[512];
    int n = start < 0 ? snprintf(line, sizeof line, "%u,%s,%s,%d,%.0f,%lld\n", id, tenant, user, gpus, seconds,
                                 (long long)end)
                      : snprintf(line, sizeof line, "%u,%s,%s,%d,%.0f,%lld,%lld,%lld,%lld\n", id, tenant, user, gpus,
                                 seconds, (long long)end, (long long)start, (long long)submit, (long long)limit);
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
    return hist_predict_limit(h, t->tenants[job->tenant].name, user, (double)job->limit);
}

static double beyond_cb(void *ctx, double pred, int64_t elapsed)
{
    return ds_resid_beyond(&((const hist_t *)ctx)->resid, pred, elapsed);
}

void hist_predictor(ds_runtime_predictor_t *p, hist_t *h)
{
    memset(p, 0, sizeof *p);
    p->name = "history";
    p->ctx = h;
    p->predict = predict_cb;
    p->beyond = beyond_cb;
}
