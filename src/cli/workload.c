/* workload.c: the options that choose a workload (trace files or the synthetic generator) and loading it. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

void ds_workload_opts_default(ds_workload_opts_t *o)
{
    memset(o, 0, sizeof *o);
    ds_synth_config_default(&o->synth);
    o->arrival_scale = 1.0;
    o->missing_rho_value = 1.0;
}

int ds_workload_opt(ds_workload_opts_t *o, const char *name, const char *arg)
{
    int64_t v;
    double d;
    if (!strcmp(name, "trace")) o->trace = arg;
    else if (!strcmp(name, "vc-config") || !strcmp(name, "tenants")) o->vc_config = arg;
    else if (!strcmp(name, "estimates")) o->estimates = arg;
    else if (!strcmp(name, "coloc")) o->coloc = arg;
    else if (!strcmp(name, "cluster")) o->cluster = arg;
    else if (!strcmp(name, "speeds")) o->speeds_path = arg;
    else if (!strcmp(name, "ref-gpu-type")) o->ref_gtype = arg;
    else if (!strcmp(name, "synth-gpu-types")) o->synth.gpu_types = arg, o->synth_given = 1;
    else if (!strcmp(name, "synth-type-requests")) {
        if (ds_parse_f64("--synth-type-requests", arg, 0, 1, &d)) return -1;
        o->synth.type_requests = d, o->synth_given = 1;
    }
    else if (!strcmp(name, "seed")) {
        if (ds_parse_i64("--seed", arg, 0, INT64_MAX, &v)) return -1;
        o->synth.seed = (uint64_t)v;
    } else if (!strcmp(name, "synth-jobs")) {
        if (ds_parse_i64("--synth-jobs", arg, 1, 100000000, &v)) return -1;
        o->synth.jobs = v, o->synth_given = 1;
    } else if (!strcmp(name, "synth-tenants")) {
        if (ds_parse_i64("--synth-tenants", arg, 1, DS_MAX_TENANTS, &v)) return -1;
        o->synth.tenants = (int32_t)v, o->synth_given = 1;
    } else if (!strcmp(name, "synth-nodes")) {
        if (ds_parse_i64("--synth-nodes", arg, 1, 1000000, &v)) return -1;
        o->synth.nodes = (int32_t)v, o->synth_given = 1;
    } else if (!strcmp(name, "synth-days")) {
        if (ds_parse_f64("--synth-days", arg, 0, 3650, &d)) return -1;
        o->synth.days = d, o->synth_given = 1;
    } else if (!strcmp(name, "synth-load")) {
        if (ds_parse_f64("--synth-load", arg, 0.01, 100, &d)) return -1;
        o->synth.load = d, o->synth_given = 1;
    } else if (!strcmp(name, "synth-be-share")) {
        if (ds_parse_f64("--synth-be-share", arg, 0, 1, &d)) return -1;
        o->synth.be_share = d, o->synth_given = 1;
    } else if (!strcmp(name, "synth-noisy")) {
        if (ds_parse_f64("--synth-noisy", arg, 0, 1000, &d)) return -1;
        o->synth.noisy = d, o->synth_given = 1;
    } else if (!strcmp(name, "synth-large-share")) {
        if (ds_parse_f64("--synth-large-share", arg, 0, 0.95, &d)) return -1;
        o->synth.large_share = d, o->synth_given = 1;
    } else if (!strcmp(name, "trace-estimates")) {
        if (strcmp(arg, "keep") && strcmp(arg, "drop")) {
            fprintf(stderr, "deepshare: option --trace-estimates: '%s' is not keep or drop\n", arg);
            return -1;
        }
        o->drop_estimates = !strcmp(arg, "drop");
    } else if (!strcmp(name, "missing-rho")) {
        if (!strcmp(arg, "model")) {
            o->missing_rho_model = 1;
        } else {
            if (ds_parse_f64("--missing-rho", arg, 0.01, 1, &d)) return -1;
            o->missing_rho_model = 0, o->missing_rho_value = d;
        }
    } else if (!strcmp(name, "missing-rho-profile")) {
        o->missing_rho_profile = arg;
    } else if (!strcmp(name, "missing-rho-single")) {
        o->missing_rho_single = arg;
    } else if (!strcmp(name, "arrival-scale")) {
        if (ds_parse_f64("--arrival-scale", arg, 0.01, 1000, &d)) return -1;
        o->arrival_scale = d;
    } else
        return 0;
    return 1;
}

#ifndef DS_GAVEL_DIRS
#define DS_GAVEL_DIRS ""
#endif

const char *ds_gavel_file(const char *name, char *buf, size_t n)
{
    /* DS_GAVEL_DIRS: the install location, then the source tree's data/gavel (CMakeLists.txt) */
    char dirs[2048];
    snprintf(dirs, sizeof dirs, "%s", DS_GAVEL_DIRS);
    char *save = NULL;
    for (char *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        struct stat st;
        snprintf(buf, n, "%s/%s", d, name);
        if (stat(buf, &st) == 0 && S_ISREG(st.st_mode)) return buf;
    }
    return NULL;
}

int ds_workload_load(const ds_workload_opts_t *o, ds_trace_t *t, ds_coloc_t *coloc, int *have_coloc, ds_error_t *err)
{
    int rc;
    ds_trace_init(t);
    char defspeeds[1200], defpairs[1200];
    const char *speeds = o->speeds_path, *colocp = o->coloc;
    if ((o->speeds_path || o->cluster || o->synth.gpu_types) && !o->speeds) {
        ds_error_set(err, NULL, 0, o->speeds_path ? "speeds" : o->cluster ? "cluster" : "synth-gpu-types",
                     "this command does not take GPU types");
        return DS_EINVAL;
    }
    if (o->synth.gpu_types && !o->trace) {
        /* the shipped Gavel tables: the speeds the workload is drawn from and, unless --coloc says otherwise, the
         * retention of pairs per type */
        if (!speeds && !(speeds = ds_gavel_file("speeds.csv", defspeeds, sizeof defspeeds))) {
            ds_error_set(err, NULL, 0, "speeds", "--synth-gpu-types needs a speed table: give --speeds FILE "
                         "(deepshare import gavel converts Gavel's)");
            return DS_EINVAL;
        }
        if (!colocp) colocp = ds_gavel_file("pairs.csv", defpairs, sizeof defpairs);
    }
    if (speeds && (rc = ds_speeds_read(o->speeds, speeds, err))) return rc;
    if (o->cluster && !o->trace) {
        ds_error_set(err, NULL, 0, "cluster", "--cluster applies to --trace (the synthetic workload takes --synth-gpu-types)");
        return DS_EINVAL;
    }
    if (o->trace) {
        if (!o->vc_config) {
            ds_error_set(err, NULL, 0, "vc-config", "--trace needs --vc-config FILE (tenants and their quotas)");
            return DS_EINVAL;
        }
        if (o->synth_given) {
            ds_error_set(err, NULL, 0, "synth-*", "--synth-* options apply to the synthetic workload, not to --trace");
            return DS_EINVAL;
        }
        if (o->cluster && (rc = ds_trace_read_cluster(t, o->cluster, err))) return rc;
        if ((rc = ds_trace_read_tenants(t, o->vc_config, 8, err))) return rc;
        if ((rc = ds_trace_read_jobs(t, o->trace, err))) return rc;
    } else {
        if (o->vc_config) {
            ds_error_set(err, NULL, 0, "vc-config", "--vc-config needs --trace FILE");
            return DS_EINVAL;
        }
        /* before generating: 10^8 jobs took 98 s to reach the memory limit; the default cycle sizes the series */
        if ((rc = ds_fits_synth(&o->synth, 60, err))) return rc;
        ds_synth_config_t sc = o->synth;
        sc.speeds = o->speeds && o->speeds->nrows ? o->speeds : NULL;
        if ((rc = ds_synth_generate(t, &sc, err))) return rc;
    }
    if (o->ref_gtype) {
        int32_t k = ds_trace_find_gtype(t, o->ref_gtype);
        if (k < 0) {
            ds_error_set(err, NULL, 0, "ref-gpu-type", "'%s' is not a GPU type of the cluster", o->ref_gtype);
            return DS_EINVAL;
        }
        t->ref_gtype = k;
    }
    if (o->speeds && o->speeds->nrows) {
        if (!t->ngtypes) {
            ds_error_set(err, NULL, 0, "speeds", "a speed table needs GPU types (--cluster FILE, quota_<type> columns "
                         "or --synth-gpu-types)");
            return DS_EINVAL;
        }
        ds_speeds_bind(o->speeds, t);
        for (int32_t k = 0; k < t->ngtypes; k++)
            if (t->gtypes[k].weight <= 0) t->gtypes[k].weight = ds_speeds_type_weight(o->speeds, t, k);
    }
    if (o->arrival_scale != 1.0) ds_trace_scale_arrivals(t, o->arrival_scale);
    if (o->drop_estimates)
        for (int32_t j = 0; j < t->njobs; j++) t->jobs[j].estimate = NAN;
    if (o->estimates) {
        int32_t matched = 0;
        /* Lucid's convention for its estimate files: a negative estimate becomes 1000 s. */
        if ((rc = ds_trace_read_estimates(t, o->estimates, 1000.0, &matched, err))) return rc;
        if (matched < t->njobs)
            fprintf(stderr, "deepshare: warning: %s has estimates for %d of %d jobs\n", o->estimates, matched, t->njobs);
    }
    *have_coloc = 0;
    if (colocp) {
        if ((rc = ds_coloc_read(coloc, colocp, err))) return rc;
        ds_coloc_bind(coloc, t);
        *have_coloc = 1;
    }
    if (o->missing_rho_model || o->missing_rho_value != 1.0) {
        /* without a profile every pair is unprofiled: an empty one carries their truth */
        if (!*have_coloc) ds_coloc_empty(coloc, t), *have_coloc = 1;
        ds_workload_opts_t oo = *o;
        if (!oo.missing_rho_profile) oo.missing_rho_profile = o->coloc;
        if ((rc = ds_missing_rho_apply(coloc, t, &oo, err))) {
            ds_coloc_free(coloc);
            *have_coloc = 0;
            return rc;
        }
    }
    return DS_OK;
}

int ds_workload_open(const ds_workload_opts_t *o, ds_trace_t *t, ds_coloc_t *coloc, int *have_coloc)
{
    ds_error_t err;
    ds_error_clear(&err);
    if (!ds_workload_load(o, t, coloc, have_coloc, &err)) return 0;
    ds_die_error(&err);
    ds_trace_free(t);
    return 1;
}
