# slurm_lib.sh: shell helpers of the tests that run deepshared on the local Slurm cluster (tests/e2e_slurm.sh,
# tests/soak_daemon.sh). Source it after setting: name (the log prefix), W (the work directory), port (the
# daemon's HTTP port), daemon_bin and fails=0; start_daemon sets dpid.

log() { echo "$name: $*" >&2; }
ok() { echo "$name: PASS $*" >&2; }
bad() { echo "$name: FAIL $*" >&2; fails=$((fails + 1)); }
now() { date +%s.%N; }
calc() { awk "BEGIN {print $*}"; }

# $W/job.sh SECONDS: each job logs its starts and its end to $W/events; a requeued run is killed before
# its end line, so a job that finished twice shows two end lines
write_job_script() {
  cat > "$W/job.sh" <<EOF
#!/bin/bash
echo "start \$SLURM_JOB_ID \${SLURM_RESTART_COUNT:-0} \$(date +%s.%N) \$SLURMD_NODENAME" >> $W/events
sleep \$1
echo "end \$SLURM_JOB_ID \${SLURM_RESTART_COUNT:-0} \$(date +%s.%N)" >> $W/events
EOF
  chmod +x "$W/job.sh"
  touch "$W/events" "$W/submits"
}

start_daemon() {
  # deepshared will not start while slurmctld does not answer (it asks whether Slurm checks accounts): on a
  # loaded machine the cluster's start can return before slurmctld answers
  local t0
  t0=$(date +%s)
  until scontrol ping 2>/dev/null | grep -q UP || [ $(($(date +%s) - t0)) -ge 60 ]; do sleep 0.5; done
  "$daemon_bin" -c "$W/deepshared.conf" -v >> "$W/deepshared.log" 2>&1 &
  dpid=$!
}

# submit ACCOUNT SECONDS COMMENT [extra sbatch args] -> job id; records the submit time
submit() {
  local acct=$1 secs=$2 comment=$3
  shift 3
  local t id
  t=$(now)
  id=$(sbatch --parsable -p staging -A "$acct" -c1 --comment="$comment" -o /dev/null "$@" "$W/job.sh" "$secs") || return 1
  echo "$id $t $acct" >> "$W/submits"
  echo "$id"
}

state() { squeue -h -j "$1" -o '%T' 2>/dev/null; }
part() { squeue -h -j "$1" -o '%P' 2>/dev/null; }
# HTTP GET over bash's /dev/tcp (no curl on a bare Debian), with the header lines in $AUTH (the read
# token) unless $2 gives others
http_get() {
  exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
  printf 'GET %s HTTP/1.0\r\n%s\r\n' "$1" "${2-${AUTH:-}}" >&3
  cat <&3
  exec 3<&-
}
http_code() { http_get "$@" 2>/dev/null | head -1 | awk '{print $2}'; }
metric() { http_get /metrics 2>/dev/null | awk -v k="$1" '$1 == k {print $2}'; }

# wait_running SECONDS ID... : 0 when all run
wait_running() {
  local limit=$1
  shift
  local t0
  t0=$(date +%s)
  while [ $(($(date +%s) - t0)) -lt "$limit" ]; do
    local all=1
    for j in "$@"; do [ "$(state "$j")" = RUNNING ] || all=0; done
    [ $all = 1 ] && return 0
    sleep 0.2
  done
  return 1
}

first_start() { awk -v j="$1" '$1 == "start" && $2 == j {print $4; exit}' "$W/events"; }
submit_time() { awk -v j="$1" '$1 == j {print $2; exit}' "$W/submits"; }

# Invariant monitor: every 0.3 s, no GPU index of a node holds a whole-GPU job beside another job, and
# no GPU holds more than two jobs; violations go to $W/violations.
monitor() {
  while :; do
    squeue -h -t R -o '%i %N %b' 2>/dev/null | awk -v W="$W" '
      { n = split($3, t, ",");
        for (i = 1; i <= n; i++) { split(t[i], f, ":");  # gres:gpu:g2:1 / gres:shard:g2:1
          key = $2 "/" f[3]; cnt[key]++; if (f[2] == "gpu") whole[key] = whole[key] " " $1; jobs[key] = jobs[key] " " $1 } }
      END { for (k in cnt) { if (cnt[k] > 2 || (whole[k] != "" && cnt[k] > 1))
              print "GPU " k " holds" jobs[k] " (whole:" whole[k] ")" >> (W "/violations") } }'
    sleep 0.3
  done
}

# restart_slurmctld SECONDS: stops slurmctld, keeps it down that long, starts it again (start.sh waits
# until every node answers); its pid file is the one deploy/slurm/slurm.conf names
restart_slurmctld() {
  local pid
  # never stop a slurmctld this run does not own (its lock wrapper died: cluster-lock.sh)
  ( . "$root/scripts/cluster-lock.sh"; ds_require_cluster_lock restart_slurmctld ) || return 1
  pid=$(cat /run/slurm-ds/slurmctld.pid)
  kill "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  sleep "$1"
  "$root/deploy/slurm/start.sh" >/dev/null 2>&1
}
