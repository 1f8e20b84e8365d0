/* replay.h: the 'replay' policy, which makes no decision of its own: it starts, stops and classes jobs
 * exactly when and where an observed schedule (a live cluster's run, deepshare replay-live) says, so that
 * the simulator's metric code (queueing delay, JCT, GPU allocation, QAD compliance, preemptions) scores
 * a live run the same way it scores a simulated one. Not in the registry: only drivers that have a
 * schedule to replay use it. */
#ifndef DS_REPLAY_H
#define DS_REPLAY_H
/* layering (CMakeLists.txt): the engine layer's header, out of reach of the layers below it */
#if defined(DS_LAYER_BASE) || defined(DS_LAYER_IO)
#error "deepshare/replay.h belongs to the engine layer: this layer may not include it (see CMakeLists.txt)"
#endif

#include "deepshare/policy.h"

/* One run of a job on the cluster: [start, end) on one node (-1: any node), as class G or BE. */
typedef struct ds_spell {
    int64_t start, end;
    int32_t node;
    uint8_t klass; /* DS_CLASS_G or DS_CLASS_BE */
    uint8_t last;  /* the run that completed the job: it ends by its own work, not by a preemption */
} ds_spell_t;

/* A whole observed schedule, the policy's config (the caller owns it; it must outlive the run). Job j's
 * runs are spells[first[j] .. first[j + 1]), in time order, the last one with last = 1. The trace's job
 * durations must be the sum of each job's run lengths and the engine's restart overheads 0: the job then
 * completes exactly at its last run's end. */
typedef struct ds_script {
    const ds_spell_t *spells;
    const int64_t *first; /* njobs + 1 entries */
    int32_t njobs;
} ds_script_t;

extern const ds_policy_ops_t ds_policy_replay;

#endif
