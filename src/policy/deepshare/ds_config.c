/* ds_config.c: DeepShare's parameters: defaults, setting them by name from flags or a config file,
 * the ablation switches of docs/policy.md §8, and the --help text. */
#include "ds_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void dsp_config_default(dsp_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->cycle = 60;
    c->lambda = 0.3;
    c->theta = 0.95;
    c->band = 0.05;
    c->m = 4.0;
    c->tau_max = 0.95;
    c->work_conserving = 1;
    c->g_prefix = 1;
    c->quota_backfill = 1;
    c->reserve_after = 0;
    c->reserve_max = 1;
    c->cpu_floor = 0.5;
    c->cpu_slowdown = 0.0;
    c->alpha = 0.5;
    c->beta = 0.3;
    c->ckpt_aware = 1;
    c->gamma = 0.5;
    c->eps = 1e-6;
    c->rho_min = 0.7;
    c->max_candidates = 64;
    c->w = 3;
    c->monitor_z = 2.0;
    c->admit_floor = 1;
    c->monitor_threshold = DSP_MON_CURRENT;
    c->revoke_for = DSP_RF_SHORTER;
    c->learn_retention = 1;
    c->probe_z = 3.0;
    c->type_quota = DSP_TQ_TYPED;
    c->type_choice = DSP_TC_ADVANTAGE;
    c->share_first = 1;
    c->share_first_min = 0.0;
    c->align_ends = 0;
    c->fair_share = DSP_FS_OFF;
    c->fair_weight = DSP_FW_QUOTA;
    c->overrun_yield = 1;
    c->batch_evidence = 1;
    c->quota_yield = 1;
    c->attained_yield = 2;
    c->young_victim = 1.0;
    c->served_g_in_qb = 1;
    c->served_reclaim = 1;
    c->prediction = c->interference_aware = c->colocation = c->borrowing = 1;
    c->preemption = c->cpu_reclaim = c->monitor = 1;
}

typedef enum { P_DBL, P_INT, P_I64, P_BOOL } ptype_t;

typedef struct param {
    const char *name;
    ptype_t type;
    size_t off;
    double min, max;
    const char *def, *help;
} param_t;

#define F(x) offsetof(dsp_config_t, x)
static const param_t params[] = {
    {"cycle", P_I64, F(cycle), 1, 86400, "60", "QAD and retention-monitoring period in seconds"},
    {"lambda", P_DBL, F(lambda), 0, 1, "0.3", "weight of the newest QAD in the smoothed QAD (higher: reacts faster)"},
    {"theta", P_DBL, F(theta), 0, 1, "0.95", "a tenant is under-served when its smoothed QAD is below this"},
    {"band", P_DBL, F(band), 1e-6, 1, "0.05", "width of a QAD band; prediction orders jobs only inside a band"},
    {"m", P_DBL, F(m), 0, 1000, "4", "BE cap: a tenant's BE GPUs classified in normal order stay within m x quota"},
    {"work-conserving", P_BOOL, F(work_conserving), 0, 1, "1", "GPUs still idle after G and BE placement go to the jobs left over, as BE (0: leave them idle)"},
    {"g-prefix", P_BOOL, F(g_prefix), 0, 1, "1", "G is a prefix of each tenant's order (0: later jobs may pass one that does not fit the quota)"},
    {"quota-backfill", P_BOOL, F(quota_backfill), 0, 1, "1", "with g-prefix, a later job of the tenant may still be G in the quota the prefix closed when it is predicted to end before the tenant's own running G jobs free what the job at the prefix lacks (backfill within the quota; one GPU type)"},
    {"tau-max", P_DBL, F(tau_max), 0, 1, "0.95", "cap of the colocation retention threshold under load"},
    {"reserve-after", P_I64, F(reserve_after), 0, 1e9, "0", "a job waiting longer than this (s) reserves the nodes freeing soonest; 0: off"},
    {"reserve-max", P_INT, F(reserve_max), 1, 1000000, "1", "new reservations per pass at most"},
    {"cpu-floor", P_DBL, F(cpu_floor), 0.01, 1, "0.5", "CPU/memory reclamation shrinks BE jobs to this share of their request"},
    {"cpu-slowdown", P_DBL, F(cpu_slowdown), 0, 0, "0", "progress lost by shrunk jobs; only 0 (Venus has no CPU-sensitivity data)"},
    {"alpha", P_DBL, F(alpha), 0, 1, "0.5", "preemption cost weight of prior disruption (victim's preemptions / 3)"},
    {"beta", P_DBL, F(beta), 0, 1, "0.3", "preemption cost weight of the work a preemption loses, as a share of the job: since its last checkpoint when it declares an interval (ckpt), all it has run otherwise (near completion is expensive)"},
    {"ckpt-aware", P_BOOL, F(ckpt_aware), 0, 1, "1", "beta's work term counts from the victim's last checkpoint when it has an interval (0: all it has run, the cost before issue #30; ablation)"},
    {"min-runtime", P_I64, F(min_runtime), 0, 1e9, "0", "a BE job is not preempted to reclaim GPUs in its first N s of a run (as KAI's minRuntime; revocations of a slow pair still apply); 0: off"},
    {"young-victim", P_DBL, F(young_victim), 0, 1000, "1", "a run younger than this x the typical run (the median run time of the latest 1,024 finished jobs; none before 16 have finished) costs a reclaim 1 more as a victim, as much as an older one can cost at most, so it goes only where every set of older runs costs more; 0: off"},
    {"gamma", P_DBL, F(gamma), 0, 10, "0.5", "exponent of contention pressure (lower: bursts tighten colocation less)"},
    {"eps", P_DBL, F(eps), 1e-12, 1, "1e-6", "guard of contention pressure when no GPU is free"},
    {"rho-min", P_DBL, F(rho_min), 0, 1, "0.7", "colocation threshold at zero pressure (lower: more, slower pairs)"},
    {"max-candidates", P_INT, F(max_candidates), 1, 1000000, "64", "colocation partners examined per job"},
    {"w", P_INT, F(w), 1, 1000000, "3", "consecutive low retention samples that revoke a colocation"},
    {"gpu-time-order", P_BOOL, F(gpu_time_order), 0, 1, "0", "inside a QAD band, order by predicted remaining GPU-time (x GPUs, as QSSF) instead of remaining time"},
    {"quota-yield", P_BOOL, F(quota_yield), 0, 1, "1", "an under-served tenant whose next job (at most its quota) is kept out of its quota only by its own running G jobs has those predicted to run longer than that job yield their G class (run on as BE, longest first, just enough), so the job is G and may reclaim; 0: the job waits for its tenant's own runs to end"},
    {"batch-evidence", P_BOOL, F(batch_evidence), 0, 1, "1", "the runtime predictor's batch evidence revises a job's estimate: once a sibling (same owner and GPU count, submitted in the same burst) finishes, the unfinished ones are expected to run as long as their finished siblings that ran longer than they have (re-sorting the waiting ones), and a run within its batch's evidence has not outlived its prediction (deepshared: with runtime_model = boosted and batch_gap > 0; its history predictor has no batches); 0: the submit-time prediction only"},
    {"attained-yield", P_DBL, F(attained_yield), 0, 1000, "2", "a G run that has run longer than this x the typical run (the median run time of the latest 1,024 finished jobs; none before 16 have finished), while its tenant's next job is predicted to end before it, yields its G class as an overrun yield does (least attained service inside a tenant's quota, the quota going by predicted remaining time); 0: off"},
    {"overrun-yield", P_BOOL, F(overrun_yield), 0, 1, "1", "a G job that has run longer than predicted, while its tenant has a job waiting, yields its G class (runs on as BE, expected to run as long again; promoted back once nothing of its tenant waits); 0: G until it ends"},
    {"served-reclaim", P_BOOL, F(served_reclaim), 0, 1, "1", "a served tenant's G job (smoothed QAD >= theta, inside its quota) may reclaim too, but only best-effort runs of tenants above their quota, each tenant left at or above it, and only runs predicted to outlast the job (SRPT's rule); not where quotas are typed; needs prediction. 0: only under-served tenants reclaim (SPEC 4.4)"},
    {"served-g-in-qb", P_BOOL, F(served_g_in_qb), 0, 1, "1", "G jobs of a served tenant (smoothed QAD >= theta) are placed in the BE queue's order (predicted remaining time), beside best-effort work; only under-served tenants' G jobs go before it (0: every G job first, as in SPEC 4.3)"},
    {"admit-floor", P_BOOL, F(admit_floor), 0, 1, "1", "a pair is admitted when the interference model predicts both at or above rho-min; the monitor then holds it to the current threshold (0: the prediction must meet the current threshold)"},
    {"monitor-z", P_DBL, F(monitor_z), 0, 100, "2", "...only when the pair's mean sample is also this many standard errors below threshold (0: off)"},
    {"prediction", P_BOOL, F(prediction), 0, 1, "1", "0: order by submit time inside a QAD band (ablation)"},
    {"interference-aware", P_BOOL, F(interference_aware), 0, 1, "1", "0: admit colocation on memory fit only (ablation)"},
    {"colocation", P_BOOL, F(colocation), 0, 1, "1", "0: never share a GPU (ablation)"},
    {"borrowing", P_BOOL, F(borrowing), 0, 1, "1", "0: hard quotas, no BE class; pairs of G jobs may share (ablation)"},
    {"preemption", P_BOOL, F(preemption), 0, 1, "1", "0: never reclaim BE GPUs by preemption"},
    {"cpu-reclaim", P_BOOL, F(cpu_reclaim), 0, 1, "1", "0: skip CPU/memory reclamation"},
    {"monitor", P_BOOL, F(monitor), 0, 1, "1", "0: never revoke a colocation"},
    {"share-first", P_BOOL, F(share_first), 0, 1, "1", "a BE job shares a GPU before taking free ones when both jobs are predicted to keep >= tau-max (0: free GPUs first)"},
    {"align-ends", P_BOOL, F(align_ends), 0, 1, "0", "a job of less than a node takes free GPUs on the fullest node whose residents are predicted to run at least as long as it, so that it delays no node's becoming wholly free; where none is, the fullest node (0: always the fullest node; off: it helps with true durations, and costs the synthetic workload ~10% with the learned ones)"},
    {"fair-share", P_INT, F(fair_share), 0, 3, "0", "fair division of the pool (pooled): each tenant's share is what it asks for up to its quota, plus the rest water-filled by fair-weight over the tenants asking more; 1: best-effort work of tenants within their share is placed first (as KAI's queue order); 2: such work may reclaim BE GPUs of tenants above their share, leaving them at it (as KAI's over-quota reclaim); 3: both; 0: off, BE work in predicted remaining time order only"},
    {"share-first-min", P_DBL, F(share_first_min), 0, 1, "0", "share-first needs both predicted retentions at least max(this, tau-max)"},
    {"learn-retention", P_BOOL, F(learn_retention), 0, 1, "1", "admission judges a workload pair by the monitor's measurements once it has any (0: the model only)"},
    {"probe-z", P_DBL, F(probe_z), 0, 100, "3", "a workload pair the monitor has not measured yet is admitted when its predicted retention plus probe-z x the interference model's uncertainty (the forest: its trees' spread) meets the threshold, one such probe per pair at a time (0: off; the measured profile is certain)"},
};
#undef F

/* Flags use dashes, config files may use underscores. */
static void norm(char *d, size_t n, const char *k)
{
    size_t i = 0;
    for (; k[i] && i + 1 < n; i++) d[i] = k[i] == '_' ? '-' : (char)tolower((unsigned char)k[i]);
    d[i] = '\0';
}

static int set_ablation(dsp_config_t *c, const char *v, ds_error_t *err)
{
    if (!strcmp(v, "none")) return DS_OK;
    if (!strcmp(v, "no-prediction")) c->prediction = 0;
    else if (!strcmp(v, "interference-blind")) c->interference_aware = 0;
    else if (!strcmp(v, "no-colocation")) c->colocation = 0;
    else if (!strcmp(v, "no-borrowing")) c->borrowing = 0, c->colocation = 0;
    else if (!strcmp(v, "hard-colocate")) c->borrowing = 0, c->colocation = 1;
    else {
        ds_error_set(err, NULL, 0, "ablation",
                     "'%s' is not one of none, no-prediction, interference-blind, no-colocation, no-borrowing, hard-colocate", v);
        return DS_EINVAL;
    }
    return DS_OK;
}

int dsp_config_set(void *config, const char *key, const char *value, ds_error_t *err)
{
    dsp_config_t *c = config;
    char k[64];
    norm(k, sizeof k, key);
    if (!strcmp(k, "ablation")) return set_ablation(c, value, err);
    if (!strcmp(k, "type-quota") || !strcmp(k, "type-choice")) {
        static const char *const q[] = {"typed", "effective", "blind"}, *const ch[] = {"assured", "fastest", "advantage", "blind"};
        int quota = k[5] == 'q';
        const char *const *names = quota ? q : ch;
        int nn = quota ? 3 : 4;
        for (int i = 0; i < nn; i++)
            if (!strcmp(value, names[i])) {
                if (quota) c->type_quota = i;
                else c->type_choice = i;
                return DS_OK;
            }
        ds_error_set(err, NULL, 0, quota ? "type-quota" : "type-choice", "'%s' is not %s", value,
                     quota ? "typed, effective or blind" : "assured, fastest, advantage or blind");
        return DS_EINVAL;
    }
    if (!strcmp(k, "conditional-remaining")) {
        static const char *const names[] = {"none", "victims", "order", "all"};
        for (int i = 0; i < 4; i++)
            if (!strcmp(value, names[i])) {
                c->cond_remaining = i;
                return DS_OK;
            }
        ds_error_set(err, NULL, 0, "conditional-remaining", "'%s' is not none, victims, order or all", value);
        return DS_EINVAL;
    }
    if (!strcmp(k, "fair-weight")) {
        if (!strcmp(value, "quota")) c->fair_weight = DSP_FW_QUOTA;
        else if (!strcmp(value, "equal")) c->fair_weight = DSP_FW_EQUAL;
        else {
            ds_error_set(err, NULL, 0, "fair-weight", "'%s' is not quota or equal", value);
            return DS_EINVAL;
        }
        return DS_OK;
    }
    if (!strcmp(k, "revoke-for")) {
        if (!strcmp(value, "any")) c->revoke_for = DSP_RF_ANY;
        else if (!strcmp(value, "shorter")) c->revoke_for = DSP_RF_SHORTER;
        else {
            ds_error_set(err, NULL, 0, "revoke-for", "'%s' is not any or shorter", value);
            return DS_EINVAL;
        }
        return DS_OK;
    }
    if (!strcmp(k, "monitor-threshold")) {
        if (!strcmp(value, "current")) c->monitor_threshold = DSP_MON_CURRENT;
        else if (!strcmp(value, "admit")) c->monitor_threshold = DSP_MON_ADMIT;
        else if (!strcmp(value, "floor")) c->monitor_threshold = DSP_MON_FLOOR;
        else if (!strcmp(value, "urgent")) c->monitor_threshold = DSP_MON_URGENT;
        else {
            ds_error_set(err, NULL, 0, "monitor-threshold", "'%s' is not current, admit, floor or urgent", value);
            return DS_EINVAL;
        }
        return DS_OK;
    }
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++) {
        const param_t *p = &params[i];
        if (strcmp(p->name, k)) continue;
        char *end;
        errno = 0;
        double d = strtod(value, &end);
        while (*end == ' ' || *end == '\t') end++;
        if (end == value || *end || errno || isnan(d)) {
            ds_error_set(err, NULL, 0, p->name, "'%s' is not a number", value);
            return DS_EINVAL;
        }
        if (d < p->min || d > p->max || (p->type != P_DBL && d != floor(d))) {
            ds_error_set(err, NULL, 0, p->name, "%s must be %s in [%g, %g]", value,
                         p->type == P_DBL ? "a number" : "an integer", p->min, p->max);
            return DS_EINVAL;
        }
        char *f = (char *)c + p->off;
        if (p->type == P_DBL) *(double *)f = d;
        else if (p->type == P_I64) *(int64_t *)f = (int64_t)d;
        else *(int *)f = (int)d;
        return DS_OK;
    }
    return DS_ENOTFOUND;
}

int dsp_config_validate(const dsp_config_t *c, ds_error_t *err)
{
    if (c->tau_max < c->rho_min) {
        ds_error_set(err, NULL, 0, "tau-max", "tau-max (%g) must be at least rho-min (%g)", c->tau_max, c->rho_min);
        return DS_EINVAL;
    }
    if (c->alpha + c->beta > 1.0 + 1e-12) {
        ds_error_set(err, NULL, 0, "alpha", "alpha + beta must be at most 1 (got %g + %g)", c->alpha, c->beta);
        return DS_EINVAL;
    }
    return DS_OK;
}

void dsp_config_help(FILE *f)
{
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++)
        fprintf(f, "  --%-20s %-6s %s\n", params[i].name, params[i].def, params[i].help);
    fprintf(f, "  --%-20s %-6s %s\n", "monitor-threshold", "current",
            "threshold a retention sample is compared with: current (recomputed), admit (at admission), floor (rho-min: "
            "only a pair the estimate misjudged is revoked) or urgent (the current one for a G member of an "
            "under-served tenant, rho-min otherwise)");
    fprintf(f, "  --%-20s %-6s %s\n", "revoke-for", "shorter",
            "which pairs measured under the monitor's threshold are revoked: any (all of them) or shorter (those "
            "under rho-min, and the others only while a waiting job of the same GPU count, predicted to end before "
            "the BE member and to keep rho-min or more beside the kept job, could take the BE member's place)");
    fprintf(f, "  --%-20s %-6s %s\n", "conditional-remaining", "none",
            "which decisions read the learned runtime model's remaining-time estimate conditional on what a job has "
            "run (the median of its recent errors beyond that; docs/predictors.md): the preemption cost (victims), "
            "the queue keys (order), all, or none (max(predicted - elapsed, 1))");
    fprintf(f, "  --%-20s %-6s %s\n", "fair-weight", "quota",
            "fair-share: the pool beyond the quotas is divided in proportion to quotas (quota) or equally (equal, KAI's "
            "default over-quota weight)");
    fprintf(f, "  --%-20s %-6s %s\n", "type-quota", "typed",
            "several GPU types: a G job counts in its tenant's quota of its type (typed), in one quota of effective "
            "GPUs weighted by type speed (effective), or types are ignored (blind)");
    fprintf(f, "  --%-20s %-6s %s\n", "type-choice", "advantage",
            "several GPU types: the type a job takes first: where it loses least against the type's average speed "
            "(advantage); its fastest for an under-served tenant's G job, else by advantage (assured); fastest; or the "
            "engine's type-blind rule (blind)");
    fprintf(f, "  --%-20s %-6s %s\n", "ablation", "none",
            "none, no-prediction, interference-blind, no-colocation, no-borrowing, hard-colocate");
}
