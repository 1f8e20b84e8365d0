#!/usr/bin/env bash
# e2e_dcgm.sh: deepshared's Prometheus source on a real NVIDIA GPU: NVIDIA's dcgm-exporter (NVML/DCGM)
# with an HPC job mapping written by deploy/dcgm-exporter/job-map.sh (the Slurm Prolog/Epilog) that maps
# GPU 0 to jobs 4242 and 4243 (two jobs sharing it), scraped by Debian's prometheus, read by
# `deepshared --probe-telemetry` through the query deepshared would run: both jobs get a sample, the same
# (per-GPU counters), and after the Epilog removes 4243 only 4242 does. Skips (exit 77) with a message
# where there is no GPU and driver (nvidia-smi), no dcgm-exporter (NVIDIA's; not a Debian package) or no
# prometheus. Needs no Slurm. Leaves nothing running.
# usage: tests/e2e_dcgm.sh BUILD_DIR
set -uo pipefail
build=$(cd "${1:?usage: e2e_dcgm.sh BUILD_DIR}" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
name=e2e-dcgm
skip() { echo "$name: SKIP $*" >&2; exit 77; }
nvidia-smi -L >/dev/null 2>&1 || skip "no NVIDIA GPU and driver here (nvidia-smi -L fails): the NVML/DCGM path is not tested"
command -v dcgm-exporter >/dev/null || skip "dcgm-exporter is not installed (NVIDIA's, github.com/NVIDIA/dcgm-exporter; with DCGM)"
command -v prometheus >/dev/null || skip "prometheus is not installed (scripts/deps.sh --with-slurm installs it)"
[ -x "$build/deepshared" ] || skip "$build/deepshared not built (needs libslurm-dev, libmicrohttpd-dev)"
W=$(mktemp -d /tmp/ds-e2e-dcgm.XXXXXX)
port=$((20000 + RANDOM % 12000)) pport=$((port + 1))
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }
trap cleanup EXIT
# the job mapping as the Slurm Prolog writes it: one file per GPU index, one job id a line
map() { DCGM_HPC_JOB_MAPPING_DIR="$W/map" bash "$here/deploy/dcgm-exporter/job-map.sh" "$@"; }
map add 4242 0
map add 4243 0
[ "$(paste -sd' ' "$W/map/0")" = "4242 4243" ] || { echo "$name: FAIL job-map.sh wrote $(cat "$W/map/0")" >&2; exit 1; }
dcgm-exporter -a "127.0.0.1:$port" -c 1000 --hpc-job-mapping-dir "$W/map" > "$W/dcgm.log" 2>&1 & pids+=($!)
printf 'global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: dcgm\n    static_configs:\n      - targets: ["127.0.0.1:%s"]\n' \
  "$port" > "$W/prometheus.yml"
prometheus --config.file="$W/prometheus.yml" --storage.tsdb.path="$W/prom" --web.listen-address="127.0.0.1:$pport" \
  > "$W/prometheus.log" 2>&1 & pids+=($!)
cat > "$W/deepshared.conf" <<EOF
telemetry = prometheus
prometheus_url = http://127.0.0.1:$pport
prometheus_query = max by (hpc_job) (DCGM_FI_DEV_GPU_UTIL) / 100
trust_accounts = yes
tenant a 1
EOF
chmod 600 "$W/deepshared.conf"
# probe until both jobs have a sample (dcgm-exporter re-reads the mapping at each collection)
probe() { # JOB...: 0 once each job has a sample line
  local t0 j ok
  t0=$(date +%s)
  while [ $(($(date +%s) - t0)) -lt 60 ]; do
    out=$("$build/deepshared" -c "$W/deepshared.conf" --probe-telemetry 2>&1)
    ok=1
    for j in "$@"; do echo "$out" | grep -q "^job $j " || ok=0; done
    [ $ok = 1 ] && return 0
    sleep 1
  done
  return 1
}
out=""
if ! probe 4242 4243; then
  echo "$name: FAIL no sample of jobs 4242 and 4243 in 60 s: $out (dcgm-exporter: $(tail -3 "$W/dcgm.log"))" >&2
  exit 1
fi
v1=$(echo "$out" | awk '$1 == "job" && $2 == 4242 {print $3}') v2=$(echo "$out" | awk '$1 == "job" && $2 == 4243 {print $3}')
echo "$name: PASS deepshared reads GPU 0's DCGM_FI_DEV_GPU_UTIL as jobs 4242 and 4243's samples: $(echo "$out" | grep '^job 424[23] ' | paste -sd';')" >&2
[ "$v1" = "$v2" ] || echo "$name: NOTE the two jobs' values differ ($v1, $v2): samples from two collections" >&2
# the Epilog of job 4243: its series goes (Prometheus marks it stale at the next scrape without it)
map remove 4243
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt 60 ]; do
  out=$("$build/deepshared" -c "$W/deepshared.conf" --probe-telemetry 2>&1)
  echo "$out" | grep -q '^job 4242 ' && ! echo "$out" | grep -q '^job 4243 ' && break
  sleep 1
done
if echo "$out" | grep -q '^job 4242 ' && ! echo "$out" | grep -q '^job 4243 '; then
  echo "$name: PASS after job 4243's Epilog only job 4242 has a sample" >&2
  exit 0
fi
echo "$name: FAIL job 4243 still has a sample 60 s after its Epilog, or 4242 none: $out" >&2
exit 1
