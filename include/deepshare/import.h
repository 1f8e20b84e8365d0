/* import.h: reading published GPU-cluster traces (Helios, Acme, Philly, Alibaba PAI 2020, Alibaba GPU 2023) into
 * jobs and quotas, and, where the trace has them, GPU types: the nodes' types from its node list and the types
 * each job may run on. */
#ifndef DS_IMPORT_H
#define DS_IMPORT_H

#include <stdio.h>

#include "deepshare/common.h"
#include "deepshare/trace.h"

/* Bounds of the readers themselves (the simulator's limits, trace.h, apply to what they keep): one job of
 * Philly's JSON, the rows of one input, and a user name or job id (a written row must stay one CSV line). */
#define DS_IMP_MAX_JSON_JOB (16 << 20)
#define DS_IMP_MAX_ROWS DS_MAX_JOBS
#define DS_IMP_MAX_NAME 256

/* A job's state upon termination, normalised across traces. */
typedef enum {
    DS_IMP_COMPLETED = 0,
    DS_IMP_FAILED,
    DS_IMP_CANCELLED,
    DS_IMP_TIMEOUT,
    DS_IMP_NODE_FAIL,
    DS_IMP_OTHER,
    DS_IMP_NSTATES
} ds_imp_state_t;

/* Why a row read without error is not imported; counted for the summary. */
typedef enum {
    DS_DROP_CPU_ONLY = 0, /* no GPUs requested */
    DS_DROP_NOT_RUN,      /* never started, still running, or no timing (e.g. Philly without attempts) */
    DS_DROP_STATE,        /* state not in --states */
    DS_DROP_SHORT,        /* below --min-duration */
    DS_DROP_WINDOW,       /* submitted outside --from/--to or --busiest-days */
    DS_DROP_GTYPE,        /* asks for GPU types no node of the node list has, or more GPUs than their nodes hold */
    DS_DROP_N
} ds_imp_drop_t;

typedef struct ds_imp_job {
    int64_t submit;   /* seconds on the trace's clock (Unix time for traces stamped with dates) */
    int64_t duration; /* seconds */
    int32_t gpus, cpus;
    int32_t tenant;   /* index into ds_import_t.tenants */
    int32_t user;     /* index into ds_import_t.users */
    int32_t orig;     /* index into ds_import_t.ids: the trace's own job id */
    int64_t num_id;   /* the trace's id when it is an integer */
    uint8_t has_num_id;
    uint8_t state;    /* ds_imp_state_t */
    uint32_t gmask;   /* node types (ds_import_t.gt) it may run on, 0 any; DS_IMP_NO_TYPE none of the node list's */
    long line;        /* line of the job in its file, keeps the file's order among equal submits */
} ds_imp_job_t;

#define DS_IMP_NO_TYPE (1u << 31)

/* One GPU type of a node list: its nodes and their shape as the simulator models a type (docs/heterogeneous.md:
 * every node of it with the most GPUs and the fewest CPUs and MiB among them). */
typedef struct ds_imp_gtype {
    char name[DS_GTYPE_NAME];
    int32_t nodes, gpus, cpus;  /* cpus 0: not in the node list */
    int64_t mem_mib;            /* 0: not in the node list */
    int64_t total_gpus;         /* GPUs of its nodes as listed (nodes x gpus when all are alike) */
    int32_t smaller;            /* nodes with fewer GPUs than the type's most */
} ds_imp_gtype_t;

/* Where a reader found a kept job's GPUs, CPUs and duration (a column, or what it derived them from), for the
 * messages of ds_imp_keep; NULL when the format has no such field. */
typedef struct ds_imp_cols {
    const char *gpus, *cpus, *duration;
} ds_imp_cols_t;

/* Options of 'deepshare import' that the readers and the quota derivation see. */
typedef struct ds_import_opts {
    const char *tenant_by;       /* per format: vc, user, type, group, gpu-type; NULL = the format's default */
    int philly_last_attempt;     /* Philly duration: 0 = sum of attempts, 1 = last attempt only */
    int skip_bad;                /* skip malformed rows (counted) instead of failing */
    unsigned states;             /* bit per ds_imp_state_t kept */
    int64_t min_duration;        /* seconds */
    int has_from, has_to;
    int64_t from, to;            /* trace clock, [from, to) */
    int busiest_days;            /* 0 = off */
    double load;                 /* target offered load for derived quotas */
    int gpus_per_node;
} ds_import_opts_t;

/* The imported trace: jobs, interned tenant/user/id names, optional quotas, and counts for the summary. */
typedef struct ds_import {
    ds_imp_job_t *jobs;
    int32_t njobs, cap;
    ds_strtab_t tenants, users, ids;
    int32_t *quota;              /* GPUs per tenant after ds_import_quotas */
    int32_t nquota;              /* entries in quota */
    uint8_t *active;             /* tenants written: those with jobs, and those a sizes file gives GPUs */
    int quota_from_file;         /* quotas came from a sizes file */
    int32_t quota_raised;        /* tenants whose file quota was raised to fit their largest job */
    int64_t rows;                /* job rows read */
    int64_t bad;                 /* malformed rows skipped under --skip-bad */
    char first_bad[1200];        /* the first skipped row's message */
    int64_t dropped[DS_DROP_N];
    int64_t orphans;             /* PAI tasks whose job is not in the job table */
    const char *src;             /* the file the jobs' lines are in (the job table for PAI), for messages */
    int64_t mean_run;            /* GPU-time-weighted mean run time of the jobs, s (set with the quotas) */
    int64_t win_from, win_to;    /* submission window of the result, [from, to) */
    int64_t origin;              /* start of the day of the first submission: written submit = submit - origin */
    int clock_is_unix;           /* times were dates (Unix clock) rather than plain seconds */
    /* GPU types: the node list's (ngt > 0 once one was read: jobs.csv then has gpu_type, tenants.csv per-type
     * quotas, and cluster.csv the node types); without one the types jobs ask for are only counted */
    ds_imp_gtype_t gt[DS_MAX_GPU_TYPES];
    int32_t ngt;
    const char *nodes_src;       /* the node list's file */
    int64_t cpu_nodes;           /* nodes of the list without GPUs, left out */
    int64_t typed_jobs;          /* kept jobs that ask for particular types */
    int64_t types_not_kept;      /* jobs whose type request was dropped for want of a node list */
    int32_t *tquota;             /* per-type quotas (ds_import_type_quotas), NULL without types */
} ds_import_t;

void ds_import_opts_default(ds_import_opts_t *o);
void ds_import_init(ds_import_t *im);
void ds_import_free(ds_import_t *im);
ds_imp_job_t *ds_import_add(ds_import_t *im);

/* State name ("completed", "failed", ...) and parsing of a --states item; -1 when unknown. */
const char *ds_imp_state_name(int s);
int ds_imp_state_parse(const char *s);
const char *ds_imp_drop_name(int d);

/* Parses a time: plain seconds ("4550879.0") or a date "YYYY-MM-DD[ HH:MM[:SS[.fff]]]" with an optional
 * 'T' and an optional zone ("Z", "+08:00", "+0800"), giving Unix seconds (dates without a zone are UTC).
 * *is_date says which. Returns 0, or -1 when s is neither. */
int ds_imp_parse_time(const char *s, int64_t *out, int *is_date);
/* Formats a time on the trace's clock for messages: a date when the clock is Unix, else seconds. */
void ds_imp_format_time(const ds_import_t *im, int64_t t, char *buf, size_t n);

/* Error bookkeeping shared by the readers: with --skip-bad a malformed row is counted and 0 returned, else
 * the error stays in err and its code is returned. */
int ds_imp_bad_row(ds_import_t *im, const ds_import_opts_t *o, int rc, ds_error_t *err);
/* Applies the GPU, state and duration filters to a complete job record and, when it passes, the simulator's
 * limits on one job (GPUs, whole nodes at o->gpus_per_node, CPUs, duration; an error names path, the job's
 * line and the field in cols); appends a job that passes both. Returns 1 kept, 0 counted as dropped, or
 * DS_EPARSE (err set; ds_imp_bad_row decides whether it is skipped). */
int ds_imp_keep(ds_import_t *im, const ds_import_opts_t *o, const ds_imp_job_t *j, const char *path,
                const ds_imp_cols_t *cols, ds_error_t *err);
/* Counts a row read (row is its line, for the message): beyond DS_IMP_MAX_ROWS an error (not skippable). */
int ds_imp_count_row(ds_import_t *im, const char *path, long row, ds_error_t *err);
/* A user name or job id for the output: line breaks and other control characters become blanks (the output's
 * rows are single lines), and one longer than DS_IMP_MAX_NAME bytes is an error naming path, line and col. */
int ds_imp_name(ds_strtab_t *tab, const char *name, const char *path, long line, const char *col, int32_t *out,
                ds_error_t *err);
/* Counts a job that never ran (no start, still running, no attempts) as dropped. */
void ds_imp_not_run(ds_import_t *im);
/* Resolves the tenant name of a job as simulate will read it back (edge blanks trimmed); empty or too long
 * names and names with control characters are errors with the reader's file, line and column. */
int ds_imp_tenant(ds_import_t *im, ds_imp_job_t *j, const char *name, const char *path, long line, const char *col,
                  ds_error_t *err);
/* That check and trimming alone: the name as simulate will read it into buf (size bytes). */
int ds_imp_tenant_name(const char *name, char *buf, size_t size, const char *path, long line, const char *col,
                       ds_error_t *err);

/* GPU types (import_types.c). A job's type request as the trace writes it -- one type or several joined by '|'
 * ("V100M16|V100M32"); empty, "nan" or "any" for any type -- into its mask over the node list's types (0 any,
 * DS_IMP_NO_TYPE when the list has none of them; matched case-insensitively); without a node list 0, counted.
 * A name with other characters than letters, digits and -_. is an error naming path, line and col. */
int ds_imp_gtype_mask(ds_import_t *im, const char *spec, const char *path, long line, const char *col, uint32_t *mask,
                      ds_error_t *err);
/* Adds one node of the node list: a GPU type name (checked as above), its GPUs (0: a CPU node, counted and left
 * out), CPUs and MiB (0: unknown). More than DS_MAX_GPU_TYPES types is an error naming path and line. */
int ds_imp_add_node(ds_import_t *im, const char *type, int64_t gpus, int64_t cpus, int64_t mem_mib, const char *path,
                    long line, const char *col, ds_error_t *err);
/* Whether a job of gpus GPUs fits a node type of its mask (one node, or whole nodes of the type). */
int ds_imp_type_fits(const ds_import_t *im, uint32_t mask, int32_t gpus);
/* Per-type quotas (im->tquota, ntenants x ngt, row-major; ds_import_quotas calls it when a node list gave
 * types): each tenant's quota split over the types in proportion to its GPU-time on them (a job that may run on
 * several types counts on each in proportion to their GPUs; a tenant without jobs by the types' GPUs), largest
 * remainders so that they sum to its quota; then, as untyped quotas are, raised so that each job fits the
 * quota of one of its types (partitioned mode runs it there), the tenant's quota becoming their sum. */
void ds_import_type_quotas(ds_import_t *im);
/* The node lists: Alibaba GPU 2023's openb_node_list_*.csv (sn,cpu_milli,memory_mib,gpu,model) and Alibaba PAI
 * 2020's headerless pai_machine_spec.csv (machine,gpu_type,cap_cpu,cap_mem,cap_gpu). Read before the jobs. */
int ds_import_nodes_alibaba(ds_import_t *im, const char *path, ds_error_t *err);
int ds_import_nodes_pai(ds_import_t *im, const char *path, ds_error_t *err);

/* The readers; paths as on the command line. */
int ds_import_helios(ds_import_t *im, const ds_import_opts_t *o, const char *path, int acme, ds_error_t *err);
int ds_import_philly(ds_import_t *im, const ds_import_opts_t *o, const char *path, ds_error_t *err);
int ds_import_pai(ds_import_t *im, const ds_import_opts_t *o, const char *job_path, const char *task_path,
                  const char *group_path, ds_error_t *err);
/* Alibaba GPU 2023 (cluster-trace-gpu-v2023): openb_pod_list_*.csv; tenants are the pods' QoS classes. */
int ds_import_alibaba(ds_import_t *im, const ds_import_opts_t *o, const char *pod_path, ds_error_t *err);
/* Reads tenant sizes: Helios cluster_gpu_number.csv (date,vc...,total: GPUs per day; the row of the window's
 * first day is used) or a tenant file as 'simulate --vc-config' takes it. Fills im->quota. */
int ds_import_read_sizes(ds_import_t *im, const ds_import_opts_t *o, const char *path, ds_error_t *err);

/* Time window (--from/--to, --busiest-days) and row order: sorts by submit, applies the window. Submit times
 * spanning more than the simulator's DS_MAX_SPAN are an error naming the first job beyond it. */
int ds_import_finish(ds_import_t *im, const ds_import_opts_t *o, ds_error_t *err);
/* Derives quotas when none were read (GPU-hour shares scaled to o->load over the window, or over the jobs'
 * GPU-time-weighted mean run time when that is longer: a window shorter than the jobs would derive absurd
 * quotas), and raises every quota to at least the tenant's largest job in whole nodes. More tenants than
 * DS_MAX_TENANTS, or a quota above DS_MAX_QUOTA_GPUS, is an error (DS_EINVAL) naming the file and line. */
int ds_import_quotas(ds_import_t *im, const ds_import_opts_t *o, ds_error_t *err);
/* 1 when the submission window is shorter than the jobs' mean run time (set by ds_import_quotas): an offered
 * load over it means little (the CLI warns). */
int ds_import_window_short(const ds_import_t *im);

/* Totals for the summary. */
double ds_import_gpu_seconds(const ds_import_t *im);
int64_t ds_import_total_quota(const ds_import_t *im);
double ds_import_offered_load(const ds_import_t *im);

/* Gavel's throughput tables (docs/heterogeneous.md): what a conversion wrote and left out. */
typedef struct ds_gavel_summary {
    int32_t types, skipped_types;     /* GPU types converted; "*_unconsolidated" ones left out */
    int64_t speeds, pairs, unfit;     /* rows of speeds.csv and pairs.csv; pairs Gavel marks [0, 0] (does not fit or
                                         not run), left out */
    int64_t unmeasured, multi_gpu_pairs; /* entries without a throughput; pairs of multi-GPU jobs (not converted) */
} ds_gavel_summary_t;
/* Converts Gavel's tables into DIR/speeds.csv (each workload's throughput alone, from speeds_path) and
 * DIR/pairs.csv (retention of pairs sharing a GPU, from pairs_path, NULL: the same file), each through a
 * temporary file renamed at the end. */
int ds_import_gavel(const char *speeds_path, const char *pairs_path, const char *dir, ds_gavel_summary_t *sum,
                    ds_error_t *err);

/* Writes DIR/jobs.csv and DIR/tenants.csv (each through a temporary file renamed at the end, so a failed
 * import never leaves a partial file). Before the rename both are read back with simulate's readers (at
 * o->gpus_per_node); a refusal there is an importer bug and aborts with the reader's message. */
int ds_import_write(const ds_import_t *im, const ds_import_opts_t *o, const char *dir, ds_error_t *err);

#endif
