/* hist.h: runtime prediction that learns from the jobs the daemon saw finish (mean of log run times per
 * user, then per tenant, then cluster-wide), and the fsync'd append-only journal it is rebuilt from. */
#ifndef DS_HIST_H
#define DS_HIST_H

#include "deepshare/idmap.h"
#include "deepshare/limits.h"
#include "deepshare/predictor.h"
#include "deepshare/residuals.h"
#include "deepshare/trace.h"

typedef struct hist_stat {
    double sum_log;
    int64_t n;
} hist_stat_t;

typedef struct hist {
    ds_strtab_t users, tenants;       /* "tenant/user", "tenant" */
    hist_stat_t *ustat, *tstat;
    int32_t ucap, tcap;
    hist_stat_t all;
    int min_history;
    double default_runtime;
    ds_idmap_t recorded;              /* (Slurm job id, end time) already in the journal */
    int fd;                           /* journal, -1 when none */
    char path[256];
    int64_t records;
    int64_t skipped;                  /* malformed journal lines (each reported) */
    /* ln(run time / what hist_predict said just before learning it): the predictor's errors */
    ds_resid_t resid;
    int32_t resid_unsorted;
    /* what the jobs' time limits say beside the history (deepshare/limits.h) */
    ds_limits_t lim;
    /* told of every job learned, the journal's records at open and each one recorded after (rtmodel.c's
     * boosted model learns beside the means); set between hist_init and hist_open */
    void (*on_learn)(void *ctx, uint32_t slurm_id, const char *tenant, const char *user, int gpus, double seconds,
                     int64_t end, int64_t submit, double limit);
    void *on_learn_ctx;
} hist_t;

#define HIST_MAX_SECONDS (366.0 * 86400) /* longest run time learned from */

void hist_init(hist_t *h, int min_history, double default_runtime);
void hist_free(hist_t *h);
/* Opens (creating) the journal and learns from every record in it. A malformed line is skipped and
 * reported through warn (file:line: reason; NULL: stderr). Returns 0 or -1 with err filled. */
int hist_open(hist_t *h, const char *path, void (*warn)(const char *msg), ds_error_t *err);
/* Learns one finished job (no I/O), and its error against the prediction it would have had. */
void hist_learn(hist_t *h, const char *tenant, const char *user, double seconds);
/* The same for a job that ran under a time limit of limit seconds (<= 0: none): the limit is learned too. */
void hist_learn_limit(hist_t *h, const char *tenant, const char *user, double seconds, double limit);
/* Predicted run time in seconds of a job of this tenant and user (from the history alone). */
double hist_predict(const hist_t *h, const char *tenant, const char *user);
/* ...of such a job that asked for a time limit of limit seconds (<= 0: none): never above the limit, and
 * from the limit where the user's limits have foretold their run times better (docs/predictors.md). */
double hist_predict_limit(const hist_t *h, const char *tenant, const char *user, double limit);
/* 1 when this job (id and end time: ids are reused) is in the journal. */
int hist_seen(const hist_t *h, uint32_t slurm_id, int64_t end);
/* Appends a finished job to the journal (fsync'd) and learns it; does nothing for a job already
 * recorded. seconds is the run time the predictor learns (on the speed table's reference type when one is
 * set); start and submit are Slurm's wall clock times of the run (Unix seconds; submit 0 when Slurm gave
 * none), journaled so that a usage report counts GPU-hours and queueing from the wall clock; limit is the
 * time limit it ran under (seconds, 0: none); start < 0 writes the older 6-field record. Returns 0, or -1
 * when the write failed (err filled). */
int hist_record(hist_t *h, uint32_t slurm_id, const char *tenant, const char *user, int gpus, double seconds,
                int64_t end, int64_t start, int64_t submit, int64_t limit, char *err, size_t errn);

/* The engine-facing predictor over a trace whose tenant and user names index h. */
void hist_predictor(ds_runtime_predictor_t *p, hist_t *h);

#endif
