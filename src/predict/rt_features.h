/* rt_features.h: the runtime model's view of history (what has finished, what was submitted) and
 * the feature vector of a job built from it; internal to src/predict. */
#ifndef DS_RT_FEATURES_H
#define DS_RT_FEATURES_H

#include "deepshare/models.h"

#define RT_K 10          /* recent durations kept per user, user x GPU bucket, tenant */
#define RT_GBUCKETS 9    /* GPU-count buckets: floor(log2(gpus)), capped */
#define RT_SUBMITS 32    /* recent submit times kept per user (submit-rate features) */

/* The last RT_K log-durations of a group of jobs, plus totals over all of them. */
typedef struct rt_ring {
    float v[RT_K];
    int32_t n, head;
    int64_t count;
    double sumlog;
    int64_t last_end;
} rt_ring_t;

/* Per-user submit-side state, built from the trace in submit order (known at submit time). */
typedef struct rt_user_submits {
    int64_t t[RT_SUBMITS];
    int32_t n, head;
    int64_t last_by_bucket[RT_GBUCKETS];
} rt_user_submits_t;

/* One workload a user submits: the same GPU count and descriptor (model, dataset, batch, amp). */
typedef struct rt_wkey {
    int32_t user, gpus, model, dataset, batch, amp;
} rt_wkey_t;

typedef struct rt_hist {
    int32_t nusers, ntenants;
    rt_ring_t *user, *user_gpus, *tenant, *tenant_gpus, cluster;
    /* per (user, workload): open addressing table of indices into wkey / wring */
    rt_wkey_t *wkey;
    rt_ring_t *wring;
    int32_t nw, capw, *wslot, nslots;
    /* submit-side features per job, computed for jobs [0, prepared) */
    rt_user_submits_t *subs;
    float *sub_feat;      /* 3 per job */
    int32_t prepared, sub_cap;
} rt_hist_t;

void rt_hist_init(rt_hist_t *h);
void rt_hist_free(rt_hist_t *h);
/* Records a finished job (its true duration) at time end. */
void rt_hist_add(rt_hist_t *h, const ds_trace_t *t, int32_t job, int64_t end);
/* Feature vector of job (DS_RT_NFEAT floats, NAN = unknown) from the history as it is now. */
void rt_features(rt_hist_t *h, const ds_trace_t *t, int32_t job, float *x);
/* Median of a ring's recent durations in seconds, NAN when empty. */
double rt_ring_median_seconds(const rt_ring_t *r);

#endif
