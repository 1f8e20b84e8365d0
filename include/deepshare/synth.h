/* synth.h: the seeded synthetic workload generator (the built-in default workload). */
#ifndef DS_SYNTH_H
#define DS_SYNTH_H

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
} ds_synth_config_t;

void ds_synth_config_default(ds_synth_config_t *c);
/* Fills an empty trace with tenants and jobs; deterministic for a seed. */
int ds_synth_generate(ds_trace_t *t, const ds_synth_config_t *c, ds_error_t *err);

#endif
