/* policy_inputs.c: the driver side of policy inputs (deepshare/inputs.h): the file a policy's input
 * parameter names, read by the io layer's reader of its kind and handed to the policy parsed. */
#include "deepshare/inputs.h"
#include "deepshare/lucid.h"

#include <stdlib.h>
#include <string.h>

int ds_input_set(const ds_policy_input_t *inputs, ds_input_take_fn take, void *config, const char *key,
                 const char *path, ds_error_t *err)
{
    const ds_policy_input_t *in = inputs;
    while (in && in->key && strcmp(in->key, key)) in++;
    if (!in || !in->key) return DS_ENOTFOUND;
    void *table = NULL;
    int rc;
    switch (in->kind) {
    case DS_INPUT_LUCID_LABELS: {
        ds_lucid_labels_t *l = ds_xcalloc(1, sizeof *l);
        rc = ds_lucid_read_labels(path, l, err);
        table = l;
        break;
    }
    case DS_INPUT_LUCID_SERIES: {
        ds_lucid_series_t *s = ds_xcalloc(1, sizeof *s);
        rc = ds_lucid_read_series(path, s, err);
        table = s;
        break;
    }
    default:
        ds_error_set(err, NULL, 0, key, "unknown kind of input %d", (int)in->kind);
        return DS_EINVAL;
    }
    if (rc) {
        free(table); /* the readers free what they read on error */
        return rc;
    }
    return take(config, key, table, err);
}
