/* import_pai.c: reads Alibaba PAI's GPU trace of 2020 (alibaba/clusterdata cluster-trace-gpu-v2020): the
 * headerless pai_job_table.csv and pai_task_table.csv, joined on job_name, and optionally
 * pai_group_tag_table.csv for the group tag. */
#include "deepshare/csv.h"
#include "deepshare/import.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A row of pai_job_table with what its tasks add up to. */
typedef struct pai_job {
    long line;
    int32_t user, inst, orig;
    int64_t submit;
    uint8_t state, unfinished, ntasks;
    double gpu_pct, cpu_pct, top_gpu;
    int64_t tstart, tend;
    int32_t gpu_type;         /* index into pai_t.types of its largest task's GPU type, -1 none yet */
    long type_line;           /* that task's line in pai_task_table */
} pai_job_t;

typedef struct pai {
    pai_job_t *jobs;
    int32_t n, cap;
    ds_strtab_t names, insts; /* job_name -> index; inst_id, interned in job order */
    ds_strtab_t groups;       /* group tags */
    ds_strtab_t types;        /* GPU types (kept whole: a cut name could end inside a UTF-8 character) */
    int32_t *group_of_inst;   /* -1 when the group table has no row for it */
} pai_t;

static const char *const job_cols[] = {"job_name", "inst_id", "user", "status", "start_time", "end_time"};
static const char *const task_cols[] = {"job_name", "task_name", "inst_num", "status", "start_time",
                                        "end_time", "plan_cpu", "plan_mem", "plan_gpu", "gpu_type"};
static const char *const group_cols[] = {"inst_id", "user", "gpu_type_spec", "group", "workload"};

/* Next data row of a headerless table with exactly n fields. A first line that is the table's header (from the
 * .header files the trace ships) is skipped. 1 row, 0 end, <0 error. */
static int next_row(ds_csv_t *c, const char *table, const char *const *cols, int n, ds_error_t *err)
{
    for (;;) {
        int rc = ds_csv_next(c, err);
        if (rc <= 0) return rc;
        if (c->nfields == n && c->line == 1 && !strcasecmp(c->fields[0], cols[0]) && !strcasecmp(c->fields[1], cols[1]))
            continue;
        if (c->nfields != n) {
            ds_error_set(err, c->path, c->line, NULL, "expected %d fields (%s: %s,%s,...), found %d%s", n, table,
                         cols[0], cols[1], c->nfields, c->ended_with_newline ? "" : " (truncated line?)");
            return DS_EPARSE;
        }
        return 1;
    }
}

/* A number of the task table: empty means 0 (the trace leaves plan_gpu empty for CPU tasks). */
static int num(const ds_csv_t *c, int col, double *out, ds_error_t *err)
{
    if (!c->fields[col][0]) {
        *out = 0;
        return DS_OK;
    }
    return ds_csv_f64(c, col, task_cols[col], 0, out, err);
}

static int pai_time(const ds_csv_t *c, int col, const char *name, int64_t *out, ds_error_t *err)
{
    int is_date;
    if (ds_imp_parse_time(c->fields[col], out, &is_date) || is_date) {
        ds_error_set(err, c->path, c->line, name, "'%s' is not a time in seconds", c->fields[col]);
        return DS_EPARSE;
    }
    return DS_OK;
}

static int job_row(ds_import_t *im, pai_t *p, const ds_csv_t *c, ds_error_t *err)
{
    const char *name = c->fields[0];
    if (!*name) {
        ds_error_set(err, c->path, c->line, "job_name", "empty job name");
        return DS_EPARSE;
    }
    int32_t prev = ds_strtab_find(&p->names, name);
    if (prev >= 0) {
        ds_error_set(err, c->path, c->line, "job_name", "duplicate job '%s' (first on line %ld)", name,
                     p->jobs[prev].line);
        return DS_EPARSE;
    }
    pai_job_t pj;
    memset(&pj, 0, sizeof pj);
    pj.line = c->line;
    const char *st = c->fields[3];
    if (!strcasecmp(st, "Terminated")) pj.state = DS_IMP_COMPLETED;
    else if (!strcasecmp(st, "Failed")) pj.state = DS_IMP_FAILED;
    else if (!strcasecmp(st, "Running") || !strcasecmp(st, "Waiting")) pj.unfinished = 1;
    else pj.state = DS_IMP_OTHER;
    /* no submission time: nothing to replay, like a job that never ran */
    if (!c->fields[4][0]) pj.unfinished = 1;
    else {
        int rc = pai_time(c, 4, "start_time", &pj.submit, err);
        if (rc) return rc;
    }
    if (!c->fields[5][0]) pj.unfinished = 1;
    pj.gpu_type = -1;
    pj.tstart = INT64_MAX;
    pj.tend = INT64_MIN;
    int rc = ds_imp_name(&im->users, c->fields[2][0] ? c->fields[2] : "-", c->path, c->line, "user", &pj.user, err);
    if (rc || (rc = ds_imp_name(&im->ids, name, c->path, c->line, "job_name", &pj.orig, err))) return rc;
    pj.inst = ds_strtab_intern(&p->insts, c->fields[1]);
    ds_strtab_intern(&p->names, name);
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 1024;
        p->jobs = ds_xrealloc(p->jobs, (size_t)p->cap * sizeof *p->jobs);
    }
    p->jobs[p->n++] = pj;
    return DS_OK;
}

static int task_row(ds_import_t *im, pai_t *p, const ds_csv_t *c, ds_error_t *err)
{
    int32_t k = ds_strtab_find(&p->names, c->fields[0]);
    double inst, cpu, mem, gpu;
    int rc;
    if (!c->fields[2][0]) inst = 1; /* an empty instance count is one instance */
    else if ((rc = ds_csv_f64(c, 2, "inst_num", 0, &inst, err))) return rc;
    if ((rc = num(c, 6, &cpu, err)) || (rc = num(c, 7, &mem, err)) || (rc = num(c, 8, &gpu, err))) return rc;
    int64_t s = 0, e = 0;
    int has_s = c->fields[4][0] != 0, has_e = c->fields[5][0] != 0;
    if (has_s && (rc = pai_time(c, 4, "start_time", &s, err))) return rc;
    if (has_e && (rc = pai_time(c, 5, "end_time", &e, err))) return rc;
    if (has_s && has_e && e < s) {
        ds_error_set(err, c->path, c->line, "end_time", "ends before it starts (%s)", c->fields[4]);
        return DS_EPARSE;
    }
    if (k < 0) {
        im->orphans++;
        return DS_OK;
    }
    pai_job_t *pj = &p->jobs[k];
    if (pj->ntasks < 255) pj->ntasks++;
    pj->gpu_pct += inst * gpu;
    pj->cpu_pct += inst * cpu;
    if (inst * gpu > pj->top_gpu || pj->gpu_type < 0 || !p->types.s[pj->gpu_type][0]) {
        if (inst * gpu > pj->top_gpu) pj->top_gpu = inst * gpu;
        pj->gpu_type = ds_strtab_intern(&p->types, c->fields[9]);
        pj->type_line = c->line;
    }
    if (!has_s || !has_e) pj->unfinished = 1;
    else {
        if (s < pj->tstart) pj->tstart = s;
        if (e > pj->tend) pj->tend = e;
    }
    return DS_OK;
}

static int group_row(pai_t *p, const ds_csv_t *c)
{
    int32_t k = ds_strtab_find(&p->insts, c->fields[0]);
    if (k >= 0 && p->group_of_inst[k] < 0 && c->fields[3][0])
        p->group_of_inst[k] = ds_strtab_intern(&p->groups, c->fields[3]);
    return DS_OK;
}

/* Reads every row of one table through fn, with --skip-bad bookkeeping; counts rows when count is set. */
static int read_table(ds_import_t *im, const ds_import_opts_t *o, pai_t *p, const char *path, const char *table,
                      const char *const *cols, int n, int which, ds_error_t *err)
{
    ds_csv_t c;
    int rc = ds_csv_open(&c, path, err);
    if (rc) return rc;
    for (int64_t rows = 0;; rows++) {
        rc = next_row(&c, table, cols, n, err);
        if (rc == 0) break;
        if (rows >= DS_IMP_MAX_ROWS) {
            ds_error_set(err, path, c.line, NULL, "more than %d rows: split the input", DS_IMP_MAX_ROWS);
            rc = DS_EINVAL;
            break;
        }
        if (which == 0) im->rows++;
        if (rc > 0) rc = which == 0 ? job_row(im, p, &c, err) : which == 1 ? task_row(im, p, &c, err) : group_row(p, &c);
        if ((rc = ds_imp_bad_row(im, o, rc, err))) break;
    }
    ds_csv_close(&c);
    return rc;
}

static void pai_free(pai_t *p)
{
    free(p->jobs);
    free(p->group_of_inst);
    ds_strtab_free(&p->names);
    ds_strtab_free(&p->insts);
    ds_strtab_free(&p->groups);
    ds_strtab_free(&p->types);
}

int ds_import_pai(ds_import_t *im, const ds_import_opts_t *o, const char *job_path, const char *task_path,
                  const char *group_path, ds_error_t *err)
{
    pai_t p;
    memset(&p, 0, sizeof p);
    const char *by = o->tenant_by ? o->tenant_by : "user";
    im->src = job_path;
    int rc = read_table(im, o, &p, job_path, "pai_job_table", job_cols, 6, 0, err);
    if (!rc) rc = read_table(im, o, &p, task_path, "pai_task_table", task_cols, 10, 1, err);
    if (!rc && group_path) {
        p.group_of_inst = ds_xmalloc((size_t)DS_MAX(p.insts.n, 1) * sizeof *p.group_of_inst);
        for (int32_t i = 0; i < p.insts.n; i++) p.group_of_inst[i] = -1;
        rc = read_table(im, o, &p, group_path, "pai_group_tag_table", group_cols, 5, 2, err);
    }
    if (!rc && !strcmp(by, "group") && !group_path) {
        ds_error_set(err, NULL, 0, "tenant-by", "tenants by group need pai_group_tag_table.csv as a third input");
        rc = DS_EINVAL;
    }
    for (int32_t i = 0; !rc && i < p.n; i++) {
        const pai_job_t *pj = &p.jobs[i];
        /* unfinished, or no task to say what it asked for and how long it ran */
        if (pj->unfinished || pj->ntasks == 0 || pj->tend < pj->tstart) {
            ds_imp_not_run(im);
            continue;
        }
        ds_imp_job_t j;
        memset(&j, 0, sizeof j);
        j.line = pj->line;
        j.orig = pj->orig;
        j.user = pj->user;
        j.state = pj->state;
        j.submit = pj->submit;
        j.duration = pj->tend - pj->tstart;
        /* plan_gpu is in percent of one GPU; the simulator allocates whole GPUs, so a share rounds up. Clamped
         * to int32 only: ds_imp_keep refuses what the simulator cannot take, naming the job's line */
        j.gpus = (int32_t)DS_MIN(ceil(pj->gpu_pct / 100.0 - 1e-9), (double)INT32_MAX);
        j.cpus = (int32_t)DS_MIN(ceil(pj->cpu_pct / 100.0 - 1e-9), (double)INT32_MAX);
        const char *tn = !strcmp(by, "group")
                             ? (p.group_of_inst[pj->inst] >= 0 ? p.groups.s[p.group_of_inst[pj->inst]] : "untagged")
                         : !strcmp(by, "gpu-type") ? (pj->gpu_type >= 0 && p.types.s[pj->gpu_type][0] ? p.types.s[pj->gpu_type] : "any")
                                                   : im->users.s[pj->user];
        static const ds_imp_cols_t cols = {"plan_gpu (inst_num x plan_gpu of its tasks)",
                                           "plan_cpu (inst_num x plan_cpu of its tasks)",
                                           "end_time (first task start to last task end)"};
        /* the GPU type of its largest task: kept as the type it asks for where a machine list gives the types */
        int r = pj->gpu_type >= 0 ? ds_imp_gtype_mask(im, p.types.s[pj->gpu_type], task_path, pj->type_line, "gpu_type",
                                                      &j.gmask, err)
                                  : DS_OK;
        if (!r) r = ds_imp_tenant(im, &j, tn, job_path, pj->line, by, err);
        if (!r) r = ds_imp_keep(im, o, &j, job_path, &cols, err);
        if (r < 0 && (rc = ds_imp_bad_row(im, o, r, err))) break;
    }
    pai_free(&p);
    return rc;
}
