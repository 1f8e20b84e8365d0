/* ds_coloc.c: interference-aware colocation as admission control (docs/policy.md §5): a load- and
 * assurance-dependent retention threshold, and the choice of a partner among capped candidates. */
#include "ds_internal.h"

#include <math.h>

double dsp_pressure(const ds_engine_t *e, const dsp_t *s, int32_t part)
{
    const dsp_config_t *c = &s->cfg;
    double gp = (double)s->ppend_gpus[part], gf = (double)e->parts[part].gpus_free;
    return gp > 0 ? pow(gp / (gf + c->eps), c->gamma) : 0.0;
}

double dsp_tau_base(const ds_engine_t *e, const dsp_t *s, int32_t part)
{
    const dsp_config_t *c = &s->cfg;
    double P = dsp_pressure(e, s, part);
    return DS_MIN(c->tau_max, c->rho_min + (1.0 - c->rho_min) * (isinf(P) ? 1.0 : P / (1.0 + P)));
}

double dsp_tau_tenant(const dsp_t *s, double tau, int32_t ten)
{
    const dsp_config_t *c = &s->cfg;
    /* An under-served tenant's job tolerates less slowdown: it is recovering its quota. */
    if (dsp_underserved(s, ten) && c->theta > 0)
        tau = DS_MIN(c->tau_max, tau + (1.0 - tau) * (c->theta - s->S[ten]) / c->theta);
    return tau;
}

double dsp_threshold(const ds_engine_t *e, const dsp_t *s, int32_t j, int32_t part)
{
    return dsp_tau_tenant(s, dsp_tau_base(e, s, part), e->trace->jobs[j].tenant);
}

int dsp_try_colocate(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now) { return dsp_try_colocate_min(e, s, j, now, 0.0); }

int dsp_try_colocate_min(ds_engine_t *e, dsp_t *s, int32_t j, int64_t now, double floor_tau)
{
    const dsp_config_t *c = &s->cfg;
    if (!c->colocation || e->cfg.k < 2) return 0;
    const ds_job_t *job = &e->trace->jobs[j];
    int32_t g = job->gpus, part = e->js[j].part;
    if (g > s->maxg) return 0;
    s->st.coloc_attempts++;
    /* no running job is small enough to share a GPU with this one: spare the candidate walk */
    if (job->gmem_mib > s->gmem_max - s->min_gmem) {
        s->st.coloc_no_candidate++;
        return 0;
    }
    /* A pair keeps a BE member, the one the monitor stops. Without borrowing the joining job becomes
     * that member: it is revocable until it runs alone and is promoted. */
    dsp_list_t *lists[2];
    int nl = 0;
    lists[nl++] = dsp_solo(s, part, 1, g);
    if (e->js[j].klass == DS_CLASS_BE || !c->borrowing) lists[nl++] = dsp_solo(s, part, 0, g);
    double base = dsp_tau_base(e, s, part), tau_j = DS_MAX(floor_tau, dsp_tau_tenant(s, base, job->tenant));
    /* The model's error (RMSE ~0.1 on held-out workloads) and the noise of one measured mean exceed the
     * margin between a loaded threshold (up to tau_max) and 1, not the one below rho_min: there the
     * estimate vetoes; above it the monitor decides, on the pair's own samples against the threshold of
     * the moment (monitor-z). With admit-floor both jobs face the same bar. */
    double admit_j = c->admit_floor ? DS_MAX(floor_tau, c->rho_min) : tau_j;
    double best_score = -INFINITY, best_tau = 0;
    int32_t best = -1, examined = 0;
    int best_probe = 0;
    for (int l = 0; l < nl && examined < c->max_candidates; l++) {
        const dsp_list_t *L = lists[l];
        for (int32_t i = L->n - 1; i >= 0 && examined < c->max_candidates; i--) {
            int32_t p = L->v[i];
            examined++;
            int32_t pn = e->gpus[e->jgpus[e->jgpu_off[p]]].node;
            if (s->blocked[pn]) continue; /* a reservation j keeps off */
            if (ds_engine_node_down(e, pn)) continue; /* out of service: its running jobs take no partner */
            if (s->banned[j] == p || s->banned[p] == j) { s->st.rej_revoked++; continue; }
            /* several GPU types: a partner on a type j may use, its GPU memory and retention that type's */
            int32_t pt = -1, gmem = e->cfg.gmem_per_gpu;
            if (e->ntypes > 1) {
                int32_t ty = ds_engine_job_type(e, p);
                if (!ds_engine_type_ok(e, j, ty)) continue;
                /* a G job joining a BE one takes its tenant's quota of that type */
                if (e->js[j].klass == DS_CLASS_G && s->typed && !dsp_g_room(e, s, j, ty, 0)) continue;
                pt = dsp_pair_type(e, s, p);
                gmem = ds_engine_gpu_gmem(e, e->jgpus[e->jgpu_off[p]]);
            }
            if (job->gmem_mib + e->trace->jobs[p].gmem_mib > gmem) { s->st.rej_memory++; continue; }
            if (!ds_engine_gpus_fit(e, j, &e->jgpus[e->jgpu_off[p]])) { s->st.rej_cpu++; continue; }
            double score = 0, tau_p = DS_MAX(floor_tau, dsp_tau_tenant(s, base, e->trace->jobs[p].tenant));
            double admit_p = c->admit_floor ? admit_j : tau_p;
            int probe = 0;
            if (c->interference_aware) {
                /* the threshold is tested on the bounds (a probe's optimism), the choice made on the
                 * estimates: a measured good partner goes before an unmeasured one */
                double bj, bp;
                int pj, pp;
                double rj = dsp_retention_admit(e, s, j, p, pt, &bj, &pj), rp = dsp_retention_admit(e, s, p, j, pt, &bp, &pp);
                if (bj < admit_j || bp < admit_p) { s->st.rej_retention++; continue; }
                probe = (rj < admit_j && pj) || (rp < admit_p && pp);
                score = DS_MIN(rj, rp);
            }
            if (score > best_score) best_score = score, best = p, best_tau = tau_p, best_probe = probe;
        }
    }
    if (best < 0) {
        s->st.coloc_no_candidate++;
        return 0;
    }
    if (!c->borrowing) ds_engine_set_class(e, j, DS_CLASS_BE);
    if (best_probe) {
        int32_t pt = dsp_pair_type(e, s, best);
        dsp_observed_set_probe(s, e->trace, j, best, pt, 1);
        dsp_observed_set_probe(s, e->trace, best, j, pt, 1);
        s->st.probes++;
    }
    s->admit_tau[j] = (float)tau_j;
    s->admit_tau[best] = (float)best_tau;
    dsp_start(e, s, j, &e->jgpus[e->jgpu_off[best]], best, now);
    s->st.coloc_admitted++;
    return 1;
}
