#!/usr/bin/env bash
# stop.sh: stops the daemons start.sh started (by their pid files) and waits until they are gone;
# --munge also stops munged. MariaDB and slurmdbd (accounting.sh) are stopped too when they run.
# Job state survives in /var/spool/slurmctld-ds unless start.sh runs with CLEAN=1.
# one user of the machine-wide cluster at a time (a caller holding the lock passes through)
[ -n "${DS_SLURM_LOCKED:-}" ] || exec "$(cd "$(dirname "$0")" && pwd)/../../scripts/with-cluster.sh" bash "$0" "$@"
# ... and only if it really holds it: a caller whose lock wrapper died is refused (scripts/cluster-lock.sh)
. "$(cd "$(dirname "$0")" && pwd)/../../scripts/cluster-lock.sh"
ds_require_cluster_lock stop.sh
pids=()
for f in /run/slurm-ds/slurmd-n*.pid /run/slurm-ds/slurmctld.pid; do
  [ -f "$f" ] || continue
  p=$(cat "$f")
  kill "$p" 2>/dev/null && pids+=("$p")
done
if [ "${1:-}" = "--munge" ] && [ -f /run/munge/munged.pid ]; then
  p=$(cat /run/munge/munged.pid); kill "$p" 2>/dev/null && pids+=("$p")
fi
# accounting after slurmctld (which flushes its last records to slurmdbd on the way out)
acct=0
[ -f /run/slurm-ds/slurmdbd.pid ] || [ -f /run/mysqld-ds/mariadbd.pid ] && acct=1
for _ in $(seq 1 100); do
  left=0
  for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left=1; done
  [ $left -eq 0 ] && break
  sleep 0.1
done
# A daemon still there after 10 s (a slurmd waiting on a step that will not end) is killed, and then so
# are the step daemons left on the machine: this cluster is the machine's only Slurm, and a stuck
# slurmstepd keeps the GPUs and ports that the next start.sh needs. Steps of a clean stop are left alone
# (a start without CLEAN=1 finds them again).
stuck=0
for p in "${pids[@]}"; do
  kill -0 "$p" 2>/dev/null || continue
  echo "stop.sh: pid $p ($(ps -o comm= -p "$p")) did not stop in 10 s: SIGKILL" >&2
  kill -9 "$p" 2>/dev/null; stuck=1
done
[ $stuck = 1 ] && pkill -9 -x slurmstepd 2>/dev/null
[ $acct = 1 ] && "$(cd "$(dirname "$0")" && pwd)/accounting.sh" stop
exit 0
