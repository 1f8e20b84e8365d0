#!/usr/bin/env bash
# e2e_types_shared.sh: deepshared on the local Slurm cluster with two GPU models given as per-GPU types that
# carry the model (deploy/slurm/variants/typed-shared: n1, n2 with 4 V100s typed v100_g0..v100_g3, n3, n4 with
# 2 K80s typed k80_g0, k80_g1, two shards per GPU, each node's model as its feature; the variant's
# job_submit.lua rewrites --gres=gpu:MODEL:N into --gres=gpu:N --constraint=MODEL). Checks: the models read
# from the per-GPU type names; a typed request --gres=gpu:v100:1 accepted and run on a V100, pinned as
# gpu:v100_gN:1; a per-type quota (a K80 job beyond its tenant's K80 quota runs best effort until the owner of
# that quota asks for it, then is requeued); two light jobs
# colocated on one V100 through shard:v100_gN:1; no GPU ever holds a whole-GPU job beside another or more
# than two jobs. Needs root and the packages of 'scripts/deps.sh --with-accounting' (Slurm with lua).
# usage: tests/e2e_types_shared.sh BUILD_DIR   (env: E2E_CYCLE=2, E2E_KEEP=1 keeps the cluster up)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ -n "${DS_SLURM_LOCKED:-}" ] || exec "$root/scripts/with-cluster.sh" bash "$0" "$@"
build=$(cd "${1:?usage: e2e_types_shared.sh BUILD_DIR}" && pwd)
cycle=${E2E_CYCLE:-2}
export SLURM_CONF=$root/deploy/slurm/variants/typed-shared/slurm.conf
W=$(mktemp -d /tmp/ds-e2e-tshared.XXXXXX)
chmod 755 "$W"
port=$((20000 + RANDOM % 12000))
fails=0
dpid=""
mon=""
name=e2e-types-shared
daemon_bin=$build/deepshared
. "$root/tests/slurm_lib.sh"

cleanup() {
  [ -n "$mon" ] && kill "$mon" 2>/dev/null
  [ -n "$dpid" ] && kill "$dpid" 2>/dev/null
  [ -s "$W/submits" ] && scancel $(awk '{print $1}' "$W/submits") 2>/dev/null
  [ -z "${E2E_KEEP:-}" ] && "$root/deploy/slurm/stop.sh"
}
trap cleanup EXIT

[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 77; }
[ -x "$daemon_bin" ] || { log "$daemon_bin not built (needs libslurm-dev, libmicrohttpd-dev)"; exit 77; }

"$root/deploy/slurm/stop.sh"
CLEAN=1 "$root/deploy/slurm/start.sh" --variant typed-shared >/dev/null || { log "cluster did not start"; exit 1; }
grep -q 'GPU models rewritten' /var/log/slurm-ds/slurmctld.log ||
  { log "slurmctld did not load the variant's job_submit.lua (Slurm's lua plugin needs liblua5.1-0)"; exit 1; }
log "nodes: $(sinfo -h -N -o '%N %f %G' | sort -u | head -1) ..."

# "light" pairs keep 95% of their speed (tests/e2e_slurm.sh's profile)
cat > "$W/profile.csv" <<'EOF'
model1,dataset1,batchsize1,amp1,speed1,model2,dataset2,batchsize2,amp2,speed2,gpu_util,gmem_util,gmem
light,synthetic,32,0,0.95,light,synthetic,32,0,0.95,80,30,6000
EOF
cat > "$W/deepshared.conf" <<EOF
policy = deepshare
cycle = $cycle
poll = 0.25
journal = $W/journal.csv
default_runtime = 600
interference_profile = $W/profile.csv
policy.eps = 1
# the test cluster has no accounting: every job here is root's, charged to the account it names
trust_accounts = yes
listen = 127.0.0.1:$port
# quotas per GPU model: the cluster has 8 V100s and 4 K80s
tenant vision v100:4,k80:2
tenant speech v100:4,k80:2
EOF
chmod 600 "$W/deepshared.conf"
write_job_script
start_daemon
monitor &
mon=$!
light='model=light dataset=synthetic batch=32 amp=0'

# ---- 1. the models from the per-GPU type names
for _ in $(seq 1 50); do grep -q 'cluster: GPU type v100' "$W/deepshared.log" && break; sleep 0.2; done
if grep -q 'cluster: GPU type k80: 2 nodes x 2 GPUs.*pinned per GPU' "$W/deepshared.log" &&
   grep -q 'cluster: GPU type v100: 2 nodes x 4 GPUs.*pinned per GPU' "$W/deepshared.log"; then
  ok "step 1: models from the per-GPU types: $(grep -o 'GPU type [a-z0-9]*: [0-9]* nodes x [0-9]* GPUs' "$W/deepshared.log" | sort -u | tr '\n' ';')"
else bad "step 1: no per-type inventory in the log: $(grep 'cluster' "$W/deepshared.log" | head -3)"; fi

# ---- 2. a typed request: rewritten at submit, run on a V100 pinned as gpu:v100_gN:1
log "step 2: vision asks for --gres=gpu:k80:1, then changes it to --gres=gpu:v100:1"
err=$(sbatch -p staging -A vision -c1 -o /dev/null --gres=gpu:v100:1 --constraint=k80 "$W/job.sh" 5 2>&1) &&
  bad "step 2: a model with another constraint was accepted: $err" ||
  { [[ $err == *"give the model once"* ]] && ok "step 2: --gres=gpu:v100:1 --constraint=k80 refused at submit: ${err%%$'\n'*}" ||
    bad "step 2: refused without the reason: $err"; }
# held at submit, so that what Slurm keeps of the request is read before deepshared pins the job
# (submitted for a K80, changed to a V100 while pending: the rewrite applies to a change too)
v1=$(submit vision 120 "model=m" --gres=gpu:k80:1 -H)
if [ -z "$v1" ]; then bad "step 2: --gres=gpu:k80:1 not accepted"
else
  asked0=$(scontrol show job "$v1" | grep -oE 'TresPerNode=[^ ]*|Features=[^ ]*' | sort | tr '\n' ' ')
  scontrol update jobid="$v1" gres=gpu:v100:1
  asked=$(scontrol show job "$v1" | grep -oE 'TresPerNode=[^ ]*|Features=[^ ]*' | sort | tr '\n' ' ')
  [ "$asked0" = "Features=k80 TresPerNode=gres:gpu:1 " ] && [ "$asked" = "Features=v100 TresPerNode=gres:gpu:1 " ] ||
    bad "step 2: job $v1 in Slurm: '$asked0', after the change '$asked' (want the model as the constraint)"
  scontrol release "$v1"
  if wait_running 30 "$v1"; then
    nv=$(squeue -h -j "$v1" -o '%N'); gv=$(squeue -h -j "$v1" -o '%b')
    if [[ $nv =~ ^n[12]$ ]] && [[ $gv =~ gpu:v100_g[0-3]:1 ]] && [ "$(part "$v1")" = prod ]; then
      ok "step 2: job $v1 (submitted as gpu:k80:1, in Slurm: $asked0; changed to gpu:v100:1: $asked) runs guaranteed on $nv as $gv"
    else bad "step 2: job $v1 on '$nv' as '$gv' in $(part "$v1") (asked: $asked)"; fi
  else bad "step 2: job $v1 not running: $(squeue -h -j "$v1" -o '%T %P %r %b')"; fi
fi

# ---- 3. per-type quota: vision's K80 quota is 2; its second gpu:k80:2 job runs best effort
log "step 3: vision asks for gpu:k80:2 twice (its K80 quota is 2)"
k1=$(submit vision 120 "model=m" --gres=gpu:k80:2)
wait_running 30 "$k1"
k2=$(submit vision 120 "model=m" --gres=gpu:k80:2)
if wait_running 30 "$k1" "$k2"; then
  n1=$(squeue -h -j "$k1" -o '%N'); n2=$(squeue -h -j "$k2" -o '%N')
  if [[ $n1 =~ ^n[34]$ ]] && [[ $n2 =~ ^n[34]$ ]] && [ "$(part "$k1")" = prod ] && [ "$(part "$k2")" = batch ]; then
    ok "step 3: K80 job $k1 within the quota runs guaranteed on $n1 ($(squeue -h -j "$k1" -o '%b')), $k2 beyond it best effort on $n2"
  else bad "step 3: k1 on $n1 in $(part "$k1"), k2 on $n2 in $(part "$k2")"; fi
else bad "step 3: K80 jobs not running: $(squeue -h -j "$k1,$k2" -o '%i %T %P %r %b')"; fi

# ---- 3b. the owner of that K80 quota reclaims it: the borrowed job is requeued, the owner's runs
log "step 3b: speech asks for its K80s (gpu:k80:2)"
k3=$(submit speech 120 "model=m" --gres=gpu:k80:2)
if wait_running $((4 * cycle + 20)) "$k3"; then
  rq=$(scontrol show job "$k2" | grep -o 'Restarts=[0-9]*')
  if [ "$(part "$k3")" = prod ] && [ "$rq" != "Restarts=0" ] && [ "$(state "$k2")" != RUNNING ] && [ "$(state "$k1")" = RUNNING ]; then
    ok "step 3b: speech's K80 job $k3 runs guaranteed on $(squeue -h -j "$k3" -o '%N'); vision's borrowed $k2 requeued ($rq), $k1 kept"
  else bad "step 3b: k3 in $(part "$k3"); k2 $(state "$k2") $rq; k1 $(state "$k1")"; fi
else bad "step 3b: speech's K80 job not running: $(squeue -h -j "$k3" -o '%T %P %r'); k2 $(state "$k2")"; fi
scancel "$k2"

# ---- 4. colocation: the 7 free V100s get light one-GPU jobs (on shards), then one more light job shares one
log "step 4: 7 light jobs on the V100s (--constraint=v100), then an 8th (best effort)"
fill=()
for i in 1 2 3 4; do fill+=("$(submit speech 120 "gpus=1 $light" --constraint=v100)"); done
for i in 1 2 3; do fill+=("$(submit vision 120 "gpus=1 $light" --constraint=v100)"); done
if wait_running 40 "${fill[@]}"; then
  ok "step 4: 7 light jobs run on the V100s: $(squeue -h -j "$(IFS=,; echo "${fill[*]}")" -o '%N:%b' | sort | tr '\n' ' ')"
else bad "step 4: light jobs not running: $(squeue -h -j "$(IFS=,; echo "${fill[*]}")" -o '%i %T %r %b' | tr '\n' ';')"; fi
extra=$(submit speech 90 "gpus=1 class=BE $light" --constraint=v100)
if wait_running $((4 * cycle + 10)) "$extra"; then
  where=$(squeue -h -j "$extra" -o '%N %b')
  node=${where%% *}; gpu=$(echo "$where" | grep -o 'v100_g[0-9]')
  mates=$(squeue -h -t R -o '%i %N %b' | awk -v n="$node" -v g=":$gpu:" -v me="$extra" '$2 == n && index($3, g) && $1 != me {print $1}')
  if [[ $where == *"shard:v100_g"* ]] && [ -n "$mates" ]; then
    ok "step 4: light job $extra shares $node GPU $gpu with job $mates (both on shard:$gpu:1)"
  else bad "step 4: job $extra runs as '$where' without a partner"; fi
else bad "step 4: the 8th light job did not start: $(squeue -h -j "$extra" -o '%T %r'); $(tail -3 "$W/deepshared.log")"; fi
m=$(metric deepshare_colocations_total)
[ "${m:-0}" -ge 1 ] 2>/dev/null && ok "step 4: colocations counted ($m)" || bad "step 4: no colocation counted ('$m')"

kill "$mon" 2>/dev/null; mon=""
[ -s "$W/violations" ] && bad "GPU invariant violated: $(sort -u "$W/violations" | head -3)" ||
  ok "no GPU held a whole-GPU job beside another, none held more than two jobs"
grep -qE 'rebuilding state|cannot build the engine' "$W/deepshared.log" &&
  log "note: $(grep -cE 'rebuilding state' "$W/deepshared.log") rebuilds: $(grep -E 'rebuilding state|cannot build' "$W/deepshared.log" | head -3)"
kill -0 "$dpid" 2>/dev/null || bad "deepshared exited: $(tail -5 "$W/deepshared.log")"
if [ $fails = 0 ]; then
  log "all passed ($W)"
else
  log "$fails failed; daemon log: $W/deepshared.log"
  tail -30 "$W/deepshared.log" >&2
fi
[ $fails = 0 ]
