#!/usr/bin/env bash
# e2e_ha.sh: deepshared in production on the real local Slurm cluster (issue #27): nodes out of service and
# active/standby with a leader lease in etcd. Two instances share one etcd (Debian's etcd-server, started
# here on private ports); one leads, the other stands by.
#   nodes: n2 drained while it runs jobs (they run on; nothing new goes there), n2 set DOWN (Slurm requeues
#          its jobs; they run elsewhere), n3's slurmd stopped (NOT_RESPONDING: nothing goes there), both
#          back (offered again);
#   failover: the leader SIGKILLed under load (the standby leads within one lease period: measured), the new
#          leader SIGSTOPped (the other leads), then SIGCONT: the paused one dispatches nothing; then
#          E2E_TAKEOVERS (4) more SIGKILLs of whichever leads, at random points of its renewal interval, each
#          killed instance restarted: min/median/max of all the SIGKILL takeovers, each within the period;
#   every job ends exactly once, and no guaranteed job of the failover phase starts twice.
# Needs root and the packages of 'scripts/deps.sh --with-slurm' (etcd-server among them).
# usage: tests/e2e_ha.sh BUILD_DIR   (env: E2E_TTL=3 the lease period in seconds, E2E_TAKEOVERS=4)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ -n "${DS_SLURM_LOCKED:-}" ] || exec "$root/scripts/with-cluster.sh" bash "$0" "$@"
build=$(cd "${1:?usage: e2e_ha.sh BUILD_DIR}" && pwd)
ttl=${E2E_TTL:-3}
ntake=${E2E_TAKEOVERS:-4}
export SLURM_CONF=$root/deploy/slurm/slurm.conf
W=$(mktemp -d /tmp/ds-ha.XXXXXX)
chmod 755 "$W"
base=$((20000 + RANDOM % 12000))
port_a=$base port_b=$((base + 1)) eport=$((base + 2)) epeer=$((base + 3))
fails=0 apid="" bpid="" etcd_pid="" mon=""
name=ha
daemon_bin=$build/deepshared
. "$root/tests/slurm_lib.sh"

cleanup() {
  [ -n "$mon" ] && kill "$mon" 2>/dev/null
  for p in $apid $bpid; do kill -CONT "$p" 2>/dev/null; kill "$p" 2>/dev/null; done
  [ -n "$etcd_pid" ] && kill "$etcd_pid" 2>/dev/null
  [ -s "$W/submits" ] && scancel $(awk '{print $1}' "$W/submits") 2>/dev/null
  "$root/deploy/slurm/stop.sh"
}
trap cleanup EXIT

[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 77; }
[ -x "$daemon_bin" ] || { log "$daemon_bin not built (needs libslurm-dev, libmicrohttpd-dev, libcurl)"; exit 77; }
command -v etcd >/dev/null || { log "etcd not installed (scripts/deps.sh --with-slurm installs etcd-server)"; exit 77; }

"$root/deploy/slurm/stop.sh"
CLEAN=1 "$root/deploy/slurm/start.sh" >/dev/null || { log "cluster did not start"; exit 1; }
etcd --data-dir "$W/etcd" --listen-client-urls "http://127.0.0.1:$eport" --advertise-client-urls "http://127.0.0.1:$eport" \
  --listen-peer-urls "http://127.0.0.1:$epeer" > "$W/etcd.log" 2>&1 &
etcd_pid=$!
for _ in $(seq 1 100); do curl -s "http://127.0.0.1:$eport/version" >/dev/null 2>&1 && break; sleep 0.1; done

for i in a b; do
  p=$port_a; [ $i = b ] && p=$port_b
  cat > "$W/$i.conf" <<EOF
policy = deepshare
cycle = 2
poll = 0.25
journal = $W/journal.csv
listen = 127.0.0.1:$p
default_runtime = 600
# whole GPUs only: every job here holds one GPU, so what runs where is what the checks count
k = 1
gpu_sharing = 0
trust_accounts = yes
lease_etcd = http://127.0.0.1:$eport
lease_ttl = $ttl
lease_name = instance-$i
tenant ta 8
tenant tb 8
EOF
  chmod 600 "$W/$i.conf"
done
write_job_script
start_a() { "$daemon_bin" -c "$W/a.conf" -v >> "$W/a.log" 2>&1 & apid=$!; }
start_b() { "$daemon_bin" -c "$W/b.conf" -v >> "$W/b.log" 2>&1 & bpid=$!; }
# metric_of PORT NAME: a metric of the instance listening on PORT
metric_of() { local port=$1; metric "$2"; }
leader_of() { metric_of "$1" deepshare_leader; }
# wait_leader PORT SECONDS: 0 once that instance leads
wait_leader() {
  local t0; t0=$(date +%s)
  while [ $(($(date +%s) - t0)) -lt "$2" ]; do [ "$(leader_of "$1")" = 1 ] && return 0; sleep 0.05; done
  return 1
}
explain_of() { "$build/deepshare" explain --addr "127.0.0.1:$1" "$2" 2>&1; }
on_node() { squeue -h -t R -o '%i %N' | awk -v n="$1" '$2 == n {print $1}'; }
epoch_of() { scontrol show job "$1" 2>/dev/null | grep -o 'epoch=[0-9]*' | head -1 | cut -d= -f2; }
end_count() { grep -c "^end $1 " "$W/events"; }
wait_ended() { # SECONDS ID...
  local limit=$1 t0; shift; t0=$(date +%s)
  while [ $(($(date +%s) - t0)) -lt "$limit" ]; do
    local all=1; for j in "$@"; do [ "$(end_count "$j")" -ge 1 ] || all=0; done
    [ $all = 1 ] && return 0; sleep 0.5
  done
  return 1
}

start_a
if wait_leader $port_a 15; then ok "instance a leads (epoch $(metric_of $port_a deepshare_lease_epoch))"
else bad "instance a did not take the lease: $(tail -3 "$W/a.log")"; fi
start_b
sleep 2
[ "$(leader_of $port_b)" = 0 ] && grep -q "standing by" "$W/b.log" && ok "instance b stands by" \
  || bad "instance b: leader=$(leader_of $port_b); $(tail -2 "$W/b.log")"

# ---- nodes: n2 drained while it runs jobs
log "nodes: 16 jobs fill the cluster, then n2 is drained"
fill=()
for i in $(seq 1 8); do fill+=("$(submit ta 25 'gpus=1')"); done
for i in $(seq 1 8); do fill+=("$(submit tb 25 'gpus=1')"); done
wait_running 30 "${fill[@]}" || bad "nodes: the 16 jobs do not all run"
n2jobs=$(on_node n2)
scontrol update nodename=n2 state=drain reason=e2e-drain
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 15 ] && [ "$(metric_of $port_a deepshare_nodes_unavailable)" != 1 ]; do sleep 0.2; done
[ "$(metric_of $port_a 'deepshare_node_unavailable{node="n2",state="draining"}')" = 1 ] \
  && ok "nodes: n2 seen draining within $(($(date +%s) - t0)) s (deepshare_node_unavailable{node=\"n2\",state=\"draining\"} 1)" \
  || bad "nodes: n2's drain not seen: $(http_get /metrics 2>/dev/null | grep node_unavailable)"
late=()
for i in $(seq 1 4); do late+=("$(submit ta 5 'gpus=1')"); done
sleep 4
kept=0; for j in $n2jobs; do [ "$(state "$j")" = RUNNING ] && kept=$((kept + 1)); done
[ -n "$n2jobs" ] && [ $kept = $(echo $n2jobs | wc -w) ] && ok "nodes: the $kept jobs running on n2 run on after the drain" \
  || bad "nodes: of n2's jobs ($n2jobs) $kept still run"
x=$(explain_of $port_a "${late[0]}")
echo "$x" | grep -q 'out of service (no placements): n2 (draining)' && ok "nodes: explain says: $(echo "$x" | grep 'out of service')" \
  || bad "nodes: explain of ${late[0]}: $(echo "$x" | head -8)"
wait_ended 60 "${fill[@]}" || bad "nodes: the 16 jobs did not end"
wait_ended 40 "${late[@]}" || bad "nodes: the 4 jobs submitted during the drain did not run"
on2=0; for j in "${late[@]}"; do grep -q "^start $j .* n2$" "$W/events" && on2=$((on2 + 1)); done
[ $on2 = 0 ] && ok "nodes: none of the 4 jobs submitted during the drain started on n2" || bad "nodes: $on2 started on drained n2"

# ---- nodes: n2 back, then DOWN with jobs on it (Slurm requeues them), then n3's slurmd stopped
scontrol update nodename=n2 state=resume
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 15 ] && [ "$(metric_of $port_a deepshare_nodes_unavailable)" != 0 ]; do sleep 0.2; done
[ "$(metric_of $port_a deepshare_nodes_unavailable)" = 0 ] && ok "nodes: n2 resumed: back in service" || bad "nodes: n2 still out after resume"
fill=()
for i in $(seq 1 8); do fill+=("$(submit ta 20 'gpus=1')"); done
for i in $(seq 1 8); do fill+=("$(submit tb 20 'gpus=1')"); done
wait_running 30 "${fill[@]}" || bad "nodes: the second 16 jobs do not all run"
n2jobs=$(on_node n2)
[ -n "$n2jobs" ] && ok "nodes: n2 offered again: jobs $(echo $n2jobs) run there" || bad "nodes: nothing runs on n2 once back"
# n2 fails: set DOWN, Slurm kills and requeues its jobs, which must run elsewhere, once; drained at once after
# (ReturnToService=2 would bring a DOWN node whose slurmd answers back within a second; a drain stays)
scontrol update nodename=n2 state=down reason=e2e-down
scontrol update nodename=n2 state=drain reason=e2e-down
t0=$(date +%s); moved=0
while [ $(($(date +%s) - t0)) -lt 15 ]; do
  moved=0; for j in $n2jobs; do on_node n2 | grep -qx "$j" || moved=$((moved + 1)); done
  [ $moved = $(echo $n2jobs | wc -w) ] && break; sleep 0.5
done
sleep 1
grep -qE "node n2 (down|drained|draining) in Slurm" <(sed -n '/node n2 back in service/,$p' "$W/a.log") && [ $moved = $(echo $n2jobs | wc -w) ] \
  && ok "nodes: n2 down: out of service; its $moved jobs requeued by Slurm, none on n2 any more" \
  || bad "nodes: n2 down: $(grep 'node n2' "$W/a.log" | tail -1); $moved of its jobs off it"
kill "$(cat /run/slurm-ds/slurmd-n3.pid)"
log "nodes: n3's slurmd stopped; waiting for Slurm to mark it not responding"
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 90 ] && [ "$(metric_of $port_a 'deepshare_node_unavailable{node="n3",state="not_responding"}')" != 1 ]; do sleep 1; done
nr=$(($(date +%s) - t0))
[ "$(metric_of $port_a 'deepshare_node_unavailable{node="n3",state="not_responding"}')" = 1 ] \
  && ok "nodes: n3 not responding seen $nr s after its slurmd stopped" || bad "nodes: n3 never seen not responding"
late=()
for i in $(seq 1 4); do late+=("$(submit tb 4 'gpus=1')"); done
wait_ended 150 "${fill[@]}" "${late[@]}" || bad "nodes: jobs did not end with n2 down and n3 not responding"
bad3=0; for j in "${late[@]}"; do grep -qE "^start $j .* n(2|3)$" "$W/events" && bad3=$((bad3 + 1)); done
[ $bad3 = 0 ] && ok "nodes: none of the 4 jobs submitted meanwhile started on n2 (down) or n3 (not responding)" \
  || bad "nodes: $bad3 jobs started on n2 or n3 while out of service"
/usr/sbin/slurmd -f "$SLURM_CONF" -N n3
scontrol update nodename=n2 state=resume
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 60 ] && [ "$(metric_of $port_a deepshare_nodes_unavailable)" != 0 ]; do sleep 0.5; done
[ "$(metric_of $port_a deepshare_nodes_unavailable)" = 0 ] && ok "nodes: n2 and n3 back in service ($(($(date +%s) - t0)) s)" \
  || bad "nodes: still out: $(http_get /metrics 2>/dev/null | grep 'node_unavailable{')"
outages=$(metric_of $port_a deepshare_node_outages_total)

# ---- failover: SIGKILL the leader under load
log "failover: 12 guaranteed jobs queued, then the leader (a) is SIGKILLed"
ga=()
for i in $(seq 1 12); do ga+=("$(submit ta 6 'gpus=1')"); done
sleep 1.5
t_kill=$(now)
kill -9 "$apid"; wait "$apid" 2>/dev/null
if wait_leader $port_b $((3 * ttl)); then
  take1=$(calc "$(now) - $t_kill")
  ok "failover: b leads $take1 s after a was SIGKILLed (lease $ttl s; epoch $(metric_of $port_b deepshare_lease_epoch))"
  awk -v t="$take1" -v l="$ttl" 'BEGIN {exit !(t <= l)}' || bad "failover: takeover $take1 s, more than one lease period ($ttl s)"
else bad "failover: b did not lead within $((3 * ttl)) s: $(tail -3 "$W/b.log")"; fi
start_a   # the killed instance comes back (systemd's Restart=): it stands by
wait_ended 90 "${ga[@]}" || bad "failover: the queued jobs did not all run after the takeover"

# ---- failover: SIGSTOP the leader (b); a takes over; SIGCONT b: it dispatches nothing
log "failover: the leader (b) is SIGSTOPped"
gb=()
for i in $(seq 1 6); do gb+=("$(submit ta 6 'gpus=1')"); done
sleep 1
ep_b=$(metric_of $port_b deepshare_lease_epoch)
disp_b=$(metric_of $port_b deepshare_dispatches_total)
t_stop=$(now)
kill -STOP "$bpid"
if wait_leader $port_a $((3 * ttl)); then
  take2=$(calc "$(now) - $t_stop")
  ok "failover: a leads $take2 s after b was paused (epoch $(metric_of $port_a deepshare_lease_epoch) > b's $ep_b)"
else bad "failover: a did not lead within $((3 * ttl)) s of b's pause: $(tail -3 "$W/a.log")"; fi
ep_a=$(metric_of $port_a deepshare_lease_epoch)
gc=()
for i in $(seq 1 6); do gc+=("$(submit ta 6 'gpus=1')"); done
sleep 2
kill -CONT "$bpid"
sleep $((ttl + 3))
disp_b2=$(metric_of $port_b deepshare_dispatches_total)
lostl=$(grep -c "lost the lease" "$W/b.log")
[ "$(leader_of $port_b)" = 0 ] && [ "$disp_b2" = "$disp_b" ] && [ "$lostl" -ge 1 ] \
  && ok "failover: b, woken, found its lease lost and dispatched nothing (dispatches $disp_b -> $disp_b2; fenced writes $(metric_of $port_b deepshare_fenced_writes_total))" \
  || bad "failover: b after SIGCONT: leader=$(leader_of $port_b), dispatches $disp_b -> $disp_b2, 'lost the lease' x$lostl"
wait_ended 90 "${gb[@]}" "${gc[@]}" || bad "failover: jobs submitted around the pause did not all run"
stale=0; for j in "${gc[@]}"; do e=$(epoch_of "$j"); [ -n "$e" ] && [ "$e" != "$ep_a" ] && stale=$((stale + 1)); done
[ $stale = 0 ] && ok "failover: the 6 jobs submitted after a took over were all dispatched under a's epoch $ep_a" \
  || bad "failover: $stale jobs submitted after the takeover carry another epoch"

# ---- more SIGKILL takeovers, at random points of the leader's renewal interval (docs/deepshared.md: where a
# takeover's time goes); the killed instance comes back each time and stands by
takes=("${take1:-}")
gs=()
for k in $(seq 1 "$ntake"); do
  if [ "$(leader_of $port_a)" = 1 ]; then lname=a lpid=$apid sport=$port_b; else lname=b lpid=$bpid sport=$port_a; fi
  for i in 1 2; do gs+=("$(submit tb 4 'gpus=1')"); done
  sleep "1.$((RANDOM % 10))"
  t_kill=$(now)
  kill -9 "$lpid"; wait "$lpid" 2>/dev/null
  if wait_leader "$sport" $((3 * ttl)); then
    t=$(calc "$(now) - $t_kill")
    takes+=("$t")
    awk -v t="$t" -v l="$ttl" 'BEGIN {exit !(t <= l)}' || bad "takeover $k: $t s after $lname was SIGKILLed, more than one lease period ($ttl s)"
  else bad "takeover $k: no instance led within $((3 * ttl)) s of $lname's SIGKILL"; fi
  if [ $lname = a ]; then start_a; else start_b; fi
  sleep 2
done
series=$(printf '%s\n' "${takes[@]}" | grep . | sort -g)
n=$(echo "$series" | grep -c .)
stats=$(echo "$series" | awk '{v[NR] = $1} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
  printf "min %.3f s, median %.3f s, max %.3f s", v[1], m, v[NR]}')
ok "takeovers after SIGKILL (n=$n, lease $ttl s): $stats"
firsts=$(cat "$W/a.log" "$W/b.log" | grep -o 'first pass published [0-9.]* s' | awk '{print $4}' | sort -g | tr '\n' ' ')
log "first pass after each takeover, from taking the lease: $firsts(s)"
wait_ended 90 "${gs[@]}" || bad "takeovers: the jobs submitted before them did not all run"

# ---- exactly once
all=$(awk '{print $1}' "$W/submits")
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 120 ] && [ -n "$(squeue -h -p staging,batch,prod -o %i)" ]; do sleep 1; done
lost=0 twice=0
for j in $all; do
  e=$(end_count "$j")
  [ "$e" = 1 ] || { log "job $j ended $e times"; [ "$e" = 0 ] && lost=$((lost + 1)) || twice=$((twice + 1)); }
done
[ $lost = 0 ] && [ $twice = 0 ] && ok "every one of the $(echo "$all" | wc -w) jobs finished exactly once" \
  || bad "$lost jobs never finished, $twice finished more than once"
gtwice=0
for j in "${ga[@]}" "${gb[@]}" "${gc[@]}" "${gs[@]}"; do
  s=$(grep -c "^start $j " "$W/events"); [ "$s" = 1 ] || { log "job $j started $s times"; gtwice=$((gtwice + 1)); }
done
[ $gtwice = 0 ] && ok "none of the $((${#ga[@]} + ${#gb[@]} + ${#gc[@]} + ${#gs[@]})) guaranteed jobs of the failover phase started twice" \
  || bad "$gtwice jobs of the failover phase started more than once"
echo "ha: FIGURES lease ${ttl} s: takeover after SIGKILL ${take1:-?} s, after SIGSTOP ${take2:-?} s; SIGKILL takeovers (n=$n) $stats; first passes $firsts; node outages counted $outages; n3 not responding seen after ${nr} s" >&2
cp "$W/a.log" /tmp/ds-ha-a.log 2>/dev/null; cp "$W/b.log" /tmp/ds-ha-b.log 2>/dev/null
if [ $fails -gt 0 ]; then log "$fails checks failed; logs: $W/a.log $W/b.log"; exit 1; fi
log "all checks passed"
rm -rf "$W"
exit 0
