/* predict_cli.h: helpers the train and predict subcommands share. */
#ifndef DS_PREDICT_CLI_H
#define DS_PREDICT_CLI_H

#include <stdio.h>

#include "deepshare/trace.h"

/* End time of every job under the rule named by finish: "fifo" (a FIFO replay), "lower"
 * (submit + duration) or a jobs.csv path; desc gets a description for the report. */
int ds_cli_finish_times(ds_trace_t *t, const char *finish, int64_t *end, const char **desc, ds_error_t *err);
/* Log callback of the models: one line on stderr. */
void ds_cli_log_stderr(void *ctx, const char *msg);
/* The entry of 'train' and 'predict' (cmd): help without a model or with --help, else the model's
 * subcommand (runtime or interference) on the remaining arguments. */
int ds_cli_model_cmd(const char *cmd, int argc, char **argv, void (*help)(FILE *f), int (*runtime)(int, char **),
                     int (*interference)(int, char **));

#endif
