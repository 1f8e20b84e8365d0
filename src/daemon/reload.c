/* reload.c: SIGHUP: the config file read again, checked as start checks it (the policy set up as start sets
 * it up, policy_setup.c), and applied where that is safe while running -- tenants and quotas, timing,
 * logging, the read token -- with a warning naming the keys that wait for a restart. */
#include "daemon/daemon.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Jobs deepshared schedules (pending or running) of tenant t. */
static int live_jobs(const daemon_t *d, int t)
{
    int n = 0;
    for (int32_t s = 0; d->e && s < d->nslots; s++) {
        int st = ds_engine_job(d->e, s)->status;
        n += d->trace.jobs[s].tenant == t && (st == DS_JS_PENDING || st == DS_JS_RUNNING);
    }
    return n;
}

static int find_tenant(const dconfig_t *c, const char *name)
{
    for (int i = 0; i < c->ntenants; i++)
        if (!strcmp(c->tenants[i].name, name)) return i;
    return -1;
}

static int reject(const ds_error_t *err)
{
    char m[800];
    ds_error_format(err, m, sizeof m);
    dlog(0, "reload rejected, the running configuration stays: %s", m);
    return -1;
}

int daemon_reload(daemon_t *d)
{
    dconfig_t *next = ds_xmalloc(sizeof *next);
    ds_error_t err;
    ds_error_clear(&err);
    dconfig_default(next);
    const ds_policy_ops_t *ops;
    void *pc = NULL;
    /* everything start would refuse is refused here, even keys that only a restart applies */
    if (dconfig_read(next, d->cfg.path, &err) || dconfig_check(next, &err) ||
        dconfig_check_identity(next, d->acct_enforced, &err) || daemon_policy_config(next, &ops, &pc, &err)) {
        if (pc && ops->config_free) ops->config_free(pc);
        free(next);
        return reject(&err);
    }
    if (pc && ops->config_free) ops->config_free(pc);
    char restart[512];
    dconfig_reload_merge(&d->cfg, next, restart, sizeof restart);
    /* the listen address stays the running one: it must not become public without a token */
    if (dconfig_check(next, &err)) {
        free(next);
        return reject(&err);
    }
    int same = next->ntenants == d->cfg.ntenants;
    for (int i = 0; same && i < next->ntenants; i++) same = !strcmp(next->tenants[i].name, d->cfg.tenants[i].name);
    if (!same) {
        /* a tenant with work in flight cannot go: its running jobs would hold GPUs the engine no longer sees */
        for (int i = 0; i < d->cfg.ntenants; i++) {
            int n;
            if (find_tenant(next, d->cfg.tenants[i].name) < 0 && (n = live_jobs(d, i)) > 0) {
                ds_error_set(&err, d->cfg.path, 0, "tenant",
                             "tenant '%s' was removed but %d of its jobs are pending or running: set its quota to 0 "
                             "now and remove it once they are done", d->cfg.tenants[i].name, n);
                free(next);
                return reject(&err);
            }
        }
    }
    /* quotas per GPU type: of the nodes' types, and given per type where there are several */
    int64_t qt[DC_MAX_TENANTS][DS_MAX_GPU_TYPES];
    for (int i = 0; d->nodes && i < next->ntenants; i++)
        if (mirror_typed_quota(d, &next->tenants[i], qt[i], &err)) {
            free(next);
            return reject(&err);
        }
    int changed = 0;
    for (int i = 0; i < next->ntenants; i++) {
        int o = find_tenant(&d->cfg, next->tenants[i].name);
        if (o < 0) dlog(0, "reload: new tenant %s, quota %d GPUs", next->tenants[i].name, next->tenants[i].quota);
        else if (d->ntypes && d->nodes) {
            int64_t was[DS_MAX_GPU_TYPES];
            int same_t = !mirror_typed_quota(d, &d->cfg.tenants[o], was, &err);
            for (int k = 0; same_t && k < d->ntypes; k++) same_t = was[k] == qt[i][k];
            if (!same_t) dlog(0, "reload: tenant %s quota per GPU type changed (from the next pass)", next->tenants[i].name),
                         changed++;
        } else if (d->cfg.tenants[o].quota != next->tenants[i].quota)
            dlog(0, "reload: tenant %s quota %d -> %d GPUs (from the next pass)", next->tenants[i].name,
                 d->cfg.tenants[o].quota, next->tenants[i].quota), changed++;
    }
    for (int i = 0; i < d->cfg.ntenants; i++)
        if (find_tenant(next, d->cfg.tenants[i].name) < 0) dlog(0, "reload: tenant %s removed", d->cfg.tenants[i].name);
    int need_rebuild = !same;
    /* members or trust changed: the jobs waiting in staging are screened again (running ones stay) */
    for (int i = 0; same && i < next->ntenants; i++)
        if (strcmp(next->tenants[i].members, d->cfg.tenants[i].members)) need_rebuild = 1;
    if (next->trust_accounts != d->cfg.trust_accounts) need_rebuild = 1;
    if (same && d->e) {
        for (int i = 0; i < next->ntenants; i++) {
            if (d->ntypes) {
                if (ds_engine_set_quota_typed(d->e, i, qt[i])) need_rebuild = 1;
                for (int k = 0; k < d->ntypes; k++) d->trace.tenants[i].quota_t[k] = (int32_t)qt[i][k];
            } else if (ds_engine_set_quota(d->e, i, next->tenants[i].quota)) {
                need_rebuild = 1; /* partitions sized by quota */
            }
            d->trace.tenants[i].quota_gpus = next->tenants[i].quota;
        }
    }
    if (!same) {
        /* per-tenant figures follow their tenant by name; a new tenant starts from nothing */
        dtenant_t *ten = ds_xcalloc((size_t)next->ntenants, sizeof *ten);
        for (int i = 0; i < next->ntenants; i++) {
            int o = find_tenant(&d->cfg, next->tenants[i].name);
            if (o >= 0) ten[i] = d->ten[o];
        }
        char(*old)[64] = ds_xmalloc((size_t)d->cfg.ntenants * sizeof *old);
        for (int i = 0; i < d->cfg.ntenants; i++) memcpy(old[i], d->cfg.tenants[i].name, sizeof old[i]);
        int old_n = d->cfg.ntenants;
        free(d->ten);
        d->ten = ten;
        d->cfg = *next;
        status_tenants_changed(d, old, old_n);
        free(old);
    } else {
        d->cfg = *next;
    }
    free(next);
    if (need_rebuild) {
        /* the engine's tenants are the trace's: it is built again from a fresh read of Slurm at the next sync,
         * as after a restart; until then every reader sees no engine rather than one with other tenants */
        ds_engine_destroy(d->e);
        d->e = NULL;
        d->need_rebuild = 1;
        snprintf(d->rebuild_why, sizeof d->rebuild_why, "the reload changed the tenants");
    }
    dlog_verbose = d->cfg.verbose > daemon_cli_verbose ? d->cfg.verbose : daemon_cli_verbose;
    if (restart[0])
        dlog(0, "warning: reload: %s changed in %s but take%s effect only at a restart; the running value%s stay%s",
             restart, d->cfg.path, strchr(restart, ',') ? "" : "s", strchr(restart, ',') ? "s" : "",
             strchr(restart, ',') ? "" : "s");
    dlog(0, "reload: %s applied (%d tenants, %d quota change%s%s)", d->cfg.path, d->cfg.ntenants, changed,
         changed == 1 ? "" : "s", need_rebuild ? "; the engine is rebuilt from Slurm" : "");
    return 0;
}
