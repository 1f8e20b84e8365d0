#!/usr/bin/env bash
# e2e_types.sh: deepshared on the local Slurm cluster with two GPU models (deploy/slurm/variants/typed: n1, n2
# with 4 V100s, n3, n4 with 2 K80s, Gres=gpu:TYPE:N): the per-type inventory read from the nodes, typed
# requests (--gres=gpu:TYPE:N) run on their type as gres=gpu:TYPE:N on the node deepshared chose, per-type
# quotas (a K80 job beyond its tenant's K80 quota borrows as best effort and is reclaimed by the owner of
# that quota), an untyped job placed on whichever type has room, and the speed table (config key speeds,
# data/gavel/speeds.csv): on the idle cluster an untyped job whose workload gains much on a V100 runs there,
# one that gains little on a K80, and explain shows the speeds the policy sees. Needs root and the packages of
# 'scripts/deps.sh --with-slurm'.
# usage: tests/e2e_types.sh BUILD_DIR   (env: E2E_CYCLE=2, E2E_KEEP=1 keeps the cluster up)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ -n "${DS_SLURM_LOCKED:-}" ] || exec "$root/scripts/with-cluster.sh" bash "$0" "$@"
build=$(cd "${1:?usage: e2e_types.sh BUILD_DIR}" && pwd)
cycle=${E2E_CYCLE:-2}
export SLURM_CONF=$root/deploy/slurm/variants/typed/slurm.conf
W=$(mktemp -d /tmp/ds-e2e-types.XXXXXX)
chmod 755 "$W"
port=$((20000 + RANDOM % 12000))
fails=0
dpid=""
name=e2e-types
daemon_bin=$build/deepshared
. "$root/tests/slurm_lib.sh"

cleanup() {
  [ -n "$dpid" ] && kill "$dpid" 2>/dev/null
  [ -s "$W/submits" ] && scancel $(awk '{print $1}' "$W/submits") 2>/dev/null
  [ -z "${E2E_KEEP:-}" ] && "$root/deploy/slurm/stop.sh"
}
trap cleanup EXIT

[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 77; }
[ -x "$daemon_bin" ] || { log "$daemon_bin not built (needs libslurm-dev, libmicrohttpd-dev)"; exit 77; }

"$root/deploy/slurm/stop.sh"
CLEAN=1 "$root/deploy/slurm/start.sh" --variant typed >/dev/null || { log "cluster did not start"; exit 1; }
gres=$(sinfo -h -N -o '%N %G' | sort -u | tr '\n' ' ')
log "nodes: $gres"

cat > "$W/deepshared.conf" <<EOF
policy = deepshare
cycle = $cycle
poll = 0.25
journal = $W/journal.csv
default_runtime = 600
policy.eps = 1
# the test cluster has no accounting: every job here is root's, charged to the account it names
trust_accounts = yes
listen = 127.0.0.1:$port
# each workload's throughput per GPU model (Gavel's measurements, MIT)
speeds = $root/data/gavel/speeds.csv
# quotas per GPU model: the cluster has 8 V100s and 4 K80s
tenant vision v100:4,k80:2
tenant speech v100:4,k80:2
EOF
chmod 600 "$W/deepshared.conf"
write_job_script
start_daemon

# ---- 1. the inventory per type, from the nodes' Gres
for _ in $(seq 1 50); do grep -q 'cluster: GPU type v100' "$W/deepshared.log" && break; sleep 0.2; done
if grep -q 'cluster: GPU type k80: 2 nodes x 2 GPUs' "$W/deepshared.log" &&
   grep -q 'cluster: GPU type v100: 2 nodes x 4 GPUs' "$W/deepshared.log"; then
  ok "step 1: inventory per type from the nodes' Gres: $(grep -o 'GPU type [a-z0-9]*: [0-9]* nodes x [0-9]* GPUs' "$W/deepshared.log" | sort -u | tr '\n' ';')"
else bad "step 1: no per-type inventory in the log: $(grep 'cluster' "$W/deepshared.log" | head -3)"; fi

# ---- 1b. the speed table: ResNet-18 (CIFAR-10, batch 256) runs 12.7x faster on a V100 than on a K80, the
# Transformer (Multi30k, batch 16) 2.0x, a V100 does 4.2 K80s' work on average: each goes where it loses least
log "step 1b: two untyped one-GPU jobs with workloads of the speed table on the idle cluster"
r1=$(submit speech 300 "gpus=1 model=ResNet-18 dataset=CIFAR-10 batch=256")
t1=$(submit speech 300 "gpus=1 model=Transformer dataset=Multi30k batch=16")
if wait_running 30 "$r1" "$t1"; then
  nr=$(squeue -h -j "$r1" -o '%N'); nt=$(squeue -h -j "$t1" -o '%N')
  xr=$("$build/deepshare" explain --addr "127.0.0.1:$port" "$r1" 2>&1 | grep 'speed:')
  if [[ $nr =~ ^n[12]$ ]] && [[ $nt =~ ^n[34]$ ]] && [[ $xr == *"v100 x12.70"* ]]; then
    ok "step 1b: by the speed table the ResNet runs on $nr (V100), the Transformer on $nt (K80); explain:$xr"
  else bad "step 1b: ResNet on '$nr', Transformer on '$nt' (want n1|n2 and n3|n4); explain: '$xr'"; fi
  grep -q 'speeds: effective GPUs per GPU of each type against k80: k80 x1.00, v100 x' "$W/deepshared.log" ||
    bad "step 1b: no speeds line in the log"
else bad "step 1b: jobs not running: $(squeue -h -j "$r1,$t1" -o '%i %T %P %r %b')"; fi
scancel "$r1" "$t1"
for _ in $(seq 1 100); do [ -z "$(squeue -h -j "$r1,$t1" -o '%i' 2>/dev/null)" ] && break; sleep 0.2; done

# ---- 2. typed requests run on their type, asked of Slurm as gpu:TYPE:N; Slurm picks the GPUs
log "step 2: vision asks for gpu:k80:2 (its K80 quota), speech for gpu:v100:3"
k1=$(submit vision 120 "model=m" --gres=gpu:k80:2)
v1=$(submit speech 120 "model=m" --gres=gpu:v100:3)
if wait_running 30 "$k1" "$v1"; then
  nk=$(squeue -h -j "$k1" -o '%N'); nv=$(squeue -h -j "$v1" -o '%N')
  gk=$(scontrol show job -d "$k1" | grep -o 'GRES=gpu:k80[^ ]*' | tail -1)
  gv=$(scontrol show job -d "$v1" | grep -o 'GRES=gpu:v100[^ ]*' | tail -1)
  if [[ $nk =~ ^n[34]$ ]] && [[ $nv =~ ^n[12]$ ]] && [ -n "$gk" ] && [ -n "$gv" ] &&
     [ "$(part "$k1")" = prod ] && [ "$(part "$v1")" = prod ]; then
    ok "step 2: the K80 job runs on $nk ($gk), the V100 job on $nv ($gv), both guaranteed (prod)"
  else bad "step 2: k80 job on '$nk' ($gk, $(part "$k1")), v100 job on '$nv' ($gv, $(part "$v1"))"; fi
else bad "step 2: typed jobs not running: $(squeue -h -j "$k1,$v1" -o '%i %T %P %r %b')"; fi

# ---- 3. per-type quota: vision's second K80 job is beyond its K80 quota: it borrows speech's idle K80s
log "step 3: vision's second gpu:k80:2 job borrows speech's K80 quota"
k2=$(submit vision 120 "model=m" --gres=gpu:k80:2)
if wait_running 30 "$k2" && [ "$(part "$k2")" = batch ]; then
  ok "step 3: beyond its K80 quota, job $k2 runs best-effort (batch) on $(squeue -h -j "$k2" -o '%N')"
else bad "step 3: job $k2: $(squeue -h -j "$k2" -o '%T %P %r')"; fi

# ---- 4. the owner of that K80 quota reclaims it: the borrowed job is requeued, the owner's runs
log "step 4: speech asks for its K80s (gpu:k80:2)"
k3=$(submit speech 60 "model=m" --gres=gpu:k80:2)
if wait_running 60 "$k3"; then
  n3=$(squeue -h -j "$k3" -o '%N')
  rq=$(scontrol show job "$k2" | grep -o 'Restarts=[0-9]*')
  if [ "$(part "$k3")" = prod ] && [ "$rq" != "Restarts=0" ] && [ "$(state "$k2")" != RUNNING ] &&
     [ "$(state "$k1")" = RUNNING ]; then
    ok "step 4: speech's K80 job runs guaranteed on $n3; vision's borrowed K80 job requeued ($rq), its K80 job within quota kept"
  else bad "step 4: k3 in $(part "$k3") on $n3; k2 $(state "$k2") $rq; k1 $(state "$k1")"; fi
else bad "step 4: speech's K80 job not running: $(squeue -h -j "$k3" -o '%T %P %r'); k2 $(state "$k2")"; fi

# ---- 5. an untyped request: the K80s are full, so it runs on a V100, asked as gpu:v100:1
log "step 5: an untyped one-GPU job"
u1=$(submit speech 30 "gpus=1 model=m")
if wait_running 30 "$u1"; then
  nu=$(squeue -h -j "$u1" -o '%N'); gu=$(scontrol show job -d "$u1" | grep -o 'GRES=gpu:[a-z0-9]*[^ ]*' | tail -1)
  [[ $nu =~ ^n[12]$ ]] && [[ $gu == GRES=gpu:v100* ]] && ok "step 5: untyped job runs on $nu ($gu)" \
    || bad "step 5: untyped job on $nu ($gu)"
else bad "step 5: untyped job not running: $(squeue -h -j "$u1" -o '%T %P %r')"; fi

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
