/* dconfig.h: deepshared's configuration file (key = value lines, "tenant NAME QUOTA" lines, policy.KEY
 * = value passed to the policy); see docs/deepshared.conf.sample. */
#ifndef DS_DCONFIG_H
#define DS_DCONFIG_H

#include <stdio.h>

#include "deepshare/common.h"
#include "telemetry.h"

#define DC_MAX_TENANTS 256
#define DC_MAX_PARAMS 64

#define DC_MAX_QTYPES 8

typedef struct dc_tenant {
    char name[64];   /* Slurm account (lower case, as Slurm stores it) */
    int quota;       /* GPUs (all types together) */
    /* per GPU type ("tenant vision v100:4,k80:8": the nodes' Gres model types), ntq 0 when given untyped */
    int ntq;
    char tq_name[DC_MAX_QTYPES][32];
    int tq[DC_MAX_QTYPES];
    /* who may charge it: "alice,bob,@vision" (users, and @ Unix groups), "" = whoever Slurm lets use the
     * account (accounting enforcing associations, or trust_accounts) */
    char members[256];
    int line;        /* its line in the file, for errors */
} dc_tenant_t;

typedef struct dconfig {
    char path[256];
    char policy[64];
    double cycle;            /* seconds between full cycles (60) */
    double poll;             /* seconds between change checks (0.5) */
    char slurm_conf[256];    /* "" = SLURM_CONF or Slurm's default */
    char staging[64], g_partition[64], be_partition[64];
    char listen_addr[64];
    int listen_port;         /* 0 = no HTTP server */
    char journal[256];
    char interference[256];  /* colocation profile CSV, "" = none */
    char speeds[256];        /* speed table CSV (data/gavel/speeds.csv's format), "" = every type equally fast */
    double missing_rho;      /* retention of unprofiled pairs */
    double default_runtime;  /* seconds, before any job has finished */
    int min_history;         /* finished jobs before a user's or tenant's mean is trusted */
    int runtime_model;       /* 1: boosted (the simulator's online model, rtmodel.c), 0: history (hist.c's means) */
    int batch_gap;           /* boosted: s between a user's submissions of one GPU count in one batch (0: no batches) */
    int gmem_mib;            /* GPU memory per GPU */
    int default_gmem_mib;    /* a job's GPU memory when its comment does not say */
    int k;                   /* residents per GPU */
    int gpu_sharing;         /* dispatch one-GPU jobs on shards (1) or whole GPUs only (0) */
    int repin;               /* a whole-GPU job sent onto other GPU indices than its last dispatch's is pinned
                                anew always (1), when it starts as guaranteed (2), or never (0, the default): it
                                restarts only on its first indices, as a shard job */
    int pin_whole_gpus;      /* with gpu_sharing = 0: pin whole-GPU jobs to GPU indices all the same (1), or ask
                                Slurm for N GPUs of the node and let it pick them (0, the default): nothing
                                shares a GPU then, and a requeued job restarts on any free GPUs */
    double qad_lambda, qad_theta;
    int job_capacity;        /* job slots before the engine is rebuilt */
    double dispatch_timeout; /* a dispatched job not running after this goes back to staging */
    double grace;            /* seconds a preemption victim is given between its signal and its requeue (0:
                                requeued at once, no signal) */
    int preempt_signal;      /* the signal it is given (SIGTERM) */
    int verbose;
    char read_token[128];    /* the effective token ("" = none), from read_token or read_token_file */
    char read_token_file[256];
    int token_line;          /* line of read_token / read_token_file, 0 = not set */
    double status_window;    /* seconds of QAD history on the status page (21600) */
    tel_config_t tel;        /* the retention source (telemetry, prometheus_*, progress_dir, telemetry_*) */
    int trust_accounts;      /* charge a job to the account it names, with no check of its user (0) */
    char lease_etcd[256];    /* etcd client URL of the leader lease ("" = one instance, no lease) */
    char lease_key[128];     /* the leader key (/deepshared/leader) */
    char lease_name[128];    /* this instance's name in it ("" = HOST:PID) */
    int lease_ttl;           /* seconds: the lease period, the longest a standby waits for a dead leader (5) */
    dc_tenant_t tenants[DC_MAX_TENANTS];
    int ntenants;
    char pkeys[DC_MAX_PARAMS][64], pvals[DC_MAX_PARAMS][128];
    long plines[DC_MAX_PARAMS]; /* where each was set, for errors the policy finds */
    int nparams;
} dconfig_t;

void dconfig_default(dconfig_t *c);
/* Reads a config file over the defaults; on error fills err with file, line and key. A file that others
 * than its owner may write, or that is owned by neither root nor the caller, is refused: whoever can
 * change it decides every tenant's quota. */
int dconfig_read(dconfig_t *c, const char *path, ds_error_t *err);
/* Checks what start needs beyond single keys (listen address, tenants, journal, a read token when listening
 * on a non-loopback address): --check runs it too, and so does a reload. */
int dconfig_check(const dconfig_t *c, ds_error_t *err);
/* Whether the tenants' identity holds: each tenant lists its members, or Slurm checks accounts itself
 * (enforced: AccountingStorageEnforce=associations), or the operator said trust_accounts = yes. Checked at
 * start, once Slurm has said whether it enforces, and at every reload. */
int dconfig_check_identity(const dconfig_t *c, int enforced, ds_error_t *err);
/* Whether user (with uid; getgrouplist for @groups) may charge tenant t: 1 yes, 0 no (a members list
 * without it). A tenant without a list: 1 (dconfig_check_identity decided that is safe). */
int dconfig_member(const dc_tenant_t *t, const char *user);
/* Binds the listen address once and lets go (--check): DS_OK, 1 when the port is in use (a running
 * daemon?), or an error (not a local address, no permission) that start would hit. */
int dconfig_check_bind(const dconfig_t *c, ds_error_t *err);
/* 1 when the HTTP endpoints listen on a non-loopback address (anyone on the network can read them). */
int dconfig_listen_public(const dconfig_t *c);

/* Writes the effective configuration: every key with its value, defaults included, then the tenants and
 * the policy parameters set; the read token is not shown, only whether one is set. */
void dconfig_print(FILE *f, const dconfig_t *c);
/* The name of a signal preempt_signal takes ("TERM", "USR1", ...), NULL for one it does not. */
const char *dconfig_signal_name(int sig);
/* Reload (SIGHUP): into *next (a config read from the same file and checked), copies from *cur every key
 * that needs a restart (the running value stays in force) and writes their names, comma separated, to
 * restart (size n; "" when none changed). Keys that apply at once: tenant lines (quotas; tenants added
 * or removed rebuild the engine), cycle, poll, dispatch_timeout, grace, preempt_signal, default_job_gpu_mem_mib, qad_lambda,
 * qad_theta, verbose, trust_accounts, read_token, read_token_file. */
void dconfig_reload_merge(const dconfig_t *cur, dconfig_t *next, char *restart, size_t n);

#endif
