/* import.c: the imported trace shared by every published-trace reader: times, states, filters, window, quotas. */
#include "deepshare/import.h"
#include "deepshare/datetime.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define DAY 86400

void ds_import_opts_default(ds_import_opts_t *o)
{
    memset(o, 0, sizeof *o);
    o->states = (1u << DS_IMP_NSTATES) - 1;
    o->load = 0.85;
    o->gpus_per_node = 8;
}

void ds_import_init(ds_import_t *im)
{
    memset(im, 0, sizeof *im);
}

void ds_import_free(ds_import_t *im)
{
    free(im->jobs);
    free(im->quota);
    free(im->tquota);
    free(im->active);
    ds_strtab_free(&im->tenants);
    ds_strtab_free(&im->users);
    ds_strtab_free(&im->ids);
    memset(im, 0, sizeof *im);
}

ds_imp_job_t *ds_import_add(ds_import_t *im)
{
    if (im->njobs == im->cap) {
        im->cap = im->cap ? im->cap * 2 : 1024;
        im->jobs = ds_xrealloc(im->jobs, (size_t)im->cap * sizeof *im->jobs);
    }
    ds_imp_job_t *j = &im->jobs[im->njobs++];
    memset(j, 0, sizeof *j);
    return j;
}

static const char *const state_names[DS_IMP_NSTATES] = {"completed", "failed", "cancelled", "timeout", "node_fail",
                                                        "other"};

const char *ds_imp_state_name(int s)
{
    return s >= 0 && s < DS_IMP_NSTATES ? state_names[s] : "?";
}

int ds_imp_state_parse(const char *s)
{
    for (int i = 0; i < DS_IMP_NSTATES; i++)
        if (!strcasecmp(s, state_names[i])) return i;
    if (!strcasecmp(s, "canceled")) return DS_IMP_CANCELLED;
    return -1;
}

const char *ds_imp_drop_name(int d)
{
    static const char *const n[DS_DROP_N] = {"CPU-only", "never ran or unfinished", "state not in --states",
                                             "shorter than --min-duration", "outside the time window",
                                             "GPU types no node of the node list has (or more GPUs than their nodes hold)"};
    return d >= 0 && d < DS_DROP_N ? n[d] : "?";
}

int ds_imp_parse_time(const char *s, int64_t *out, int *is_date)
{
    if (!s || !*s) return -1;
    if (strlen(s) >= 10 && s[4] == '-') {
        *is_date = 1;
        return ds_datetime_parse(s, out);
    }
    char *end;
    double v = strtod(s, &end);
    if (*end || !isfinite(v) || fabs(v) > 4e15) return -1;
    *out = (int64_t)floor(v);
    *is_date = 0;
    return 0;
}

static int64_t floor_div(int64_t a, int64_t b)
{
    return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

void ds_imp_format_time(const ds_import_t *im, int64_t t, char *buf, size_t n)
{
    if (im->clock_is_unix) ds_datetime_format(t, buf, (unsigned)n);
    else snprintf(buf, n, "%lld s", (long long)t);
}

int ds_imp_bad_row(ds_import_t *im, const ds_import_opts_t *o, int rc, ds_error_t *err)
{
    if (rc == 0) return 0;
    if (!o->skip_bad || rc != DS_EPARSE) return rc;
    if (im->bad++ == 0) ds_error_format(err, im->first_bad, sizeof im->first_bad);
    ds_error_clear(err);
    return 0;
}

void ds_imp_not_run(ds_import_t *im)
{
    im->dropped[DS_DROP_NOT_RUN]++;
}

int ds_imp_keep(ds_import_t *im, const ds_import_opts_t *o, const ds_imp_job_t *j, const char *path,
                const ds_imp_cols_t *cols, ds_error_t *err)
{
    int why = -1;
    if (j->gpus <= 0) why = DS_DROP_CPU_ONLY;
    else if (!(o->states & (1u << j->state))) why = DS_DROP_STATE;
    else if (j->duration < o->min_duration) why = DS_DROP_SHORT;
    else if (!ds_imp_type_fits(im, j->gmask, j->gpus)) why = DS_DROP_GTYPE;
    if (why >= 0) {
        im->dropped[why]++;
        return 0;
    }
    /* simulate's limits (trace.h): what import writes, simulate must read and be able to run */
    if (j->gpus > DS_MAX_JOB_GPUS || j->gpus / o->gpus_per_node > DS_MAX_JOB_NODES) {
        ds_error_set(err, path, j->line, cols->gpus, "%d GPUs: the simulator takes at most %d GPUs in one job and %d "
                     "whole nodes (of %d GPUs, --gpus-per-node)", j->gpus, DS_MAX_JOB_GPUS, DS_MAX_JOB_NODES,
                     o->gpus_per_node);
        return DS_EPARSE;
    }
    if (j->cpus > DS_MAX_JOB_CPUS) {
        ds_error_set(err, path, j->line, cols->cpus, "%d CPUs: the simulator takes at most %d in one job", j->cpus,
                     DS_MAX_JOB_CPUS);
        return DS_EPARSE;
    }
    if (j->duration > DS_MAX_DURATION) {
        ds_error_set(err, path, j->line, cols->duration, "ran %lld s (%.1f days): the simulator takes at most %lld s "
                     "(%lld days) for one job", (long long)j->duration, (double)j->duration / DAY,
                     (long long)DS_MAX_DURATION, (long long)(DS_MAX_DURATION / DAY));
        return DS_EPARSE;
    }
    if (im->njobs >= DS_MAX_JOBS) {
        ds_error_set(err, path, j->line, NULL, "more than %d jobs to import: the simulator reads at most that many; "
                     "choose a window (--from/--to, --busiest-days)", DS_MAX_JOBS);
        return DS_EINVAL;
    }
    *ds_import_add(im) = *j;
    im->typed_jobs += j->gmask != 0;
    return 1;
}

int ds_imp_count_row(ds_import_t *im, const char *path, long row, ds_error_t *err)
{
    if (im->rows >= DS_IMP_MAX_ROWS) {
        ds_error_set(err, path, row, NULL, "more than %d rows: split the input", DS_IMP_MAX_ROWS);
        return DS_EINVAL;
    }
    im->rows++;
    return DS_OK;
}

/* A blank for each control character (the written rows are single CSV lines) into dst; 1 when one was found. */
static int blank_controls(const char *s, char *dst, size_t n)
{
    int found = 0;
    size_t k = 0;
    for (; *s && k + 1 < n; s++, k++) {
        int ctl = (unsigned char)*s < 0x20 || *s == 0x7f;
        found |= ctl;
        dst[k] = ctl ? ' ' : *s;
    }
    dst[k] = '\0';
    return found;
}

int ds_imp_name(ds_strtab_t *tab, const char *name, const char *path, long line, const char *col, int32_t *out,
                ds_error_t *err)
{
    if (strlen(name) > DS_IMP_MAX_NAME) {
        ds_error_set(err, path, line, col, "'%.20s...' is longer than %d bytes", name, DS_IMP_MAX_NAME);
        return DS_EPARSE;
    }
    char buf[DS_IMP_MAX_NAME + 1];
    blank_controls(name, buf, sizeof buf);
    *out = ds_strtab_intern(tab, buf);
    return DS_OK;
}

int ds_imp_tenant_name(const char *name, char *buf, size_t size, const char *path, long line, const char *col,
                       ds_error_t *err)
{
    /* simulate's reader trims blanks around a field, so "vcA " is the tenant "vcA" there: here too */
    while (*name == ' ' || *name == '\t') name++;
    size_t n = strlen(name);
    while (n > 0 && (name[n - 1] == ' ' || name[n - 1] == '\t')) n--;
    if (n == 0) {
        ds_error_set(err, path, line, col, "empty tenant name");
        return DS_EPARSE;
    }
    if (n >= size) {
        ds_error_set(err, path, line, col, "tenant name '%.20s...' is longer than %zu characters", name, size - 1);
        return DS_EPARSE;
    }
    memcpy(buf, name, n);
    buf[n] = '\0';
    /* a tenant is an account in logs and on terminals: no control characters (blanks would silently merge two) */
    for (size_t k = 0; k < n; k++)
        if ((unsigned char)buf[k] < 0x20 || buf[k] == 0x7f) {
            ds_error_set(err, path, line, col, "tenant name '%.*s...' holds a control character (byte %zu, 0x%02X)",
                         (int)k, buf, k + 1, (unsigned char)buf[k]);
            return DS_EPARSE;
        }
    return DS_OK;
}

int ds_imp_tenant(ds_import_t *im, ds_imp_job_t *j, const char *name, const char *path, long line, const char *col,
                  ds_error_t *err)
{
    char buf[sizeof(((ds_tenant_t *)0)->name)];
    int rc = ds_imp_tenant_name(name, buf, sizeof buf, path, line, col, err);
    if (rc) return rc;
    j->tenant = ds_strtab_intern(&im->tenants, buf);
    return DS_OK;
}

static int cmp_job(const void *a, const void *b)
{
    const ds_imp_job_t *x = a, *y = b;
    if (x->submit != y->submit) return x->submit < y->submit ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

/* Keeps jobs submitted in [from, to), in order. */
static void keep_window(ds_import_t *im, int64_t from, int64_t to)
{
    int32_t n = 0;
    for (int32_t i = 0; i < im->njobs; i++) {
        if (im->jobs[i].submit >= from && im->jobs[i].submit < to) im->jobs[n++] = im->jobs[i];
        else im->dropped[DS_DROP_WINDOW]++;
    }
    im->njobs = n;
}

/* The N consecutive days (from the first submission's midnight) with the most GPU-time submitted; the
 * earliest such run wins ties. Sets [*from, *to). Jobs are sorted by submit: the best run can be taken to end
 * on a day with a submission (moving it earlier loses nothing), so one pass over the jobs with a trailing edge
 * finds it, whatever the span (no array per day). GPU-seconds of a job (< 2^42) add up exactly in a double. */
static void busiest(const ds_import_t *im, int ndays, int64_t *from, int64_t *to)
{
    int64_t day0 = floor_div(im->jobs[0].submit, DAY);
    int64_t best = day0;
    double best_sum = -1, sum = 0;
    int32_t lo = 0;
    for (int32_t i = 0; i < im->njobs;) {
        int64_t day = floor_div(im->jobs[i].submit, DAY);
        for (; i < im->njobs && floor_div(im->jobs[i].submit, DAY) == day; i++)
            sum += (double)im->jobs[i].gpus * (double)im->jobs[i].duration;
        int64_t start = DS_MAX(day0, day - ndays + 1);
        for (; floor_div(im->jobs[lo].submit, DAY) < start; lo++)
            sum -= (double)im->jobs[lo].gpus * (double)im->jobs[lo].duration;
        if (sum > best_sum) best_sum = sum, best = start;
    }
    *from = best * DAY;
    *to = *from + (int64_t)ndays * DAY;
}

int ds_import_finish(ds_import_t *im, const ds_import_opts_t *o, ds_error_t *err)
{
    if (im->njobs > 1) qsort(im->jobs, (size_t)im->njobs, sizeof *im->jobs, cmp_job);
    int64_t from = o->has_from ? o->from : INT64_MIN, to = o->has_to ? o->to : INT64_MAX;
    keep_window(im, from, to);
    if (im->njobs > 0 && o->busiest_days > 0) {
        busiest(im, o->busiest_days, &from, &to);
        keep_window(im, from, to);
    }
    if (im->njobs == 0) {
        ds_error_set(err, NULL, 0, NULL, "no job is left to import (%lld rows read)", (long long)im->rows);
        return DS_EINVAL;
    }
    /* simulate reads submit times spanning at most DS_MAX_SPAN: name the first job beyond it */
    for (int32_t i = 0; i < im->njobs; i++)
        if (im->jobs[i].submit - im->jobs[0].submit > DS_MAX_SPAN) {
            char a[64], b[64];
            ds_imp_format_time(im, im->jobs[0].submit, a, sizeof a);
            ds_imp_format_time(im, im->jobs[i].submit, b, sizeof b);
            ds_error_set(err, im->src, im->jobs[i].line, NULL,
                         "submitted at %s, more than %lld days after the first job (%s): the simulator takes at most "
                         "%lld days; choose a window with --from/--to or --busiest-days",
                         b, (long long)(DS_MAX_SPAN / DAY), a, (long long)(DS_MAX_SPAN / DAY));
            return DS_EINVAL;
        }
    im->win_from = from != INT64_MIN ? from : im->jobs[0].submit;
    im->win_to = to != INT64_MAX ? to : im->jobs[im->njobs - 1].submit + 1;
    im->origin = floor_div(im->win_from, DAY) * DAY;
    return DS_OK;
}

static void largest_jobs(const ds_import_t *im, int32_t *maxg, double *gsec)
{
    for (int32_t i = 0; i < im->njobs; i++) {
        const ds_imp_job_t *j = &im->jobs[i];
        if (j->gpus > maxg[j->tenant]) maxg[j->tenant] = j->gpus;
        gsec[j->tenant] += (double)j->gpus * (double)j->duration;
    }
}

/* GPU-time-weighted mean run time of the jobs: the time over which most of the submitted work runs. */
static int64_t mean_run(const ds_import_t *im)
{
    double gs = 0, gt = 0;
    for (int32_t i = 0; i < im->njobs; i++) {
        double w = (double)im->jobs[i].gpus * (double)im->jobs[i].duration;
        gs += w;
        gt += w * (double)im->jobs[i].duration;
    }
    return gs > 0 ? (int64_t)(gt / gs) : 0;
}

int ds_import_quotas(ds_import_t *im, const ds_import_opts_t *o, ds_error_t *err)
{
    int32_t n = im->tenants.n, gpn = o->gpus_per_node;
    int32_t *maxg = ds_xcalloc((size_t)n, sizeof *maxg);
    double *gsec = ds_xcalloc((size_t)n, sizeof *gsec);
    largest_jobs(im, maxg, gsec);
    if (im->nquota < n) { /* tenants no sizes file named start at 0 */
        im->quota = ds_xrealloc(im->quota, (size_t)n * sizeof *im->quota);
        memset(im->quota + im->nquota, 0, (size_t)(n - im->nquota) * sizeof *im->quota);
        im->nquota = n;
    }
    free(im->active);
    im->active = ds_xcalloc((size_t)n, 1);
    /* A window shorter than the jobs' runs (a burst of submissions, a one-second window) would turn their
     * GPU-time into absurd rates: the work is spread over the jobs' mean run time instead, and the CLI warns. */
    im->mean_run = mean_run(im);
    double window = (double)DS_MAX(DS_MAX(im->win_to - im->win_from, im->mean_run), 1);
    for (int32_t t = 0; t < n; t++) {
        if (maxg[t] == 0) {
            /* no jobs: written only when a sizes file gives it GPUs (they are part of the cluster) */
            im->active[t] = im->quota_from_file && im->quota[t] > 0;
            continue;
        }
        im->active[t] = 1;
        int64_t fit = ((int64_t)maxg[t] + gpn - 1) / gpn; /* the largest job in whole nodes */
        if (im->quota_from_file) {
            if (im->quota[t] < maxg[t]) {
                im->quota[t] = (int32_t)(fit * gpn);
                im->quota_raised++;
            }
            continue;
        }
        /* GPUs that would run this tenant's demand at the target load over the window, in whole nodes */
        double share = gsec[t] / (o->load * window);
        int64_t nodes = (int64_t)llround(DS_MIN(share / gpn, 1e15));
        if (nodes < fit) nodes = fit;
        if (nodes < 1) nodes = 1;
        im->quota[t] = (int32_t)DS_MIN(nodes * gpn, INT32_MAX); /* bounded below, with the tenant named */
    }
    free(maxg);
    free(gsec);
    if (im->ngt) ds_import_type_quotas(im);
    /* simulate's tenant limits, named at the first job of the tenant beyond them */
    int32_t count = 0;
    for (int32_t t = 0; t < n; t++) count += im->active[t];
    uint8_t *seen = ds_xcalloc((size_t)n, 1);
    int32_t k = 0;
    int rc = DS_OK;
    for (int32_t i = 0; i < im->njobs && rc == DS_OK; i++) {
        int32_t t = im->jobs[i].tenant;
        if (seen[t]) continue;
        seen[t] = 1;
        if (++k > DS_MAX_TENANTS)
            ds_error_set(err, im->src, im->jobs[i].line, NULL, "tenant '%s' is the %dth with jobs: the simulator takes at "
                         "most %d tenants (fewer with --tenant-by, or a shorter window)", im->tenants.s[t], k,
                         DS_MAX_TENANTS), rc = DS_EINVAL;
        else if (im->quota[t] > DS_MAX_QUOTA_GPUS)
            ds_error_set(err, im->src, im->jobs[i].line, NULL, "tenant '%s' (first job here) would get a quota of %d "
                         "GPUs, more than the simulator's %d", im->tenants.s[t], im->quota[t], DS_MAX_QUOTA_GPUS),
                rc = DS_EINVAL;
    }
    free(seen);
    if (rc == DS_OK && count > DS_MAX_TENANTS) { /* tenants of the sizes file without jobs make up the rest */
        ds_error_set(err, NULL, 0, NULL, "%d tenants with jobs or GPUs: the simulator takes at most %d", count,
                     DS_MAX_TENANTS);
        rc = DS_EINVAL;
    }
    return rc;
}

int ds_import_window_short(const ds_import_t *im)
{
    return im->win_to - im->win_from < im->mean_run;
}

double ds_import_gpu_seconds(const ds_import_t *im)
{
    double s = 0;
    for (int32_t i = 0; i < im->njobs; i++) s += (double)im->jobs[i].gpus * (double)im->jobs[i].duration;
    return s;
}

int64_t ds_import_total_quota(const ds_import_t *im)
{
    int64_t s = 0;
    for (int32_t t = 0; im->quota && t < im->tenants.n; t++)
        if (im->active[t]) s += im->quota[t];
    return s;
}

double ds_import_offered_load(const ds_import_t *im)
{
    int64_t q = ds_import_total_quota(im);
    double window = (double)DS_MAX(DS_MAX(im->win_to - im->win_from, im->mean_run), 1); /* as the quotas' */
    return q > 0 ? ds_import_gpu_seconds(im) / ((double)q * window) : 0.0;
}
