#!/usr/bin/env bash
# e2e_slurm.sh: end-to-end test of deepshared on the real local Slurm cluster (deploy/slurm): borrowing,
# reclaim by requeue, shard colocation admission, the status page in headless Chromium, a SIGHUP reload of
# a quota, SIGKILL of the daemon, slurmctld restart; prints the measured latencies. The daemon runs from the
# .deb that cpack builds and dpkg installs (/usr/sbin/deepshared) with a read token, Debian's prometheus
# scrapes it with that token, and promtool lints its metrics. Needs root and the packages of
# 'scripts/deps.sh --with-slurm'.
# usage: tests/e2e_slurm.sh BUILD_DIR   (env: E2E_POLICY=deepshare, E2E_CYCLE=2, E2E_KEEP=1 keeps the cluster up,
#        E2E_SCREENSHOT_TO=docs/img/status-page.png also copies the status page's screenshot there)
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
port=$((20000 + RANDOM % 12000))
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
  # --check-config prints the effective configuration (defaults included); a mistake names file, line and
  # key; a non-loopback listen address without a read token is refused
  if /usr/sbin/deepshared --check-config /etc/deepshare/deepshared.conf >"$W/cc.out" 2>&1 &&
     grep -q '^status_window = 21600$' "$W/cc.out" && grep -q '^tenant vision 8$' "$W/cc.out" &&
     grep -q '^dispatch_timeout = 30$' "$W/cc.out"; then
    ok "--check-config prints the effective configuration ($(grep -vc '^#' "$W/cc.out") lines, defaults included)"
  else bad "--check-config: $(head -5 "$W/cc.out")"; fi
  printf 'tenant a 1\ncycle = fast\n' > "$W/bad.conf"
  /usr/sbin/deepshared --check-config "$W/bad.conf" >"$W/cc.bad" 2>&1; rc=$?
  [ $rc = 1 ] && grep -q "$W/bad.conf:2: column 'cycle'" "$W/cc.bad" && ok "--check-config: an invalid file exits 1 naming file, line and key: $(cat "$W/cc.bad")" \
    || bad "--check-config on an invalid file: rc $rc, $(cat "$W/cc.bad")"
  printf 'tenant a 1\nlisten = 0.0.0.0:%d\n' $((20000 + RANDOM % 12000)) > "$W/public.conf"
  /usr/sbin/deepshared --check-config "$W/public.conf" >"$W/cc.pub" 2>&1; rc=$?
  [ $rc = 1 ] && grep -q "not a loopback address" "$W/cc.pub" && ok "--check-config: a public address without a read token is refused" \
    || bad "--check-config on a public address without a token: rc $rc, $(cat "$W/cc.pub")"
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
# a read token: the status page, /metrics and /explain ask for it (Prometheus and explain send it)
head -c 24 /dev/urandom | base64 | tr -d '+/=' > "$W/token"
chmod 600 "$W/token"
TOKEN=$(cat "$W/token")
AUTH=$'Authorization: Bearer '"$TOKEN"$'\r\n'
cat > "$W/deepshared.conf" <<EOF
policy = $policy
cycle = $cycle
poll = 0.25
read_token_file = $W/token
# ten minutes of QAD history on the status page (a sample every 1.7 s), so the test's run shows in the chart
status_window = 600
journal = $W/journal.csv
listen = 127.0.0.1:$port
interference_profile = $W/profile.csv
default_runtime = 600
# with a 16-GPU cluster and no GPU free, the default eps = 1e-6 makes the colocation threshold ~1;
# eps = 1 keeps the pressure at sqrt(pending GPUs)
policy.eps = 1
# the test cluster has no accounting: every job here is root's, charged to the account it names
# (tests/e2e_trust.sh checks tenants' members as a plain user)
trust_accounts = yes
tenant ta 8
tenant tb 8
EOF
chmod 600 "$W/deepshared.conf"
cp "$W/deepshared.conf" "$W/deepshared.conf.orig"
write_job_script

start_daemon
monitor &
mon=$!
# Debian's prometheus scrapes the daemon every second with the example rules loaded (queried in step 3)
pport=$((port + 1))
if command -v prometheus >/dev/null; then
  sed -e "s/127.0.0.1:9464/127.0.0.1:$port/" -e 's/^  scrape_interval: 15s/  scrape_interval: 1s/' \
    -e "s|^  - deepshare.rules.yml|  - $root/deploy/prometheus/deepshare.rules.yml|" \
    -e 's/^    # authorization:/    authorization:/' -e "s|^    #   credentials_file: .*|      credentials_file: $W/token|" \
    "$root/deploy/prometheus/prometheus.yml" > "$W/prometheus.yml"
  prometheus --config.file="$W/prometheus.yml" --storage.tsdb.path="$W/prom" \
    --web.listen-address="127.0.0.1:$pport" > "$W/prometheus.log" 2>&1 &
  ppid=$!
  t_prom=$(date +%s)
else
  bad "prometheus not installed (scripts/deps.sh --with-slurm installs it)"
fi
sleep 1
# the read token: data only with it; liveness without
c1=$(http_code /metrics ""); c2=$(http_code /metrics); c3=$(http_code /healthz ""); c4=$(http_code "/?token=$TOKEN" "")
[ "$c1" = 401 ] && [ "$c2" = 200 ] && [ "$c3" = 200 ] && [ "$c4" = 200 ] \
  && ok "read token: /metrics 401 without it, 200 with it; the page takes ?token=; /healthz open" \
  || bad "read token: /metrics $c1 without, $c2 with; /healthz $c3; /?token= $c4"

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

# ---- withdraw: a waiting job held by its owner, released, then cancelled leaves the engine without a rebuild
log "withdraw: a waiting job of tb is held, released and cancelled"
rebuilds0=$(metric deepshare_rebuilds_total); wd0=$(metric deepshare_withdrawals_total)
wj=$(submit tb 30 'gpus=1 class=BE model=heavy dataset=synthetic batch=32 amp=0')
sed -i "/^$wj /d" "$W/submits"   # cancelled below: not one of the jobs that must finish
sleep $((cycle + 1))
ws=$(state "$wj")
scontrol hold "$wj"
sleep $((cycle + 1))
wx=$("$build/deepshare" explain --addr "127.0.0.1:$port" --token-file "$W/token" "$wj" 2>&1)
wd1=$(metric deepshare_withdrawals_total)
scontrol release "$wj"
sleep $((cycle + 1))
wx2=$("$build/deepshare" explain --addr "127.0.0.1:$port" --token-file "$W/token" "$wj" 2>&1)
scancel "$wj"
sleep $((cycle + 1))
wd2=$(metric deepshare_withdrawals_total)
if [ "$ws" = PENDING ] && [ "$wd1" = $((wd0 + 1)) ] && echo "$wx" | grep -q 'withdrawn: held by its owner' \
   && echo "$wx2" | grep -q ', pending under' && [ "$wd2" = $((wd0 + 2)) ] \
   && [ "$(metric deepshare_rebuilds_total)" = "$rebuilds0" ]; then
  ok "withdraw: job $wj held -> withdrawn, released -> queued again, cancelled -> withdrawn; no engine rebuild (rebuilds $rebuilds0)"
else bad "withdraw: state '$ws', withdrawals $wd0 -> $wd1 -> $wd2, rebuilds $rebuilds0 -> $(metric deepshare_rebuilds_total); explain: $(echo "$wx" | head -3)"; fi

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
exp=$("$build/deepshare" explain --addr "127.0.0.1:$port" --token-file "$W/token" "$heavy" 2>&1)
echo "$exp" | sed 's/^/    /' >&2
if [ "$st" = PENDING ] && echo "$exp" | grep -q 'rejected'; then
  ok "step 3: a heavy job is refused colocation (predicted retention under the threshold) and waits"
else bad "step 3: heavy job state $st, explain did not say rejected"; fi
light=$(submit ta 25 'gpus=1 class=BE model=light dataset=synthetic batch=32 amp=0')
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

# ---- the status page in headless Chromium: it loads without console errors, refreshes itself (its script
# fetches the page again after 5 s), shows the tenants, the waiting heavy job with its reason, and the GPU
# shared by the light job; a screenshot is written for the docs
# The jobs' rows are read from the page as served, at once, while job $heavy still waits and job $light still
# shares its GPU (the step 2 jobs end a few seconds later and free GPUs for job $heavy); Chromium, which under a
# loaded machine takes seconds to render, checks what the browser adds: the charts, the refresh, no console message.
http_get "/?token=$TOKEN" > "$W/page.html" 2>/dev/null
miss=""
for want in "<tr id=\"job-$heavy\">" 'rejected' "title=\"job $light, tenant ta, BE" '<td class="shared">'; do
  grep -qF "$want" "$W/page.html" || miss="$miss [$want]"
done
[ -z "$miss" ] && ok "status page: the waiting job $heavy with its reason, job $light on a shared GPU" \
  || bad "status page: missing$miss (page as served: $W/page.html; job $heavy $(state "$heavy"))"
if command -v chromium >/dev/null; then
  url="http://127.0.0.1:$port/?token=$TOKEN"
  chrome() { timeout 90 chromium --headless --disable-gpu --no-sandbox --enable-logging=stderr --v=0 "$@"; }
  chrome --virtual-time-budget=8000 --dump-dom "$url" > "$W/dom.html" 2> "$W/chromium.log"
  miss=""
  for want in '<th class="name t0">ta</th>' '<th class="name t1">tb</th>' '<tr id="job-' '<polyline class="qr t1"' 'refreshed '; do
    grep -qF "$want" "$W/dom.html" || miss="$miss [$want]"
  done
  [ -z "$miss" ] && ok "status page in Chromium: tenants, job rows, QAD charts; refreshed by its script" \
    || bad "status page in Chromium: missing$miss (DOM: $W/dom.html)"
  cons=$(grep -E 'CONSOLE|Uncaught|Refused to' "$W/chromium.log")
  [ -z "$cons" ] && ok "status page: no console message in Chromium (CSP, script, network)" || bad "status page: console: $(echo "$cons" | head -3)"
  chrome --screenshot="$W/status-page.png" --window-size=1280,900 --virtual-time-budget=2000 "$url" >> "$W/chromium.log" 2>&1
  if [ "$(head -c 8 "$W/status-page.png" 2>/dev/null | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
     [ "$(stat -c %s "$W/status-page.png")" -gt 20000 ]; then
    cp "$W/status-page.png" /tmp/ds-e2e-status-page.png
    [ -n "${E2E_SCREENSHOT_TO:-}" ] && cp "$W/status-page.png" "$E2E_SCREENSHOT_TO"
    ok "status page: screenshot 1280x900 written ($(stat -c %s "$W/status-page.png") bytes, /tmp/ds-e2e-status-page.png)"
  else bad "status page: no screenshot ($(tail -3 "$W/chromium.log"))"; fi
else
  bad "chromium not installed (scripts/deps.sh --with-slurm installs it)"
fi

# ---- SIGHUP: ta's quota 8 -> 10 takes effect without a restart and without disturbing running jobs; an
# invalid file is rejected and the running configuration stays; a key that needs a restart is named
log "reload: SIGHUP after raising ta's quota to 10"
running0=$(squeue -h -t R -o '%i' | sort -n)
declare -A restarts0
for j in $running0; do restarts0[$j]=$(scontrol show job "$j" 2>/dev/null | grep -o 'Restarts=[0-9]*' | cut -d= -f2); done
rebuilds0=$(metric deepshare_rebuilds_total)
sed -i 's/^tenant ta 8$/tenant ta 10/' "$W/deepshared.conf"
kill -HUP "$dpid"
q=""
for i in $(seq 1 40); do q=$(metric 'deepshare_tenant_quota_gpus{tenant="ta"}'); [ "$q" = 10 ] && break; sleep 0.25; done
[ "$q" = 10 ] && grep -q "reload: tenant ta quota 8 -> 10 GPUs" "$W/deepshared.log" \
  && ok "reload: SIGHUP applied ta's new quota (deepshare_tenant_quota_gpus{tenant=\"ta\"} = 10)" \
  || bad "reload: quota of ta is '$q' after SIGHUP ($(grep reload "$W/deepshared.log" | tail -2))"
sleep $((cycle + 1))   # the next cycle runs with the new quota
moved=""
for j in $running0; do
  st=$(state "$j"); r=$(scontrol show job "$j" 2>/dev/null | grep -o 'Restarts=[0-9]*' | cut -d= -f2)
  if [ "$st" != RUNNING ] && ! grep -q "^end $j " "$W/events"; then moved="$moved $j:$st"; fi
  [ "${r:-0}" = "${restarts0[$j]:-0}" ] || moved="$moved $j:requeued"
done
[ -z "$moved" ] && [ "$(metric deepshare_rebuilds_total)" = "$rebuilds0" ] \
  && ok "reload: the $(echo $running0 | wc -w) running jobs ran on undisturbed (none requeued or stopped; no engine rebuild)" \
  || bad "reload: running jobs disturbed:$moved (rebuilds $rebuilds0 -> $(metric deepshare_rebuilds_total))"
echo "cycle = fast" >> "$W/deepshared.conf"
kill -HUP "$dpid"
sleep 1
grep -q "reload rejected, the running configuration stays: $W/deepshared.conf:[0-9]*: column 'cycle'" "$W/deepshared.log" &&
  [ "$(metric 'deepshare_tenant_quota_gpus{tenant="ta"}')" = 10 ] \
  && ok "reload: an invalid file is rejected with file, line and key; the running configuration stays" \
  || bad "reload: invalid file: $(grep 'reload' "$W/deepshared.log" | tail -1)"
sed -i '/^cycle = fast$/d' "$W/deepshared.conf"
echo "k = 3" >> "$W/deepshared.conf"
kill -HUP "$dpid"
sleep 1
grep -q "warning: reload: k changed in $W/deepshared.conf but takes effect only at a restart" "$W/deepshared.log" \
  && ok "reload: a key that needs a restart is named in a warning and keeps its running value" \
  || bad "reload: no warning for k ($(grep reload "$W/deepshared.log" | tail -1))"
cp "$W/deepshared.conf.orig" "$W/deepshared.conf"
kill -HUP "$dpid"
for i in $(seq 1 40); do q=$(metric 'deepshare_tenant_quota_gpus{tenant="ta"}'); [ "$q" = 8 ] && break; sleep 0.25; done
[ "$q" = 8 ] || bad "reload: the original quota of ta did not come back ($q)"
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
# ---- the usage report of the run, from the daemon's journal
if "$build/deepshare" usage --journal "$W/journal.csv" > "$W/usage.txt" 2> "$W/usage.err" \
   && "$build/deepshare" usage --journal "$W/journal.csv" --format json > "$W/usage.json" 2>> "$W/usage.err"; then
  sed 's/^/    /' "$W/usage.txt" >&2
  nj=$(awk '$1 == "all" {print $2}' "$W/usage.txt"); nr=$(grep -vc '^slurm_job_id' "$W/journal.csv")
  [ "$nj" = "$nr" ] && [ "$nj" -gt 0 ] && grep -q '"gpu_hours"' "$W/usage.json" \
    && ok "usage: the journal's $nr finished jobs reported by tenant (table and JSON)" \
    || bad "usage: $nj jobs reported, the journal has $nr"
  # the journal records Slurm's start and submit times, so a live cluster's queueing delays are figures
  qall=$(awk '$1 == "all" {print $(NF-2), $(NF-1), $NF}' "$W/usage.txt")
  case "$qall" in [0-9]*) ok "usage: queueing delay p50/p95/p99 of the journal's jobs: $qall s" ;;
    *) bad "usage: no queueing delays from the journal: '$qall'" ;; esac
else bad "usage: $(head -3 "$W/usage.err")"; fi
# ... and with the run's history in Prometheus (--metrics): classes, quota, lending, QAD, preemptions
if [ -n "${t_prom:-}" ]; then
  if "$build/deepshare" usage --journal "$W/journal.csv" --metrics "http://127.0.0.1:$pport" --from "$t_prom" \
       --to "$(date +%s)" --step 5 --format csv > "$W/usage-m.csv" 2> "$W/usage-m.err"; then
    sed 's/^/    /' "$W/usage-m.csv" >&2
    # every tenant held G GPUs in the run, and its compliance is a figure (not '-')
    awk -F, 'NR > 1 && $1 != "all" && !($4 > 0 && $10 != "") {bad = 1} END {exit bad || NR < 3}' "$W/usage-m.csv" \
      && ok "usage --metrics: G/BE GPU-hours, lending and QAD compliance per tenant from Prometheus ($(awk -F, '$1 == "all" {printf "G %s BE %s borrowed %s lent %s GPU-h, compliance %s, preemptions %s", $4, $5, $7, $8, $10, $11}' "$W/usage-m.csv"))" \
      || bad "usage --metrics: a tenant without G GPU-hours or compliance: $(cat "$W/usage-m.csv")"
  else bad "usage --metrics: $(head -3 "$W/usage-m.err")"; fi
fi
cp "$W/journal.csv" /tmp/ds-e2e-journal.csv 2>/dev/null
cp "$W/deepshared.log" /tmp/ds-e2e-last.log 2>/dev/null
if [ $fails -gt 0 ]; then log "$fails checks failed; daemon log: $W/deepshared.log"; exit 1; fi
log "all checks passed"
rm -rf "$W"
exit 0
