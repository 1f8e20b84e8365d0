/* report.c: what deepshared shows, on top of both flows: the per-cycle QAD figures, Prometheus metrics, and
 * the per-job explanation (the policy's own account, then the Slurm-side facts). */
#include "daemon/daemon.h"
#include "daemon/sbuf.h"
#include "deepshare/qad.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The compliance threshold of the reported QAD (qad_theta), as the simulator's: a daemon figure. The policy
 * applies its own parameters and says so in its explanations (ops->explain). */
double daemon_theta(const daemon_t *d) { return d->cfg.qad_theta; }

/* Per-cycle figures: each tenant's QAD this cycle, G GPUs only and all GPUs held, and their smoothing with
 * qad_lambda (the reported figure is the simulator's compliance figure); then the squeue priorities. */
void daemon_cycle_figures(daemon_t *d)
{
    const ds_engine_t *e = d->e;
    if (!e) return;
    for (int i = 0; i < d->cfg.ntenants; i++) {
        /* the policy's signal (G GPUs only) and the reported, class-blind figure: one definition each */
        double q = ds_engine_qad(e, i, DS_QAD_G), qr = ds_engine_qad(e, i, DS_QAD_ALL);
        d->ten[i].Q = q;
        d->ten[i].S = d->s_init ? ds_qad_smooth(d->ten[i].S, q, d->cfg.qad_lambda) : q;
        d->ten[i].Qr = qr;
        d->ten[i].Sr = d->s_init ? ds_qad_smooth(d->ten[i].Sr, qr, d->cfg.qad_lambda) : qr;
    }
    d->s_init = 1;
    d->cycles++;
    daemon_show_priorities(d);
}

/* Submit-to-running bucket bounds, seconds: Slurm's clock has 1 s resolution. */
static const double s2r_bounds[D_S2R_BUCKETS] = {0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600};

/* Moves submit-to-running samples recorded since the last call into the histogram. Called after every
 * pass and at every scrape, so at most one pass's first starts arrive in between (fewer than D_SAMPLES). */
static void fold_s2r(daemon_t *d)
{
    if (d->s2r_n - d->s2r_folded > D_SAMPLES) d->s2r_folded = d->s2r_n - D_SAMPLES;
    for (; d->s2r_folded < d->s2r_n; d->s2r_folded++) {
        double v = d->s2r_samples[d->s2r_folded % D_SAMPLES];
        int i = 0;
        while (i < D_S2R_BUCKETS && v > s2r_bounds[i]) i++;
        d->s2r_count[i]++;
        d->s2r_sum += v;
    }
}

void daemon_observe_latency(daemon_t *d, double sec)
{
    int i = 0;
    while (i < D_LAT_BUCKETS && sec > d->lat_bounds[i]) i++;
    d->lat_count[i]++;
    d->lat_sum += sec;
    d->lat_samples[d->lat_n % D_SAMPLES] = sec;
    d->lat_n++;
    fold_s2r(d);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank quantile of the last samples. */
static double quantile(const double *v, int64_t total, double q)
{
    int64_t n = total < D_SAMPLES ? total : D_SAMPLES;
    if (n == 0) return NAN;
    double *x = ds_xmalloc((size_t)n * sizeof *x);
    memcpy(x, v, (size_t)n * sizeof *x);
    qsort(x, (size_t)n, sizeof *x, cmp_d);
    int64_t r = (int64_t)ceil(q * (double)n);
    double out = x[r < 1 ? 0 : r - 1];
    free(x);
    return out;
}

/* One metric's HELP and TYPE lines. */
static void head(ds_buf_t *b, const char *name, const char *type, const char *help)
{
    ds_bprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void counter(ds_buf_t *b, const char *name, const char *help, int64_t v)
{
    head(b, name, "counter", help);
    ds_bprintf(b, "%s %lld\n", name, (long long)v);
}

static void histogram(ds_buf_t *b, const char *name, const char *help, const double *bounds, const int64_t *count,
                      int nb, double sum)
{
    head(b, name, "histogram", help);
    int64_t cum = 0;
    for (int i = 0; i < nb; i++) {
        cum += count[i];
        ds_bprintf(b, "%s_bucket{le=\"%g\"} %lld\n", name, bounds[i], (long long)cum);
    }
    cum += count[nb];
    ds_bprintf(b, "%s_bucket{le=\"+Inf\"} %lld\n%s_sum %.9g\n%s_count %lld\n", name, (long long)cum, name, sum, name,
            (long long)cum);
}

/* A summary whose quantiles cover the last D_SAMPLES observations (as client libraries' sliding windows)
 * and whose sum and count cover all of them. */
static void summary(ds_buf_t *b, const char *name, const char *help, const double *samples, int64_t n, double sum,
                    int64_t count)
{
    head(b, name, "summary", help);
    static const double qs[] = {0.5, 0.99};
    for (int i = 0; i < 2; i++) {
        double v = quantile(samples, n, qs[i]);
        /* the exposition format spells it NaN (no observation yet) */
        if (isnan(v)) ds_bprintf(b, "%s{quantile=\"%g\"} NaN\n", name, qs[i]);
        else ds_bprintf(b, "%s{quantile=\"%g\"} %g\n", name, qs[i], v);
    }
    ds_bprintf(b, "%s_sum %.9g\n%s_count %lld\n", name, sum, name, (long long)count);
}

/* Prometheus names (docs/deepshared.md lists them, and the renames): base units in the name (_seconds,
 * _ratio for the QAD in [0, 1], _gpus for counts of GPUs), _total on counters, _info for constant
 * labels. 'promtool check metrics' lints this text in tests/e2e_slurm.sh. */
char *daemon_metrics(daemon_t *d)
{
    ds_buf_t b = {0};
    const ds_engine_t *e = d->e;
    fold_s2r(d);
    head(&b, "deepshare_build_info", "gauge", "deepshared's version.");
    ds_bprintf(&b, "deepshare_build_info{version=\"%s\"} 1\n", DS_VERSION);
    head(&b, "deepshare_policy_info", "gauge", "The scheduling policy.");
    ds_bprintf(&b, "deepshare_policy_info{policy=\"%s\"} 1\n", d->ops->name);
    head(&b, "deepshare_slurmctld_up", "gauge", "1 while slurmctld answers, 0 while the daemon retries.");
    ds_bprintf(&b, "deepshare_slurmctld_up %d\n", d->slurm_up);
    head(&b, "deepshare_qad_threshold_ratio", "gauge",
         "Smoothed reported QAD under which a tenant counts as not compliant (qad_theta).");
    ds_bprintf(&b, "deepshare_qad_threshold_ratio %g\n", daemon_theta(d));
    int nt = d->cfg.ntenants;
    int64_t unused = 0, borrowed = 0;
    for (int i = 0; e && i < nt; i++) {
        int64_t held = e->tenant_g_gpus[i] + e->tenant_be_gpus[i], q = d->cfg.tenants[i].quota;
        if (held < q) unused += q - held;
        else borrowed += held - q;
    }
    static const char *const names[] = {"qad_policy_ratio", "qad_policy_smoothed_ratio", "guaranteed_gpus",
                                        "best_effort_gpus", "lent_gpus", "borrowed_gpus", "pending_gpus",
                                        "quota_gpus", "preemptions_total", "dispatches_total", "qad_reported_ratio",
                                        "qad_reported_smoothed_ratio"};
    static const char *const help[] = {
        "Quota Assurance Degree this cycle counting guaranteed (G) GPUs only: the policy's signal.",
        "G-only QAD smoothed over cycles with qad_lambda (the policy keeps its own smoothing: /explain).",
        "GPUs held by the tenant's guaranteed (G) jobs.", "GPUs held by the tenant's best-effort (BE) jobs.",
        "Unused quota GPUs that other tenants borrow (shared in proportion to unused quota).",
        "GPUs held beyond quota.", "GPUs asked by pending jobs.", "Quota in GPUs.",
        "Jobs of the tenant requeued by deepshared.", "Jobs of the tenant dispatched.",
        "Reported QAD this cycle: all GPUs held, any class, capped at quota.",
        "Reported QAD smoothed over cycles (qad_lambda): the compliance figure of the simulator."};
    for (int m = 0; e && m < 12; m++) {
        char name[80];
        snprintf(name, sizeof name, "deepshare_tenant_%s", names[m]);
        head(&b, name, m == 8 || m == 9 ? "counter" : "gauge", help[m]);
        for (int i = 0; i < nt; i++) {
            int64_t held = e->tenant_g_gpus[i] + e->tenant_be_gpus[i], q = d->cfg.tenants[i].quota;
            double v = 0;
            switch (m) {
            case 0: v = d->ten[i].Q; break;
            case 1: v = d->ten[i].S; break;
            case 2: v = (double)e->tenant_g_gpus[i]; break;
            case 3: v = (double)e->tenant_be_gpus[i]; break;
            case 4: v = held < q && unused > 0 ? (double)(q - held) * DS_MIN(1.0, (double)borrowed / (double)unused) : 0; break;
            case 5: v = held > q ? (double)(held - q) : 0; break;
            case 6: v = (double)e->tenant_pending_gpus[i]; break;
            case 7: v = (double)q; break;
            case 8: v = (double)d->ten[i].preempted; break;
            case 9: v = (double)d->ten[i].dispatched; break;
            case 10: v = d->ten[i].Qr; break;
            case 11: v = d->ten[i].Sr; break;
            }
            ds_bprintf(&b, "%s{tenant=\"%s\"} %g\n", name, d->cfg.tenants[i].name, v);
        }
    }
    int64_t busy = 0, shared = 0;
    for (int32_t g = 0; e && g < e->ngpus; g++) busy += e->gpus[g].nres > 0, shared += e->gpus[g].nres > 1;
    head(&b, "deepshare_gpus", "gauge", "GPUs of the cluster by state (total, busy: holding a job, shared: two).");
    ds_bprintf(&b, "deepshare_gpus{state=\"total\"} %d\ndeepshare_gpus{state=\"busy\"} %lld\ndeepshare_gpus{state=\"shared\"} %lld\n",
            e ? e->ngpus : 0, (long long)busy, (long long)shared);
    head(&b, "deepshare_gpus_shardless", "gauge",
         "GPUs Slurm reports with fewer than 2 shards (lost in a slurmctld restart): no shard job is placed there.");
    ds_bprintf(&b, "deepshare_gpus_shardless %d\n", d->nshardless);
    head(&b, "deepshare_gpus_leftover_shards", "gauge",
         "GPUs where Slurm counts shards allocated to no job (after a slurmctld restart): no job goes there.");
    ds_bprintf(&b, "deepshare_gpus_leftover_shards %d\n", d->nleftover);
    if (d->nshardless) {
        head(&b, "deepshare_gpu_shardless", "gauge", "1 for each GPU that lost its shards, by node and GPU type.");
        for (int i = 0; i < d->nnodes * d->gpn; i++)
            if (d->shardless[i])
                ds_bprintf(&b, "deepshare_gpu_shardless{node=\"%s\",gpu=\"g%d\"} 1\n", d->nodes[i / d->gpn].name, i % d->gpn);
    }
    if (d->lease.url[0]) {
        head(&b, "deepshare_leader", "gauge", "1 while this instance holds the leader lease and schedules, 0 on standby.");
        ds_bprintf(&b, "deepshare_leader %d\n", lease_valid(&d->lease, daemon_now_mono()));
        head(&b, "deepshare_lease_epoch", "gauge", "The fencing epoch of this instance's leadership (0 on standby).");
        ds_bprintf(&b, "deepshare_lease_epoch %lld\n", (long long)d->lease.epoch);
        counter(&b, "deepshare_lease_takeovers_total", "Times this instance became the leader.", d->lease.takeovers);
        counter(&b, "deepshare_lease_lost_total", "Times this instance lost the lease (not renewed in time, or taken).",
                d->lease.lost);
        counter(&b, "deepshare_lease_store_errors_total", "Requests to etcd that failed.", d->lease.store_errors);
        counter(&b, "deepshare_fenced_writes_total", "Slurm writes refused because this instance's lease had lapsed.",
                d->fenced_writes);
        counter(&b, "deepshare_stale_dispatches_total",
                "Dispatches of an older epoch (a deposed leader's) found pending and sent back to staging.",
                d->stale_rejected);
    }
    head(&b, "deepshare_nodes_unavailable", "gauge",
         "Nodes Slurm reports drained, down, failing or not responding: no job is placed there.");
    ds_bprintf(&b, "deepshare_nodes_unavailable %d\n", d->nodes_down);
    if (d->nodes_down) {
        head(&b, "deepshare_node_unavailable", "gauge", "1 for each node out of service, by node and Slurm's state.");
        for (int n = 0; n < d->nnodes; n++)
            if (!d->nodes[n].up) {
                char st[sizeof d->nodes[n].down_why];
                snprintf(st, sizeof st, "%s", d->nodes[n].down_why);
                for (char *c = st; *c; c++)
                    if (*c == ' ') *c = '_'; /* not_responding: one word, as Slurm's own state names */
                ds_bprintf(&b, "deepshare_node_unavailable{node=\"%s\",state=\"%s\"} 1\n", d->nodes[n].name, st);
            }
    }
    counter(&b, "deepshare_node_outages_total", "Times a node went out of service (drained, down, failing, not responding).",
            d->node_outages);
    counter(&b, "deepshare_dispatch_bounces_total",
            "Dispatches taken back to staging without a start (past dispatch_timeout, onto lost shards or a held GPU).",
            d->bounces);
    counter(&b, "deepshare_shard_moves_total",
            "Shard dispatches kept off a GPU without shards: moved to another GPU, or given the whole GPU.",
            d->shard_moves);
    counter(&b, "deepshare_repins_total",
            "Dispatches of a whole-GPU job onto other GPU indices than its last dispatch's (its pins cleared and sent anew).",
            d->repins);
    counter(&b, "deepshare_preemptions_total", "Jobs requeued by deepshared (best effort only).", d->requeues);
    head(&b, "deepshare_progress_reports_total", "counter",
         "Progress reports POSTed to /api/progress, by answer (taken, or why refused).");
    static const char *const post_why[] = {"taken", "malformed", "credential", "not_owner", "not_running", "other"};
    for (int i = 0; i < 6; i++)
        ds_bprintf(&b, "deepshare_progress_reports_total{result=\"%s\"} %lld\n", post_why[i], (long long)d->posts[i]);
    counter(&b, "deepshare_preempt_signals_total",
            "Preemption victims sent their signal to checkpoint first (grace > 0).", d->signalled);
    head(&b, "deepshare_grace_requeues_total", "counter",
         "Signalled victims requeued: after they ended, after they requeued themselves, or at the grace's end.");
    ds_bprintf(&b, "deepshare_grace_requeues_total{after=\"ended\"} %lld\n"
                   "deepshare_grace_requeues_total{after=\"self\"} %lld\n"
                   "deepshare_grace_requeues_total{after=\"grace\"} %lld\n",
               (long long)d->grace_ended, (long long)d->grace_self, (long long)d->grace_expired);
    counter(&b, "deepshare_grace_completed_total", "Signalled victims that ended with exit 0 in their grace: done, not "
            "requeued.", d->grace_done);
    head(&b, "deepshare_grace_victims", "gauge", "Preemption victims in their grace now (signalled, still on their GPUs).");
    ds_bprintf(&b, "deepshare_grace_victims %d\n", d->ngrace);
    head(&b, "deepshare_grace_seconds", "summary", "Seconds from a victim's signal to its requeue.");
    ds_bprintf(&b, "deepshare_grace_seconds_sum %.3f\ndeepshare_grace_seconds_count %lld\n", d->grace_sum,
               (long long)d->grace_n);
    counter(&b, "deepshare_requeues_skipped_total",
            "Preemptions not sent because Slurm had the job ending already (a requeue would run it again).",
            d->ended_before_requeue);
    counter(&b, "deepshare_colocations_total", "Jobs started on a GPU another job holds (through shard).",
            d->colocations);
    counter(&b, "deepshare_dispatches_total", "Jobs moved from staging to a partition to run.", d->dispatches);
    counter(&b, "deepshare_finished_total", "Jobs seen to finish.", d->finished);
    counter(&b, "deepshare_rebuilds_total", "Rebuilds of the engine from Slurm (start, restarts, surprises).",
            d->rebuilds);
    counter(&b, "deepshare_withdrawals_total",
            "Pending jobs taken out of the engine without a rebuild (cancelled, held by their owner, moved away).",
            d->withdrawals);
    counter(&b, "deepshare_errors_total", "Slurm calls that failed.", d->errors);
    counter(&b, "deepshare_colocations_refused_total", "Shared placements Slurm cannot honour, taken back.",
            d->coloc_refused);
    counter(&b, "deepshare_starts_taken_back_total",
            "Starts the policy made that Slurm could not carry out (colocation, pinned GPU indices, a failed "
            "dispatch), taken back; the job is held for the rest of that pass.", d->undone);
    head(&b, "deepshare_jobs_held", "gauge",
         "Pending jobs deepshared cannot start yet (requeued seconds ago; pinned GPU indices busy), kept out of "
         "the policy's pass.");
    ds_bprintf(&b, "deepshare_jobs_held %d\n", d->nheld);
    head(&b, "deepshare_jobs_refused", "gauge",
         "Jobs in staging deepshared does not schedule (account not a tenant or user not its member, an array, "
         "several nodes, --exclusive, a GPU request it cannot honour, a comment that does not parse): logged once "
         "each, explain says why.");
    ds_bprintf(&b, "deepshare_jobs_refused %d\n", d->nrefused);
    head(&b, "deepshare_jobs_waiting_slurm", "gauge",
         "Jobs in staging not offered to the policy before Slurm would start them (a begin time, a dependency).");
    ds_bprintf(&b, "deepshare_jobs_waiting_slurm %d\n", d->nwaiting);
    head(&b, "deepshare_jobs_foreign", "gauge",
         "Jobs in deepshared's partitions it did not dispatch (an operator's): left alone, their GPUs given to no "
         "other job.");
    ds_bprintf(&b, "deepshare_jobs_foreign %d\n", d->nforeign);
    counter(&b, "deepshare_cycles_total", "Periodic cycles run (QAD update, promotion, reclaim).", d->cycles);
    head(&b, "deepshare_journal_records", "gauge", "Finished jobs in the journal the runtime predictor learns from.");
    ds_bprintf(&b, "deepshare_journal_records %lld\n", (long long)d->hist.records);
    histogram(&b, "deepshare_pass_latency_seconds", "Time of one pass: read Slurm, run the engine, apply.",
              d->lat_bounds, d->lat_count, D_LAT_BUCKETS, d->lat_sum);
    summary(&b, "deepshare_pass_latency_recent_seconds",
            "Pass latency: quantiles over the last passes (nearest rank), sum and count over all.", d->lat_samples,
            d->lat_n, d->lat_sum, d->lat_n);
    histogram(&b, "deepshare_submit_to_running_seconds",
              "Slurm submit to start of jobs' first runs (Slurm's clock: 1 s resolution).", s2r_bounds, d->s2r_count,
              D_S2R_BUCKETS, d->s2r_sum);
    summary(&b, "deepshare_submit_to_running_recent_seconds",
            "Submit to running: quantiles over the last first runs (nearest rank), sum and count over all.",
            d->s2r_samples, d->s2r_n, d->s2r_sum, d->s2r_folded);
    summary(&b, "deepshare_dispatch_to_running_recent_seconds",
            "A dispatch's update returned to the job seen RUNNING (slurmctld's next scheduling loop, at most 1 s in "
            "Slurm 22.05, and the poll that sees it): quantiles over the last dispatches, sum and count over all.",
            d->d2r_samples, d->d2r_n, d->d2r_sum, d->d2r_n);
    if (d->cfg.tel.kind != TEL_OFF) {
        const telemetry_t *t = &d->tel;
        head(&b, "deepshare_telemetry_up", "gauge",
             "1 when the last poll of the retention source (telemetry) answered, 0 when it failed.");
        ds_bprintf(&b, "deepshare_telemetry_up{source=\"%s\"} %d\n", tel_kind_name(d->cfg.tel.kind),
                   t->polls > 0 && !d->tel_down);
        counter(&b, "deepshare_telemetry_polls_total", "Polls of the retention source.", t->polls);
        counter(&b, "deepshare_telemetry_poll_errors_total", "Polls of the retention source that failed.", t->poll_errors);
        counter(&b, "deepshare_telemetry_samples_total", "Per-job samples taken from the retention source.", t->samples);
        counter(&b, "deepshare_telemetry_samples_rejected_total",
                "Series or files of the retention source that were no sample (bad job id, not a number).", t->rejected);
        counter(&b, "deepshare_telemetry_retention_asked_total", "Retention estimates the policy's monitor asked for.",
                t->asked);
        counter(&b, "deepshare_telemetry_retention_missing_total",
                "Of those, none: no fresh sample or no baseline (never a revocation on that).", t->missing);
    }
    if (e && d->ops->stats) {
        ds_policy_stat_t st[64];
        int n = d->ops->stats(e, e->pstate, st, 64);
        head(&b, "deepshare_policy_stat", "gauge", "The policy's own counters since the last rebuild.");
        for (int i = 0; i < n; i++) ds_bprintf(&b, "deepshare_policy_stat{name=\"%s\"} %g\n", st[i].name, st[i].value);
    }
    return b.s;
}

/* What the retention source says of a running job: how old its last sample is, its exclusive baseline, and
 * what a shared job's monitor gets from it. */
static void telemetry_facts(daemon_t *d, int32_t j, ds_buf_t *b)
{
    const ds_jstate_t *js = ds_engine_job(d->e, j);
    if (js->status != DS_JS_RUNNING) return;
    const char *src = tel_kind_name(d->cfg.tel.kind);
    if (d->cfg.tel.kind == TEL_OFF) {
        if (js->shared) ds_bputs(b, "  telemetry: off (deepshared.conf: telemetry): the pair's retention is never measured, "
                                   "so it is never revoked on measurements\n");
        return;
    }
    uint32_t id = d->slot[j].id;
    double now = tel_now(), age = tel_age(&d->tel, id, now);
    int32_t k = ds_idmap_get(&d->tel.by_id, id);
    const tel_job_t *t = k >= 0 ? &d->tel.job[k] : NULL;
    if (!t) ds_bprintf(b, "  telemetry (%s): no sample of this job%s%s\n", src, d->tel_down ? "; the last poll failed: " : "",
                       d->tel_down ? d->tel.last_error : "");
    else
        ds_bprintf(b, "  telemetry (%s): last sample %.3g, %.0f s ago (%s after %g s); exclusive baseline %s%.3g (%d sample%s alone)\n",
                   src, t->v, age, age > d->cfg.tel.stale ? "stale: no sample" : "fresh", d->cfg.tel.stale,
                   t->nbase ? "" : "none ", t->nbase ? t->base : 0.0, t->nbase, t->nbase == 1 ? "" : "s");
    if (js->shared) {
        int before = 0;
        double r = daemon_pair_estimate(d, j, now, &before);
        if (before) ds_bprintf(b, "  telemetry: no retention estimate for the pair yet: the last sample is from before both "
                                  "jobs ran, or its span (%g s: the query's window and telemetry_lag) reaches back "
                                  "there (a solo speed); it is neither revoked nor admitted on that\n", tel_span(&d->cfg.tel));
        else if (isnan(r)) ds_bputs(b, "  telemetry: no retention estimate for the pair now (a sample or a baseline is missing or "
                                       "stale): it is neither revoked nor admitted on that\n");
        else ds_bprintf(b, "  telemetry: measured retention %.2f\n", r);
    }
}

static const char *status_name(int s)
{
    static const char *const n[] = {"not queued", "pending", "running", "done"};
    return s >= 0 && s <= 3 ? n[s] : "?";
}

/* deepshared's own facts about a job it schedules, after the policy's (Slurm-side: where it runs, the GPUs
 * Slurm will not take it on, notes of dispatches taken back). */
static void slurm_facts(daemon_t *d, int32_t j, ds_buf_t *b)
{
    const ds_engine_t *e = d->e;
    const ds_job_t *job = &d->trace.jobs[j];
    const ds_jstate_t *js = &e->js[j];
    if (js->status == DS_JS_RUNNING) {
        const int32_t *g = &e->jgpus[e->jgpu_off[j]];
        int32_t node = e->gpus[g[0]].node;
        ds_bprintf(b, "  runs on %s GPU", d->nodes[node].name);
        for (int32_t i = 0; i < js->nplaced; i++) ds_bprintf(b, " %d", g[i] - e->nodes[node].gpu0);
        if (js->shared && js->partner >= 0) ds_bprintf(b, ", sharing with job %u (shard)", d->slot[js->partner].id);
        ds_bprintf(b, "\n");
        if (d->slot[j].whole && d->slot[j].why[0]) ds_bprintf(b, "  note: %s\n", d->slot[j].why);
        return;
    }
    if (js->status != DS_JS_PENDING) return;
    ds_bputs(b, "  free GPUs per node:");
    for (int32_t n = 0; n < e->nnodes; n++)
        if (ds_engine_node_down(e, n)) ds_bprintf(b, " %s:-", d->nodes[n].name);
        else ds_bprintf(b, " %s:%d", d->nodes[n].name, e->nodes[n].nfree);
    ds_bputs(b, "\n");
    if (d->nodes_down) {
        ds_bputs(b, "  out of service (no placements):");
        for (int32_t n = 0; n < e->nnodes && n < d->nnodes; n++)
            if (ds_engine_node_down(e, n)) ds_bprintf(b, " %s (%s)", d->nodes[n].name, d->nodes[n].down_why);
        ds_bputs(b, "\n");
    }
    if (job->gpus == 1 && !d->slot[j].shareable && (d->ops->props & DS_POLICY_COLOCATES) && d->cfg.k > 1)
        ds_bputs(b, "  colocation: not possible in Slurm for this job (submitted with --gres; share needs --comment=gpus=1)\n");
    if (d->slot[j].shareable && d->nshardless) {
        /* Slurm 22.05 can lose a GPU's shards in a slurmctld restart (docs/deepshared.md, Known limits) */
        int shown = 0;
        for (int i = 0; i < d->nnodes * d->gpn; i++) {
            if (!d->shardless[i]) continue;
            if (shown++ < 8) ds_bprintf(b, "%s %s:g%d", shown == 1 ? "  shards: GPU" : ",", d->nodes[i / d->gpn].name, i % d->gpn);
        }
        if (shown > 8) ds_bprintf(b, " and %d more", shown - 8);
        ds_bprintf(b, " lost %s shards after a slurmctld restart: no shard jobs placed there%s\n", shown == 1 ? "its" : "their",
                   d->slot[j].npin ? "" : " (a one-GPU job may take such a GPU whole, never to share)");
    }
    if (d->slot[j].why[0]) ds_bprintf(b, "  note: %s\n", d->slot[j].why);
}

/* The speeds the policy sees for job j on each type it may run on (the speed table of the config). */
static void speed_facts(const daemon_t *d, int32_t j, ds_buf_t *b)
{
    const ds_engine_t *e = d->e;
    if (e->ntypes < 2) return;
    if (!d->have_speeds) {
        ds_bputs(b, "  speed: no speed table (config key speeds): every GPU type counts as equally fast\n");
        return;
    }
    if (d->speeds.key_of_job == NULL || j >= d->speeds.njobs || d->speeds.key_of_job[j] < 0) {
        ds_bprintf(b, "  speed: its workload (comment model=, dataset=, batch=, amp=) is not in %s: every type counts "
                      "as equally fast for it\n", d->cfg.speeds);
        return;
    }
    ds_bprintf(b, "  speed: relative to %s (%s):", e->trace->gtypes[0].name, d->cfg.speeds);
    for (int32_t t = 0; t < e->ntypes; t++)
        if (ds_engine_type_ok(e, j, t)) ds_bprintf(b, " %s x%.2f", e->trace->gtypes[t].name, ds_engine_speed(e, j, t));
    ds_bputs(b, "\n");
}

char *daemon_explain(daemon_t *d, uint32_t id)
{
    int32_t j = daemon_slot_of(d, id);
    ds_buf_t b = {0};
    const ds_engine_t *e = d->e;
    if (j < 0 || !e) {
        for (int i = 0; i < d->nsj; i++) {
            if (d->sj[i].id != id) continue;
            const sl_job_t *sj = &d->sj[i];
            char acct[sizeof sj->account * 4 + 1], part[sizeof sj->partition * 4 + 1], w[400];
            screen_escape(sj->account, acct, sizeof acct);
            screen_escape(sj->partition, part, sizeof part);
            ds_bprintf(&b, "job %u: not scheduled by deepshared: Slurm state %s in partition '%s', account '%s'.\n", id,
                       sj->state == SL_PENDING ? "pending" : sj->state == SL_RUNNING ? "running" : "ended", part, acct);
            if (sj->state == SL_PENDING && !strcmp(sj->partition, d->cfg.staging)) {
                int rc = screen_job(d, sj, w, sizeof w);
                if (rc > 0) ds_bprintf(&b, "  %s.\n", w);
                else if (rc < 0) ds_bprintf(&b, "  refused: %s.\n", w);
                else if (sj->held) ds_bprintf(&b, "  held by its user or an operator (scontrol release).\n");
            } else if (strcmp(sj->partition, d->cfg.staging)) {
                if ((sj->state == SL_PENDING || sj->state == SL_RUNNING) && !screen_ours(sj))
                    ds_bprintf(&b, "  not dispatched by deepshared: left alone, its GPUs are given to no other job.\n");
                ds_bprintf(&b, "  deepshared schedules jobs submitted to partition '%s'.\n", d->cfg.staging);
            }
            return ds_bdone(&b);
        }
        return NULL;
    }
    const ds_job_t *job = &d->trace.jobs[j];
    const ds_jstate_t *js = &e->js[j];
    ds_bprintf(&b, "job %u: tenant %s, user %s, %d GPU%s, %s under policy %s; requeued %d time%s\n", id,
               d->trace.tenants[job->tenant].name, job->user >= 0 ? d->trace.users.s[job->user] : "?", job->gpus,
               job->gpus == 1 ? "" : "s", status_name(js->status), d->ops->name, js->preemptions,
               js->preemptions == 1 ? "" : "s");
    if (d->slot[j].withdrawn == D_AWAY)
        ds_bputs(&b, "  withdrawn: held by its owner or moved out of the staging partition; it queues again when it is "
                     "back in staging and released\n");
    else if (d->slot[j].withdrawn == D_GONE)
        ds_bputs(&b, "  withdrawn: it ended (cancelled?) while pending; no other job's state was touched\n");
    /* the policy's own account, from its state and the parameters it applies */
    d->ops->explain(e, e->pstate, j, d->now, &b);
    telemetry_facts(d, j, &b);
    if (d->ops->props & DS_POLICY_USES_PREDICTORS)
        ds_bprintf(&b, "  runtime predictor: %s, learned from deepshared's journal (%lld finished jobs)\n",
                   d->cfg.runtime_model ? "the boosted model" : "means of log run times", (long long)d->hist.records);
    speed_facts(d, j, &b);
    slurm_facts(d, j, &b);
    return ds_bdone(&b);
}
