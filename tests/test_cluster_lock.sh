#!/usr/bin/env bash
# test_cluster_lock.sh: the Slurm cluster's lock check (scripts/cluster-lock.sh) on a private lock file, with no
# cluster: a command under scripts/with-cluster.sh holds the lock; DS_SLURM_LOCKED=1 alone does not; a command
# whose wrapper was SIGKILLed is refused by start.sh and re-locked by a nested with-cluster.sh; a lock held by
# an unrelated process does not count. start.sh is called with a bad flag, so that a broken check would end
# in its usage error (exit 2) instead of starting anything.
# usage: tests/test_cluster_lock.sh SOURCE_DIR
src=${1:?usage: test_cluster_lock.sh SOURCE_DIR}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
export DS_SLURM_LOCK=$W/lock
unset DS_SLURM_LOCKED
fails=0
ok() { echo "PASS $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
held='. "$0"; ds_cluster_lock_held'
lib=$src/scripts/cluster-lock.sh

bash -c "$held" "$lib" && bad "held with no lock taken" || ok "no lock: not held"
"$src/scripts/with-cluster.sh" bash -c "$held" "$lib" && ok "under with-cluster.sh: held" || bad "under with-cluster.sh: not held"
"$src/scripts/with-cluster.sh" "$src/scripts/with-cluster.sh" bash -c "$held" "$lib" \
  && ok "nested with-cluster.sh passes through, still held" || bad "nested with-cluster.sh: not held"
DS_SLURM_LOCKED=1 bash -c "$held" "$lib" && bad "DS_SLURM_LOCKED=1 alone counted as holding the lock" \
  || ok "DS_SLURM_LOCKED=1 without the lock: not held"

out=$(DS_SLURM_LOCKED=1 bash "$src/deploy/slurm/start.sh" --no-such-flag 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "refusing to touch the Slurm cluster" <<<"$out" \
  && ok "start.sh with DS_SLURM_LOCKED=1 and no lock refused (rc 1)" || bad "start.sh not refused: rc $rc: $out"
out=$("$src/scripts/with-cluster.sh" bash "$src/deploy/slurm/start.sh" --no-such-flag 2>&1); rc=$?
[ $rc -eq 2 ] && ok "start.sh under the lock passes the check (its usage error, rc 2)" || bad "start.sh under the lock: rc $rc: $out"

# another process tree holds the lock: DS_SLURM_LOCKED=1 here still is not holding it
mkfifo "$W/release"
flock -o "$DS_SLURM_LOCK" bash -c 'read -r _ < "$0"' "$W/release" > /dev/null 2>&1 &
other=$!
for _ in $(seq 50); do [ -n "$(. "$lib"; ds_cluster_lock_holders "$DS_SLURM_LOCK")" ] && break; sleep 0.1; done
out=$(DS_SLURM_LOCKED=1 bash "$src/deploy/slurm/start.sh" --no-such-flag 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "held by pid $other" <<<"$out" \
  && ok "a lock held by another process (pid $other) does not count" || bad "other holder: rc $rc: $out"
echo done > "$W/release"; wait $other 2>/dev/null

# the wrapper dies under its command: the command keeps DS_SLURM_LOCKED=1 but no lock
mkfifo "$W/go"
"$src/scripts/with-cluster.sh" bash -c '
  read -r _ < "$1/go"
  DS_SLURM_LOCK=$1/lock bash "$2/deploy/slurm/start.sh" --no-such-flag > "$1/start.out" 2>&1; echo $? > "$1/start.rc"
  "$2/scripts/with-cluster.sh" bash -c ". \"\$0\"; ds_cluster_lock_held" "$2/scripts/cluster-lock.sh"; echo $? > "$1/relock.rc"' \
  x "$W" "$src" &
wrapper=$!
for _ in $(seq 50); do [ -n "$(. "$lib"; ds_cluster_lock_holders "$DS_SLURM_LOCK")" ] && break; sleep 0.1; done
kill -9 $wrapper; wait $wrapper 2>/dev/null
echo go > "$W/go"
for _ in $(seq 100); do [ -f "$W/relock.rc" ] && break; sleep 0.1; done
[ "$(cat "$W/start.rc" 2>/dev/null)" = 1 ] && grep -q "refusing" "$W/start.out" \
  && ok "the wrapper SIGKILLed: its command's start.sh is refused" || bad "dead wrapper: start.sh rc $(cat "$W/start.rc" 2>/dev/null): $(cat "$W/start.out" 2>/dev/null)"
[ "$(cat "$W/relock.rc" 2>/dev/null)" = 0 ] && ok "the wrapper SIGKILLed: a nested with-cluster.sh takes the lock again" \
  || bad "dead wrapper: nested with-cluster.sh did not hold the lock (rc $(cat "$W/relock.rc" 2>/dev/null))"

[ $fails -eq 0 ] && echo "cluster lock: all checks passed" || echo "cluster lock: $fails checks failed"
exit $((fails > 0))
