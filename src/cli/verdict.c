/* verdict.c: judges DeepShare against the suite's goal on one workload (see verdict.h). */
#include "cli/verdict.h"

#include <stdio.h>
#include <string.h>

#include "deepshare/policy.h"

const ds_policy_ops_t *ds_vrow_ops(const char *policy)
{
    char base[sizeof ((ds_vrow_t *)0)->policy];
    snprintf(base, sizeof base, "%.*s", (int)strcspn(policy, "+"), policy);
    return ds_policy_find(base);
}

void ds_verdict_judge(const ds_vrow_t *rows, int n, double theta, ds_verdict_t *v)
{
    memset(v, 0, sizeof *v);
    v->min_pooled_p99 = -1;
    for (int i = 0; i < n; i++) {
        ds_vrow_t row = rows[i];
        const ds_policy_ops_t *ops = ds_vrow_ops(row.policy);
        row.production = ops && (ops->props & DS_POLICY_PRODUCTION);
        const ds_vrow_t *r = &row;
        if (r->compliance >= theta) v->theta_attained = 1;
        if (!strcmp(r->policy, "deepshare")) {
            if (r->pooled) v->ds = *r, v->have_ds = 1;
            continue;
        }
        if (r->compliance > v->best_compliance) v->best_compliance = r->compliance;
        if (r->pooled) {
            if (!v->have_pooled_base || r->avg_queue < v->best_pooled.avg_queue) v->best_pooled = *r;
            if (r->production && (!v->have_prod || r->avg_queue < v->best_prod.avg_queue)) v->best_prod = *r, v->have_prod = 1;
            if (v->min_pooled_p99 < 0 || r->p99_queue < v->min_pooled_p99) v->min_pooled_p99 = r->p99_queue;
            v->have_pooled_base = 1;
        } else if (!v->have_part_base || r->avg_queue < v->best_part.avg_queue) {
            v->best_part = *r;
            v->have_part_base = 1;
        }
    }
    v->compliance_target = v->theta_attained && theta > v->best_compliance ? theta : v->best_compliance;
    if (!v->have_ds || !v->have_pooled_base) return;
    if (v->have_prod && v->best_prod.avg_queue > 0) v->prod_ratio = v->ds.avg_queue / v->best_prod.avg_queue;
    /* a relative tolerance of 1e-9 only absorbs printing round-trips, never a real difference */
    v->queue_ok = v->ds.avg_queue <= v->best_pooled.avg_queue * (1 + 1e-9);
    v->p99_ok = v->ds.p99_queue <= 1.5 * v->min_pooled_p99 * (1 + 1e-9);
    v->compliance_ok = v->ds.compliance >= v->compliance_target - 1e-9;
    v->ok = v->queue_ok && v->p99_ok && v->compliance_ok;
}

void ds_verdict_print(FILE *f, const ds_verdict_t *v)
{
    if (!v->have_ds || !v->have_pooled_base) {
        fprintf(f, "verdict: not judged (needs DeepShare pooled and at least one pooled baseline)\n");
        return;
    }
    fprintf(f, "verdict: %s: DeepShare pooled avg queue %.0f s, p99 %.0f s, compliance %.3f; best pooled baseline %s "
               "(%s) %.0f s (lowest pooled p99 %.0f s)",
            v->ok ? "GOAL MET" : "GOAL MISSED", v->ds.avg_queue, v->ds.p99_queue, v->ds.compliance,
            v->best_pooled.policy, v->best_pooled.production ? "production" : "research", v->best_pooled.avg_queue,
            v->min_pooled_p99);
    if (v->have_prod) {
        fprintf(f, "; best production model %s %.0f s", v->best_prod.policy, v->best_prod.avg_queue);
        if (v->best_prod.avg_queue > 0) fprintf(f, " (DeepShare / %s = %.2f)", v->best_prod.policy, v->prod_ratio);
    }
    if (v->have_part_base)
        fprintf(f, "; best partitioned baseline %s %.0f s, compliance %.3f", v->best_part.policy, v->best_part.avg_queue,
                v->best_part.compliance);
    fprintf(f, "; compliance target %.3f%s [queue %s, p99 %s, compliance %s]\n", v->compliance_target,
            v->theta_attained ? "" : " (no policy attains 0.95)", v->queue_ok ? "met" : "missed",
            v->p99_ok ? "met" : "missed", v->compliance_ok ? "met" : "missed");
}
