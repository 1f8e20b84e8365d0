/* fake_slurm.h: an in-memory Slurm behind src/slurm/slurm_io.h, linked in place of slurm_io.c, so that
 * tests drive deepshared's core (the ds_daemon library) through restarts, pins, requeues and slurmctld errors. */
#ifndef DS_FAKE_SLURM_H
#define DS_FAKE_SLURM_H

#include "slurm/slurm_io.h"

/* The slurm_io.h calls a test can make fail, and count. */
typedef enum {
    FS_LOAD_JOBS = 0, FS_LOAD_NODES, FS_DISPATCH, FS_REQUEUE, FS_RESTAGE, FS_ADMIN_COMMENT, FS_PRIORITY, FS_LOAD_JOB,
    FS_SIGNAL, FS_NOPS
} fs_op_t;

/* Forgets every node, job, failure and count. */
void fs_reset(void);
/* A node with gpus GPUs of types g0.. and two shards on each (shard:gN:2), as deploy/slurm configures. */
void fs_add_node(const char *name, int cpus, int gpus);
/* Takes a node out of service as Slurm reports it (why: "drained", "down", "not responding", ...), or puts
 * it back (why NULL). */
void fs_set_node_down(const char *node, const char *why);
/* A node whose GPUs are typed by model (Gres=gpu:TYPE:N, as most sites configure): no shards, no index
 * types; Slurm picks the GPUs of a job dispatched there (gpu:TYPE:N), the lowest free indices first. */
void fs_add_typed_node(const char *name, int cpus, int gpus, const char *type);
/* A node whose GPUs are typed one per GPU with the model in the name (gpu:MODEL_g0:1,..., shard:MODEL_gN:2,
 * Features=MODEL: deploy/slurm/variants/typed-shared); the daemon pins gpu:MODEL_gN:1 / shard:MODEL_gN:1. */
void fs_add_model_pinned_node(const char *name, int cpus, int gpus, const char *model);
/* What the site's job_submit.lua makes of --gres=gpu:MODEL:N: --gres=gpu:N --constraint=MODEL (n 0: only
 * the constraint, the GPUs asked in the comment). */
void fs_request_model(sl_job_t *j, const char *model, int n);
/* A job submitted with --gres=gpu:TYPE:N (TYPE NULL: untyped --gres=gpu:N). */
void fs_request_gpus(sl_job_t *j, const char *type, int n);
/* Sets the shard count Slurm reports for GPU idx of a node (0: lost in a slurmctld restart). */
void fs_set_shards(const char *node, int idx, int count);
/* Slurm's GPU bookkeeping, off by default: with it on, a dispatched job starts only where its GPUs are
 * free as Slurm counts them (a whole GPU: no other job and no shard in use; a shard: one of the GPU's
 * shards left), so a dispatch onto a GPU Slurm thinks busy waits as it does on the real cluster. */
void fs_model_gpus(int on);
/* Shards Slurm counts as allocated to no job on GPU idx of a node (22.05 after a slurmctld restart): with
 * the GPU model on, no job starts on such a GPU, as the soak saw. */
void fs_set_phantom(const char *node, int idx, int count);
/* Adds a job (pending in partition, one CPU, submitted at its id); returns it for the test to shape. */
sl_job_t *fs_add_job(uint32_t id, const char *account, const char *partition, const char *comment);
/* The job with that id (NULL when none); a test that changes it through the pointer calls fs_touch. */
sl_job_t *fs_job(uint32_t id);
void fs_touch(void);
/* Pins GPU indices as Slurm shows a job dispatched with typed GRES (gres:gpu:gN:1 each). */
void fs_pin(sl_job_t *j, const char *node, const int *idx, int n);
/* Slurm's own scheduler: starts every job dispatched to a node (pending, not held, in a partition
 * other than staging) unless it asks for a shard of a GPU that has none; returns how many started. */
int fs_run_dispatched(const char *staging);
/* The same for one job, as Slurm starts jobs in its own order (e.g. a higher partition priority tier first). */
int fs_run_job(uint32_t id, const char *staging);
/* The job's script ends now, unseen by the daemon until its next sl_load_jobs (slurmctld has heard of
 * it: sl_job_running says so); with race set slurmctld has not heard of it yet either, so a requeue
 * still lands and Slurm runs the job again, as on the real cluster. */
void fs_end_script(uint32_t id, int race);
/* Requeues that landed on a job whose script had ended (fs_end_script with race). */
int fs_reruns(void);
/* The last signal sl_signal sent the job (0 none). */
int fs_signal_of(uint32_t id);
/* What sl_accounts_enforced answers (0 after fs_reset). */
void fs_set_accounts_enforced(int on);
/* The next n calls of op fail as an unreachable slurmctld would. */
void fs_fail(fs_op_t op, int n);
/* How many calls of op were made (failed ones included) and the id of the last one. */
int fs_calls(fs_op_t op);
uint32_t fs_last_id(fs_op_t op);

#endif
