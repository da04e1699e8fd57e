#!/usr/bin/env bash
# The main job: set up, build, and run the breaker demo (a breaker protecting
# a flaky function: it opens, rejects fast, probes, closes), printing its JSON
# events and a final summary line. Extra arguments go to the demo
# (--virtual for instant, deterministic virtual time).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)" --target breaker_flaky >/dev/null
exec ./build/examples/breaker_flaky "$@"
