/* usage_read.c: the readers of 'deepshare usage' (deepshare/usage.h): deepshared's journal of finished jobs,
 * and a simulator run's jobs.csv and tenant_usage.csv. Bounded (rows, names, tenants) and strict: a bad
 * record is an error naming the file, line and field, since a report that silently drops jobs misleads. */
#include "deepshare/usage.h"
#include "deepshare/csv.h"
#include "deepshare/idmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#define JOURNAL_MAX_LINE 600 /* the daemon refuses longer records too */

void ds_usage_init(ds_usage_data_t *d) { memset(d, 0, sizeof *d); }

void ds_usage_free(ds_usage_data_t *d)
{
    ds_strtab_free(&d->tenants);
    ds_strtab_free(&d->users);
    free(d->jobs);
    free(d->samples);
    free(d->quota);
    free(d->preempted);
    memset(d, 0, sizeof *d);
}

void ds_usage_set_quotas(ds_usage_data_t *d, const ds_trace_t *tenants)
{
    for (int32_t i = 0; i < tenants->ntenants; i++) ds_strtab_intern(&d->tenants, tenants->tenants[i].name);
    d->quota = ds_xrealloc(d->quota, (size_t)(d->tenants.n ? d->tenants.n : 1) * sizeof *d->quota);
    for (int32_t i = 0; i < d->tenants.n; i++) d->quota[i] = -1;
    for (int32_t i = 0; i < tenants->ntenants; i++)
        d->quota[ds_strtab_find(&d->tenants, tenants->tenants[i].name)] = tenants->tenants[i].quota_gpus;
}

static int name_of(ds_strtab_t *tab, const char *s, const char *path, long line, const char *field, int32_t max,
                   int32_t *out, ds_error_t *err)
{
    size_t n = strlen(s);
    if (n == 0 || n > DS_USAGE_MAX_NAME) {
        ds_error_set(err, path, line, field, "%s", n ? "longer than 127 bytes" : "empty");
        return DS_EPARSE;
    }
    int32_t i = ds_strtab_find(tab, s);
    if (i < 0) {
        if (tab->n >= max) {
            ds_error_set(err, path, line, field, "more than %d distinct values", max);
            return DS_EPARSE;
        }
        i = ds_strtab_intern(tab, s);
    }
    *out = i;
    return DS_OK;
}

static ds_usage_job_t *new_job(ds_usage_data_t *d, const char *path, long line, ds_error_t *err)
{
    if (d->njobs >= DS_USAGE_MAX_ROWS) {
        ds_error_set(err, path, line, NULL, "more than %d jobs", DS_USAGE_MAX_ROWS);
        return NULL;
    }
    if (d->njobs == d->capjobs) {
        d->capjobs = d->capjobs ? d->capjobs * 2 : 1024;
        d->jobs = ds_xrealloc(d->jobs, (size_t)d->capjobs * sizeof *d->jobs);
    }
    return &d->jobs[d->njobs++];
}

static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    if (!*s) return -1;
    char *e;
    errno = 0;
    long long v = strtoll(s, &e, 10);
    if (errno || *e || v < lo || v > hi) return -1;
    *out = v;
    return 0;
}

/* One journal record, split in place into *nf fields (6, 8 with the run's start and submit times as
 * deepshared writes since it journals them, 9 with its time limit): NULL, or what is wrong and with which field. */
static const char *journal_fields(char *buf, char **f, int *nf, const char **field)
{
    int n = 0;
    *field = NULL;
    for (char *p = buf;; n++) {
        if (n == 9) return "more than 9 fields";
        f[n] = p;
        char *c = strchr(p, ',');
        if (!c) { n++; break; }
        *c = '\0';
        p = c + 1;
    }
    if (n != 6 && n != 8 && n != 9)
        return "expected 6, 8 or 9 fields: slurm_job_id,tenant,user,gpus,seconds,end[,start,submit[,limit]]";
    *nf = n;
    return NULL;
}

int ds_usage_read_journal(ds_usage_data_t *d, const char *path, int64_t *torn, ds_error_t *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        ds_error_set(err, path, 0, NULL, "cannot open: %s", strerror(errno));
        return DS_EIO;
    }
    snprintf(d->source, sizeof d->source, "journal");
    *torn = 0;
    ds_idmap_t seen;
    ds_idmap_init(&seen);
    char *buf = NULL;
    size_t cap = 0;
    long line = 0;
    ssize_t got;
    int rc = DS_OK;
    while (rc == DS_OK && (got = getline(&buf, &cap, f)) >= 0) {
        line++;
        if (line == 1 && !strncmp(buf, "slurm_job_id", 12)) continue;
        if (got == 1 && buf[0] == '\n') continue;
        if (buf[got - 1] != '\n') {
            int last = fgetc(f) == EOF;
            if (last) { (*torn)++; break; } /* a crash's torn last record: the daemon skips it too */
        }
        const char *why = NULL, *field = NULL;
        char *fl[9];
        int nf = 0;
        if ((size_t)got != strlen(buf)) why = "NUL byte in record";
        else if (got > JOURNAL_MAX_LINE) why = "record longer than 600 bytes";
        else {
            buf[got - 1] = '\0';
            why = journal_fields(buf, fl, &nf, &field);
        }
        int64_t id = 0, gpus = 0, end = 0;
        double sec = 0;
        if (!why && parse_int(fl[0], 1, 0xffffffffLL, &id)) why = "not a Slurm job id", field = "slurm_job_id";
        if (!why && parse_int(fl[3], 0, DS_MAX_JOB_GPUS, &gpus)) why = "not a GPU count", field = "gpus";
        if (!why) {
            char *e;
            sec = strtod(fl[4], &e);
            if (e == fl[4] || *e || !(sec >= 0 && sec <= 366.0 * 86400)) why = "not a run time of at most a year", field = "seconds";
        }
        if (!why && parse_int(fl[5], 0, 0xffffffffLL, &end)) why = "not a Unix time", field = "end";
        int64_t start = -1, submit = 0;
        if (!why && nf >= 8 && parse_int(fl[6], 0, end, &start)) why = "not a Unix time at most the end", field = "start";
        if (!why && nf >= 8 && parse_int(fl[7], 0, start, &submit))
            why = "not a Unix time at most the start (0: unknown)", field = "submit";
        int64_t limit = 0; /* the usage report does not use it; checked as the daemon checks it */
        if (!why && nf == 9 && parse_int(fl[8], 0, 366LL * 86400, &limit))
            why = "not a time limit of at most a year in whole seconds (0: none)", field = "limit";
        if (why) {
            ds_error_set(err, path, line, field, "%s", why);
            rc = DS_EPARSE;
            break;
        }
        /* the daemon journals a job once per (id, end); a copy of a line counts once here too */
        int64_t key = (int64_t)(((uint64_t)id << 32) | (uint32_t)end);
        if (ds_idmap_get(&seen, key) >= 0) continue;
        ds_usage_job_t j = {.id = id, .gpus = (int32_t)gpus, .end = end, .run = (int64_t)(sec + 0.5), .submit = -1,
                            .queue = -1, .preemptions = -1};
        j.start = end - j.run;
        /* With a speed table the seconds are on the reference type (what the predictor learns), not the wall
         * clock, so the wall start time is what GPU-hours are counted from when the record has it. The submit
         * time is the one Slurm reported for the finished run (after a requeue, Slurm's own). */
        if (start >= 0) {
            j.start = start, j.run = end - start;
            if (submit > 0) j.submit = submit, j.queue = start - submit;
        }
        if ((rc = name_of(&d->tenants, fl[1], path, line, "tenant", DS_USAGE_MAX_TENANTS, &j.tenant, err))) break;
        if ((rc = name_of(&d->users, fl[2], path, line, "user", DS_USAGE_MAX_ROWS, &j.user, err))) break;
        ds_usage_job_t *slot = new_job(d, path, line, err);
        if (!slot) { rc = DS_EPARSE; break; }
        *slot = j;
        ds_idmap_put(&seen, key, 1);
    }
    if (rc == DS_OK && ferror(f)) {
        ds_error_set(err, path, line, NULL, "read error");
        rc = DS_EIO;
    }
    free(buf);
    fclose(f);
    ds_idmap_free(&seen);
    return rc;
}

int ds_usage_read_jobs_csv(ds_usage_data_t *d, const char *path, ds_error_t *err)
{
    static const char *const need[] = {"job_id", "tenant", "user", "gpus", "submit", "start", "end", "queue", "preemptions"};
    enum { ID, TEN, USER, GPUS, SUB, START, END, QUEUE, PRE, N };
    ds_csv_t c;
    int rc = ds_csv_open_header(&c, path, "expected the jobs.csv of a 'deepshare simulate --out' folder", err);
    if (rc) return rc;
    int col[N];
    if ((rc = ds_csv_require(&c, need, N, col, err))) return rc;
    int ncols = c.nfields;
    snprintf(d->source, sizeof d->source, "simulation");
    while ((rc = ds_csv_row(&c, ncols, err)) == 1) {
        int64_t v[N];
        int bad = ds_csv_int(&c, col[ID], "job_id", INT64_MIN / 4, INT64_MAX / 4, &v[ID], err) ||
                  ds_csv_int(&c, col[GPUS], "gpus", 0, DS_MAX_JOB_GPUS, &v[GPUS], err) ||
                  ds_csv_int(&c, col[SUB], "submit", -DS_USAGE_MAX_TIME, DS_USAGE_MAX_TIME, &v[SUB], err) ||
                  ds_csv_int(&c, col[START], "start", v[SUB], DS_USAGE_MAX_TIME, &v[START], err) ||
                  ds_csv_int(&c, col[END], "end", v[START], DS_USAGE_MAX_TIME, &v[END], err) ||
                  ds_csv_int(&c, col[QUEUE], "queue", 0, v[END] - v[SUB], &v[QUEUE], err) ||
                  ds_csv_int(&c, col[PRE], "preemptions", 0, INT32_MAX, &v[PRE], err);
        if (bad) { rc = DS_EPARSE; break; }
        ds_usage_job_t j = {.id = v[ID], .gpus = (int32_t)v[GPUS], .submit = v[SUB], .start = v[START], .end = v[END],
                            .queue = v[QUEUE], .preemptions = (int32_t)v[PRE]};
        j.run = v[END] - v[SUB] - v[QUEUE];
        if ((rc = name_of(&d->tenants, c.fields[col[TEN]], path, c.line, "tenant", DS_USAGE_MAX_TENANTS, &j.tenant, err)) ||
            (rc = name_of(&d->users, c.fields[col[USER]], path, c.line, "user", DS_USAGE_MAX_ROWS, &j.user, err)))
            break;
        ds_usage_job_t *slot = new_job(d, path, c.line, err);
        if (!slot) { rc = DS_EPARSE; break; }
        *slot = j;
    }
    ds_csv_close(&c);
    return rc < 0 ? rc : DS_OK;
}

int ds_usage_read_samples_csv(ds_usage_data_t *d, const char *path, ds_error_t *err)
{
    static const char *const need[] = {"time", "tenant", "quota_gpus", "g_gpus", "be_gpus", "pending_gpus", "qad", "qad_smoothed"};
    enum { TIME, TEN, QUOTA, G, BE, PEND, QAD, SM, N };
    ds_csv_t c;
    int rc = ds_csv_open_header(&c, path, "expected the tenant_usage.csv of a 'deepshare simulate --out' folder", err);
    if (rc) return rc;
    int col[N];
    if ((rc = ds_csv_require(&c, need, N, col, err))) return rc;
    int ncols = c.nfields;
    int64_t last = INT64_MIN;
    while ((rc = ds_csv_row(&c, ncols, err)) == 1) {
        int64_t t, q, g, be, pend;
        double qad, sm;
        int bad = ds_csv_int(&c, col[TIME], "time", -DS_USAGE_MAX_TIME, DS_USAGE_MAX_TIME, &t, err) ||
                  ds_csv_int(&c, col[QUOTA], "quota_gpus", 0, DS_MAX_QUOTA_GPUS, &q, err) ||
                  ds_csv_int(&c, col[G], "g_gpus", 0, INT32_MAX, &g, err) ||
                  ds_csv_int(&c, col[BE], "be_gpus", 0, INT32_MAX, &be, err) ||
                  ds_csv_int(&c, col[PEND], "pending_gpus", 0, INT32_MAX, &pend, err) ||
                  ds_csv_num(&c, col[QAD], "qad", 0, 1, &qad, err) || ds_csv_num(&c, col[SM], "qad_smoothed", 0, 1, &sm, err);
        if (bad) { rc = DS_EPARSE; break; }
        if (t < last) {
            ds_error_set(err, path, c.line, "time", "rows out of time order (%lld after %lld)", (long long)t, (long long)last);
            rc = DS_EPARSE;
            break;
        }
        if (last != INT64_MIN && t > last) {
            /* one step between sample times: the GPU-hours are sums of samples x step */
            if (d->step == 0) d->step = t - last;
            else if (t - last != d->step) {
                ds_error_set(err, path, c.line, "time", "samples %lld s apart, the file's step is %lld s", (long long)(t - last),
                             (long long)d->step);
                rc = DS_EPARSE;
                break;
            }
        }
        last = t;
        ds_usage_sample_t s = {.time = t, .quota = (int32_t)q, .g = (int32_t)g, .be = (int32_t)be, .pending = (int32_t)pend,
                               .qad = (float)qad, .smoothed = (float)sm};
        if ((rc = name_of(&d->tenants, c.fields[col[TEN]], path, c.line, "tenant", DS_USAGE_MAX_TENANTS, &s.tenant, err))) break;
        if (d->nsamples >= DS_USAGE_MAX_ROWS) {
            ds_error_set(err, path, c.line, NULL, "more than %d samples", DS_USAGE_MAX_ROWS);
            rc = DS_EPARSE;
            break;
        }
        if (d->nsamples == d->capsamples) {
            d->capsamples = d->capsamples ? d->capsamples * 2 : 4096;
            d->samples = ds_xrealloc(d->samples, (size_t)d->capsamples * sizeof *d->samples);
        }
        d->samples[d->nsamples++] = s;
    }
    ds_csv_close(&c);
    if (rc == 0 && d->nsamples > 0 && d->step == 0) d->step = 60; /* one sample time: the simulator's cycle */
    return rc < 0 ? rc : DS_OK;
}

int ds_usage_read_run(ds_usage_data_t *d, const char *dir, ds_error_t *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/jobs.csv", dir);
    int rc = ds_usage_read_jobs_csv(d, path, err);
    if (rc) return rc;
    snprintf(path, sizeof path, "%s/tenant_usage.csv", dir);
    return ds_usage_read_samples_csv(d, path, err);
}
