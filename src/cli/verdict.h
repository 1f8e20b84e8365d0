/* verdict.h: the goal of the benchmark suite (docs/results.md, "Benchmark suite") judged on one workload's
 * results: DeepShare against the best of all pooled baselines (research and production models), the best
 * partitioned baseline, and, named apart, the best production model (SPEC 7.1). */
#ifndef DS_CLI_VERDICT_H
#define DS_CLI_VERDICT_H

#include <stdio.h>

/* One policy's figures in one mode. */
typedef struct ds_vrow {
    char policy[32];
    int pooled;
    int production;             /* set by ds_verdict_judge: the policy declares DS_POLICY_PRODUCTION */
    double avg_queue, p99_queue, compliance, avg_jct;
    double lost_gpu_hours;      /* GPU-hours preemptions cost (shown, not judged) */
} ds_vrow_t;

typedef struct ds_verdict {
    int have_ds, have_pooled_base, have_part_base, have_prod;
    ds_vrow_t ds;               /* DeepShare, pooled */
    ds_vrow_t best_pooled;      /* the pooled baseline with the lowest average queueing delay */
    ds_vrow_t best_prod;        /* the pooled production model with the lowest average queueing delay */
    double prod_ratio;          /* DeepShare's average queueing delay / best_prod's (0 when either is 0) */
    ds_vrow_t best_part;        /* the partitioned baseline with the lowest average queueing delay */
    double min_pooled_p99;      /* lowest p99 queueing delay of any pooled baseline */
    double best_compliance;     /* highest compliance of any baseline in either mode */
    double compliance_target;   /* max(theta, best) where some run attains theta, else the best */
    int theta_attained;         /* some run (any policy, any mode) reaches theta */
    int queue_ok, p99_ok, compliance_ok, ok;
} ds_verdict_t;

/* The policy a row is of: its name is the policy's, or NAME+VARIANT for a policy run with other options (the
 * suite's "kai+fastest", "deepshare+blind"); NULL when no registered policy has that name. */
const struct ds_policy_ops *ds_vrow_ops(const char *policy);
/* Judges rows (every policy, both modes if available); theta is the compliance goal (0.95). Which rows are
 * production models comes from the registry (the policy's props), never from a list of names. */
void ds_verdict_judge(const ds_vrow_t *rows, int n, double theta, ds_verdict_t *v);
/* One line: DeepShare's figures, the best baselines', and met / missed per criterion. */
void ds_verdict_print(FILE *f, const ds_verdict_t *v);

#endif
