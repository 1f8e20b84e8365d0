/* telemetry.h: deepshared's retention source (issue #30): per-job samples from Prometheus (what NVIDIA's
 * dcgm-exporter publishes per GPU, mapped to Slurm job ids by its HPC job mapping) or from the jobs
 * themselves (the step rate a training script reports), turned into the retention the policy's monitor
 * samples (ds_driver_hooks_t.observe_retention). A missing or stale sample is NaN: no sample, which
 * never revokes nor admits a pair by itself (docs/deepshared.md, "Telemetry"). */
#ifndef DS_DAEMON_TELEMETRY_H
#define DS_DAEMON_TELEMETRY_H

#include <stddef.h>
#include <stdint.h>

#include "deepshare/idmap.h"

typedef enum { TEL_OFF = 0, TEL_PROMETHEUS = 1, TEL_PROGRESS = 2 } tel_kind_t;

/* Series one poll may bring (a bigger answer is refused, with a message): bounds memory on any input. */
#define TEL_MAX_SERIES 100000
/* Bytes of one Prometheus answer read at most. */
#define TEL_MAX_BODY (16u << 20)
/* Two Prometheus samples within this many seconds came in one answer (an instant query stamps every series
 * with its evaluation time). */
#define TEL_SAME_ANSWER 1e-3

typedef struct tel_config {
    int kind;               /* tel_kind_t */
    char url[256];          /* Prometheus: base URL of its HTTP API (http://localhost:9090) */
    char query[1024];       /* Prometheus: PromQL giving one GPU activity in [0, 1] per Slurm job */
    char job_label[64];     /* Prometheus: the label holding the Slurm job id (dcgm-exporter: hpc_job) */
    char dir[256];          /* progress: the folder jobs write their step rate into, one file per job id */
    double stale;           /* a sample older than this (s) is no sample */
    double timeout;         /* Prometheus: seconds one query may take */
    double lag;             /* telemetry_lag: seconds a sample may trail what happened on the GPU (the
                               exporter's collect interval + the scrape interval); -1 auto (tel_span) */
} tel_config_t;

/* One Slurm job's samples. */
typedef struct tel_job {
    uint32_t id;
    double v, t;            /* last sample (activity or step rate) and its wall time, s */
    double base;            /* its exclusive value: mean of the samples taken while it ran alone */
    int32_t nbase;
} tel_job_t;

/* Workloads (model, dataset, batch, amp) remembered with an exclusive baseline: a job that never ran alone
 * (a best-effort job started on a busy GPU) borrows the mean of the jobs of its workload that did. */
#define TEL_WORKLOADS 1024
typedef struct tel_workload {
    uint32_t key;           /* tel_workload_key, 0 = free */
    double base;            /* mean of its jobs' solo samples */
    int32_t n;
} tel_workload_t;

typedef struct telemetry {
    tel_config_t cfg;
    tel_workload_t wl[TEL_WORKLOADS];
    tel_job_t *job;
    int32_t n, cap;
    ds_idmap_t by_id;
    int64_t polls, poll_errors, samples, rejected, asked, missing;
    double t_ok;            /* wall time of the last poll that answered, 0 none */
    char last_error[256];
} telemetry_t;

/* Defaults: off; Prometheus on localhost:9090 with dcgm-exporter's SM activity averaged over the last
 * minute per hpc_job; progress files in /run/deepshare/progress; stale after 180 s; 5 s timeout. */
void tel_config_default(tel_config_t *c);
/* Sets one configuration key (telemetry, prometheus_url, prometheus_query, telemetry_job_label,
 * progress_dir, telemetry_stale, telemetry_timeout); 0 taken, 1 not a telemetry key, -1 bad value (err). */
int tel_config_set(tel_config_t *c, const char *key, const char *val, char *err, size_t errn);
const char *tel_kind_name(int kind);
/* The longest time span a PromQL query reads back from its evaluation time, in seconds: its longest range
 * or subquery window ([1m], [5m:30s]) plus its longest offset; 0 for an instant selector. Text inside
 * string literals (label matchers such as gpu=~"[0-3]") is skipped. -1 when a duration is malformed. */
double tel_query_window(const char *query);
/* How far back a sample taken at time ts may describe the GPU: it shows only what happened after
 * ts - tel_span. Prometheus: the query's window (tel_query_window) + telemetry_lag (auto: 60 s, e.g.
 * dcgm-exporter's default 30 s collect interval + a 30 s scrape interval); progress: telemetry_lag (auto:
 * 0, a report is the rate at its write). */
double tel_span(const tel_config_t *c);

void tel_init(telemetry_t *t, const tel_config_t *c);
void tel_free(telemetry_t *t);
/* Records a sample of job id at wall time ts (a finite value >= 0; others are counted and dropped). */
void tel_ingest(telemetry_t *t, uint32_t id, double v, double ts);
/* Parses a Prometheus /api/v1/query answer (an instant vector): each series' job label and value become
 * a sample at the answer's timestamp. Returns the samples taken, or -1 (err names what is wrong). */
int tel_parse_prometheus(telemetry_t *t, const char *body, size_t len, char *err, size_t errn);
/* Reads the progress folder: a file named by a Slurm job id whose first line is its step rate (steps/s,
 * a number >= 0); its modification time is the sample's time. Returns the samples taken, or -1. */
int tel_read_progress(telemetry_t *t, char *err, size_t errn);
/* One poll of the configured backend at wall time now (Prometheus: an HTTP query); forgets jobs with no
 * sample for an hour. Returns 0, or -1 with last_error set (the samples already held age as usual). */
int tel_poll(telemetry_t *t, double now);
/* Job id ran alone on its GPUs this cycle: a fresh sample of it adds to its exclusive baseline, and to its
 * workload's (key from tel_workload_key; 0: none known). */
void tel_note_alone(telemetry_t *t, uint32_t id, uint32_t key, double now);
/* A workload's key (never 0) from its model, dataset, batch and amp; 0 when the model is unknown. */
uint32_t tel_workload_key(const char *model, const char *dataset, int batch, int amp);
/* The exclusive baseline of a workload, NaN when none of its jobs ran alone (or key 0). */
double tel_workload_base(const telemetry_t *t, uint32_t key);
/* The retention of job id sharing its GPU with partner, as of wall time now; NaN when a sample or a
 * baseline is missing or stale. Progress: its rate over its exclusive rate. Prometheus: the GPU's
 * activity over the sum of both jobs' exclusive activities (capped at 1: two jobs that fit side by side
 * keep their speed), the same for both (per-GPU counters cannot tell the two apart), and only from an
 * answer that holds both jobs' series (before the exporter maps the partner to the GPU, the activity is
 * still the job's alone). fallback_*: an
 * exclusive activity known otherwise (the profile's gpu_util / 100), NaN when none: used while a job
 * has no baseline of its own (one that never ran alone). */
double tel_retention(telemetry_t *t, uint32_t id, uint32_t partner, double now, double fallback_self,
                     double fallback_partner);
/* The same estimate, counting nothing (explain). */
double tel_estimate(const telemetry_t *t, uint32_t id, uint32_t partner, double now, double fallback_self,
                    double fallback_partner);
/* Age of job id's last sample in seconds at now, -1 when none. */
double tel_age(const telemetry_t *t, uint32_t id, double now);
/* Wall clock, seconds. */
double tel_now(void);

#endif
