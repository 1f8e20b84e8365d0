/* table.c: the human-readable comparison and per-tenant tables, and summary.csv. */
#include "deepshare/report.h"

void ds_report_table(FILE *f, const ds_sim_result_t *const *r, int n)
{
    fprintf(f, "%-12s %-11s %7s %10s %10s %10s %10s %9s %6s %6s %6s %7s %7s %6s\n", "policy", "mode", "jobs",
            "avg_jct", "avg_queue", "p99_queue", "p999_queue", "makespan", "alloc", "sm", "gmem", "preempt",
            "coloc", "qad_ok");
    for (int i = 0; i < n; i++) {
        const ds_sim_result_t *x = r[i];
        fprintf(f, "%-12s %-11s %7lld %10.0f %10.0f %10.0f %10.0f %8.2fd %6.3f %6.3f %6.3f %7lld %7lld %6.3f\n",
                x->policy, x->mode == DS_MODE_POOLED ? "pooled" : "partitioned", (long long)x->jobs, x->jct.avg,
                x->queue.avg, x->queue.p99, x->queue.p999, (double)x->makespan / 86400.0, x->gpu_alloc, x->sm_util,
                x->gmem_util, (long long)x->preemptions, (long long)x->colocated_jobs, x->qad_compliance);
    }
}

void ds_report_tenant_table(FILE *f, const ds_sim_result_t *r)
{
    fprintf(f, "%-12s %6s %7s %10s %10s %10s %8s %7s\n", "tenant", "quota", "jobs", "avg_jct", "avg_queue",
            "p99_queue", "qad_mean", "qad_ok");
    for (int32_t i = 0; i < r->ntenants; i++) {
        const ds_tenant_result_t *t = &r->tenants[i];
        fprintf(f, "%-12s %6d %7lld %10.0f %10.0f %10.0f %8.3f %7.3f\n", t->name, t->quota_gpus, (long long)t->jobs,
                t->jct.avg, t->queue.avg, t->queue.p99, t->qad_mean, t->qad_compliance);
    }
}

int ds_report_summary_csv(FILE *f, const ds_sim_result_t *const *r, int n)
{
    fprintf(f, "policy,mode,jobs,avg_jct,p50_jct,p99_jct,avg_queue,p50_queue,p99_queue,p999_queue,makespan,"
               "gpu_alloc,sm_util,gmem_util,preemptions,colocated_jobs,qad_mean,qad_compliance\n");
    for (int i = 0; i < n; i++) {
        const ds_sim_result_t *x = r[i];
        fprintf(f, "%s,%s,%lld,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%lld,%.6f,%.6f,%.6f,%lld,%lld,%.6f,%.6f\n", x->policy,
                x->mode == DS_MODE_POOLED ? "pooled" : "partitioned", (long long)x->jobs, x->jct.avg, x->jct.p50,
                x->jct.p99, x->queue.avg, x->queue.p50, x->queue.p99, x->queue.p999, (long long)x->makespan,
                x->gpu_alloc, x->sm_util, x->gmem_util, (long long)x->preemptions, (long long)x->colocated_jobs,
                x->qad_mean, x->qad_compliance);
    }
    return ferror(f) ? DS_EIO : DS_OK;
}
