/* json.c: the JSON summary of a run (the contract scripts and dashboards rely on), via jansson. */
#include "deepshare/report.h"

#include <jansson.h>

static json_t *dist_obj(const ds_dist_t *d)
{
    return json_pack("{s:f,s:f,s:f,s:f,s:f}", "avg", d->avg, "p50", d->p50, "p95", d->p95, "p99", d->p99, "p999",
                     d->p999);
}

static json_t *summary(const ds_sim_result_t *r, const ds_report_meta_t *m)
{
    json_t *o = json_object();
    json_object_set_new(o, "policy", json_string(r->policy));
    json_object_set_new(o, "mode", json_string(r->mode == DS_MODE_POOLED ? "pooled" : "partitioned"));
    if (m && m->predictor) json_object_set_new(o, "predictor", json_string(m->predictor));
    if (m && m->trace) json_object_set_new(o, "trace", json_string(m->trace));
    if (m && m->estimates) json_object_set_new(o, "estimates", json_string(m->estimates));
    json_object_set_new(o, "jobs", json_integer(r->jobs));
    json_object_set_new(o, "gpus", json_integer(r->total_gpus));
    json_object_set_new(o, "avg_jct", json_real(r->jct.avg));
    json_object_set_new(o, "p50_jct", json_real(r->jct.p50));
    json_object_set_new(o, "p95_jct", json_real(r->jct.p95));
    json_object_set_new(o, "p99_jct", json_real(r->jct.p99));
    json_object_set_new(o, "p999_jct", json_real(r->jct.p999));
    json_object_set_new(o, "avg_queue", json_real(r->queue.avg));
    json_object_set_new(o, "p50_queue", json_real(r->queue.p50));
    json_object_set_new(o, "p95_queue", json_real(r->queue.p95));
    json_object_set_new(o, "p99_queue", json_real(r->queue.p99));
    json_object_set_new(o, "p999_queue", json_real(r->queue.p999));
    json_object_set_new(o, "makespan", json_integer(r->makespan));
    json_object_set_new(o, "gpu_alloc", json_real(r->gpu_alloc));
    json_object_set_new(o, "sm_util", json_real(r->sm_util));
    json_object_set_new(o, "gmem_util", json_real(r->gmem_util));
    json_object_set_new(o, "preemptions", json_integer(r->preemptions));
    json_object_set_new(o, "colocated_jobs", json_integer(r->colocated_jobs));
    json_object_set_new(o, "colocations", json_integer(r->colocations));
    json_object_set_new(o, "revoked_colocations", json_integer(r->revocations));
    json_object_set_new(o, "gpu_hours_lost", json_real(r->lost_gpu_hours));
    json_object_set_new(o, "gpu_hours_rolled_back", json_real(r->rollback_gpu_hours));
    json_object_set_new(o, "qad_mean", json_real(r->qad_mean));
    json_object_set_new(o, "qad_compliance", json_real(r->qad_compliance));
    json_object_set_new(o, "qad_compliance_all", json_real(r->qad_compliance_all));
    json_object_set_new(o, "qad_compliance_g", json_real(r->qad_compliance_g));
    json_object_set_new(o, "window_start", json_integer(r->window_start));
    json_object_set_new(o, "window_end", json_integer(r->window_end));
    if (r->npstats) {
        json_t *ps = json_object();
        for (int32_t i = 0; i < r->npstats; i++) json_object_set_new(ps, r->pstats[i].name, json_real(r->pstats[i].value));
        json_object_set_new(o, "policy_stats", ps);
    }
    json_object_set_new(o, "jct", dist_obj(&r->jct));
    json_object_set_new(o, "queue", dist_obj(&r->queue));
    json_t *ts = json_array();
    for (int32_t i = 0; i < r->ntenants; i++) {
        const ds_tenant_result_t *t = &r->tenants[i];
        json_t *x = json_object();
        json_object_set_new(x, "name", json_string(t->name));
        json_object_set_new(x, "quota_gpus", json_integer(t->quota_gpus));
        json_object_set_new(x, "jobs", json_integer(t->jobs));
        json_object_set_new(x, "avg_jct", json_real(t->jct.avg));
        json_object_set_new(x, "avg_queue", json_real(t->queue.avg));
        json_object_set_new(x, "p99_queue", json_real(t->queue.p99));
        json_object_set_new(x, "preemptions", json_integer(t->preemptions));
        json_object_set_new(x, "qad_mean", json_real(t->qad_mean));
        json_object_set_new(x, "qad_compliance", json_real(t->qad_compliance));
        json_object_set_new(x, "qad_compliance_g", json_real(t->qad_compliance_g));
        json_array_append_new(ts, x);
    }
    json_object_set_new(o, "tenants", ts);
    return o;
}

int ds_report_json(FILE *f, const ds_sim_result_t *r, const ds_report_meta_t *m)
{
    json_t *o = summary(r, m);
    int rc = json_dumpf(o, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    fputc('\n', f);
    json_decref(o);
    return rc ? DS_EIO : DS_OK;
}

int ds_report_json_many(FILE *f, const ds_sim_result_t *const *r, const ds_report_meta_t *m, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++) json_array_append_new(a, summary(r[i], m ? &m[i] : NULL));
    int rc = json_dumpf(a, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    fputc('\n', f);
    json_decref(a);
    return rc ? DS_EIO : DS_OK;
}
