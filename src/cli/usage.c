/* usage.c: 'deepshare usage': who used what over a time window, from deepshared's journal or a simulator
 * run's --out folder, as a table, CSV or JSON, and a plot (deepshare/usage.h, docs/usage.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "deepshare/datetime.h"
#include "deepshare/plot.h"
#include "deepshare/usage.h"
#include "cli/usage_metrics.h"

#include <time.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: deepshare usage (--journal FILE [--metrics URL] | --metrics URL | --run DIR) [--from T] [--to T]\n"
               "                       [--by tenant|user] [--format table|csv|json] [--output FILE] [--plot DIR]\n"
               "                       [--theta X] [--tenants FILE [--gpus-per-node N]] [--step S] [--match LABELS]\n"
               "Per tenant (or user) over [--from, --to): jobs finished, GPU-hours held, as guaranteed (G) and as\n"
               "best effort (BE), quota GPU-hours, GPU-hours borrowed (held above quota) and lent (idle quota that\n"
               "others' borrowing used, shared pro rata), hours under-served (demand and smoothed QAD < theta), QAD\n"
               "compliance, preemptions suffered and queueing delay percentiles of the jobs finished.\n"
               "  --journal FILE   deepshared's journal of finished jobs (its 'journal' setting): jobs and GPU-hours;\n"
               "                   it records no classes, queueing or QAD, so those columns read '-' (without --metrics)\n"
               "  --metrics URL    the Prometheus server that scrapes deepshared (e.g. http://localhost:9090): its\n"
               "                   per-tenant series give G/BE GPU-hours, quota, borrowed, lent, under-served hours,\n"
               "                   QAD compliance and preemptions; the journal, if given, the jobs (queueing stays '-')\n"
               "  --step S         with --metrics: seconds between samples (60)\n"
               "  --match LABELS   with --metrics: label matchers of deepshared's series, e.g. 'job=\"deepshared\"'\n"
               "  --run DIR        a 'deepshare simulate --out DIR' folder (jobs.csv, tenant_usage.csv): every column\n"
               "  --from, --to     'YYYY-MM-DD[ HH:MM[:SS]]' (UTC) or Unix seconds; default: the data's whole span\n"
               "                   (--metrics alone: --from is needed, --to defaults to now)\n"
               "  --plot DIR       writes DIR/usage.dat, DIR/plots.gp and renders DIR/usage.png with gnuplot\n"
               "  --theta X        the compliance threshold of the smoothed QAD (0.95)\n"
               "  --tenants FILE   with --journal: the quotas (tenant,quota_gpus, or Venus' vc_config in nodes of\n"
               "                   --gpus-per-node N GPUs, 8) for the quota column, taken as constant; every tenant\n"
               "                   it names gets a row\n");
}

static int parse_time(const char *opt, const char *s, int64_t *out)
{
    if (ds_datetime_parse(s, out) == 0) return 0;
    if (ds_parse_i64(opt, s, -DS_USAGE_MAX_TIME, DS_USAGE_MAX_TIME, out) == 0) return 0;
    fprintf(stderr, "deepshare usage: %s: expected 'YYYY-MM-DD[ HH:MM[:SS]]' or Unix seconds, got '%s'\n", opt, s);
    return -1;
}

/* The data's span: first start or sample to last end or sample, whole. */
static void span(const ds_usage_data_t *d, int64_t *lo, int64_t *hi)
{
    *lo = INT64_MAX, *hi = INT64_MIN;
    for (int64_t k = 0; k < d->njobs; k++) {
        int64_t s = d->jobs[k].end - d->jobs[k].run;
        if (d->jobs[k].submit >= 0 && d->jobs[k].submit < s) s = d->jobs[k].submit;
        if (s < *lo) *lo = s;
        if (d->jobs[k].end + 1 > *hi) *hi = d->jobs[k].end + 1;
    }
    for (int64_t k = 0; k < d->nsamples; k++) {
        if (d->samples[k].time < *lo) *lo = d->samples[k].time;
        if (d->samples[k].time + d->step > *hi) *hi = d->samples[k].time + d->step;
    }
    if (*lo > *hi) *lo = *hi = 0;
}

int ds_cmd_usage(int argc, char **argv)
{
    const char *journal = NULL, *run = NULL, *from_s = NULL, *to_s = NULL, *by = "tenant", *format = "table";
    const char *output = NULL, *plot = NULL, *theta_s = NULL, *tenants = NULL, *gpn_s = NULL;
    const char *metrics = NULL, *step_s = NULL, *match = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return 0; }
        const char **dst = !strcmp(a, "--journal") ? &journal : !strcmp(a, "--run") ? &run : !strcmp(a, "--from") ? &from_s
                           : !strcmp(a, "--to") ? &to_s : !strcmp(a, "--by") ? &by : !strcmp(a, "--format") ? &format
                           : !strcmp(a, "--output") ? &output : !strcmp(a, "--plot") ? &plot
                           : !strcmp(a, "--theta") ? &theta_s : !strcmp(a, "--tenants") ? &tenants
                           : !strcmp(a, "--gpus-per-node") ? &gpn_s : !strcmp(a, "--metrics") ? &metrics
                           : !strcmp(a, "--step") ? &step_s : !strcmp(a, "--match") ? &match : NULL;
        if (!dst) {
            fprintf(stderr, "deepshare usage: unknown option '%s' (see --help)\n", a);
            return 2;
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "deepshare usage: %s needs a value\n", a);
            return 2;
        }
        *dst = argv[++i];
    }
    if ((journal || metrics) == !!run) {
        fprintf(stderr, "deepshare usage: give --journal FILE and/or --metrics URL, or --run DIR (see --help)\n");
        return 2;
    }
    if (!metrics && (step_s || match)) {
        fprintf(stderr, "deepshare usage: --step and --match go with --metrics\n");
        return 2;
    }
    if (metrics && !journal && !from_s) {
        fprintf(stderr, "deepshare usage: --metrics without --journal needs --from (the window's start)\n");
        return 2;
    }
    int64_t step = 60;
    if (step_s && ds_parse_i64("--step", step_s, 1, 86400, &step)) return 2;
    if (match && (strlen(match) > 400 || strpbrk(match, "{}"))) {
        fprintf(stderr, "deepshare usage: --match: label matchers without braces, at most 400 bytes, e.g. 'job=\"deepshared\"'\n");
        return 2;
    }
    int by_user = !strcmp(by, "user");
    if (!by_user && strcmp(by, "tenant")) {
        fprintf(stderr, "deepshare usage: --by: expected tenant or user, got '%s'\n", by);
        return 2;
    }
    if (strcmp(format, "table") && strcmp(format, "csv") && strcmp(format, "json")) {
        fprintf(stderr, "deepshare usage: --format: expected table, csv or json, got '%s'\n", format);
        return 2;
    }
    double theta = 0.95;
    if (theta_s && ds_parse_f64("--theta", theta_s, 0, 1, &theta)) return 2;
    int64_t from = 0, to = 0;
    if ((from_s && parse_time("--from", from_s, &from)) || (to_s && parse_time("--to", to_s, &to))) return 2;
    ds_usage_data_t d;
    ds_usage_init(&d);
    ds_error_t err;
    ds_error_clear(&err);
    int64_t torn = 0;
    int rc = journal ? ds_usage_read_journal(&d, journal, &torn, &err) : run ? ds_usage_read_run(&d, run, &err) : 0;
    if (rc) {
        ds_die_error(&err);
        ds_usage_free(&d);
        return 1;
    }
    if (rc == 0 && tenants) {
        int64_t gpn = 8;
        ds_trace_t tt;
        ds_trace_init(&tt);
        if (gpn_s && ds_parse_i64("--gpus-per-node", gpn_s, 1, 64, &gpn)) rc = 2;
        else if (ds_trace_read_tenants(&tt, tenants, (int)gpn, &err)) ds_die_error(&err), rc = 1;
        else ds_usage_set_quotas(&d, &tt);
        ds_trace_free(&tt);
        if (rc) {
            ds_usage_free(&d);
            return rc;
        }
    }
    if (torn) fprintf(stderr, "deepshare usage: %s: the torn last record (a crash while writing) is left out\n", journal);
    int64_t lo, hi;
    span(&d, &lo, &hi);
    if (!from_s) from = lo;
    if (!to_s) to = journal || run ? hi : (int64_t)time(NULL);
    if (to <= from) {
        fprintf(stderr, "deepshare usage: the window is empty (--to must be after --from)\n");
        ds_usage_free(&d);
        return 2;
    }
    if (metrics) {
        char msg[1200];
        int64_t incomplete = 0;
        if (ds_usage_read_metrics(&d, metrics, match, from, to, step, 30.0, &incomplete, msg, sizeof msg)) {
            fprintf(stderr, "deepshare usage: %s\n", msg);
            ds_usage_free(&d);
            return 1;
        }
        snprintf(d.source, sizeof d.source, "%s", journal ? "journal+prometheus" : "prometheus");
        if (incomplete)
            fprintf(stderr, "deepshare usage: --metrics: %lld tenant-steps left out (a series lacked that point)\n",
                    (long long)incomplete);
    }
    ds_usage_report_t r;
    ds_usage_compute(&d, from, to, by_user, theta, &r);
    FILE *f = output ? fopen(output, "w") : stdout;
    if (!f) {
        fprintf(stderr, "deepshare usage: --output: cannot write '%s'\n", output);
        rc = 1;
    } else {
        if (!strcmp(format, "csv")) ds_usage_print_csv(f, &r);
        else if (!strcmp(format, "json")) ds_usage_print_json(f, &r, d.source);
        else ds_usage_print_table(f, &r, metrics ? (journal ? "deepshared journal and Prometheus" : "Prometheus")
                                              : journal ? "deepshared journal" : "simulator run");
        if (output && fclose(f)) {
            fprintf(stderr, "deepshare usage: --output: write failed on '%s'\n", output);
            rc = 1;
        }
    }
    if (rc == 0 && plot) {
        char gp[1024], msg[300];
        if (ds_usage_write_plot(plot, &r, &err)) {
            ds_die_error(&err);
            rc = 1;
        } else if (ds_plot_find_gnuplot(gp, sizeof gp)) {
            fprintf(stderr, "deepshare usage: no gnuplot found: %s/plots.gp written, not rendered\n", plot);
        } else if (ds_plot_render(gp, plot, msg, sizeof msg)) {
            fprintf(stderr, "deepshare usage: gnuplot: %s\n", msg);
            rc = 1;
        }
    }
    ds_usage_report_free(&r);
    ds_usage_free(&d);
    return rc;
}
