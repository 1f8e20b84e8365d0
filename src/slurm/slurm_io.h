/* slurm_io.h: the daemon's only window on Slurm: reads jobs and nodes through libslurm into plain
 * structs, and applies decisions (dispatch with pinned GPUs, requeue held, move back to staging). */
#ifndef DS_SLURM_IO_H
#define DS_SLURM_IO_H

#include <stddef.h>
#include <stdint.h>

#define SL_MAX_GPUS 64

typedef enum {
    SL_PENDING = 0,
    SL_RUNNING,     /* running, or suspended */
    SL_COMPLETED,   /* ended with exit code 0 */
    SL_ENDED        /* cancelled, failed, timed out, node failure, ... */
} sl_state_t;

typedef struct sl_job {
    uint32_t id;
    uint32_t uid;
    char account[64];
    char user[64];
    char partition[64];
    int state;             /* sl_state_t */
    int completing;        /* still releasing resources */
    int held;              /* priority 0 (held by us or an admin) */
    uint32_t priority;
    int64_t submit, start, end;
    int restarts;
    int cpus;
    int num_tasks;         /* 0 seen after a requeue and a slurmctld restart: the job never runs then */
    int64_t mem_mib;       /* per node */
    char tres_per_node[256];
    char comment[256];
    char admin_comment[256];
    char nodes[128];       /* allocated nodes (running) */
    char req_nodes[128];
    /* GPUs: typed entries of tres_per_node (gres:gpu:gN:1 / gres:shard:gN:1) give the pinned indices;
     * running jobs without types give them from gres_detail (IDX:...) */
    int ngpu_idx;
    int gpu_idx[SL_MAX_GPUS];
    int on_shard;          /* the pinned GRES is shard (a shareable dispatch) */
    int untyped_gpus;      /* N of an untyped gres:gpu:N request, 0 when none */
    /* the GPU model of a request typed by model ("gres:gpu:v100:2": "v100"; a type that is not an index
     * type gN), "" when none */
    char gpu_type[32];
    /* What the job asked of Slurm, as the screening of a new job (screen.c) reads it */
    int gres_gpus;         /* GPUs of every gpu entry of tres_per_node, typed or not (what Slurm allocates
                            * per node), 0 when none */
    int gres_shards;       /* shards of its shard entries */
    int other_gpus;        /* a GPU request by --gpus, --gpus-per-task or --gpus-per-socket (tres_per_job,
                            * tres_per_task, tres_per_socket) */
    int array;             /* a job array (or one of its tasks) */
    int min_nodes;         /* nodes asked (1 when not given) */
    int exclusive;         /* --exclusive: the whole node */
    int has_features;      /* --constraint given */
    char features[32];     /* the constraint when shorter than this ("" otherwise): on nodes whose per-GPU
                            * types carry the model, a model name here is a request typed by model */
    int comment_long;      /* the comment did not fit in comment[] */
    uint32_t reason;       /* Slurm's wait reason (enum job_state_reason) */
    int wait_begin;        /* waits for its begin time (--begin; Slurm's reason BeginTime) */
    int wait_dep;          /* waits for a dependency (reason Dependency) */
    int dep_never;         /* a dependency that can never be satisfied (DependencyNeverSatisfied) */
    int64_t eligible;      /* Slurm's eligible time (its begin time while it waits for it), 0 unknown */
    int64_t limit_s;       /* its time limit in seconds (Slurm ends it there), 0: none */
} sl_job_t;

typedef struct sl_node {
    char name[64];
    int cpus;
    int64_t mem_mib;
    int gpus;
    /* the GPU model of its gpu entries: a type that is not an index type gN ("gpu:v100:4": "v100"; Slurm
     * picks the GPUs of a job there, the daemon cannot pin them), or the model of per-GPU types
     * ("gpu:v100_g0:1,...": "v100"); "" for GPUs typed by index (gpu:g0:1,...) or untyped */
    char gpu_type[32];
    int types;             /* distinct model types among its gpu entries (more than 1 is refused) */
    /* how the model is given: per-GPU types with the model ("gpu:v100_g0:1,...": model_pins, the daemon
     * pins and shares them as index types), or a model type ("gpu:v100:4": model_picks, Slurm picks) */
    int model_pins, model_picks;
    int pos;               /* its place in Slurm's list (the daemon sorts nodes by type, stably) */
    int up;                /* not down, drained, failing or not responding */
    char down_why[24];     /* when not up: "drained", "draining", "down", "failing", "not responding", ... */
    /* shard GRES per GPU index from typed entries "shard:gN:C" (C shards on GPU N), -1 when the node
     * reports none for that index (untyped "shard:8", or no shards). Slurm 22.05 can come back from a
     * slurmctld restart with C = 0 on a GPU a shard job held. */
    int shards[SL_MAX_GPUS];
    /* shards Slurm counts as allocated on GPU N, from GresUsed "shard:gN:C(IDX:N)" (0 when none); 22.05
     * can keep some allocated to no job after a slurmctld restart */
    int shards_used[SL_MAX_GPUS];
} sl_node_t;

/* Opens libslurm with the given slurm.conf (NULL: SLURM_CONF or the default path). */
void sl_init(const char *conf);
void sl_fini(void);

/* Loads all jobs. Returns 0, or -1 with err filled (slurmctld unreachable, ...). *changed is 0 when
 * nothing changed since the last successful load (the previous array is then kept). */
int sl_load_jobs(sl_job_t **jobs, int *njobs, int *changed, char *err, size_t errn);
int sl_load_nodes(sl_node_t **nodes, int *nnodes, char *err, size_t errn);
/* Forgets the last load time so the next sl_load_jobs returns everything. */
void sl_jobs_reset(void);
/* 1 when Slurm's accounting checks each job's account against the user's associations
 * (AccountingStorageType slurmdbd with AccountingStorageEnforce including associations), 0 when it does
 * not (accounts are free-form strings then), -1 with err filled when slurmctld cannot say. */
int sl_accounts_enforced(char *err, size_t errn);

/* The fence of every write below (dispatch, requeue, restage, admin comment, priority): when may_write(ctx)
 * answers 0 the write is not sent and fails with "not the leader" in err (deepshared with a leader lease:
 * an instance that lost it writes nothing). NULL: no fence. */
void sl_set_fence(int (*may_write)(void *ctx), void *ctx);

/* Moves a pending job to partition on node with the GPUs idx pinned (gpu:gN:1 each, or shard:gN:1
 * when shard is set; with pin_model "v100", gpu:v100_gN:1 / shard:v100_gN:1; n = 0 leaves the job's GRES as
 * it is), sets its admin comment and priority. With
 * gpu_type (a node typed by model) it asks for n GPUs of that type instead (gpu:TYPE:n; idx unused), with
 * gpu_type "" for n GPUs of any type (gpu:n): Slurm picks them on the node.
 * clear_first drops a GRES request made at submit time first. Slurm 22.05 adds a new GRES request to
 * the job's earlier one (types and counts), so a job must be pinned once in its life. */
int sl_dispatch(uint32_t id, const char *partition, const char *node, const int *idx, int n, int shard,
                const char *pin_model, const char *gpu_type, int clear_first, int fix_tasks, const char *admin_comment, uint32_t priority,
                char *err, size_t errn);
/* 1 when slurmctld has the job running and not completing, 0 when it has not (ended, ending, pending,
 * gone), -1 with err filled when it cannot say. One RPC: a fresher view than the last sl_load_jobs. */
int sl_job_running(uint32_t id, char *err, size_t errn);
/* Sends sig to a running job: its batch shell and every step (KILL_FULL_JOB), as Slurm's own preemption
 * with GraceTime does, so a script's trap sees it. */
int sl_signal(uint32_t id, int sig, char *err, size_t errn);
/* Requeues a running job (or a batch job that has ended) and holds it, so Slurm does not restart it on
 * its own. */
int sl_requeue_hold(uint32_t id, char *err, size_t errn);
/* Moves a pending job back to the staging partition, drops its node and GPU pins and releases it. */
int sl_restage(uint32_t id, const char *staging, char *err, size_t errn);
int sl_set_admin_comment(uint32_t id, const char *text, char *err, size_t errn);
int sl_set_priority(uint32_t id, uint32_t priority, char *err, size_t errn);

#endif
