/* daemon.c: deepshared's state set up and torn down: the policy (policy_setup.c), the journal the runtime
 * predictor learns from, the predictors the policy sees (the interference one from gpumap.c), and the
 * tables the two flows fill. */
#include "daemon/daemon.h"

#include <stdlib.h>
#include <string.h>

/* The simulator's speed predictor (predict/oracle.c's "table", which the daemon does not link): the table's
 * rate of a job on a type, the job's workload looked up when its slot was filled. */
static double table_rate(void *ctx, const ds_trace_t *t, int32_t job, int32_t gtype)
{
    return ds_speeds_rate(ctx, t, job, gtype);
}

static void rtm_log(void *ctx, const char *msg)
{
    (void)ctx;
    dlog(0, "%s", msg);
}

static void rtm_learn(void *ctx, uint32_t id, const char *tenant, const char *user, int gpus, double seconds,
                      int64_t end, int64_t submit, double limit)
{
    rtmodel_learn(ctx, id, tenant, user, gpus, seconds, end, submit, limit);
}

/* The runtime predictor the policy sees, learning from the journal as hist_open reads it. */
static void predictor_setup(daemon_t *d)
{
    hist_init(&d->hist, d->cfg.min_history, d->cfg.default_runtime);
    if (d->cfg.runtime_model) {
        rtmodel_init(&d->rtm, d->cfg.min_history, d->cfg.default_runtime, d->cfg.batch_gap, rtm_log, NULL);
        d->hist.on_learn = rtm_learn;
        d->hist.on_learn_ctx = &d->rtm;
        rtmodel_predictor(&d->rt, &d->rtm);
    } else {
        hist_predictor(&d->rt, &d->hist);
    }
}

static void predictor_teardown(daemon_t *d)
{
    hist_free(&d->hist);
    if (d->cfg.runtime_model) rtmodel_free(&d->rtm);
}

int daemon_setup(daemon_t *d, ds_error_t *err)
{
    pthread_mutex_init(&d->lock, NULL);
    ds_idmap_init(&d->byid);
    ds_idmap_init(&d->warned);
    ds_idmap_init(&d->bounce_of);
    ds_trace_init(&d->trace);
    for (int i = 0; i < D_LAT_BUCKETS; i++) {
        static const double b[D_LAT_BUCKETS] = {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};
        d->lat_bounds[i] = b[i];
    }
    int rc = daemon_policy_config(&d->cfg, &d->ops, &d->pconfig, err);
    if (rc) return rc;
    predictor_setup(d);
    if (d->cfg.journal[0]) {
        if (hist_open(&d->hist, d->cfg.journal, NULL, err)) return DS_EIO;
        dlog(0, "journal %s: learned from %lld finished jobs (runtime model: %s)", d->cfg.journal,
             (long long)d->hist.records, d->cfg.runtime_model ? "boosted" : "history");
    }
    memset(&d->ip, 0, sizeof d->ip);
    d->ip.name = "profile";
    d->ip.ctx = d;
    d->ip.predict = gpumap_retention;
    d->preds.runtime = &d->rt;
    d->preds.interference = &d->ip;
    if (d->cfg.interference[0]) {
        int rc = ds_coloc_read(&d->coloc, d->cfg.interference, err);
        if (rc) return rc;
        d->coloc.missing_rho = d->cfg.missing_rho;
        d->have_coloc = 1;
    }
    if (d->cfg.speeds[0]) {
        int rc = ds_speeds_read(&d->speeds, d->cfg.speeds, err);
        if (rc) return rc;
        d->sp.name = "table";
        d->sp.ctx = &d->speeds;
        d->sp.rate = table_rate;
        d->preds.speed = &d->sp;
        d->have_speeds = 1;
        dlog(0, "speeds %s: %d throughputs", d->cfg.speeds, d->speeds.nrows);
    }
    d->ten = ds_xcalloc((size_t)d->cfg.ntenants, sizeof *d->ten);
    tel_init(&d->tel, &d->cfg.tel);
    d->need_rebuild = 1;
    lease_default(&d->lease);
    snprintf(d->lease.url, sizeof d->lease.url, "%s", d->cfg.lease_etcd);
    snprintf(d->lease.key, sizeof d->lease.key, "%s", d->cfg.lease_key);
    if (d->cfg.lease_name[0]) snprintf(d->lease.holder, sizeof d->lease.holder, "%s", d->cfg.lease_name);
    d->lease.ttl = d->cfg.lease_ttl;
    return DS_OK;
}

int daemon_may_write(void *ctx)
{
    daemon_t *d = ctx;
    if (!d->lease.url[0] || lease_valid(&d->lease, daemon_now_mono())) return 1;
    d->fenced_writes++;
    return 0;
}

void daemon_take_lead(daemon_t *d)
{
    if (d->e) ds_engine_destroy(d->e);
    d->e = NULL;
    d->need_rebuild = 1;
    snprintf(d->rebuild_why, sizeof d->rebuild_why, "leader (epoch %lld)", (long long)d->lease.epoch);
    if (d->cfg.journal[0]) {
        /* what the old leader journaled since this instance started */
        ds_error_t err;
        ds_error_clear(&err);
        predictor_teardown(d);
        predictor_setup(d);
        if (hist_open(&d->hist, d->cfg.journal, NULL, &err)) {
            char m[400];
            ds_error_format(&err, m, sizeof m);
            dlog(0, "journal: %s (learning from the jobs that finish from now on)", m);
        } else {
            dlog(0, "journal %s: learned from %lld finished jobs", d->cfg.journal, (long long)d->hist.records);
        }
    }
}

void daemon_stand_by(daemon_t *d)
{
    if (d->e) ds_engine_destroy(d->e);
    d->e = NULL;
    d->need_rebuild = 1;
}

void daemon_teardown(daemon_t *d)
{
    if (d->e) ds_engine_destroy(d->e);
    if (d->pconfig && d->ops->config_free) d->ops->config_free(d->pconfig);
    if (d->have_coloc) ds_coloc_free(&d->coloc);
    if (d->have_speeds) ds_speeds_free(&d->speeds);
    predictor_teardown(d);
    tel_free(&d->tel);
    ds_trace_free(&d->trace);
    ds_idmap_free(&d->byid);
    ds_idmap_free(&d->warned);
    ds_idmap_free(&d->bounce_of);
    free(d->bounce);
    free(d->mv_slot);
    free(d->mv_gpus);
    free(d->shardless);
    free(d->leftover);
    free(d->completing);
    free(d->foreign);
    free(d->slot);
    free(d->sj);
    free(d->nodes);
    free(d->node_type);
    free(d->ten);
}
