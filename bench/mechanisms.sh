#!/usr/bin/env bash
# bench/mechanisms.sh: what each mechanism of DeepShare's revision 2 is worth: DeepShare pooled with one
# mechanism switched off at a time (and revision 1's settings), on the synthetic workloads and, when
# the data is there, Venus with arrivals x1.5. Prints CSV. Usage: bench/mechanisms.sh [BIN]
# Environment: PRED=model|oracle (default model), DS_DATA_DIR (default ../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/deepshare}
pred=${PRED:-model}
data=${DS_DATA_DIR:-../shared/data}
variants=("defaults:" "revision-1:--m 1 --work-conserving 0 --g-prefix 0 --share-first 0 --learn-retention 0 --tau-max 1"
          "no-work-conserving:--work-conserving 0" "no-g-prefix:--g-prefix 0" "no-share-first:--share-first 0"
          "no-learn-retention:--learn-retention 0" "reserve-after-1800:--reserve-after 1800" "tau-max-0.9:--tau-max 0.9")
workloads=("synthetic:--trace-estimates drop" "noisy-neighbour:--trace-estimates drop --synth-noisy 4"
           "large-jobs:--trace-estimates drop --synth-large-share 0.33")
if [ -f "$data/venus/venus_sept_jobs.csv" ]; then
  workloads+=("venus-x1.5:--trace $data/venus/venus_sept_jobs.csv --vc-config $data/venus/vc_config.csv --coloc $data/colocation/colocate_info.csv --arrival-scale 1.5 --window 13219200:14716800")
fi
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
echo "workload,variant,predictor,avg_queue,p99_queue,qad_compliance,avg_jct,preemptions,colocated_jobs"
for w in "${workloads[@]}"; do
  for v in "${variants[@]}"; do
    # shellcheck disable=SC2086
    if ! "$bin" simulate ${w#*:} --mode pooled --policy deepshare --predictor "$pred" ${v#*:} --json "$tmp" --quiet 2>/dev/null; then
      echo "${w%%:*},${v%%:*},$pred,failed"; continue
    fi
    jq -r --arg w "${w%%:*}" --arg v "${v%%:*}" --arg p "$pred" \
      '[$w, $v, $p, (.avg_queue|round), (.p99_queue|round), (.qad_compliance*1000|round/1000), (.avg_jct|round), .preemptions, .colocated_jobs] | @csv' "$tmp" |
      tr -d '"'
  done
done
