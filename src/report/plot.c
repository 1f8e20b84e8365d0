/* plot.c: plot data and the gnuplot script of the compare report, and running gnuplot as a child. */
#include "deepshare/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* More points than the plot has pixels only make the SVGs heavy. */
#define MAX_POINTS 2000
#define PLOT_SIZE "1000,600"
#define SWEEP_SIZE "1100,850"

void ds_sweep_point_fill(ds_sweep_point_t *p, const ds_trace_t *t, const ds_sim_result_t *r)
{
    p->ok = 1;
    p->sm_util = r->sm_util;
    p->gpu_alloc = r->gpu_alloc;
    p->avg_queue = r->queue.avg;
    p->avg_jct = r->jct.avg;
    p->qad_compliance = r->qad_compliance;
    double sum = 0;
    int64_t n = 0;
    for (int32_t j = 0; j < t->njobs; j++) {
        if (!r->colocated[j] || t->jobs[j].duration <= 0) continue;
        /* time not spent pending, over the exclusive run time: colocation slowdown plus restart overheads */
        double run = (double)(r->end[j] - t->jobs[j].submit - r->queued[j]);
        sum += run / (double)t->jobs[j].duration;
        n++;
    }
    p->colocated_jobs = n;
    p->coloc_slowdown = n ? sum / (double)n : NAN;
}

int ds_sweep_csv(FILE *f, const ds_sweep_point_t *p, int n)
{
    fprintf(f, "param,value,ok,sm_util,gpu_alloc,coloc_slowdown,colocated_jobs,avg_queue,avg_jct,qad_compliance,note\n");
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s,%g,%d,", p[i].param, p[i].value, p[i].ok);
        if (!p[i].ok) {
            fprintf(f, ",,,,,,,%s\n", p[i].note);
            continue;
        }
        fprintf(f, "%.6f,%.6f,", p[i].sm_util, p[i].gpu_alloc);
        if (isnan(p[i].coloc_slowdown)) fprintf(f, ",");
        else fprintf(f, "%.6f,", p[i].coloc_slowdown);
        fprintf(f, "%lld,%.3f,%.3f,%.6f,%s\n", (long long)p[i].colocated_jobs, p[i].avg_queue, p[i].avg_jct,
                p[i].qad_compliance, p[i].note);
    }
    return ferror(f) ? DS_EIO : DS_OK;
}

static void list_add(ds_plot_list_t *l, const char *name, const char *title)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 16;
        l->v = ds_xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
    }
    snprintf(l->v[l->n].name, sizeof l->v[l->n].name, "%s", name);
    snprintf(l->v[l->n].title, sizeof l->v[l->n].title, "%s", title);
    l->n++;
}

void ds_plot_list_free(ds_plot_list_t *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* A gnuplot single-quoted string: only the quote itself needs doubling. */
static void gp_str(FILE *f, const char *s)
{
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '\'') fputc('\'', f);
        if (*s != '\n') fputc(*s, f);
    }
    fputc('\'', f);
}

static FILE *open_data(const char *dir, const char *name, ds_error_t *err)
{
    char path[1200];
    snprintf(path, sizeof path, "%s/data/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) ds_error_set(err, path, 0, NULL, "cannot write: %s", strerror(errno));
    return f;
}

static int close_data(FILE *f, const char *dir, const char *name, ds_error_t *err)
{
    int bad = ferror(f);
    if (fclose(f) || bad) {
        char path[1200];
        snprintf(path, sizeof path, "%s/data/%s", dir, name);
        ds_error_set(err, path, 0, NULL, "write failed");
        return DS_EIO;
    }
    return DS_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantiles of queueing delay and JCT at up to MAX_POINTS evenly spaced ranks plus the last few, so the
 * tail the scheduler is judged by is drawn exactly. */
static int write_cdf(const char *dir, int idx, const ds_trace_t *t, const ds_sim_result_t *r, ds_error_t *err)
{
    char name[64];
    snprintf(name, sizeof name, "cdf_%d.dat", idx);
    FILE *f = open_data(dir, name, err);
    if (!f) return DS_EIO;
    /* the result's own jobs: a scored live run may hold fewer than the trace (jobs that never completed) */
    (void)t;
    int64_t n = r->jobs;
    double *q = ds_xcalloc((size_t)n + 1, sizeof *q), *c = ds_xcalloc((size_t)n + 1, sizeof *c);
    for (int64_t j = 0; j < n; j++) {
        q[j] = (double)r->queued[j];
        c[j] = (double)(r->end[j] - r->submit[j]);
    }
    qsort(q, (size_t)n, sizeof *q, cmp_double);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    fprintf(f, "# fraction_of_jobs queueing_delay_s jct_s (%s)\n", r->policy);
    int64_t step = n > MAX_POINTS ? n / MAX_POINTS : 1;
    for (int64_t j = 0; j < n; j++) {
        if (j % step && j < n - 50) continue;
        fprintf(f, "%.6f %.0f %.0f\n", (double)(j + 1) / (double)n, q[j], c[j]);
    }
    free(q);
    free(c);
    return close_data(f, dir, name, err);
}

/* Time series averaged over equal bins of samples (cumulative counters: the value at the bin's end). */
static int write_series(const char *dir, int idx, const ds_sim_result_t *r, ds_error_t *err)
{
    char name[64];
    snprintf(name, sizeof name, "series_%d.dat", idx);
    FILE *f = open_data(dir, name, err);
    if (!f) return DS_EIO;
    fprintf(f, "# days_since_window_start gpu_alloc_pct sm_util_pct idle_gpus preemptions colocations (%s)\n",
            r->policy);
    int64_t n = r->nseries, bins = n < MAX_POINTS ? n : MAX_POINTS;
    double total = r->total_gpus > 0 ? (double)r->total_gpus : 1;
    for (int64_t b = 0; b < bins; b++) {
        int64_t lo = b * n / bins, hi = (b + 1) * n / bins;
        double busy = 0, sm = 0, idle = 0;
        for (int64_t k = lo; k < hi; k++) {
            busy += r->series[k].busy_gpus;
            sm += r->series[k].sm_util;
            idle += r->series[k].idle_gpus;
        }
        double m = (double)(hi - lo);
        const ds_sample_t *last = &r->series[hi - 1];
        fprintf(f, "%.5f %.3f %.3f %.2f %lld %lld\n", (double)(r->series[lo].time - r->window_start) / 86400.0,
                100.0 * busy / m / total, 100.0 * sm / m, idle / m, (long long)last->preemptions,
                (long long)last->colocations);
    }
    return close_data(f, dir, name, err);
}

static int write_qad(const char *dir, int idx, const ds_sim_result_t *r, ds_error_t *err)
{
    char name[64];
    snprintf(name, sizeof name, "qad_%d.dat", idx);
    FILE *f = open_data(dir, name, err);
    if (!f) return DS_EIO;
    fprintf(f, "# days_since_window_start then each tenant's lowest smoothed QAD in the bin (%s):", r->policy);
    for (int32_t i = 0; i < r->ntenants; i++) fprintf(f, " %s", r->tenants[i].name);
    fputc('\n', f);
    int64_t n = r->nseries, bins = n < MAX_POINTS ? n : MAX_POINTS;
    int32_t nt = r->ntenants;
    for (int64_t b = 0; b < bins; b++) {
        int64_t lo = b * n / bins, hi = (b + 1) * n / bins;
        fprintf(f, "%.5f", (double)(r->series[lo].time - r->window_start) / 86400.0);
        /* the lowest value of a bin: averaging would hide exactly the dips below theta that matter */
        for (int32_t i = 0; i < nt; i++) {
            double m = 1e300;
            for (int64_t k = lo; k < hi; k++)
                if (r->qad_smooth[k * nt + i] < m) m = r->qad_smooth[k * nt + i];
            fprintf(f, " %.4f", m);
        }
        fputc('\n', f);
    }
    return close_data(f, dir, name, err);
}

static const char *const sweep_params[] = {"rho-min", "alpha", "m"};

static int write_sweep(const char *dir, const ds_plot_input_t *in, int which, int *valid, ds_error_t *err)
{
    char name[64];
    snprintf(name, sizeof name, "sweep_%s.dat", sweep_params[which]);
    FILE *f = open_data(dir, name, err);
    if (!f) return DS_EIO;
    fprintf(f, "# %s sm_util_pct gpu_alloc_pct coloc_slowdown avg_queue_s qad_compliance_pct ('?': no colocated job)\n",
            sweep_params[which]);
    valid[0] = valid[1] = 0;
    for (int i = 0; i < in->nsweep; i++) {
        const ds_sweep_point_t *p = &in->sweep[i];
        if (strcmp(p->param, sweep_params[which]) || !p->ok) continue;
        valid[0]++;
        fprintf(f, "%g %.4f %.4f ", p->value, 100 * p->sm_util, 100 * p->gpu_alloc);
        if (isnan(p->coloc_slowdown)) fprintf(f, "?");
        else fprintf(f, "%.5f", p->coloc_slowdown), valid[1]++;
        fprintf(f, " %.3f %.4f\n", p->avg_queue, 100 * p->qad_compliance);
    }
    return close_data(f, dir, name, err);
}

/* Emits body once for PNG and once for SVG: replot cannot redo a multiplot. */
static void emit(FILE *f, const char *name, const char *size, const char *body)
{
    fprintf(f, "\n# ---- %s\nreset\nset terminal pngcairo size %s noenhanced font 'sans,11'\n", name, size);
    fprintf(f, "set output 'plots/%s.png'\n%sset output\n", name, body);
    fprintf(f, "reset\nset terminal svg size %s dynamic noenhanced font 'sans,11' background rgb 'white'\n", size);
    fprintf(f, "set output 'plots/%s.svg'\n%sset output\n", name, body);
}

/* A plot body is built in memory so emit() can write it twice. */
typedef struct body {
    char *s;
    size_t n;
    FILE *f;
} body_t;

static FILE *body_open(body_t *b)
{
    b->s = NULL, b->n = 0;
    b->f = open_memstream(&b->s, &b->n);
    return b->f;
}

static void body_emit(body_t *b, FILE *script, const char *name)
{
    fclose(b->f);
    emit(script, name, strncmp(name, "sweep_", 6) ? PLOT_SIZE : SWEEP_SIZE, b->s);
    free(b->s);
}

static void cdf_plot(FILE *script, const ds_plot_input_t *in, int col, const char *name, const char *title,
                     const char *xlabel)
{
    body_t b;
    FILE *f = body_open(&b);
    fprintf(f, "set title ");
    gp_str(f, title);
    fprintf(f, "\nset xlabel ");
    gp_str(f, xlabel);
    /* seconds on a log axis are hard to read; tick at familiar durations instead */
    fprintf(f, "\nset xtics ('1 s' 1, '10 s' 10, '1 min' 60, '10 min' 600, '1 h' 3600, '10 h' 36000, '1 d' 86400, "
               "'10 d' 864000, '100 d' 8640000)");
    fprintf(f, "\nset ylabel 'fraction of jobs'\nset logscale x\nset yrange [0:1]\nset grid\n"
               "set key bottom right\nplot ");
    for (int i = 0; i < in->n; i++) {
        fprintf(f, "%s'data/cdf_%d.dat' using ($%d < 1 ? 1 : $%d):1 with lines lw 2 title ", i ? ", \\\n     " : "",
                i, col, col);
        gp_str(f, in->res[i]->policy);
    }
    fprintf(f, "\n");
    body_emit(&b, script, name);
}

static void series_plot(FILE *script, const ds_plot_input_t *in, const int *has, int col, const char *name,
                        const char *title, const char *ylabel, const char *extra)
{
    body_t b;
    FILE *f = body_open(&b);
    fprintf(f, "set title ");
    gp_str(f, title);
    fprintf(f, "\nset xlabel 'time since window start (days)'\nset ylabel ");
    gp_str(f, ylabel);
    fprintf(f, "\nset grid\nset key outside right top\n%splot ", extra);
    int first = 1;
    for (int i = 0; i < in->n; i++) {
        if (!has[i]) continue;
        fprintf(f, "%s'data/series_%d.dat' using 1:%d with lines lw 1.5 title ", first ? "" : ", \\\n     ", i, col);
        gp_str(f, in->res[i]->policy);
        first = 0;
    }
    fprintf(f, "\n");
    body_emit(&b, script, name);
}

static void qad_plot(FILE *script, const ds_sim_result_t *r, int idx, const char *name, const char *title)
{
    body_t b;
    FILE *f = body_open(&b);
    fprintf(f, "set title ");
    gp_str(f, title);
    fprintf(f, "\nset xlabel 'time since window start (days)'\nset ylabel 'smoothed QAD (lowest per time bin)'\n"
               "set yrange [0:1.05]\nset grid\nset key outside right top\nplot ");
    for (int32_t i = 0; i < r->ntenants; i++) {
        /* gnuplot cycles 8 colours; later tenants get a dash-dot pattern to stay distinguishable */
        fprintf(f, "'data/qad_%d.dat' using 1:%d with lines lw 1.2 lc %d dt %d title ", idx, i + 2, i % 8 + 1,
                i / 8 % 2 ? 4 : 1);
        gp_str(f, r->tenants[i].name);
        fprintf(f, ", \\\n     ");
    }
    fprintf(f, "0.95 with lines dt 2 lw 2 lc rgb 'black' title 'theta = 0.95'\n");
    body_emit(&b, script, name);
}

static void sweep_panel(FILE *f, const char *param, int col, const char *title, const char *ylabel, int valid,
                        double lo, double hi)
{
    fprintf(f, "set title ");
    gp_str(f, title);
    fprintf(f, "\nset xlabel ");
    gp_str(f, param);
    fprintf(f, "\nset ylabel ");
    gp_str(f, ylabel);
    fprintf(f, "\nset xrange [%g:%g]\n", lo, hi);
    if (valid) {
        fprintf(f, "set yrange [*:*]\nunset label 1\nplot 'data/sweep_%s.dat' using 1:%d with linespoints lw 2 pt 7 "
                   "notitle\n", param, col);
    } else {
        /* gnuplot stops the whole script on a data file without a valid point */
        fprintf(f, "set yrange [0:2]\nset label 1 'no colocated job in any run' at graph 0.5,0.5 center\n"
                   "plot NaN notitle\nunset label 1\n");
    }
}

static void sweep_plot(FILE *script, const ds_plot_input_t *in, int which, const int *valid)
{
    const char *param = sweep_params[which];
    double lo = INFINITY, hi = -INFINITY;
    int noted = 0;
    for (int i = 0; i < in->nsweep; i++)
        if (!strcmp(in->sweep[i].param, param) && in->sweep[i].ok) {
            noted |= in->sweep[i].note[0] != 0;
            if (in->sweep[i].value < lo) lo = in->sweep[i].value;
            if (in->sweep[i].value > hi) hi = in->sweep[i].value;
        }
    double pad = hi > lo ? (hi - lo) * 0.05 : 0.5;
    body_t b;
    FILE *f = body_open(&b);
    char title[200];
    snprintf(title, sizeof title, "DeepShare sensitivity to %s (other parameters at their defaults%s)", param,
             noted ? "; beta lowered to 1 - alpha where alpha + beta > 1" : "");
    fprintf(f, "set grid\nset multiplot layout 2,2 title ");
    gp_str(f, title);
    fprintf(f, "\n");
    sweep_panel(f, param, 2, "SM utilization", "SM utilization (%)", 1, lo - pad, hi + pad);
    sweep_panel(f, param, 4, "slowdown of colocated jobs (mean run time / exclusive duration)", "slowdown (x)",
                valid[1], lo - pad, hi + pad);
    sweep_panel(f, param, 5, "average queueing delay", "queueing delay (s)", 1, lo - pad, hi + pad);
    sweep_panel(f, param, 6, "QAD compliance (tenant-cycles with smoothed QAD >= 0.95)", "compliance (%)", 1, lo - pad,
                hi + pad);
    fprintf(f, "unset multiplot\n");
    char name[64];
    snprintf(name, sizeof name, "sweep_%s", param);
    body_emit(&b, script, name);
}

int ds_plot_write(const char *dir, const ds_plot_input_t *in, ds_plot_list_t *list, ds_error_t *err)
{
    char path[1200];
    memset(list, 0, sizeof *list);
    const char *sub[] = {"data", "plots"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s/%s", dir, sub[k]);
        if (mkdir(path, 0777) && errno != EEXIST) {
            ds_error_set(err, path, 0, NULL, "cannot create directory: %s", strerror(errno));
            return DS_EIO;
        }
    }
    int *has = ds_xcalloc((size_t)in->n + 1, sizeof *has), any_series = 0;
    for (int i = 0; i < in->n; i++) {
        const ds_sim_result_t *r = in->res[i];
        if (write_cdf(dir, i, in->trace, r, err)) goto fail;
        if (r->nseries > 0) {
            has[i] = any_series = 1;
            if (write_series(dir, i, r, err) || write_qad(dir, i, r, err)) goto fail;
        }
    }
    snprintf(path, sizeof path, "%s/plots.gp", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        ds_error_set(err, path, 0, NULL, "cannot write: %s", strerror(errno));
        goto fail;
    }
    fprintf(f, "# plots.gp: written by 'deepshare compare'; 'gnuplot plots.gp' in this folder redraws plots/ from data/.\n"
               "set datafile missing '?'\n");
    char title[200];
    /* an empty 'plot' stops gnuplot: with no compared result (only a sweep) there is no CDF */
    for (int k = 0; k < 2 && in->n > 0; k++) {
        snprintf(title, sizeof title, "%s CDF per policy (%d jobs)", k ? "Job completion time" : "Queueing delay",
                 in->trace->njobs);
        cdf_plot(f, in, 2 + k, k ? "jct_cdf" : "queue_cdf", title,
                 k ? "job completion time (log scale)" : "queueing delay (log scale; delays under 1 s drawn at 1 s)");
        list_add(list, k ? "jct_cdf" : "queue_cdf", title);
    }
    if (any_series) {
        static const struct {
            const char *name, *title, *ylabel, *extra;
            int col;
        } ts[] = {
            {"gpu_alloc", "GPU allocation over time", "allocated GPUs (% of all GPUs)", "set yrange [0:105]\n", 2},
            {"sm_util", "SM utilization over time", "SM utilization (% of all GPUs)", "set yrange [0:105]\n", 3},
            {"idle_gpus", "Idle GPUs over time", "idle GPUs", "set yrange [0:*]\n", 4},
            {"preemptions", "Preemptions over time", "preemptions so far (cumulative)", "set yrange [0:*]\n", 5},
            {"colocations", "Colocations over time", "colocations so far (cumulative)", "set yrange [0:*]\n", 6},
        };
        for (size_t k = 0; k < sizeof ts / sizeof ts[0]; k++) {
            series_plot(f, in, has, ts[k].col, ts[k].name, ts[k].title, ts[k].ylabel, ts[k].extra);
            list_add(list, ts[k].name, ts[k].title);
        }
        for (int i = 0; i < in->n; i++) {
            if (!has[i] || in->res[i]->ntenants == 0) continue;
            char name[96];
            snprintf(name, sizeof name, "qad_%s", in->res[i]->policy);
            snprintf(title, sizeof title, "%s: smoothed QAD per tenant over time (dashed: theta = 0.95)",
                     in->res[i]->policy);
            qad_plot(f, in->res[i], i, name, title);
            list_add(list, name, title);
        }
    }
    for (int w = 0; w < 3 && in->nsweep; w++) {
        int valid[2];
        if (write_sweep(dir, in, w, valid, err)) {
            fclose(f);
            goto fail;
        }
        if (!valid[0]) continue;
        sweep_plot(f, in, w, valid);
        char name[64];
        snprintf(name, sizeof name, "sweep_%s", sweep_params[w]);
        snprintf(title, sizeof title, "DeepShare sensitivity to %s: utilization, colocation slowdown, queueing "
                 "delay, QAD compliance", sweep_params[w]);
        list_add(list, name, title);
    }
    int bad = ferror(f);
    if (fclose(f) || bad) {
        ds_error_set(err, path, 0, NULL, "write failed");
        goto fail;
    }
    free(has);
    return DS_OK;
fail:
    free(has);
    ds_plot_list_free(list);
    return DS_EIO;
}

static int executable(const char *p)
{
    struct stat st;
    return access(p, X_OK) == 0 && stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

int ds_plot_find_gnuplot(char *path, size_t n)
{
    const char *want = getenv("DS_GNUPLOT");
    if (!want) want = "gnuplot";
    if (!*want) return -1;
    if (strchr(want, '/')) {
        snprintf(path, n, "%s", want);
        return executable(path) ? 0 : -1;
    }
    const char *p = getenv("PATH");
    if (!p) p = "/usr/bin:/bin";
    while (*p) {
        const char *e = strchr(p, ':');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        snprintf(path, n, "%.*s/%s", (int)len, len ? p : ".", want);
        if (executable(path)) return 0;
        p += len + (e ? 1 : 0);
    }
    return -1;
}

int ds_plot_render(const char *gnuplot, const char *dir, char *msg, size_t n)
{
    char log[1200];
    snprintf(log, sizeof log, "%s/gnuplot.log", dir);
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(msg, n, "cannot start %s: %s", gnuplot, strerror(errno));
        return -1;
    }
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0666);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        int nul = open("/dev/null", O_RDONLY);
        if (nul >= 0) dup2(nul, 0), close(nul);
        if (chdir(dir) == 0) execl(gnuplot, gnuplot, "plots.gp", (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) {
            snprintf(msg, n, "waiting for %s: %s", gnuplot, strerror(errno));
            return -1;
        }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
        snprintf(msg, n, "could not run %s (see %s)", gnuplot, log);
    else if (WIFEXITED(st))
        snprintf(msg, n, "%s failed with status %d; its messages are in %s", gnuplot, WEXITSTATUS(st), log);
    else
        snprintf(msg, n, "%s was killed by signal %d", gnuplot, WIFSIGNALED(st) ? WTERMSIG(st) : 0);
    return -1;
}
