/* plot.h: the report folder of 'deepshare compare': plot data files, a gnuplot script that renders them to
 * PNG and SVG, running gnuplot, the sensitivity-sweep table and index.html. */
#ifndef DS_PLOT_H
#define DS_PLOT_H
/* layering (CMakeLists.txt): the report layer's header, out of reach of the layers below it */
#if defined(DS_LAYER_BASE) || defined(DS_LAYER_ENGINE) || defined(DS_LAYER_IO) || defined(DS_LAYER_SIM) || defined(DS_LAYER_PREDICT)
#error "deepshare/plot.h belongs to the report layer: this layer may not include it (see CMakeLists.txt)"
#endif

#include <stdio.h>

#include "deepshare/sim.h"

/* One point of a DeepShare sensitivity sweep: a parameter set to a value, and what it gave. */
typedef struct ds_sweep_point {
    char param[32];            /* "rho-min", "alpha", "m" */
    double value;
    int ok;                    /* 0: the run failed; the numbers are meaningless */
    double sm_util, gpu_alloc;
    double coloc_slowdown;     /* mean run time / exclusive duration of colocated jobs; NAN when none */
    int64_t colocated_jobs;
    double avg_queue, avg_jct, qad_compliance;
    char note[64];             /* another parameter the point had to change, e.g. "beta=0.1" */
} ds_sweep_point_t;

/* A plot of the report: file stem under plots/ and a caption. */
typedef struct ds_plot {
    char name[96];
    char title[200];
} ds_plot_t;

typedef struct ds_plot_list {
    ds_plot_t *v;
    int n, cap;
} ds_plot_list_t;

/* Everything the report shows. */
typedef struct ds_plot_input {
    const ds_trace_t *trace;
    const ds_sim_result_t *const *res; /* results to compare, in display order */
    int n;
    const ds_sweep_point_t *sweep;     /* may be NULL */
    int nsweep;
} ds_plot_input_t;

/* Fills a sweep point from a finished run (slowdown from per-job run time over the trace's duration). */
void ds_sweep_point_fill(ds_sweep_point_t *p, const ds_trace_t *t, const ds_sim_result_t *r);
/* sweep.csv: param,value,... one row per point. */
int ds_sweep_csv(FILE *f, const ds_sweep_point_t *p, int n);

/* Writes dir/data/ (downsampled plot data) and dir/plots.gp (renders into dir/plots/, run from dir), and
 * lists the plots it will make. Returns 0 or DS_EIO with err filled. */
int ds_plot_write(const char *dir, const ds_plot_input_t *in, ds_plot_list_t *list, ds_error_t *err);
void ds_plot_list_free(ds_plot_list_t *l);

/* Finds the gnuplot program: $DS_GNUPLOT when set (a path or a name looked up in PATH), else "gnuplot"
 * in PATH. Writes the full path; returns 0, or -1 when there is none. */
int ds_plot_find_gnuplot(char *path, size_t n);
/* Runs gnuplot on dir/plots.gp with dir as working directory, its messages going to dir/gnuplot.log.
 * Returns 0, or -1 with a one-line reason in msg. */
int ds_plot_render(const char *gnuplot, const char *dir, char *msg, size_t n);

/* index.html: the comparison table, every plot (PNG, linked to its SVG) and the sweep table, all by
 * relative links. plots_ok 0 replaces the images with note (why there are none). */
int ds_report_html(FILE *f, const ds_plot_input_t *in, const ds_plot_list_t *plots, int plots_ok,
                   const char *note);

#endif
