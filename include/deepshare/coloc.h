/* coloc.h: the measured pairwise colocation profile (retention of each job in a pair), keyed by
 * workload (model, dataset, batch size, amp): the simulator's ground truth for shared GPUs. */
#ifndef DS_COLOC_H
#define DS_COLOC_H
/* layering (CMakeLists.txt): the io layer's header, out of reach of the layers below it */
#if defined(DS_LAYER_BASE) || defined(DS_LAYER_ENGINE)
#error "deepshare/coloc.h belongs to the io layer: this layer may not include it (see CMakeLists.txt)"
#endif

#include "deepshare/trace.h"

typedef struct ds_coloc_pair {
    char model1[32], dataset1[32];
    int32_t batch1, amp1;
    char model2[32], dataset2[32];
    int32_t batch2, amp2;
    double speed1, speed2;       /* retention of job 1 and job 2 */
    double gpu_util, gmem_util, gmem; /* of the shared GPU */
    char gtype[DS_GTYPE_NAME];   /* GPU type it was measured on (optional gpu_type column); "" any type */
} ds_coloc_pair_t;

typedef struct ds_coloc {
    ds_coloc_pair_t *pairs;
    int32_t npairs;
    /* lookup built for one trace by ds_coloc_bind */
    int32_t *cfg_of_job;  /* per job: workload config index or -1 */
    int32_t ncfg;
    float *rho;           /* nslot x ncfg x ncfg: retention of row config when paired with column config; NAN
                             unknown. Slot 0: pairs measured on no particular type; slot 1 + k: on the trace's type k */
    int32_t nslot;
    int typed;            /* some pair names its GPU type */
    double missing_rho;   /* retention for pairs absent from the profile (1.0, as the reference) */
    /* The ground truth of unprofiled pairs when it is a model (SPEC 7.2, --missing-rho model): each job's
     * workload class (distinct descriptor) and a class x class table of retentions; NULL: missing_rho. */
    int32_t *class_of_job;
    int32_t nclass;
    float *miss;
    int no_profile;       /* 1: no profile was given; this object only carries the truth of unprofiled
                             pairs (every pair is one), and policies get no profile from it */
} ds_coloc_t;

int ds_coloc_read(ds_coloc_t *c, const char *path, ds_error_t *err);
/* Prepares fast per-job lookups for a trace (call again for another trace). */
void ds_coloc_bind(ds_coloc_t *c, const ds_trace_t *t);
/* Retention of job a when sharing with job b (ground truth; for an unprofiled pair the miss table's value,
 * else missing_rho). c may be NULL: 1. */
double ds_coloc_rho(const ds_coloc_t *c, int32_t a, int32_t b);
/* 1 when the pair was profiled. */
int ds_coloc_known(const ds_coloc_t *c, int32_t a, int32_t b);
/* The same on a GPU of the trace's type gtype: the pair as measured on that type, else as measured on no
 * particular type (an untyped profile holds for every type), else missing_rho. */
double ds_coloc_rho_on(const ds_coloc_t *c, int32_t a, int32_t b, int32_t gtype);
int ds_coloc_known_on(const ds_coloc_t *c, int32_t a, int32_t b, int32_t gtype);
/* An empty profile bound to t (no pair known), to carry the truth of unprofiled pairs. */
void ds_coloc_empty(ds_coloc_t *c, const ds_trace_t *t);
void ds_coloc_free(ds_coloc_t *c);

#endif
