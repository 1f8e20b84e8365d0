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
                                             "shorter than --min-duration", "outside the time window"};
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

int ds_imp_keep(ds_import_t *im, const ds_import_opts_t *o, const ds_imp_job_t *j)
{
    int why = -1;
    if (j->gpus <= 0) why = DS_DROP_CPU_ONLY;
    else if (!(o->states & (1u << j->state))) why = DS_DROP_STATE;
    else if (j->duration < o->min_duration) why = DS_DROP_SHORT;
    if (why >= 0) {
        im->dropped[why]++;
        return 0;
    }
    *ds_import_add(im) = *j;
    return 1;
}

int ds_imp_tenant(ds_import_t *im, ds_imp_job_t *j, const char *name, const char *path, long line, const char *col,
                  ds_error_t *err)
{
    if (!*name) {
        ds_error_set(err, path, line, col, "empty tenant name");
        return DS_EPARSE;
    }
    if (strlen(name) >= sizeof(((ds_tenant_t *)0)->name)) {
        ds_error_set(err, path, line, col, "tenant name '%.20s...' is longer than %zu characters", name,
                     sizeof(((ds_tenant_t *)0)->name) - 1);
        return DS_EPARSE;
    }
    j->tenant = ds_strtab_intern(&im->tenants, name);
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
 * earliest such run wins ties. Sets [*from, *to). */
static void busiest(const ds_import_t *im, int ndays, int64_t *from, int64_t *to)
{
    int64_t day0 = floor_div(im->jobs[0].submit, DAY) * DAY;
    int64_t span = floor_div(im->jobs[im->njobs - 1].submit - day0, DAY) + 1;
    double *gs = ds_xcalloc((size_t)span, sizeof *gs);
    for (int32_t i = 0; i < im->njobs; i++)
        gs[(im->jobs[i].submit - day0) / DAY] += (double)im->jobs[i].gpus * (double)im->jobs[i].duration;
    int64_t best = 0;
    double best_sum = -1, sum = 0;
    for (int64_t d = 0; d < span; d++) {
        sum += gs[d];
        if (d >= ndays) sum -= gs[d - ndays];
        int64_t start = d - ndays + 1 < 0 ? 0 : d - ndays + 1;
        if (d >= ndays - 1 || d == span - 1) {
            if (sum > best_sum) best_sum = sum, best = start;
        }
    }
    free(gs);
    *from = day0 + best * DAY;
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

void ds_import_quotas(ds_import_t *im, const ds_import_opts_t *o)
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
    double window = (double)DS_MAX(im->win_to - im->win_from, 1);
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
        int64_t nodes = (int64_t)llround(share / gpn);
        if (nodes < fit) nodes = fit;
        if (nodes < 1) nodes = 1;
        im->quota[t] = (int32_t)DS_MIN(nodes * gpn, 100000000);
    }
    free(maxg);
    free(gsec);
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
    double window = (double)DS_MAX(im->win_to - im->win_from, 1);
    return q > 0 ? ds_import_gpu_seconds(im) / ((double)q * window) : 0.0;
}
