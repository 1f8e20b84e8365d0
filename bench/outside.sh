#!/usr/bin/env bash
# bench/outside.sh: every pooled policy on workloads the suite does not hold (other loads of its traces and
# of the generator), to see whether DeepShare's standing holds off the suite's own points; docs/results.md,
# "Session 15: outside the suite". One run each, every policy fed by the same runtime source.
#   bench/outside.sh [BIN] OUT
# Environment: WORKLOADS (default all below), POLICIES (default the suite's pooled list), JOBS (2),
# PRED (model, the suite's default: the learned predictor; oracle: true durations), DS_DATA_DIR
# (../shared/data). Prints, per workload, the policies by average queue: avg, p99, compliance,
# preemptions; OUT/<workload>/summary.csv holds every figure of 'compare'.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
if [ $# -ge 2 ]; then B=$1; shift; else B=$here/build/deepshare; fi
[ $# -eq 1 ] || { echo "usage: bench/outside.sh [BIN] OUT" >&2; exit 2; }
O=$1
[ -x "$B" ] || { echo "outside.sh: no deepshare binary at $B (build first, or give its path)" >&2; exit 2; }
D=${DS_DATA_DIR:-$here/../shared/data}
P=${POLICIES:-deepshare,qssf,sjf,tiresias,fifo,lucid,kai,kueue,kueue-fs,slurm-quota,slurm-borrow}
V="--trace $D/venus/venus_sept_jobs.csv --vc-config $D/venus/vc_config.csv --coloc $D/colocation/colocate_info.csv"
I="--trace $D/itp/itp_jobs.csv --vc-config $D/itp/itp_tenants.csv"
S="--trace $D/itp/itp_jobs_slice.csv --vc-config $D/itp/itp_tenants_slice.csv"
W0=13219200; W1=15465600
declare -A args=(
  [venus-x1.25]="$V --arrival-scale 1.25 --window $W0:$((W0 + (W1 - W0) * 4 / 5))"
  [venus-x2]="$V --arrival-scale 2 --window $W0:$((W0 + (W1 - W0) / 2))"
  [itp-x0.8]="$I --arrival-scale 0.8"
  [itp-x1.1]="$I --arrival-scale 1.1"
  [itp-x1.2]="$I --arrival-scale 1.2"
  [slice-x1.3]="$S --arrival-scale 1.3"
  [synth-load0.8]="--trace-estimates drop --synth-load 0.8"
  [synth-load1.3]="--trace-estimates drop --synth-load 1.3"
  [synth-12-tenants]="--trace-estimates drop --synth-tenants 12"
)
wl=${WORKLOADS:-venus-x1.25 venus-x2 itp-x0.8 itp-x1.1 itp-x1.2 slice-x1.3 synth-load0.8 synth-load1.3 synth-12-tenants}
mkdir -p "$O"
for w in $wl; do
  [ -n "${args[$w]:-}" ] || { echo "outside.sh: unknown workload '$w' (known: ${!args[*]})" >&2; exit 2; }
  case $w in
    venus*) [ -f "$D/venus/venus_sept_jobs.csv" ] || { echo "outside.sh: $w skipped: no $D/venus" >&2; continue; } ;;
    itp*|slice*) [ -f "$D/itp/itp_jobs.csv" ] || { echo "outside.sh: $w skipped: no $D/itp" >&2; continue; } ;;
  esac
  # shellcheck disable=SC2086
  if ! "$B" compare --mode pooled --policies "$P" --no-plots --quiet --jobs "${JOBS:-2}" --predictor "${PRED:-model}" --out "$O/$w" ${args[$w]} \
      2>"$O/$w.err" >/dev/null; then
    echo "outside.sh: $w: compare failed (see $O/$w.err)" >&2
    continue
  fi
  python3 - "$O/$w/summary.csv" "$w" <<'P'
import csv, sys
rows = sorted(csv.DictReader(open(sys.argv[1])), key=lambda r: float(r["avg_queue"]))
ds = next((r for r in rows if r["policy"] == "deepshare"), None)
print(f"== {sys.argv[2]}")
for r in rows:
    mark = " <" if r is ds else ""
    print(f"  {r['policy']:13s} avg {float(r['avg_queue']):9.0f}  p99 {float(r['p99_queue']):9.0f}  "
          f"compliance {float(r['qad_compliance']):.3f}  preemptions {int(float(r['preemptions'])):6d}{mark}")
P
done
