#!/usr/bin/env bash
# bench/run.sh: builds a release tree and prints wall time and peak memory per policy for the Venus
# replay (skipped with a message when the data is absent) and a synthetic 1,000,000-job trace on
# 10,000 GPUs; DeepShare twice: with true durations and with the learned runtime model ("(model)"). Runs pinned to one core when taskset exists. Usage: bench/run.sh [venus|synth|all]
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
data=${DS_DATA_DIR:-../shared/data}
dir=build-bench
cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$dir" -j"$(nproc)" --target bench_replay >/dev/null
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
if [ "$what" = venus ] || [ "$what" = all ]; then
  "${pin[@]}" "$dir/bench/bench_replay" venus "$data"
  echo
fi
if [ "$what" = synth ] || [ "$what" = all ]; then
  # 1250 nodes x 8 GPUs; load 0.9 so the queues stay finite for the blocking baselines
  "${pin[@]}" "$dir/bench/bench_replay" synth --jobs 1000000 --nodes 1250 --tenants 50 --load 0.9 --seed 1
fi
