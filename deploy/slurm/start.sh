#!/usr/bin/env bash
# start.sh: starts the local test cluster (munged, slurmctld, 4 slurmd) with this directory's configs and
# waits until every node answers (idle, or mixed/allocated when jobs survive a restart). Idempotent:
# daemons already running are left alone. CLEAN=1 wipes Slurm's saved job state first.
# Clients need SLURM_CONF=<this dir>/slurm.conf (start.sh prints it); /etc/slurm/slurm.conf is linked to
# it when that file does not exist yet, so plain `sinfo` works too.
# --variant NAME (or DS_SLURM_VARIANT=NAME) starts the cluster with variants/NAME/slurm.conf instead
# (slurm-quota, slurm-borrow, deepshared: with accounting, which accounting.sh starts first). Daemons
# running with another configuration are not restarted: stop.sh first when switching.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# one user of the machine-wide cluster at a time (a caller holding the lock passes through)
[ -n "${DS_SLURM_LOCKED:-}" ] || exec "$here/../../scripts/with-cluster.sh" bash "$0" "$@"
# ... and only if it really holds it: a caller whose lock wrapper died is refused (scripts/cluster-lock.sh)
. "$here/../../scripts/cluster-lock.sh"
ds_require_cluster_lock start.sh
variant=${DS_SLURM_VARIANT:-}
case "${1:-}" in
  --variant) variant=${2:?start.sh: --variant needs a name}; shift 2 ;;
  --variant=*) variant=${1#--variant=}; shift ;;
  "") ;;
  *) echo "usage: start.sh [--variant NAME]" >&2; exit 2 ;;
esac
export SLURM_CONF="$here/slurm.conf"
if [ -n "$variant" ]; then
  [ -f "$here/variants/$variant/slurm.conf" ] ||
    { echo "start.sh: no variant '$variant' (have: $(cd "$here/variants" && ls -d */ | tr -d / | tr '\n' ' '))" >&2; exit 2; }
  export SLURM_CONF="$here/variants/$variant/slurm.conf"
fi
[ "$(id -u)" -eq 0 ] || { echo "start.sh: must run as root (slurmd runs jobs as their users; munged as munge)" >&2; exit 1; }
command -v slurmctld >/dev/null || { echo "start.sh: Slurm is not installed; run $here/install.sh" >&2; exit 1; }
mkdir -p /run/munge /run/slurm-ds /var/spool/slurmctld-ds /var/spool/slurmd-ds /var/log/slurm-ds /tmp/ds-fakegpu
[ -e /etc/slurm/slurm.conf ] || ln -s "$here/slurm.conf" /etc/slurm/slurm.conf
[ -e /etc/slurm/gres.conf ] || ln -s "$here/gres.conf" /etc/slurm/gres.conf
# dummy character devices (same numbers as /dev/null) so slurmd accepts the GPUs' File= lines
if grep -qi '^AccountingStorageType=accounting_storage/slurmdbd' "$SLURM_CONF"; then
  "$here/accounting.sh" start >&2   # MariaDB + slurmdbd, cluster, QOS and (default) tenants
fi
for i in 0 1 2 3; do
  # without the right to make devices, a plain file works too (slurmd then logs an error per GPU)
  [ -c /tmp/ds-fakegpu/nvidia$i ] || { rm -f /tmp/ds-fakegpu/nvidia$i
    mknod /tmp/ds-fakegpu/nvidia$i c 1 3 2>/dev/null || touch /tmp/ds-fakegpu/nvidia$i; }
done
alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }
chown munge:munge /run/munge
if ! munge -n >/dev/null 2>&1; then
  runuser -u munge -- /usr/sbin/munged --pid-file=/run/munge/munged.pid
  for _ in $(seq 1 50); do munge -n >/dev/null 2>&1 && break; sleep 0.1; done
  munge -n >/dev/null 2>&1 || { echo "start.sh: munged did not start" >&2; exit 1; }
fi
if ! alive /run/slurm-ds/slurmctld.pid; then
  /usr/sbin/slurmctld -f "$SLURM_CONF" ${CLEAN:+-c} -i   # -c: clear state; -i: ignore unreadable state
fi
for n in n1 n2 n3 n4; do
  mkdir -p /var/spool/slurmd-ds/$n
  alive /run/slurm-ds/slurmd-$n.pid || /usr/sbin/slurmd -f "$SLURM_CONF" -N $n
done
# wait until every node is up (a node that was down is resumed: ReturnToService=2 does it on register)
ok=0
for _ in $(seq 1 600); do
  up=$(sinfo -h -N -o '%N %t' 2>/dev/null | sort -u | grep -cE ' (idle|mix|alloc)$' || true)
  if [ "$up" -ge 4 ]; then ok=1; break; fi
  sleep 0.1
done
if [ $ok -ne 1 ]; then
  echo "start.sh: nodes not up after 60 s:" >&2; sinfo -N >&2 || true; exit 1
fi
# with slurmctld registered, the gres/gpu TRES exists: the tenants' GPU caps can be set
if grep -qi '^AccountingStorageType=accounting_storage/slurmdbd' "$SLURM_CONF"; then
  "$here/accounting.sh" tenants >&2
fi
echo "export SLURM_CONF=$SLURM_CONF"
sinfo -N -o '%N %P %t %c %m %G' >&2
