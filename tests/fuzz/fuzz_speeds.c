/* fuzz_speeds.c: libFuzzer target for the speed table reader (speeds.csv) and its per-job lookup on a fixed typed
 * trace, both bound at once (the simulator) and job by job after the bind (deepshared's slots): the same rates. */
#include "deepshare/speeds.h"
#include "deepshare/trace.h"
#include "fuzz_util.h"

#include <math.h>

static const char tenants[] = "tenant,quota_v100,quota_k80\nvcA,8,8\n";
static const char jobs[] = "job_id,tenant,gpus,submit,duration,model,dataset,batchsize,amp,gpu_type\n"
                           "1,vcA,1,0,10,ResNet-50,ImageNet,64,0,\n2,vcA,4,5,20,LM,Wikitext-2,5,0,k80\n"
                           "3,vcA,3,5,20,A3C,Pong,0,0,\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ds_error_t err;
    ds_error_clear(&err);
    ds_trace_t *tp = fz_trace(tenants, jobs);
    ds_speeds_t s;
    if (ds_speeds_read(&s, fz_file("speeds", data, size), &err) == DS_OK) {
        if (s.nrows < 1 || s.nrows > DS_SPEEDS_MAX_ROWS) abort();
        ds_speeds_bind(&s, tp);
        double rate[3][DS_MAX_GPU_TYPES + 2];
        if (tp->njobs > 3) abort();
        for (int32_t j = 0; j < tp->njobs; j++)
            for (int32_t ty = -1; ty <= tp->ngtypes; ty++) {
                double r = ds_speeds_rate(&s, tp, j, ty);
                if (!(r > 0) || isinf(r)) abort();
                rate[j][ty + 1] = r;
            }
        for (int32_t ty = 0; ty < tp->ngtypes; ty++) {
            double w = ds_speeds_type_weight(&s, tp, ty);
            if (!(w > 0) || isinf(w)) abort();
        }
        int32_t rows[64];
        if (ds_speeds_workloads(&s, tp, rows, 64) > 64) abort();
        /* deepshared's way: the table's names interned, the bind over empty slots, each job filled after it */
        ds_trace_t d;
        ds_trace_init(&d);
        for (int32_t ty = 0; ty < tp->ngtypes; ty++) ds_trace_add_gtype(&d, tp->gtypes[ty].name);
        d.ref_gtype = tp->ref_gtype;
        for (int32_t j = 0; j < tp->njobs; j++) ds_trace_add_job(&d)->model = -1;
        ds_speeds_intern(&s, &d);
        ds_speeds_bind(&s, &d);
        for (int32_t j = 0; j < tp->njobs; j++) {
            const ds_job_t *o = &tp->jobs[j];
            ds_job_t *n = &d.jobs[j];
            n->model = ds_strtab_intern(&d.models, tp->models.s[o->model]);
            n->dataset = o->dataset >= 0 ? ds_strtab_intern(&d.datasets, tp->datasets.s[o->dataset]) : -1;
            n->batch = o->batch, n->amp = o->amp, n->gpus = o->gpus, n->ref_gtype = o->ref_gtype;
            ds_speeds_bind_job(&s, &d, j);
            for (int32_t ty = -1; ty <= tp->ngtypes; ty++)
                if (ds_speeds_rate(&s, &d, j, ty) != rate[j][ty + 1]) abort();
        }
        ds_trace_free(&d);
        ds_speeds_free(&s);
    }
    return 0;
}
