/* import_write.c: writes an imported trace as the generic jobs.csv and tenants.csv that 'simulate' reads, and
 * cluster.csv (its node types) when a node list gave GPU types. */
#include "deepshare/csv.h"
#include "deepshare/idmap.h"
#include "deepshare/import.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A CSV field, quoted when it holds a comma, a quote or surrounding blanks (the reader trims those). Names hold
 * no line breaks: the readers turned control characters into blanks (ds_imp_name) or refused them. */
static void field(FILE *f, const char *s)
{
    ds_csv_put(f, s);
}

/* The trace's own ids when all are distinct integers (Helios' Slurm ids), else 1..N in submit order. */
static int own_ids(const ds_import_t *im)
{
    ds_idmap_t m;
    ds_idmap_init(&m);
    int ok = 1;
    for (int32_t i = 0; ok && i < im->njobs; i++)
        ok = im->jobs[i].has_num_id && ds_idmap_put(&m, im->jobs[i].num_id, i) < 0;
    ds_idmap_free(&m);
    return ok;
}

static void write_jobs(const ds_import_t *im, FILE *f)
{
    int own = own_ids(im);
    fputs(im->ngt ? "job_id,tenant,user,gpus,cpus,submit,duration,state,orig_id,gpu_type\n"
                  : "job_id,tenant,user,gpus,cpus,submit,duration,state,orig_id\n", f);
    for (int32_t i = 0; i < im->njobs; i++) {
        const ds_imp_job_t *j = &im->jobs[i];
        fprintf(f, "%lld,", own ? (long long)j->num_id : (long long)i + 1);
        field(f, im->tenants.s[j->tenant]);
        fputc(',', f);
        field(f, im->users.s[j->user]);
        fprintf(f, ",%d,%d,%lld,%lld,%s,", j->gpus, j->cpus, (long long)(j->submit - im->origin),
                (long long)j->duration, ds_imp_state_name(j->state));
        field(f, im->ids.s[j->orig]);
        if (im->ngt) {
            /* the types it may run on, '|'-joined as Alibaba writes them; empty: any */
            fputc(',', f);
            for (int32_t k = 0, n = 0; k < im->ngt; k++)
                if (j->gmask & (1u << k)) fprintf(f, "%s%s", n++ ? "|" : "", im->gt[k].name);
        }
        fputc('\n', f);
    }
}

static void write_tenants(const ds_import_t *im, FILE *f)
{
    fputs("tenant,quota_gpus", f);
    for (int32_t k = 0; k < im->ngt; k++) fprintf(f, ",quota_%s", im->gt[k].name);
    fputc('\n', f);
    const int32_t *tq = im->tquota;
    for (int32_t t = 0; t < im->tenants.n; t++) {
        if (!im->active[t]) continue;
        field(f, im->tenants.s[t]);
        fprintf(f, ",%d", im->quota[t]);
        for (int32_t k = 0; k < im->ngt; k++) fprintf(f, ",%d", tq ? tq[(size_t)t * (size_t)im->ngt + (size_t)k] : 0);
        fputc('\n', f);
    }
}

/* The node list's types as 'simulate --cluster' reads them; unknown CPUs or memory left to the run's default. */
static void write_cluster(const ds_import_t *im, FILE *f)
{
    fputs("gpu_type,nodes,gpus_per_node,cpus_per_node,mem_mib\n", f);
    for (int32_t k = 0; k < im->ngt; k++) {
        const ds_imp_gtype_t *g = &im->gt[k];
        fprintf(f, "%s,%d,%d,", g->name, g->nodes, g->gpus);
        if (g->cpus > 0) fprintf(f, "%d", g->cpus);
        fputc(',', f);
        if (g->mem_mib > 0) fprintf(f, "%lld", (long long)g->mem_mib);
        fputc('\n', f);
    }
}

static int write_one(const ds_import_t *im, const char *dir, const char *name, void (*fn)(const ds_import_t *, FILE *),
                     char *tmp, size_t n, ds_error_t *err)
{
    snprintf(tmp, n, "%s/.%s.tmp", dir, name);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        ds_error_set(err, tmp, 0, NULL, "cannot write: %s", strerror(errno));
        return DS_EIO;
    }
    fn(im, f);
    int bad = ferror(f);
    if (fclose(f) || bad) {
        ds_error_set(err, tmp, 0, NULL, "write failed: %s", strerror(errno));
        remove(tmp);
        return DS_EIO;
    }
    return DS_OK;
}

/* The written files read back with simulate's own readers: the importers apply its limits row by row, with
 * the input's file and line; this makes sure no change to either side lets an import write what simulate
 * refuses. A failure is a bug here, never the input's fault. */
static void read_back(const char *cluster, const char *tenants, const char *jobs, const ds_import_opts_t *o)
{
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    ds_error_clear(&err);
    if ((!cluster || ds_trace_read_cluster(&t, cluster, &err) == DS_OK) &&
        ds_trace_read_tenants(&t, tenants, o->gpus_per_node, &err) == DS_OK && ds_trace_read_jobs(&t, jobs, &err) == DS_OK) {
        ds_trace_free(&t);
        return;
    }
    char msg[1200];
    ds_error_format(&err, msg, sizeof msg);
    fprintf(stderr, "deepshare: internal error: the imported trace does not read back in simulate: %s\n", msg);
    abort();
}

int ds_import_write(const ds_import_t *im, const ds_import_opts_t *o, const char *dir, ds_error_t *err)
{
    char tj[1200], tt[1200], tc[1200], fj[1200], ft[1200], fc[1200];
    int rc = write_one(im, dir, "jobs.csv", write_jobs, tj, sizeof tj, err);
    if (rc) return rc;
    if ((rc = write_one(im, dir, "tenants.csv", write_tenants, tt, sizeof tt, err))) {
        remove(tj);
        return rc;
    }
    if (im->ngt && (rc = write_one(im, dir, "cluster.csv", write_cluster, tc, sizeof tc, err))) {
        remove(tj);
        remove(tt);
        return rc;
    }
    read_back(im->ngt ? tc : NULL, tt, tj, o);
    /* all files are complete before any replaces what DIR held */
    snprintf(fj, sizeof fj, "%s/jobs.csv", dir);
    snprintf(ft, sizeof ft, "%s/tenants.csv", dir);
    snprintf(fc, sizeof fc, "%s/cluster.csv", dir);
    if (rename(tj, fj) || rename(tt, ft) || (im->ngt && rename(tc, fc))) {
        ds_error_set(err, dir, 0, NULL, "cannot move the written files into place: %s", strerror(errno));
        remove(tj);
        remove(tt);
        if (im->ngt) remove(tc);
        return DS_EIO;
    }
    return DS_OK;
}
