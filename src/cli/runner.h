/* runner.h: choosing policies, passing their parameters and running one policy on a workload; shared by
 * 'simulate' and 'compare' so both report identical numbers for the same inputs. */
#ifndef DS_CLI_RUNNER_H
#define DS_CLI_RUNNER_H

#include "deepshare/policy.h"
#include "deepshare/sim.h"

/* One policy to run: its ops, its parameter object and, after ds_run_one, its result. */
typedef struct ds_run {
    const ds_policy_ops_t *ops;
    void *config;
    ds_sim_result_t res;
    int ok;
} ds_run_t;

/* Resolves a comma-separated list of policy names, or "all", into runs with default parameters.
 * opt names the option in messages ("--policy"). Returns 0, or -1 after printing why. */
int ds_runs_pick(const char *list, const char *opt, ds_run_t **out, int *n);
/* Gives key=value to every run whose policy knows the key. Returns 0 when at least one took it, 1 when
 * none knows it, -1 (after printing) when a policy rejected the value. where: "file:line" or NULL. */
int ds_runs_set_param(ds_run_t *runs, int n, const char *key, const char *val, const char *where);
/* Applies a 'name = value' file ('#' starts a comment). Returns 0 or -1 after printing why. */
int ds_runs_read_config(ds_run_t *runs, int n, const char *path);
/* 1 when any of the runs' policies uses predictors or ranks by estimates (which fall back on the
 * runtime predictor). */
int ds_runs_use_predictors(const ds_run_t *runs, int n);
/* Which duration estimates a run of ops used, for the report: "file:<path>" (every job had one),
 * "file:<path>+<kind>" (the predictor filled the gaps), "<kind>" (the runtime predictor: "model",
 * "oracle") or NULL for policies that use none. Returns buf or NULL. */
const char *ds_run_estimates(const ds_policy_ops_t *ops, const ds_trace_t *t, const char *kind, const char *path,
                             char *buf, size_t n);
/* Frees results and parameter objects, then the array. */
void ds_runs_free(ds_run_t *runs, int n);

/* Handles a valueless cluster/run flag (--check-invariants, --no-cpu-check): 1 if it was one, else 0. */
int ds_run_flag(ds_sim_config_t *sc, const char *name);
/* Handles a cluster/run option with a value (--mode, --gpus-per-node, --cpus-per-node, --pool-nodes, --k,
 * --cycle, --window): 1 if it was one, 0 if not, -1 after printing why the value is bad. cmd prefixes messages. */
int ds_run_opt(ds_sim_config_t *sc, const char *cmd, const char *name, const char *val);

/* Handles an option every simulating command takes: workload (ds_workload_opt), cluster/run
 * (ds_run_opt) or predictor (ds_cli_predictors_opt). 1 if it was one, 0 if not, -1 after printing. */
struct ds_workload_opts;
struct ds_cli_predictors;
int ds_cli_common_opt(const char *cmd, struct ds_workload_opts *wo, ds_sim_config_t *sc, struct ds_cli_predictors *pred,
                      const char *name, const char *val);

/* Splits one command-line word "--name" or "--name=value" into name (size n) and *val (NULL when the
 * value is the next word). Returns 1 for an option, 0 for --help/-h, -1 after printing why not. */
int ds_cli_split(const char *cmd, const char *arg, char *name, size_t n, const char **val);
/* Takes the next word as the value of --name when *val is NULL. Returns 0, or -1 after printing. */
int ds_cli_value(const char *cmd, int argc, char **argv, int *i, const char *name, const char **val);

/* Runs r's policy on the trace with sc (policy fields are filled from r), timing it into
 * r->res.wall_seconds. Safe to call from several threads on the same trace and sc. Returns 0 or an error
 * (err filled, r->ok stays 0). */
int ds_run_one(const ds_trace_t *t, const ds_sim_config_t *sc, ds_run_t *r, ds_error_t *err);

#endif
