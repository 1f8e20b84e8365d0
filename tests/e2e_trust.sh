#!/usr/bin/env bash
# e2e_trust.sh: the trust boundary of deepshared on the local Slurm cluster, tried as a plain user would
# (`runuser -u nobody`): prod and batch closed to users (job_submit.lua), accounts checked against the
# tenants' members, the GPUs Slurm grants counted, arrays, multi-node, --exclusive and conflicting requests
# refused once, --begin and dependencies honoured, control characters escaped in the log, a config file
# others may write refused. Needs root and 'scripts/deps.sh --with-slurm'.
# usage: tests/e2e_trust.sh BUILD_DIR   (E2E_KEEP=1 keeps the cluster up)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# one user of the machine-wide cluster at a time
[ -n "${DS_SLURM_LOCKED:-}" ] || exec "$root/scripts/with-cluster.sh" bash "$0" "$@"
build=$(cd "${1:?usage: e2e_trust.sh BUILD_DIR}" && pwd)
export SLURM_CONF=$root/deploy/slurm/slurm.conf
W=$(mktemp -d /tmp/ds-trust.XXXXXX)
chmod 755 "$W"
port=$((20000 + RANDOM % 12000))
fails=0
dpid=""
name=trust
daemon_bin=$build/deepshared
. "$root/tests/slurm_lib.sh"
U=(runuser -u nobody --)

cleanup() {
  [ -n "$dpid" ] && kill "$dpid" 2>/dev/null
  scancel -u nobody 2>/dev/null
  [ -s "$W/submits" ] && scancel $(awk '{print $1}' "$W/submits") 2>/dev/null
  [ -z "${E2E_KEEP:-}" ] && "$root/deploy/slurm/stop.sh"
}
trap cleanup EXIT

[ "$(id -u)" -eq 0 ] || { log "needs root"; exit 77; }
[ -x "$daemon_bin" ] || { log "$daemon_bin not built (needs libslurm-dev, libmicrohttpd-dev)"; exit 77; }
id nobody >/dev/null 2>&1 || { log "no user nobody"; exit 77; }

"$root/deploy/slurm/stop.sh"
CLEAN=1 "$root/deploy/slurm/start.sh" >/dev/null || { log "cluster did not start"; exit 1; }
write_job_script
chmod 666 "$W/events"
# usubmit ACCOUNT SECONDS COMMENT [sbatch args]: a submission of user nobody into staging -> job id
usubmit() {
  local acct=$1 secs=$2 comment=$3
  shift 3
  local id c=()
  [ -n "$comment" ] && c=(--comment="$comment")
  id=$(cd /tmp && "${U[@]}" sbatch --parsable -p staging -A "$acct" -c1 "${c[@]}" -o /dev/null "$@" "$W/job.sh" "$secs") || return 1
  id=${id%%;*}
  echo "$id $(now) $acct" >> "$W/submits"
  echo "$id"
}
# lines of the daemon's log about job $1 that contain $2
logged() { grep -c "job $1: .*$2" "$W/deepshared.log"; }

# ---- Slurm's side (job_submit.lua): a plain user cannot put a job into prod or batch
out=$(cd /tmp && "${U[@]}" sbatch -p prod -A ta --gres=gpu:1 -o /dev/null --wrap 'sleep 5' 2>&1); rc=$?
[ $rc != 0 ] && echo "$out" | grep -q 'reserved to deepshared' \
  && ok "a plain user's sbatch -p prod is refused by Slurm: $(echo "$out" | tail -1)" || bad "sbatch -p prod as nobody: rc $rc, $out"
out=$(cd /tmp && "${U[@]}" sbatch -p staging,batch -A ta -o /dev/null --wrap 'sleep 5' 2>&1); rc=$?
[ $rc != 0 ] && ok "a plain user's sbatch -p staging,batch is refused too" || bad "sbatch -p staging,batch as nobody: rc $rc, $out"

cat > "$W/deepshared.conf" <<EOF
cycle = 2
poll = 0.25
journal = $W/journal.csv
listen = 127.0.0.1:$port
default_runtime = 600
gpu_sharing = 0
# accounting is off on this cluster: each tenant names its members
tenant ta 8 users=root
tenant tb 8 users=nobody
EOF
chmod 600 "$W/deepshared.conf"

# ---- a config file others may write is refused (start, --check-config, reload)
cp "$W/deepshared.conf" "$W/open.conf"; chmod 666 "$W/open.conf"
"$daemon_bin" --check-config "$W/open.conf" >"$W/cc.open" 2>&1; rc=$?
[ $rc = 1 ] && grep -q 'writable by' "$W/cc.open" && ok "a world-writable config is refused: $(head -1 "$W/cc.open")" \
  || bad "world-writable config: rc $rc, $(cat "$W/cc.open")"
cp "$W/deepshared.conf" "$W/foreign.conf"; chmod 644 "$W/foreign.conf"; chown nobody "$W/foreign.conf"
"$daemon_bin" --check-config "$W/foreign.conf" >"$W/cc.foreign" 2>&1; rc=$?
[ $rc = 1 ] && grep -q 'owned by' "$W/cc.foreign" && ok "a config owned by another user is refused: $(head -1 "$W/cc.foreign")" \
  || bad "foreign-owned config: rc $rc, $(cat "$W/cc.foreign")"
# without members, accounts are free-form with accounting off: the daemon refuses to start
printf 'listen = off\njournal = %s/j2.csv\ntenant ta 8\n' "$W" > "$W/noid.conf"; chmod 600 "$W/noid.conf"
timeout 20 "$daemon_bin" -c "$W/noid.conf" >"$W/noid.log" 2>&1; rc=$?
[ $rc != 0 ] && grep -q 'trust_accounts' "$W/noid.log" && ok "tenants without members on a cluster without enforced accounting: the daemon refuses to start ($(grep -m1 trust_accounts "$W/noid.log" | cut -c1-160))" \
  || bad "no members, no accounting: rc $rc, $(tail -2 "$W/noid.log")"

start_daemon
sleep 1.5
kill -0 "$dpid" 2>/dev/null || { bad "the daemon did not start: $(tail -3 "$W/deepshared.log")"; exit 1; }

# ---- a partition change to prod by the job's owner is refused and leaves the job where it was
hold_j=$(usubmit tb 30 'gpus=1' --hold)
out=$("${U[@]}" scontrol update jobid="$hold_j" partition=prod 2>&1); rc=$?
p=$(part "$hold_j")
[ $rc != 0 ] && [ "$p" = staging ] && ok "a plain user's scontrol update partition=prod is refused ($out); the job stays in $p" \
  || bad "partition change to prod as nobody: rc $rc, $out, job in $p"
scancel "$hold_j"

# ---- accounts: a job charged to a tenant its user is not a member of is not scheduled
foreign=$(usubmit ta 30 'gpus=1')
member=$(usubmit tb 30 'gpus=1')
wait_running 15 "$member" && ok "a member's job (nobody in tb) runs: $(squeue -h -j "$member" -o '%P %b')" || bad "tb's job of nobody did not run"
# the job's user cannot change what deepshared chose for it (job_submit.lua)
out=$("${U[@]}" scontrol update jobid="$member" gres=gpu:4 2>&1); rc=$?
g=$(squeue -h -j "$member" -o '%b')
[ $rc != 0 ] && [[ "$g" != *gpu:4* ]] && ok "its user's scontrol update gres=gpu:4 on it in prod is refused ($out); it keeps $g" \
  || bad "gres change of a job in prod by its user: rc $rc, $out"
sleep 3
[ "$(state "$foreign")" = PENDING ] && [ "$(part "$foreign")" = staging ] && [ "$(logged "$foreign" 'not a member')" = 1 ] \
  && ok "nobody's job charged to ta (not a member) stays in staging, logged once: $(grep -m1 "job $foreign:" "$W/deepshared.log" | cut -c1-200)" \
  || bad "non-member job: $(state "$foreign") in $(part "$foreign"), $(logged "$foreign" 'not a member') log lines"

# ---- typed GRES: counted as Slurm counts it; a comment that disagrees is refused once
typed=$(usubmit tb 30 '' --gres=gpu:g1:1,gpu:g2:1)
conflict=$(usubmit tb 30 'gpus=1' --gres=gpu:g1:1,gpu:g2:1)
if wait_running 15 "$typed"; then
  sleep $((2 + 1))
  g=$(metric 'deepshare_tenant_guaranteed_gpus{tenant="tb"}')
  [ "$g" = 3 ] && ok "a --gres=gpu:g1:1,gpu:g2:1 job counts 2 GPUs, as Slurm allocates: tb holds $g GPUs ($(squeue -h -j "$typed" -o '%b'))" \
    || bad "typed GRES: tb holds '$g' GPUs, expected 3 ($(squeue -h -j "$typed" -o '%b'))"
else bad "the typed-GRES job did not run"; fi
[ "$(state "$conflict")" = PENDING ] && [ "$(logged "$conflict" 'Slurm allocates')" = 1 ] \
  && ok "--comment=gpus=1 next to a typed 2-GPU GRES is refused once: $(grep -m1 "job $conflict:" "$W/deepshared.log" | cut -c1-200)" \
  || bad "conflicting GPU request: $(state "$conflict"), $(logged "$conflict" 'Slurm allocates') log lines"

# ---- arrays, multi-node, --exclusive: refused once with one log line, left in staging
arr=$(usubmit tb 5 'gpus=1' --array=0-3)
multi=$(usubmit tb 5 'gpus=1' -N2)
excl=$(usubmit tb 5 'gpus=1' --exclusive)
dup=$(usubmit tb 5 'gpus=1 gpus=2')
big=$(usubmit tb 5 'gpus=99999999999999999999')
pergpu=$(usubmit tb 5 '' --gpus=2)
shard=$(usubmit tb 5 '' --gres=shard:1)
sleep 8   # several passes and two cycles
for pair in "$arr:job array" "$multi:nodes" "$excl:exclusive" "$dup:twice" "$big:gpus" "$pergpu:--gpus" "$shard:shards"; do
  j=${pair%%:*} why=${pair#*:}
  n=$(logged "$j" "$why")
  [ "$(part "$j")" = staging ] && [ "$n" = 1 ] && ok "refused once ($why): $(grep -m1 "job $j:" "$W/deepshared.log" | cut -c1-180)" \
    || bad "job $j ($why): in $(part "$j"), $n log lines: $(grep "job $j" "$W/deepshared.log" | head -3)"
done
[ "$(squeue -h -r -j "$arr" -t R 2>/dev/null | wc -l)" = 0 ] && ok "no task of the array ran" || bad "array tasks ran"

# ---- --begin in the future: not started before it; started after it
beg=$(usubmit tb 5 'gpus=1' --begin=now+12)
sleep 6
[ "$(state "$beg")" = PENDING ] && [ "$(part "$beg")" = staging ] && ok "a job with --begin=now+12 is still in staging 6 s after its submission" \
  || bad "--begin job: $(state "$beg") in $(part "$beg") after 6 s"
wait_running 20 "$beg" && ok "the --begin job runs after its begin time: started $(calc "$(first_start "$beg") - $(submit_time "$beg")") s after submission" \
  || bad "the --begin job did not run after its begin time"

# ---- a dependency: not started while it is unfulfilled; started once it is
first=$(usubmit tb 120 'gpus=1')
wait_running 15 "$first" || bad "job $first did not run"
dep=$(usubmit tb 5 'gpus=1' -d "afterany:$first")
sleep 4
[ "$(state "$first")" = RUNNING ] && [ "$(state "$dep")" = PENDING ] && [ "$(part "$dep")" = staging ] \
  && ok "a job depending on running job $first waits in staging ($(squeue -h -j "$dep" -o '%E'))" \
  || bad "dependent job: $(state "$dep") in $(part "$dep") while $first is $(state "$first")"
scancel "$first"
wait_running 20 "$dep" && ok "the dependent job runs once job $first ended" || bad "the dependent job did not run after its dependency"

# ---- an operator's own job in prod (root may submit there): not adopted, re-pinned or charged; counted
op=$(cd /tmp && sbatch --parsable -p prod -A tb -w n4 --gres=gpu:g3:1 -c1 -o /dev/null --wrap 'sleep 30')
echo "$op $(now) tb" >> "$W/submits"
wait_running 15 "$op" || bad "root's job $op in prod did not run"
sleep 3
ac=$(scontrol show job "$op" | grep -o 'AdminComment=[^ ]*')
[ "$(logged "$op" 'not dispatched by deepshared')" = 1 ] && [ "$(metric deepshare_jobs_foreign)" = 1 ] && [[ "$ac" != *deepshare* ]] \
  && ok "root's own job in prod is left alone (not adopted: no admin comment of ours, ${ac:-none}), counted by deepshare_jobs_foreign, logged once" \
  || bad "operator's job $op: $(logged "$op" 'not dispatched by deepshared') log lines, deepshare_jobs_foreign $(metric deepshare_jobs_foreign), $ac"
scancel "$op"

# ---- control characters in an account name reach the log escaped
esc=$(usubmit $'tb\033[2J' 5 'gpus=1' 2>/dev/null)
sleep 2
if [ -n "$esc" ]; then
  if grep -q $'\033' "$W/deepshared.log"; then bad "a raw ESC byte reached the daemon's log"
  else ok "an account with an escape sequence is logged escaped: $(grep -m1 "job $esc:" "$W/deepshared.log" | cut -c1-160)"; fi
fi

cp "$W/deepshared.log" /tmp/ds-trust-last.log 2>/dev/null
if [ $fails -gt 0 ]; then log "$fails checks failed; daemon log: $W/deepshared.log"; exit 1; fi
log "all checks passed"
rm -rf "$W"
exit 0
