#!/usr/bin/env bash
# gavel_interference.sh [BIN]: the interference forest on Gavel's per-type pairs (data/gavel/pairs.csv):
# accuracy per GPU type (a forest trained and evaluated leave-one-model-out on that type's pairs), a forest
# trained on every type's pairs (type-blind) scored per type, and leave-one-type-out (trained on the other
# types' pairs, scored on the type it never saw). Workload descriptors are the synthetic generator's
# invented ones (src/trace/synth.c, families[]): Gavel measured throughputs only.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$root/build/deepshare}
d=$(mktemp -d /tmp/gavel-if.XXXX)
python3 - "$root/data/gavel" "$d" <<'PY'
import csv, sys
src, out = sys.argv[1], sys.argv[2]
# the generator's families: gpu_util, gmem_util, gmem base MiB, MiB per sample (src/trace/synth.c)
fam = {"ResNet-18": (60, 35, 1500, 12), "ResNet-50": (90, 60, 2500, 90), "Transformer": (80, 50, 2000, 40),
       "LM": (50, 40, 1200, 60), "Recommendation": (30, 45, 1000, 0.5), "A3C": (20, 10, 1200, 0),
       "CycleGAN": (85, 55, 4500, 0)}
seen = set()
with open(f"{out}/single.csv", "w") as f:
    f.write("model,dataset,batchsize,amp,speed,gpu_util,gmem_util,gmem,label\n")
    for r in csv.DictReader(open(f"{src}/speeds.csv")):
        k = (r["model"], r["dataset"] or "-", r["batchsize"], r["amp"])
        if k in seen: continue
        seen.add(k)
        g, m, base, per = fam.get(r["model"], (50, 30, 4000, 0))
        f.write(f"{k[0]},{k[1]},{k[2]},{k[3]},1,{g},{m},{int(base + per * int(k[2]))},1\n")
rows = list(csv.reader(open(f"{src}/pairs.csv")))
head, body = rows[0], rows[1:]
ti = head.index("gpu_type")
for r in body:
    for i in (1, 6):
        if not r[i]: r[i] = "-"
types = sorted({r[ti] for r in body})
def write(name, keep):
    with open(f"{out}/{name}.csv", "w", newline="") as f:
        w = csv.writer(f); w.writerow(head[:ti]); [w.writerow(r[:ti]) for r in body if keep(r[ti])]
write("all", lambda t: True)
for t in types:
    write(t, lambda x, t=t: x == t)
    write("not-" + t, lambda x, t=t: x != t)
open(f"{out}/types", "w").write(" ".join(types))
for t in types:  # what the type's mean retention alone scores: the floor a model has to beat
    y = [float(r[i]) for r in body if r[ti] == t for i in (4, 9)]
    m = sum(y) / len(y)
    open(f"{out}/{t}.mean", "w").write(f"mean retention {m:.3f}, MAE of predicting it {sum(abs(v - m) for v in y) / len(y):.4f}")
PY
types=$(cat "$d/types")
s="$d/single.csv"
mae() { sed -n 's/.*MAE \([0-9.]*\).*/\1/p' | head -1; }
echo "MAE of predicted retention (both jobs of each pair):"
echo "  lomo:  a forest of that type's pairs, each model family held out in turn (pooled over folds: rows, MAE, R^2)"
echo "  blind: one forest of every type's pairs, types not told apart (in-sample on this type)"
echo "  loto:  a forest of the other types' pairs only (this type never seen)"
echo "  mean:  the type's mean retention for every job (no model)"
"$bin" train interference --coloc "$d/all.csv" --single "$s" --model-out "$d/all.model" >/dev/null 2>&1
for t in $types; do
  n=$(($(wc -l < "$d/$t.csv") - 1))
  lomo=$("$bin" train interference --coloc "$d/$t.csv" --single "$s" --evaluate 2>&1 | grep -m1 -E "^  pooled" || true)
  blind=$("$bin" predict interference --model "$d/all.model" --single "$s" --coloc "$d/$t.csv" 2>&1 >/dev/null | grep -m1 -E "MAE" || true)
  "$bin" train interference --coloc "$d/not-$t.csv" --single "$s" --model-out "$d/not-$t.model" >/dev/null 2>&1
  loto=$("$bin" predict interference --model "$d/not-$t.model" --single "$s" --coloc "$d/$t.csv" 2>&1 >/dev/null | grep -m1 -E "MAE" || true)
  blind=${blind#deepshare: } loto=${loto#deepshare: }
  printf '%s (%d pairs)\n  lomo: %s\n  blind: %s\n  loto: %s\n  mean: %s\n' "$t" "$n" "$lomo" "${blind%% (in-sample*}" \
    "${loto%% (in-sample*}" "$(cat "$d/$t.mean")"
done
[ -n "${KEEP:-}" ] && echo "files in $d" || rm -rf "$d"
