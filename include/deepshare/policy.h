/* policy.h: the one ops struct every scheduling policy implements, and the registry listing them. */
#ifndef DS_POLICY_H
#define DS_POLICY_H

#include <stdio.h>

#include "deepshare/engine.h"

/* One named counter a policy reports (e.g. "preempt_reclaim"). */
typedef struct ds_policy_stat {
    char name[40];
    double value;
} ds_policy_stat_t;

typedef struct ds_policy_ops {
    const char *name;        /* "fifo", "sjf", ... */
    const char *summary;     /* one line for --help */
    /* Optional: lay out partitions (ds_engine_add_part, e->tenant_part) instead of the default
     * layout of the engine mode (one per tenant, or one pool). */
    int (*setup)(ds_engine_t *e, const void *config, ds_error_t *err);
    /* Allocates policy state. config is policy-specific (may be NULL). */
    int (*init)(ds_engine_t *e, const void *config, void **state, ds_error_t *err);
    void (*fini)(void *state);
    /* A job became pending in its partition (arrival or preemption). */
    void (*enqueue)(ds_engine_t *e, void *state, int32_t job, int64_t now);
    /* Optional: a job the driver started itself, never seen pending (ds_engine_adopt: the Slurm
     * daemon after a restart); the policy adds it to its running-job bookkeeping. */
    void (*adopt)(ds_engine_t *e, void *state, int32_t job, int64_t now);
    /* Optional: a start this policy made was taken back by the driver (ds_engine_cancel_start): the
     * job is pending again, not preempted. Without it the engine calls enqueue. */
    void (*cancel_start)(ds_engine_t *e, void *state, int32_t job, int64_t now);
    /* A running job finished (resources already released). Optional. */
    void (*on_finish)(ds_engine_t *e, void *state, int32_t job, int64_t now);
    /* Place/preempt in one partition. timer is 1 when called for a periodic wake-up. */
    void (*schedule)(ds_engine_t *e, void *state, int32_t part, int64_t now, int timer);
    /* Next periodic wake-up after now, DS_TIME_NEVER if none. Optional. */
    int64_t (*next_timer)(const ds_engine_t *e, const void *state, int64_t now);
    /* Optional policy parameters: a config object with defaults, set by name ("rho-min", "0.7")
     * from flags or a config file. config_set returns DS_ENOTFOUND for a name it does not know. */
    void *(*config_new)(void);
    void (*config_free)(void *config);
    int (*config_set)(void *config, const char *key, const char *value, ds_error_t *err);
    /* Optional: writes "name default description" lines for --help. */
    void (*config_help)(FILE *f);
    /* Optional: policy-specific invariants (called by drivers that check invariants after a pass);
     * returns 0, or nonzero with msg filled. */
    int (*check)(const ds_engine_t *e, const void *state, char *msg, size_t n);
    /* Optional: named counters of the run so far (the report prints them); returns how many were
     * written, at most max. */
    int (*stats)(const ds_engine_t *e, const void *state, ds_policy_stat_t *out, int max);
    int uses_predictors;     /* 1 when the policy calls e->predictors (the report names the predictor) */
} ds_policy_ops_t;

const ds_policy_ops_t *ds_policy_find(const char *name);
/* NULL-terminated list of all registered policies, in display order. */
const ds_policy_ops_t *const *ds_policy_list(void);

#endif
