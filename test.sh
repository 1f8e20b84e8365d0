#!/usr/bin/env bash
# test.sh: installs what the tests need, then builds and runs every test twice: a release build and an
# AddressSanitizer + UndefinedBehaviorSanitizer build. Data-dependent tests read ../shared/data
# (or DS_DATA_DIR) and skip with a message when it is absent.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/deps.sh
jobs=$(nproc)
status=0
for cfg in release asan; do
  dir=build-test-$cfg
  opts=(-DCMAKE_BUILD_TYPE=Release)
  [ $cfg = asan ] && opts=(-DCMAKE_BUILD_TYPE=Debug -DDS_SANITIZE=ON)
  [ -n "${DS_DATA_DIR:-}" ] && opts+=(-DDS_DATA_DIR="$DS_DATA_DIR")
  echo "== $cfg build" >&2
  cmake -S . -B "$dir" "${opts[@]}" >/dev/null
  cmake --build "$dir" -j"$jobs" >/dev/null
  echo "== $cfg tests" >&2
  (cd "$dir" && ctest --output-on-failure -j"$jobs") || status=1
done
exit $status
