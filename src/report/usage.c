/* usage.c: the usage report (deepshare/usage.h) computed from jobs and per-cycle tenant samples over a window,
 * and its table, CSV, JSON and plot. Where the source does not say (a journal has no classes, queueing or
 * QAD), a column is NAN and printed as '-' (JSON null), never guessed. */
#include "deepshare/usage.h"
#include "deepshare/csv.h"
#include "deepshare/datetime.h"
#include "deepshare/sim.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct acc {
    double *queue;          /* queueing delays of the row's jobs finished in the window */
    int64_t nq, capq;
    int64_t dem, ok;        /* cycles with demand, of them with smoothed QAD >= theta */
    int have_samples, have_pre;
} acc_t;

static void push_q(acc_t *a, double v)
{
    if (a->nq == a->capq) {
        a->capq = a->capq ? a->capq * 2 : 64;
        a->queue = ds_xrealloc(a->queue, (size_t)a->capq * sizeof *a->queue);
    }
    a->queue[a->nq++] = v;
}

static double overlap(int64_t a0, int64_t a1, int64_t b0, int64_t b1)
{
    int64_t lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
    return hi > lo ? (double)(hi - lo) : 0.0;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(((const ds_usage_row_t *)a)->name, ((const ds_usage_row_t *)b)->name);
}

void ds_usage_compute(const ds_usage_data_t *d, int64_t from, int64_t to, int by_user, double theta, ds_usage_report_t *r)
{
    memset(r, 0, sizeof *r);
    r->from = from, r->to = to, r->by_user = by_user, r->theta = theta;
    const ds_strtab_t *names = by_user ? &d->users : &d->tenants;
    int32_t n = names->n, tot = n;
    r->nrows = n + 1;
    r->rows = ds_xcalloc((size_t)r->nrows, sizeof *r->rows);
    acc_t *a = ds_xcalloc((size_t)r->nrows, sizeof *a);
    int samples = !by_user && d->nsamples > 0;
    for (int32_t i = 0; i <= n; i++) {
        ds_usage_row_t *x = &r->rows[i];
        snprintf(x->name, sizeof x->name, "%s", i < n ? names->s[i] : "all");
        double nan = samples ? 0.0 : NAN;
        x->g_h = x->be_h = x->quota_h = x->borrowed_h = x->lent_h = x->under_h = nan;
    }
    /* jobs: GPU-hours of the run [end - run, end] inside the window; counts by end time (as sreport) */
    int know_queue = 0, know_pre = 0;
    for (int64_t k = 0; k < d->njobs; k++) {
        const ds_usage_job_t *j = &d->jobs[k];
        int32_t i = by_user ? j->user : j->tenant;
        double gh = (double)j->gpus * overlap(j->end - j->run, j->end, from, to) / 3600.0;
        if (!samples) r->rows[i].gpu_h += gh, r->rows[tot].gpu_h += gh;
        if (j->end < from || j->end >= to) continue;
        r->rows[i].jobs++, r->rows[tot].jobs++;
        if (j->preemptions >= 0) {
            know_pre = 1;
            r->rows[i].preemptions += j->preemptions, r->rows[tot].preemptions += j->preemptions;
        }
        if (j->queue >= 0) {
            know_queue = 1;
            push_q(&a[i], (double)j->queue);
            push_q(&a[tot], (double)j->queue);
        }
    }
    /* samples: one per tenant and cycle; each cycle's borrowing is lent pro rata by the idle quota */
    double h = (double)d->step / 3600.0;
    for (int64_t k = 0; samples && k < d->nsamples;) {
        int64_t t = d->samples[k].time, e = k;
        double borrowed = 0, idle = 0;
        while (e < d->nsamples && d->samples[e].time == t) {
            const ds_usage_sample_t *s = &d->samples[e++];
            int64_t held = (int64_t)s->g + s->be;
            borrowed += held > s->quota ? (double)(held - s->quota) : 0;
            idle += held < s->quota ? (double)(s->quota - held) : 0;
        }
        if (t >= from && t < to) {
            double share = idle > 0 ? fmin(1.0, borrowed / idle) : 0;
            for (int64_t q = k; q < e; q++) {
                const ds_usage_sample_t *s = &d->samples[q];
                int64_t held = (int64_t)s->g + s->be;
                double v[6] = {(double)s->g * h, (double)s->be * h, (double)s->quota * h,
                               held > s->quota ? (double)(held - s->quota) * h : 0,
                               held < s->quota ? (double)(s->quota - held) * share * h : 0, 0};
                int demand = held + s->pending > 0;
                if (demand && s->smoothed < theta) v[5] = h;
                for (int w = 0; w < 2; w++) {
                    ds_usage_row_t *x = &r->rows[w ? tot : s->tenant];
                    x->g_h += v[0], x->be_h += v[1], x->quota_h += v[2], x->borrowed_h += v[3], x->lent_h += v[4];
                    x->under_h += v[5];
                    x->gpu_h += v[0] + v[1];
                    a[w ? tot : s->tenant].dem += demand;
                    a[w ? tot : s->tenant].ok += demand && s->smoothed >= theta;
                }
            }
        }
        k = e;
    }
    /* a journal with a tenants file: quota x the window, per tenant the file names (a tenant it does not
     * name stays unknown, and then so does the total) */
    if (!samples && !by_user && d->quota) {
        double hours = (double)(to - from) / 3600.0, sum = 0;
        for (int32_t i = 0; i < n; i++) {
            int32_t q = i < d->tenants.n ? d->quota[i] : -1;
            r->rows[i].quota_h = q >= 0 ? (double)q * hours : NAN;
            sum += r->rows[i].quota_h;
        }
        r->rows[tot].quota_h = sum;
    }
    for (int32_t i = 0; i <= n; i++) {
        ds_usage_row_t *x = &r->rows[i];
        x->compliance = samples ? (a[i].dem ? (double)a[i].ok / (double)a[i].dem : 1.0) : NAN;
        if (!know_pre) x->preemptions = NAN;
        /* deepshared's counter in Prometheus (--metrics): every preemption in the window, not only those of
         * the jobs that finished in it */
        if (d->preempted && !by_user) {
            double sum = 0;
            for (int32_t t = 0; t < n; t++) sum += t < d->npreempted ? d->preempted[t] : 0;
            x->preemptions = i == tot ? sum : i < d->npreempted ? d->preempted[i] : 0;
        }
        if (know_queue && a[i].nq) {
            ds_dist_t dd = ds_dist_of(a[i].queue, a[i].nq);
            x->q_p50 = dd.p50, x->q_p95 = dd.p95, x->q_p99 = dd.p99;
        } else {
            x->q_p50 = x->q_p95 = x->q_p99 = NAN;
        }
        free(a[i].queue);
    }
    free(a);
    qsort(r->rows, (size_t)n, sizeof *r->rows, cmp_name);
}

void ds_usage_report_free(ds_usage_report_t *r)
{
    free(r->rows);
    memset(r, 0, sizeof *r);
}

/* ---- output ---- */

static const struct {
    const char *key, *head;
    int prec;
} cols[] = {
    {"jobs", "jobs", 0},          {"gpu_hours", "GPU-h", 1},        {"g_gpu_hours", "G GPU-h", 1},
    {"be_gpu_hours", "BE GPU-h", 1}, {"quota_gpu_hours", "quota GPU-h", 1}, {"borrowed_gpu_hours", "borrowed", 1},
    {"lent_gpu_hours", "lent", 1}, {"under_served_hours", "under-served h", 1}, {"qad_compliance", "QAD compl.", 3},
    {"preemptions", "preempt.", 0}, {"queue_p50_s", "queue p50 s", 0}, {"queue_p95_s", "p95 s", 0},
    {"queue_p99_s", "p99 s", 0},
};
enum { NCOLS = sizeof cols / sizeof cols[0] };

static double col_val(const ds_usage_row_t *x, int c)
{
    const double v[NCOLS] = {(double)x->jobs, x->gpu_h, x->g_h, x->be_h, x->quota_h, x->borrowed_h, x->lent_h,
                             x->under_h, x->compliance, x->preemptions, x->q_p50, x->q_p95, x->q_p99};
    return v[c];
}

static void fmt(char *buf, size_t n, double v, int prec)
{
    if (isnan(v)) snprintf(buf, n, "-");
    else snprintf(buf, n, "%.*f", prec, v);
}

void ds_usage_print_table(FILE *f, const ds_usage_report_t *r, const char *source)
{
    char a[32], b[32];
    ds_datetime_format(r->from, a, sizeof a);
    ds_datetime_format(r->to, b, sizeof b);
    fprintf(f, "usage by %s from %s to %s UTC (%.1f h), from a %s; '-': the source does not say\n",
            r->by_user ? "user" : "tenant", a, b, (double)(r->to - r->from) / 3600.0, source);
    int w0 = 6;
    for (int32_t i = 0; i < r->nrows; i++) w0 = DS_MAX(w0, (int)strlen(r->rows[i].name));
    fprintf(f, "%-*s", w0, r->by_user ? "user" : "tenant");
    for (int c = 0; c < NCOLS; c++) fprintf(f, "  %*s", (int)DS_MAX(8, strlen(cols[c].head)), cols[c].head);
    fputc('\n', f);
    for (int32_t i = 0; i < r->nrows; i++) {
        fprintf(f, "%-*s", w0, r->rows[i].name);
        for (int c = 0; c < NCOLS; c++) {
            fmt(a, sizeof a, col_val(&r->rows[i], c), cols[c].prec);
            fprintf(f, "  %*s", (int)DS_MAX(8, strlen(cols[c].head)), a);
        }
        fputc('\n', f);
    }
}

void ds_usage_print_csv(FILE *f, const ds_usage_report_t *r)
{
    fprintf(f, "%s", r->by_user ? "user" : "tenant");
    for (int c = 0; c < NCOLS; c++) fprintf(f, ",%s", cols[c].key);
    fputc('\n', f);
    char v[32];
    for (int32_t i = 0; i < r->nrows; i++) {
        ds_csv_put(f, r->rows[i].name);
        for (int c = 0; c < NCOLS; c++) {
            double x = col_val(&r->rows[i], c);
            if (isnan(x)) v[0] = '\0';
            else snprintf(v, sizeof v, "%.*f", cols[c].prec ? cols[c].prec + 2 : 0, x);
            fprintf(f, ",%s", v);
        }
        fputc('\n', f);
    }
}

int ds_usage_print_json(FILE *f, const ds_usage_report_t *r, const char *source)
{
    json_t *o = json_object(), *rows = json_array();
    char a[32];
    ds_datetime_format(r->from, a, sizeof a);
    json_object_set_new(o, "source", json_string(source));
    json_object_set_new(o, "by", json_string(r->by_user ? "user" : "tenant"));
    json_object_set_new(o, "from", json_integer(r->from));
    json_object_set_new(o, "to", json_integer(r->to));
    json_object_set_new(o, "from_utc", json_string(a));
    ds_datetime_format(r->to, a, sizeof a);
    json_object_set_new(o, "to_utc", json_string(a));
    json_object_set_new(o, "theta", json_real(r->theta));
    for (int32_t i = 0; i < r->nrows; i++) {
        json_t *x = json_object();
        json_object_set_new(x, "name", json_string(r->rows[i].name));
        for (int c = 0; c < NCOLS; c++) {
            double v = col_val(&r->rows[i], c);
            json_object_set_new(x, cols[c].key, isnan(v) ? json_null() : cols[c].prec ? json_real(v) : json_integer((json_int_t)v));
        }
        json_array_append_new(rows, x);
    }
    json_object_set_new(o, "rows", rows);
    int rc = json_dumpf(o, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', f);
    json_decref(o);
    return rc ? DS_EIO : DS_OK;
}

int ds_usage_write_plot(const char *dir, const ds_usage_report_t *r, ds_error_t *err)
{
    if (mkdir(dir, 0777) && errno != EEXIST) {
        ds_error_set(err, dir, 0, NULL, "cannot create directory: %s", strerror(errno));
        return DS_EIO;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/usage.dat", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        ds_error_set(err, path, 0, NULL, "cannot write: %s", strerror(errno));
        return DS_EIO;
    }
    fprintf(f, "# name g_gpu_hours be_gpu_hours borrowed lent quota gpu_hours (NaN: the source does not say)\n");
    for (int32_t i = 0; i + 1 < r->nrows; i++) {
        const ds_usage_row_t *x = &r->rows[i];
        fputc('"', f);
        for (const char *p = x->name; *p; p++) fputc(*p == '"' || *p == '\n' ? '_' : *p, f);
        fprintf(f, "\" %.3f %.3f %.3f %.3f %.3f %.3f\n", x->g_h, x->be_h, x->borrowed_h, x->lent_h, x->quota_h, x->gpu_h);
    }
    int bad = ferror(f);
    if (fclose(f) || bad) {
        ds_error_set(err, path, 0, NULL, "write failed");
        return DS_EIO;
    }
    snprintf(path, sizeof path, "%s/plots.gp", dir);
    if (!(f = fopen(path, "w"))) {
        ds_error_set(err, path, 0, NULL, "cannot write: %s", strerror(errno));
        return DS_EIO;
    }
    int classes = r->nrows > 1 && !isnan(r->rows[0].g_h);
    char a[32], b[32];
    ds_datetime_format(r->from, a, sizeof a);
    ds_datetime_format(r->to, b, sizeof b);
    fprintf(f, "# plots.gp: written by 'deepshare usage --plot'; 'gnuplot plots.gp' in this folder redraws usage.png\n"
               "set terminal pngcairo size 1100,520 noenhanced font 'sans,10'\nset output 'usage.png'\n"
               "set title 'GPU-hours by %s, %s to %s UTC'\nset style data histograms\n"
               "set style histogram rowstacked\nset style fill solid 0.8 border -1\nset boxwidth 0.75\n"
               "set xtics rotate by -45 scale 0\nset ylabel 'GPU-hours'\nset key top right\nset grid ytics\n",
            r->by_user ? "user" : "tenant", a, b);
    if (classes)
        fprintf(f, "plot 'usage.dat' using 2:xtic(1) title 'guaranteed (G)' lc rgb '#3a6fb0', '' using 3 title 'best effort "
                   "(BE)' lc rgb '#e39b3b', '' using 0:6 with points pt 7 ps 1.2 lc rgb 'black' title 'quota', '' using 0:5 "
                   "with points pt 2 ps 1.2 lc rgb '#2a9d4a' title 'lent to others'\n");
    else
        fprintf(f, "plot 'usage.dat' using 7:xtic(1) title 'GPU-hours held' lc rgb '#3a6fb0'\n");
    bad = ferror(f);
    if (fclose(f) || bad) {
        ds_error_set(err, path, 0, NULL, "write failed");
        return DS_EIO;
    }
    return DS_OK;
}
