/* simulate.c: 'deepshare simulate': replays a workload under one or more policies and reports. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/verdict.h"
#include "cli/predictors.h"
#include "cli/runner.h"
#include "deepshare/policy.h"
#include "deepshare/report.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: deepshare simulate [--trace FILE --vc-config FILE] [--policy NAME[,NAME..]|all]\n"
            "                          [--mode partitioned|pooled] [--estimates FILE] [--coloc FILE]\n"
            "                          [--seed N] [--json FILE|-] [--out DIR] [options]\n"
            "\n"
            "Replays a trace, or the built-in synthetic workload when no --trace is given, through the\n"
            "event-driven simulator and prints one row per policy.\n"
            "\n"
            "workload:\n"
            "  --trace FILE        jobs CSV (Venus columns or the generic format of docs/trace-format.md)\n"
            "  --vc-config FILE    tenants: 'tenant,quota_gpus', or Venus vc_config.csv (',num' = nodes of 8 GPUs)\n"
            "  --estimates FILE    'job_id,<seconds>' duration estimates (QSSF, Lucid); negative values become 1000\n"
            "  --coloc FILE        pairwise colocation profile (colocate_info.csv): retention of shared GPUs\n"
            "  --predictor P       what predicting policies see: model (default: online XGBoost runtime models,\n"
            "                      interference forest trained on --coloc; docs/predictors.md), oracle (true\n"
            "                      durations, measured retention) or file (durations from --estimates, measured)\n"
            "  --remaining R       running jobs' remaining time with --predictor model: simple (default:\n"
            "                      max(predicted - elapsed, 1)) or conditional (the median, over recent finished\n"
            "                      jobs' prediction errors, of the durations beyond the elapsed time)\n"
            "  --batch-gap S       model: jobs of one user (the tenant where the trace has none) and GPU count\n"
            "                      submitted within S s of each other are one batch, whose finished runs revise\n"
            "                      the others' estimates (60; 0: off; docs/predictors.md, \"Batch evidence\")\n"
            "  --interference I    colocation retention the policies see, overriding --predictor's: model (the\n"
            "                      forest) or measured (the --coloc profile); splits a schedule's gap between\n"
            "                      the runtime and the interference predictor\n"
            "  --single FILE       model: workload profiles (single_data.csv) for the forest (default: the trace's)\n"
            "  --seed N            seed of the synthetic workload and of simulated measurement noise (1)\n"
            "  --synth-jobs N      synthetic: number of jobs (4000)\n"
            "  --synth-tenants N   synthetic: tenants (6)\n"
            "  --synth-nodes N     synthetic: nodes of 8 GPUs (24)\n"
            "  --synth-days X      synthetic: submission span in days (default: the span that gives --synth-load\n"
            "                      with unscaled durations; a fixed span scales durations instead)\n"
            "  --synth-load X      synthetic: offered GPU-time / capacity (1.0)\n"
            "  --synth-be-share X  synthetic: fraction of jobs submitted as best effort (0)\n"
            "  --synth-noisy F     synthetic: a noisy neighbour: the smallest tenant offers F x its quota in\n"
            "                      bursts (the first half of each day), the others 0.8 x load of theirs (0: off)\n"
            "  --synth-large-share X  synthetic: share of GPU-time in jobs of 16-64 GPUs (0: off)\n"
            "  --trace-estimates keep|drop  drop: forget the estimates a trace carries (the synthetic\n"
            "                      generator's noisy ones), so every policy takes runtimes from --predictor\n"
            "  --arrival-scale X   any workload: divide every inter-arrival gap by X (1.5: arrivals 1.5x as\n"
            "                      dense); durations and quotas unchanged\n"
            "  --missing-rho X|model  ground truth of colocated pairs the --coloc profile does not hold (every\n"
            "                      pair without --coloc): X in (0, 1] for both jobs (default 1, the reference\n"
            "                      convention), or model: a fixed random forest trained once (seed 1) on the\n"
            "                      profile, never seen by the policies (SPEC 7.2)\n"
            "  --missing-rho-profile FILE  pair profile the model learns from (default: --coloc)\n"
            "  --missing-rho-single FILE   its workload profiles (default: single_data.csv beside the profile,\n"
            "                      else the trace's job rows)\n"
            "\n"
            "heterogeneous clusters (docs/heterogeneous.md):\n"
            "  --cluster FILE      node types of --trace's cluster: 'gpu_type,nodes,gpus_per_node,cpus_per_node,\n"
            "                      mem_mib,gmem_mib,weight' (the tenant file then gives quotas per type, quota_<type>)\n"
            "  --speeds FILE       each workload's throughput per GPU type (data/gavel/speeds.csv, converted from\n"
            "                      Gavel by 'deepshare import gavel'): a job runs on a type at its throughput there\n"
            "                      over its reference type's, where its duration was measured\n"
            "  --ref-gpu-type T    the reference type of durations that name none (default: the first type)\n"
            "  --synth-gpu-types L synthetic: nodes of each GPU type, e.g. v100:12,p100:8,k80:4 (replaces\n"
            "                      --synth-nodes); workloads are Gavel's job types, --speeds and --coloc default to\n"
            "                      data/gavel/speeds.csv and pairs.csv (retention per type)\n"
            "  --synth-type-requests X  synthetic with GPU types: share of users who ask for their tenant's\n"
            "                      largest type (0.25); the others take any type\n"
            "  --type-placement P  how type-blind policies choose a type: blind (default: the fullest node that\n"
            "                      fits on any type, as the research baselines are published) or fastest (the\n"
            "                      job's fastest type by the speed table first)\n"
            "\n"
            "cluster and run:\n"
            "  --policy LIST       comma-separated policies, or 'all' (default: all)\n"
            "  --mode M            partitioned (each tenant owns its nodes), pooled (one shared cluster),\n"
            "                      or both (every policy in each mode, one table; the production models\n"
            "                      pooled only); default partitioned\n"
            "  --gpus-per-node N   8          --cpus-per-node N  96\n"
            "  --pool-nodes N      pooled: nodes of the shared cluster (default: each tenant's quota rounded up to\n"
            "                      whole nodes, summed)\n"
            "  --k N               residents per GPU (2)\n"
            "  --no-cpu-check      do not enforce node CPUs (the reference simulator ignores them)\n"
            "  --ckpt-default S    checkpoint interval of jobs whose trace row declares none (column ckpt):\n"
            "                      a preempted job does again the work of the last (run mod S) s; 0 (default):\n"
            "                      unknown, the simulator keeps their progress (as the reference simulators) and\n"
            "                      a policy counts all they have run as at risk\n"
            "  --grace S           graceful preemption: a victim runs on S s on its GPUs (signalled to checkpoint)\n"
            "                      before it leaves them, as deepshared's grace; 0 (default): it leaves at once\n"
            "  --grace-save S      with --grace: every victim writes a checkpoint on the signal in S s and leaves\n"
            "                      (nothing rolled back; the save's GPU-time counted lost); default: it does not\n"
            "  --restart-pinned 0|1|2|3  the live Slurm cluster's rule (docs/native-slurm.md): a preempted job\n"
            "                      restarts only on the GPU indices of its first start, of any node; a start\n"
            "                      elsewhere is moved there or taken back, and the policy runs again; 1: every\n"
            "                      job (deepshared's repin = 0), 2: one-GPU jobs only (deepshared's shard\n"
            "                      jobs; repin = 1 pins whole-GPU jobs anew), 3: restarts as best effort only\n"
            "                      (repin = 2: a guaranteed restart is pinned anew where the policy puts it) (0)\n"
            "  --requeue-settle S  a preempted job may not start again for S s (deepshared: 3 wall s, i.e.\n"
            "                      3 x the replay's compression in trace s) (0)\n"
            "  --cycle S           metrics/QAD sampling period in seconds (60)\n"
            "  --window A:B        utilization window in trace seconds (default: whole days around submits)\n"
            "  --check-invariants  verify the invariants (docs/policy.md §7) after every scheduling pass\n"
            "  --explain JOB       print what each policy makes of the job with trace id JOB (its own words,\n"
            "                      as deepshared's /explain): after the pass that sees it first, then whenever\n"
            "                      the reason changes (numbers aside), when it starts and when it ends\n"
            "\n"
            "output:\n"
            "  --json FILE|-       summary JSON (an object for one policy, an array for several)\n"
            "  --out DIR           per-job, per-cycle, QAD, per-tenant and per-decision CSVs (DIR/<policy>/\n"
            "                      for several; docs/trace-format.md, Output files)\n"
            "  --tenants           also print the per-tenant table\n"
            "  --quiet             no table on stdout\n"
            "\n"
            "Policy parameters are given as --NAME VALUE (see each policy below) or --config FILE with\n"
            "'name = value' lines ('#' starts a comment).\n");
    for (const ds_policy_ops_t *const *p = ds_policy_list(); *p; p++) {
        fprintf(f, "\npolicy %s: %s\n", (*p)->name, (*p)->summary);
        if ((*p)->config_help) (*p)->config_help(f);
    }
}

/* --explain JOB: the policy's account of one job, printed when its wording changes (digits ignored, as
 * deepshared's log of waits does) or the job changes state. */
typedef struct explainer {
    const ds_trace_t *t;
    int32_t job;             /* trace index, -1 when the id is not in the trace */
    const char *policy;
    int mode;
    uint32_t last;           /* hash of the last text shown, 0 none */
    int status;              /* status when it was shown */
} explainer_t;

static uint32_t hash_words(const char *s)
{
    uint32_t h = 2166136261u;
    for (; *s; s++)
        if (*s < '0' || *s > '9') h = (h ^ (uint8_t)*s) * 16777619u;
    return h ? h : 1;
}

static void explain_pass(void *ctx, const ds_engine_t *e, int64_t now)
{
    explainer_t *x = ctx;
    if (x->job < 0) return;
    const ds_jstate_t *js = ds_engine_job(e, x->job);
    if (js->status != DS_JS_PENDING && js->status != DS_JS_RUNNING) {
        if (js->status == DS_JS_DONE && x->status != DS_JS_DONE)
            printf("t=%lld job %lld (%s, %s): done\n", (long long)now, (long long)x->t->jobs[x->job].id, x->policy,
                   x->mode == DS_MODE_POOLED ? "pooled" : "partitioned");
        x->status = js->status;
        return;
    }
    ds_buf_t b = {0};
    e->ops->explain(e, e->pstate, x->job, now, &b);
    char *text = ds_bdone(&b);
    uint32_t h = hash_words(text);
    /* a running job's account changes with every sample; it is shown once, when it starts */
    if (js->status != x->status || (js->status == DS_JS_PENDING && h != x->last)) {
        const ds_job_t *job = &x->t->jobs[x->job];
        printf("t=%lld job %lld (%s, %s): tenant %s, %d GPU%s, %s\n%s", (long long)now, (long long)job->id, x->policy,
               x->mode == DS_MODE_POOLED ? "pooled" : "partitioned", x->t->tenants[job->tenant].name, job->gpus,
               job->gpus == 1 ? "" : "s", js->status == DS_JS_RUNNING ? "running" : "pending", text);
        x->last = h;
        x->status = js->status;
    }
    free(text);
}

int ds_cmd_simulate(int argc, char **argv)
{
    ds_workload_opts_t wo;
    ds_workload_opts_default(&wo);
    ds_sim_config_t sc;
    ds_sim_config_default(&sc);
    const char *policy = "all", *json = NULL, *out = NULL, *config_file = NULL, *explain = NULL;
    int tenants = 0, quiet = 0, both = 0;
    /* Policy parameters are applied once the policies are known. */
    const char **pkeys = calloc((size_t)argc + 1, sizeof *pkeys), **pvals = calloc((size_t)argc + 1, sizeof *pvals);
    int np = 0, rc = 2;
    ds_run_t *runs = NULL;
    int nruns = 0;
    ds_cli_predictors_t pred;
    ds_cli_predictors_default(&pred);
    for (int i = 1; i < argc; i++) {
        char name[128];
        const char *val;
        int k = ds_cli_split("simulate", argv[i], name, sizeof name, &val);
        if (k == 0) { help(stdout); rc = 0; goto done; }
        if (k < 0) goto done;
        /* flags without a value */
        if (ds_run_flag(&sc, name)) continue;
        if (!strcmp(name, "tenants")) { tenants = 1; continue; }
        if (!strcmp(name, "quiet")) { quiet = 1; continue; }
        if (ds_cli_value("simulate", argc, argv, &i, name, &val)) goto done;
        if (!strcmp(name, "mode") && !strcmp(val, "both")) { both = 1; continue; }
        int w = ds_cli_common_opt("simulate", &wo, &sc, &pred, name, val);
        if (w < 0) goto done;
        if (w > 0) continue;
        if (!strcmp(name, "policy")) policy = val;
        else if (!strcmp(name, "json")) json = val;
        else if (!strcmp(name, "out")) out = val;
        else if (!strcmp(name, "config")) config_file = val;
        else if (!strcmp(name, "explain")) explain = val;
        else {
            pkeys[np] = strdup(name);
            pvals[np++] = val;
        }
    }
    if (ds_runs_pick(policy, "--policy", &runs, &nruns)) goto done;
    if (both) {
        /* --mode both: every policy partitioned, then every policy pooled, in one table */
        ds_run_t *more = NULL;
        int nmore = 0;
        if (ds_runs_pick(policy, "--policy", &more, &nmore)) goto done;
        runs = ds_xrealloc(runs, (size_t)(nruns + nmore) * sizeof *runs);
        memcpy(runs + nruns, more, (size_t)nmore * sizeof *runs);
        free(more);
        nruns += nmore;
    }
    for (int k = 0; k < np; k++) {
        int r = ds_runs_set_param(runs, nruns, pkeys[k], pvals[k], NULL);
        if (r < 0) goto done;
        if (r > 0) {
            fprintf(stderr, "deepshare simulate: unknown option --%s (see --help)\n", pkeys[k]);
            goto done;
        }
    }
    if (config_file && ds_runs_read_config(runs, nruns, config_file)) goto done;

    ds_trace_t trace;
    ds_coloc_t coloc;
    ds_speeds_t speeds;
    memset(&speeds, 0, sizeof speeds);
    wo.speeds = &speeds;
    int have_coloc = 0;
    ds_error_t err;
    ds_error_clear(&err);
    if (ds_workload_open(&wo, &trace, &coloc, &have_coloc)) {
        ds_speeds_free(&speeds);
        rc = 1;
        goto done;
    }
    sc.coloc = have_coloc ? &coloc : NULL;
    sc.speeds = speeds.nrows ? &speeds : NULL;
    pred.speeds = sc.speeds;
    sc.seed = wo.synth.seed;
    sc.keep_events = out != NULL; /* events.csv */
    explainer_t ex = {.t = &trace, .job = -1};
    if (explain) {
        char *end;
        long long id = strtoll(explain, &end, 10);
        for (int32_t j = 0; !*end && j < trace.njobs && ex.job < 0; j++)
            if (trace.jobs[j].id == id) ex.job = j;
        if (ex.job < 0) {
            fprintf(stderr, "deepshare simulate: --explain: no job with id '%s' in %s\n", explain, trace.source);
            if (have_coloc) ds_coloc_free(&coloc);
            ds_trace_free(&trace);
            rc = 2;
            goto done;
        }
        sc.after_pass = explain_pass;
        sc.after_pass_ctx = &ex;
    }
    /* before a run allocates its cluster and series: a trace (or quotas) beyond this machine is named */
    if (ds_fits_run(&trace, &sc, 1, &err) ||
        ds_cli_predictors_setup(&pred, &trace, sc.coloc, ds_runs_use_predictors(runs, nruns), &err)) {
        ds_die_error(&err);
        if (have_coloc) ds_coloc_free(&coloc);
        ds_speeds_free(&speeds);
        ds_trace_free(&trace);
        rc = 1;
        goto done;
    }
    sc.engine.predictors = &pred.set;
    const ds_sim_result_t **ok = calloc((size_t)nruns, sizeof *ok);
    ds_report_meta_t *meta = calloc((size_t)nruns, sizeof *meta);
    char (*est)[600] = calloc((size_t)nruns, sizeof *est);
    int nok = 0, failed = 0;
    for (int i = 0; i < nruns; i++) {
        ds_error_clear(&err);
        if (both) sc.engine.mode = i < nruns / 2 ? DS_MODE_PARTITIONED : DS_MODE_POOLED;
        /* the production models enforce quotas on one shared cluster (SPEC 7.1): --mode both runs them pooled */
        if (both && sc.engine.mode == DS_MODE_PARTITIONED && (runs[i].ops->props & DS_POLICY_PRODUCTION)) continue;
        ex.policy = runs[i].ops->name, ex.mode = sc.engine.mode, ex.last = 0, ex.status = -1;
        if (ds_run_one(&trace, &sc, &runs[i], &err)) {
            char buf[1200];
            ds_error_format(&err, buf, sizeof buf);
            fprintf(stderr, "deepshare: %s: %s\n", runs[i].ops->name, buf);
            /* 'all' skips policies the workload cannot feed (e.g. no estimates); named ones fail */
            if (strcmp(policy, "all") != 0) failed = 1;
            continue;
        }
        meta[nok].trace = trace.source;
        meta[nok].predictor = (runs[i].ops->props & DS_POLICY_USES_PREDICTORS) ? pred.kind : NULL;
        meta[nok].estimates = ds_run_estimates(runs[i].ops, &trace, pred.kind, wo.estimates, est[nok], sizeof est[nok]);
        ok[nok++] = &runs[i].res;
    }
    if (nok && !quiet) {
        printf("workload: %s, %d jobs, %d tenants\n", trace.source, trace.njobs, trace.ntenants);
        ds_report_table(stdout, ok, nok);
        if (tenants)
            for (int i = 0; i < nok; i++) {
                printf("\n%s per tenant:\n", ok[i]->policy);
                ds_report_tenant_table(stdout, ok[i]);
            }
        /* With DeepShare and baselines pooled in one table, say how it fares against the suite's goal. */
        ds_vrow_t *rows = calloc((size_t)nok, sizeof *rows);
        for (int i = 0; i < nok && rows; i++) {
            snprintf(rows[i].policy, sizeof rows[i].policy, "%s", ok[i]->policy);
            rows[i].pooled = ok[i]->mode == DS_MODE_POOLED;
            rows[i].avg_queue = ok[i]->queue.avg, rows[i].p99_queue = ok[i]->queue.p99;
            rows[i].compliance = ok[i]->qad_compliance, rows[i].avg_jct = ok[i]->jct.avg;
        }
        ds_verdict_t v;
        if (rows) ds_verdict_judge(rows, nok, sc.qad_theta, &v);
        if (rows && v.have_ds && v.have_pooled_base) ds_verdict_print(stdout, &v);
        free(rows);
    }
    if (json && nok) {
        FILE *f = strcmp(json, "-") ? fopen(json, "w") : stdout;
        if (!f) {
            fprintf(stderr, "deepshare: %s: cannot write: %s\n", json, strerror(errno));
            failed = 1;
        } else {
            if (nok == 1) ds_report_json(f, ok[0], &meta[0]);
            else ds_report_json_many(f, ok, meta, nok);
            if (f != stdout && fclose(f)) failed = 1;
        }
    }
    if (out && nok) {
        for (int i = 0; i < nok; i++) {
            char dir[1024];
            if (nok == 1) snprintf(dir, sizeof dir, "%s", out);
            else {
                if (mkdir(out, 0777) && errno != EEXIST) {
                    fprintf(stderr, "deepshare: %s: cannot create directory: %s\n", out, strerror(errno));
                    failed = 1;
                    break;
                }
                if (both)
                    snprintf(dir, sizeof dir, "%s/%s-%s", out, ok[i]->policy,
                             ok[i]->mode == DS_MODE_POOLED ? "pooled" : "partitioned");
                else
                    snprintf(dir, sizeof dir, "%s/%s", out, ok[i]->policy);
            }
            ds_error_clear(&err);
            if (ds_report_write_csv(dir, &trace, ok[i], &err)) {
                ds_die_error(&err);
                failed = 1;
            }
        }
    }
    rc = (failed || !nok) ? 1 : 0;
    free(ok);
    free(meta);
    free(est);
    ds_cli_predictors_free(&pred);
    if (have_coloc) ds_coloc_free(&coloc);
    ds_speeds_free(&speeds);
    ds_trace_free(&trace);
done:
    ds_runs_free(runs, nruns);
    for (int k = 0; k < np; k++) free((void *)pkeys[k]);
    free(pkeys);
    free(pvals);
    return rc;
}
