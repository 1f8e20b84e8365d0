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
#define DS_MAX_NODE_GPUS 64                  /* GPUs of one node */
#define DS_MAX_GPU_TYPES 8                   /* node (GPU) types in one cluster */
#define DS_GTYPE_NAME 32                     /* bytes of a GPU type's name, with its NUL */

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
    int8_t gtype;      /* the one GPU type it asks for (index into trace->gtypes), -1: any type, or several */
    uint8_t gmask;     /* the GPU types it may run on (bit t: trace->gtypes[t]), 0: any type */
    int8_t ref_gtype;  /* GPU type its duration was measured on, -1: the trace's reference type */
    double estimate;   /* duration estimate in seconds (QSSF/Lucid); NAN when none */
    int32_t ckpt;      /* checkpoint interval it declares, seconds of its run; 0 = none declared */
    int32_t limit;     /* time limit its owner asked for, seconds (Slurm ends the job there); 0 = none given */
    long line;         /* line in the source file, for messages */
} ds_job_t;

typedef struct ds_tenant {
    char name[64];
    int32_t quota_gpus;                    /* all types together */
    int32_t quota_t[DS_MAX_GPU_TYPES];     /* per GPU type (typed clusters: they sum to quota_gpus) */
} ds_tenant_t;

/* A node type of a heterogeneous cluster (docs/heterogeneous.md): its GPU type and the shape of its nodes.
 * A field left 0 takes the run's cluster default (--gpus-per-node, --cpus-per-node, ...). */
typedef struct ds_gtype {
    char name[DS_GTYPE_NAME];  /* "v100", "k80", ... */
    int32_t gpus_per_node;
    int32_t cpus_per_node;
    int64_t mem_per_node;      /* MiB */
    int32_t gmem_per_gpu;      /* MiB */
    int32_t nodes;             /* pooled mode: nodes of this type; 0 = what the tenants' quotas of it fill */
    double weight;             /* effective GPUs per GPU of this type (throughput-normalised); 0 = not known */
} ds_gtype_t;

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
    /* Node types (docs/heterogeneous.md); ngtypes 0: one kind of node, the run's cluster shape. */
    ds_gtype_t gtypes[DS_MAX_GPU_TYPES];
    int32_t ngtypes;
    int32_t ref_gtype;  /* reference type of durations without their own (default 0, the first) */
} ds_trace_t;

void ds_trace_init(ds_trace_t *t);
void ds_trace_free(ds_trace_t *t);
ds_job_t *ds_trace_add_job(ds_trace_t *t);
int32_t ds_trace_add_tenant(ds_trace_t *t, const char *name, int32_t quota_gpus);
int32_t ds_trace_find_tenant(const ds_trace_t *t, const char *name);
/* Index of a GPU type by name (case-insensitive), -1 when the trace has none of that name. */
int32_t ds_trace_find_gtype(const ds_trace_t *t, const char *name);
/* Adds a node type with the cluster defaults (zeros); -1 when DS_MAX_GPU_TYPES are there or the name is
 * empty, too long or taken. */
int32_t ds_trace_add_gtype(ds_trace_t *t, const char *name);
/* The reference type of job j's duration (its own, else the trace's). */
static inline int32_t ds_job_ref_gtype(const ds_trace_t *t, const ds_job_t *j)
{
    return j->ref_gtype >= 0 ? j->ref_gtype : t->ref_gtype;
}
const char *ds_trace_model_name(const ds_trace_t *t, const ds_job_t *j);
const char *ds_trace_dataset_name(const ds_trace_t *t, const ds_job_t *j);

/* Reads the node types of a heterogeneous cluster (docs/heterogeneous.md): "gpu_type,nodes,gpus_per_node,
 * cpus_per_node,mem_mib,gmem_mib,weight" (only gpu_type required). Call before the tenants. */
int ds_trace_read_cluster(ds_trace_t *t, const char *path, ds_error_t *err);
/* Whether the n bytes at s make a GPU type name: 1 to DS_GTYPE_NAME - 1 letters, digits, '-', '_' or '.'. */
int ds_gtype_name_ok(const char *s, size_t n);
/* Adds a node type named in a file or option, checking the name (letters, digits, -_.; not 'any'), duplicates and
 * DS_MAX_GPU_TYPES; its index, or -1 with err naming path, line and field. */
int32_t ds_trace_new_gtype(ds_trace_t *t, const char *name, const char *path, long line, const char *field, ds_error_t *err);
/* Parses a --synth-gpu-types style list "v100:12,p100:8,k80:4" (type:nodes) into types with node counts;
 * 0, or an error naming opt. */
int ds_trace_parse_gtypes(ds_trace_t *t, const char *list, const char *opt, ds_error_t *err);

/* Reads the tenant file: either Venus vc_config (",num" header, nodes of 8 GPUs) or
 * "tenant,quota_gpus", optionally with per-type quotas "quota_<type>" (a type of the cluster file, or a new
 * type with the cluster defaults when none was read). gpus_per_node converts node counts. */
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
