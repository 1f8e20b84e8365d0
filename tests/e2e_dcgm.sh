#!/usr/bin/env bash
# e2e_dcgm.sh: deepshared's Prometheus source on a real NVIDIA GPU: NVIDIA's dcgm-exporter (NVML/DCGM)
# with an HPC job mapping that maps GPU 0 to job 4242, scraped by Debian's prometheus, read by
# `deepshared --probe-telemetry` through the query deepshared would run. Skips (exit 77) with a message
# where there is no GPU and driver (nvidia-smi), no dcgm-exporter (NVIDIA's; not a Debian package) or no
# prometheus. Needs no Slurm. Leaves nothing running.
# usage: tests/e2e_dcgm.sh BUILD_DIR
set -uo pipefail
build=$(cd "${1:?usage: e2e_dcgm.sh BUILD_DIR}" && pwd)
name=e2e-dcgm
skip() { echo "$name: SKIP $*" >&2; exit 77; }
nvidia-smi -L >/dev/null 2>&1 || skip "no NVIDIA GPU and driver here (nvidia-smi -L fails): the NVML/DCGM path is not tested"
command -v dcgm-exporter >/dev/null || skip "dcgm-exporter is not installed (NVIDIA's, github.com/NVIDIA/dcgm-exporter; with DCGM)"
command -v prometheus >/dev/null || skip "prometheus is not installed (scripts/deps.sh --with-slurm installs it)"
[ -x "$build/deepshared" ] || skip "$build/deepshared not built (needs libslurm-dev, libmicrohttpd-dev)"
W=$(mktemp -d /tmp/ds-e2e-dcgm.XXXXXX)
port=$((20000 + RANDOM % 20000)) pport=$((port + 1))
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done; }
trap cleanup EXIT
# the job mapping as a Slurm prolog writes it: one file per GPU index, one job id a line
mkdir -p "$W/map"
echo 4242 > "$W/map/0"
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
t0=$(date +%s) out=""
while [ $(($(date +%s) - t0)) -lt 60 ]; do
  out=$("$build/deepshared" -c "$W/deepshared.conf" --probe-telemetry 2>&1)
  echo "$out" | grep -q '^job 4242 ' && break
  sleep 1
done
if echo "$out" | grep -q '^job 4242 '; then
  echo "$name: PASS deepshared reads GPU 0's DCGM_FI_DEV_GPU_UTIL as job 4242's sample: $(echo "$out" | grep '^job 4242 ')" >&2
  exit 0
fi
echo "$name: FAIL no sample of job 4242 in 60 s: $out (dcgm-exporter: $(tail -3 "$W/dcgm.log"))" >&2
exit 1
