/* fits.c: whether a run fits in this machine's memory, checked before anything big is allocated: sizes given
 * on the command line (--synth-jobs, --synth-nodes, --pool-nodes) or by a trace (jobs, quotas, span) are
 * refused with the memory they need instead of growing to the address-space limit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cli/cli.h"
#include "deepshare/engine.h"

/* What a simulated job costs (trace, engine, simulator and result arrays, the policy's own state, and the
 * series as the synthetic span grows with its jobs), measured: peak RSS growth from --synth-jobs 100000 to
 * 200000 was 530 (SJF), 607 (Tiresias), 725 (QSSF), 752 (Lucid), 780 (DeepShare) and 936 (FIFO) bytes a job.
 * The largest, rounded up, makes the figure an estimate ("about"), not a bound: a run refused by it would at
 * best have fitted with little room to spare. A GPU of the cluster costs the engine's GPU and node records
 * and the placement index; a job's GPU, its slot in the engine's per-job GPU lists. */
#define BYTES_PER_JOB 1024
#define BYTES_PER_GPU ((int64_t)sizeof(ds_gpu_t) + (int64_t)sizeof(ds_node_t) + 64)
#define BYTES_PER_JOB_GPU 4

int64_t ds_mem_limit(char *what, size_t n)
{
    int64_t lim = (int64_t)sysconf(_SC_PHYS_PAGES) * (int64_t)sysconf(_SC_PAGESIZE);
    snprintf(what, n, "physical memory");
    struct rlimit r;
    if (!getrlimit(RLIMIT_AS, &r) && r.rlim_cur != RLIM_INFINITY && (int64_t)r.rlim_cur < lim)
        lim = (int64_t)r.rlim_cur, snprintf(what, n, "address-space limit, ulimit -v");
    if (!getrlimit(RLIMIT_DATA, &r) && r.rlim_cur != RLIM_INFINITY && (int64_t)r.rlim_cur < lim)
        lim = (int64_t)r.rlim_cur, snprintf(what, n, "data limit, ulimit -d");
    /* an operator's (and the tests') own cap, in bytes or with a K, M or G suffix */
    const char *env = getenv("DS_MEM_LIMIT");
    if (env && *env) {
        char *end;
        double v = strtod(env, &end);
        double mul = *end == 'K' ? 1024.0 : *end == 'M' ? 1048576.0 : *end == 'G' ? 1073741824.0 : 1.0;
        if (v > 0 && v * mul < (double)lim) lim = (int64_t)(v * mul), snprintf(what, n, "DS_MEM_LIMIT=%s", env);
    }
    /* a container's limit (cgroup v2, then v1): "max" or a number of bytes */
    static const char *const cg[] = {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"};
    for (int i = 0; i < 2; i++) {
        FILE *f = fopen(cg[i], "r");
        if (!f) continue;
        long long v;
        if (fscanf(f, "%lld", &v) == 1 && v > 0 && v < lim) lim = v, snprintf(what, n, "container limit, %s", cg[i]);
        fclose(f);
    }
    return lim;
}

/* Bytes a run needs: per job, per GPU of the cluster, per GPU a job asks for, and the per-cycle
 * series over samples cycles (a sample and two floats per tenant). */
static int64_t need_bytes(int64_t jobs, int64_t gpus, int64_t job_gpus, int64_t tenants, int64_t samples)
{
    return jobs * BYTES_PER_JOB + gpus * BYTES_PER_GPU + job_gpus * BYTES_PER_JOB_GPU +
           samples * ((int64_t)sizeof(ds_sample_t) + 8 * tenants);
}

static int check(int64_t need, const char *what, ds_error_t *err)
{
    char lim_what[160];
    int64_t lim = ds_mem_limit(lim_what, sizeof lim_what);
    if (need <= lim) return DS_OK;
    ds_error_set(err, NULL, 0, NULL, "%s needs about %.1f GiB of memory, more than the %.1f GiB available (%s)", what,
                 (double)need / (1 << 30), (double)lim / (1 << 30), lim_what);
    return DS_ENOMEM;
}

int ds_fits_synth(const ds_synth_config_t *c, int64_t cycle, ds_error_t *err)
{
    int64_t gpus = (int64_t)c->nodes * c->gpus_per_node;
    int64_t samples = c->days > 0 ? (int64_t)(c->days * 86400 / (double)(cycle > 0 ? cycle : 60)) : 0;
    char what[200];
    snprintf(what, sizeof what, "the synthetic workload (--synth-jobs %lld, --synth-nodes %d%s)", (long long)c->jobs,
             c->nodes, c->days > 0 ? ", --synth-days" : "");
    /* the generator's jobs ask for a few GPUs each: one per job is the least */
    return check(need_bytes(c->jobs, gpus, c->jobs, c->tenants, samples), what, err);
}

int ds_fits_run(const ds_trace_t *t, const ds_sim_config_t *sc, int concurrent, ds_error_t *err)
{
    int64_t gpn = sc->engine.gpus_per_node > 0 ? sc->engine.gpus_per_node : 1, nodes = 0, job_gpus = 0;
    for (int32_t i = 0; i < t->ntenants; i++) nodes += (t->tenants[i].quota_gpus + gpn - 1) / gpn;
    if (sc->engine.mode == DS_MODE_POOLED && sc->engine.pool_nodes > 0) nodes = sc->engine.pool_nodes;
    /* the makespan is at least the span to the last job's end had every job started at once */
    int64_t first = t->njobs ? t->jobs[0].submit : 0, last = first;
    for (int32_t j = 0; j < t->njobs; j++) {
        job_gpus += t->jobs[j].gpus;
        last = DS_MAX(last, t->jobs[j].submit + t->jobs[j].duration);
    }
    int64_t samples = sc->keep_series ? (last - first) / DS_MAX(sc->cycle, 1) : 0;
    int64_t need = need_bytes(t->njobs, nodes * gpn, job_gpus, t->ntenants, samples) * DS_MAX(concurrent, 1);
    char what[600];
    snprintf(what, sizeof what, "%s (%d jobs asking for %lld GPUs, a cluster of %lld GPUs, %lld cycles%s)", t->source,
             t->njobs, (long long)job_gpus, (long long)(nodes * gpn), (long long)samples,
             concurrent > 1 ? ", runs side by side" : "");
    return check(need, what, err);
}
