#!/usr/bin/env bash
# soak_sim.sh: runs every policy over extreme-but-accepted traces (the bounds of docs/trace-format.md) under
# a memory ceiling and a timeout: an accepted trace must finish, or be refused with a message, never hang or
# exhaust memory. Usage: tests/soak_sim.sh BUILD_DIR [SECONDS_PER_RUN (300)] [MEMORY_MIB (4096)]
set -euo pipefail
bin=${1:?usage: soak_sim.sh BUILD_DIR [SECONDS] [MIB]}/deepshare
secs=${2:-300}
mib=${3:-4096}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
max_dur=$((366 * 86400))
max_span=$((2 * 366 * 86400))
# 1. longest accepted span and durations, few jobs
{ echo "tenant,quota_gpus"; echo "A,16"; echo "B,8"; } >"$work/t.csv"
{ echo "job_id,tenant,gpus,cpus,submit,duration"
  echo "1,A,1,4,0,$max_dur"; echo "2,B,8,32,5,$max_dur"; echo "3,A,16,64,$max_span,$max_dur"
  echo "4,B,1,96,$((max_span / 2)),1"; } >"$work/span.csv"
# 2. many tenants (the limit), 10 jobs each
python3 - "$work" <<'PY'
import sys
w = sys.argv[1]
with open(w + "/many_t.csv", "w") as f:
    f.write("tenant,quota_gpus\n")
    for i in range(1000): f.write("t%05d,%d\n" % (i, 1 + i % 8))
with open(w + "/many_j.csv", "w") as f:
    f.write("job_id,tenant,gpus,submit,duration\n")
    for i in range(10000): f.write("%d,t%05d,1,%d,%d\n" % (i + 1, i % 1000, i * 30, 600 + i % 3600))
# 3. a burst: 10,000 jobs at one instant, up to the largest job a partition holds
with open(w + "/burst.csv", "w") as f:
    f.write("job_id,tenant,gpus,submit,duration\n")
    for i in range(10000): f.write("%d,%s,%d,0,%d\n" % (i + 1, "AB"[i % 2], 1 + (i % 8), 60 + i % 7200))
PY
status=0
run() {
  local name=$1; shift
  local t0=$SECONDS rc=0
  ( ulimit -v $((mib * 1024)); timeout "$secs" "$bin" simulate --policy all "$@" >/dev/null 2>"$work/err" ) || rc=$?
  if [ $rc -eq 0 ]; then echo "ok   $name ($((SECONDS - t0)) s)"
  elif [ $rc -eq 124 ]; then echo "FAIL $name: still running after $secs s" >&2; status=1
  elif grep -q "deepshare:" "$work/err" && ! grep -qiE "internal error|out of memory|sanitizer" "$work/err"; then
    echo "ok   $name refused: $(head -1 "$work/err")"
  else echo "FAIL $name: exit $rc: $(tail -3 "$work/err")" >&2; status=1; fi
}
run span --trace "$work/span.csv" --vc-config "$work/t.csv"
run span-pooled --trace "$work/span.csv" --vc-config "$work/t.csv" --mode pooled
run many-tenants --trace "$work/many_j.csv" --vc-config "$work/many_t.csv"
run burst --trace "$work/burst.csv" --vc-config "$work/t.csv"
run burst-pooled --trace "$work/burst.csv" --vc-config "$work/t.csv" --mode pooled
exit $status
