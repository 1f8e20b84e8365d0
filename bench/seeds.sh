#!/bin/bash
# seeds.sh: DeepShare pooled (learned predictors) over several seeds of the suite's loaded workloads
# and the native 16-GPU workload: mean average queue, compliance and overrun yields per workload.
# The figures docs/policy.md §2 compares policy revisions by; the suite itself runs one seed.
#   bench/seeds.sh [BIN] [extra simulate options...]     (SEEDS="1 2 3 4" by default)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$here/build/deepshare}
[ $# -gt 0 ] && shift
[ -x "$B" ] || { echo "seeds.sh: no deepshare binary at $B (build first, or give its path)" >&2; exit 2; }
D=${DS_DATA_DIR:-$here/../shared/data}
W0=13219200; W1=$((13219200 + (15465600 - 13219200) * 2 / 3)) # the suite's Venus x1.5 window
out=$(mktemp); trap 'rm -f "$out"' EXIT
{
for s in ${SEEDS:-1 2 3 4}; do
    if [ -f "$D/venus/venus_sept_jobs.csv" ]; then
        echo "x1.5 $s --trace $D/venus/venus_sept_jobs.csv --vc-config $D/venus/vc_config.csv --coloc $D/colocation/colocate_info.csv --arrival-scale 1.5 --window $W0:$W1"
    fi
    echo "synthetic $s --trace-estimates drop"
    echo "noisy $s --trace-estimates drop --synth-noisy 4"
    echo "large $s --trace-estimates drop --synth-large-share 0.33"
    echo "native $s --trace $here/bench/native/jobs.csv --vc-config $here/bench/native/tenants.csv --gpus-per-node 4 --pool-nodes 4 --k 1 --no-cpu-check --window 0:36000"
done
} | while read -r w s args; do echo "$w $s $args${*:+ $*}"; done |
    xargs -P "${JOBS:-2}" -L 1 bash -c 'w=$1 s=$2; shift 2
        r=$("'"$B"'" simulate --policy deepshare --mode pooled --quiet --json - --seed "$s" "$@" 2>/dev/null |
            python3 -c "import json,sys; r=json.load(sys.stdin); print(r[\"avg_queue\"], r[\"qad_compliance\"], r[\"policy_stats\"][\"overrun_yields\"])")
        echo "$w $s $r"' _ > "$out"
[ -f "$D/venus/venus_sept_jobs.csv" ] || echo "seeds.sh: $D/venus absent: Venus x1.5 skipped" >&2
python3 - "$out" <<'P'
import sys
from collections import defaultdict
d = defaultdict(list)
for l in open(sys.argv[1]):
    w, s, q, c, y = l.split()
    d[w].append((int(s), float(q), float(c), float(y)))
print("workload   seeds  avg_queue  compliance  yields  per seed")
for w in ["x1.5", "synthetic", "noisy", "large", "native"]:
    v = sorted(d[w])
    if not v: continue
    n = len(v)
    print(f"{w:10s} {n:5d} {sum(x[1] for x in v)/n:10.1f} {sum(x[2] for x in v)/n:11.3f} {sum(x[3] for x in v)/n:7.0f}  {[round(x[1]) for x in v]}")
P
