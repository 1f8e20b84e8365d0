/* fuzz_cluster.c: libFuzzer target for a heterogeneous cluster's files: node types, then "%%", then a tenant file
 * with per-type quotas, then "%%", then jobs asking for types; an accepted cluster is laid out and its jobs are
 * simulated briefly under FIFO (type-blind) and Tiresias (fastest type first). */
#include "deepshare/policy.h"
#include "deepshare/sim.h"
#include "deepshare/trace.h"
#include "fuzz_util.h"

static const char default_tenants[] = "tenant,quota_v100,quota_k80\na,8,4\nb,0,8\n";
static const char default_jobs[] = "job_id,tenant,gpus,submit,duration,gpu_type\n1,a,2,0,10,v100\n2,b,4,3,20,\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t c1 = fz_split(data, size);
    const uint8_t *rest = c1 < size ? data + c1 + 4 : NULL;
    size_t nrest = c1 < size ? size - c1 - 4 : 0, c2 = rest ? fz_split(rest, nrest) : 0;
    ds_trace_t t;
    ds_trace_init(&t);
    ds_error_t err;
    ds_error_clear(&err);
    int rc = ds_trace_read_cluster(&t, fz_file("cl", data, c1), &err);
    if (rc == DS_OK) {
        if (t.ngtypes < 1 || t.ngtypes > DS_MAX_GPU_TYPES) abort();
        for (int32_t i = 0; i < t.ngtypes; i++)
            if (ds_trace_find_gtype(&t, t.gtypes[i].name) != i || t.gtypes[i].gpus_per_node < 0 ||
                t.gtypes[i].gpus_per_node > DS_MAX_NODE_GPUS || t.gtypes[i].nodes < 0 || !(t.gtypes[i].weight >= 0))
                abort();
        const uint8_t *tn = rest && c2 > 0 ? rest : (const uint8_t *)default_tenants;
        size_t ntn = rest && c2 > 0 ? c2 : sizeof default_tenants - 1;
        rc = ds_trace_read_tenants(&t, fz_file("tn", tn, ntn), 8, &err);
    }
    if (rc == DS_OK) {
        for (int32_t i = 0; i < t.ntenants; i++) {
            int64_t sum = 0;
            for (int32_t k = 0; k < t.ngtypes; k++) sum += t.tenants[i].quota_t[k];
            if (t.ngtypes > 1 && sum != t.tenants[i].quota_gpus) abort();
        }
        const uint8_t *jb = rest && c2 < nrest ? rest + c2 + 4 : (const uint8_t *)default_jobs;
        size_t njb = rest && c2 < nrest ? nrest - c2 - 4 : sizeof default_jobs - 1;
        rc = ds_trace_read_jobs(&t, fz_file("jobs", jb, njb), &err);
    }
    if (rc == DS_OK && t.njobs <= 64) {
        for (int32_t j = 0; j < t.njobs; j++)
            if (t.jobs[j].gtype >= t.ngtypes || t.jobs[j].ref_gtype >= t.ngtypes || (t.jobs[j].gmask >> t.ngtypes) ||
                (t.jobs[j].gtype >= 0 && t.jobs[j].gmask != 1u << t.jobs[j].gtype))
                abort();
        static const char *const pols[] = {"fifo", "tiresias"};
        for (int p = 0; p < 2; p++) {
            ds_sim_config_t sc;
            ds_sim_config_default(&sc);
            sc.policy = ds_policy_find(pols[p]);
            sc.engine.mode = p ? DS_MODE_POOLED : DS_MODE_PARTITIONED;
            sc.engine.type_order = p ? DS_TYPES_FASTEST : DS_TYPES_BLIND;
            sc.check_invariants = 1;
            ds_sim_result_t res;
            ds_error_t e2;
            ds_error_clear(&e2);
            int r = ds_sim_run(&t, &sc, &res, &e2);
            /* an invariant broken on an accepted cluster is a bug, not bad input */
            if (r && res.invariant_error[0]) abort();
            ds_sim_result_free(&res);
        }
    }
    ds_trace_free(&t);
    return 0;
}
