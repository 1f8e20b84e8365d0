#!/usr/bin/env bash
# bench/everywhere.sh: one DeepShare variant on every suite workload with both predictors (pooled, the
# suite's options), and the loaded synthetic workloads and Venus x1.5 over seeds: the measurement every
# policy change is judged by (docs/policy.md). Prints one line per workload and predictor: avg queue,
# p99 queue, compliance, preemptions, overrun yields.
#   bench/everywhere.sh [BIN] [simulate options of the variant...]
# Environment: POLICY (default deepshare: any policy, to measure a baseline the same way), SEEDS (default "1 2 3 4"; the suite's own seed is 1), ITP_SEEDS (1-5), JOBS (parallel runs, 2),
# WORKLOADS (default all: venus x1.5 itp itp-slice synthetic noisy large hetero), PREDS ("model oracle"),
# DS_DATA_DIR (../shared/data). Workloads whose files are absent are skipped with a message.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$here/build/deepshare}
[ $# -gt 0 ] && shift
[ -x "$B" ] || { echo "everywhere.sh: no deepshare binary at $B (build first, or give its path)" >&2; exit 2; }
D=${DS_DATA_DIR:-$here/../shared/data}
V="--trace $D/venus/venus_sept_jobs.csv --vc-config $D/venus/vc_config.csv --coloc $D/colocation/colocate_info.csv"
W0=13219200; W1=15465600; W15=$((W0 + (W1 - W0) * 2 / 3))
declare -A args=(
  [venus]="$V --window $W0:$W1"
  [x1.5]="$V --arrival-scale 1.5 --window $W0:$W15"
  [itp]="--trace $D/itp/itp_jobs.csv --vc-config $D/itp/itp_tenants.csv"
  [itp-slice]="--trace $D/itp/itp_jobs_slice.csv --vc-config $D/itp/itp_tenants_slice.csv"
  [synthetic]="--trace-estimates drop"
  [noisy]="--trace-estimates drop --synth-noisy 4"
  [large]="--trace-estimates drop --synth-large-share 0.33"
  [hetero]="--trace-estimates drop --synth-gpu-types v100:12,p100:8,k80:4"
)
# Venus runs once (its schedule moves within a second across seeds); Venus x1.5 and the synthetic
# workloads over SEEDS. ITP has no colocation, so a seed changes nothing there, but its schedule is
# chaotic (arrivals scaled by 0.999 or 1.001 move DeepShare's and QSSF's average queue by up to 10%):
# it runs over ITP_SEEDS, seed k scaling arrivals by the k-th of 1, 0.999, 1.001, 0.998, 1.002.
declare -A seeded=([x1.5]=1 [synthetic]=1 [noisy]=1 [large]=1 [hetero]=1)
jitter=(x 1 0.999 1.001 0.998 1.002)
wl=${WORKLOADS:-venus x1.5 itp itp-slice synthetic noisy large hetero}
out=$(mktemp); trap 'rm -f "$out"' EXIT
{
for w in $wl; do
  case $w in
    venus|x1.5) [ -f "$D/venus/venus_sept_jobs.csv" ] || { echo "everywhere.sh: $w skipped: no $D/venus" >&2; continue; } ;;
    itp|itp-slice) [ -f "$D/itp/itp_jobs.csv" ] || { echo "everywhere.sh: $w skipped: no $D/itp" >&2; continue; } ;;
  esac
  for p in ${PREDS:-model oracle}; do
    if [ -n "${seeded[$w]:-}" ]; then ss=${SEEDS:-1 2 3 4}; else ss=1; fi
    case $w in itp|itp-slice) ss=${ITP_SEEDS:-1 2 3 4 5} ;; esac
    for s in $ss; do
      case $w in
        itp|itp-slice) echo "$w $p $s ${args[$w]} --arrival-scale ${jitter[$s]}" ;;
        *) echo "$w $p $s ${args[$w]}" ;;
      esac
    done
  done
done
} | while read -r w p s a; do echo "$w $p $s $a${*:+ $*}"; done |
  xargs -P "${JOBS:-2}" -L 1 bash -c 'w=$1 p=$2 s=$3; shift 3
    r=$("'"$B"'" simulate --policy "'"${POLICY:-deepshare}"'" --mode pooled --quiet --json - --predictor "$p" --seed "$s" "$@" 2>/dev/null |
        python3 -c "import json,sys; r=json.load(sys.stdin); s=r.get(\"policy_stats\", {}); print(r[\"avg_queue\"], r[\"p99_queue\"], r[\"qad_compliance\"], r[\"preemptions\"], s.get(\"overrun_yields\", 0))") ||
      r="failed"
    echo "$w $p $s $r"' _ > "$out"
python3 - "$out" "$wl" <<'P'
import sys
from collections import defaultdict
d = defaultdict(list)
for l in open(sys.argv[1]):
    f = l.split()
    if f[3] == "failed":
        print(f"{f[0]} {f[1]} seed {f[2]}: failed"); continue
    d[f[0], f[1]].append((int(f[2]),) + tuple(float(x) for x in f[3:]))
print(f"{'workload':10s} {'pred':6s} {'seeds':>5s} {'avg_queue':>10s} {'p99':>9s} {'compl':>6s} {'preempt':>8s} {'yields':>7s}  seed 1 / per seed avg")
for w in sys.argv[2].split():
    for p in ("model", "oracle"):
        v = sorted(d.get((w, p), []))
        if not v: continue
        n = len(v)
        m = [sum(x[i] for x in v) / n for i in range(1, 6)]
        per = "" if n == 1 else str([round(x[1]) for x in v])
        print(f"{w:10s} {p:6s} {n:5d} {m[0]:10.1f} {m[1]:9.0f} {m[2]:6.3f} {m[3]:8.0f} {m[4]:7.0f}  {v[0][1]:.1f} {per}")
P
