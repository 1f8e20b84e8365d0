#!/usr/bin/env bash
# run.sh: builds the libFuzzer targets (clang, ASan+UBSan) and replays the regression inputs, then fuzzes each
# target for SECONDS (default 20) from the seed corpus; --campaign keeps a growing corpus for nightly runs.
# Usage: tests/fuzz/run.sh [SECONDS] [--campaign DIR]   (one fuzzer at a time: CI boxes are small)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
secs=${1:-20}
campaign=""
[ "${2:-}" = "--campaign" ] && campaign=${3:-"$root/build-fuzz/campaign"}
build=${DS_FUZZ_BUILD:-"$root/build-fuzz"}
command -v clang >/dev/null || { echo "run.sh: clang is needed (bash scripts/deps.sh installs it)" >&2; exit 1; }
CC=clang cmake -S "$root" -B "$build" -DDS_FUZZ=ON -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"${DS_FUZZ_JOBS:-2}" >/dev/null
targets=(tenants jobs estimates lucid coloc model config dconfig journal cluster speeds gavel comment helios philly pai alibaba observed usage)
# inputs go through a scratch file per target: keep it in memory where the box allows
[ -z "${TMPDIR:-}" ] && [ -w /dev/shm ] && export TMPDIR=/dev/shm
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Limits make "accepted input exhausts resources" a finding too: 2 GB RSS, 10 s per input.
limits=(-rss_limit_mb=2048 -malloc_limit_mb=2048 -timeout=10 -close_fd_mask=3 -dict="$here/fuzz.dict")
status=0
total_execs=0
for t in "${targets[@]}"; do
  bin="$build/tests/fuzz/fuzz_$t"
  # 1. regressions: every input that once crashed must now pass (a plain replay, no mutation)
  if compgen -G "$here/regress/$t/*" >/dev/null; then
    if ! "$bin" "${limits[@]}" "$here/regress/$t"/* >"$build/regress-$t.log" 2>&1; then
      echo "FAIL fuzz_$t: a regression input fails again (see $build/regress-$t.log)" >&2
      status=1
      continue
    fi
  fi
  # 2. bounded fuzzing from the seeds (or the campaign's growing corpus); new finds land in $build/crash-$t/
  work="$build/corpus-$t"
  [ -n "$campaign" ] && work="$campaign/$t"
  mkdir -p "$work" "$build/crash-$t"
  log="$build/fuzz-$t.log"
  if "$bin" "${limits[@]}" -max_total_time="$secs" -print_final_stats=1 -artifact_prefix="$build/crash-$t/" \
      "$work" "$here/corpus/$t" >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
    echo "ok   fuzz_$t: ${execs:-?} executions, ${cov:-?} edges in ${secs}s"
    total_execs=$((total_execs + ${execs:-0}))
  else
    echo "FAIL fuzz_$t: crash or limit hit, input in $build/crash-$t/ (log $log):" >&2
    grep -m3 -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" >&2 || tail -5 "$log" >&2
    status=1
  fi
done
echo "fuzz: $total_execs executions in total"
exit $status
