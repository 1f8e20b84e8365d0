#!/usr/bin/env bash
# bench/sweep.sh: DeepShare on the Venus trace (pooled, quota = 8 x nodes): the baselines and
# ablations side by side, and the sensitivity sweep of rho_min, alpha and m (one at a time around the
# defaults). Prints CSV tables. Usage: bench/sweep.sh [compare|sweep|all] [BIN]
# Environment: PRED=oracle|model|file (runtimes of DeepShare, default oracle), SCALE=1.5 (arrivals
# 1.5x as dense, the suite's venus-x1.5; default 1).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
bin=${2:-build/deepshare}
data=${DS_DATA_DIR:-../shared/data}
[ -f "$data/venus/venus_sept_jobs.csv" ] || { echo "sweep: $data/venus is absent, nothing to do" >&2; exit 0; }
pred=${PRED:-oracle}
scale=${SCALE:-1}
end=$(awk -v s="$scale" 'BEGIN { printf "%d", 13219200 + (15465600 - 13219200) / s }')
venus=(--trace "$data/venus/venus_sept_jobs.csv" --vc-config "$data/venus/vc_config.csv"
       --coloc "$data/colocation/colocate_info.csv" --estimates "$data/estimates/Venus_Sept_ebm_weekly_updated.csv"
       --window "13219200:$end" --arrival-scale "$scale" --mode pooled --predictor "$pred" --quiet)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One run: label, then simulate arguments. Prints a CSV row; the slowdown of colocated jobs is their
# wall run time over their work (duration plus restart overheads), from jobs.csv.
row() {
  local label=$1; shift
  "$bin" simulate "${venus[@]}" "$@" --json "$tmp/r.json" --out "$tmp/out" >/dev/null
  local slow
  slow=$(awk -F, 'NR > 1 && $12 == 1 { oh = ($4 <= 8) ? 40 : 60; w = $10 + $11 * oh; if (w > 0) { s += ($9 - $8) / w; n++ } }
                  END { if (n) printf "%.4f,%d", s / n, n; else printf "NA,0" }' "$tmp/out/jobs.csv")
  jq -r --arg l "$label" --arg s "$slow" \
    '[$l, .policy, .avg_jct, .avg_queue, .p99_queue, .gpu_alloc, .sm_util, .gmem_util, .preemptions,
      .colocated_jobs, .revoked_colocations, .qad_mean, .qad_compliance, .qad_compliance_all, $s]
     | map(if type == "number" then (. * 10000 | round / 10000) else . end) | @csv' "$tmp/r.json" | tr -d '"'
  rm -rf "$tmp/out"
}
header="label,policy,avg_jct,avg_queue,p99_queue,gpu_alloc,sm_util,gmem_util,preemptions,colocated_jobs,revoked,qad_mean,qad_compliance,qad_compliance_all,coloc_slowdown,coloc_jobs_measured"

if [ "$what" = compare ] || [ "$what" = all ]; then
  echo "# baselines and ablations, Venus pooled"
  echo "$header"
  lucid=(--policy lucid --lucid-single "$data/colocation/single_data.csv"
         --lucid-throughput "$data/venus/Venus_throughput_pred.csv")
  for p in fifo sjf qssf tiresias; do row "$p" --policy "$p"; done
  row lucid "${lucid[@]}"
  row "lucid-partitioned" "${lucid[@]}" --mode partitioned
  row deepshare --policy deepshare
  row deepshare-file --policy deepshare --predictor file
  for a in no-prediction interference-blind no-colocation no-borrowing hard-colocate; do
    row "deepshare-$a" --policy deepshare --ablation "$a"
  done
  row deepshare-monitor-admit --policy deepshare --monitor-threshold admit
  row deepshare-no-work-conserving --policy deepshare --work-conserving 0
  row deepshare-no-g-prefix --policy deepshare --g-prefix 0
  row deepshare-reserve-1800 --policy deepshare --reserve-after 1800
  echo
fi
if [ "$what" = sweep ] || [ "$what" = all ]; then
  echo "# sensitivity, Venus pooled (one parameter at a time, others at their defaults)"
  echo "$header"
  for v in 0.5 0.6 0.7 0.8 0.9; do row "rho-min=$v" --policy deepshare --rho-min "$v"; done
  for v in 0.1 0.3 0.5 0.7 0.9; do
    b=0.3
    # alpha + beta must stay within 1: beta shrinks to 1 - alpha where needed (said in the label)
    awk -v a="$v" 'BEGIN { exit !(a + 0.3 > 1) }' && b=$(awk -v a="$v" 'BEGIN { printf "%.1f", 1 - a }')
    row "alpha=$v(beta=$b)" --policy deepshare --alpha "$v" --beta "$b"
  done
  for v in 1 2 4 8; do row "m=$v" --policy deepshare --m "$v"; done
  for v in 0.9 0.95 1; do row "tau-max=$v" --policy deepshare --tau-max "$v"; done
fi
