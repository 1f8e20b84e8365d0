/* ds_types.c: DeepShare on a cluster of several GPU types (docs/heterogeneous.md): which quota a G job's GPUs
 * count in (per-type quotas, or effective GPUs weighted by type), the order of types a job is placed on, and
 * the work a job has done across runs on types of different speeds. Below the stages; calls ds_qad.c only. */
#include "ds_internal.h"

int dsp_g_room(const ds_engine_t *e, const dsp_t *s, int32_t j, int32_t t, double extra)
{
    const ds_job_t *job = &e->trace->jobs[j];
    int32_t i = job->tenant;
    if (!s->typed) return e->tenant_g_gpus[i] + (int64_t)extra + job->gpus <= e->tenant_quota[i];
    if (s->cfg.type_quota == DSP_TQ_EFFECTIVE)
        return dsp_eff_held(e, s, i) + extra + (double)job->gpus * s->tw[t] <= dsp_eff_quota(e, s, i) + 1e-9;
    return e->tenant_g_gpus_t[(size_t)i * (size_t)e->ntypes + (size_t)t] + (int64_t)extra + job->gpus <= ds_engine_quota_t(e, i, t);
}

int32_t dsp_type_order(const ds_engine_t *e, const dsp_t *s, int32_t j, int klass, int32_t *types)
{
    int32_t n = 0;
    double key[DS_MAX_GPU_TYPES];
    int tc = s->cfg.type_choice;
    /* the tenant's assurance decides the rule: recovering its quota, a job wants its work done soonest */
    if (tc == DSP_TC_ASSURED)
        tc = klass == DS_CLASS_G && dsp_underserved(s, e->trace->jobs[j].tenant) ? DSP_TC_FASTEST : DSP_TC_ADVANTAGE;
    for (int32_t t = 0; t < e->ntypes; t++) {
        if (!ds_engine_type_ok(e, j, t)) continue;
        double r = tc == DSP_TC_BLIND ? 0 : ds_engine_speed(e, j, t);
        /* comparative advantage: its speed there against what the type delivers on average, so a job that
         * loses little on an old GPU leaves the fast ones to jobs that lose much */
        if (tc == DSP_TC_ADVANTAGE && s->tw[t] > 0) r /= s->tw[t];
        int32_t k = n++;
        while (k > 0 && key[k - 1] < r) types[k] = types[k - 1], key[k] = key[k - 1], k--;
        types[k] = t, key[k] = r;
    }
    return n;
}

double dsp_speed_now(const ds_engine_t *e, int32_t j)
{
    if (e->ntypes < 2 || e->js[j].status != DS_JS_RUNNING) return 1.0;
    return ds_engine_speed(e, j, ds_engine_job_type(e, j));
}

double dsp_work_done(const ds_engine_t *e, const dsp_t *s, int32_t j, int64_t now)
{
    if (e->ntypes < 2) return (double)ds_engine_elapsed(e, j, now);
    double w = s->work[j];
    if (e->js[j].status == DS_JS_RUNNING && s->wtype[j] >= 0)
        w += (double)(e->js[j].run_time - s->wseen[j] + now - e->js[j].last_start) * ds_engine_speed(e, j, s->wtype[j]);
    return w;
}

double dsp_best_speed(const ds_engine_t *e, int32_t j)
{
    double best = 0;
    for (int32_t t = 0; t < e->ntypes; t++)
        if (ds_engine_type_ok(e, j, t)) best = DS_MAX(best, ds_engine_speed(e, j, t));
    return best > 0 ? best : 1.0;
}

int dsp_find_free(const ds_engine_t *e, const dsp_t *s, int32_t j, int32_t part, const uint8_t *blocked, int32_t *out)
{
    if (!s->typed && !s->type_aware) return ds_engine_find_free_masked(e, j, part, blocked, out);
    int g = e->js[j].klass == DS_CLASS_G && s->typed;
    int32_t types[DS_MAX_GPU_TYPES], n = dsp_type_order(e, s, j, e->js[j].klass, types);
    for (int32_t k = 0; k < n; k++) {
        if (g && !dsp_g_room(e, s, j, types[k], 0)) continue;
        if (ds_engine_find_free_on(e, j, part, types[k], blocked, out)) return 1;
    }
    return 0;
}

int dsp_node_usable(const ds_engine_t *e, const dsp_t *s, int32_t j, int32_t node)
{
    if (e->ntypes < 2) return 1;
    int32_t t = e->nodes[node].gtype;
    if (!ds_engine_type_ok(e, j, t)) return 0;
    return e->js[j].klass != DS_CLASS_G || !s->typed || dsp_g_room(e, s, j, t, 0);
}
