#!/usr/bin/env bash
# The whole test suite: set up, then
#   1. format check (clang-format), cppcheck on the core, a -Werror build;
#   2. every test, plain;
#   3. every test under AddressSanitizer + UndefinedBehaviorSanitizer;
#   4. the concurrency tests under ThreadSanitizer;
#   5. the parsers fuzzed briefly (libFuzzer);
#   6. install, then build and run a program per component against the
#      installed copy through pkg-config (shared and --static) and
#      find_package(breakwater COMPONENTS ...), plus the checks of
#      scripts/install_check.sh (symbols, version scripts, .pc paths);
#   7. the Python binding (python/) built against the installed copy and its
#      tests run with pytest (scripts/python_check.sh);
#   8. the examples and benchmarks run once, quickly (they must not crash).
# Stops at the first failure with a non-zero exit.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs=$(nproc)
bash scripts/setup.sh

step() { printf '\n==> %s\n' "$*"; }

step "format check"
bash scripts/format.sh --check

step "static analysis (cppcheck) of the core"
cppcheck --enable=warning,performance,portability --std=c11 --inline-suppr \
  --error-exitcode=1 --quiet -Iinclude src/core/
echo "cppcheck: clean"

step "plain build (-Werror) and tests"
cmake -S . -B build-test -DBW_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-test -j"$jobs"
(cd build-test && ctest --output-on-failure -j"$jobs")

step "ASan + UBSan: every test"
cmake -S . -B build-asan -DBW_WERROR=ON -DCMAKE_BUILD_TYPE=Debug \
  -DBW_SANITIZE=address,undefined -DBW_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$jobs"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest --output-on-failure -j"$jobs")

step "TSan: concurrency tests"
cmake -S . -B build-tsan -DBW_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DBW_SANITIZE=thread -DBW_BUILD_BENCH=OFF -DBW_BUILD_EXAMPLES=OFF >/dev/null
cmake --build build-tsan -j"$jobs"
(cd build-tsan && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --output-on-failure -L concurrency)

step "fuzz the parsers (libFuzzer, 10 s each)"
BW_FUZZ_DIR="$root/build-fuzz" bash scripts/fuzz.sh 10

step "install, then build against every installed component"
bash scripts/install_check.sh build-test

step "Python binding: build against the installed copy, pytest"
bash scripts/python_check.sh --build build-test

step "examples and benchmarks run"
./build-test/examples/breaker_flaky --virtual | tail -n 1
./build-test/examples/degrade_levels >/dev/null
./build-test/examples/agents_breakers >/dev/null
./build-test/examples/fallback_park >/dev/null
./build-test/examples/backpressure_stage >/dev/null
./build-test/examples/limiter_gate vegas >/dev/null
# Real HTTP on loopback (about 2 s). CI installs libevent and libcurl, so
# a missing binary is a failure here, not a skip.
./build-test/examples/http_call >/dev/null
./build-test/examples/http_easy >/dev/null
echo "examples degrade_levels, agents_breakers, fallback_park, backpressure_stage, limiter_gate, http_call, http_easy ran"
./build-test/bench/bench_breaker --n 200000 --reps 1 >/dev/null
./build-test/bench/bench_retry --n 200000 --reps 1 >/dev/null
./build-test/bench/bench_contention --runs 2 >/dev/null
./build-test/bench/bench_pipeline --n 200000 --reps 1 >/dev/null
echo "bench_breaker, bench_retry, bench_contention, bench_pipeline ran"
./build-test/tools/breakwater lab storm --quiet | grep -q '^| breakwater'
./build-test/tools/breakwater storm --quiet --clients 200 --capacity 100 \
  --ok-min-ms 5 --ok-max-ms 10 --slow-min-ms 50 --slow-max-ms 200 \
  | grep -q '^| breakwater'
echo "breakwater lab storm and breakwater storm (200 clients, real HTTP) ran"

echo
echo "ALL CHECKS PASSED"
