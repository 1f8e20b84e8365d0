# cluster-lock.sh (sourced): checks that this process runs under the local Slurm cluster's lock, i.e. that it
# or one of its ancestors holds the flock on the lock file (scripts/with-cluster.sh takes it). Why not trust
# DS_SLURM_LOCKED alone: with-cluster.sh's flock runs the command without the lock's descriptor (-o), so when
# that flock process dies, the command runs on with DS_SLURM_LOCKED=1 and no lock; an e2e did so once and
# its restart step replaced another run's cluster. The kernel's lock table (/proc/locks) names the process
# that holds each flock; we look for it among our ancestors.
# usage: . scripts/cluster-lock.sh; ds_cluster_lock_held [LOCKFILE] || ...; ds_require_cluster_lock WHO

# ds_cluster_lock_holders FILE: the PIDs holding a flock on FILE, one a line (none when the file is absent)
ds_cluster_lock_holders() {
  local dev ino
  read -r dev ino < <(stat -L -c '%d %i' "$1" 2>/dev/null) || return 0
  # st_dev as the kernel prints it in /proc/locks: MAJOR:MINOR in hex (Linux's dev_t encoding)
  local key
  key=$(printf '%02x:%02x:%s' $(( ((dev >> 8) & 0xfff) | ((dev >> 32) & ~0xfff) )) \
    $(( (dev & 0xff) | ((dev >> 12) & ~0xff) )) "$ino")
  # held locks only: a process waiting for the lock is listed as "N: -> FLOCK ..."
  awk -v k="$key" '$2 == "FLOCK" && $6 == k { print $5 }' /proc/locks
}

# ds_cluster_lock_held [FILE]: 0 when this shell or one of its ancestors holds the flock on FILE
ds_cluster_lock_held() {
  local f=${1:-${DS_SLURM_LOCK:-/tmp/ds-slurm.lock}} holders p
  holders=" $(ds_cluster_lock_holders "$f" | tr '\n' ' ') "
  [ "$holders" != "  " ] || return 1
  p=$BASHPID
  while [ -n "$p" ] && [ "$p" -gt 1 ]; do
    case "$holders" in *" $p "*) return 0 ;; esac
    p=$(awk '/^PPid:/ { print $2 }' "/proc/$p/status" 2>/dev/null)
  done
  return 1
}

# ds_require_cluster_lock WHO: exits 1 with a clear message unless the caller runs under the lock
ds_require_cluster_lock() {
  local f=${DS_SLURM_LOCK:-/tmp/ds-slurm.lock}
  ds_cluster_lock_held "$f" && return 0
  local h
  h=$(ds_cluster_lock_holders "$f" | tr '\n' ' ')
  echo "$1: refusing to touch the Slurm cluster: DS_SLURM_LOCKED is set but no process above this one holds" \
    "the cluster lock $f (${h:+held by pid $h}${h:-not held}); its scripts/with-cluster.sh wrapper has died?" \
    "Run the command under scripts/with-cluster.sh." >&2
  exit 1
}
