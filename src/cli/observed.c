/* observed.c: reading an observed schedule (observed.csv) and scoring it through the simulator with the
 * 'replay' policy (see observed.h). */
#include "cli/observed.h"

#include <stdlib.h>
#include <string.h>

#include "deepshare/csv.h"
#include "deepshare/idmap.h"

typedef struct row {
    int32_t job;    /* index in the given trace */
    int64_t submit;
    ds_spell_t sp;
    long line;
} row_t;

static int cmp_row(const void *a, const void *b)
{
    const row_t *x = a, *y = b;
    if (x->job != y->job) return x->job < y->job ? -1 : 1;
    if (x->sp.start != y->sp.start) return x->sp.start < y->sp.start ? -1 : 1;
    return (x->line > y->line) - (x->line < y->line);
}

typedef struct kept {
    int32_t job;
    int64_t submit;
    int64_t r0, r1;  /* its rows */
} kept_t;

static int cmp_kept(const void *a, const void *b)
{
    const kept_t *x = a, *y = b;
    if (x->submit != y->submit) return x->submit < y->submit ? -1 : 1;
    return (x->job > y->job) - (x->job < y->job);
}

static void copy_strtab(ds_strtab_t *dst, const ds_strtab_t *src)
{
    for (int32_t i = 0; i < src->n; i++) ds_strtab_intern(dst, src->s[i]);
}

int ds_observed_read(ds_observed_t *o, const ds_trace_t *t, const char *path, ds_error_t *err)
{
    memset(o, 0, sizeof *o);
    ds_trace_init(&o->trace);
    ds_csv_t c;
    int rc = ds_csv_open_header(&c, path, "expected an observed schedule (deepshare replay-live's observed.csv)", err);
    if (rc) return rc;
    static const char *const names[] = {"job_id", "submit", "start", "end", "node", "class", "last"};
    int col[7];
    if ((rc = ds_csv_require(&c, names, 7, col, err))) return rc;
    int nh = c.nfields;
    ds_idmap_t ids;
    ds_idmap_init(&ids);
    for (int32_t j = 0; j < t->njobs; j++) ds_idmap_put(&ids, t->jobs[j].id, j);
    row_t *rows = NULL;
    int64_t nrows = 0, cap = 0, tmin = 0, tmax = 0;
    int r;
    while ((r = ds_csv_row(&c, nh, err)) == 1) {
        if (nrows >= DS_MAX_JOBS) {
            ds_error_set(err, path, c.line, NULL, "more than %d runs (the trace reader's bound on jobs)", DS_MAX_JOBS);
            rc = DS_EPARSE;
            goto fail;
        }
        int64_t id, submit, start, end, node, last;
        char cls[8];
        if ((rc = ds_csv_int(&c, col[0], "job_id", INT64_MIN, INT64_MAX, &id, err)) ||
            (rc = ds_csv_int(&c, col[1], "submit", 0, DS_MAX_SUBMIT, &submit, err)) ||
            (rc = ds_csv_int(&c, col[2], "start", 0, DS_MAX_SUBMIT, &start, err)) ||
            (rc = ds_csv_int(&c, col[3], "end", 0, DS_MAX_SUBMIT, &end, err)) ||
            (rc = ds_csv_int(&c, col[4], "node", -1, 1 << 20, &node, err)) ||
            (rc = ds_csv_str(&c, col[5], "class", cls, sizeof cls, err)) ||
            (rc = ds_csv_int(&c, col[6], "last", 0, 1, &last, err)))
            goto fail;
        int32_t j = ds_idmap_get(&ids, id);
        if (j < 0) {
            ds_error_set(err, path, c.line, "job_id", "job %lld is not in the trace %s", (long long)id, t->source);
            rc = DS_EPARSE;
            goto fail;
        }
        if (end < start || start < submit) {
            ds_error_set(err, path, c.line, "end", "a run must start after its submit and end after its start");
            rc = DS_EPARSE;
            goto fail;
        }
        /* the trace reader's bounds, so that scoring simulates what a trace could: one run at most a job's
         * longest duration, and the whole schedule within the longest submit span plus that */
        if (end - start > DS_MAX_DURATION) {
            ds_error_set(err, path, c.line, "end", "a run of %lld s: longer than a job's %lld s (%lld days)",
                         (long long)(end - start), (long long)DS_MAX_DURATION, (long long)(DS_MAX_DURATION / 86400));
            rc = DS_EPARSE;
            goto fail;
        }
        if (nrows == 0) tmin = submit, tmax = end;
        tmin = DS_MIN(tmin, submit);
        tmax = DS_MAX(tmax, end);
        if (tmax - tmin > DS_MAX_SPAN + DS_MAX_DURATION) {
            ds_error_set(err, path, c.line, end == tmax ? "end" : "submit",
                         "the schedule spans more than %lld days from its first submit to its last end",
                         (long long)((DS_MAX_SPAN + DS_MAX_DURATION) / 86400));
            rc = DS_EPARSE;
            goto fail;
        }
        if (strcmp(cls, "G") && strcmp(cls, "BE")) {
            ds_error_set(err, path, c.line, "class", "'%s' is not G or BE", cls);
            rc = DS_EPARSE;
            goto fail;
        }
        if (nrows == cap) {
            cap = cap ? cap * 2 : 1024;
            rows = ds_xrealloc(rows, (size_t)cap * sizeof *rows);
        }
        rows[nrows++] = (row_t){j, submit, {start, end, (int32_t)node, !strcmp(cls, "BE") ? DS_CLASS_BE : DS_CLASS_G,
                                            (uint8_t)last}, c.line};
    }
    if (r < 0) {
        rc = r;
        goto fail;
    }
    ds_csv_close(&c);
    if (nrows > 1) qsort(rows, (size_t)nrows, sizeof *rows, cmp_row); /* rows is NULL when there are none */
    /* per job: its rows must agree on the submit, not overlap, and end with the one last run */
    kept_t *kept = ds_xmalloc((size_t)(t->njobs ? t->njobs : 1) * sizeof *kept);
    int32_t nkept = 0;
    for (int64_t a = 0, b; a < nrows; a = b) {
        for (b = a + 1; b < nrows && rows[b].job == rows[a].job; b++) {
            if (rows[b].submit != rows[a].submit || rows[b].sp.start < rows[b - 1].sp.end) {
                ds_error_set(err, path, rows[b].line, "start",
                             "job %lld: runs overlap or disagree on the submit time (line %ld)",
                             (long long)t->jobs[rows[a].job].id, rows[b - 1].line);
                free(kept);
                free(rows);
                ds_idmap_free(&ids);
                return DS_EPARSE;
            }
        }
        int nlast = 0;
        for (int64_t k = a; k < b; k++) nlast += rows[k].sp.last;
        if (nlast > 1 || (nlast == 1 && !rows[b - 1].sp.last)) {
            ds_error_set(err, path, rows[b - 1].line, "last", "job %lld: only its final run may be marked last",
                         (long long)t->jobs[rows[a].job].id);
            free(kept);
            free(rows);
            ds_idmap_free(&ids);
            return DS_EPARSE;
        }
        if (nlast == 0) continue; /* never completed */
        kept[nkept++] = (kept_t){rows[a].job, rows[a].submit, a, b};
        o->runs += b - a;
        o->requeues += b - a - 1;
    }
    ds_idmap_free(&ids);
    o->dropped = t->njobs - nkept;
    /* the trace as run: same tenants and names, jobs in observed submit order */
    if (nkept > 1) qsort(kept, (size_t)nkept, sizeof *kept, cmp_kept);
    for (int32_t i = 0; i < t->ntenants; i++) ds_trace_add_tenant(&o->trace, t->tenants[i].name, t->tenants[i].quota_gpus);
    copy_strtab(&o->trace.users, &t->users);
    copy_strtab(&o->trace.models, &t->models);
    copy_strtab(&o->trace.datasets, &t->datasets);
    snprintf(o->trace.source, sizeof o->trace.source, "%s", path);
    o->orig = ds_xmalloc((size_t)(nkept ? nkept : 1) * sizeof *o->orig);
    o->first = ds_xmalloc((size_t)(nkept + 1) * sizeof *o->first);
    o->spells = ds_xmalloc((size_t)(o->runs ? o->runs : 1) * sizeof *o->spells);
    int64_t ns = 0;
    for (int32_t i = 0; i < nkept; i++) {
        ds_job_t *j = ds_trace_add_job(&o->trace);
        *j = t->jobs[kept[i].job];
        j->submit = kept[i].submit;
        j->duration = 0;
        o->orig[i] = kept[i].job;
        o->first[i] = ns;
        for (int64_t k = kept[i].r0; k < kept[i].r1; k++) {
            o->spells[ns++] = rows[k].sp;
            j->duration += rows[k].sp.end - rows[k].sp.start;
        }
    }
    o->first[nkept] = ns;
    o->script = (ds_script_t){o->spells, o->first, nkept};
    free(kept);
    free(rows);
    if (nkept == 0) {
        ds_error_set(err, path, 0, NULL, "no job of the trace completed in the observed schedule");
        ds_observed_free(o);
        return DS_EINVAL;
    }
    return DS_OK;
fail:
    free(rows);
    ds_idmap_free(&ids);
    ds_csv_close(&c);
    ds_trace_free(&o->trace);
    return rc;
}

int ds_observed_score(const ds_observed_t *o, const ds_sim_config_t *base, const char *label, ds_sim_result_t *res,
                      ds_error_t *err)
{
    ds_sim_config_t c = *base;
    c.engine.mode = DS_MODE_POOLED;
    c.engine.restart_small = c.engine.restart_large = 0; /* the observed runs include the restarts */
    c.engine.predictors = NULL;
    c.engine.enforce_cpu = 0;
    c.coloc = NULL;
    c.policy = &ds_policy_replay;
    c.policy_config = &o->script;
    int rc = ds_sim_run(&o->trace, &c, res, err);
    if (rc) return rc;
    snprintf(res->policy, sizeof res->policy, "%s", label);
    return DS_OK;
}

void ds_observed_free(ds_observed_t *o)
{
    ds_trace_free(&o->trace);
    free(o->spells);
    free(o->first);
    free(o->orig);
    memset(o, 0, sizeof *o);
}
