/* rt_batches.h: submission batches for the runtime model (docs/predictors.md, "Batch evidence"): jobs
 * of one owner (the user; the tenant where the trace has no users) and one GPU count submitted in one
 * burst are a sweep or an array, and their run times agree far better than any submit-time estimate;
 * once one of them finishes, its run time is evidence about the rest. Internal to src/predict. */
#ifndef DS_RT_BATCHES_H
#define DS_RT_BATCHES_H

#include "deepshare/idmap.h"
#include "deepshare/trace.h"

#define RT_BATCH_REC 256  /* errors kept of each estimate */
#define RT_BATCH_SCAN 256 /* members a record looks at */
#define RT_BATCH_MAX 1024 /* members of one batch at most (a longer burst starts another): a finish costs O(this) */

typedef struct rt_batch {
    int32_t first, last;   /* members in job order (a trace's: submit order), linked through rt_batches_t.next */
    int32_t size;          /* members */
    int64_t lo, hi;        /* earliest and latest submission of a member */
    int32_t nfin, capfin;
    double *fin;           /* finished members' durations (s), ascending */
} rt_batch_t;

typedef struct rt_batches {
    int32_t min_record;    /* errors of each estimate before the evidence may be used (0: used without a record) */
    int64_t gap;           /* a job joins its owner's open batch when submitted within gap s of its members' span
                            * (in a trace, in submit order: of its last member) */
    int32_t prepared, cap; /* jobs [0, prepared) have a batch */
    int32_t *of, *next;    /* per job: its batch, the next member (-1) */
    uint8_t *done;         /* per job: finished (observed) */
    int64_t *end;          /* per job: when it finished */
    int32_t nb, capb;
    rt_batch_t *b;
    /* open batch per (owner, GPU count): the key's slot in open[] */
    ds_idmap_t keys;
    int32_t *open, nkeys, capkeys;
    int32_t *out, capout;  /* the revised list handed back */
    /* its record: on the latest RT_BATCH_REC jobs that finished with evidence, whether the batch's estimate
     * erred less than the model's (|ln(actual / estimate)|); the evidence is used while it clearly did */
    uint8_t win[RT_BATCH_REC];
    int32_t nrec, hrec, wins;
    int trusted;
} rt_batches_t;

void rt_batches_init(rt_batches_t *bt, int64_t gap, int32_t min_record);
void rt_batches_free(rt_batches_t *bt);
/* Forget every finish (a new replay); batch membership is a property of the trace and stays. */
void rt_batches_reset(rt_batches_t *bt);
/* Records that job finished at now; model_pred: what the model predicted for it (<= 0: nothing). Where
 * siblings had finished before it started, the record keeps whether their median erred less than the model.
 * Returns its unfinished siblings (*n of them, valid until the next call). */
const int32_t *rt_batches_finish(rt_batches_t *bt, const ds_trace_t *t, int32_t job, int64_t now, double model_pred,
                                 int32_t *n);
/* The batch's estimate of job's total run time given it has run elapsed s; < 0 when none of its
 * siblings has finished, or it has run over twice as long as any of them (then they say nothing), or
 * while the batches' estimates have not erred less than the model's on clearly most jobs finished with both. */
double rt_batches_total(rt_batches_t *bt, const ds_trace_t *t, int32_t job, int64_t elapsed);
/* job's batch (an index, stable while bt lives); -1 when batches are off. */
int32_t rt_batches_of(rt_batches_t *bt, const ds_trace_t *t, int32_t job);
/* to takes from's record (its wins and losses, so whether the evidence is in use): the daemon rebuilds its
 * model over a compacted table of jobs, and what the evidence earned is a property of the workload, not of
 * the rows dropped. */
void rt_batches_carry_record(rt_batches_t *to, const rt_batches_t *from);

#endif
