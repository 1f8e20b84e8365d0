/* synth.h: the seeded synthetic workload generator (the built-in default workload). */
#ifndef DS_SYNTH_H
#define DS_SYNTH_H
/* layering (CMakeLists.txt): the io layer's header, out of reach of the layers below it */
#if defined(DS_LAYER_BASE) || defined(DS_LAYER_ENGINE)
#error "deepshare/synth.h belongs to the io layer: this layer may not include it (see CMakeLists.txt)"
#endif

#include "deepshare/speeds.h"
#include "deepshare/trace.h"

typedef struct ds_synth_config {
    uint64_t seed;          /* 1 */
    int64_t jobs;           /* 4000 */
    int32_t tenants;        /* 6 */
    int32_t nodes;          /* 24 (8 GPUs each); quotas split across tenants */
    int32_t gpus_per_node;  /* 8 */
    double days;            /* 0: span follows from load with durations unscaled; > 0: fixed span, durations scaled */
    double load;            /* 1.0: offered GPU-time / capacity over the span */
    double be_share;        /* 0.0: fraction of jobs submitted explicitly as BE */
    double noisy;           /* 0: off; F > 0: the smallest tenant offers F x its quota in bursts (half of
                               each day), the others 0.8 x load of theirs each */
    double large_share;     /* 0: off; share of GPU-time in jobs of 16-64 GPUs (tenants with quota >= 16) */
    /* Heterogeneous cluster (docs/heterogeneous.md): "v100:12,p100:8,k80:4" nodes of each GPU type (replaces
     * nodes); the workloads are drawn from speeds, the table of their throughput on each type; NULL: one kind */
    const char *gpu_types;
    const ds_speeds_t *speeds;
    double type_requests;   /* 0.25: share of users who ask for one GPU type (their tenant's largest) */
} ds_synth_config_t;

void ds_synth_config_default(ds_synth_config_t *c);
/* Fills an empty trace with tenants and jobs (and node types, with gpu_types); deterministic for a seed. */
int ds_synth_generate(ds_trace_t *t, const ds_synth_config_t *c, ds_error_t *err);

#endif
