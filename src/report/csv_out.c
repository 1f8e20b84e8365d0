/* csv_out.c: per-job, per-cycle and per-tenant CSV files of one run (--out DIR). */
#include "deepshare/csv.h"
#include "deepshare/report.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

static FILE *open_in(const char *dir, const char *name, ds_error_t *err)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) ds_error_set(err, path, 0, NULL, "cannot write: %s", strerror(errno));
    return f;
}

static int close_checked(FILE *f, const char *dir, const char *name, ds_error_t *err)
{
    int bad = ferror(f);
    if (fclose(f) || bad) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        ds_error_set(err, path, 0, NULL, "write failed");
        return DS_EIO;
    }
    return DS_OK;
}

int ds_report_write_csv(const char *dir, const ds_trace_t *t, const ds_sim_result_t *r, ds_error_t *err)
{
    if (mkdir(dir, 0777) && errno != EEXIST) {
        ds_error_set(err, dir, 0, NULL, "cannot create directory: %s", strerror(errno));
        return DS_EIO;
    }
    FILE *f = open_in(dir, "jobs.csv", err);
    if (!f) return DS_EIO;
    fprintf(f, "job_id,tenant,user,gpus,submit,start,end,queue,jct,duration,preemptions,colocated,queue_g,queue_be\n");
    for (int32_t j = 0; j < t->njobs; j++) {
        const ds_job_t *x = &t->jobs[j];
        /* names come from the input and may hold commas or quotes: they are written as CSV fields */
        fprintf(f, "%lld,", (long long)x->id);
        ds_csv_put(f, t->tenants[x->tenant].name);
        fputc(',', f);
        ds_csv_put(f, t->users.s[x->user]);
        fprintf(f, ",%d,%lld,%lld,%lld,%lld,%lld,%lld,%d,%d,%lld,%lld\n", x->gpus, (long long)x->submit, (long long)r->start[j],
                (long long)r->end[j], (long long)r->queued[j], (long long)(r->end[j] - x->submit), (long long)x->duration,
                r->preempts[j], r->colocated[j], (long long)r->queued_g[j], (long long)r->queued_be[j]);
    }
    if (close_checked(f, dir, "jobs.csv", err)) return DS_EIO;
    if (r->events) {
        static const char *const names[] = {"finish", "start", "preempt", "promote", "revoke"};
        static const char *const cls[] = {"-", "G", "BE"};
        if (!(f = open_in(dir, "events.csv", err))) return DS_EIO;
        fprintf(f, "time,event,job_id,class,reason,other_job_id\n");
        for (int64_t i = 0; i < r->nevents; i++) {
            const ds_sim_event_t *v = &r->events[i];
            fprintf(f, "%lld,%s,%lld,%s,%d,%lld\n", (long long)v->time,
                    v->type >= 0 && v->type <= DS_DEC_REVOKE ? names[v->type] : "?", (long long)t->jobs[v->job].id,
                    v->klass <= DS_CLASS_BE ? cls[v->klass] : "?", v->reason,
                    v->other >= 0 ? (long long)t->jobs[v->other].id : -1LL);
        }
        if (close_checked(f, dir, "events.csv", err)) return DS_EIO;
    }
    if (!(f = open_in(dir, "timeseries.csv", err))) return DS_EIO;
    fprintf(f, "time,busy_gpus,idle_gpus,running_jobs,pending_jobs,pending_gpus,sm_util,gmem_util,preemptions,"
               "colocations\n");
    for (int64_t i = 0; i < r->nseries; i++) {
        const ds_sample_t *s = &r->series[i];
        fprintf(f, "%lld,%d,%d,%d,%d,%lld,%.4f,%.4f,%lld,%lld\n", (long long)s->time, s->busy_gpus, s->idle_gpus,
                s->running_jobs, s->pending_jobs, (long long)s->pending_gpus, s->sm_util, s->gmem_util,
                (long long)s->preemptions, (long long)s->colocations);
    }
    if (close_checked(f, dir, "timeseries.csv", err)) return DS_EIO;
    if (!(f = open_in(dir, "qad.csv", err))) return DS_EIO;
    fprintf(f, "time");
    for (int32_t i = 0; i < r->ntenants; i++) {
        char col[96];
        snprintf(col, sizeof col, "%s_qad", r->tenants[i].name);
        fputc(',', f);
        ds_csv_put(f, col);
        snprintf(col, sizeof col, "%s_smoothed", r->tenants[i].name);
        fputc(',', f);
        ds_csv_put(f, col);
    }
    fputc('\n', f);
    for (int64_t k = 0; k < r->nseries; k++) {
        fprintf(f, "%lld", (long long)r->series[k].time);
        for (int32_t i = 0; i < r->ntenants; i++)
            fprintf(f, ",%.4f,%.4f", r->qad[k * r->ntenants + i], r->qad_smooth[k * r->ntenants + i]);
        fputc('\n', f);
    }
    if (close_checked(f, dir, "qad.csv", err)) return DS_EIO;
    /* one row per cycle and tenant: what 'deepshare usage' reads of a run (with jobs.csv) */
    if (!(f = open_in(dir, "tenant_usage.csv", err))) return DS_EIO;
    fprintf(f, "time,tenant,quota_gpus,g_gpus,be_gpus,pending_gpus,qad,qad_smoothed\n");
    for (int64_t k = 0; r->tusage && k < r->nseries; k++)
        for (int32_t i = 0; i < r->ntenants; i++) {
            const int32_t *u = &r->tusage[(k * r->ntenants + i) * 3];
            fprintf(f, "%lld,", (long long)r->series[k].time);
            ds_csv_put(f, r->tenants[i].name);
            fprintf(f, ",%d,%d,%d,%d,%.6f,%.6f\n", r->tenants[i].quota_gpus, u[0], u[1], u[2], r->qad[k * r->ntenants + i],
                    r->qad_smooth[k * r->ntenants + i]);
        }
    if (close_checked(f, dir, "tenant_usage.csv", err)) return DS_EIO;
    if (!(f = open_in(dir, "tenants.csv", err))) return DS_EIO;
    fprintf(f, "tenant,quota_gpus,jobs,avg_jct,avg_queue,p99_queue,preemptions,qad_mean,qad_compliance\n");
    for (int32_t i = 0; i < r->ntenants; i++) {
        const ds_tenant_result_t *x = &r->tenants[i];
        ds_csv_put(f, x->name);
        fprintf(f, ",%d,%lld,%.3f,%.3f,%.3f,%lld,%.6f,%.6f\n", x->quota_gpus, (long long)x->jobs, x->jct.avg,
                x->queue.avg, x->queue.p99, (long long)x->preemptions, x->qad_mean, x->qad_compliance);
    }
    return close_checked(f, dir, "tenants.csv", err);
}
