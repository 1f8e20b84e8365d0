#!/usr/bin/env bash
# e2e_telemetry.sh: deepshared's measured retention on the local Slurm cluster (deploy/slurm), from one of
# two sources. progress (telemetry = progress): every job writes its step rate, derived from a "true"
# colocation profile for the jobs actually co-resident on its GPU (read from squeue). prometheus
# (telemetry = prometheus): Debian's prometheus scrapes a stand-in dcgm-exporter (tests/dcgm_standin.c)
# serving DCGM_FI_PROF_SM_ACTIVE per GPU with dcgm-exporter's labels, one series per job id of the GPU
# (its HPC job mapping, label hpc_job), the GPU's activity being the sum over its jobs of their solo
# activity x their true retention there; deepshared queries it. Either way the daemon admits pairs from
# its own profile. A pair the daemon's profile gets wrong (a guaranteed job down to 40% of its solo rate)
# must be revoked within w = 3 cycles (the best-effort partner requeued), a good pair (95%) kept, and
# telemetry gone stale (the jobs stop writing; the exporter stops answering) revokes nothing. Prints the
# revocation latency (wall s from the first degraded report to the requeue). Needs root and
# 'scripts/deps.sh --with-slurm'; leaves no prometheus running.
# post: the same step rates POSTed to deepshared's /api/progress in munge credentials (progress_dir =
# off); a report for another user's job and a replayed one are refused.
# usage: tests/e2e_telemetry.sh BUILD_DIR [progress|post|prometheus]
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ -n "${DS_SLURM_LOCKED:-}" ] || exec "$root/scripts/with-cluster.sh" bash "$0" "$@"
build=$(cd "${1:?usage: e2e_telemetry.sh BUILD_DIR [progress|prometheus]}" && pwd)
source=${2:-progress}
case $source in progress|post|prometheus) ;; *) echo "e2e_telemetry: source '$source' is not progress, post or prometheus" >&2; exit 2;; esac
cycle=2
# The monitor (src/policy/deepshare/ds_monitor.c) revokes a pair after w consecutive samples under its
# threshold tau (rho-min with nothing pending, as in step 1) once the mean of the pair's log samples is also
# z standard errors under ln tau, the noise taken as sigma0 = 0.1 (MON_PRIOR_SIGMA) until 30 deviations
# are pooled: a pair measured at r needs n = max(w, ceil((z sigma0 / ln(tau / r))^2)) samples.
mon_w=3 mon_tau=0.7 mon_z=2 mon_sigma0=0.1
export SLURM_CONF=$root/deploy/slurm/slurm.conf
W=$(mktemp -d /tmp/ds-e2e-tel.XXXXXX)
chmod 755 "$W"
# below the kernel's ephemeral ports (32768-60999): an outgoing connection never holds the port the daemon binds
port=$((20000 + RANDOM % 12000))
fails=0
dpid=""
name=e2e-tel-$source
daemon_bin=$build/deepshared
ppid_="" epid="" lpid=""
pport=$((port + 1)) eport=$((port + 2))
. "$root/tests/slurm_lib.sh"

cleanup() {
  [ -n "$dpid" ] && kill "$dpid" 2>/dev/null
  for p in $lpid $epid $ppid_; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  [ -s "$W/submits" ] && scancel $(awk '{print $1}' "$W/submits") 2>/dev/null
  "$root/deploy/slurm/stop.sh"
}
trap cleanup EXIT
[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 77; }
[ -x "$daemon_bin" ] || { log "$daemon_bin not built (needs libslurm-dev, libmicrohttpd-dev)"; exit 77; }
if [ $source = prometheus ]; then
  command -v prometheus >/dev/null || { log "prometheus not installed (scripts/deps.sh --with-slurm installs it)"; exit 77; }
  [ -x "$build/tests/dcgm_standin" ] || { log "$build/tests/dcgm_standin not built (needs libmicrohttpd-dev)"; exit 77; }
fi

"$root/deploy/slurm/stop.sh"
CLEAN=1 "$root/deploy/slurm/start.sh" >/dev/null || { log "cluster did not start"; exit 1; }

# The daemon's profile: light pairs with light and "sly" alike, at 0.95 (so it admits both pairs).
cat > "$W/profile.csv" <<'EOF'
model1,dataset1,batchsize1,amp1,speed1,model2,dataset2,batchsize2,amp2,speed2,gpu_util,gmem_util,gmem
light,synthetic,32,0,0.95,light,synthetic,32,0,0.95,80,30,6000
light,synthetic,32,0,0.95,sly,synthetic,32,0,0.95,80,30,6000
light,synthetic,32,0,0.95,sly2,synthetic,32,0,0.95,80,30,6000
EOF
# The truth the jobs run by: beside a sly job, a light job keeps 40% of its speed.
cat > "$W/truth" <<'EOF'
light light 0.95
light sly 0.40
sly light 0.90
light sly2 0.40
sly2 light 0.90
EOF
mkdir -p "$W/progress"
chmod 1777 "$W/progress"
cat > "$W/deepshared.conf" <<EOF
policy = deepshare
cycle = $cycle
poll = 0.25
journal = $W/journal.csv
listen = 127.0.0.1:$port
interference_profile = $W/profile.csv
default_runtime = 600
policy.eps = 1
# the monitor's rule, spelled out: the revocation bound below is derived from these
policy.w = $mon_w
policy.rho-min = $mon_tau
policy.monitor-z = $mon_z
telemetry = $([ $source = post ] && echo progress || echo $source)
$([ $source = progress ] && echo "progress_dir = $W/progress")
$([ $source = post ] && echo "progress_dir = off")
# prometheus: a sample shows the GPU as of up to 1.5 s before it (the stand-in's 0.5 s + the 1 s scrape; the
# query has no window): older, it is not yet a pair's sample, nor a job's solo one after its pair broke
$([ $source = prometheus ] && printf 'prometheus_url = http://127.0.0.1:%s\nprometheus_query = max by (hpc_job) (DCGM_FI_PROF_SM_ACTIVE)\ntelemetry_lag = 1.5\n' $pport)
telemetry_stale = 6
# the test cluster has no accounting: every job here is root's, charged to the account it names
trust_accounts = yes
tenant ta 8
tenant tb 8
EOF
# rate.sh MODEL SECONDS: every 0.5 s, 10 steps/s x the truth's retention beside the job sharing its GPU
# (none: 1), written as the protocol says (temporary file, then rename); stops writing while $W/freeze
# exists. Logs "degraded ID TIME" the first time its rate falls below its solo rate.
cat > "$W/rate.sh" <<EOF
#!/bin/bash
me=\$SLURM_JOB_ID model=\$1 end=\$((\$(date +%s) + \$2)) said=0
echo "start \$me \${SLURM_RESTART_COUNT:-0} \$(date +%s.%N) \$SLURMD_NODENAME" >> $W/events
while [ \$(date +%s) -lt \$end ]; do
  if [ ! -e $W/freeze ]; then
    mine=\$(squeue -h -j \$me -o '%b' | grep -o ':g[0-9][0-9]*:' | head -1 | tr -d :)
    other=\$(squeue -h -t R -w \$SLURMD_NODENAME -o '%i %b %k' | awk -v me=\$me -v g=":\$mine:" '\$1 != me && index(\$2, g) { for (i = 3; i <= NF; i++) if (\$i ~ /^model=/) { sub(/model=/, "", \$i); print \$i } }' | head -1)
    rho=1
    [ -n "\$other" ] && rho=\$(awk -v a=\$model -v b=\$other '\$1 == a && \$2 == b {print \$3}' $W/truth)
    rate=\$(awk -v r=\${rho:-1} 'BEGIN {print 10 * r}')
    if [ $source = post ]; then
      munge -s "job=\$me rate=\$rate" | curl -s -o /dev/null --data-binary @- http://127.0.0.1:$port/api/progress
    else
      echo \$rate > $W/progress/.\$me.tmp && mv $W/progress/.\$me.tmp $W/progress/\$me
    fi
    if [ \$said = 0 ] && awk -v r=\${rho:-1} 'BEGIN {exit !(r < 1)}'; then echo "degraded \$me \$(date +%s.%N) \$other \$rho" >> $W/events; said=1; fi
  fi
  sleep 0.5
done
echo "end \$me \${SLURM_RESTART_COUNT:-0} \$(date +%s.%N)" >> $W/events
EOF
chmod +x "$W/rate.sh"
touch "$W/events" "$W/submits"
sub() { # ACCOUNT MODEL SECONDS [CLASS]
  local id
  id=$(sbatch --parsable -p staging -A "$1" -c1 --comment="gpus=1 model=$2 dataset=synthetic batch=32${4:+ class=$4}" \
    -o /dev/null "$W/rate.sh" "$2" "$3") || return 1
  echo "$id $(now) $1" >> "$W/submits"
  echo "$id"
}
requeued_at() { # the daemon's log line "job ID requeued", as epoch seconds
  local t
  t=$(grep -m1 "job $1 requeued" "$W/deepshared.log" | cut -c1-23)
  [ -n "$t" ] && date -d "${t}Z" +%s.%N
}
if [ $source = prometheus ]; then
  # the stand-in dcgm-exporter: every 0.5 s, each running job's GPU (squeue %b: gres:shard:gN:1) gets the
  # activity sum over its jobs of solo activity (0.5) x retention beside the other (the
  # truth), one series per job id of the GPU, labelled as dcgm-exporter labels them
  dcgm_loop() {
    while :; do
      squeue -h -t R -o '%i %N %b %k' 2>/dev/null | awk -v truth="$W/truth" '
        BEGIN { while ((getline l < truth) > 0) { split(l, f, " "); rho[f[1] " " f[2]] = f[3] }
                solo["light"] = 0.5; solo["sly"] = 0.5; solo["sly2"] = 0.5
                print "# HELP DCGM_FI_PROF_SM_ACTIVE Ratio of cycles an SM has at least 1 warp assigned."
                print "# TYPE DCGM_FI_PROF_SM_ACTIVE gauge" }
        { m = ""; for (i = 4; i <= NF; i++) if ($i ~ /^model=/) { m = $i; sub(/^model=/, "", m) }
          mod[$1] = m; n = split($3, t, ",")
          for (k = 1; k <= n; k++) { split(t[k], f, ":"); g = f[3]; sub(/^g/, "", g); if (g != "") on[$2 " " g] = on[$2 " " g] " " $1 } }
        END { for (key in on) { split(key, kg, " "); c = split(substr(on[key], 2), js, " "); A = 0
                for (a = 1; a <= c; a++) { r = 1
                  for (b = 1; b <= c; b++) if (b != a && ((mod[js[a]] " " mod[js[b]]) in rho)) r = rho[mod[js[a]] " " mod[js[b]]]
                  A += solo[mod[js[a]]] * r }
                if (A > 1) A = 1
                for (a = 1; a <= c; a++)
                  printf "DCGM_FI_PROF_SM_ACTIVE{gpu=\"%s\",UUID=\"GPU-5afe0000-0000-4000-8000-%s%04d\",device=\"nvidia%s\",modelName=\"NVIDIA A100-SXM4-80GB\",Hostname=\"%s\",DCGM_FI_DRIVER_VERSION=\"535.104.05\",hpc_job=\"%s\"} %.4f\n", kg[2], kg[1], kg[2], kg[2], kg[1], js[a], A } }' \
        > "$W/dcgm.prom.tmp" && mv "$W/dcgm.prom.tmp" "$W/dcgm.prom"
      sleep 0.5
    done
  }
  : > "$W/dcgm.prom"
  dcgm_loop & lpid=$!
  "$build/tests/dcgm_standin" $eport "$W/dcgm.prom" & epid=$!
  printf 'global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nscrape_configs:\n  - job_name: dcgm\n    static_configs:\n      - targets: ["127.0.0.1:%s"]\n' $eport > "$W/prometheus.yml"
  prometheus --config.file="$W/prometheus.yml" --storage.tsdb.path="$W/prom" --web.listen-address="127.0.0.1:$pport" \
    > "$W/prometheus.log" 2>&1 & ppid_=$!
  t0=$(date +%s)
  until curl -s "http://127.0.0.1:$pport/api/v1/query?query=up" | grep -q '"value":\[[^]]*,"1"\]'; do
    [ $(($(date +%s) - t0)) -gt 60 ] && { bad "prometheus does not scrape the stand-in exporter (log: $(tail -3 "$W/prometheus.log"))"; break; }
    sleep 0.5
  done
  ok "prometheus scrapes the stand-in dcgm-exporter on 127.0.0.1:$eport"
fi
start_daemon

# 15 light guaranteed jobs and one sly one fill the 16 GPUs (8 per tenant: each tenant's quota); they run
# alone first, so each reports its solo rate for a few cycles (its baseline, and its workload's); the sly
# one then ends and a light one takes its GPU: a sly job's solo activity is known from then on (the
# Prometheus estimator needs both jobs' of a pair)
g=()
for i in $(seq 1 8); do g+=("$(sub ta light 400)"); [ $i -lt 8 ] && g+=("$(sub tb light 400)"); done
s0=$(sub tb sly 400)
wait_running 60 "${g[@]}" "$s0" && ok "15 light guaranteed jobs and a sly one run, one per GPU" || bad "the guaranteed jobs did not all start"
sleep $((4 * cycle))
scancel "$s0"
g+=("$(sub tb light 400)")
wait_running 60 "${g[@]}" && ok "the sly job's GPU went to a 16th light one" || bad "the 16th light job did not start"
sleep $((3 * cycle))
if [ $source = post ]; then
  # the trust boundary: nobody cannot report for root's job, and a credential counts once
  code=$(su -s /bin/sh nobody -c "munge -s 'job=${g[0]} rate=1'" | curl -s -o /dev/null -w '%{http_code}' --data-binary @- "http://127.0.0.1:$port/api/progress")
  [ "$code" = 403 ] && ok "a report for another user's job is refused (403)" || bad "nobody's report for job ${g[0]}: HTTP $code"
  cred=$(munge -s "job=${g[0]} rate=10")
  c1=$(echo "$cred" | curl -s -o /dev/null -w '%{http_code}' --data-binary @- "http://127.0.0.1:$port/api/progress")
  c2=$(echo "$cred" | curl -s -o /dev/null -w '%{http_code}' --data-binary @- "http://127.0.0.1:$port/api/progress")
  [ "$c1" = 200 ] && [ "$c2" = 401 ] && ok "a credential is taken once: $c1, then $c2 (replayed)" || bad "the same credential twice: $c1, $c2"
  ok "reports taken over HTTP: $(metric 'deepshare_progress_reports_total{result="taken"}')"
fi
if [ $source = prometheus ]; then
  probe=$("$daemon_bin" -c "$W/deepshared.conf" --probe-telemetry 2>&1)
  echo "$probe" | grep -q "^job ${g[0]} 0.5 " && ok "deepshared --probe-telemetry lists job ${g[0]} at 0.5 ($(echo "$probe" | head -1))" || bad "--probe-telemetry: $probe"
fi
[ $source = prometheus ] && ok "deepshared reads the exporter's samples: $(metric deepshare_telemetry_samples_total) so far, source up $(metric 'deepshare_telemetry_up{source="prometheus"}')"

# 1. a sly best-effort job: the daemon's profile pairs it at 0.95, its partner truly falls to 40%
b1=$(sub tb sly 400 BE)
wait_running 30 "$b1" && ok "sly BE job $b1 shares a GPU ($(squeue -h -j "$b1" -o '%N %b'))" || bad "sly BE job $b1 did not start"
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt $((10 * cycle + 10)) ] && [ -z "$(requeued_at "$b1")" ]; do sleep 0.3; done
tdeg=$(awk '$1 == "degraded" && $4 == "sly" {print $3; exit}' "$W/events")
treq=$(requeued_at "$b1")
# What the monitor measures of this pair: progress and post, the guaranteed job's own rate (0.40 of its
# solo rate); prometheus, the GPU's activity over both solo activities, (0.5 x 0.40 + 0.5 x 0.90) / (0.5 +
# 0.5) = 0.65 for both jobs (per-GPU counters cannot tell which one is slowed). The source's lag: the
# writer's 0.5 s (progress, post), the stand-in exporter's 0.5 s + Prometheus' 1 s scrape (prometheus).
# Bound: the lag, then n samples one cycle apart (the first within a cycle), + 1 cycle and the 0.25 s poll
# for a loaded machine. Prometheus: a pair's sample counts only once its window (telemetry_lag 1.5 s) lies
# wholly after both jobs started, so the first sample after the pair formed may be dropped: one cycle more.
if [ $source = prometheus ]; then r_seen=0.65 lag=1.5 extra=1; else r_seen=0.40 lag=0.5 extra=0; fi
read -r n_need bound < <(awk -v w=$mon_w -v t=$mon_tau -v z=$mon_z -v s0=$mon_sigma0 -v r=$r_seen -v c=$cycle -v l=$lag -v x1=$extra \
  'BEGIN { x = (z * s0 / log(t / r))^2; n = int(x); if (n < x) n++; if (n < w) n = w; print n, l + (n + 1 + x1) * c + 0.25 }')
if [ -n "$treq" ] && [ -n "$tdeg" ]; then
  lat=$(calc "$treq - $tdeg")
  ok "degraded pair revoked: BE job $b1 requeued $lat s after its partner's first degraded report (cycle $cycle s, w = $mon_w)"
  awk -v l="$lat" -v b="$bound" 'BEGIN {exit !(l <= b)}' \
    && ok "within the monitor's rule: measured $r_seen against tau $mon_tau needs $n_need samples; bound $bound s (source lag $lag s + $((n_need + 1 + extra)) cycles + poll)" \
    || bad "revocation latency $lat s > $bound s ($n_need samples of $r_seen against tau $mon_tau, $((n_need + 1 + extra)) cycles, source lag $lag s, poll)"
  echo "FIGURES revocation latency $lat s (cycle $cycle s, w $mon_w, $n_need samples needed, bound $bound s)" >&2
else
  bad "degraded pair not revoked (degraded report at ${tdeg:-never}, requeue at ${treq:-never}); log: $(tail -5 "$W/deepshared.log")"
fi
scancel "$b1"
sleep $cycle

# 2. a light best-effort job: truly 0.95 beside a light job, kept
b2=$(sub tb light 400 BE)
wait_running 30 "$b2" && ok "light BE job $b2 shares a GPU ($(squeue -h -j "$b2" -o '%N %b'))" || bad "light BE job $b2 did not start"
sleep $((8 * cycle))
[ -z "$(requeued_at "$b2")" ] && [ "$(state "$b2")" = RUNNING ] && ok "good pair kept for 8 cycles" || bad "good pair revoked"
scancel "$b2"

# 3. reports go stale (the jobs stop writing): a sly partner revokes nothing. It is "sly2", a pair the
# daemon has never measured: step 1 taught the policy that light beside sly keeps 40%, so it no longer
# admits that pair at all
touch "$W/freeze"
if [ $source = prometheus ]; then
  # the exporter stops answering: prometheus marks its series stale at the next failed scrape
  kill $lpid $epid; wait $lpid $epid 2>/dev/null; lpid="" epid=""
fi
sleep 8
b3=$(sub tb sly2 400 BE)
wait_running 30 "$b3" && ok "sly2 BE job $b3 shares a GPU while reports are stale" || bad "sly2 BE job $b3 did not start"
sleep $((8 * cycle))
[ -z "$(requeued_at "$b3")" ] && [ "$(state "$b3")" = RUNNING ] && ok "stale reports revoke nothing in 8 cycles" || bad "stale reports revoked a pair"
missing=$(metric deepshare_telemetry_retention_missing_total)
[ "${missing:-0}" -gt 0 ] && ok "deepshare_telemetry_retention_missing_total = $missing" || bad "no missing retention counted"

if [ $source = prometheus ]; then
  kill $ppid_; wait $ppid_ 2>/dev/null; ppid_=""
  pgrep -f "prometheus --config.file=$W/" >/dev/null && bad "prometheus still running" || ok "no prometheus left running"
fi

[ $fails = 0 ] && log "all checks passed" || log "$fails checks failed (work dir $W)"
exit $((fails > 0))
