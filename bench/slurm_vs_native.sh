#!/usr/bin/env bash
# slurm_vs_native.sh: deepshared against Slurm's own multi-tenant setups on the live local cluster (4 nodes x
# 4 fake GPUs), repeated, and the simulator beside each. One workload (default bench/native/jobs.csv: 288 jobs
# of 4 tenants over a 10-hour day, offered 1.16x the cluster; bench/native/jobs-4h.csv is the same contention
# in 4 hours) is replayed, compressed COMPRESS times (60: a trace minute per wall second), under
#   slurm-quota    Slurm alone: fair-share + backfill, each account capped at its quota (GrpTRES=gres/gpu)
#   slurm-borrow   Slurm alone: no cap; jobs beyond the quota routed (job_submit.lua) into a QOS that
#                  preempt/qos requeues
#   deepshared     the daemon, policy deepshare, same tenants and quotas
# RUNS times each, interleaved (A B C A B C ...: drift between hours falls on every configuration), each
# replay under the cluster lock (released between replays, so others' tests can run in between). Then the
# same workload is simulated on the same cluster (deepshare, the baselines, and the simulated twins of the
# native setups, slurm-quota and slurm-borrow, where this build has them), and one report is written:
# OUT/table.md (per configuration the mean and 95% interval over runs, the simulator's figure beside it,
# latencies, fidelity, verdict), OUT/runs.csv (every run's figures), OUT/report/ (compare's summary.csv/json,
# plots, index.html), OUT/<configuration>/run-<i>/ (each replay's folder, see 'deepshare replay-live --help').
# A benchmark, not a CI test: 12-20 minutes per replay of the 10-hour day at x60, 6-8 of the 4-hour one. Needs root.
# usage: bench/slurm_vs_native.sh [OUT]      (default bench-native-out)
# env: DS_BUILD (build dir, default build-native), COMPRESS (60), RUNS (1), VARIANTS (the three above),
#      TRACE, TENANTS (default bench/native/{jobs,tenants}.csv), WINDOW (0:SPAN, the trace's last submit
#      rounded up to the hour), POLL (deepshared's poll, 0.05 s), REPORT_ONLY=1 (no replay: the report from
#      OUT's replays), RUN_FROM (first run index, 1: RUN_FROM=3 RUNS=2 adds runs 3 and 4 to OUT: RUNS counts the runs), SIM_SEEDS (10: the
#      simulated twins of deepshared with the live costs, docs/native-slurm.md "What the simulator models"),
#      PIN_WHOLE (deepshared's pin_whole_gpus, 0: Slurm picks a whole-GPU job's GPUs, nothing is pinned), REPIN
#      (deepshared's repin, 0; it matters only with PIN_WHOLE=1), RESTART_PINNED (the twins' --restart-pinned: 0
#      with PIN_WHOLE=0; with PIN_WHOLE=1, 1, 0, 3 for REPIN 0, 1, 2), DS_POLICY (policy parameters of deepshared
#      and of every simulated deepshare beside it, "KEY=VALUE ...", e.g. "quota-yield=1"; default none: the policy's
#      defaults)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-bench-native-out}" && cd "${1:-bench-native-out}" && pwd)
build=${DS_BUILD:-$root/build-native}
compress=${COMPRESS:-60}
runs=${RUNS:-1}
run_from=${RUN_FROM:-1}
poll=${POLL:-0.05}
repin=${REPIN:-0}
pin_whole=${PIN_WHOLE:-0}
ds_policy=${DS_POLICY:-}
for kv in $ds_policy; do
  case $kv in [a-z]*=?*) ;; *) echo "slurm_vs_native: DS_POLICY: '$kv' is not KEY=VALUE" >&2; exit 2 ;; esac
done
# the same parameters as simulate's flags (--KEY VALUE), for the simulated deepshare beside the live runs; both have
# batch evidence (docs/predictors.md), the twin at the simulator's --batch-gap (60 trace s), the daemon at the same
# gap compressed (batch_gap below)
ds_flags=()
for kv in $ds_policy; do ds_flags+=("--${kv%%=*}" "${kv#*=}"); done
variants=${VARIANTS:-slurm-quota slurm-borrow deepshared}
trace=${TRACE:-$root/bench/native/jobs.csv}
tenants=${TENANTS:-$root/bench/native/tenants.csv}
span=$(awk -F, 'NR > 1 && $4 > m {m = $4} END {printf "%d", (int(m / 3600) + 1) * 3600}' "$trace")
window=${WINDOW:-0:$span}
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
  local v=$1 dir=$out/$1/run-$2
  rm -rf "$dir"; mkdir -p "$dir"
  "$root/deploy/slurm/stop.sh"
  CLEAN=1 "$root/deploy/slurm/start.sh" --variant "$v" > "$dir/start.log" 2>&1 || { cat "$dir/start.log" >&2; return 1; }
  export SLURM_CONF=$root/deploy/slurm/variants/$v/slurm.conf
  "$root/deploy/slurm/accounting.sh" tenants "$tenants"
  local dpid="" port=$((20000 + RANDOM % 12000))
  if [ "$v" = deepshared ]; then
    # the daemon runs in wall seconds: its cycle is the simulator's 60 s compressed; predictions start from
    # the workload's mean run time compressed, and learn from the jobs that finish; its batches' gap is the
    # simulator's 60 s compressed, in whole seconds as Slurm's submit times are (at least 1: 0 is off)
    local mean; mean=$(awk -F, 'NR > 1 {s += $5; n++} END {printf "%.1f", s / n / '"$compress"'}' "$trace")
    local gap; gap=$(awk "BEGIN {g = int(60 / $compress + 0.5); print g < 1 ? 1 : g}")
    {
      echo "policy = deepshare"
      echo "cycle = $(awk "BEGIN {print $cycle / $compress}")"
      echo "poll = $poll"
      echo "verbose = 1"  # per-job lines (dispatch, requeue, holds) for the analysis of the replay
      echo "dispatch_timeout = 30"
      echo "slurm_conf = $SLURM_CONF"
      echo "gpu_sharing = 0"
      echo "repin = $repin"
      echo "pin_whole_gpus = $pin_whole"
      echo "k = 1"
      echo "journal = $dir/journal.csv"
      echo "default_runtime = $mean"
      echo "batch_gap = $gap"
      echo "listen = 127.0.0.1:$port"
      for kv in $ds_policy; do echo "policy.${kv%%=*} = ${kv#*=}"; done
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
  export -f replay_one log
  export root out build ds compress trace tenants window cycle poll repin pin_whole ds_policy
  # munged is started by the first replay and kept between them (stop.sh leaves it); a bench that started it
  # stops it at the end, so that it leaves no daemon behind
  munge_before=0
  [ -f /run/munge/munged.pid ] && kill -0 "$(cat /run/munge/munged.pid)" 2>/dev/null && munge_before=1
  for r in $(seq "$run_from" "$((run_from + runs - 1))"); do
    for v in $variants; do
      log "$v run $r: replaying $(($(wc -l < "$trace") - 1)) jobs, x$compress ($(date +%T))"
      "$root/scripts/with-cluster.sh" bash -c "replay_one $v $r" || log "$v run $r: replay failed (rc $?), see $out/$v/run-$r"
    done
  done
  [ "$munge_before" = 1 ] || "$root/deploy/slurm/stop.sh" --munge || log "munged not stopped"
fi

# ---- the report: every run's figures, the simulator's on the same workload and cluster, per configuration
# the mean and a 95% interval over the runs
# The simulator sees what the live schedulers see: each job's time limit as the replayer submits it (sbatch
# --time = ceil(2 x (run time + restart overhead of 40 trace s) / compress / 60) wall minutes; src/cli/replay_live.c),
# in trace seconds, in the trace's time_limit column (docs/predictors.md, "Time limits").
simtrace=$out/trace-limits.csv
awk -F, -v OFS=, -v x="$compress" 'NR == 1 {print $0, "time_limit"; next}
  {w = 2 * ($5 + 40) / x / 60; m = int(w); if (m < w) m++; if (m < 1) m = 1; print $0, m * 60 * x}' "$trace" > "$simtrace"
jsonnum() { sed -n "s/.*\"$2\": \([-0-9.e+]*\).*/\1/p" "$1" 2>/dev/null | head -1; }
metric() { # FILE NAME{labels}: a value of the Prometheus text
  awk -v k="$2" '$1 == k {print $2}' "$1" 2>/dev/null | head -1
}
# hand-off latency (a GPU released on a node to the start of a job that was waiting), of one replay folder
handoff() { [ -s "$1/live.csv" ] && awk -F, -f "$root/bench/native/handoff.awk" "$1/live.csv"; }
runs_csv=$out/runs.csv
echo "configuration,run,jobs,avg_queue,p99_queue,avg_jct,gpu_alloc,qad_compliance,preemptions,dispatch_p50,dispatch_p90,handoff_p50" > "$runs_csv"
obs=()
for v in $variants; do
  for d in "$out/$v"/run-*; do
    [ -s "$d/summary.json" ] && [ -s "$d/observed.csv" ] || continue
    r=${d##*/run-}
    lj=$d/live.json
    printf '%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$v" "$r" "$(jsonnum "$d/summary.json" jobs)" \
      "$(jsonnum "$d/summary.json" avg_queue)" "$(jsonnum "$d/summary.json" p99_queue)" "$(jsonnum "$d/summary.json" avg_jct)" \
      "$(jsonnum "$d/summary.json" gpu_alloc)" "$(jsonnum "$d/summary.json" qad_compliance)" "$(jsonnum "$d/summary.json" preemptions)" \
      "$(jsonnum "$lj" dispatch_p50_s)" "$(jsonnum "$lj" dispatch_p90_s)" "$(handoff "$d" | awk '{print $3}')" >> "$runs_csv"
    obs+=(--observed "live:$v-r$r=$d/observed.csv")
  done
done
[ "$(wc -l < "$runs_csv")" -gt 1 ] || { log "no completed replay under $out"; exit 1; }
# the simulated twins of the native setups, where this build has them (docs/peers.md, "Slurm")
twins=""
for p in slurm-quota slurm-borrow; do
  "$ds" simulate --trace "$simtrace" --vc-config "$tenants" --mode pooled --gpus-per-node 4 --pool-nodes 4 --k 1 --no-cpu-check \
    --window "$window" --cycle "$cycle" --policy "$p" --quiet >/dev/null 2>&1 && twins="$twins,$p"
done
"$ds" compare --trace "$simtrace" --vc-config "$tenants" --mode pooled --gpus-per-node 4 --pool-nodes 4 --k 1 --no-cpu-check \
  --window "$window" --cycle "$cycle" --policies "deepshare,fifo,sjf,tiresias$twins" "${ds_flags[@]}" "${obs[@]}" --out "$out/report" --quiet || true
sum=$out/report/summary.csv
[ -s "$sum" ] || { log "no summary: $sum"; exit 1; }
# sim FIELD POLICY: the simulator's figure (summary.csv: 4 avg_jct, 7 avg_queue, 9 p99_queue, 12 gpu_alloc, 15 preemptions, 18 compliance)
sim() { awk -F, -v p="$2" -v f="$1" '$1 == p {print $f}' "$sum"; }
# stat CONFIG COLUMN [FILE]: "n mean half-width" of a column of runs.csv or FILE (95% t interval; half-width 0 for one run)
stat() {
  awk -F, -v c="$1" -v k="$2" '
    BEGIN { split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262 2.228 2.201 2.179 2.160 2.145 2.131", t, " ") }
    NR > 1 && $1 == c && $k != "" { n++; x[n] = $k; s += $k }
    END {
      if (!n) { print 0, "nan", "nan"; exit }
      m = s / n; v = 0
      for (i = 1; i <= n; i++) v += (x[i] - m) ^ 2
      h = n > 1 ? (n - 1 <= 15 ? t[n - 1] : 2.0) * sqrt(v / (n - 1) / n) : 0
      printf "%d %.6g %.6g\n", n, m, h
    }' "${3:-$runs_csv}"
}
# The simulated twin of deepshared with the live cluster's costs (docs/native-slurm.md, "What the simulator
# models"): Slurm's restart rules as deepshared meets them (--restart-pinned RESTART_PINNED: 0 with the daemon's
# pin_whole_gpus = 0 (PIN_WHOLE, the default): it asks Slurm for N GPUs of a node and Slurm picks them, so a
# requeued job restarts on any; with PIN_WHOLE=1, 1 with the daemon's repin = 0 (REPIN, the default), every job
# only on the GPU indices of its first start; 3 with REPIN=2, a job restarts so as best effort only, as guaranteed
# anywhere; 0 with REPIN=1:
# the daemon here runs with gpu_sharing = 0, so it has no shard job, the only kind Slurm 22.05 always restarts on
# its first index, and repin pins a whole-GPU job anew at each dispatch; --requeue-settle: the daemon's 3 wall s
# after a requeue, x COMPRESS), and,
# one seed per twin, each job's submit lag and start latency (decision -> script start; at most 5 s, beyond that
# a start was undone, not slow) drawn from the live deepshared runs' own, in trace seconds; the latency holds the
# job's GPUs, so it is added to its run time. SIM_SEEDS twins (10): a mean and an interval like the live runs'.
seeds=${SIM_SEEDS:-10}
costs_csv=$out/sim-costs.csv
echo "configuration,run,jobs,avg_queue,p99_queue,avg_jct,gpu_alloc,qad_compliance,preemptions" > "$costs_csv"
lagpool=$out/sim-costs-lag.txt latpool=$out/sim-costs-latency.txt
: > "$lagpool"; : > "$latpool"
for d in "$out"/deepshared/run-*; do
  [ -s "$d/summary.json" ] && [ -s "$d/submitted.csv" ] || continue
  awk -F, 'NR > 1 && $6 != "" {printf "%.6f\n", $6 - $5}' "$d/submitted.csv" >> "$lagpool"
  TZ=UTC awk -v each=1 -f "$root/bench/native/dispatch_steps.awk" "$d/deepshared.log" "$d/live.csv" 2>/dev/null |
    awk '$1 >= 0 && $1 <= 5' >> "$latpool"
done
if [ -s "$lagpool" ] && [ -s "$latpool" ]; then
  for k in $(seq 1 "$seeds"); do
    awk -F, -v seed="$k" -v x="$compress" -v lagf="$lagpool" -v latf="$latpool" '
      BEGIN { OFS = ","; srand(seed); while ((getline v < lagf) > 0) lag[nl++] = v; while ((getline v < latf) > 0) lat[nt++] = v }
      NR == 1 { print; next }
      { $4 += int(lag[int(rand() * nl)] * x + 0.5); $5 += int(lat[int(rand() * nt)] * x + 0.5); print }' "$simtrace" > "$out/sim-costs-trace.csv"
    # deepshare-costs: lags, latencies and restart rules; deepshare-lags: lags and latencies only (what the rules add)
    for c in costs lags; do
      rules=(--restart-pinned "${RESTART_PINNED:-$(case $pin_whole$repin in 0*) echo 0 ;; 10) echo 1 ;; 11) echo 0 ;; *) echo 3 ;; esac)}" --requeue-settle $((3 * compress)))
      [ "$c" = costs ] || rules=()
      "$ds" simulate --trace "$out/sim-costs-trace.csv" --vc-config "$tenants" --mode pooled --gpus-per-node 4 --pool-nodes 4 --k 1 \
        --no-cpu-check --window "$window" --cycle "$cycle" --policy deepshare "${rules[@]}" "${ds_flags[@]}" --json "$out/sim-costs.json" --quiet \
        2>/dev/null || continue
      j=$out/sim-costs.json
      printf 'deepshare-%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$c" "$k" "$(jsonnum "$j" jobs)" "$(jsonnum "$j" avg_queue)" "$(jsonnum "$j" p99_queue)" \
        "$(jsonnum "$j" avg_jct)" "$(jsonnum "$j" gpu_alloc)" "$(jsonnum "$j" qad_compliance)" "$(jsonnum "$j" preemptions)" >> "$costs_csv"
    done
  done
fi
twin_of() { case $1 in deepshared) echo deepshare;; *) echo "$1";; esac; }
# cell CONFIG COLUMN SIMFIELD FORMAT: "mean ± half (sim X)"
cell() {
  local st n m h sv
  st=$(stat "$1" "$2"); n=${st%% *}; m=$(echo "$st" | cut -d' ' -f2); h=$(echo "$st" | cut -d' ' -f3)
  [ "$n" = 0 ] && { printf -- '-'; return; }
  if [ "$n" -gt 1 ]; then printf "$4 ± $4" "$m" "$h"; else printf "$4" "$m"; fi
  if [ -n "$3" ]; then sv=$(sim "$3" "$(twin_of "$1")"); [ -n "$sv" ] && printf " (sim $4)" "$sv"; fi
}
{
  echo "# deepshared vs native Slurm on the local cluster"
  echo
  echo "Workload: \`$(basename "$trace")\` ($(($(wc -l < "$trace") - 1)) jobs, tenants $(tail -n +2 "$tenants" | tr -d '\r' | awk -F, '{printf "%s%s=%s", (NR > 1 ? ", " : ""), $1, $2}') GPUs), 4 nodes x 4 GPUs,"
  echo "replayed x$compress (1 s of wall time = $compress s of trace time), runs interleaved; deepshared polls every $poll s."
  echo "Times in trace seconds; utilization window $window. Each cell: mean ± half-width of the 95% t interval over the runs,"
  echo "and in parentheses the simulator's figure for the configuration's twin (deepshared: deepshare; the native setups:"
  echo "their simulated models slurm-quota / slurm-borrow, where this build has them)."
  echo
  echo "| configuration | runs | avg queue (s) | p99 queue (s) | avg JCT (s) | GPU alloc | QAD compliance | preemptions | dispatch p50 / p90 (wall s) | hand-off p50 (wall s) |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
  for v in $variants; do
    n=$(stat "$v" 4 | cut -d' ' -f1)
    [ "$n" -gt 0 ] || continue
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s / %s | %s |\n' "$v" "$n" "$(cell "$v" 4 7 %.0f)" "$(cell "$v" 5 9 %.0f)" \
      "$(cell "$v" 6 4 %.0f)" "$(cell "$v" 7 12 %.3f)" "$(cell "$v" 8 18 %.3f)" "$(cell "$v" 9 15 %.1f)" \
      "$(cell "$v" 10 "" %.2f)" "$(cell "$v" 11 "" %.2f)" "$(cell "$v" 12 "" %.2f)"
  done
  read -r cn _ <<< "$(stat deepshare-costs 4 "$costs_csv")"
  if [ "$cn" -gt 0 ]; then
    cc() { read -r _ m h <<< "$(stat deepshare-costs "$1" "$costs_csv")"; printf "$2 ± $2" "$m" "$h"; }
    printf '| deepshare simulated with the live costs (%s seeds) | %s | %s | %s | %s | %s | %s | %s | - | - |\n' "$cn" "$cn" \
      "$(cc 4 %.0f)" "$(cc 5 %.0f)" "$(cc 6 %.0f)" "$(cc 7 %.3f)" "$(cc 8 %.3f)" "$(cc 9 %.1f)"
  fi
  echo
  echo "Simulated on the same workload and cluster (pooled):"
  echo
  echo "| policy | avg queue (s) | p99 queue (s) | avg JCT (s) | GPU alloc | QAD compliance | preemptions |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  awk -F, 'NR > 1 && $1 !~ /^live:/ {printf "| %s | %.0f | %.0f | %.0f | %.3f | %.3f | %s |\n", $1, $7, $9, $4, $12, $18, $15}' "$sum"
  echo
  echo "Every run (runs.csv):"
  echo
  echo "| configuration | run | avg queue (s) | p99 queue (s) | avg JCT (s) | GPU alloc | QAD compliance | preemptions | dispatch p50 / p90 (wall s) |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|"
  awk -F, 'NR > 1 {printf "| %s | %s | %.0f | %.0f | %.0f | %.3f | %.3f | %s | %.2f / %.2f |\n", $1, $2, $4, $5, $6, $7, $8, $9, $10, $11}' "$runs_csv"
  echo
  # fidelity: the simulator's deepshare against the mean of the live deepshared runs (target: within 10%)
  lq=$(stat deepshared 4 | cut -d' ' -f2); la=$(stat deepshared 7 | cut -d' ' -f2)
  sq=$(sim 7 deepshare); sa=$(sim 12 deepshare)
  if [ "$lq" != nan ] && [ -n "$sq" ]; then
    echo "Fidelity (simulated deepshare vs the live deepshared mean): avg queueing delay $(printf '%.0f' "$sq") s vs $(printf '%.0f' "$lq") s" \
      "($(awk "BEGIN {printf \"%+.1f\", ($sq - $lq) / $lq * 100}")%), GPU allocation $(printf '%.3f' "$sa") vs $(printf '%.3f' "$la")" \
      "($(awk "BEGIN {printf \"%+.1f\", ($sa - $la) / $la * 100}")%); target within 10%."
    # the simulator with the live cluster's latency: every job holds its GPUs the live runs' median hand-off
    # (x COMPRESS) longer, the GPU time a release costs before the next job runs there
    h=$(stat deepshared 12 | cut -d' ' -f2)
    if [ "$h" != nan ]; then
      extra=$(awk "BEGIN {printf \"%d\", $h * $compress + 0.5}")
      awk -F, -v x="$extra" 'BEGIN {OFS = ","} NR == 1 {print; next} {$5 += x; print}' "$simtrace" > "$out/jobs-latency.csv"
      if "$ds" simulate --trace "$out/jobs-latency.csv" --vc-config "$tenants" --mode pooled --gpus-per-node 4 --pool-nodes 4 \
           --k 1 --no-cpu-check --window "$window" --cycle "$cycle" --policy deepshare --json "$out/sim-latency.json" --quiet 2>/dev/null; then
        lsq=$(jsonnum "$out/sim-latency.json" avg_queue); lsa=$(jsonnum "$out/sim-latency.json" gpu_alloc)
        echo "With the live hand-off latency (each job holding its GPUs $extra trace s longer: the live runs' mean median"
        echo "hand-off, $(printf '%.2f' "$h") wall s, x$compress), the simulator gives avg queueing delay $(printf '%.0f' "$lsq") s" \
          "($(awk "BEGIN {printf \"%+.1f\", ($lsq - $lq) / $lq * 100}")% from live) and GPU allocation $(printf '%.3f' "$lsa")" \
          "($(awk "BEGIN {printf \"%+.1f\", ($lsa - $la) / $la * 100}")%; it counts the held seconds as allocated)."
      fi
    fi
    read -r cn cq cqh <<< "$(stat deepshare-costs 4 "$costs_csv")"
    if [ "$cn" -gt 0 ]; then
      read -r _ ca cah <<< "$(stat deepshare-costs 7 "$costs_csv")"; read -r _ cc2 cch <<< "$(stat deepshare-costs 8 "$costs_csv")"
      lc=$(stat deepshared 8 | cut -d' ' -f2)
      echo "With the live costs (Slurm's restart rules as deepshared meets them, and each job's submit lag and start latency"
      echo "drawn from the live runs', $cn seeds): avg queueing delay $(printf '%.0f ± %.0f' "$cq" "$cqh") s" \
        "($(awk "BEGIN {printf \"%+.1f\", ($cq - $lq) / $lq * 100}")% from live), GPU allocation $(printf '%.3f ± %.3f' "$ca" "$cah")" \
        "($(awk "BEGIN {printf \"%+.1f\", ($ca - $la) / $la * 100}")%; it counts the latency as allocated), QAD compliance" \
        "$(printf '%.3f ± %.3f' "$cc2" "$cch") (live $(printf '%.3f' "$lc")). Target within 10%."
      read -r _ gq gqh <<< "$(stat deepshare-lags 4 "$costs_csv")"; read -r _ ga _ <<< "$(stat deepshare-lags 7 "$costs_csv")"
      read -r _ gc _ <<< "$(stat deepshare-lags 8 "$costs_csv")"
      echo "The same twins without the restart rules (lags and latencies only): avg queueing delay $(printf '%.0f ± %.0f' "$gq" "$gqh") s," \
        "GPU allocation $(printf '%.3f' "$ga"), QAD compliance $(printf '%.3f' "$gc") (every twin's row: sim-costs.csv)."
    fi
    echo
  fi
  # fidelity of the simulated Slurm setups (slurm-quota, slurm-borrow, docs/peers.md) against the mean of their live
  # runs: the live settings in trace seconds (bench/native/slurm-sim.conf), true durations for the time limits (what
  # the replayer knows), without and with the live runs' median hand-off latency held by every job (target: 15%)
  for v in slurm-quota slurm-borrow; do
    read -r n lq _ <<< "$(stat "$v" 4)"; la=$(stat "$v" 7 | cut -d' ' -f2); h=$(stat "$v" 12 | cut -d' ' -f2)
    [ "$n" -gt 0 ] || continue
    [ "$h" != nan ] || h=0
    x=$(awk "BEGIN {printf \"%d\", $h * $compress + 0.5}")
    awk -F, -v x="$x" 'BEGIN {OFS = ","} NR == 1 {print; next} {$5 += x; print}' "$simtrace" > "$out/jobs-latency-$v.csv"
    line="Fidelity (simulated $v vs the live $v mean of $n run(s)):"
    for tr in "$simtrace" "$out/jobs-latency-$v.csv"; do
      "$ds" simulate --trace "$tr" --vc-config "$tenants" --mode pooled --gpus-per-node 4 --pool-nodes 4 --k 1 --no-cpu-check \
        --window "$window" --cycle "$cycle" --policy "$v" --predictor oracle --config "$root/bench/native/slurm-sim.conf" \
        --json "$out/sim-$v.json" --quiet 2>/dev/null || continue
      sq=$(jsonnum "$out/sim-$v.json" avg_queue); sa=$(jsonnum "$out/sim-$v.json" gpu_alloc)
      what=$([ "$tr" = "$simtrace" ] && echo "as simulated" || echo "with the hand-off ($(printf '%.2f' "$h") wall s = $x trace s) added to every job")
      line="$line $what: avg queue $(printf '%.0f' "$sq") s vs $(printf '%.0f' "$lq") s ($(awk "BEGIN {printf \"%+.1f\", ($sq - $lq) / $lq * 100}")%), GPU allocation $(printf '%.3f' "$sa") vs $(printf '%.3f' "$la") ($(awk "BEGIN {printf \"%+.1f\", ($sa - $la) / $la * 100}")%);"
    done
    echo "$line target within 15%."
    echo
  done
  # verdict: deepshared against both native configurations, on the intervals
  read -r dn dq dh <<< "$(stat deepshared 4)"; read -r _ dc dch <<< "$(stat deepshared 8)"
  read -r qn qq qh <<< "$(stat slurm-quota 4)"; read -r _ qc qch <<< "$(stat slurm-quota 8)"
  read -r bn bq bh <<< "$(stat slurm-borrow 4)"
  if [ "$dn" -gt 0 ] && [ "$qn" -gt 0 ] && [ "$bn" -gt 0 ]; then
    below=$(awk "BEGIN {print ($dq < $qq && $dq < $bq) ? 1 : 0}")
    apart=$(awk "BEGIN {print ($dq + $dh < $qq - $qh && $dq + $dh < $bq - $bh) ? 1 : 0}")
    keeps=$(awk "BEGIN {print ($dc >= $qc) ? 1 : 0}")
    echo "Verdict ($dn / $qn / $bn runs): deepshared avg queue $(printf '%.0f ± %.0f' "$dq" "$dh") s vs slurm-quota $(printf '%.0f ± %.0f' "$qq" "$qh") s" \
      "and slurm-borrow $(printf '%.0f ± %.0f' "$bq" "$bh") s: $([ "$below" = 1 ] && echo "lower than both" || echo "NOT lower than both")," \
      "$([ "$apart" = 1 ] && echo "intervals apart" || echo "intervals overlap");" \
      "QAD compliance $(printf '%.3f ± %.3f' "$dc" "$dch") vs slurm-quota's $(printf '%.3f ± %.3f' "$qc" "$qch"): $([ "$keeps" = 1 ] && echo "at least as high (means)" || echo "LOWER (means)")."
    echo
  fi
  echo "Latencies. Dispatch: submit to start of the jobs that had room when submitted (their tenant under quota"
  echo "with them and a node with their GPUs free), wall seconds (replay-live's live.json). Hand-off: a run on a"
  echo "node ending to the start of a job that was already waiting, on that node (bench/native/handoff.awk;"
  echo "its mean also counts waits by policy, e.g. a quota cap or a requeued job's begin time, so the median is shown)."
  for d in "$out"/deepshared/run-*; do
    m=$d/metrics.txt
    [ -s "$m" ] || continue
    echo "- deepshared ${d##*/}: pass (read Slurm, run the engine, apply) p50 $(metric "$m" 'deepshare_pass_latency_recent_seconds{quantile="0.5"}') s," \
      "p99 $(metric "$m" 'deepshare_pass_latency_recent_seconds{quantile="0.99"}') s over $(metric "$m" deepshare_pass_latency_seconds_count) passes;" \
      "dispatch to running seen p50 $(metric "$m" 'deepshare_dispatch_to_running_recent_seconds{quantile="0.5"}') s;" \
      "$(TZ=UTC awk -f "$root/bench/native/dispatch_steps.awk" "$d/deepshared.log" "$d/live.csv" 2>/dev/null)"
  done
  echo "- Slurm (slurm-quota, slurm-borrow): backfill every 1 s (bf_interval), main scheduler on events and every"
  echo "  60 s, priorities (fair share) recomputed every 60 s (PriorityCalcPeriod=1, Slurm's floor). Under deepshared"
  echo "  slurmctld starts a dispatched job at its next 1-second background loop (Slurm 22.05 has no request that"
  echo "  schedules at once: an update only queues the scheduler)."
} > "$out/table.md"
cat "$out/table.md"
log "report: $out/table.md, $out/runs.csv, $out/report/index.html"
