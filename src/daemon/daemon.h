/* daemon.h: deepshared's state: the Slurm snapshot, the growing job table mirrored into the engine, the
 * learned runtime model and the figures the HTTP endpoints serve. One mutex guards all of it. */
#ifndef DS_DAEMON_H
#define DS_DAEMON_H

#include <pthread.h>

#include "deepshare/coloc.h"
#include "deepshare/engine.h"
#include "deepshare/idmap.h"
#include "deepshare/policy.h"
#include "deepshare/predictor.h"
#include "deepshare/speeds.h"
#include "daemon/dconfig.h"
#include "daemon/hist.h"
#include "daemon/lease.h"
#include "daemon/rtmodel.h"
#include "daemon/telemetry.h"
#include "slurm/slurm_io.h"

/* Daemon-side facts about one engine job slot. */
typedef struct dslot {
    uint32_t id;            /* Slurm job id */
    uint8_t shareable;      /* may run on a shard (one GPU, no GPU GRES at submit) */
    uint8_t requeued;       /* requeued by us: move back to staging once pending */
    uint8_t seen_running;
    double t_run_wall;      /* wall seconds the daemon first saw its current run running, 0 unknown (adopted) */
    double t_start_wall;    /* Slurm's start of its current run (epoch s, whole seconds), 0 unknown */
    double t_alone_wall;    /* wall seconds a measure first found it alone after sharing its GPU, 0 none */
    uint8_t tel_shared;     /* it shared its GPU at the last measure */
    uint8_t undo;           /* started by the engine on a colocation Slurm cannot do */
    uint8_t pass_hold;      /* its start was taken back in this pass: held until the pass ends */
    int8_t npin;            /* GPU indices pinned at its last dispatch (a shard job's for life: Slurm 22.05
                               cannot start it on another index) */
    int8_t pin[SL_MAX_GPUS];
    double t_dispatch;      /* monotonic seconds of the last dispatch, 0 none */
    double t_seen;          /* monotonic seconds the daemon first saw the job (its queued line) */
    double t_decided;       /* monotonic start of the pass that made its last dispatch */
    uint8_t whole;          /* one-GPU job sent onto a whole GPU because its GPU had lost its shards */
    double t_requeue;       /* monotonic seconds of its last requeue by us, 0 none */
    char why[160];          /* last daemon-side note for /explain */
    uint32_t why_logged;    /* hash of the last taken-back reason logged (digits ignored), 0 none */
    uint32_t err_logged;    /* hash of the last dispatch error logged, 0 none */
    int16_t fails;          /* dispatches Slurm refused in a row */
    double t_hold_until;    /* monotonic seconds: held out of the policy's pass until then (Slurm refused it) */
    uint8_t withdrawn;      /* out of the engine (ds_engine_withdraw): D_AWAY while its owner holds it or it
                               waits outside deepshared's partitions, D_GONE once it ended while pending */
} dslot_t;

enum { D_AWAY = 1, D_GONE = 2 };

/* Shards per GPU the daemon relies on: two one-GPU jobs on shard:gN:1 each. */
#define D_SHARDS_NEEDED 2
/* Seconds after a requeue before the job is dispatched again: slurmd refuses a launch whose credential
 * is from the second the job's previous credential was revoked in ("Job credential revoked"), and Slurm
 * then ends the job for good. */
#define D_REQUEUE_SETTLE 3.0
/* Dispatches Slurm refuses in a row before the job is held out of the policy's pass for D_FAIL_HOLD
 * seconds (logged once): an impossible request is otherwise sent again every pass. */
#define D_FAILS_HOLD 3
#define D_FAIL_HOLD 300.0
/* Engine rounds in one pass: a start the daemon takes back holds its job (ds_engine_hold) and the policy
 * runs again, so the GPUs it was offered go to the next job in the same pass. */
#define D_PASS_ROUNDS 4

/* GPUs remembered per job that a dispatch of it came back to staging from without a start (a dispatch
 * Slurm never starts, e.g. onto a GPU that lost its shards, would bounce every dispatch_timeout): the
 * job is not sent to those GPUs again for D_BOUNCE_FORGET seconds, or until a GPU gets its shards back
 * (Slurm repaired: a GPU that held on to shards no job holds may be fine again too). */
#define D_BOUNCE_GPUS 8
#define D_BOUNCE_FORGET 600.0

typedef struct dbounce {
    uint32_t id;
    int32_t n;                    /* bounces in all */
    int32_t gpu[D_BOUNCE_GPUS];   /* daemon GPU indices (node x gpn + index), the last D_BOUNCE_GPUS */
    double t[D_BOUNCE_GPUS];      /* monotonic seconds of each */
} dbounce_t;

/* A preemption victim in its grace (grace.c): signalled, still on its GPUs in Slurm. */
#define D_GRACE_MAX 256
/* Seconds past its grace after which a victim Slurm refuses to requeue is given up (left as Slurm has it). */
#define D_GRACE_GIVE_UP 60.0
typedef struct dgrace {
    uint32_t id;
    int sig;
    double t_signal;              /* monotonic seconds of the signal */
    int16_t node;                 /* the daemon's node index of its GPUs, -1 unknown */
    int8_t n;
    int8_t idx[SL_MAX_GPUS];      /* its GPU indices on that node */
} dgrace_t;

#define D_LAT_BUCKETS 12
#define D_SAMPLES 4096
#define D_S2R_BUCKETS 10

typedef struct dtenant {
    double S;               /* smoothed QAD, G GPUs only (the policy's signal) */
    double Q;
    double Sr, Qr;          /* reported QAD (all GPUs held, any class) and its smoothing */
    int64_t preempted;      /* this tenant's jobs requeued by the daemon */
    int64_t dispatched;
} dtenant_t;

typedef struct daemon {
    dconfig_t cfg;
    const ds_policy_ops_t *ops;
    void *pconfig;
    hist_t hist;
    rtmodel_t rtm;                  /* the boosted runtime model (runtime_model = boosted) */
    ds_runtime_predictor_t rt;
    ds_interference_predictor_t ip;
    ds_predictors_t preds;
    ds_coloc_t coloc;
    int have_coloc;
    /* the speed table (config key speeds): a job's rate on each GPU type, as the simulator's --speeds; bound
     * to the job slots at each rebuild, a slot's workload looked up when it is filled */
    ds_speeds_t speeds;
    ds_speed_predictor_t sp;
    int have_speeds;
    /* cluster */
    sl_node_t *nodes;
    int nnodes, gpn, cpn;
    int64_t mpn;
    /* GPU types: typed when the nodes' GPUs are typed by model in Slurm (Gres=gpu:v100:4; Slurm picks a
     * job's GPUs there, so no pins and no shards; or per GPU with the model, model_pins below); ntypes > 1 when there are several models (the engine's
     * node types, docs/heterogeneous.md), 0 otherwise. The nodes are sorted by type (the engine's node
     * order), node_type[i] their type; per type its nodes, GPUs per node (the most), CPUs and memory (the
     * least). */
    int typed, ntypes;
    /* model_pins: the models are given as per-GPU types (gpu:v100_g0:1,..., shard:v100_gN:C): deepshared
     * pins and shares those GPUs as index types (gpu:v100_gN:1, shard:v100_gN:1); a request typed by model
     * comes as a constraint naming the model (the site's job_submit.lua rewrites --gres=gpu:v100:N into
     * --gres=gpu:N --constraint=v100). Otherwise a typed cluster's GPUs are picked by Slurm. */
    int model_pins;
    char tname[DS_MAX_GPU_TYPES][DS_GTYPE_NAME];
    int tnodes[DS_MAX_GPU_TYPES], tgpn[DS_MAX_GPU_TYPES], tcpn[DS_MAX_GPU_TYPES];
    int64_t tmpn[DS_MAX_GPU_TYPES];
    int8_t *node_type;
    /* GPUs left with fewer than D_SHARDS_NEEDED shards (node-major, nnodes x gpn): shard jobs are not
     * placed there; nodes are read again every cycle and after an outage of slurmctld */
    uint8_t *shardless;
    int nshardless;
    /* shards Slurm counts as allocated on a GPU beyond those its jobs hold (GresUsed; 22.05 keeps some
     * after a slurmctld restart): Slurm starts no job there (node-major, as shardless); nodes are read
     * after the jobs at every change of the job list */
    uint8_t *leftover;
    int nleftover;          /* GPUs with leftover shards */
    uint8_t *completing;    /* GPUs a job still completing in Slurm holds (node-major) */
    uint8_t *foreign;       /* GPUs a running job deepshared did not dispatch holds (node-major) */
    double t_nodes;         /* monotonic seconds of the last node read */
    /* returns to staging from a dispatch, per Slurm job (kept across rebuilds) */
    ds_idmap_t bounce_of;
    dbounce_t *bounce;
    int32_t nbounce;
    double bounce_reset;    /* bounces before this monotonic time are forgotten (a GPU got its shards back) */
    /* engine over a trace of job slots (placeholders until filled) */
    ds_trace_t trace;
    ds_engine_t *e;
    int32_t nslots;
    dslot_t *slot;
    ds_idmap_t byid;
    int need_rebuild;
    char rebuild_why[200];
    /* a sync's running jobs whose GPUs Slurm picked where the engine had another of them (moved together
     * after the sync has seen them all, so jobs Slurm started in the other order swap) */
    int32_t *mv_slot, *mv_gpus;
    int32_t nmv, capmv, mv_ngpus;
    int64_t now;
    /* latest Slurm snapshot */
    sl_job_t *sj;
    int nsj;
    ds_idmap_t warned;      /* Slurm ids already reported as ignored */
    int acct_enforced;      /* Slurm checks accounts (AccountingStorageEnforce=associations), read at start */
    int32_t nrefused;       /* jobs in staging deepshared does not take (screen.c), at the last change */
    int32_t nwaiting;       /* jobs in staging waiting for Slurm (a begin time, a dependency) */
    int32_t nforeign;       /* jobs in deepshared's partitions it did not dispatch */
    /* figures */
    dtenant_t *ten;
    int s_init;
    int slurm_up;
    int64_t cycles, passes, rebuilds, dispatches, requeues, colocations, errors, finished;
    int pass_dispatches;    /* dispatches in the current pass: Slurm starts them in that order (dispatch.c) */
    int64_t withdrawals;    /* pending jobs withdrawn from the engine (cancelled, held, moved): no rebuild */
    lease_t lease;          /* the leader lease (lease.c; lease.url "" = one instance) */
    int64_t fenced_writes;  /* Slurm writes refused by the fence: this instance's lease had lapsed */
    int64_t stale_rejected; /* dispatches of an older epoch (a deposed leader's) found pending: back to staging */
    int32_t nodes_down;     /* nodes Slurm reports drained, down, failing or not responding (no placements) */
    int64_t node_outages;   /* times a node went out of service */
    int64_t undone;         /* starts the policy made that the daemon took back (Slurm could not do them) */
    int64_t coloc_refused;  /* of those, colocations Slurm cannot honour */
    int32_t nheld;          /* pending jobs held out of the policy's view at the last pass (ds_engine_hold) */
    int64_t bounces;        /* dispatches taken back to staging (never started, or onto a held GPU) */
    int64_t shard_moves;    /* shard dispatches moved off (or onto the whole of) a GPU without shards */
    int64_t repins;         /* dispatches of a whole-GPU job onto other GPU indices than its last (pins sent anew) */
    int64_t ended_before_requeue; /* preemptions not sent: the job had ended in Slurm (it would run again) */
    double lat_bounds[D_LAT_BUCKETS];
    int64_t lat_count[D_LAT_BUCKETS + 1];
    double lat_sum;
    int64_t lat_n;
    double lat_samples[D_SAMPLES];
    double s2r_samples[D_SAMPLES];   /* submit -> running, seconds (Slurm's 1 s clock) */
    int64_t s2r_n;
    double t_pass;                   /* monotonic start of the current (or last) pass */
    double d2r_samples[D_SAMPLES];   /* a dispatch's update returned -> the job seen RUNNING, seconds */
    int64_t d2r_n;
    double d2r_sum;
    /* the histogram of submit -> running, folded from s2r_samples by report.c */
    int64_t s2r_folded;
    int64_t s2r_count[D_S2R_BUCKETS + 1];
    double s2r_sum;
    struct status_ring *ring; /* QAD history of the status page (status.c) */
    /* graceful preemption (grace.c): victims signalled and not requeued yet, kept across rebuilds */
    dgrace_t grace[D_GRACE_MAX];
    int32_t ngrace;
    int64_t signalled;      /* victims sent their signal */
    int64_t grace_ended, grace_self, grace_expired; /* requeued: after it ended, it requeued itself, at the grace's end */
    int64_t grace_done;     /* ended with exit 0 in their grace: done, not requeued */
    double grace_sum;       /* seconds from the signal to the requeue, summed over grace_n */
    int64_t grace_n;
    int64_t posts[6];       /* progress reports by HTTP (progress_post.c): taken, 400, 401, 403, 404, other */
    telemetry_t tel;        /* the retention source (measure.c) */
    int tel_down;           /* its last poll failed (logged once) */
    pthread_mutex_t lock;
} daemon_t;

/* The daemon's files, bottom up: a file calls only the files of the sections above its own (tests/
 * check_cycles.sh reads the library, ds_daemon, for circles). The two flows, mirror.c (Slurm -> engine)
 * and dispatch.c (engine -> Slurm), sit over the GPU map, the policy setup and the log; what deepshared
 * shows (report.c, status.c), the reload, the life cycle (daemon.c) and the HTTP server on top. */

/* log.c */
void dlog(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
extern int dlog_verbose;
extern int daemon_cli_verbose; /* -v given on the command line: a reload never logs less */
double daemon_now_mono(void);

/* policy_setup.c */
/* Sets up the policy of c (its parameters applied to a new config); *pconfig may be NULL on return for a
 * policy without parameters. Errors name the config file and key. Start and reload both use it. */
int daemon_policy_config(const dconfig_t *c, const ds_policy_ops_t **ops, void **pconfig, ds_error_t *err);

/* screen.c: which Slurm jobs deepshared takes */
/* Workload facts users give in --comment: "gpus=2 model=resnet50 dataset=imagenet batch=64 amp=1 gmem=8000
 * class=BE ckpt=600" (comma, semicolon or space separated). */
typedef struct screen_hints {
    int gpus, has_gpus, batch, amp, gmem, klass;
    int ckpt;               /* seconds between the job's checkpoints (ckpt=), 0 none declared */
    char model[32], dataset[32];
} screen_hints_t;
/* Parses a comment strictly: known keys once each, whole numbers in range, names of safe characters; -1
 * with the reason in why (a zeroed h) when it does not parse. */
int screen_hints(const char *comment, screen_hints_t *h, char *why, size_t n);
/* Tenant index of a Slurm account (the config's order, the trace's), -1 when it is no tenant. */
int32_t screen_tenant(const daemon_t *d, const char *account);
/* Dispatched by deepshared: its admin comment (which only root and SlurmUser can set) is ours. */
int screen_ours(const sl_job_t *j);
/* The GPUs a job holds or asks for as Slurm counts them: its untyped or typed GRES (our pins included),
 * else the comment's gpus=. */
int screen_gpus(const sl_job_t *j);
/* A job pending in staging: 0 when deepshared takes it, 1 when it waits for Slurm (a begin time, a
 * dependency), -1 when it is refused; why says what. */
/* On nodes whose per-GPU types carry the model (d->model_pins), a job constrained to exactly a model's name
 * (--constraint=v100, what the site's job_submit.lua makes of --gres=gpu:v100:N) asks for that model: its
 * gpu_type is set and its constraint no longer counts as one deepshared would not honour. */
void screen_model_constraints(daemon_t *d);
int screen_job(const daemon_t *d, const sl_job_t *j, char *why, size_t n);
/* Copies s to out with control characters, DEL and '\' escaped (\xNN): user text bound for a log or a
 * terminal. */
void screen_escape(const char *s, char *out, size_t n);

/* gpumap.c: the GPUs as Slurm will use them */
/* Seconds between reads of the nodes' shard counts (also read every cycle and after an outage). */
#define D_NODE_REFRESH 5.0
/* Index of a node by name, -1 when unknown. */
/* Whether Slurm picks the GPUs of a job on the daemon's nodes (GPUs typed by model, Gres=gpu:v100:4). */
static inline int gpumap_slurm_picks(const daemon_t *d) { return d->typed && !d->model_pins; }
/* Whole-GPU jobs asked for as N GPUs of their node, Slurm picking which (no pins): GPUs typed by model, and
 * per-index GPUs that nothing shares (gpu_sharing = 0, pin_whole_gpus = 0). Pins keep a whole-GPU job off a
 * GPU with shard jobs, which Slurm 22.05 would not; without shards they only cost: 22.05 restarts a requeued
 * job on the GPU indices of its first start alone (docs/deepshared.md, "Pinned for life, or anew"). */
static inline int gpumap_picks_whole(const daemon_t *d)
{
    return gpumap_slurm_picks(d) || (!d->typed && !d->model_pins && !d->cfg.gpu_sharing && !d->cfg.pin_whole_gpus);
}
int gpumap_node(const daemon_t *d, const char *name);
/* The daemon's index of a GPU (node-major: node x gpn + index on the node) from the engine's. */
int gpumap_dgpu(const daemon_t *d, int32_t engine_gpu);
/* A dispatch of job id onto daemon GPU g went back to staging without starting. */
void gpumap_note_bounce(daemon_t *d, uint32_t id, int g);
/* Why slot j must not be dispatched onto GPU idx of node (written to buf), NULL when it may. */
const char *gpumap_refuses(const daemon_t *d, int32_t j, int node, int idx, char *buf, size_t n);
/* The first read of the nodes (topology and shard counts), and a read again of their shard counts. */
int gpumap_load_nodes(daemon_t *d, char *err, size_t errn);
int gpumap_refresh_nodes(daemon_t *d, char *err, size_t errn);
/* Shards Slurm keeps allocated to no job, and GPUs of jobs still completing, from the last job read. */
void gpumap_update_leftover(daemon_t *d);
/* The interference predictor the policy sees (ds_interference_predictor_t.predict, ctx = d): 0 for a pair
 * Slurm cannot run on that GPU, else the profile's retention. */
double gpumap_retention(void *ctx, const ds_trace_t *t, int32_t a, int32_t b);

/* grace.c: preemption victims in their grace */
/* The index of job id in the grace list, -1 when it is not in its grace. */
int daemon_grace_find(const daemon_t *d, uint32_t id);
/* Preempts slot s (Slurm job sj) gracefully: sends the signal and lists it; 0 done, 1 when it must be requeued
 * at once instead (grace 0, not running, the list full), -1 when the signal failed (err filled). */
int daemon_grace_begin(daemon_t *d, int32_t s, const sl_job_t *sj, char *err, size_t errn);
/* 1 when a victim's grace is over (a pass is due to requeue it). */
int daemon_grace_due(const daemon_t *d);
/* Requeues the victims that left their GPUs (ended, requeued themselves) or whose grace is over; from the
 * last job read. */
void daemon_grace_tick(daemon_t *d);

/* measure.c: telemetry -> the policy's monitor */
/* Polls the retention source (once per cycle, before the cycle's pass) and adds the samples of jobs running
 * alone to their baselines. */
void daemon_measure(daemon_t *d);
/* The workload key of slot j (tel_workload_key of its comment's model, dataset, batch, amp), 0 none. */
uint32_t daemon_workload(const daemon_t *d, int32_t j);
/* Shared slot j's retention from the samples as of wall time `wall`, counting nothing (explain); NaN when a
 * sample or a baseline is missing or stale, or the job's last sample is from before both jobs ran
 * (*before_pair = 1 then; may be NULL). A job without a baseline of its own (it never ran alone) uses its
 * workload's. */
double daemon_pair_estimate(const daemon_t *d, int32_t j, double wall, int *before_pair);
/* The engine's observe_retention hook (ctx = d): daemon_pair_estimate now, counted (asked, missing). */
double daemon_observe_retention(void *ctx, int32_t j, int64_t now);

/* mirror.c: Slurm -> engine */
/* Reads Slurm (nodes once, jobs when changed) and mirrors it into the engine; returns -1 when Slurm
 * cannot be reached (err filled), 0 when nothing changed, 1 when something did. */
int daemon_sync(daemon_t *d, int force, char *err, size_t errn);
int32_t daemon_slot_of(const daemon_t *d, uint32_t slurm_id);
/* A tenant's quota per GPU type of the nodes (qt[DS_MAX_GPU_TYPES], the engine's type order; qt[0] its
 * quota on a cluster of one type); an error naming the config line when a type is no node's, or the
 * quota has no types on a cluster of several. */
int mirror_typed_quota(const daemon_t *d, const dc_tenant_t *t, int64_t *qt, ds_error_t *err);
/* The job of the last Slurm read with that id, NULL when none. */
const sl_job_t *daemon_find_job(const daemon_t *d, uint32_t id);

/* dispatch.c: engine -> Slurm */
/* Runs the policy (timer: the periodic cycle) and applies its decisions to Slurm. */
void daemon_pass(daemon_t *d, int timer);
/* Shows the policy's order in squeue: a pending job's priority follows its place in it. */
void daemon_show_priorities(daemon_t *d);

/* progress_post.c: job-reported progress over HTTP */
/* Bytes of a POSTed report read at most (a munge credential of a short payload is ~200). */
#define D_POST_MAX 4096
/* Checks a munge credential: its payload (NUL-terminated, at most n - 1 bytes), the uid that made it and
 * its encode time; 0, or -1 with err filled (bad, expired, replayed, munged down). */
typedef int (*progress_verify_fn)(const char *cred, char *payload, size_t n, uint32_t *uid, double *t_encode,
                                  char *err, size_t errn);
/* munge_decode where deepshared is built with libmunge, else NULL; tests put their own. */
extern progress_verify_fn daemon_progress_verify;
/* A report POSTed to /api/progress (body: a munge credential of "job=ID rate=STEPS_PER_S"): taken for a
 * running job of the credential's uid (or made by root). Returns the HTTP status -- 200 taken, 400
 * malformed, 401 credential refused, 403 another user's job, 404 no such running job, 409 telemetry is
 * not progress, 501 no libmunge -- with a one-line message in msg. Call under d->lock. */
int daemon_progress_post(daemon_t *d, const char *body, size_t len, char *msg, size_t n);

/* report.c */
/* Per-cycle figures (smoothed QAD), then the squeue priorities. */
void daemon_cycle_figures(daemon_t *d);
/* Prometheus text exposition; returns a malloc'd string. */
char *daemon_metrics(daemon_t *d);
/* Why a job waits; returns a malloc'd string, or NULL when the job is unknown. */
char *daemon_explain(daemon_t *d, uint32_t slurm_id);
void daemon_observe_latency(daemon_t *d, double seconds);
/* The compliance threshold of the reported QAD (qad_theta). */
double daemon_theta(const daemon_t *d);

/* status.c: the status page at / and its JSON at /api/status */
/* Records this cycle's QAD figures (call after daemon_cycle_figures): compliance counts, and one sample of
 * the bounded history every status_window / STATUS_SAMPLES seconds. */
void status_sample(daemon_t *d);
/* The tenants changed (a reload): keeps each remaining tenant's history, by name; old names old_n. */
void status_tenants_changed(daemon_t *d, char (*old_names)[64], int old_n);
void status_free(daemon_t *d);
/* Renders the page's body and the JSON document from d (under d->lock); malloc'd strings. */
void status_render(daemon_t *d, char **html_main, char **json);
/* The whole page around a rendered body; token_query: "?token=..." for the links, or "". */
char *status_page(const char *html_main, const char *token_query);
/* A compiled-in static file (/static/NAME), NULL when none. */
const char *status_asset(const char *url, size_t *len, const char **type);

/* reload.c */
/* SIGHUP: re-reads d->cfg.path; applies tenants, quotas and the keys that may change while running,
 * logs a warning naming the keys that need a restart, or rejects the file (logged with file, line and
 * key) and keeps the running configuration. Tenants added or removed drop the engine (d->e = NULL) for the
 * next daemon_sync, which the caller forces, to rebuild from Slurm. Call under d->lock. Returns 0 applied,
 * -1 rejected. */
int daemon_reload(daemon_t *d);

/* daemon.c: the life cycle */
int daemon_setup(daemon_t *d, ds_error_t *err);
void daemon_teardown(daemon_t *d);
/* Active/standby (lease.c): the fence of every Slurm write (sl_set_fence, ctx = d): 1 while this instance may
 * write (no lease configured, or it leads and its lease is fresh), else 0, counted. */
int daemon_may_write(void *ctx);
/* This instance became the leader: the engine is rebuilt from Slurm at the next sync, the journal read
 * again, as at a start. Call under d->lock. */
void daemon_take_lead(daemon_t *d);
/* It lost the lease (or gave it up): the engine is dropped; it writes nothing until it leads again. */
void daemon_stand_by(daemon_t *d);

/* http.c (deepshared only, beside main.c: not in the ds_daemon library) */
int http_start(daemon_t *d, ds_error_t *err);
void http_stop(void);
/* Renders /metrics from d and publishes it with Slurm's reachability; call under d->lock after a pass.
 * changed: the state may differ from the last publish's (a sync found news, a pass, a reload), so a status
 * page rendered before it is stale and a request renders it anew. */
void http_publish(daemon_t *d, int changed);
/* The read token the endpoints require ("" = none); called at start and after a reload. */
void http_set_token(const char *token);
/* Publishes only whether slurmctld answered (the pass failed: the old metrics stay). */
void http_publish_health(int slurm_up);

#endif
