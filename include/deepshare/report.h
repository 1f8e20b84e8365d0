/* report.h: turning simulation results into the terminal table, the JSON summary and CSV files. */
#ifndef DS_REPORT_H
#define DS_REPORT_H
/* layering (CMakeLists.txt): the report layer's header, out of reach of the layers below it */
#if defined(DS_LAYER_BASE) || defined(DS_LAYER_ENGINE) || defined(DS_LAYER_IO) || defined(DS_LAYER_SIM) || defined(DS_LAYER_PREDICT)
#error "deepshare/report.h belongs to the report layer: this layer may not include it (see CMakeLists.txt)"
#endif

#include <stdio.h>
#include "deepshare/sim.h"

/* Extra labels printed with a result (which predictor fed the policy, etc.). */
typedef struct ds_report_meta {
    const char *predictor;   /* "oracle", "model", "file", or NULL when the policy uses none */
    const char *trace;       /* trace description */
    const char *estimates;   /* duration estimates the run used: "model", "oracle", "file:<path>", or NULL */
} ds_report_meta_t;

/* Writes the summary object (policy, mode, jobs, avg_jct, ... tenants[]) as JSON text. */
int ds_report_json(FILE *f, const ds_sim_result_t *r, const ds_report_meta_t *m);
/* Writes several summaries as a JSON array. */
int ds_report_json_many(FILE *f, const ds_sim_result_t *const *r, const ds_report_meta_t *m, int n);
/* Human table: one row per result. */
void ds_report_table(FILE *f, const ds_sim_result_t *const *r, int n);
/* Per-tenant table of one result. */
void ds_report_tenant_table(FILE *f, const ds_sim_result_t *r);
/* jobs.csv, timeseries.csv, tenants.csv and qad.csv in dir (created if needed). */
int ds_report_write_csv(const char *dir, const ds_trace_t *t, const ds_sim_result_t *r, ds_error_t *err);
/* One-line CSV header and rows of summaries (summary.csv). */
int ds_report_summary_csv(FILE *f, const ds_sim_result_t *const *r, int n);

#endif
