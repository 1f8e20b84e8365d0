/* trace.h: jobs, tenants and the trace that holds them; readers for Venus and generic CSV traces. */
#ifndef DS_TRACE_H
#define DS_TRACE_H

#include "deepshare/common.h"

/* What the readers accept (docs/trace-format.md, "Limits"): beyond these, the simulator's per-cycle
 * series and per-tenant arrays would exhaust memory or time, so the reader names the file and line instead. */
#define DS_MAX_JOBS 20000000                 /* rows in one job file */
#define DS_MAX_TENANTS 1000                  /* tenants in one file: DeepShare's cycle grows ~cubically (3000: 37 s) */
#define DS_MAX_QUOTA_GPUS 1000000            /* one tenant's quota */
#define DS_MAX_JOB_GPUS 100000               /* one job */
#define DS_MAX_JOB_NODES 4096                /* whole nodes one job may span (the engine's placement bound) */
#define DS_MAX_JOB_CPUS 100000000            /* one job */
#define DS_MAX_SUBMIT ((int64_t)1 << 40)     /* absolute submit time, s (Unix seconds fit) */
#define DS_MAX_SPAN ((int64_t)2 * 366 * 86400) /* last submit - first submit, s */
#define DS_MAX_DURATION ((int64_t)366 * 86400) /* one job's run time, s */
#define DS_MAX_ESTIMATE 1e12                 /* a duration estimate, s (|value|) */

typedef enum { DS_CLASS_AUTO = 0, DS_CLASS_G = 1, DS_CLASS_BE = 2 } ds_class_t;

/* A job as submitted: static description, never changed by a run. */
typedef struct ds_job {
    int64_t id;
    int64_t submit;    /* seconds */
    int64_t duration;  /* exclusive run time in seconds (execution model and oracles only) */
    int32_t tenant;    /* index into trace->tenants */
    int32_t user;      /* index into trace->users */
    int32_t gpus;
    int32_t cpus;
    int64_t mem_mib;   /* host memory, 0 = unknown */
    int32_t model;     /* index into trace->models, -1 unknown */
    int32_t dataset;   /* index into trace->datasets, -1 unknown */
    int32_t batch;     /* batch size, 0 unknown */
    int32_t amp;       /* 0/1 */
    float gpu_util;    /* percent, exclusive */
    float gmem_util;   /* percent, exclusive */
    int32_t gmem_mib;  /* GPU memory per GPU */
    uint8_t klass;     /* ds_class_t as submitted */
    double estimate;   /* duration estimate in seconds (QSSF/Lucid); NAN when none */
    long line;         /* line in the source file, for messages */
} ds_job_t;

typedef struct ds_tenant {
    char name[64];
    int32_t quota_gpus;
} ds_tenant_t;

/* Interned strings: index <-> name. */
typedef struct ds_strtab {
    char **s;
    int32_t n, cap;
    int32_t *hash; /* open addressing, -1 empty */
    int32_t hcap;
} ds_strtab_t;

int32_t ds_strtab_intern(ds_strtab_t *t, const char *s);
int32_t ds_strtab_find(const ds_strtab_t *t, const char *s);
void ds_strtab_free(ds_strtab_t *t);

typedef struct ds_trace {
    ds_job_t *jobs;
    int32_t njobs, cap;
    ds_tenant_t *tenants;
    int32_t ntenants, tcap;
    int32_t *thash, thcap;    /* open-addressing index of tenant names: many tenants must not cost a quadratic scan */
    ds_strtab_t users, models, datasets;
    char source[256];  /* "synthetic(seed=..)" or the file path */
} ds_trace_t;

void ds_trace_init(ds_trace_t *t);
void ds_trace_free(ds_trace_t *t);
ds_job_t *ds_trace_add_job(ds_trace_t *t);
int32_t ds_trace_add_tenant(ds_trace_t *t, const char *name, int32_t quota_gpus);
int32_t ds_trace_find_tenant(const ds_trace_t *t, const char *name);
const char *ds_trace_model_name(const ds_trace_t *t, const ds_job_t *j);
const char *ds_trace_dataset_name(const ds_trace_t *t, const ds_job_t *j);

/* Reads the tenant file: either Venus vc_config (",num" header, nodes of 8 GPUs) or
 * "tenant,quota_gpus". gpus_per_node converts node counts. */
int ds_trace_read_tenants(ds_trace_t *t, const char *path, int gpus_per_node, ds_error_t *err);
/* Reads jobs (Venus or generic column names) after the tenants are known. Keeps row order;
 * rows must be in non-decreasing submit order. */
int ds_trace_read_jobs(ds_trace_t *t, const char *path, ds_error_t *err);
/* Reads "job_id,<estimate>" and fills job->estimate; negative values become neg_floor
 * when neg_floor > 0 (Lucid's convention: 1000). Jobs absent from the file keep NAN. */
int ds_trace_read_estimates(ds_trace_t *t, const char *path, double neg_floor, int32_t *matched, ds_error_t *err);

/* Sum of tenant quotas. */
int64_t ds_trace_total_quota(const ds_trace_t *t);
/* Divides every inter-arrival gap by x (> 0), keeping the first submit time and the order. */
void ds_trace_scale_arrivals(ds_trace_t *t, double x);

#endif
