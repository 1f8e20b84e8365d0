/* cli.h: subcommand entry points and the workload-loading options they share. */
#ifndef DS_CLI_H
#define DS_CLI_H

#include "deepshare/coloc.h"
#include "deepshare/sim.h"
#include "deepshare/speeds.h"
#include "deepshare/synth.h"
#include "deepshare/trace.h"

/* Options that say which workload to run: a trace with its tenants, or the synthetic generator. */
typedef struct ds_workload_opts {
    const char *trace, *vc_config, *estimates, *coloc;
    /* heterogeneous clusters (docs/heterogeneous.md): node types, the speed table, the reference type */
    const char *cluster, *speeds_path, *ref_gtype;
    ds_speeds_t *speeds;    /* where ds_workload_load reads the speed table (the caller's, zeroed; may be NULL
                               for commands without GPU types); nrows > 0 once read */
    ds_synth_config_t synth;
    int synth_given;
    double arrival_scale;   /* inter-arrival gaps divided by this (1: as given) */
    int drop_estimates;     /* forget the trace's own estimates (policies then use --predictor's source) */
    /* the ground truth of unprofiled pairs (--missing-rho X|model, SPEC 7.2) */
    double missing_rho_value;      /* 1.0 */
    int missing_rho_model;
    const char *missing_rho_profile, *missing_rho_single;
} ds_workload_opts_t;

void ds_workload_opts_default(ds_workload_opts_t *o);
/* Handles one workload option; returns 1 if it was one (consumed optarg), 0 if not, -1 on a bad value. */
int ds_workload_opt(ds_workload_opts_t *o, const char *name, const char *arg);
/* The shipped file data/gavel/NAME (speeds.csv, pairs.csv): installed, else in the source tree; NULL if neither. */
const char *ds_gavel_file(const char *name, char *buf, size_t n);
/* Loads the trace (and estimates, colocation profile, node types and speed table when given). */
int ds_workload_load(const ds_workload_opts_t *o, ds_trace_t *t, ds_coloc_t *coloc, int *have_coloc, ds_error_t *err);
/* ds_workload_load for a command: on failure the error is printed (ds_die_error), the trace freed, and
 * nonzero returned. */
int ds_workload_open(const ds_workload_opts_t *o, ds_trace_t *t, ds_coloc_t *coloc, int *have_coloc);

/* Sets the truth of c's unprofiled pairs for t from o (missing_rho.c). */
int ds_missing_rho_apply(ds_coloc_t *c, const ds_trace_t *t, const ds_workload_opts_t *o, ds_error_t *err);

int ds_cmd_simulate(int argc, char **argv);
int ds_cmd_explain(int argc, char **argv);
int ds_cmd_train(int argc, char **argv);
int ds_cmd_predict(int argc, char **argv);
int ds_cmd_compare(int argc, char **argv);
int ds_cmd_suite(int argc, char **argv);
int ds_cmd_import(int argc, char **argv);
int ds_cmd_replay_live(int argc, char **argv);
int ds_cmd_usage(int argc, char **argv);

/* Memory: the most this process may use (the least of physical memory, ulimit -v / -d, the environment's
 * DS_MEM_LIMIT (bytes, or with a K, M or G suffix) and a container's limit; what names which), and whether a workload fits before it is built or run: the synthetic generator's
 * sizes (cycle: the series' sampling period), or a loaded trace run `concurrent` times side by side. An error
 * (DS_ENOMEM) names the memory needed and the limit. */
int64_t ds_mem_limit(char *what, size_t n);
int ds_fits_synth(const ds_synth_config_t *c, int64_t cycle, ds_error_t *err);
int ds_fits_run(const ds_trace_t *t, const ds_sim_config_t *sc, int concurrent, ds_error_t *err);

/* Parses integers/floats of options with a clear message on failure. */
int ds_parse_i64(const char *opt, const char *s, int64_t min, int64_t max, int64_t *out);
int ds_parse_f64(const char *opt, const char *s, double min, double max, double *out);
void ds_die_error(const ds_error_t *err);

#endif
