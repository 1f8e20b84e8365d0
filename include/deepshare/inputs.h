/* inputs.h: the tables a policy reads besides the trace (Lucid's sharing scores and throughput prediction).
 * The policy declares them (ds_policy_ops_t.inputs: a parameter that names a file, and the kind of table in
 * it) and takes them parsed (ds_policy_ops_t.config_input); the driver reads them through the io layer
 * (ds_input_set), so that the engine, policies included, does no I/O. */
#ifndef DS_INPUTS_H
#define DS_INPUTS_H

#include "deepshare/common.h"

typedef enum {
    DS_INPUT_LUCID_LABELS = 1, /* sharing score per workload (single_data.csv): a ds_lucid_labels_t */
    DS_INPUT_LUCID_SERIES = 2, /* predicted cluster throughput per time bin: a ds_lucid_series_t */
} ds_input_kind_t;

/* One input of a policy: the parameter that names its file ("lucid-single") and what the file holds. */
typedef struct ds_policy_input {
    const char *key;
    ds_input_kind_t kind;
} ds_policy_input_t;

/* A policy's taker of one parsed input (ds_policy_ops_t.config_input): table is malloc'd, of the input's
 * kind, and the policy's from the call on, whether it returns DS_OK or an error. */
typedef int (*ds_input_take_fn)(void *config, const char *key, void *table, ds_error_t *err);

/* io layer (src/trace/policy_inputs.c), for drivers: when key names one of inputs (an array ended by a NULL
 * key; NULL: none), reads the file at path as that input's kind and hands the table to take; a file that
 * cannot be read or parsed is an error naming the file, line and column. DS_ENOTFOUND when key is not an
 * input (the driver then calls config_set). */
int ds_input_set(const ds_policy_input_t *inputs, ds_input_take_fn take, void *config, const char *key,
                 const char *path, ds_error_t *err);

#endif
