#!/usr/bin/env bash
# soak_daemon.sh: deepshared under faults on the local Slurm cluster (issue 13, item 4). A burst of jobs from
# four tenants while the daemon is SIGKILLed and restarted at random; a slurmctld restart while shard jobs
# run (Slurm 22.05 then loses those GPUs' shards, and the daemon must keep shard jobs off them); a few
# hundred idle connections against the HTTP port. Asserts that every job finishes exactly once (its end
# line in the events file, and one journal record), that no job bounces between staging and a partition
# more than twice, that /metrics and /healthz answer within 2 s under the slow clients, and that no
# whole-GPU job ever shares a GPU. Needs root and the packages of 'scripts/deps.sh --with-slurm'.
# usage: tests/soak_daemon.sh BUILD_DIR   (env: SOAK_JOBS=60 jobs in the burst, SOAK_KILLS=5 SIGKILLs,
#        SOAK_SLOW=300 idle connections, SOAK_KEEP=1 keeps the cluster up and the work directory)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# one user of the machine-wide cluster at a time
[ -n "${DS_SLURM_LOCKED:-}" ] || exec "$root/scripts/with-cluster.sh" bash "$0" "$@"
build=$(cd "${1:?usage: soak_daemon.sh BUILD_DIR}" && pwd)
njobs=${SOAK_JOBS:-60}
nkills=${SOAK_KILLS:-5}
nslow=${SOAK_SLOW:-300}
export SLURM_CONF=$root/deploy/slurm/slurm.conf
W=$(mktemp -d /tmp/ds-soak.XXXXXX)
chmod 755 "$W"
port=$((20000 + RANDOM % 12000))
fails=0
dpid="" mon="" poller=""
name=soak
daemon_bin=$build/deepshared
. "$root/tests/slurm_lib.sh"
t_begin=$(date +%s)
ctl_log=/var/log/slurm-ds/slurmctld.log
ctl_starts0=$(grep -c 'slurmctld version .* started' "$ctl_log" 2>/dev/null)

cleanup() {
  [ -n "$mon" ] && kill "$mon" 2>/dev/null
  [ -n "$poller" ] && kill "$poller" 2>/dev/null
  [ -n "$dpid" ] && kill "$dpid" 2>/dev/null
  [ -s "$W/submits" ] && timeout 20 scancel $(awk '{print $1}' "$W/submits") 2>/dev/null
  [ -z "${SOAK_KEEP:-}" ] && "$root/deploy/slurm/stop.sh"
}
trap cleanup EXIT

[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 77; }
[ -x "$daemon_bin" ] || { log "$daemon_bin not built (needs libslurm-dev, libmicrohttpd-dev)"; exit 77; }
"$root/deploy/slurm/stop.sh"
CLEAN=1 "$root/deploy/slurm/start.sh" >/dev/null || { log "cluster did not start"; exit 1; }

# 4 tenants x 4 GPUs on the 16 GPUs; dispatch_timeout 10 s so that a dispatch Slurm never starts shows
# up as bounces within the run
cat > "$W/deepshared.conf" <<EOF
policy = deepshare
cycle = 2
poll = 0.25
journal = $W/journal.csv
listen = 127.0.0.1:$port
default_runtime = 15
dispatch_timeout = 10
trust_accounts = yes
tenant t1 4
tenant t2 4
tenant t3 4
tenant t4 4
EOF
write_job_script

# Every 0.5 s, every job's state, partition, nodes, requested nodes and GRES: bounces and shard
# placements are read from this afterwards
poll() {
  while :; do
    squeue -h -o '%i|%T|%P|%N|%n|%b' 2>/dev/null | sed "s/^/$(date +%s.%N)|/" >> "$W/poll"
    sleep 0.5
  done
}

# start_checked: starts the daemon and fails the run when it is not up a second later
start_checked() {
  start_daemon
  sleep 1
  kill -0 "$dpid" 2>/dev/null || { bad "deepshared did not start again: $(tail -2 "$W/deepshared.log")"; start_daemon; }
}

# used_shards: the shards Slurm counts as allocated, per node and GPU type (sinfo GresUsed)
used_shards() {
  sinfo -h -N -O 'NodeList:6,GresUsed:160' | sort -u |
    awk '{n = split($2, t, ","); for (i = 1; i <= n; i++) if (t[i] ~ /^shard:g[0-9]+:[1-9]/) printf "%s:%s ", $1, t[i]}'
}

# submit_retry ARGS...: submit, retried twice a second apart (slurmctld may be busy for a moment)
submit_retry() {
  local id
  for _ in 1 2 3; do id=$(submit "$@") && { echo "$id"; return 0; }; sleep 1; done
  return 1
}

# submit_one: a random job of a random tenant: mostly one-GPU jobs (shard), some 2-GPU and best-effort ones
submit_one() {
  local t=t$((1 + RANDOM % 4)) secs=$((4 + RANDOM % 14)) kind=$((RANDOM % 20))
  if [ $kind -lt 3 ]; then submit_retry "$t" "$secs" "gpus=2"
  elif [ $kind -lt 6 ]; then submit_retry "$t" "$secs" "gpus=1 class=BE"
  else submit_retry "$t" "$secs" "gpus=1"; fi
}

start_daemon
poll & poller=$!
monitor & mon=$!
sleep 1

# ---- 1. the burst, with the daemon SIGKILLed every 4-9 s and restarted 0.2-2 s later
log "step 1: $njobs jobs from 4 tenants over ~$((njobs * 6 / 10)) s, $nkills SIGKILLs of deepshared"
kills=0
next_kill=$(($(date +%s) + 4 + RANDOM % 6))
for i in $(seq 1 "$njobs"); do
  submit_one >/dev/null || bad "sbatch failed"
  sleep "0.$((3 + RANDOM % 6))"
  if [ $kills -lt "$nkills" ] && [ "$(date +%s)" -ge $next_kill ]; then
    kill -9 "$dpid"; wait "$dpid" 2>/dev/null
    kills=$((kills + 1))
    sleep "$(calc "0.2 + $((RANDOM % 19)) / 10")"
    start_checked
    next_kill=$(($(date +%s) + 4 + RANDOM % 6))
  fi
done
while [ $kills -lt "$nkills" ]; do
  sleep "$((2 + RANDOM % 4))"
  kill -9 "$dpid"; wait "$dpid" 2>/dev/null
  kills=$((kills + 1))
  sleep 1
  start_checked
done
ok "step 1: $(wc -l < "$W/submits") jobs submitted, deepshared SIGKILLed and restarted $kills times"

# ---- 2. slurmctld restarts while shard jobs run: Slurm 22.05 recovers those GPUs with shard:gN:0
log "step 2: restart slurmctld while shard jobs run"
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 60 ]; do
  [ "$(squeue -h -t R -o '%b' | grep -c shard)" -ge 2 ] && break
  sleep 0.5
done
squeue -h -t R -o '%i %N %b' | grep shard > "$W/shard_running"
log "shard jobs running at the restart: $(awk '{printf "%s(%s %s) ", $1, $2, $3}' "$W/shard_running")"
[ -s "$W/shard_running" ] || bad "step 2: no shard job ran to restart slurmctld under"
if ! restart_slurmctld 5; then
  # seen once: slurmctld 22.05.8 segfaulted while recovering its state (dmesg: slurmctld segfault)
  bad "step 2: slurmctld did not come back: $(tail -2 /var/log/slurm-ds/slurmctld.log | tr '\n' ' ')"
  "$root/deploy/slurm/start.sh" >/dev/null 2>&1 || { log "slurmctld does not start again; giving up"; exit 1; }
fi
t_back=$(date +%s.%N)
sleep 4   # until every slurmd registered, sinfo shows the configured counts
sinfo -h -N -o '%N %G' | sort -u | awk '{n = split($2, t, ","); for (i = 1; i <= n; i++)
  if (t[i] ~ /^shard:g[0-9]+:[01](\(|$)/) { split(t[i], f, ":"); print $1 ":" f[2] } }' | sort -u > "$W/lost"
nlost=$(wc -l < "$W/lost")
log "GPUs without shards after the restart (sinfo): $(tr '\n' ' ' < "$W/lost")"
wave=()
for i in $(seq 1 16); do wave+=("$(submit_retry t$((1 + i % 4)) $((4 + RANDOM % 6)) 'gpus=1')"); done
if [ "$nlost" -gt 0 ]; then
  seen=""
  for _ in $(seq 1 40); do
    seen=$(metric deepshare_gpus_shardless)
    [ "$seen" = "$nlost" ] && break
    sleep 0.5
  done
  t_det=$(date +%s.%N)
  if [ "$seen" = "$nlost" ]; then
    ok "step 2: shard loss reproduced on $nlost GPUs; deepshare_gpus_shardless = $seen after $(calc "$t_det - $t_back" | cut -c1-4) s"
  else bad "step 2: deepshare_gpus_shardless = '$seen', sinfo shows $nlost GPUs without shards"; fi
  for g in $(cat "$W/lost"); do
    grep -q "GPU $g lost its shards" "$W/deepshared.log" || bad "step 2: no log line for GPU $g losing its shards"
  done
  # the explain of a shard job deepshared has pending names the lost GPUs (jobs start meanwhile: the
  # first explain that says pending is checked; none pending is no failure)
  checked=""
  for j in "${wave[@]}"; do
    x=$("$build/deepshare" explain --addr "127.0.0.1:$port" "$j" 2>&1)
    echo "$x" | head -1 | grep -q ', pending$' || continue
    checked=$j
    # "shards: GPU n1:g0, n2:g0 lost their shards ..." (or "lost its shards" for one GPU), or a note
    if echo "$x" | grep -qE "lost (its|their) shards"; then ok "step 2: explain of pending job $j: $(echo "$x" | grep -E 'lost (its|their) shards' | head -1 | sed 's/^ *//')"
    else bad "step 2: explain of pending job $j does not name the lost GPUs: $x"; fi
    break
  done
  [ -n "$checked" ] || log "step 2: no job of the second wave was pending to explain"
  log "shards in use after the restart (sinfo GresUsed): $(used_shards)"
else
  log "step 2: Slurm kept every GPU's shards this time (no loss to avoid)"
  t_det=$t_back
fi

# ---- 3. slow clients: a few hundred idle connections; /metrics and /healthz must answer within 2 s
log "step 3: $nslow idle connections to the HTTP port from 6 addresses for 12 s"
if r=$(python3 "$root/tests/slow_clients.py" "$port" "$nslow" 12 6 2>&1); then ok "step 3: $r"
else bad "step 3: $r"; fi

# dump_queued LABEL: the daemon's view of every job still queued (deepshare explain, into the output) and
# its /api/status (into $W/status-LABEL.json), for a run that gets stuck
dump_queued() {
  local j
  for j in $(squeue -h -p staging,batch,prod -o %i); do
    "$build/deepshare" explain --addr "127.0.0.1:$port" "$j" 2>&1 | sed "s/^/$name: [$1] /" >&2
  done
  http_get /api/status > "$W/status-$1.json" 2>/dev/null
}

# ---- 4. every job finishes
log "waiting for every job to finish"
t0=$(date +%s)
idle_since=$t0 remedied=0
while [ $(($(date +%s) - t0)) -lt 300 ]; do
  [ -z "$(squeue -h -p staging,batch,prod -o %i)" ] && break
  [ -n "$(squeue -h -t R,CG -o %i)" ] && idle_since=$(date +%s)
  # Jobs pinned to a GPU index (Slurm 22.05 pins once per life) can wait for good when every GPU of that
  # index lost its shards or keeps shards no job holds; the operator's remedy (docs/deepshared.md, Known
  # limits) is a slurmctld restart while nothing runs, and deepshared must then place them
  if [ $remedied = 0 ] && [ $(($(date +%s) - idle_since)) -ge 30 ]; then
    log "nothing ran for 30 s with $(squeue -h -p staging,batch,prod -o %i | wc -l) jobs queued (stuck on lost shards: $(used_shards)): restarting slurmctld with nothing running"
    dump_queued stuck
    remedied=1
    restart_slurmctld 2 || bad "slurmctld did not come back for the remedy"
    remedy_at=$(date +%s)
  fi
  # the daemon's view 20 s after the remedy, when jobs are still queued
  [ $remedied = 1 ] && [ -n "${remedy_at:-}" ] && [ $(($(date +%s) - remedy_at)) -ge 20 ] && { dump_queued remedied; remedy_at=""; }
  sleep 1
done
if [ -n "$(squeue -h -p staging,batch,prod -o %i)" ]; then
  bad "jobs still queued after 300 s: $(squeue -h -o '%i %T %P %b %r' | head -5 | tr '\n' ';')"
  dump_queued end
fi
sleep 1

all=$(awk '{print $1}' "$W/submits")
total=$(echo "$all" | wc -w)
# raced JOB: 0 when a second run of JOB is Slurm's requeue race: deepshared's requeue of it (its log line)
# came less than a second after its script had ended, before slurmctld had heard of the end (deepshared
# asks slurmctld just before a requeue and skips jobs it knows to be ending; Slurm requeues an ended job
# as readily as a running one, and its own preempt/qos REQUEUE has the same window)
raced() {
  local end rq
  end=$(awk -v j="$1" '$1 == "end" && $2 == j {print $4; exit}' "$W/events")
  for rq in $(grep "job $1 requeued" "$W/deepshared.log" | awk '{print $1}'); do
    rq=$(date -d "${rq%Z}Z" +%s.%N 2>/dev/null) || continue
    if awk -v a="$end" -v b="$rq" 'BEGIN { exit !(b >= a && b - a < 1) }'; then
      log "job $1 ran twice: requeued $(calc "($rq - $end) * 1000") ms after its script ended (Slurm's requeue race)"
      return 0
    fi
  done
  return 1
}
lost=0 twice=0 nojournal=0 nraced=0
for j in $all; do
  e=$(grep -c "^end $j " "$W/events")
  if [ "$e" = 2 ] && raced "$j"; then nraced=$((nraced + 1))
  elif [ "$e" != 1 ]; then log "job $j ended $e times"; [ "$e" = 0 ] && lost=$((lost + 1)) || twice=$((twice + 1)); fi
  r=$(grep -c "^$j," "$W/journal.csv" 2>/dev/null)
  [ "$r" = 1 ] || { log "job $j has $r journal records"; nojournal=$((nojournal + 1)); }
done
raced_note=""
[ $nraced -gt 0 ] && raced_note=" ($nraced of them twice in Slurm's requeue race, logged above)"
[ $lost = 0 ] && [ $twice = 0 ] && ok "every one of the $total jobs finished exactly once$raced_note" \
  || bad "$lost jobs never finished, $twice finished more than once (of $total)"
[ $nojournal = 0 ] && ok "the journal holds exactly one record of each of the $total jobs" \
  || bad "$nojournal jobs without exactly one journal record"

# Bounces: a stay in prod/batch that ends back in staging without the job ever running (from the polls),
# or a 'back to staging' line of the daemon for it (catches stays shorter than a poll); the larger count
awk -F'|' '{ id = $2; inp = ($4 == "prod" || $4 == "batch")
  if (inp) { if (!ep[id]) { ep[id] = 1; ran[id] = 0; stays[id]++ } if ($3 == "RUNNING") ran[id] = 1 }
  else if ($4 == "staging") { if (ep[id] && !ran[id]) b[id]++; ep[id] = 0 } }
  END { for (id in stays) print id, b[id] + 0, stays[id] }' "$W/poll" | sort -k1,1 > "$W/bounces_poll"
grep -o 'job [0-9]*: dispatched[^;]*; back to staging' "$W/deepshared.log" | awk '{print $2}' | tr -d : | sort -n | uniq -c |
  awk '{print $2, $1}' | sort -k1,1 > "$W/bounces_log"
worst=$(join -a1 -a2 -e0 -o 0,1.2,2.2 "$W/bounces_poll" "$W/bounces_log" 2>/dev/null | awk '{m = $2 > $3 ? $2 : $3; print m, $1}' | sort -n | tail -1)
nb=$(join -a1 -a2 -e0 -o 0,1.2,2.2 "$W/bounces_poll" "$W/bounces_log" 2>/dev/null | awk '{m = $2 > $3 ? $2 : $3; s += m} END {print s + 0}')
if [ "${worst%% *}" -le 2 ] 2>/dev/null; then ok "no job bounced more than twice ($nb bounces in all; most: ${worst:-0 none})"
else bad "a job bounced more than twice: $worst (bounces, job)"; fi

# No shard dispatch onto a GPU without shards once the daemon knew (2 s for a dispatch already on its way),
# the jobs that held those shards at the restart excepted
if [ "$nlost" -gt 0 ]; then
  awk -F'|' -v t="$(awk -v t="$t_det" 'BEGIN {printf "%.3f", t + 2}')" -v L="$W/lost" -v R="$W/shard_running" '
    BEGIN { while ((getline l < L) > 0) lost[l] = 1; while ((getline l < R) > 0) { split(l, f, " "); pre[f[1]] = 1 } }
    $1 > t && ($4 == "prod" || $4 == "batch") && !($2 in pre) && $7 ~ /shard:g/ {
      node = $5 != "" ? $5 : $6; n = split($7, g, ":"); gpu = g[3]
      if ((node ":" gpu) in lost) print $2, $3, node ":" gpu }' "$W/poll" | sort -u > "$W/shard_violations"
  if [ -s "$W/shard_violations" ]; then bad "shard jobs sent onto GPUs without shards: $(head -3 "$W/shard_violations" | tr '\n' ';')"
  else ok "no shard job was sent onto the $nlost GPUs without shards once deepshared saw them (polled every 0.5 s)"; fi
  moves=$(metric deepshare_shard_moves_total)
  log "shard dispatches moved off or given a whole shardless GPU (this daemon process): ${moves:-?}"
fi
if [ -s "$W/violations" ]; then bad "shared-GPU invariant: $(sort -u "$W/violations" | head -3)"
else ok "no whole-GPU job ever shared a GPU; no GPU held more than two jobs"; fi
kill -0 "$dpid" 2>/dev/null && ok "deepshared is up at the end ($(grep -c 'state rebuilt from Slurm' "$W/deepshared.log") rebuilds)" \
  || bad "deepshared died: $(tail -3 "$W/deepshared.log")"

# Slurm 22.05 also leaves shards allocated that no job holds (GresUsed "shard:g0:1(IDX:0)" on an idle
# node): such a GPU takes fewer shard jobs than its count says; the bounce rule keeps jobs off it
log "shards in use with no job running (sinfo GresUsed): $(used_shards)"

# ---- 5. slurmctld restarted with no job running: do the shards come back, and does the daemon see it?
if [ "$nlost" -gt 0 ]; then
  restart_slurmctld 2 || bad "step 5: slurmctld did not come back"
  sleep 2
  log "GRES after a restart with no job running (sinfo): $(sinfo -h -N -o '%N %G' | sort -u | tr '\n' ';')"
  still=$(sinfo -h -N -o '%N %G' | sort -u | grep -cE 'shard:g[0-9]+:[01](\(|,|$)')
  seen=""
  for _ in $(seq 1 30); do seen=$(metric deepshare_gpus_shardless); [ -n "$seen" ] && [ "$seen" = 0 ] && [ "$still" = 0 ] && break; sleep 0.5; done
  if [ "$still" = 0 ]; then
    [ "$seen" = 0 ] && grep -q "has its shards again" "$W/deepshared.log" \
      && ok "step 5: a slurmctld restart with no shard job running gives the shards back; deepshared sees it (gauge 0, logged)" \
      || bad "step 5: Slurm has the shards back but deepshare_gpus_shardless = '$seen'"
  else log "step 5: $still nodes still without some shards after a restart with no job running (gauge $seen)"; fi
fi

# the cluster is machine-wide: a slurmctld start this script did not make means someone ignored the lock
ctl_starts=$(($(grep -c 'slurmctld version .* started' "$ctl_log" 2>/dev/null) - ${ctl_starts0:-0}))
ours=$((2 + remedied)); [ "$nlost" -gt 0 ] && ours=$((ours + 1))
[ "$ctl_starts" -le "$ours" ] || log "WARNING: slurmctld started $ctl_starts times during the run, $ours by this script: another user of the cluster?"
log "FIGURES jobs=$total kills=$kills lost_gpus=$nlost bounces=$nb wall=$(($(date +%s) - t_begin)) s"
cp "$W/deepshared.log" /tmp/ds-soak-last.log 2>/dev/null
if [ $fails -gt 0 ]; then log "$fails checks failed; work directory: $W"; exit 1; fi
log "all checks passed"
[ -z "${SOAK_KEEP:-}" ] && rm -rf "$W"
exit 0
