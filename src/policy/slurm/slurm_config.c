/* slurm_config.c: the simulated Slurm's parameters (docs/peers.md, "Slurm: parameters"): each a Slurm
 * setting, with the value the live setup of its variant uses (deploy/slurm/variants/) in trace seconds,
 * settable by name from flags or a config file. */
#include "slurm_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef enum { P_DBL, P_INT, P_I64, P_BOOL, P_BILL } ptype_t;

typedef struct param {
    const char *name;
    ptype_t type;
    size_t off;
    double min, max;
    const char *def[2];     /* [SLM_QUOTA], [SLM_BORROW] */
    const char *slurm;      /* the Slurm setting and its own default */
    const char *help;
} param_t;

#define F(x) offsetof(slm_config_t, x)
static const param_t params[] = {
    {"slurm-weight-fairshare", P_DBL, F(w_fs), 0, 4e9, {"10000", "10000"}, "PriorityWeightFairshare (Slurm: 0)",
     "weight of the Fair Tree fair-share factor"},
    {"slurm-weight-age", P_DBL, F(w_age), 0, 4e9, {"1000", "1000"}, "PriorityWeightAge (Slurm: 0)",
     "weight of the age factor"},
    {"slurm-weight-qos", P_DBL, F(w_qos), 0, 4e9, {"0", "100000"}, "PriorityWeightQOS (Slurm: 0)",
     "weight of the QOS factor (QOS priority / highest QOS priority)"},
    {"slurm-qos-normal-priority", P_INT, F(qos_prio_normal), 0, 65535, {"100", "100"}, "sacctmgr qos normal Priority",
     "priority of QOS normal"},
    {"slurm-qos-borrow-priority", P_INT, F(qos_prio_borrow), 0, 65535, {"0", "0"}, "sacctmgr qos borrow Priority",
     "priority of QOS borrow"},
    {"slurm-decay-half-life", P_I64, F(half_life), 0, 1e9, {"18000", "18000"},
     "PriorityDecayHalfLife (Slurm: 7-0); live: 5 min at x60", "fair-share usage is halved over this many seconds (0: never)"},
    {"slurm-calc-period", P_I64, F(calc_period), 1, 1e7, {"300", "300"},
     "PriorityCalcPeriod (Slurm: 5 min); live: 1 min at x60 = 3600", "seconds between usage, fair-share and priority updates"},
    {"slurm-max-age", P_I64, F(max_age), 1, 1e9, {"36000", "36000"}, "PriorityMaxAge (Slurm: 7-0); live: 10 min at x60",
     "seconds of eligible waiting that give the full age factor"},
    {"slurm-billing", P_BILL, F(billing), 0, 2, {"cpu", "cpu"}, "TRESBillingWeights (Slurm: unset, bills CPUs)",
     "what usage bills per second: cpu (the job's CPUs), gpu (its GPUs) or job (1: every live job asks 1 CPU)"},
    {"slurm-user-assocs", P_BOOL, F(user_assocs), 0, 1, {"1", "1"}, "sacctmgr add user ... account=<tenant>",
     "one association per (account, trace user), shares 1 each; 0: one user per account (the live replays: root)"},
    {"slurm-queue-depth", P_INT, F(queue_depth), 1, 1e9, {"100", "100"}, "default_queue_depth (Slurm: 100); live: 1000",
     "jobs the main scheduler looks at in a pass triggered by a submission or completion"},
    {"slurm-sched-interval", P_I64, F(sched_interval), 1, 1e7, {"60", "60"}, "sched_interval (Slurm: 60 s)",
     "seconds between full-depth main scheduler passes while jobs wait"},
    {"slurm-backfill", P_BOOL, F(backfill), 0, 1, {"1", "1"}, "SchedulerType=sched/backfill (Slurm's default)",
     "run the backfill scheduler (0: sched/builtin, the main scheduler only)"},
    {"slurm-bf-interval", P_I64, F(bf_interval), 1, 1e7, {"30", "30"}, "bf_interval (Slurm: 30 s); live: 1 s at x60 = 60",
     "seconds between backfill passes (a pass runs only when something changed)"},
    {"slurm-bf-resolution", P_I64, F(bf_resolution), 1, 3600 * 60, {"60", "60"},
     "bf_resolution (Slurm: 60 s); live: 60 s at x60 = 3600", "time granularity of backfill reservations, s"},
    {"slurm-bf-window", P_I64, F(bf_window), 60, 1e9, {"86400", "86400"},
     "bf_window (Slurm: 1440 min); live: 1440 min at x60 = 5184000", "how far ahead backfill plans, s"},
    {"slurm-bf-max-job-test", P_INT, F(bf_max_job_test), 1, 1e9, {"500", "500"},
     "bf_max_job_test (Slurm: 500); live: 1000", "jobs one backfill pass tests at most"},
    {"slurm-time-limit-factor", P_DBL, F(limit_factor), 0.01, 1e6, {"2", "2"}, "sbatch --time (the replayer: 2x)",
     "a job's time limit: this x (its runtime estimate + the restart overhead), rounded up"},
    {"slurm-time-limit-round", P_I64, F(limit_round), 1, 1e7, {"60", "60"},
     "--time is in minutes; live: whole wall minutes at x60 = 3600", "time limits are rounded up to this many seconds"},
    {"slurm-grp-tres", P_BOOL, F(grp_tres), 0, 1, {"1", "0"}, "GrpTRES=gres/gpu=<quota>, AccountingStorageEnforce=limits",
     "each account may hold at most its quota of GPUs in running jobs"},
    {"slurm-grp-tres-types", P_BOOL, F(grp_tres_types), 0, 1, {"1", "0"},
     "GrpTRES=gres/gpu:<type>=<quota of the type>, AccountingStorageTRES=gres/gpu:<type>",
     "several GPU types: a job naming a type may start only while its account's GPUs of that type (every job's) "
     "stay within its quota of the type (with --slurm-grp-tres)"},
    {"slurm-route", P_BOOL, F(route), 0, 1, {"0", "1"}, "JobSubmitPlugins=lua (job_submit.lua)",
     "a job whose account's GPUs in QOS normal (pending or running, itself included) exceed the quota goes to QOS borrow"},
    {"slurm-route-types", P_BOOL, F(route_types), 0, 1, {"1", "1"}, "job_submit.lua reading the request's GRES type",
     "several GPU types: a job naming a type also goes to QOS borrow when the account's QOS-normal GPUs named that type "
     "(itself included) exceed its quota of the type (with --slurm-route)"},
    {"slurm-preempt", P_BOOL, F(preempt), 0, 1, {"0", "1"}, "PreemptType=preempt/qos, PreemptMode=REQUEUE (Slurm: none, OFF)",
     "QOS normal preempts QOS borrow by requeue"},
    {"slurm-grace-time", P_I64, F(grace_time), 0, 1e7, {"0", "0"}, "GraceTime of QOS borrow (Slurm: 0)",
     "seconds a preempted job runs on before it is requeued"},
    {"slurm-preempt-exempt-time", P_I64, F(exempt_time), -1, 1e9, {"-1", "-1"}, "PreemptExemptTime (Slurm: -1, off)",
     "a job that has run less than this since its start is not a preemption candidate (-1: off)"},
    {"slurm-preempt-reorder-count", P_INT, F(reorder_count), 0, 100, {"1", "1"}, "PreemptParameters=reorder_count (Slurm: 1)",
     "passes re-ordering the victims to preempt fewer jobs"},
    {"slurm-preempt-strict-order", P_BOOL, F(strict_order), 0, 1, {"0", "0"}, "PreemptParameters=strict_order (Slurm: off)",
     "re-order by moving the last victim first only"},
    {"slurm-preempt-youngest-first", P_BOOL, F(youngest_first), 0, 1, {"0", "0"}, "preempt_youngest_first (Slurm: off)",
     "candidates youngest start first instead of by QOS priority and size"},
    {"slurm-requeue-delay", P_I64, F(requeue_delay), 0, 1e7, {"121", "121"},
     "AuthInfo=cred_expire (Slurm: 120 s) + 1; live: 6 s at x60 = 360", "a requeued job may start again this many seconds later"},
};
#undef F
#define NPARAMS (sizeof params / sizeof params[0])

static const char *const bill_names[] = {"cpu", "gpu", "job"};

/* Flags use dashes, config files may use underscores. */
static void norm(char *d, size_t n, const char *k)
{
    size_t i = 0;
    for (; k[i] && i + 1 < n; i++) d[i] = k[i] == '_' ? '-' : (char)tolower((unsigned char)k[i]);
    d[i] = '\0';
}

static int set_param(slm_config_t *c, const param_t *p, const char *value, ds_error_t *err)
{
    char *f = (char *)c + p->off;
    if (p->type == P_BILL) {
        for (int i = 0; i < 3; i++)
            if (!strcmp(value, bill_names[i])) {
                *(int *)f = i;
                return DS_OK;
            }
        ds_error_set(err, NULL, 0, p->name, "'%s' is not cpu, gpu or job", value);
        return DS_EINVAL;
    }
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
    if (p->type == P_DBL) *(double *)f = d;
    else if (p->type == P_I64) *(int64_t *)f = (int64_t)d;
    else *(int32_t *)f = (int32_t)d;
    return DS_OK;
}

void slm_config_default(slm_config_t *c, int variant)
{
    memset(c, 0, sizeof *c);
    c->variant = variant;
    for (size_t i = 0; i < NPARAMS; i++) {
        ds_error_t err;
        int rc = set_param(c, &params[i], params[i].def[variant], &err);
        DS_ASSERT(rc == DS_OK);
    }
}

int slm_config_set(void *config, const char *key, const char *value, ds_error_t *err)
{
    slm_config_t *c = config;
    char k[64];
    norm(k, sizeof k, key);
    for (size_t i = 0; i < NPARAMS; i++)
        if (!strcmp(params[i].name, k)) return set_param(c, &params[i], value, err);
    return DS_ENOTFOUND;
}

void slm_config_help(FILE *f, int variant)
{
    for (size_t i = 0; i < NPARAMS; i++)
        fprintf(f, "  --%-28s %-6s %s [%s]\n", params[i].name, params[i].def[variant], params[i].help,
                params[i].slurm);
}

void slm_config_free(void *config) { free(config); }

void *slm_config_new(int variant)
{
    slm_config_t *c = ds_xmalloc(sizeof *c);
    slm_config_default(c, variant);
    return c;
}
