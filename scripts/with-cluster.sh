#!/usr/bin/env bash
# with-cluster.sh: runs a command while holding the local Slurm cluster's lock, so that two test runs on
# one machine never start, restart or stop the (single, machine-wide) cluster under each other.
# usage: scripts/with-cluster.sh CMD [ARGS...]   (nested calls pass straight through; DS_SLURM_LOCK overrides the lock file)
# flock -o: the command does not inherit the lock's file descriptor, so the daemons it starts (munged,
# slurmctld, mariadbd, ...) never hold the lock after the command has ended.
if [ -n "${DS_SLURM_LOCKED:-}" ]; then exec "$@"; fi
export DS_SLURM_LOCKED=1
exec flock -o "${DS_SLURM_LOCK:-/tmp/ds-slurm.lock}" "$@"
