#!/usr/bin/env bash
# test_usage_metrics.sh: 'deepshare usage --metrics' against a real Prometheus (Debian's) holding an hour of
# deepshared's per-tenant series, written as OpenMetrics and loaded with 'promtool tsdb create-blocks-from'.
# Tenant a (quota 4) holds 4 G GPUs all hour and 2 BE GPUs in its second half; tenant b (quota 4) is idle, then
# holds 2 G GPUs with 2 pending and a smoothed QAD of 0.5, and suffers 3 preemptions counted by instance x
# and 3 by instance y (which restarts from 0 in between). The report must read (GPU-hours): a 4 G + 1 BE,
# quota 4, borrowed 1, compliance 1; b 1 G, lent 1 (a's borrowing of b's idle quota), 0.5 h under-served,
# compliance 0, 6 preemptions; a journal adds the jobs. Then the errors: unreachable, not Prometheus, a
# selector that matches nothing. Skipped (77) without prometheus/promtool (scripts/deps.sh --with-slurm).
# usage: tests/test_usage_metrics.sh DEEPSHARE_BINARY
bin=${1:?usage: test_usage_metrics.sh DEEPSHARE_BINARY}
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
  { echo "SKIP: prometheus/promtool not installed (scripts/deps.sh --with-slurm)"; exit 77; }
"$bin" usage --help | grep -q -- --metrics || { echo "FAIL: $bin usage has no --metrics"; exit 1; }
W=$(mktemp -d)
ppid_=
trap '[ -n "$ppid_" ] && kill $ppid_ 2>/dev/null; wait 2>/dev/null; rm -rf "$W"' EXIT
fails=0
ok() { echo "PASS $*"; }
bad() { echo "FAIL $*"; fails=$((fails + 1)); }
now=$(date +%s)
t0=$(( (now - 3 * 3600) / 60 * 60 )) # an hour of data starting 3 h ago (inside the default retention)
half=$((t0 + 1800)) t1=$((t0 + 3600))
# OpenMetrics: every family's samples together, each series in time order, a point every 30 s
awk -v t0=$t0 -v half=$half -v t1=$t1 'function fam(name, type) { print "# TYPE " name " " type }
  function pts(name, ten, inst, v1, v2,   t) {
    for (t = t0; t <= t1; t += 30) printf "%s{tenant=\"%s\",instance=\"%s\"} %s %d\n", name, ten, inst, (t < half ? v1 : v2), t }
  BEGIN {
    fam("deepshare_tenant_quota_gpus", "gauge"); pts("deepshare_tenant_quota_gpus", "a", "x", 4, 4); pts("deepshare_tenant_quota_gpus", "b", "x", 4, 4)
    fam("deepshare_tenant_guaranteed_gpus", "gauge"); pts("deepshare_tenant_guaranteed_gpus", "a", "x", 4, 4); pts("deepshare_tenant_guaranteed_gpus", "b", "x", 0, 2)
    fam("deepshare_tenant_best_effort_gpus", "gauge"); pts("deepshare_tenant_best_effort_gpus", "a", "x", 0, 2); pts("deepshare_tenant_best_effort_gpus", "b", "x", 0, 0)
    fam("deepshare_tenant_pending_gpus", "gauge"); pts("deepshare_tenant_pending_gpus", "a", "x", 0, 0); pts("deepshare_tenant_pending_gpus", "b", "x", 0, 2)
    fam("deepshare_tenant_qad_reported_ratio", "gauge"); pts("deepshare_tenant_qad_reported_ratio", "a", "x", 1, 1); pts("deepshare_tenant_qad_reported_ratio", "b", "x", 1, 0.5)
    fam("deepshare_tenant_qad_reported_smoothed_ratio", "gauge"); pts("deepshare_tenant_qad_reported_smoothed_ratio", "a", "x", 1, 1); pts("deepshare_tenant_qad_reported_smoothed_ratio", "b", "x", 1, 0.5)
    fam("deepshare_tenant_preemptions", "counter")
    pts("deepshare_tenant_preemptions_total", "a", "x", 0, 0)
    for (t = t0; t <= t1; t += 30) printf "deepshare_tenant_preemptions_total{tenant=\"b\",instance=\"x\"} %d %d\n", (t < half ? 1 : 4), t
    # instance y: 0 -> 1, restarted (back to 0), -> 2: 3 preemptions; x: 1 -> 4: 3 (its 1 is from before)
    for (t = t0; t <= t1; t += 30) printf "deepshare_tenant_preemptions_total{tenant=\"b\",instance=\"y\"} %d %d\n", (t < t0 + 600 ? 0 : t < t0 + 1200 ? 1 : t < t0 + 2400 ? 0 : 2), t
    print "# EOF" }' > "$W/data.om"
promtool tsdb create-blocks-from openmetrics "$W/data.om" "$W/tsdb" > "$W/promtool.log" 2>&1 ||
  { echo "FAIL promtool: $(tail -3 "$W/promtool.log")"; exit 1; }
printf 'global:\n  scrape_interval: 1m\nscrape_configs: []\n' > "$W/prom.yml"
port=$((20000 + $$ % 20000))
prometheus --config.file="$W/prom.yml" --storage.tsdb.path="$W/tsdb" --web.listen-address=127.0.0.1:$port \
  > "$W/prom.log" 2>&1 &
ppid_=$!
url=http://127.0.0.1:$port
for _ in $(seq 300); do curl -fs "$url/-/ready" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "$url/-/ready" >/dev/null || { echo "FAIL prometheus did not start: $(tail -3 "$W/prom.log")"; exit 1; }

"$bin" usage --metrics "$url" --from $t0 --to $t1 --format csv > "$W/u.csv" 2> "$W/u.err"; rc=$?
[ $rc -eq 0 ] && ok "usage --metrics: rc 0" || bad "usage --metrics: rc $rc: $(cat "$W/u.err")"
cat "$W/u.csv"
# columns: name,jobs,gpu_hours,g_gpu_hours,be_gpu_hours,quota_gpu_hours,borrowed,lent,under_served,compliance,preemptions,...
col() { awk -F, -v r="$1" -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) h[$i] = i; next } $1 == r { print $h[c] }' "$W/u.csv"; }
check() { # ROW COLUMN EXPECTED
  local v; v=$(col "$1" "$2")
  awk -v v="$v" -v e="$3" 'BEGIN { exit !(v != "" && v + 0 > e - 1e-6 && v + 0 < e + 1e-6) }' && ok "$1 $2 = $v" || bad "$1 $2 = '$v', expected $3"
}
check a g_gpu_hours 4; check a be_gpu_hours 1; check a quota_gpu_hours 4; check a borrowed_gpu_hours 1
check a lent_gpu_hours 0; check a qad_compliance 1; check a preemptions 0
check b g_gpu_hours 1; check b be_gpu_hours 0; check b lent_gpu_hours 1; check b under_served_hours 0.5
check b qad_compliance 0; check b preemptions 6
check all gpu_hours 6; check all preemptions 6

# a journal adds the jobs (finished in the window) to the same figures
printf '101,a,alice,4,600,%d\n102,b,bob,2,300,%d\n103,b,bob,1,60,%d\n' $((t0 + 900)) $((t1 - 60)) $((t1 + 600)) > "$W/journal"
"$bin" usage --journal "$W/journal" --metrics "$url" --from $t0 --to $t1 --format csv > "$W/u.csv" 2> "$W/u.err"; rc=$?
[ $rc -eq 0 ] && ok "usage --journal --metrics: rc 0" || bad "usage --journal --metrics: rc $rc: $(cat "$W/u.err")"
check a jobs 1; check b jobs 1; check b g_gpu_hours 1; check b preemptions 6
"$bin" usage --journal "$W/journal" --metrics "$url" --from $t0 --to $t1 --format json > "$W/u.json" 2>&1 &&
  grep -q '"source": *"journal+prometheus"' "$W/u.json" && ok "JSON names its source journal+prometheus" ||
  bad "JSON source: $(head -c 300 "$W/u.json")"
"$bin" usage --metrics "$url" --from $t0 --to $t1 --step 300 --format csv > "$W/u.csv" 2>&1 &&
  check a g_gpu_hours 4 && check b under_served_hours 0.5

# the plot folder, as from a run folder
"$bin" usage --metrics "$url" --from $t0 --to $t1 --plot "$W/plot" > /dev/null 2> "$W/plot.err"
[ -s "$W/plot/usage.dat" ] && [ -s "$W/plot/plots.gp" ] && ok "--plot: usage.dat and plots.gp written$( [ -s "$W/plot/usage.png" ] && echo ", usage.png rendered")" \
  || bad "--plot: $(cat "$W/plot.err")"

# a window of 10,800 steps of 1 s is read in two queries (at most 10,000 points each) sharing an end point
"$bin" usage --metrics "$url" --from $((t0 - 7200)) --to $t1 --step 1 --format csv > "$W/u.csv" 2>&1 &&
  check a g_gpu_hours 4 && check b lent_gpu_hours 1 && check b preemptions 6

# errors: clear messages, exit 1, no report
err() { # NAME EXPECTED_TEXT ARGS...
  local name=$1 want=$2; shift 2
  out=$("$bin" usage "$@" 2>&1); rc=$?
  [ $rc -ne 0 ] && grep -q "$want" <<<"$out" && ok "$name: rc $rc: $out" || bad "$name: rc $rc: $out"
}
err "unreachable" "cannot reach it" --metrics http://127.0.0.1:1 --from $t0 --to $t1
err "not Prometheus (404)" "HTTP 404" --metrics "$url/nothing-here" --from $t0 --to $t1
err "matches nothing" "no samples of deepshared's tenants" --metrics "$url" --match 'job="other"' --from $t0 --to $t1
err "bad selector" "query failed" --metrics "$url" --match 'job=~"(' --from $t0 --to $t1
err "no --from" "needs --from" --metrics "$url"
err "not a URL" "expected an http" --metrics "ftp://x" --from $t0 --to $t1

[ $fails -eq 0 ] && echo "usage --metrics: all checks passed" || echo "usage --metrics: $fails checks failed"
exit $((fails > 0))
