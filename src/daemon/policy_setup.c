/* policy_setup.c: the policy of a config, set up for deepshared: found by name, its parameters given by the
 * daemon (a one-second cycle of its own, no CPU reclamation) and then the file's policy.KEY lines, through
 * ds_policy_config_set (a parameter naming an input file is read through io). Start and reload share it. */
#include "daemon/daemon.h"
#include "deepshare/policy_config.h"

#include <stdio.h>

int daemon_policy_config(const dconfig_t *c, const ds_policy_ops_t **ops, void **pconfig, ds_error_t *err)
{
    *pconfig = NULL;
    *ops = ds_policy_find(c->policy);
    if (!*ops) {
        char names[512] = "";
        size_t off = 0;
        for (const ds_policy_ops_t *const *p = ds_policy_list(); *p && off < sizeof names; p++)
            off += (size_t)snprintf(names + off, sizeof names - off, "%s%s", off ? ", " : "", (*p)->name);
        ds_error_set(err, c->path, 0, "policy", "policy '%s' is not in this build (available: %s)", c->policy, names);
        return DS_ENOTFOUND;
    }
    const ds_policy_ops_t *o = *ops;
    if (o->config_new) *pconfig = o->config_new();
    /* The daemon decides when a cycle happens (a timer pass every 'cycle' seconds of wall time), so a
     * policy's own period is one second; running jobs cannot be shrunk in Slurm, so no CPU reclamation.
     * Policies without these parameters ignore them; the config file may still override them. */
    static const char *const fixed[][2] = {{"cycle", "1"}, {"cpu-reclaim", "0"}};
    for (size_t i = 0; o->config_set && i < sizeof fixed / sizeof fixed[0]; i++) {
        ds_error_t ignored;
        o->config_set(*pconfig, fixed[i][0], fixed[i][1], &ignored);
    }
    for (int i = 0; i < c->nparams; i++) {
        char key[80];
        snprintf(key, sizeof key, "policy.%s", c->pkeys[i]);
        int rc = ds_policy_config_set(o, *pconfig, c->pkeys[i], c->pvals[i], err);
        if (rc) {
            if (rc == DS_ENOTFOUND)
                ds_error_set(err, c->path, c->plines[i], key, "policy '%s' has no parameter of that name", o->name);
            else {
                /* the policy names the value's problem; the file, line and key are ours */
                char m[sizeof err->msg];
                snprintf(m, sizeof m, "%s", err->msg);
                ds_error_set(err, c->path, c->plines[i], key, "%s", m);
            }
            return rc;
        }
    }
    return DS_OK;
}
