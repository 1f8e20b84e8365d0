/* policy_config.h: for drivers (the CLI, deepshared, the benchmarks and tests): setting a policy's parameter
 * by name, where a parameter that names one of the policy's input files (ops->inputs) is read through the
 * io layer and handed over parsed (ops->config_input), any other set by ops->config_set. */
#ifndef DS_POLICY_CONFIG_H
#define DS_POLICY_CONFIG_H
/* layering (CMakeLists.txt): a driver's header, above both the engine and io */
#if defined(DS_LAYER_BASE) || defined(DS_LAYER_ENGINE) || defined(DS_LAYER_IO)
#error "deepshare/policy_config.h is for drivers: this layer may not include it (see CMakeLists.txt)"
#endif

#include "deepshare/inputs.h"
#include "deepshare/policy.h"

/* DS_OK; DS_ENOTFOUND for a name the policy does not know; another error, with err filled, for a bad
 * value or an input file that cannot be read. */
static inline int ds_policy_config_set(const ds_policy_ops_t *ops, void *config, const char *key, const char *value,
                                       ds_error_t *err)
{
    int rc = ops->inputs ? ds_input_set(ops->inputs, ops->config_input, config, key, value, err) : DS_ENOTFOUND;
    if (rc == DS_ENOTFOUND) rc = ops->config_set ? ops->config_set(config, key, value, err) : DS_ENOTFOUND;
    return rc;
}

#endif
