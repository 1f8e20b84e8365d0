/* slurm_usage.c: what a run bills to its association (priority/multifactor's usage): billed TRES x
 * seconds, decayed by Slurm's per-second factor 1 - 0.693 / PriorityDecayHalfLife over the run's own
 * seconds (decay_apply_new_usage). Calls nothing of the folder. */
#include "slurm_internal.h"

#include <math.h>

static double billable(const slm_state_t *s, int32_t j)
{
    const ds_job_t *job = &s->e->trace->jobs[j];
    if (s->cfg.billing == SLM_BILL_GPU) return job->gpus;
    if (s->cfg.billing == SLM_BILL_JOB) return 1;
    return job->cpus > 0 ? job->cpus : 1;
}

/* Slurm's per-second decay factor, a double as in priority_multifactor.c */
double slm_decay_factor(const slm_state_t *s)
{
    return s->cfg.half_life > 0 ? 1.0 - 0.693 / (double)s->cfg.half_life : 1.0;
}

/* decay^d; d is at most the calc period for most runs, so those are kept (the same pow, computed once) */
double slm_decay_pow(const slm_state_t *s, int64_t d)
{
    if (d == s->cfg.calc_period) return s->pow_period;
    if (d >= 0 && d < s->npow_tab) return s->pow_tab[d];
    return pow(slm_decay_factor(s), (double)d);
}

void slm_decay_table(slm_state_t *s)
{
    s->npow_tab = s->cfg.calc_period < 65536 ? (int32_t)s->cfg.calc_period : 65536;
    s->pow_tab = ds_xmalloc((size_t)(s->npow_tab ? s->npow_tab : 1) * sizeof *s->pow_tab);
    for (int32_t d = 0; d < s->npow_tab; d++) s->pow_tab[d] = pow(slm_decay_factor(s), (double)d);
}

/* Usage of job j's run from charged[j] to t: billed x seconds x decay^seconds (decay_apply_new_usage). */
long double slm_run_usage(const slm_state_t *s, int32_t j, int64_t t)
{
    int64_t d = t - s->charged[j];
    if (d <= 0) return 0;
    return (long double)(billable(s, j) * (double)d * slm_decay_pow(s, d));
}
