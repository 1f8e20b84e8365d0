/* test_synth.c: the synthetic workload matches the cluster study's shape (duration classes and their
 * GPU-hours, diurnal bursty arrivals, resubmitting users, several workload types) and is deterministic. */
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "deepshare/synth.h"

static void gen(ds_trace_t *t, uint64_t seed, int64_t jobs, int32_t nodes, int32_t tenants, double days)
{
    ds_synth_config_t c;
    ds_synth_config_default(&c);
    c.seed = seed;
    c.jobs = jobs;
    c.nodes = nodes;
    c.tenants = tenants;
    c.days = days;
    ds_trace_init(t);
    ds_error_t err;
    assert_int_equal(ds_synth_generate(t, &c, &err), 0);
    assert_int_equal(t->njobs, jobs);
}

/* The paper's cluster study: 62% of jobs are short exploratory runs (here: under 1 h) using 11% of
 * GPU-hours; jobs over 4 h use 73% of GPU-hours. Checked on three seeds. */
static void test_duration_shares(void **st)
{
    (void)st;
    for (uint64_t seed = 1; seed <= 3; seed++) {
        ds_trace_t t;
        gen(&t, seed, 20000, 100, 10, 0);
        double all = 0, short_h = 0, long_h = 0;
        int64_t nshort = 0;
        for (int32_t i = 0; i < t.njobs; i++) {
            double g = (double)t.jobs[i].gpus * (double)t.jobs[i].duration;
            all += g;
            if (t.jobs[i].duration < 3600) short_h += g, nshort++;
            if (t.jobs[i].duration > 4 * 3600) long_h += g;
        }
        double js = (double)nshort / t.njobs, sh = short_h / all, lh = long_h / all;
        fprintf(stderr, "seed %llu: short jobs %.3f, short GPU-h %.3f, >4 h GPU-h %.3f\n", (unsigned long long)seed,
                js, sh, lh);
        assert_true(fabs(js - 0.62) < 0.02);
        assert_true(fabs(sh - 0.11) < 0.03);
        assert_true(fabs(lh - 0.73) < 0.03);
        ds_trace_free(&t);
    }
}

static void test_arrivals_diurnal_bursty_and_load(void **st)
{
    (void)st;
    ds_trace_t t;
    gen(&t, 1, 20000, 100, 10, 0);
    int64_t hour[24] = {0};
    double sum = 0, sum2 = 0, work = 0;
    for (int32_t i = 0; i < t.njobs; i++) {
        hour[(t.jobs[i].submit / 3600) % 24]++;
        work += (double)t.jobs[i].gpus * (double)t.jobs[i].duration;
        if (i) {
            assert_true(t.jobs[i].submit >= t.jobs[i - 1].submit);
            double d = (double)(t.jobs[i].submit - t.jobs[i - 1].submit);
            sum += d, sum2 += d * d;
        }
    }
    int64_t lo = hour[0], hi = hour[0];
    for (int h = 1; h < 24; h++) lo = DS_MIN(lo, hour[h]), hi = DS_MAX(hi, hour[h]);
    double n = t.njobs - 1, mean = sum / n, cv = sqrt(sum2 / n - mean * mean) / mean;
    double span = (double)(t.jobs[t.njobs - 1].submit + 1), load = work / (800.0 * span);
    fprintf(stderr, "busiest/quietest hour %.2f, inter-arrival CV %.2f, load %.3f over %.1f days\n",
            (double)hi / (double)lo, cv, load, span / 86400);
    assert_true(hi >= 2 * lo);       /* diurnal */
    assert_true(cv > 1.5);           /* bursty: a Poisson process would give 1 */
    assert_true(fabs(load - 1.0) < 0.05); /* the default load is 1.0 */
    ds_trace_free(&t);

    /* a fixed span is honoured and durations are scaled to the load instead */
    gen(&t, 1, 5000, 40, 5, 2.0);
    work = 0;
    for (int32_t i = 0; i < t.njobs; i++) work += (double)t.jobs[i].gpus * (double)t.jobs[i].duration;
    assert_true(t.jobs[t.njobs - 1].submit < 2 * 86400);
    assert_true(fabs(work / (320.0 * 2 * 86400) - 1.0) < 0.02);
    ds_trace_free(&t);
}

/* Most users resubmit similar jobs: the same workload type on the same GPU count most of the time. */
static void test_users_resubmit(void **st)
{
    (void)st;
    ds_trace_t t;
    gen(&t, 2, 20000, 100, 10, 0);
    int32_t nu = t.users.n, users_checked = 0, habitual = 0;
    int32_t *cnt = calloc((size_t)nu, sizeof *cnt);
    for (int32_t i = 0; i < t.njobs; i++) cnt[t.jobs[i].user]++;
    /* per user: jobs in the user's most common (model, gpus) pair */
    int32_t nm = t.models.n, *hist = calloc((size_t)nu * (size_t)nm * 8, sizeof *hist);
    for (int32_t i = 0; i < t.njobs; i++) {
        int32_t g = 0;
        while ((1 << g) < t.jobs[i].gpus) g++;
        hist[((size_t)t.jobs[i].user * (size_t)nm + (size_t)t.jobs[i].model) * 8 + (size_t)DS_MIN(g, 7)]++;
    }
    for (int32_t u = 0; u < nu; u++) {
        if (cnt[u] < 10) continue;
        int32_t best = 0;
        for (size_t k = 0; k < (size_t)nm * 8; k++) best = DS_MAX(best, hist[(size_t)u * (size_t)nm * 8 + k]);
        users_checked++;
        habitual += best * 2 > cnt[u];
    }
    free(hist);
    fprintf(stderr, "%d of %d users submit mostly one kind of job\n", habitual, users_checked);
    assert_true(users_checked >= 20);
    assert_true(habitual * 4 >= users_checked * 3);
    free(cnt);
    ds_trace_free(&t);
}

/* Resubmissions are predictable as in real clusters: jobs of one recipe (user, model, batch size, GPU
 * count) have alike durations, so a recipe's mean ln-duration explains most of the variance across all
 * jobs (the runtime model then reaches R2log ~0.4 online, docs/predictors.md; Venus: 0.57). */
static void test_recipes_predict_durations(void **st)
{
    (void)st;
    ds_trace_t t;
    gen(&t, 2, 20000, 100, 10, 0);
    /* groups by (user, model, batch, gpus), open addressing on a small key */
    size_t cap = 1 << 16;
    uint64_t *key = calloc(cap, sizeof *key);
    double *sum = calloc(cap, sizeof *sum), *sq = calloc(cap, sizeof *sq);
    int64_t *n = calloc(cap, sizeof *n);
    double all = 0, allsq = 0;
    for (int32_t i = 0; i < t.njobs; i++) {
        const ds_job_t *j = &t.jobs[i];
        uint64_t k = 1 + ((uint64_t)j->user << 40 ^ (uint64_t)j->model << 28 ^ (uint64_t)j->batch << 8 ^ (uint64_t)j->gpus);
        size_t h = (size_t)(k * 0x9E3779B97F4A7C15ULL >> 48) & (cap - 1);
        while (key[h] && key[h] != k) h = (h + 1) & (cap - 1);
        key[h] = k;
        double x = log((double)j->duration);
        sum[h] += x, sq[h] += x * x, n[h]++;
        all += x, allsq += x * x;
    }
    double within = 0;
    for (size_t h = 0; h < cap; h++)
        if (n[h]) within += sq[h] - sum[h] * sum[h] / (double)n[h];
    double total = allsq - all * all / t.njobs;
    fprintf(stderr, "recipes explain %.2f of the ln-duration variance\n", 1 - within / total);
    assert_true(1 - within / total > 0.5);
    free(key), free(sum), free(sq), free(n);
    ds_trace_free(&t);
}

/* Several workload types with their own GPU utilization and memory; tenants with quotas. */
static void test_types_and_tenants(void **st)
{
    (void)st;
    ds_trace_t t;
    gen(&t, 3, 5000, 24, 6, 0);
    assert_true(t.models.n >= 5);
    float ulo = 100, uhi = 0;
    int32_t mlo = 1 << 30, mhi = 0;
    for (int32_t i = 0; i < t.njobs; i++) {
        const ds_job_t *j = &t.jobs[i];
        ulo = fminf(ulo, j->gpu_util), uhi = fmaxf(uhi, j->gpu_util);
        mlo = DS_MIN(mlo, j->gmem_mib), mhi = DS_MAX(mhi, j->gmem_mib);
        assert_true(j->gpu_util > 0 && j->gpu_util <= 100);
        assert_true(j->gpus >= 1 && j->gpus <= t.tenants[j->tenant].quota_gpus);
        assert_true(j->duration >= 1);
        assert_true(j->estimate >= 1);
        assert_int_equal(j->id, i + 1);
    }
    assert_true(uhi - ulo > 50);
    assert_true(mhi > 4 * mlo);
    assert_int_equal(t.ntenants, 6);
    assert_int_equal(ds_trace_total_quota(&t), 24 * 8);
    for (int32_t i = 0; i < t.ntenants; i++) assert_true(t.tenants[i].quota_gpus >= 8);
    assert_true(t.tenants[0].quota_gpus > t.tenants[5].quota_gpus);
    ds_trace_free(&t);
}

static void test_deterministic(void **st)
{
    (void)st;
    ds_trace_t a, b, c;
    gen(&a, 11, 3000, 24, 6, 0);
    gen(&b, 11, 3000, 24, 6, 0);
    gen(&c, 12, 3000, 24, 6, 0);
    int differs = 0;
    for (int32_t i = 0; i < a.njobs; i++) {
        const ds_job_t *x = &a.jobs[i], *y = &b.jobs[i], *z = &c.jobs[i];
        assert_true(x->submit == y->submit && x->duration == y->duration && x->gpus == y->gpus &&
                    x->tenant == y->tenant && x->user == y->user && x->model == y->model &&
                    x->estimate == y->estimate && x->klass == y->klass && x->gpu_util == y->gpu_util);
        differs |= x->submit != z->submit || x->duration != z->duration;
    }
    assert_true(differs);
    ds_trace_free(&a);
    ds_trace_free(&b);
    ds_trace_free(&c);
}

static void test_bad_parameters(void **st)
{
    (void)st;
    ds_synth_config_t c;
    ds_synth_config_default(&c);
    c.nodes = 2;
    c.tenants = 3;
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    assert_int_equal(ds_synth_generate(&t, &c, &err), DS_EINVAL);
    assert_non_null(strstr(err.msg, "nodes >= tenants"));
    ds_trace_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_duration_shares),
        cmocka_unit_test(test_arrivals_diurnal_bursty_and_load),
        cmocka_unit_test(test_users_resubmit),
        cmocka_unit_test(test_recipes_predict_durations),
        cmocka_unit_test(test_types_and_tenants),
        cmocka_unit_test(test_deterministic),
        cmocka_unit_test(test_bad_parameters),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
