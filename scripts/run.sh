#!/usr/bin/env bash
# The main job: set up (Debian packages, only those missing), build, and run
# the Polly lab's retry storm over real HTTP on 127.0.0.1 — 800 clients against
# the simulated payment partner (capacity 400), once per mode (naive, polly,
# breakwater), each against a fresh partner embedded in the process. Prints
# the comparison table and writes build/storm.json and build/storm.png.
#   ./scripts/run.sh --virtual     the same experiment in virtual time
#   ./scripts/run.sh [flags]       any `breakwater storm` flag, e.g.
#                                  --clients 1600 or --mode breakwater
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBW_BUILD_COMPONENTS=ON >/dev/null
cmake --build build -j"$(nproc)" --target breakwater_tool >/dev/null
if [ "${1:-}" = "--virtual" ]; then
  shift
  ./build/tools/breakwater lab storm --json build/storm-virtual.json \
    --plot build/storm-virtual.png "$@"
  echo "wrote build/storm-virtual.json and build/storm-virtual.png"
  exit 0
fi
./build/tools/breakwater storm --mode all --json build/storm.json \
  --plot build/storm.png "$@"
echo "wrote build/storm.json and build/storm.png"
