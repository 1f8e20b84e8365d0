/* ds_monitor.c: online retention monitoring (docs/policy.md §6): each cycle every colocated pair is sampled;
 * after w consecutive samples below threshold, when the pair's mean is also confidently below it, the
 * colocation is revoked and its BE member stopped. */
#include "ds_internal.h"

#include <math.h>

/* Until the monitor has seen this many within-pair deviations it assumes a noisy measurement. */
#define MON_MIN_DOF 30
#define MON_PRIOR_SIGMA 0.1

static void mon_add(dsp_t *s, int32_t j, double r)
{
    if (!(r > 0)) r = 1e-6;
    double x = log(r);
    dsp_mon_t *m = &s->mon[j];
    m->n++;
    double d = x - m->mean;
    m->mean += d / m->n;
    /* only the pooled spread is used: one pair's few samples say little about the noise */
    if (m->n > 1) s->mon_m2 += d * (x - m->mean), s->mon_dof++;
}

/* Is j's retention measured confidently below thr? Sampling noise alone puts a pair near its threshold
 * under it w times in a row sooner or later (a run of hours gives hundreds of tries), and each revocation
 * throws a job's progress away; so the consecutive rule must be backed by the mean of every sample since
 * the pair began: its upper bound, z standard errors up (noise estimated from all pairs' spread), must
 * be under the threshold too. A pair truly below it is caught within a few samples all the same. */
static int confidently_low(const dsp_t *s, int32_t j, double thr)
{
    if (s->cfg.monitor_z <= 0) return 1;
    const dsp_mon_t *m = &s->mon[j];
    if (m->n == 0) return 0;
    double sigma = s->mon_dof >= MON_MIN_DOF ? sqrt(s->mon_m2 / (double)s->mon_dof) : MON_PRIOR_SIGMA;
    return m->mean + s->cfg.monitor_z * sigma / sqrt((double)m->n) < log(thr);
}

static double pair_threshold(const ds_engine_t *e, const dsp_t *s, int32_t j)
{
    int32_t t = e->trace->jobs[j].tenant;
    switch (s->cfg.monitor_threshold) {
    case DSP_MON_ADMIT: return (double)s->admit_tau[j];
    case DSP_MON_FLOOR: return s->cfg.rho_min;
    case DSP_MON_URGENT:
        return e->js[j].klass != DS_CLASS_BE && dsp_underserved(s, t) ? dsp_tau_tenant(s, s->mon_base[e->js[j].part], t)
                                                                      : s->cfg.rho_min;
    default: return dsp_tau_tenant(s, s->mon_base[e->js[j].part], t);
    }
}

/* The member that stops: the BE one; of two BE (or two G, without borrowing) the later started. */
static int32_t victim_of(const ds_engine_t *e, int32_t a, int32_t b)
{
    int ba = e->js[a].klass == DS_CLASS_BE, bb = e->js[b].klass == DS_CLASS_BE;
    if (ba != bb) return ba ? a : b;
    if (e->js[a].last_start != e->js[b].last_start) return e->js[a].last_start > e->js[b].last_start ? a : b;
    return a > b ? a : b;
}

/* Whether a waiting job could use v's place beside kept better than v does (revoke-for shorter): one of the
 * same GPU count, room in the GPU's memory, not banned from kept, both predicted at the admission bar beside
 * each other, and predicted to end sooner than v, so the place serves the shorter job first, as the queue
 * does. A pair under the monitor's threshold but at rho-min or more is still worth more than no pair (both
 * run at 0.7 or better); revoking it pays only when its place goes to such a job. Under load on Venus x1.5
 * the revoked places are what a burst of short wide jobs shares; where every pair sits in the 0.75-0.95 band
 * (pairs the profile lacks at missing-rho model) a revocation only sends the BE member back to wait.
 * At most max-candidates jobs of kept's GPU count are examined, as a partner search does. */
static int place_wanted(const ds_engine_t *e, dsp_t *s, int32_t kept, int32_t v, int64_t now)
{
    const ds_trace_t *t = e->trace;
    const dsp_config_t *c = &s->cfg;
    int32_t part = e->js[kept].part, g = t->jobs[kept].gpus, pt = dsp_pair_type(e, s, kept), examined = 0;
    int32_t gmem = e->ntypes > 1 ? ds_engine_gpu_gmem(e, e->jgpus[e->jgpu_off[kept]]) : e->cfg.gmem_per_gpu;
    double vrem = dsp_remaining(e, s, v, now), base = c->admit_floor ? 0 : dsp_tau_base(e, s, part);
    double bk = c->admit_floor ? c->rho_min : dsp_tau_tenant(s, base, t->jobs[kept].tenant);
    const dsp_list_t *pl = &s->pend[part];
    for (int32_t k = 0; k < pl->n && examined < c->max_candidates; k++) {
        int32_t x = pl->v[k];
        if (t->jobs[x].gpus != g || e->js[x].held || !ds_engine_startable(e, x)) continue;
        examined++;
        if (s->banned[x] == kept || s->banned[kept] == x) continue;
        if (t->jobs[x].gmem_mib + t->jobs[kept].gmem_mib > gmem) continue;
        if (e->ntypes > 1 && !ds_engine_type_ok(e, x, ds_engine_job_type(e, kept))) continue;
        if (!(dsp_remaining(e, s, x, now) < vrem)) continue;
        double bx = c->admit_floor ? c->rho_min : dsp_tau_tenant(s, base, t->jobs[x].tenant);
        if (dsp_retention(e, s, x, kept, pt) >= bx && dsp_retention(e, s, kept, x, pt) >= bk) return 1;
    }
    return 0;
}

void dsp_monitor(ds_engine_t *e, dsp_t *s, int64_t now)
{
    if (!e->hooks.observe_retention) return;
    /* Collect pairs first: revoking changes the running list. */
    int32_t n = 0;
    for (int32_t k = 0; k < s->run.n; k++) {
        int32_t j = s->run.v[k];
        if (s->pair[j] > j) s->order[n++] = j;
    }
    for (int32_t p = 0; p < s->nparts; p++) s->mon_base[p] = dsp_tau_base(e, s, p);
    for (int32_t k = 0; k < n; k++) {
        int32_t a = s->order[k], b = s->pair[a];
        if (b < 0 || e->js[a].status != DS_JS_RUNNING) continue;
        double ra = e->hooks.observe_retention(e->hooks.ctx, a, now);
        double rb = e->hooks.observe_retention(e->hooks.ctx, b, now);
        /* No fresh measurement of a job (the driver's NaN: telemetry missing or stale) is no sample of it: it
         * neither counts towards a revocation nor clears the count, and teaches the learned retention nothing.
         * A pair with a sample of one job only is judged on that one (deepshared may know one job's own speed,
         * e.g. a BE job that never ran alone has no baseline). */
        int ma = ra >= 0, mb = rb >= 0;
        if (!ma && !mb) {
            s->mon[a].missing++;
            s->st.mon_missing++;
            continue;
        }
        s->mon[a].missing = 0;
        int32_t ty = dsp_pair_type(e, s, a);
        if (ma) dsp_observed_add(s, e->trace, a, b, ty, ra), mon_add(s, a, ra);
        if (mb) dsp_observed_add(s, e->trace, b, a, ty, rb), mon_add(s, b, rb);
        double ta = pair_threshold(e, s, a), tb = pair_threshold(e, s, b);
        int low = (ma && ra < ta) || (mb && rb < tb);
        s->low[a] = low ? s->low[a] + 1 : 0;
        if (s->low[a] < s->cfg.w) continue;
        if (!confidently_low(s, a, ta) && !confidently_low(s, b, tb)) continue;
        int32_t v = victim_of(e, a, b), kept = v == a ? b : a;
        /* below rho-min the estimate that admitted the pair was wrong: it goes whatever waits */
        if (s->cfg.revoke_for == DSP_RF_SHORTER && !confidently_low(s, a, s->cfg.rho_min) &&
            !confidently_low(s, b, s->cfg.rho_min) && !place_wanted(e, s, kept, v, now))
            continue;
        s->banned[v] = kept;
        s->st.preempt_revoke++;
        ds_engine_revoke(e, v, kept, now, DSP_R_REVOKE);
    }
}
