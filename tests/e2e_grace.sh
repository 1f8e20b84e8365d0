#!/usr/bin/env bash
# e2e_grace.sh: deepshared's graceful preemption on the local Slurm cluster (deploy/slurm). Tenant ta fills
# the 16 GPUs (8 of its jobs borrow tb's quota as best effort); every job counts steps (10 a second) from its
# checkpoint file and, on preempt_signal (USR1) or SIGTERM, writes the checkpoint and exits 143. tb then
# submits a job: DeepShare reclaims a GPU, and the victim must get the signal, write its checkpoint, be
# requeued once it has left, and resume from the checkpoint after its restart. A second victim ignores
# the signal: it is requeued when its grace is over (Slurm's requeue then sends TERM and it saves then).
# Prints the grace path's timings (signal -> job end -> requeue -> restart). Needs root and
# 'scripts/deps.sh --with-slurm'.
# usage: tests/e2e_grace.sh BUILD_DIR
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ -n "${DS_SLURM_LOCKED:-}" ] || exec "$root/scripts/with-cluster.sh" bash "$0" "$@"
build=$(cd "${1:?usage: e2e_grace.sh BUILD_DIR}" && pwd)
cycle=2
grace=10
export SLURM_CONF=$root/deploy/slurm/slurm.conf
W=$(mktemp -d /tmp/ds-e2e-grace.XXXXXX)
chmod 755 "$W"
port=$((20000 + RANDOM % 12000))
fails=0
dpid=""
name=e2e-grace
daemon_bin=$build/deepshared
. "$root/tests/slurm_lib.sh"

cleanup() {
  [ -n "$dpid" ] && kill "$dpid" 2>/dev/null
  [ -s "$W/submits" ] && scancel $(awk '{print $1}' "$W/submits") 2>/dev/null
  "$root/deploy/slurm/stop.sh"
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 77; }
[ -x "$daemon_bin" ] || { log "$daemon_bin not built (needs libslurm-dev, libmicrohttpd-dev)"; exit 77; }

"$root/deploy/slurm/stop.sh"
CLEAN=1 "$root/deploy/slurm/start.sh" >/dev/null || { log "cluster did not start"; exit 1; }

cat > "$W/deepshared.conf" <<EOF
policy = deepshare
cycle = $cycle
poll = 0.25
journal = $W/journal.csv
listen = 127.0.0.1:$port
default_runtime = 600
k = 1
grace = $grace
preempt_signal = USR1
# the test cluster has no accounting: every job here is root's, charged to the account it names
trust_accounts = yes
tenant ta 8
tenant tb 8
EOF
mkdir -p "$W/ckpt"
# ckpt.sh SECONDS: 10 steps a second from its checkpoint; USR1 (the daemon's signal) or TERM (Slurm's kill):
# save the step count (temporary file, then rename) and exit 143, unless $W/ignore exists at a USR1.
cat > "$W/ckpt.sh" <<EOF
#!/bin/bash
me=\$SLURM_JOB_ID ck=$W/ckpt/\$SLURM_JOB_ID total=\$((10 * \$1)) step=0
[ -s \$ck ] && step=\$(cat \$ck)
echo "start \$me \${SLURM_RESTART_COUNT:-0} \$(date +%s.%N) \$step" >> $W/events
save() {
  echo "signal \$me \$1 \$(date +%s.%N) \$step" >> $W/events
  if [ \$1 = USR1 ] && [ -e $W/ignore ]; then echo "ignored \$me \$(date +%s.%N)" >> $W/events; return; fi
  echo \$step > \$ck.tmp && mv \$ck.tmp \$ck
  echo "saved \$me \$(date +%s.%N) \$step" >> $W/events
  exit 143
}
trap 'save USR1' USR1
trap 'save TERM' TERM
while [ \$step -lt \$total ]; do sleep 0.1 & wait \$!; step=\$((step + 1)); done
echo "end \$me \${SLURM_RESTART_COUNT:-0} \$(date +%s.%N) \$step" >> $W/events
EOF
chmod +x "$W/ckpt.sh"
touch "$W/events" "$W/submits"
sub() { # ACCOUNT SECONDS
  local id
  id=$(sbatch --parsable -p staging -A "$1" -c1 --comment="gpus=1" -o /dev/null "$W/ckpt.sh" "$2") || return 1
  echo "$id $(now) $1" >> "$W/submits"
  echo "$id"
}
logtime() { # PATTERN: the last deepshared log line matching it, as epoch seconds
  local t
  t=$(grep -- "$1" "$W/deepshared.log" | tail -1 | cut -c1-23)
  [ -n "$t" ] && date -d "${t}Z" +%s.%N
}
ev() { # KIND JOB [FIELD]: field FIELD (default 4: the time) of the first event line KIND JOB
  awk -v k="$1" -v j="$2" -v f="${3:-4}" '$1 == k && $2 == j {print $f; exit}' "$W/events"
}
restart_ev() { # JOB: the time and step of its first start after a requeue
  awk -v j="$1" '$1 == "start" && $2 == j && $3 > 0 {print $4, $5; exit}' "$W/events"
}
start_daemon

# ta's 16 jobs fill the 16 GPUs: 8 guaranteed, 8 best effort on tb's idle quota
a=()
for i in $(seq 1 16); do a+=("$(sub ta 600)"); done
wait_running 90 "${a[@]}" && ok "ta's 16 jobs run, one per GPU" || bad "ta's jobs did not all start"
sleep 3

# 1. tb asks for a GPU: a BE job of ta is signalled, saves, ends, is requeued and resumes from its checkpoint
tsub=$(now)
b1=$(sub tb 15)
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 60 ] && ! grep -q '^saved ' "$W/events"; do sleep 0.2; done
v1=$(awk '$1 == "signal" {print $2; exit}' "$W/events")
if [ -n "$v1" ]; then
  ok "victim $v1 got USR1 ($(ev signal "$v1" 3)) and saved its checkpoint at step $(cat "$W/ckpt/$v1" 2>/dev/null)"
else
  bad "no job got the signal in 60 s; log: $(tail -5 "$W/deepshared.log")"
fi
t0=$(date +%s)
while [ -n "$v1" ] && [ $(($(date +%s) - t0)) -lt 90 ] && [ -z "$(restart_ev "$v1")" ]; do sleep 0.3; done
tsig_d=$(logtime "job $v1 signalled")
tsig_j=$(ev signal "$v1")
tsaved=$(ev saved "$v1" 3)
treq=$(logtime "job $v1 requeued: it ended")
read -r trst rstep <<< "$(restart_ev "$v1")"
saved_step=$(awk -v j="$v1" '$1 == "saved" && $2 == j {print $4; exit}' "$W/events")
if [ -n "$treq" ]; then ok "victim $v1 requeued after it ended (daemon: $(grep -m1 "job $v1 requeued" "$W/deepshared.log" | cut -c25-))"
else bad "victim $v1 not requeued after its end; log: $(grep "job $v1" "$W/deepshared.log" | tail -5)"; fi
if [ -n "${trst:-}" ] && [ "${rstep:-0}" -gt 0 ] && [ "$rstep" = "$saved_step" ]; then
  ok "victim $v1 restarted (SLURM_RESTART_COUNT > 0) from its checkpoint: step $rstep"
else
  bad "victim $v1 did not resume from its checkpoint (restart '${trst:-none}' at step '${rstep:-}', saved '${saved_step:-}')"
fi
if [ -n "${tsig_d:-}" ] && [ -n "${tsig_j:-}" ] && [ -n "${tsaved:-}" ] && [ -n "${treq:-}" ] && [ -n "${trst:-}" ]; then
  echo "FIGURES grace path (victim $v1): tb's submit -> signal sent $(calc "$tsig_d - $tsub") s; signal sent -> trap ran $(calc "$tsig_j - $tsig_d") s; -> checkpoint saved, exit $(calc "$tsaved - $tsig_j") s; exit -> requeued $(calc "$treq - $tsaved") s; requeued -> restarted $(calc "$trst - $treq") s (tb's job runs 15 s on the GPU); signal -> requeue $(calc "$treq - $tsig_d") s" >&2
  awk -v x="$(calc "$treq - $tsig_d")" -v g=$grace 'BEGIN {exit !(x < g)}' && ok "requeued before the grace of $grace s was over" || bad "requeue waited for the grace"
fi
[ "$(state "$b1")" = RUNNING ] || [ -n "$(ev end "$b1")" ] && ok "tb's job $b1 ran on the victim's GPU" || bad "tb's job $b1 did not run"
grep -q "rebuilding state" "$W/deepshared.log" && bad "the daemon rebuilt its state: $(grep -m1 'rebuilding state' "$W/deepshared.log")" || ok "no rebuild: the victim in its grace was expected"

# 2. a victim that ignores the signal is requeued when its grace is over (Slurm's requeue sends TERM: it saves then)
touch "$W/ignore"
b2=$(sub tb 15)
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 60 ] && ! grep -q '^ignored ' "$W/events"; do sleep 0.2; done
v2=$(awk '$1 == "ignored" {print $2; exit}' "$W/events")
t0=$(date +%s)
while [ -n "$v2" ] && [ $(($(date +%s) - t0)) -lt $((grace + 30)) ] && [ -z "$(logtime "job $v2 requeued: its grace is over")" ]; do sleep 0.3; done
if [ -n "$v2" ]; then
  tsig2=$(logtime "job $v2 signalled")
  treq2=$(logtime "job $v2 requeued: its grace is over")
  if [ -n "$treq2" ]; then
    x=$(calc "$treq2 - $tsig2")
    echo "FIGURES grace expiry (victim $v2 ignores USR1): signal -> requeue $x s (grace $grace s)" >&2
    awk -v x="$x" -v g=$grace 'BEGIN {exit !(x >= g && x < g + 3)}' && ok "victim $v2 ignored the signal and was requeued $x s after it (grace $grace s)" || bad "victim $v2 requeued $x s after its signal (grace $grace s)"
  else
    bad "victim $v2 not requeued at its grace's end; log: $(grep "job $v2" "$W/deepshared.log" | tail -5)"
  fi
  t0=$(date +%s)
  while [ $(($(date +%s) - t0)) -lt 20 ] && [ -z "$(awk -v j="$v2" '$1 == "saved" && $2 == j' "$W/events")" ]; do sleep 0.3; done
  awk -v j="$v2" '$1 == "signal" && $2 == j && $3 == "TERM"' "$W/events" | grep -q . && ok "Slurm's requeue sent it TERM and it saved then" || bad "victim $v2 got no TERM from the requeue"
else
  bad "no victim ignored the signal in 60 s"
fi
echo "FIGURES metrics: signals $(metric deepshare_preempt_signals_total), requeued after end $(metric 'deepshare_grace_requeues_total{after="ended"}'), at grace end $(metric 'deepshare_grace_requeues_total{after="grace"}'), in grace now $(metric deepshare_grace_victims)" >&2
[ "$(metric deepshare_preempt_signals_total)" -ge 2 ] 2>/dev/null && ok "deepshare_preempt_signals_total counts the signals" || bad "signals not counted"

[ $fails = 0 ] && log "all checks passed" || log "$fails checks failed (work dir $W)"
exit $((fails > 0))
