#!/usr/bin/env bash
# with-cluster.sh: runs a command while holding the local Slurm cluster's lock, so that two test runs on
# one machine never start, restart or stop the (single, machine-wide) cluster under each other.
# usage: scripts/with-cluster.sh CMD [ARGS...]   (DS_SLURM_LOCK overrides the lock file)
# A nested call passes straight through, but only when an ancestor really holds the lock: DS_SLURM_LOCKED
# alone is inherited by a command whose wrapper has died (cluster-lock.sh), and such a call takes the lock.
# flock -o: the command does not inherit the lock's file descriptor, so the daemons it starts (munged,
# slurmctld, mariadbd, ...) never hold the lock after the command has ended.
. "$(cd "$(dirname "$0")" && pwd)/cluster-lock.sh"
if [ -n "${DS_SLURM_LOCKED:-}" ] && ds_cluster_lock_held; then exec "$@"; fi
export DS_SLURM_LOCKED=1
exec flock -o "${DS_SLURM_LOCK:-/tmp/ds-slurm.lock}" "$@"
