/* runner.c: the per-policy run shared by 'simulate' and 'compare': policy selection, parameters, the
 * cluster options of a run, and one timed simulation. */
#include "cli/runner.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/predictors.h"
#include "deepshare/lines.h"
#include "deepshare/policy_config.h"

int ds_runs_set_param(ds_run_t *runs, int n, const char *key, const char *val, const char *where)
{
    int taken = 0;
    for (int i = 0; i < n; i++) {
        if (!runs[i].ops->config_set && !runs[i].ops->inputs) continue;
        ds_error_t err;
        ds_error_clear(&err);
        int rc = ds_policy_config_set(runs[i].ops, runs[i].config, key, val, &err);
        if (rc == DS_OK) taken = 1;
        else if (rc != DS_ENOTFOUND) {
            if (!err.file[0] && where) snprintf(err.file, sizeof err.file, "%s", where);
            ds_die_error(&err);
            return -1;
        }
    }
    return taken ? 0 : 1;
}

static void trim_right(char *s)
{
    for (char *e = s + strlen(s); e > s && strchr(" \t\r\n", e[-1]);) *--e = '\0';
}

int ds_runs_read_config(ds_run_t *runs, int n, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "deepshare: %s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    /* whole lines, bounded while reading: a fixed buffer split long lines and parsed their tail as a parameter */
    ds_lines_t in;
    ds_lines_init(&in, f, 65536);
    long ln = 0;
    int rc = 0, got;
    while ((got = ds_lines_next(&in)) != DS_LINE_EOF) {
        ln++;
        if (got < 0) {
            fprintf(stderr, "deepshare: %s:%ld: %s\n", path, ln,
                    got == DS_LINE_NUL ? "NUL byte in line (binary file?)"
                    : got == DS_LINE_LONG ? "line longer than 65536 characters" : strerror(errno));
            rc = -1;
            break;
        }
        char *line = in.line;
        char *h = strchr(line, '#');
        if (h) *h = '\0';
        char *k = line;
        while (*k == ' ' || *k == '\t') k++;
        if (!*k || *k == '\n') continue;
        char *eq = strchr(k, '=');
        if (!eq) {
            fprintf(stderr, "deepshare: %s:%ld: expected 'name = value'\n", path, ln);
            rc = -1;
            break;
        }
        *eq = '\0';
        char *v = eq + 1;
        trim_right(k);
        while (*v == ' ' || *v == '\t') v++;
        trim_right(v);
        char where[600];
        snprintf(where, sizeof where, "%s:%ld", path, ln);
        int r = ds_runs_set_param(runs, n, k, v, where);
        if (r < 0) { rc = -1; break; }
        if (r > 0) {
            fprintf(stderr, "deepshare: %s:%ld: unknown parameter '%s' for the selected policies\n", path, ln, k);
            rc = -1;
            break;
        }
    }
    ds_lines_free(&in);
    fclose(f);
    return rc;
}

static void add_run(ds_run_t **runs, int *n, const ds_policy_ops_t *p)
{
    *runs = ds_xrealloc(*runs, (size_t)(*n + 1) * sizeof **runs);
    memset(&(*runs)[*n], 0, sizeof **runs);
    (*runs)[(*n)++].ops = p;
}

int ds_runs_pick(const char *list, const char *opt, ds_run_t **out, int *n)
{
    ds_run_t *runs = NULL;
    int nr = 0;
    if (!strcmp(list, "all")) {
        for (const ds_policy_ops_t *const *p = ds_policy_list(); *p; p++) add_run(&runs, &nr, *p);
    } else {
        char buf[512];
        snprintf(buf, sizeof buf, "%s", list);
        char *save = NULL;
        for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            const ds_policy_ops_t *p = ds_policy_find(tok);
            if (!p) {
                fprintf(stderr, "deepshare: option %s: unknown policy '%s' (known:", opt, tok);
                for (const ds_policy_ops_t *const *q = ds_policy_list(); *q; q++) fprintf(stderr, " %s", (*q)->name);
                fprintf(stderr, ", all)\n");
                free(runs);
                return -1;
            }
            add_run(&runs, &nr, p);
        }
    }
    if (!nr) {
        fprintf(stderr, "deepshare: option %s: no policy given\n", opt);
        free(runs);
        return -1;
    }
    for (int i = 0; i < nr; i++)
        if (runs[i].ops->config_new) runs[i].config = runs[i].ops->config_new();
    *out = runs;
    *n = nr;
    return 0;
}

void ds_runs_free(ds_run_t *runs, int n)
{
    for (int i = 0; i < n; i++) {
        ds_sim_result_free(&runs[i].res);
        if (runs[i].config && runs[i].ops->config_free) runs[i].ops->config_free(runs[i].config);
    }
    free(runs);
}

int ds_cli_split(const char *cmd, const char *arg, char *name, size_t n, const char **val)
{
    if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) return 0;
    if (strncmp(arg, "--", 2) != 0) {
        fprintf(stderr, "deepshare %s: unexpected argument '%s' (see --help)\n", cmd, arg);
        return -1;
    }
    const char *eq = strchr(arg + 2, '=');
    snprintf(name, n, "%.*s", eq ? (int)(eq - arg - 2) : (int)strlen(arg + 2), arg + 2);
    *val = eq ? eq + 1 : NULL;
    return 1;
}

int ds_cli_value(const char *cmd, int argc, char **argv, int *i, const char *name, const char **val)
{
    if (*val) return 0;
    if (*i + 1 >= argc) {
        fprintf(stderr, "deepshare %s: option --%s needs a value\n", cmd, name);
        return -1;
    }
    *val = argv[++*i];
    return 0;
}

int ds_run_flag(ds_sim_config_t *sc, const char *name)
{
    if (!strcmp(name, "check-invariants")) sc->check_invariants = 1;
    else if (!strcmp(name, "no-cpu-check")) sc->engine.enforce_cpu = 0;
    else return 0;
    return 1;
}

int ds_run_opt(ds_sim_config_t *sc, const char *cmd, const char *name, const char *val)
{
    int64_t v;
    if (!strcmp(name, "mode")) {
        if (!strcmp(val, "partitioned")) sc->engine.mode = DS_MODE_PARTITIONED;
        else if (!strcmp(val, "pooled")) sc->engine.mode = DS_MODE_POOLED;
        else {
            fprintf(stderr, "deepshare %s: option --mode: '%s' is not partitioned or pooled\n", cmd, val);
            return -1;
        }
    } else if (!strcmp(name, "gpus-per-node")) {
        if (ds_parse_i64("--gpus-per-node", val, 1, DS_MAX_GPUS_PER_NODE, &v)) return -1;
        sc->engine.gpus_per_node = (int32_t)v;
    } else if (!strcmp(name, "cpus-per-node")) {
        if (ds_parse_i64("--cpus-per-node", val, 0, 1 << 20, &v)) return -1;
        sc->engine.cpus_per_node = (int32_t)v;
    } else if (!strcmp(name, "pool-nodes")) {
        if (ds_parse_i64("--pool-nodes", val, 1, 1000000, &v)) return -1;
        sc->engine.pool_nodes = (int32_t)v;
    } else if (!strcmp(name, "type-placement")) {
        if (!strcmp(val, "blind")) sc->engine.type_order = DS_TYPES_BLIND;
        else if (!strcmp(val, "fastest")) sc->engine.type_order = DS_TYPES_FASTEST;
        else {
            fprintf(stderr, "deepshare %s: option --type-placement: '%s' is not blind or fastest\n", cmd, val);
            return -1;
        }
    } else if (!strcmp(name, "k")) {
        if (ds_parse_i64("--k", val, 1, DS_MAX_K, &v)) return -1;
        sc->engine.k = (int32_t)v;
    } else if (!strcmp(name, "ckpt-default")) {
        if (ds_parse_i64("--ckpt-default", val, 0, DS_MAX_DURATION, &v)) return -1;
        sc->engine.ckpt_default = (int32_t)v;
    } else if (!strcmp(name, "grace")) {
        if (ds_parse_i64("--grace", val, 0, 86400, &v)) return -1;
        sc->grace = v;
    } else if (!strcmp(name, "grace-save")) {
        if (ds_parse_i64("--grace-save", val, 0, 86400, &v)) return -1;
        sc->grace_save = v;
    } else if (!strcmp(name, "restart-pinned")) {
        if (ds_parse_i64("--restart-pinned", val, 0, 3, &v)) return -1;
        sc->restart_pinned = (int)v;
    } else if (!strcmp(name, "requeue-settle")) {
        if (ds_parse_i64("--requeue-settle", val, 0, DS_MAX_DURATION, &v)) return -1;
        sc->requeue_settle = v;
    } else if (!strcmp(name, "cycle")) {
        if (ds_parse_i64("--cycle", val, 1, 86400, &v)) return -1;
        sc->cycle = v;
    } else if (!strcmp(name, "window")) {
        long long x, y;
        char c;
        if (sscanf(val, "%lld:%lld%c", &x, &y, &c) != 2 || x < 0 || y <= x) {
            fprintf(stderr, "deepshare %s: option --window: expected START:END seconds with START < END\n", cmd);
            return -1;
        }
        sc->window_start = x, sc->window_end = y;
    } else
        return 0;
    return 1;
}

int ds_run_one(const ds_trace_t *t, const ds_sim_config_t *sc, ds_run_t *r, ds_error_t *err)
{
    ds_sim_config_t c = *sc;
    c.policy = r->ops;
    c.policy_config = r->config;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int rc = ds_sim_run(t, &c, &r->res, err);
    if (rc) return rc;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    r->res.wall_seconds = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    r->ok = 1;
    return 0;
}

int ds_runs_use_predictors(const ds_run_t *runs, int n)
{
    for (int i = 0; i < n; i++)
        if (runs[i].ops->props & (DS_POLICY_USES_PREDICTORS | DS_POLICY_USES_ESTIMATES)) return 1;
    return 0;
}

const char *ds_run_estimates(const ds_policy_ops_t *ops, const ds_trace_t *t, const char *kind, const char *path,
                             char *buf, size_t n)
{
    if (!(ops->props & (DS_POLICY_USES_ESTIMATES | DS_POLICY_USES_PREDICTORS))) return NULL;
    int32_t have = 0;
    for (int32_t j = 0; j < t->njobs; j++) have += !isnan(t->jobs[j].estimate);
    /* a predicting policy reads the file only through --predictor file */
    int file = (ops->props & DS_POLICY_USES_ESTIMATES) ? have > 0 : !strcmp(kind, "file");
    if (!file) snprintf(buf, n, "%s", kind);
    else if ((ops->props & DS_POLICY_USES_ESTIMATES) && have < t->njobs) snprintf(buf, n, "file:%s+%s", path ? path : "trace", kind);
    else snprintf(buf, n, "file:%s", path ? path : "trace");
    return buf;
}

int ds_cli_common_opt(const char *cmd, struct ds_workload_opts *wo, ds_sim_config_t *sc, struct ds_cli_predictors *pred,
                      const char *name, const char *val)
{
    int w = ds_workload_opt(wo, name, val);
    if (w == 0) w = ds_run_opt(sc, cmd, name, val);
    if (w == 0) w = ds_cli_predictors_opt(pred, name, val);
    return w;
}
