/* import.c: 'deepshare import': converts a published GPU-cluster trace into the generic jobs.csv and tenants.csv. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/runner.h"
#include "deepshare/import.h"

static void help(FILE *f)
{
    fprintf(f,
            "usage: deepshare import FORMAT INPUT... --out DIR [options]\n"
            "\n"
            "Converts a published GPU-cluster trace, as its authors publish it, into the generic trace format:\n"
            "DIR/jobs.csv and DIR/tenants.csv, which 'deepshare simulate --trace DIR/jobs.csv --vc-config\n"
            "DIR/tenants.csv' (and compare) read. Prints a summary: jobs, tenants, window, GPU-hours, offered load.\n"
            "\n"
            "formats and inputs (docs/trace-format.md maps every column):\n"
            "  helios cluster_log.csv        SenseTime Helios (Venus, Earth, Saturn, Uranus; also Philly as the\n"
            "                                Helios artifact republishes it); tenants are VCs\n"
            "  acme trace_seren.csv          Shanghai AI Lab Acme (Seren, Kalos); tenants are users\n"
            "  philly cluster_job_log        Microsoft Philly (msr-fiddle/philly-traces, JSON); tenants are VCs\n"
            "  pai pai_job_table.csv pai_task_table.csv [pai_group_tag_table.csv]\n"
            "                                Alibaba PAI GPU trace 2020 (headerless CSVs); tenants are users.\n"
            "                                With --machines pai_machine_spec.csv each job keeps the GPU type of\n"
            "                                its largest task (gpu_type)\n"
            "  alibaba openb_pod_list_*.csv openb_node_list_*.csv\n"
            "                                Alibaba GPU trace 2023 (cluster-trace-gpu-v2023): pods (num_gpu,\n"
            "                                gpu_spec, qos) and the nodes' GPU types (model); tenants are QoS classes\n"
            "  gavel SPEEDS.json [PAIRS.json]\n"
            "                                Gavel's throughput tables (MIT): writes DIR/speeds.csv (each workload's\n"
            "                                throughput alone per GPU type, from SPEEDS.json, for --speeds) and\n"
            "                                DIR/pairs.csv (retention of pairs sharing a GPU per type, from PAIRS.json,\n"
            "                                default the same, for --coloc) instead of jobs and tenants. data/gavel is\n"
            "                                physical_cluster_throughputs.json simulation_throughputs.json\n"
            "\n"
            "options:\n"
            "  --out DIR              output folder (created if needed; jobs.csv and tenants.csv are replaced)\n"
            "  --vc-sizes FILE        tenant sizes: Helios cluster_gpu_number.csv (GPUs per VC per day; the row of\n"
            "                         the window's first day is used) or a tenant file as --vc-config takes it.\n"
            "                         Alias --quotas. Without it quotas are derived (see --load)\n"
            "  --load X               target offered load of derived quotas (0.85): each tenant gets its share of\n"
            "                         the GPU-hours divided by X and by the window, in whole nodes, and at least\n"
            "                         its largest job in whole nodes\n"
            "  --gpus-per-node N      node size for quotas (8)\n"
            "  --machines FILE        pai: pai_machine_spec.csv, the machines' GPU types: jobs keep their type\n"
            "  --tenant-by FIELD      what a tenant is: helios vc|user, acme user|type, philly vc|user,\n"
            "                         pai user|group|gpu-type (group needs pai_group_tag_table.csv), alibaba qos\n"
            "  --philly-duration M    sum (default): a job's attempts add up; last: only its last attempt\n"
            "  --from T, --to T       keep jobs submitted at --from or later and before --to; T is a date\n"
            "                         'YYYY-MM-DD[ HH:MM:SS]' (UTC) or seconds on the trace's clock (PAI)\n"
            "  --busiest-days N       keep the N consecutive days with the most GPU-hours submitted\n"
            "  --states LIST          states kept, comma-separated: completed, failed, cancelled, timeout,\n"
            "                         node_fail, other, or all (default all)\n"
            "  --min-duration S       drop jobs that ran less than S seconds (0)\n"
            "  --skip-bad             skip malformed rows and report how many (default: the first one stops the\n"
            "                         import with its file, line and column, and nothing is written)\n"
            "\n"
            "Only GPU jobs are imported: the generic format and the simulator model GPU jobs, so CPU-only jobs are\n"
            "always dropped (and counted). Jobs that never ran or had not finished when the trace ends are dropped\n"
            "too. Submit times are written relative to midnight (UTC) of the window's first day.\n"
            "\n"
            "GPU types: where a node list gives them (alibaba; pai with --machines), DIR/cluster.csv has the node types\n"
            "(nodes, GPUs, CPUs, MiB per node of each; a type's nodes modelled alike, with the most GPUs), jobs.csv a\n"
            "gpu_type column (the types a job may run on, '|'-joined; empty: any) and tenants.csv per-type quotas\n"
            "(quota_<type>: each tenant's quota split by its GPU-time on each type). Simulate with --cluster\n"
            "DIR/cluster.csv. A job asking for types no node has, or more GPUs than their nodes hold, is dropped.\n"
            "\n"
            "exit status: 0 written; 1 an input could not be read or is malformed, or no job is left; 2 bad usage.\n");
}

static int parse_states(const char *s, unsigned *out)
{
    if (!strcmp(s, "all")) {
        *out = (1u << DS_IMP_NSTATES) - 1;
        return 0;
    }
    unsigned m = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", s);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int k = ds_imp_state_parse(tok);
        if (k < 0) {
            fprintf(stderr, "deepshare import: option --states: '%s' is not completed, failed, cancelled, timeout, "
                            "node_fail, other or all\n", tok);
            return -1;
        }
        m |= 1u << k;
    }
    if (!m) {
        fprintf(stderr, "deepshare import: option --states: no state given\n");
        return -1;
    }
    *out = m;
    return 0;
}

static int parse_time_opt(const char *opt, const char *s, int64_t *out, int *dated)
{
    int is_date;
    if (ds_imp_parse_time(s, out, &is_date)) {
        fprintf(stderr, "deepshare import: option %s: '%s' is not a date (YYYY-MM-DD[ HH:MM:SS]) or seconds\n", opt, s);
        return -1;
    }
    *dated |= is_date;
    return 0;
}

static const char *const tenant_fields[][4] = {
    {"helios", "vc", "user", NULL}, {"acme", "user", "type", NULL},
    {"philly", "vc", "user", NULL}, {"pai", "user", "group", "gpu-type"}, {"alibaba", "qos", NULL, NULL},
};

static void summary(const ds_import_t *im, const ds_import_opts_t *o, const char *fmt, const char *sizes,
                    const char *out)
{
    char a[64], b[64], c[64];
    printf("import %s: %lld jobs read, %d imported\n", fmt, (long long)im->rows, im->njobs);
    for (int d = 0; d < DS_DROP_N; d++)
        if (im->dropped[d]) printf("  dropped %lld: %s\n", (long long)im->dropped[d], ds_imp_drop_name(d));
    if (im->orphans) printf("  ignored %lld tasks whose job is not in the job table\n", (long long)im->orphans);
    if (im->bad) printf("  skipped %lld malformed rows (--skip-bad); the first: %s\n", (long long)im->bad, im->first_bad);
    int ntenants = 0;
    for (int32_t t = 0; t < im->tenants.n; t++) ntenants += im->active[t];
    ds_imp_format_time(im, im->win_from, a, sizeof a);
    ds_imp_format_time(im, im->win_to, b, sizeof b);
    ds_imp_format_time(im, im->origin, c, sizeof c);
    printf("window:       %s to %s (%.2f days); submit 0 is %s\n", a, b,
           (double)(im->win_to - im->win_from) / 86400.0, c);
    printf("tenants:      %d\n", ntenants);
    printf("GPU-hours:    %.1f\n", ds_import_gpu_seconds(im) / 3600.0);
    int64_t q = ds_import_total_quota(im);
    if (sizes)
        printf("quotas:       %lld GPUs (%lld nodes of %d) from %s\n", (long long)q,
               (long long)((q + o->gpus_per_node - 1) / o->gpus_per_node), o->gpus_per_node, sizes);
    else
        printf("quotas:       %lld GPUs (%lld nodes of %d), derived for an offered load of %.2f\n", (long long)q,
               (long long)((q + o->gpus_per_node - 1) / o->gpus_per_node), o->gpus_per_node, o->load);
    if (im->quota_raised)
        printf("              %d tenants raised to fit their largest job\n", im->quota_raised);
    printf("offered load: %.3f (GPU-time submitted / (quota GPUs x %s))\n", ds_import_offered_load(im),
           ds_import_window_short(im) ? "the jobs' mean run time, longer than the window" : "window");
    /* a job spreads its CPUs over its nodes; the trace's nodes may have more CPUs than simulate assumes */
    int64_t need = 0;
    for (int32_t i = 0; i < im->njobs; i++) {
        int64_t nodes = (im->jobs[i].gpus + o->gpus_per_node - 1) / o->gpus_per_node;
        int64_t per = (im->jobs[i].cpus + nodes - 1) / nodes;
        if (per > need) need = per;
    }
    ds_sim_config_t sc;
    ds_sim_config_default(&sc);
    if (need > sc.engine.cpus_per_node)
        printf("CPUs:         jobs ask for up to %lld CPUs per node, more than simulate's default %d: simulate with\n"
               "              --cpus-per-node %lld (or --no-cpu-check)\n",
               (long long)need, sc.engine.cpus_per_node, (long long)need);
    if (im->ngt) {
        printf("GPU types:    from %s (%lld nodes without GPUs left out); %lld jobs ask for particular types\n",
               im->nodes_src, (long long)im->cpu_nodes, (long long)im->typed_jobs);
        for (int32_t k = 0; k < im->ngt; k++) {
            const ds_imp_gtype_t *g = &im->gt[k];
            printf("              %s: %d nodes x %d GPUs", g->name, g->nodes, g->gpus);
            if (g->smaller) printf(" (%d nodes have fewer: %lld GPUs listed, modelled as %lld)", g->smaller,
                                   (long long)g->total_gpus, (long long)g->nodes * g->gpus);
            printf("\n");
        }
        printf("wrote %s/jobs.csv, %s/tenants.csv and %s/cluster.csv (simulate --cluster %s/cluster.csv)\n", out, out,
               out, out);
        return;
    }
    if (im->types_not_kept)
        printf("GPU types:    %lld jobs ask for a GPU type, not kept without the machines' types (--machines)\n",
               (long long)im->types_not_kept);
    printf("wrote %s/jobs.csv and %s/tenants.csv\n", out, out);
}

static int make_out_dir(const char *out)
{
    struct stat st;
    if ((mkdir(out, 0777) && errno != EEXIST) || stat(out, &st) || !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "deepshare: %s: cannot create directory: %s\n", out,
                errno == EEXIST ? "a file of that name exists" : strerror(errno));
        return -1;
    }
    return 0;
}

static int import_gavel(int ninputs, const char *const *inputs, const char *out)
{
    if (ninputs < 1 || ninputs > 2 || !out) {
        fprintf(stderr, "deepshare import: gavel takes one or two input files and --out DIR (see --help)\n");
        return 2;
    }
    if (make_out_dir(out)) return 1;
    ds_gavel_summary_t sum;
    ds_error_t err;
    ds_error_clear(&err);
    if (ds_import_gavel(inputs[0], ninputs > 1 ? inputs[1] : NULL, out, &sum, &err)) {
        ds_die_error(&err);
        return 1;
    }
    printf("import gavel: %d GPU types (%d '*_unconsolidated' left out), %lld throughputs, %lld pairs (%lld more "
           "marked [0, 0], 'does not fit or not run': left out, so unprofiled)\n", sum.types, sum.skipped_types,
           (long long)sum.speeds, (long long)sum.pairs, (long long)sum.unfit);
    if (sum.unmeasured) printf("  %lld entries without a throughput left out\n", (long long)sum.unmeasured);
    if (sum.multi_gpu_pairs) printf("  %lld measured pairs of multi-GPU jobs not converted\n", (long long)sum.multi_gpu_pairs);
    printf("wrote %s/speeds.csv and %s/pairs.csv\n", out, out);
    return 0;
}

int ds_cmd_import(int argc, char **argv)
{
    ds_import_opts_t o;
    ds_import_opts_default(&o);
    const char *fmt = NULL, *inputs[4] = {0}, *out = NULL, *sizes = NULL, *machines = NULL;
    int ninputs = 0, dated = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--", 2) != 0 && strcmp(argv[i], "-h") != 0) {
            if (!fmt) fmt = argv[i];
            else if (ninputs < 4) inputs[ninputs++] = argv[i];
            else {
                fprintf(stderr, "deepshare import: unexpected argument '%s' (see --help)\n", argv[i]);
                return 2;
            }
            continue;
        }
        char name[128];
        const char *val;
        int k = ds_cli_split("import", argv[i], name, sizeof name, &val);
        if (k == 0) {
            help(stdout);
            return 0;
        }
        if (k < 0) return 2;
        if (!strcmp(name, "skip-bad")) {
            o.skip_bad = 1;
            continue;
        }
        if (ds_cli_value("import", argc, argv, &i, name, &val)) return 2;
        int64_t v;
        if (!strcmp(name, "out")) out = val;
        else if (!strcmp(name, "vc-sizes") || !strcmp(name, "quotas")) sizes = val;
        else if (!strcmp(name, "machines")) machines = val;
        else if (!strcmp(name, "load")) {
            if (ds_parse_f64("--load", val, 0.01, 100, &o.load)) return 2;
        } else if (!strcmp(name, "gpus-per-node")) {
            if (ds_parse_i64("--gpus-per-node", val, 1, 1024, &v)) return 2;
            o.gpus_per_node = (int)v;
        } else if (!strcmp(name, "tenant-by")) o.tenant_by = val;
        else if (!strcmp(name, "philly-duration")) {
            if (strcmp(val, "sum") && strcmp(val, "last")) {
                fprintf(stderr, "deepshare import: option --philly-duration: '%s' is not sum or last\n", val);
                return 2;
            }
            o.philly_last_attempt = !strcmp(val, "last");
        } else if (!strcmp(name, "from")) {
            if (parse_time_opt("--from", val, &o.from, &dated)) return 2;
            o.has_from = 1;
        } else if (!strcmp(name, "to")) {
            if (parse_time_opt("--to", val, &o.to, &dated)) return 2;
            o.has_to = 1;
        } else if (!strcmp(name, "busiest-days")) {
            if (ds_parse_i64("--busiest-days", val, 1, 100000, &v)) return 2;
            o.busiest_days = (int)v;
        } else if (!strcmp(name, "states")) {
            if (parse_states(val, &o.states)) return 2;
        } else if (!strcmp(name, "min-duration")) {
            if (ds_parse_i64("--min-duration", val, 0, INT64_MAX / 2, &o.min_duration)) return 2;
        } else {
            fprintf(stderr, "deepshare import: unknown option --%s (see --help)\n", name);
            return 2;
        }
    }
    if (!fmt) {
        fprintf(stderr, "deepshare import: which format? helios, acme, philly, pai or alibaba (see --help)\n");
        return 2;
    }
    if (!strcmp(fmt, "gavel")) return import_gavel(ninputs, inputs, out);
    int f = -1;
    for (int k = 0; k < 5; k++)
        if (!strcmp(fmt, tenant_fields[k][0])) f = k;
    if (f < 0) {
        fprintf(stderr, "deepshare import: unknown format '%s' (helios, acme, philly, pai or alibaba)\n", fmt);
        return 2;
    }
    int want_min = f == 3 || f == 4 ? 2 : 1, want_max = f == 3 ? 3 : f == 4 ? 2 : 1;
    if (ninputs < want_min || ninputs > want_max) {
        fprintf(stderr, "deepshare import: %s takes %s (see --help)\n", fmt,
                f == 3   ? "pai_job_table.csv pai_task_table.csv [pai_group_tag_table.csv]"
                : f == 4 ? "openb_pod_list_*.csv openb_node_list_*.csv"
                         : "one input file");
        return 2;
    }
    if (machines && f != 3) {
        fprintf(stderr, "deepshare import: --machines is pai's machine list (alibaba's node list is its second input)\n");
        return 2;
    }
    if (!out) {
        fprintf(stderr, "deepshare import: --out DIR is required\n");
        return 2;
    }
    if (o.tenant_by) {
        int ok = 0;
        for (int k = 1; k < 4 && tenant_fields[f][k]; k++) ok |= !strcmp(o.tenant_by, tenant_fields[f][k]);
        if (!ok) {
            fprintf(stderr, "deepshare import: option --tenant-by: '%s' is not one of %s%s%s%s%s for %s\n", o.tenant_by,
                    tenant_fields[f][1], tenant_fields[f][2] ? ", " : "", tenant_fields[f][2] ? tenant_fields[f][2] : "",
                    tenant_fields[f][3] ? ", " : "", tenant_fields[f][3] ? tenant_fields[f][3] : "", fmt);
            return 2;
        }
    }
    if (o.has_from && o.has_to && o.to <= o.from) {
        fprintf(stderr, "deepshare import: --to must be later than --from\n");
        return 2;
    }
    ds_import_t im;
    ds_import_init(&im);
    ds_error_t err;
    ds_error_clear(&err);
    int rc;
    if (f == 0 || f == 1) rc = ds_import_helios(&im, &o, inputs[0], f == 1, &err);
    else if (f == 2) rc = ds_import_philly(&im, &o, inputs[0], &err);
    else if (f == 3) {
        rc = machines ? ds_import_nodes_pai(&im, machines, &err) : DS_OK;
        if (!rc) rc = ds_import_pai(&im, &o, inputs[0], inputs[1], inputs[2], &err);
    } else {
        rc = ds_import_nodes_alibaba(&im, inputs[1], &err);
        if (!rc) rc = ds_import_alibaba(&im, &o, inputs[0], &err);
    }
    if (!rc && dated && !im.clock_is_unix) {
        /* a date against a clock of plain seconds would silently select nothing or everything */
        fprintf(stderr, "deepshare import: --from/--to: %s's clock is seconds, not dates (PAI's clock is seconds "
                        "from an undisclosed origin); give seconds\n", inputs[0]);
        ds_import_free(&im);
        return 2;
    }
    if (!rc && (rc = ds_import_finish(&im, &o, &err))) {
        ds_die_error(&err);
        if (im.njobs == 0) {
            fprintf(stderr, "deepshare import: dropped:");
            for (int d = 0; d < DS_DROP_N; d++)
                fprintf(stderr, " %lld %s%s", (long long)im.dropped[d], ds_imp_drop_name(d), d + 1 < DS_DROP_N ? "," : "\n");
        }
        if (im.bad) fprintf(stderr, "deepshare import: skipped %lld malformed rows\n", (long long)im.bad);
        ds_import_free(&im);
        return 1;
    }
    if (!rc && sizes) rc = ds_import_read_sizes(&im, &o, sizes, &err);
    if (rc) {
        ds_die_error(&err);
        ds_import_free(&im);
        return rc == DS_EINVAL && !err.file[0] ? 2 : 1;
    }
    if ((rc = ds_import_quotas(&im, &o, &err))) {
        ds_die_error(&err);
        ds_import_free(&im);
        return 1;
    }
    if (ds_import_window_short(&im))
        fprintf(stderr, "deepshare import: warning: the submission window (%lld s) is shorter than the jobs' mean run "
                        "time (%lld s, weighted by GPU-time): an offered load over it means little%s\n",
                (long long)(im.win_to - im.win_from), (long long)im.mean_run,
                sizes ? "" : "; quotas are derived over the mean run time instead (give --vc-sizes, or a longer window)");
    if (make_out_dir(out)) {
        ds_import_free(&im);
        return 1;
    }
    if ((rc = ds_import_write(&im, &o, out, &err))) {
        ds_die_error(&err);
        ds_import_free(&im);
        return 1;
    }
    summary(&im, &o, fmt, sizes, out);
    ds_import_free(&im);
    return 0;
}
