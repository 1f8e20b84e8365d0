/* usage.h: 'deepshare usage', who used what: the records read from deepshared's journal or a simulator run's
 * --out folder (src/trace/usage_read.c), and the per-tenant (or per-user) report computed from them over a
 * time window (src/report/usage.c): GPU-hours as guaranteed and best effort, lent and borrowed, quota, time
 * under-served, QAD compliance, preemptions, queueing delay percentiles. docs/usage.md defines each column. */
#ifndef DS_USAGE_H
#define DS_USAGE_H
/* layering (CMakeLists.txt): the io layer's header, out of reach of the layers below it */
#if defined(DS_LAYER_BASE) || defined(DS_LAYER_ENGINE)
#error "deepshare/usage.h belongs to the io layer: this layer may not include it (see CMakeLists.txt)"
#endif

#include <stdio.h>

#include "deepshare/common.h"
#include "deepshare/trace.h"

/* Bounds of what a reader takes in (a larger input is refused with a message, never read without end). */
#define DS_USAGE_MAX_ROWS (50 * 1000 * 1000)
#define DS_USAGE_MAX_TENANTS 4096
#define DS_USAGE_MAX_NAME 127
#define DS_USAGE_MAX_TIME ((int64_t)1 << 40) /* |Unix seconds| of any time read */

/* One finished job. Fields a source does not have are -1 (submit, queue, preemptions in the journal). */
typedef struct ds_usage_job {
    int64_t id;
    int32_t tenant, user;     /* indices into tenants / users */
    int32_t gpus;
    int64_t submit, start, end;
    int64_t queue;            /* seconds pending in all (-1: unknown) */
    int64_t run;              /* wall seconds holding GPUs */
    int32_t preemptions;      /* -1: unknown */
} ds_usage_job_t;

/* One tenant at one cycle (a simulator run's tenant_usage.csv). */
typedef struct ds_usage_sample {
    int64_t time;
    int32_t tenant;
    int32_t quota, g, be, pending; /* GPUs: quota, held as G, held as BE, pending demand */
    float qad, smoothed;
} ds_usage_sample_t;

typedef struct ds_usage_data {
    char source[32];          /* "journal" or "simulation" */
    ds_strtab_t tenants, users;
    ds_usage_job_t *jobs;
    int64_t njobs, capjobs;
    ds_usage_sample_t *samples;
    int64_t nsamples, capsamples;
    int64_t step;             /* seconds between samples (0: no samples) */
    int32_t *quota;           /* per tenant index: quota GPUs from a tenants file, -1 unknown (NULL: none given) */
    double *preempted;        /* per tenant index: preemptions suffered in the window, from deepshared's counter
                                 in Prometheus (--metrics); NULL: from the jobs */
    int32_t npreempted;       /* tenants it covers (those known when it was read) */
} ds_usage_data_t;

void ds_usage_init(ds_usage_data_t *d);
void ds_usage_free(ds_usage_data_t *d);
/* deepshared's journal: "slurm_job_id,tenant,user,gpus,seconds,end" records (src/daemon/hist.c writes
 * them); a job's run is taken as [end - seconds, end]. Every malformed record is an error naming the file,
 * line and field (a usage report must not quietly leave jobs out), except a torn last line, which a crash
 * leaves and the daemon skips too: it is counted in *torn. */
int ds_usage_read_journal(ds_usage_data_t *d, const char *path, int64_t *torn, ds_error_t *err);
/* The quotas of a tenants file (read with ds_trace_read_tenants) for the quota column of a journal's report:
 * each of its tenants gets a row, jobs or not; taken as constant over the window. */
void ds_usage_set_quotas(ds_usage_data_t *d, const ds_trace_t *tenants);
/* A simulator run's --out folder: jobs.csv and tenant_usage.csv. */
int ds_usage_read_run(ds_usage_data_t *d, const char *dir, ds_error_t *err);
/* The two files of a run folder, one by one (the fuzz targets read each). */
int ds_usage_read_jobs_csv(ds_usage_data_t *d, const char *path, ds_error_t *err);
int ds_usage_read_samples_csv(ds_usage_data_t *d, const char *path, ds_error_t *err);

/* deepshared's per-tenant series in a Prometheus server that scrapes it (--metrics URL): the six gauges of a
 * sample (quota, G, BE and pending GPUs, the reported QAD and its smoothing) and the preemption counter,
 * each read from query_range answers (src/cli/usage_metrics.c fetches them; src/trace/usage_prom.c reads). */
enum {
    DS_PROM_QUOTA, DS_PROM_G, DS_PROM_BE, DS_PROM_PENDING, DS_PROM_QAD, DS_PROM_SMOOTHED,
    DS_PROM_NGAUGES, DS_PROM_PREEMPTIONS = DS_PROM_NGAUGES, DS_PROM_NFIELDS
};
extern const char *const ds_usage_prom_metric[DS_PROM_NFIELDS]; /* the metric names, deepshare_tenant_... */
struct prom_point;
typedef struct ds_usage_prom {
    struct prom_point *pts;   /* every point read so far */
    int64_t npts, cap;
    ds_strtab_t series;       /* the counter's series by label set (one per deepshared instance) */
} ds_usage_prom_t;
void ds_usage_prom_init(ds_usage_prom_t *p);
void ds_usage_prom_free(ds_usage_prom_t *p);
/* One query_range answer (JSON) for field's metric: its points kept in p, its tenants interned in d. An
 * answer that failed, is not a matrix, has a series without a tenant label, a value out of range (GPUs < 0,
 * QAD outside [0, 1]) or too many points is an error naming the metric and the field; NaN points are skipped. */
int ds_usage_prom_add(ds_usage_prom_t *p, ds_usage_data_t *d, int field, const char *buf, size_t n, ds_error_t *err);
/* Turns the points into d's samples, one per (time, tenant) in [from, to) with all six gauges (step apart;
 * *incomplete counts those lacking one), and the counter's increases in [from, to] into d->preempted (a
 * drop is a restart of that instance). */
int ds_usage_prom_finish(ds_usage_prom_t *p, ds_usage_data_t *d, int64_t step, int64_t from, int64_t to,
                         int64_t *incomplete, ds_error_t *err);

/* One row of the report. NAN: the source does not say (e.g. G/BE from a journal). */
typedef struct ds_usage_row {
    char name[DS_USAGE_MAX_NAME + 1];
    int64_t jobs;             /* finished in the window */
    double gpu_h;             /* GPU-hours held in the window, any class */
    double g_h, be_h;         /* of which as guaranteed, as best effort */
    double quota_h;           /* quota x window hours */
    double borrowed_h;        /* GPU-hours held above its quota */
    double lent_h;            /* GPU-hours of its idle quota that others' borrowing used (pro rata) */
    double under_h;           /* hours with demand and smoothed QAD under theta */
    double compliance;        /* share of cycles with demand whose smoothed QAD >= theta */
    double preemptions;       /* suffered by its jobs finished in the window */
    double q_p50, q_p95, q_p99; /* queueing delay of its jobs finished in the window, seconds */
} ds_usage_row_t;

typedef struct ds_usage_report {
    int64_t from, to;
    int by_user;
    double theta;
    ds_usage_row_t *rows;     /* sorted by name; the last one is the total ("all") */
    int32_t nrows;
} ds_usage_report_t;

/* Computes the report over [from, to) (Unix seconds) by tenant or by user (by_user: the tenant-level
 * columns, which only a tenant has, are NAN). */
void ds_usage_compute(const ds_usage_data_t *d, int64_t from, int64_t to, int by_user, double theta,
                      ds_usage_report_t *r);
void ds_usage_report_free(ds_usage_report_t *r);
/* The report as an aligned table, CSV or JSON. */
void ds_usage_print_table(FILE *f, const ds_usage_report_t *r, const char *source);
void ds_usage_print_csv(FILE *f, const ds_usage_report_t *r);
int ds_usage_print_json(FILE *f, const ds_usage_report_t *r, const char *source);
/* A plot folder: usage.dat and plots.gp (stacked G/BE GPU-hours, borrowed, lent and quota per row), for
 * ds_plot_render. Returns DS_OK or DS_EIO with err filled. */
int ds_usage_write_plot(const char *dir, const ds_usage_report_t *r, ds_error_t *err);

#endif
