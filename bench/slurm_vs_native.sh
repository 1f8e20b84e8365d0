#!/usr/bin/env bash
# slurm_vs_native.sh: deepshared against Slurm's own multi-tenant setups on the live local cluster (4 nodes x
# 4 fake GPUs), and the simulator checked against the live run. One workload (bench/native/jobs.csv: 288
# jobs of 4 tenants over a 10-hour day, offered 1.2x the cluster) is replayed, compressed COMPRESS times
# (60: a trace minute per wall second, about 12 minutes a run), under
#   slurm-quota    Slurm alone: fair-share + backfill, each account capped at its quota (GrpTRES=gres/gpu)
#   slurm-borrow   Slurm alone: no cap; jobs beyond the quota routed (job_submit.lua) into a QOS that
#                  preempt/qos requeues
#   deepshared     the daemon, policy deepshare, same tenants and quotas
# one at a time, each under the cluster lock (released between runs), then simulated with the same
# tenants and nodes (deepshare and the baselines, pooled) and written as one report in compare's style:
# OUT/table.md (the table, latencies and the fidelity check), OUT/report/ (summary.csv/json, plots,
# index.html), OUT/<configuration>/ (each replay's folder, see 'deepshare replay-live --help').
# A benchmark, not a CI test: about 45 minutes. Needs root.
# usage: bench/slurm_vs_native.sh [OUT]      (default bench-native-out)
# env: DS_BUILD (build dir, default build-native), COMPRESS (60), VARIANTS (the three above),
#      TRACE, TENANTS (default bench/native/{jobs,tenants}.csv), WINDOW (0:36000, trace seconds),
#      REPORT_ONLY=1 (no replay: rebuild the report from OUT's replays)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-bench-native-out}" && cd "${1:-bench-native-out}" && pwd)
build=${DS_BUILD:-$root/build-native}
compress=${COMPRESS:-60}
variants=${VARIANTS:-slurm-quota slurm-borrow deepshared}
trace=${TRACE:-$root/bench/native/jobs.csv}
tenants=${TENANTS:-$root/bench/native/tenants.csv}
window=${WINDOW:-0:36000}
cycle=60                  # the simulator's QAD cycle, trace seconds; deepshared's is cycle / COMPRESS
log() { echo "slurm_vs_native: $*" >&2; }
[ "$(id -u)" -eq 0 ] || { log "must run as root (the cluster's daemons, jobs as root)"; exit 1; }

if [ -z "${REPORT_ONLY:-}" ]; then
  bash "$root/scripts/deps.sh" --with-accounting
  if [ ! -x "$build/deepshared" ] || [ ! -x "$build/deepshare" ]; then
    cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
    cmake --build "$build" -j"$(nproc)" --target deepshare deepshared >/dev/null
  fi
fi
ds=$build/deepshare
[ -x "$ds" ] || { log "$ds is not built"; exit 1; }

# one replay: stop whatever runs, start the variant, register the tenants, (start deepshared), replay, stop.
# Runs under the cluster lock (scripts/with-cluster.sh), so others' end-to-end tests wait for it.
replay_one() {
  local v=$1 dir=$out/$1
  rm -rf "$dir"; mkdir -p "$dir"
  "$root/deploy/slurm/stop.sh"
  CLEAN=1 "$root/deploy/slurm/start.sh" --variant "$v" > "$dir/start.log" 2>&1 || { cat "$dir/start.log" >&2; return 1; }
  export SLURM_CONF=$root/deploy/slurm/variants/$v/slurm.conf
  "$root/deploy/slurm/accounting.sh" tenants "$tenants"
  local dpid="" port=$((20000 + RANDOM % 20000))
  if [ "$v" = deepshared ]; then
    # the daemon runs in wall seconds: its cycle is the simulator's 60 s compressed; predictions start from
    # the workload's mean run time compressed, and learn from the jobs that finish
    local mean; mean=$(awk -F, 'NR > 1 {s += $5; n++} END {printf "%.1f", s / n / '"$compress"'}' "$trace")
    {
      echo "policy = deepshare"
      echo "cycle = $(awk "BEGIN {print $cycle / $compress}")"
      echo "poll = 0.25"
      echo "verbose = 1"  # per-job lines (dispatch, requeue, holds) for the analysis of the replay
      echo "dispatch_timeout = 30"
      echo "slurm_conf = $SLURM_CONF"
      echo "gpu_sharing = 0"
      echo "k = 1"
      echo "journal = $dir/journal.csv"
      echo "default_runtime = $mean"
      echo "listen = 127.0.0.1:$port"
      tail -n +2 "$tenants" | tr -d '\r' | awk -F, 'NF >= 2 {print "tenant", tolower($1), $2}'
    } > "$dir/deepshared.conf"
    "$build/deepshared" -c "$dir/deepshared.conf" > "$dir/deepshared.log" 2>&1 &
    dpid=$!
    for _ in $(seq 1 100); do
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
      sleep 0.1
    done
  fi
  local rc=0
  "$ds" replay-live --variant "$v" --compress "$compress" --trace "$trace" --vc-config "$tenants" \
    --window "$window" --cycle "$cycle" --out "$dir" > "$dir/replay.txt" || rc=$?
  cat "$dir/replay.txt"
  if [ -n "$dpid" ]; then
    # the daemon's own figures: pass latency (read Slurm, engine, apply) and submit-to-running
    { exec 3<>"/dev/tcp/127.0.0.1/$port" && printf 'GET /metrics HTTP/1.0\r\n\r\n' >&3 && cat <&3; } \
      > "$dir/metrics.txt" 2>/dev/null || true
    kill "$dpid" 2>/dev/null; wait "$dpid" 2>/dev/null || true
  fi
  "$root/deploy/slurm/stop.sh"
  return $rc
}

if [ -z "${REPORT_ONLY:-}" ]; then
  for v in $variants; do
    log "$v: replaying $(($(wc -l < "$trace") - 1)) jobs, x$compress ($(date +%T))"
    export -f replay_one log
    export root out build ds compress trace tenants window cycle
    "$root/scripts/with-cluster.sh" bash -c "replay_one $v" || log "$v: replay failed (rc $?), see $out/$v"
  done
fi

# ---- the report: simulations of the same workload and cluster next to the observed runs
obs=()
for v in $variants; do [ -s "$out/$v/observed.csv" ] && obs+=(--observed "live:$v=$out/$v/observed.csv"); done
"$ds" compare --trace "$trace" --vc-config "$tenants" --mode pooled --gpus-per-node 4 --pool-nodes 4 --k 1 --no-cpu-check \
  --window "$window" --cycle "$cycle" --policies deepshare,fifo,sjf,tiresias "${obs[@]}" --out "$out/report" --quiet || true
sum=$out/report/summary.csv
[ -s "$sum" ] || { log "no summary: $sum"; exit 1; }

# hand-off latency (a GPU released on a node to the start of a job that was waiting), per replay
handoff() { [ -s "$out/$1/live.csv" ] && awk -F, -f "$root/bench/native/handoff.awk" "$out/$1/live.csv"; }
# The simulator with the live cluster's latency: every job holds its GPUs the deepshared replay's median
# hand-off latency (x COMPRESS) longer, the GPU time a release costs before the next job runs there.
lat_sim=""
if [ -s "$out/deepshared/live.csv" ]; then
  h=$(handoff deepshared | awk '{print $3}')
  extra=$(awk "BEGIN {printf \"%d\", $h * $compress + 0.5}")
  awk -F, -v x="$extra" 'BEGIN {OFS = ","} NR == 1 {print; next} {$5 += x; print}' "$trace" > "$out/jobs-latency.csv"
  "$ds" simulate --trace "$out/jobs-latency.csv" --vc-config "$tenants" --mode pooled --gpus-per-node 4 --pool-nodes 4 \
    --k 1 --no-cpu-check --window "$window" --cycle "$cycle" --policy deepshare --json "$out/sim-latency.json" --quiet \
    2>/dev/null && lat_sim=$out/sim-latency.json
fi
metric() { # FILE NAME{labels}: a value of the Prometheus text
  awk -v k="$2" '$1 == k {print $2}' "$1" 2>/dev/null | head -1
}
jsonnum() { sed -n "s/.*\"$2\": \\([-0-9.e+]*\\).*/\\1/p" "$1" 2>/dev/null | head -1; }
{
  echo "# deepshared vs native Slurm on the local cluster"
  echo
  echo "Workload: \`$(basename "$trace")\` ($(($(wc -l < "$trace") - 1)) jobs, tenants $(tail -n +2 "$tenants" | tr -d '\r' | awk -F, '{printf "%s%s=%s", (NR > 1 ? ", " : ""), $1, $2}') GPUs), 4 nodes x 4 GPUs,"
  echo "replayed x$compress (1 s of wall time = $compress s of trace time). Times in trace seconds; utilization window $window."
  echo
  echo "| configuration | avg queue (s) | p99 queue (s) | avg JCT (s) | GPU alloc | QAD compliance | preemptions | dispatch p50 / p90 (wall s) | hand-off p50 (wall s) |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  tail -n +2 "$sum" | while IFS=, read -r pol mode jobs ajct p50j p99j aq p50q p99q p999q mk alloc sm gm pre coj qm qc; do
    lat="-" ho="-"
    case "$pol" in live:*)
      lj=$out/${pol#live:}/live.json
      [ -s "$lj" ] && lat=$(printf '%.2f / %.2f' "$(jsonnum "$lj" dispatch_p50_s)" "$(jsonnum "$lj" dispatch_p90_s)")
      ho=$(handoff "${pol#live:}" | awk '{printf "%.2f", $3}')
      name="$pol (live, $jobs jobs)";;
    *) name="sim:$pol (simulated)";;
    esac
    printf '| %s | %.0f | %.0f | %.0f | %.3f | %.3f | %s | %s | %s |\n' "$name" "$aq" "$p99q" "$ajct" "$alloc" "$qc" "$pre" "$lat" "$ho"
  done
  echo
  # fidelity: the simulator's deepshare vs the live deepshared
  live_row=$(awk -F, '$1 == "live:deepshared"' "$sum")
  sim_row=$(awk -F, '$1 == "deepshare"' "$sum")
  if [ -n "$live_row" ] && [ -n "$sim_row" ]; then
    lq=$(echo "$live_row" | cut -d, -f7); sq=$(echo "$sim_row" | cut -d, -f7)
    la=$(echo "$live_row" | cut -d, -f12); sa=$(echo "$sim_row" | cut -d, -f12)
    echo "Fidelity (simulated deepshare vs live deepshared): avg queueing delay $(printf '%.0f' "$sq") s vs $(printf '%.0f' "$lq") s" \
      "($(awk "BEGIN {printf \"%+.1f\", ($sq - $lq) / $lq * 100}")%), GPU allocation $(printf '%.3f' "$sa") vs $(printf '%.3f' "$la")" \
      "($(awk "BEGIN {printf \"%+.1f\", ($sa - $la) / $la * 100}")%); target within 15%."
    if [ -n "$lat_sim" ]; then
      lsq=$(jsonnum "$lat_sim" avg_queue); lsa=$(jsonnum "$lat_sim" gpu_alloc)
      echo "With the live hand-off latency (each job holding its GPUs $extra trace s longer: the deepshared replay's median"
      echo "hand-off, $h wall s, x$compress), the simulator gives avg queueing delay $(printf '%.0f' "$lsq") s" \
        "($(awk "BEGIN {printf \"%+.1f\", ($lsq - $lq) / $lq * 100}")% from live) and GPU allocation $(printf '%.3f' "$lsa")" \
        "($(awk "BEGIN {printf \"%+.1f\", ($lsa - $la) / $la * 100}")%; it counts the held seconds as allocated)."
    fi
    echo
  fi
  # fidelity of the simulated Slurm setups (policies slurm-quota, slurm-borrow, docs/peers.md) against their live
  # runs: the live settings in trace seconds (bench/native/slurm-sim.conf), true durations for the time limits
  # (what the replayer knows), without and with the live run's median hand-off latency held by every job
  for v in slurm-quota slurm-borrow; do
    lrow=$(awk -F, -v p="live:$v" '$1 == p' "$sum")
    [ -n "$lrow" ] || continue
    lq=$(echo "$lrow" | cut -d, -f7); la=$(echo "$lrow" | cut -d, -f12)
    h=$(handoff "$v" | awk '{print $3}')
    x=$(awk "BEGIN {printf \"%d\", ${h:-0} * $compress + 0.5}")
    awk -F, -v x="$x" 'BEGIN {OFS = ","} NR == 1 {print; next} {$5 += x; print}' "$trace" > "$out/jobs-latency-$v.csv"
    line="Fidelity (simulated $v vs live $v):"
    for tr in "$trace" "$out/jobs-latency-$v.csv"; do
      "$ds" simulate --trace "$tr" --vc-config "$tenants" --mode pooled --gpus-per-node 4 --pool-nodes 4 --k 1 --no-cpu-check \
        --window "$window" --cycle "$cycle" --policy "$v" --predictor oracle --config "$root/bench/native/slurm-sim.conf" \
        --json "$out/sim-$v.json" --quiet 2>/dev/null || continue
      sq=$(jsonnum "$out/sim-$v.json" avg_queue); sa=$(jsonnum "$out/sim-$v.json" gpu_alloc)
      what=$([ "$tr" = "$trace" ] && echo "as simulated" || echo "with the hand-off ($h wall s = $x trace s) added to every job")
      line="$line $what: avg queue $(printf '%.0f' "$sq") s vs $(printf '%.0f' "$lq") s ($(awk "BEGIN {printf \"%+.1f\", ($sq - $lq) / $lq * 100}")%), GPU allocation $(printf '%.3f' "$sa") vs $(printf '%.3f' "$la") ($(awk "BEGIN {printf \"%+.1f\", ($sa - $la) / $la * 100}")%);"
    done
    echo "$line target within 15%."
    echo
  done
  # verdict: deepshared against both native configurations
  q() { awk -F, -v p="$1" '$1 == p {print $7}' "$sum"; }
  c() { awk -F, -v p="$1" '$1 == p {print $18}' "$sum"; }
  dq=$(q live:deepshared); dc=$(c live:deepshared)
  qq=$(q live:slurm-quota); qc_=$(c live:slurm-quota); bq=$(q live:slurm-borrow)
  if [ -n "$dq" ] && [ -n "$qq" ] && [ -n "$bq" ]; then
    beats=$(awk "BEGIN {print ($dq < $qq && $dq < $bq) ? 1 : 0}")
    keeps=$(awk "BEGIN {print ($dc >= $qc_) ? 1 : 0}")
    echo "Verdict: deepshared avg queue $(printf '%.0f' "$dq") s vs slurm-quota $(printf '%.0f' "$qq") s and slurm-borrow $(printf '%.0f' "$bq") s:" \
      "$([ "$beats" = 1 ] && echo "lower than both" || echo "NOT lower than both");" \
      "QAD compliance $(printf '%.3f' "$dc") vs slurm-quota's $(printf '%.3f' "$qc_"): $([ "$keeps" = 1 ] && echo "at least as high" || echo "LOWER")."
    echo
  fi
  echo "Latencies. Dispatch: submit to start of the jobs that had room when submitted (their tenant under quota"
  echo "with them and a node with their GPUs free), wall seconds (replay-live's live.json). Hand-off: a run on a"
  echo "node ending to the start of a job that was already waiting, on that node (bench/native/handoff.awk;"
  echo "its mean also counts waits by policy, e.g. a quota cap or a requeued job's begin time, so the median is shown)."
  for v in $variants; do
    lj=$out/$v/live.json
    [ -s "$lj" ] || continue
    echo "- $v: $(jsonnum "$lj" dispatch_jobs) such jobs, dispatch p50 $(jsonnum "$lj" dispatch_p50_s) s, p90 $(jsonnum "$lj" dispatch_p90_s) s, max $(jsonnum "$lj" dispatch_max_s) s; submit lag p50 $(jsonnum "$lj" submit_lag_p50_s) s, max $(jsonnum "$lj" submit_lag_max_s) s; $(jsonnum "$lj" requeues) requeues"
  done
  m=$out/deepshared/metrics.txt
  if [ -s "$m" ]; then
    echo "- deepshared pass (read Slurm, run the engine, apply): p50 $(metric "$m" 'deepshare_pass_latency_recent_seconds{quantile="0.5"}') s," \
      "p99 $(metric "$m" 'deepshare_pass_latency_recent_seconds{quantile="0.99"}') s over $(metric "$m" deepshare_pass_latency_seconds_count) passes;" \
      "cycle $(awk "BEGIN {print $cycle / $compress}") s, poll 0.25 s; submit to running p50 $(metric "$m" 'deepshare_submit_to_running_recent_seconds{quantile="0.5"}') s"
  fi
  echo "- Slurm (slurm-quota, slurm-borrow): backfill every 1 s (bf_interval), main scheduler on events and every"
  echo "  60 s, priorities (fair share) recomputed every 60 s (PriorityCalcPeriod=1, Slurm's floor)."
} > "$out/table.md"
cat "$out/table.md"
log "report: $out/table.md, $out/report/index.html"
