/* ds_explain.c: DeepShare's own account of one job (ops->explain, docs/policy.md): its tenant's QAD and
 * band, the class a pass now would give it with the quota and BE cap the policy applies, its place in
 * the order, and for a job that does not fit the colocation it would be offered and whether it may
 * preempt -- all read from the policy's state and configuration, never recomputed by a driver. */
#include "ds_internal.h"

#include <math.h>

/* Running: its class and what could stop it. */
static void explain_running(const ds_engine_t *e, const dsp_t *s, int32_t j, int64_t now, ds_buf_t *out)
{
    const dsp_config_t *c = &s->cfg;
    const ds_job_t *job = &e->trace->jobs[j];
    if (e->js[j].klass == DS_CLASS_G) {
        ds_bputs(out, "  class: runs as guaranteed (G), within its tenant's quota: never preempted\n");
    } else {
        const char *why = s->wc[j] ? "on GPUs the work-conserving stage found idle"
                          : s->yielded[j] == DSP_YIELDED && s->qyield[j] == DSP_QY_QUOTA
                              ? "it gave up its G class to its under-served tenant's next job, which its own longer "
                                "runs kept out of the quota (quota-yield)"
                          : s->yielded[j] == DSP_YIELDED && s->qyield[j] == DSP_QY_ATTAINED
                              ? "it gave up its G class after holding its tenant's quota for longer than the "
                                "attained-yield multiple of the typical run, to its tenant's next job, predicted to end "
                                "sooner (attained-yield)"
                          : s->yielded[j] == DSP_YIELDED ? "it gave up its G class after outliving its prediction, "
                                                           "while its tenant had work waiting"
                          : !c->borrowing ? "the revocable member of a shared GPU (hard quotas)"
                          : job->klass == DS_CLASS_BE ? "submitted as best effort"
                                                      : "borrowing beyond its tenant's quota";
        ds_bprintf(out, "  class: runs as best effort (BE): %s%s\n", why,
                   job->klass == DS_CLASS_BE && c->borrowing ? "" : "; promoted to G once its quota has room");
        if (c->preemption && c->borrowing) {
            ds_bputs(out, "  preemption: may be requeued for a guaranteed job of an under-served tenant, cheapest first\n");
            double young = dsp_young_for(e, s, j, now);
            if (young > 0)
                ds_bprintf(out, "  young: younger than the typical run (%.0f s, the median of the latest %d finished jobs) for "
                           "%.0f s more: a victim only where every set of older runs costs more (young-victim)\n",
                           c->young_victim * s->typical.median, s->typical.n, young);
        }
    }
    int32_t p = s->pair[j];
    if (p >= 0)
        ds_bprintf(out, "  colocation: shares its GPU%s with job %lld, admitted at threshold %.2f; low retention "
                   "samples in a row: %d (%d revoke the pair)\n", job->gpus == 1 ? "" : "s", (long long)e->trace->jobs[p].id,
                   (double)s->admit_tau[j], s->low[DS_MIN(j, p)], c->w);
    if (p >= 0 && s->mon[DS_MIN(j, p)].missing > 0)
        ds_bprintf(out, "  telemetry: no fresh retention sample of the pair for the last %d cycle%s (missing or stale): "
                   "it is neither revoked nor admitted on that, and its count of low samples is held\n",
                   s->mon[DS_MIN(j, p)].missing, s->mon[DS_MIN(j, p)].missing == 1 ? "" : "s");
}

/* The class a pass now would give pending job j, with the budgets behind it. */
static int explain_class(const ds_engine_t *e, const dsp_t *s, int32_t j, int64_t now, ds_buf_t *out)
{
    const dsp_config_t *c = &s->cfg;
    const ds_job_t *job = &e->trace->jobs[j];
    dsp_budget_t b;
    int cls = dsp_class_now(e, s, j, now, &b);
    int32_t g = job->gpus;
    long long q = (long long)b.q, cap = (long long)b.becap, used = (long long)(b.becap - b.bbud);
    if (!c->borrowing) {
        if (cls == DS_CLASS_G)
            ds_bprintf(out, "  class: hard quotas (borrowing = 0): within quota (%lld of %lld GPUs free for it), "
                       "eligible as guaranteed (G)\n", (long long)b.gbud, q);
        else
            ds_bprintf(out, "  class: hard quotas (borrowing = 0): %lld + %d > %lld quota GPUs (shared ones count): "
                       "waits for its own jobs to finish\n", q - (long long)b.gbud, g, q);
        return cls;
    }
    if (job->klass == DS_CLASS_BE) {
        if (cls == DS_CLASS_BE)
            ds_bprintf(out, "  class: submitted as best effort: runs only on idle or shared GPUs, within its tenant's "
                       "BE cap (%lld of %lld GPUs held or claimed ahead of it; cap = m %g x quota %lld)\n", used, cap, c->m, q);
        else
            ds_bprintf(out, "  class: submitted as best effort, over its tenant's BE cap (%lld held or claimed ahead of it "
                       "+ %d > %lld = m %g x quota %lld): waits for its tenant's BE jobs to finish\n", used, g, cap, c->m, q);
        return cls;
    }
    if (cls == DS_CLASS_G && b.prefix) {
        ds_bprintf(out, "  class: backfilled within quota: a job ahead of it in its tenant's order does not fit the quota "
                   "yet, and this one (%.0f s left) is predicted to end before the tenant's running G jobs free what "
                   "that job lacks (in %.0f s), so it is G in the quota kept for it (%lld of %lld GPUs left; "
                   "quota-backfill)\n", dsp_remaining(e, s, j, now), b.bf_until, (long long)b.bf_gpus, q);
    } else if (cls == DS_CLASS_G) {
        ds_bprintf(out, "  class: within quota: eligible as guaranteed (G) (%lld of %lld quota GPUs left for it)\n",
                   (long long)b.gbud, q);
    } else if (cls == DS_CLASS_BE && g > DS_MAX(b.q, b.becap)) {
        ds_bprintf(out, "  class: larger than its tenant's quota (%lld) and BE cap (%lld = m %g x quota): it may run as "
                   "the tenant's only best-effort job\n", q, cap, c->m);
    } else if (cls == DS_CLASS_BE) {
        if (b.prefix)
            ds_bprintf(out, "  class: a job ahead of it in its tenant's order does not fit the quota, and G is a prefix "
                       "of that order (g-prefix), so it can only borrow as best effort (BE cap %lld = m %g x quota; "
                       "%lld held or claimed ahead of it)\n", cap, c->m, used);
        else
            ds_bprintf(out, "  quota: %lld + %d > %lld GPUs (G held or claimed ahead of it + its own > quota), so it can "
                       "only borrow as best effort (BE cap %lld = m %g x quota; %lld held or claimed ahead of it)\n",
                       q - (long long)b.gbud, g, q, cap, c->m, used);
    } else {
        ds_bprintf(out, "  quota: over its quota and its BE cap (BE held or claimed ahead of it %lld + %d > BE cap %lld = "
                   "m %g x quota %lld): waits for its own jobs to finish\n", used, g, cap, c->m, q);
    }
    return cls;
}

/* Pending jobs (any partition) before j in the status page's order, and how many are pending. */
static int32_t rank_of(const dsp_t *s, int32_t j, int32_t *n)
{
    int32_t ahead = 0;
    *n = 0;
    for (int32_t p = 0; p < s->nparts; p++)
        for (int32_t k = 0; k < s->pend[p].n; k++) {
            int32_t x = s->pend[p].v[k];
            (*n)++;
            ahead += x != j && dsp_cmp_band(s, x, j) < 0;
        }
    return ahead;
}

/* The partner admission would pick for j now (the candidates and bars of dsp_try_colocate, read-only). */
static void explain_coloc(const ds_engine_t *e, const dsp_t *s, int32_t j, int cls, ds_buf_t *out)
{
    const dsp_config_t *c = &s->cfg;
    const ds_job_t *job = &e->trace->jobs[j];
    int32_t g = job->gpus, part = e->js[j].part;
    const dsp_list_t *lists[2];
    int nl = 0, be = cls == DS_CLASS_BE;
    lists[nl++] = dsp_solo((dsp_t *)s, part, 1, g);
    if (be || !c->borrowing) lists[nl++] = dsp_solo((dsp_t *)s, part, 0, g);
    double base = dsp_tau_base(e, s, part), tau_j = dsp_tau_tenant(s, base, job->tenant);
    double admit_j = c->admit_floor ? c->rho_min : tau_j, press = dsp_pressure(e, s, part);
    int32_t examined = 0, best = -1, rej_mem = 0, rej_cpu = 0, rej_ban = 0;
    double best_score = -INFINITY, best_bar = 0, best_rj = 0, best_rp = 0;
    int best_ok = 0;
    for (int l = 0; l < nl && examined < c->max_candidates; l++)
        for (int32_t i = lists[l]->n - 1; i >= 0 && examined < c->max_candidates; i--) {
            int32_t p = lists[l]->v[i];
            examined++;
            if (s->banned[j] == p || s->banned[p] == j) { rej_ban++; continue; }
            int32_t pt = -1, gmem = e->cfg.gmem_per_gpu;
            if (e->ntypes > 1) {
                if (!ds_engine_type_ok(e, j, ds_engine_job_type(e, p))) continue;
                pt = dsp_pair_type(e, s, p);
                gmem = ds_engine_gpu_gmem(e, e->jgpus[e->jgpu_off[p]]);
            }
            if (job->gmem_mib + e->trace->jobs[p].gmem_mib > gmem) { rej_mem++; continue; }
            if (!ds_engine_gpus_fit(e, j, &e->jgpus[e->jgpu_off[p]])) { rej_cpu++; continue; }
            double tau_p = dsp_tau_tenant(s, base, e->trace->jobs[p].tenant), admit_p = c->admit_floor ? admit_j : tau_p;
            double rj = 1, rp = 1, bj = 1, bp = 1;
            int pj, pp;
            if (c->interference_aware) {
                rj = dsp_retention_admit(e, s, j, p, pt, &bj, &pj);
                rp = dsp_retention_admit(e, s, p, j, pt, &bp, &pp);
            }
            int ok = bj >= admit_j && bp >= admit_p;
            double score = c->interference_aware ? DS_MIN(rj, rp) : 0;
            /* an admissible partner before any other, then the best estimate */
            if ((ok && !best_ok) || (ok == best_ok && score > best_score))
                best = p, best_score = score, best_ok = ok, best_bar = bj < admit_j ? admit_j : admit_p, best_rj = rj,
                best_rp = rp;
        }
    if (best < 0) {
        if (examined)
            ds_bprintf(out, "  colocation: none of %d running %d-GPU job%s can take it (%d over GPU memory, %d over "
                       "CPUs, %d revoked with it before)\n", examined, g, examined == 1 ? "" : "s", rej_mem, rej_cpu, rej_ban);
        else
            ds_bprintf(out, "  colocation: no running %d-GPU job%s to share with\n", g,
                       be || !c->borrowing ? "" : " of best effort (a guaranteed job shares only with a best-effort one)");
        return;
    }
    long long id = (long long)e->trace->jobs[best].id;
    if (!c->interference_aware)
        ds_bprintf(out, "  colocation: job %lld would take it on memory fit alone (interference-aware = 0)\n", id);
    else if (best_ok)
        ds_bprintf(out, "  colocation: best partner job %lld, predicted retention %.2f and %.2f >= admission bar %.2f; "
                   "the monitor then holds the pair to the threshold of the moment %.2f (pressure %.2f): it may start "
                   "there at the next pass\n", id, best_rj, best_rp, admit_j, tau_j, press);
    else
        ds_bprintf(out, "  colocation: best partner job %lld, predicted retention %.2f and %.2f < admission bar %.2f: "
                   "rejected (threshold of the moment %.2f, pressure %.2f)\n", id, best_rj, best_rp, best_bar, tau_j, press);
}

void dsp_explain(const ds_engine_t *e, const void *state, int32_t j, int64_t now, ds_buf_t *out)
{
    const dsp_t *s = state;
    const dsp_config_t *c = &s->cfg;
    const ds_jstate_t *js = &e->js[j];
    const ds_job_t *job = &e->trace->jobs[j];
    if (js->status != DS_JS_PENDING && js->status != DS_JS_RUNNING) return;
    int32_t t = job->tenant;
    int under = dsp_underserved(s, t);
    ds_bprintf(out, "  tenant: quota %lld GPUs, G %lld, BE %lld, pending %lld; QAD %.2f, smoothed %.2f (%s, theta %.2f), "
               "band %d of width %g\n", (long long)e->tenant_quota[t], (long long)e->tenant_g_gpus[t],
               (long long)e->tenant_be_gpus[t], (long long)e->tenant_pending_gpus[t], dsp_qad_now(e, s, t), s->S[t],
               under ? "under-served" : "served", c->theta, dsp_band(s, t), c->band);
    if (c->fair_share && s->fair_set)
        ds_bprintf(out, "  fair share: %.1f GPUs of the pool at the last pass (up to its quota what it asks for, and a "
                   "part of what the quotas leave by %s weight); it holds %lld, asks for %.0f\n", s->fair[t],
                   c->fair_weight == DSP_FW_EQUAL ? "equal" : "quota",
                   (long long)(e->tenant_g_gpus[t] + e->tenant_be_gpus[t]), s->fair_want[t]);
    if (s->seen[j]) {
        double el = dsp_elapsed(e, s, j, now), bt = dsp_batch_total(e, s, j, el);
        if (bt >= 0)
            ds_bprintf(out, "  prediction: %.0f s in all, %.0f s left, from its batch (jobs of its owner and GPU count "
                       "submitted with it) whose finished runs say so, having run %.0f s\n", bt,
                       dsp_remaining(e, s, j, now), el);
        else
            ds_bprintf(out, "  prediction: %.0f s in all, %.0f s left\n", s->pred[j], dsp_remaining(e, s, j, now));
    }
    if (js->status == DS_JS_RUNNING) {
        explain_running(e, s, j, now, out);
        return;
    }
    int cls = explain_class(e, s, j, now, out);
    int32_t npend, ahead = rank_of(s, j, &npend);
    ds_bprintf(out, "  order: QAD band first (lowest first), then %s (%.0f s); %d of %d pending\n",
               !c->prediction ? "submit time" : c->gpu_time_order ? "predicted remaining GPU-time" : "predicted remaining time",
               s->krem[j], ahead + 1, npend);
    if (cls == DS_CLASS_G && c->served_g_in_qb && c->borrowing && !under)
        ds_bputs(out, "  queue: placed in the best-effort queue's order, beside best-effort work: its tenant is served, "
                      "so its G class gives it no head start (served-g-in-qb)\n");
    else if (cls == DS_CLASS_G)
        ds_bputs(out, "  queue: placed before best-effort work (G queue)\n");
    else if (cls == DS_CLASS_BE && (c->fair_share & DSP_FS_ORDER) && s->fair_set)
        ds_bprintf(out, "  queue: best-effort queue, where jobs that keep their tenant within its fair share go first: "
                   "this one %s\n", dsp_fair_within(e, s, j) ? "does" : "does not");
    if (ds_explain_fit(e, j, out) || !cls) return;
    if (c->colocation && e->cfg.k >= 2 && job->gpus <= s->maxg) explain_coloc(e, s, j, cls, out);
    if (!c->preemption || !c->borrowing)
        ds_bprintf(out, "  preemption: off (%s = 0)\n", !c->preemption ? "preemption" : "borrowing");
    else if (cls != DS_CLASS_G && (c->fair_share & DSP_FS_RECLAIM) && s->fair_set && dsp_fair_within(e, s, j))
        ds_bputs(out, "  preemption: its tenant stays within its fair share with it, so it may requeue best-effort jobs "
                      "of tenants above theirs (each left at its share), cheapest first (fair-share 2 or 3)\n");
    else if (cls != DS_CLASS_G && (c->fair_share & DSP_FS_RECLAIM))
        ds_bputs(out, "  preemption: none, it would take its tenant past its fair share\n");
    else if (cls != DS_CLASS_G)
        ds_bputs(out, "  preemption: none, best-effort work never preempts\n");
    else if (under)
        ds_bprintf(out, "  preemption: its tenant is under-served (smoothed QAD %.2f < theta %.2f), so best-effort jobs "
                   "may be requeued for it, cheapest first\n", s->S[t], c->theta);
    else if (dsp_served_reclaim_on(e, s))
        ds_bprintf(out, "  preemption: its tenant is served (smoothed QAD %.2f >= theta %.2f), so it may requeue only "
                   "best-effort runs of tenants above their quota (each left at or above it) that are predicted to run "
                   "longer than its own %.0f s, cheapest first (served-reclaim)\n", s->S[t], c->theta,
                   dsp_remaining(e, s, j, now));
    else
        ds_bprintf(out, "  preemption: none, its tenant is served (smoothed QAD %.2f >= theta %.2f)\n", s->S[t], c->theta);
    if (c->reserve_after > 0) {
        for (int32_t i = 0; i < s->nresv; i++)
            if (s->resv[i].job == j) {
                ds_bprintf(out, "  reservation: %d node%s reserved for it, predicted free at t=%lld\n", s->resv[i].nn,
                           s->resv[i].nn == 1 ? "" : "s", (long long)s->resv[i].start);
                return;
            }
        int64_t waited = js->queued + (now - js->pend_since);
        if (waited <= c->reserve_after)
            ds_bprintf(out, "  reservation: after %lld s of waiting (it has waited %lld)\n", (long long)c->reserve_after,
                       (long long)waited);
    }
}
