#!/usr/bin/env bash
# test.sh: installs what the tests need, then builds and runs every test twice: a release build and an
# AddressSanitizer + UndefinedBehaviorSanitizer build. Data-dependent tests read ../shared/data
# (or DS_DATA_DIR) and skip with a message when it is absent.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/deps.sh
# As root with Debian's Slurm packages installable, the end-to-end test of deepshared runs on a real local
# Slurm cluster after the unit tests (DS_SKIP_SLURM=1 skips it); DS_SOAK=1 adds the daemon soak (2-7 min;
# 5 of 5 runs passed on 2026-11-30), kept out of the default run because it restarts slurmctld under load,
# which Slurm 22.05 once did not survive (docs/deepshared.md).
slurm_e2e=0
if [ "$(id -u)" -eq 0 ] && [ -z "${DS_SKIP_SLURM:-}" ]; then
  if bash scripts/deps.sh --with-slurm; then slurm_e2e=1; else echo "== Slurm packages not installable: e2e skipped" >&2; fi
fi
jobs=$(nproc)
status=0
# Every stage's output is kept as well as shown, so that the summary printed last (CI shows only the tail
# of a run) names each failed stage and repeats what it said.
logs=$(mktemp -d /tmp/ds-test-logs.XXXXXX)
trap 'rm -rf "$logs"' EXIT
failed=()
# stage NAME CMD...: runs CMD; a failure marks the run failed and is named in the summary
stage() {
  local name=$1; shift
  # tee through a process substitution, not a pipe: a daemon a test leaves holding the output must not
  # keep the run waiting
  if "$@" > >(tee "$logs/${#failed[@]}.log") 2>&1; then return 0; fi
  mv "$logs/${#failed[@]}.log" "$logs/failed-${#failed[@]}.log"
  failed+=("$name"); status=1
}
dcgm() { local rc=0; bash tests/e2e_dcgm.sh build-test-release || rc=$?; [ $rc = 0 ] || [ $rc = 77 ]; }
for cfg in release asan; do
  dir=build-test-$cfg
  opts=(-DCMAKE_BUILD_TYPE=Release)
  [ $cfg = asan ] && opts=(-DCMAKE_BUILD_TYPE=Debug -DDS_SANITIZE=ON)
  [ -n "${DS_DATA_DIR:-}" ] && opts+=(-DDS_DATA_DIR="$DS_DATA_DIR")
  echo "== $cfg build" >&2
  cmake -S . -B "$dir" "${opts[@]}" >/dev/null
  cmake --build "$dir" -j"$jobs" >/dev/null
  echo "== $cfg tests" >&2
  stage "$cfg unit tests" ctest --test-dir "$dir" --output-on-failure -j"$jobs"
done
# Every reader under libFuzzer (ASan+UBSan): the regression inputs, then DS_FUZZ_SECONDS (20) per target.
# DS_SKIP_FUZZ=1 skips; tests/fuzz/run.sh SECONDS --campaign DIR is the longer nightly run.
if [ -z "${DS_SKIP_FUZZ:-}" ]; then
  echo "== fuzz targets (${DS_FUZZ_SECONDS:-20} s each)" >&2
  stage "fuzz targets" env DS_FUZZ_BUILD=build-test-fuzz DS_FUZZ_JOBS="$jobs" bash tests/fuzz/run.sh "${DS_FUZZ_SECONDS:-20}"
fi
if [ $slurm_e2e = 1 ]; then
  echo "== Slurm end-to-end test (deepshared on a local cluster)" >&2
  stage "e2e_slurm.sh" bash tests/e2e_slurm.sh build-test-release
  echo "== the trust boundary as a plain user (job_submit.lua, tenants' members, GRES, arrays, --begin, dependencies)" >&2
  stage "e2e_trust.sh" bash tests/e2e_trust.sh build-test-release
  echo "== production: nodes drained, down and not responding; active/standby with a leader lease in etcd (~4 min)" >&2
  stage "e2e_ha.sh" bash tests/e2e_ha.sh build-test-release
  echo "== telemetry end-to-end test (jobs report their step rate; a degraded pair revoked, a good one kept; ~3 min)" >&2
  stage "e2e_telemetry.sh" bash tests/e2e_telemetry.sh build-test-release
  echo "== two GPU models (V100 and K80 nodes, Gres=gpu:TYPE:N): typed requests, per-type quotas, reclaim by type" >&2
  stage "e2e_types.sh" bash tests/e2e_types.sh build-test-release
  echo "== GPU sharing on two GPU models (per-GPU model types gpu:v100_gN:1 with shards; job_submit.lua rewrites gpu:v100:N; ~15 s)" >&2
  stage "e2e_types_shared.sh" bash tests/e2e_types_shared.sh build-test-release
  echo "== telemetry through Prometheus (a stand-in dcgm-exporter scraped by Debian's prometheus; ~3 min)" >&2
  stage "e2e_telemetry.sh prometheus" bash tests/e2e_telemetry.sh build-test-release prometheus
  echo "== telemetry by HTTP POST (the jobs POST munge-signed step rates to /api/progress; ~3 min)" >&2
  stage "e2e_telemetry.sh post" bash tests/e2e_telemetry.sh build-test-release post
  echo "== graceful preemption (a victim signalled, checkpoints, is requeued and resumes; ~2 min)" >&2
  stage "e2e_grace.sh" bash tests/e2e_grace.sh build-test-release
  echo "== dcgm-exporter on a real NVIDIA GPU (skips where there is none)" >&2
  stage e2e_dcgm.sh dcgm
  if [ -n "${DS_SOAK:-}" ]; then
    echo "== deepshared soak (SIGKILLs during a burst, slurmctld restart under shard jobs, slow clients; 2-7 min)" >&2
    stage "soak_daemon.sh" bash tests/soak_daemon.sh build-test-release
  fi
fi
if [ $status = 0 ]; then
  echo "== all stages passed" >&2
else
  for i in "${!failed[@]}"; do
    echo "== FAILED: ${failed[$i]}; what it said of it:" >&2
    grep -E -i 'fail|error|assert|bad |timed out' "$logs/failed-$i.log" | tail -25 >&2 || tail -25 "$logs/failed-$i.log" >&2
  done
  echo "== FAILED stages: ${failed[*]}" >&2
fi
exit $status
