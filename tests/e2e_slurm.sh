#!/usr/bin/env bash
# e2e_slurm.sh: end-to-end test of deepshared on the real local Slurm cluster (deploy/slurm): borrowing,
# reclaim by requeue, shard colocation admission, SIGKILL of the daemon, slurmctld restart; prints the
# measured latencies. The daemon runs from the .deb that cpack builds and dpkg installs (/usr/sbin/deepshared),
# Debian's prometheus scrapes it, and promtool lints its metrics. Needs root and the packages of
# 'scripts/deps.sh --with-slurm'.
# usage: tests/e2e_slurm.sh BUILD_DIR   (env: E2E_POLICY=deepshare, E2E_CYCLE=2, E2E_KEEP=1 keeps the cluster up)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# one user of the machine-wide cluster at a time
[ -n "${DS_SLURM_LOCKED:-}" ] || exec "$root/scripts/with-cluster.sh" bash "$0" "$@"
build=$(cd "${1:?usage: e2e_slurm.sh BUILD_DIR}" && pwd)
policy=${E2E_POLICY:-deepshare}
cycle=${E2E_CYCLE:-2}
export SLURM_CONF=$root/deploy/slurm/slurm.conf
W=$(mktemp -d /tmp/ds-e2e.XXXXXX)
chmod 755 "$W"
port=$((20000 + RANDOM % 20000))
fails=0
dpid=""
mon=""
ppid=""
pkg_installed=0
keep_pkg=""
name=e2e
. "$root/tests/slurm_lib.sh"

cleanup() {
  [ -n "$mon" ] && kill "$mon" 2>/dev/null
  [ -n "$dpid" ] && kill "$dpid" 2>/dev/null
  [ -n "$ppid" ] && kill "$ppid" 2>/dev/null
  [ $pkg_installed = 1 ] && [ -z "$keep_pkg" ] && dpkg --purge deepshare >/dev/null 2>&1
  [ -s "$W/submits" ] && scancel $(awk '{print $1}' "$W/submits") 2>/dev/null
  [ -z "${E2E_KEEP:-}" ] && "$root/deploy/slurm/stop.sh"
}
trap cleanup EXIT

[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 77; }
[ -x "$build/deepshared" ] || { log "$build/deepshared not built (needs libslurm-dev, libmicrohttpd-dev)"; exit 77; }

# ---- the package: cpack -G DEB for prefix /usr (the build's own prefix is put back after), dpkg -i,
# and the daemon runs from the installed path for the whole test
daemon_bin=$build/deepshared
prefix0=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$build/CMakeCache.txt")
# a deepshare package installed before the test is upgraded to this build's and left installed
keep_pkg=${E2E_KEEP:-}
dpkg-query -W -f='${Status}' deepshare 2>/dev/null | grep -q "install ok installed" && keep_pkg=1
if cmake -DCMAKE_INSTALL_PREFIX=/usr "$build" >"$W/cpack.log" 2>&1 &&
     cpack --config "$build/CPackConfig.cmake" -G DEB -B "$W/pkg" >>"$W/cpack.log" 2>&1 &&
     deb=$(ls "$W"/pkg/deepshare_*.deb) && dpkg -i "$deb" >"$W/dpkg.log" 2>&1; then
  pkg_installed=1
  daemon_bin=/usr/sbin/deepshared
  ok "package: $(basename "$deb") built and installed (Depends: $(dpkg-query -W -f='${Depends}' deepshare))"
  [ -x /usr/bin/deepshare ] && [ -f /etc/deepshare/deepshared.conf ] && man -w deepshared.conf >/dev/null 2>&1 &&
    man -w deepshared >/dev/null 2>&1 && ok "package: /usr/bin/deepshare, /etc/deepshare/deepshared.conf and the man pages installed" \
    || bad "package: files missing ($(dpkg -L deepshare | tr '\n' ' '))"
  # --check opens the journal, creating /var/lib/deepshared (systemd's StateDirectory= would): undone after
  state_dir_existed=0
  [ -e /var/lib/deepshared ] && state_dir_existed=1
  /usr/sbin/deepshared -c /etc/deepshare/deepshared.conf --check >"$W/check.log" 2>&1 \
    && ok "package: the installed sample config passes --check" || bad "package: sample config: $(cat "$W/check.log")"
  [ $state_dir_existed = 0 ] && rm -rf /var/lib/deepshared
  if command -v systemd-analyze >/dev/null; then
    systemd-analyze verify /usr/lib/systemd/system/deepshared.service >"$W/verify.log" 2>&1 \
      && ok "package: systemd-analyze verify accepts deepshared.service" || bad "package: unit: $(cat "$W/verify.log")"
  fi
else
  bad "package: cpack or dpkg -i failed: $(tail -5 "$W/cpack.log" "$W/dpkg.log" 2>/dev/null)"
fi
[ -n "$prefix0" ] && cmake -DCMAKE_INSTALL_PREFIX="$prefix0" "$build" >/dev/null 2>&1

"$root/deploy/slurm/stop.sh"
CLEAN=1 "$root/deploy/slurm/start.sh" >/dev/null || { log "cluster did not start"; exit 1; }

# A colocation profile with two workloads: "light" pairs keep 95% of their speed, "heavy" ones lose half.
cat > "$W/profile.csv" <<'EOF'
model1,dataset1,batchsize1,amp1,speed1,model2,dataset2,batchsize2,amp2,speed2,gpu_util,gmem_util,gmem
light,synthetic,32,0,0.95,light,synthetic,32,0,0.95,80,30,6000
light,synthetic,32,0,0.50,heavy,synthetic,32,0,0.45,100,60,12000
heavy,synthetic,32,0,0.40,heavy,synthetic,32,0,0.40,100,80,16000
EOF
cat > "$W/deepshared.conf" <<EOF
policy = $policy
cycle = $cycle
poll = 0.25
journal = $W/journal.csv
listen = 127.0.0.1:$port
interference_profile = $W/profile.csv
default_runtime = 600
# with a 16-GPU cluster and no GPU free, the default eps = 1e-6 makes the colocation threshold ~1;
# eps = 1 keeps the pressure at sqrt(pending GPUs)
policy.eps = 1
tenant ta 8
tenant tb 8
EOF
write_job_script

start_daemon
monitor &
mon=$!
# Debian's prometheus scrapes the daemon every second with the example rules loaded (queried in step 3)
pport=$((port + 1))
if command -v prometheus >/dev/null; then
  sed -e "s/127.0.0.1:9464/127.0.0.1:$port/" -e 's/^  scrape_interval: 15s/  scrape_interval: 1s/' \
    -e "s|^  - deepshare.rules.yml|  - $root/deploy/prometheus/deepshare.rules.yml|" \
    "$root/deploy/prometheus/prometheus.yml" > "$W/prometheus.yml"
  prometheus --config.file="$W/prometheus.yml" --storage.tsdb.path="$W/prom" \
    --web.listen-address="127.0.0.1:$pport" > "$W/prometheus.log" 2>&1 &
  ppid=$!
else
  bad "prometheus not installed (scripts/deps.sh --with-slurm installs it)"
fi
sleep 1

# ---- 1. tenant A idle; tenant B fills the cluster, borrowing A's quota as best effort
log "step 1: tenant tb fills the 16 GPUs (8 within quota, 8 borrowed)"
fill1=() fill2=()
for i in $(seq 1 12); do fill1+=("$(submit tb 70 'gpus=1 model=heavy dataset=synthetic batch=32 amp=0')"); done
wait_running 20 "${fill1[@]}" || bad "step 1: first 12 jobs of tb not running"
sleep 6   # the last four start later: they are the cheapest to preempt (least progress)
for i in $(seq 1 4); do fill2+=("$(submit tb 70 'gpus=1 model=heavy dataset=synthetic batch=32 amp=0')"); done
if wait_running 20 "${fill2[@]}"; then
  ok "step 1: all 16 jobs of tb run on 16 GPUs"
else
  bad "step 1: tb could not fill the cluster"
fi
sleep $((cycle + 1))
g=$(metric 'deepshare_tenant_guaranteed_gpus{tenant="tb"}'); b=$(metric 'deepshare_tenant_best_effort_gpus{tenant="tb"}')
lent=$(metric 'deepshare_tenant_lent_gpus{tenant="ta"}')
if [ "$g" = 8 ] && [ "$b" = 8 ] && [ "$lent" = 8 ]; then ok "step 1: tb holds 8 G + 8 BE GPUs; ta lends 8"
else bad "step 1: expected tb G=8 BE=8 and ta lending 8, got G=$g BE=$b lent=$lent"; fi
nbatch=0
for j in "${fill1[@]}" "${fill2[@]}"; do [ "$(part "$j")" = batch ] && nbatch=$((nbatch + 1)); done
[ $nbatch = 8 ] && ok "step 1: the 8 borrowed jobs run in the preemptable partition" || bad "step 1: $nbatch jobs of tb in batch, expected 8"
http_get /metrics 2>/dev/null | sed '1,/^\r$/d' > "$W/metrics.txt"
if command -v promtool >/dev/null; then
  if promtool check metrics < "$W/metrics.txt" > "$W/promtool.log" 2>&1 && [ ! -s "$W/promtool.log" ]; then
    ok "promtool check metrics: the exposition ($(grep -c '^# TYPE' "$W/metrics.txt") metrics) passes without a remark"
  else bad "promtool check metrics: $(head -5 "$W/promtool.log")"; fi
fi
be_jobs=()
for j in "${fill1[@]}" "${fill2[@]}"; do [ "$(part "$j")" = batch ] && be_jobs+=("$j"); done

# ---- 2. A submits guaranteed jobs: B's BE jobs are requeued, cheapest first, A runs within two cycles
log "step 2: tenant ta submits 4 guaranteed jobs"
ga=()
for i in $(seq 1 4); do ga+=("$(submit ta 20 'gpus=1 model=light dataset=synthetic batch=32 amp=0')"); done
if wait_running $((2 * cycle + 10)) "${ga[@]}"; then ok "step 2: the 4 jobs of ta run"; else bad "step 2: ta's jobs not running"; fi
sleep 0.5   # the jobs' own start lines
reclaim=()
for j in "${ga[@]}"; do
  s=$(first_start "$j"); t=$(submit_time "$j")
  [ -n "$s" ] && reclaim+=("$(calc "$s - $t")")
done
max_reclaim=$(printf '%s\n' "${reclaim[@]}" | sort -g | tail -1)
log "reclaim latency (ta submit -> running), s: ${reclaim[*]}"
if [ -n "$max_reclaim" ] && [ "$(calc "($max_reclaim <= 2 * $cycle + 1.5) ? 1 : 0")" = 1 ]; then
  ok "step 2: reclaim within two cycles (+ Slurm's 1 s scheduling tick): max $max_reclaim s, cycle $cycle s"
else bad "step 2: reclaim took $max_reclaim s, more than two cycles of $cycle s"; fi
sleep 1
victims=()
for j in "${fill1[@]}" "${fill2[@]}"; do
  r=$(scontrol show job "$j" 2>/dev/null | grep -o 'Restarts=[0-9]*' | cut -d= -f2)
  [ "${r:-0}" -gt 0 ] && victims+=("$j")
done
log "requeued jobs of tb: ${victims[*]:-none}"
[ ${#victims[@]} = 4 ] && ok "step 2: exactly 4 jobs of tb requeued" || bad "step 2: ${#victims[@]} jobs of tb requeued, expected 4"
allbe=1
for v in "${victims[@]}"; do [[ " ${be_jobs[*]} " == *" $v "* ]] || allbe=0; done
[ $allbe = 1 ] && ok "step 2: every requeued job was a BE job" || bad "step 2: a guaranteed job was requeued"
cheap=1
for v in "${victims[@]}"; do [[ " ${fill2[*]} " == *" $v "* ]] || cheap=0; done
[ $cheap = 1 ] && ok "step 2: the victims are the 4 most recently started BE jobs (cheapest: least progress)" \
  || bad "step 2: victims ${victims[*]} are not the 4 latest-started BE jobs ${fill2[*]}"

# ---- 3. colocation through shard only when admission allows; whole-GPU jobs never on a shared GPU
log "step 3: colocation"
# explicit best-effort jobs of ta (within its BE cap): only colocation admission decides where they go
heavy=$(submit ta 15 'gpus=1 class=BE model=heavy dataset=synthetic batch=32 amp=0')
sleep $((2 * cycle + 1))
st=$(state "$heavy")
exp=$("$build/deepshare" explain --addr "127.0.0.1:$port" "$heavy" 2>&1)
echo "$exp" | sed 's/^/    /' >&2
if [ "$st" = PENDING ] && echo "$exp" | grep -q 'rejected'; then
  ok "step 3: a heavy job is refused colocation (predicted retention under the threshold) and waits"
else bad "step 3: heavy job state $st, explain did not say rejected"; fi
light=$(submit ta 15 'gpus=1 class=BE model=light dataset=synthetic batch=32 amp=0')
if wait_running $((2 * cycle + 5)) "$light"; then
  where=$(squeue -h -j "$light" -o '%N %b')
  node=${where%% *}; gpu=$(echo "$where" | grep -o 'g[0-9]')
  mates=$(squeue -h -t R -o '%i %N %b' | awk -v n="$node" -v g=":$gpu:" -v me="$light" '$2 == n && index($3, g) && $1 != me {print $1}')
  if echo "$where" | grep -q shard && [ -n "$mates" ]; then
    ok "step 3: a light job shares $node GPU $gpu with job $mates through shard"
  else bad "step 3: light job runs as '$where' without a partner"; fi
else
  bad "step 3: the light job did not start by colocation"
fi
[ "$(metric deepshare_colocations_total)" -ge 1 ] 2>/dev/null && ok "step 3: colocations counted" || bad "step 3: no colocation counted"
# Prometheus has scraped for a while now: its HTTP API returns the tenants' QAD and the pass-latency histogram
if [ -n "$ppid" ]; then
  pq() { curl -s --max-time 5 "http://127.0.0.1:$pport/api/v1/query" --data-urlencode "query=$1"; }
  r1=$(pq 'deepshare_tenant_qad_reported_smoothed_ratio{tenant="tb"}')
  r2=$(pq 'histogram_quantile(0.99, sum by (le) (rate(deepshare_pass_latency_seconds_bucket[1m])))')
  r3=$(pq 'up{job="deepshare"}')
  if echo "$r1" | grep -q '"status":"success"' && echo "$r1" | grep -q '"tenant":"tb"' &&
     echo "$r2" | grep -qE '"value":\[[0-9.]+,"[0-9.e+-]+"\]' && echo "$r3" | grep -q '"1"\]'; then
    ok "prometheus: scrapes deepshared; tb's reported QAD $(echo "$r1" | grep -o '"value":\[[^]]*\]'), pass-latency p99 over 1 min $(echo "$r2" | grep -o '"value":\[[^]]*\]')"
  else bad "prometheus: queries gave: $r1 / $r2 / $r3 (log: $(tail -3 "$W/prometheus.log"))"; fi
fi
whole=$(submit ta 15 'model=light dataset=synthetic batch=32 amp=0' --gres=gpu:2)
if wait_running $((3 * cycle + 10)) "$whole"; then
  ok "step 3: a 2-GPU job (--gres=gpu:2) runs: $(squeue -h -j "$whole" -o '%N %b')"
else bad "step 3: the 2-GPU job of ta did not start"; fi

# ---- 4. SIGKILL the daemon mid-run and restart it
log "step 4: SIGKILL deepshared with jobs queued and running"
more=()
for i in 1 2 3; do more+=("$(submit ta 6 'gpus=1 model=light dataset=synthetic batch=32 amp=0')"); done
sleep 0.3
kill -9 "$dpid"; wait "$dpid" 2>/dev/null
for i in 1 2; do more+=("$(submit tb 6 'gpus=1 model=heavy dataset=synthetic batch=32 amp=0')"); done
sleep 2
start_daemon
if wait_running 60 "${more[@]:0:3}" || [ -z "$(squeue -h -j "$(IFS=,; echo "${more[*]:0:3}")" -t PD)" ]; then
  ok "step 4: after the restart, ta's queued jobs run"
else bad "step 4: ta's jobs queued across the restart do not run"; fi
grep -q "state rebuilt from Slurm" "$W/deepshared.log" && ok "step 4: state rebuilt from Slurm"

# ---- every job finishes exactly once; guaranteed jobs start exactly once
log "waiting for every job to finish"
all=$(awk '{print $1}' "$W/submits")
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 300 ]; do
  [ -z "$(squeue -h -p staging,batch,prod -o %i)" ] && break
  sleep 1
done
# ---- 5. slurmctld stopped and restarted (with no shard job running: Slurm 22.05.8 recovers the
# shard count of a GPU that a running shard job holds as 0 -- see docs/deepshared.md)
p50a=$(metric 'deepshare_pass_latency_recent_seconds{quantile="0.5"}'); p99a=$(metric 'deepshare_pass_latency_recent_seconds{quantile="0.99"}')
npass=$(metric 'deepshare_pass_latency_seconds_count')
log "step 5: stop slurmctld for 15 s (longer than Slurm's MessageTimeout)"
kill "$(cat /run/slurm-ds/slurmctld.pid)"
sleep 15
"$root/deploy/slurm/start.sh" >/dev/null 2>&1 || bad "step 5: slurmctld did not come back"
late=()
for i in 1 2; do late+=("$(submit ta 3 'gpus=1 model=light dataset=synthetic batch=32 amp=0')"); done
late+=("$(submit tb 3 'model=heavy dataset=synthetic batch=32 amp=0' --gres=gpu:2)")
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 60 ]; do
  n=0; for j in "${late[@]}"; do grep -q "^end $j " "$W/events" && n=$((n + 1)); done
  [ $n = ${#late[@]} ] && break
  sleep 0.5
done
[ $n = ${#late[@]} ] && ok "step 5: after the slurmctld restart, scheduling continues (${#late[@]} new jobs ran)" \
  || bad "step 5: scheduling did not resume after the slurmctld restart ($n of ${#late[@]} jobs ran)"
grep -qE "retrying" "$W/deepshared.log" && ok "step 5: the daemon saw the outage and retried ($(grep -c retrying "$W/deepshared.log") log lines)" \
  || bad "step 5: no retry logged during the outage"
grep -q "resuming" "$W/deepshared.log" && ok "step 5: the daemon resumed"

lost=0 twice=0
for j in $all; do
  e=$(grep -c "^end $j " "$W/events")
  [ "$e" = 1 ] || { log "job $j ended $e times"; [ "$e" = 0 ] && lost=$((lost + 1)) || twice=$((twice + 1)); }
done
[ $lost = 0 ] && [ $twice = 0 ] && ok "every one of the $(echo "$all" | wc -w) jobs finished exactly once" \
  || bad "$lost jobs never finished, $twice finished more than once"
gtwice=0
for j in "${ga[@]}" "$whole" "${more[@]:0:3}" "${late[@]}"; do
  s=$(grep -c "^start $j " "$W/events"); [ "$s" = 1 ] || { log "guaranteed job $j started $s times"; gtwice=$((gtwice + 1)); }
done
[ $gtwice = 0 ] && ok "no guaranteed job of ta was ever requeued" || bad "$gtwice guaranteed jobs started more than once"
if [ -s "$W/violations" ]; then bad "shared-GPU invariant: $(sort -u "$W/violations" | head -3)"
else ok "no whole-GPU job ever shared a GPU; no GPU held more than two jobs"; fi

# ---- figures
s2r=()
while read -r id t acct; do
  s=$(first_start "$id"); [ -n "$s" ] && s2r+=("$(calc "$s - $t")")
done < "$W/submits"
pct() { printf '%s\n' "${@:2}" | sort -g | awk -v q="$1" '{v[NR]=$1} END {i=int(q*NR+0.999999); if(i<1)i=1; printf "%.2f", v[i]}'; }
p50=$(metric 'deepshare_pass_latency_recent_seconds{quantile="0.5"}'); p99=$(metric 'deepshare_pass_latency_recent_seconds{quantile="0.99"}')
echo "e2e: FIGURES policy=$policy cycle=${cycle}s jobs=$(wc -l < "$W/submits")" >&2
echo "e2e: FIGURES pass latency (read Slurm + engine + apply), $npass passes before the slurmctld outage: p50 $(calc "$p50a * 1000") ms, p99 $(calc "$p99a * 1000") ms" >&2
echo "e2e: FIGURES pass latency over the whole run, outage included (libslurm blocks until it gives up): p50 $(calc "$p50 * 1000") ms, p99 $(calc "$p99 * 1000") ms" >&2
echo "e2e: FIGURES submit-to-running (first start, all ${#s2r[@]} jobs, incl. those that waited for GPUs by policy): p50 $(pct 0.5 "${s2r[@]}") s, p90 $(pct 0.9 "${s2r[@]}") s, max $(pct 1 "${s2r[@]}") s" >&2
echo "e2e: FIGURES reclaim (ta submit -> running while the cluster was full): ${reclaim[*]} s" >&2
cp "$W/deepshared.log" /tmp/ds-e2e-last.log 2>/dev/null
if [ $fails -gt 0 ]; then log "$fails checks failed; daemon log: $W/deepshared.log"; exit 1; fi
log "all checks passed"
rm -rf "$W"
exit 0
