/* restarts.h: the restart rules of the live Slurm cluster deepshared drives, modelled for the simulator
 * (ds_sim_config_t.restart_pinned, .requeue_settle; docs/native-slurm.md, "What the simulator models"). */
#ifndef DS_SIM_RESTARTS_H
#define DS_SIM_RESTARTS_H

#include "deepshare/engine.h"

#include <stdint.h>

/* Slurm 22.05 starts a shard job only on the GPU index (deepshared's one type per GPU index) of its first
 * dispatch, so a requeued one restarts only there, of any node (pinned = 2: one-GPU jobs only, as deepshared
 * since it sends a whole-GPU job's pins anew at each dispatch; pinned = 1: every job, as deepshared did
 * before, pinning every job once in its life); and a start
 * within settle seconds of a requeue would be refused, so the job waits that long. The driver holds what
 * cannot start (ds_engine_hold), moves a start onto its pinned indices, and takes back what it cannot
 * move: what deepshared does (src/daemon/dispatch.c). */
typedef struct sim_restarts sim_restarts_t;

sim_restarts_t *sim_restarts_create(const ds_engine_t *e, int pinned, int64_t settle);
void sim_restarts_destroy(sim_restarts_t *r);
/* Before a pass: holds the pending jobs that cannot start now (settling, or pinned indices busy on every
 * node where the job fits) and releases the others. */
void sim_restarts_hold(sim_restarts_t *r, ds_engine_t *e, int64_t now);
/* After a pass, before its decisions are applied: notes first starts' indices and requeues; moves a
 * pinned start onto its indices (on its node, else on another where they are free), and takes back
 * (ds_engine_cancel_start, held for the rest of the pass) the starts it cannot carry out. Returns how
 * many were taken back; skip_start(job) is then true for them until the next call. */
int32_t sim_restarts_check(sim_restarts_t *r, ds_engine_t *e, int64_t now);
int sim_restarts_skipped(const sim_restarts_t *r, int32_t job);
/* After the pass's last round: releases the jobs held for the rest of the pass. */
void sim_restarts_end_pass(sim_restarts_t *r, ds_engine_t *e);
/* Next time a settling job may start (DS_TIME_NEVER: none): the simulator wakes then. */
int64_t sim_restarts_next(const sim_restarts_t *r, int64_t now);
/* Starts taken back and passes a job was held, so far. */
int64_t sim_restarts_taken_back(const sim_restarts_t *r);

#endif
