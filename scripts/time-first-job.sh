#!/usr/bin/env bash
# time-first-job.sh: times what an operator runs from a checkout to a first job scheduled by deepshared on
# this machine (deps, configure, build, cpack, dpkg -i, the test cluster, --check-config, the daemon, a
# submit, the job running), then removes what it installed. docs/deepshared.md shows one run's figures.
# usage: sudo scripts/time-first-job.sh   (root; refuses when a deepshare package is installed already)
set -uo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
[ -n "${DS_SLURM_LOCKED:-}" ] || exec "$src/scripts/with-cluster.sh" bash "$0" "$@"
[ "$(id -u)" -eq 0 ] || { echo "time-first-job.sh: needs root" >&2; exit 1; }
dpkg-query -W -f='${Status}' deepshare 2>/dev/null | grep -q "install ok installed" &&
  { echo "time-first-job.sh: a deepshare package is installed; purge it first" >&2; exit 1; }
B=$(mktemp -d /tmp/ds-first-job.XXXXXX)
export SLURM_CONF=$src/deploy/slurm/slurm.conf
now() { date +%s.%N; }
step() { printf '%-13s %6.1f s  %s\n' "$1" "$(echo "$3 - $2" | bc)" "${4:-}"; }
# T NAME CMD...: runs CMD, its output in $B/NAME.log, and prints the seconds it took
T() {
  local name=$1 t0 rc
  shift
  t0=$(now)
  "$@" > "$B/$name.log" 2>&1
  rc=$?
  step "$name" "$t0" "$(now)" "$([ $rc = 0 ] || echo "FAILED (rc $rc, $B/$name.log)")"
  return $rc
}
cd "$src"
T deps bash scripts/deps.sh --with-slurm || exit 1
T configure cmake -S . -B "$B/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr || exit 1
T build cmake --build "$B/build" -j"$(nproc)" || exit 1
T cpack bash -c "cd '$B/build' && cpack -G DEB" || exit 1
T dpkg-i bash -c "dpkg -i '$B'/build/deepshare_*.deb" || exit 1
T cluster bash -c "'$src/deploy/slurm/stop.sh'; CLEAN=1 '$src/deploy/slurm/start.sh'" || exit 1
printf 'tenant vision 8 users=root\ntenant speech 8 users=root\ncycle = 10\n' > /etc/deepshare/deepshared.conf
T check-config /usr/sbin/deepshared --check-config /etc/deepshare/deepshared.conf
t0=$(now)
/usr/sbin/deepshared -c /etc/deepshare/deepshared.conf > "$B/daemon.log" 2>&1 &
dpid=$!
for _ in $(seq 1 400); do
  if exec 3<>/dev/tcp/127.0.0.1/9464; then
    printf 'GET /healthz HTTP/1.0\r\n\r\n' >&3
    head -1 <&3 | grep -q ' 200 ' && { exec 3<&-; break; }
    exec 3<&-
  fi 2>/dev/null
  sleep 0.05
done
step daemon "$t0" "$(now)" "(until /healthz answers 200)"
t0=$(now)
id=$(sbatch --parsable -p staging -A vision --comment="gpus=1" -o /dev/null --wrap 'sleep 20')
t1=$(now)
step submit "$t0" "$t1" "(job $id)"
for _ in $(seq 1 1200); do [ "$(squeue -h -j "$id" -o %T)" = RUNNING ] && break; sleep 0.05; done
step running "$t1" "$(now)" "($(squeue -h -j "$id" -o '%T in %P on %N, %b'), after the submit)"
kill "$dpid"; wait "$dpid" 2>/dev/null
scancel "$id"
"$src/deploy/slurm/stop.sh" >/dev/null 2>&1
dpkg --purge deepshare >/dev/null 2>&1
rm -rf /var/lib/deepshared "$B"
