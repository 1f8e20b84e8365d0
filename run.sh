#!/usr/bin/env bash
# run.sh: installs what deepshare needs, builds it, and runs it. With no arguments it simulates the
# built-in synthetic workload under every policy; otherwise the arguments go to 'deepshare'.
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
exec ./build/deepshare "$@"
