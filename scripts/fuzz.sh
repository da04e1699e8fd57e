#!/usr/bin/env bash
# Builds every fuzz harness under fuzz/ with clang's libFuzzer (plus ASan and
# UBSan, any UB report fatal) and runs each for SECONDS (default 20).
#
#   scripts/fuzz.sh [SECONDS]          CI's short run (CI: 10 s each)
#   scripts/fuzz.sh --long MINUTES     each harness MINUTES minutes, then
#                                      the work corpus is minimized
#                                      (-merge=1) so it stays small
#
# The harnesses cover every parser of outside input in the core and tools:
# Retry-After, gRPC pushback, X-Timeout-Budget, grpc-timeout (with the
# inbound deadline), W3C traceparent / tracestate, the header-line matcher of the curl driver
# (bw_http_header_value), the partner metrics text that
# `breakwater storm --url` reads (tools/storm_metrics.c), the JSON event
# lines `breakwater alert` reads (tools/event_json.c), and configuration
# by name: every value an operator or a binding may hand bw_config_set, and
# configuration files (src/config: the INI reader over inih, sections,
# defaults, references, pipelines; linked with the whole core, since a file
# makes objects of every kind).
#
# Works from any directory. Each harness links only the sources it needs
# (and, for a component's harness, its libraries through pkg-config; a
# harness whose library is missing is reported skipped). The checked-in
# seeds (fuzz/corpus/NAME/) are read but never
# written: new inputs go to the work corpus under $BW_FUZZ_DIR (default
# build-fuzz/ at the root), so a second run continues where the first
# stopped. A crash or a broken invariant leaves its input in
# $BW_FUZZ_DIR/artifacts/ (rerun it with: $BW_FUZZ_DIR/fuzz_NAME FILE) and
# makes the script exit non-zero after the remaining harnesses have run.
# Prints the number of executions per harness.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
long=0
if [ "${1:-}" = "--long" ]; then
  minutes=${2:-}
  if ! [[ "$minutes" =~ ^[1-9][0-9]*$ ]] || [ $# -ne 2 ]; then
    echo "usage: $0 --long MINUTES   (a whole number of minutes >= 1, got '${minutes}')" >&2
    exit 2
  fi
  long=1
  seconds=$((minutes * 60))
else
  seconds=${1:-20}
  if ! [[ "$seconds" =~ ^[1-9][0-9]*$ ]] || [ $# -gt 1 ]; then
    echo "usage: $0 [SECONDS] | --long MINUTES   (one whole number of seconds >= 1, got '$*')" >&2
    exit 2
  fi
fi
cc=${CC_FUZZ:-$(command -v clang-14 || command -v clang || true)}
if [ -z "$cc" ]; then
  echo "fuzz: clang not found (libFuzzer needs clang); set CC_FUZZ" >&2
  exit 2
fi
out=${BW_FUZZ_DIR:-$root/build-fuzz}
mkdir -p "$out/artifacts"

# shellcheck disable=SC2054 # the commas are in -fsanitize=, not separators
cflags=(-std=c11 -g -O1 -fno-omit-frame-pointer
  -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
  -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Wpedantic -Wshadow
  -Wstrict-prototypes -Wmissing-prototypes -Werror
  -I"$root/include" -I"$root/src/core" -I"$root/tools" -I"$root/fuzz")

# name:sources it links (space-separated, relative to the root)[:pkg-config
# modules it links]
harnesses=(
  "retry_after:src/core/http.c"
  "grpc_pushback:src/core/http.c"
  "deadline_header:src/core/deadline.c"
  "grpc_timeout:src/core/deadline.c"
  "traceparent:src/core/trace.c src/core/rand.c"
  "header_line:src/core/http.c"
  "storm_metrics:tools/storm_metrics.c"
  "event_json:tools/event_json.c"
  "config_value:src/core/config_fields.c src/core/config_parse.c src/core/error.c"
  "redis_reply:src/store/redis/reply.c:hiredis"
  "config_file:src/config/config_file.c $(cd "$root" && echo src/core/*.c):inih"
)

failed=()
summary=()
for h in "${harnesses[@]}"; do
  name=${h%%:*}
  rest=${h#*:}
  pkgs=""
  if [[ "$rest" == *:* ]]; then
    pkgs=${rest#*:}
    rest=${rest%%:*}
  fi
  read -r -a srcs <<<"$rest"
  libs=()
  if [ -n "$pkgs" ]; then
    # shellcheck disable=SC2086 # pkgs is a list of module names
    if ! pkgflags=$(pkg-config --cflags --libs $pkgs 2>/dev/null); then
      summary+=("fuzz_$name: SKIPPED (needs pkg-config module(s): $pkgs)")
      continue
    fi
    read -r -a libs <<<"$pkgflags"
  fi
  bin="$out/fuzz_$name"
  echo "==> fuzz_$name: build"
  "$cc" "${cflags[@]}" "$root/fuzz/fuzz_$name.c" "${srcs[@]/#/$root/}" \
    ${libs[@]+"${libs[@]}"} -lm -pthread -o "$bin"

  work="$out/corpus/$name"
  mkdir -p "$work"
  log="$out/fuzz_$name.log"
  echo "==> fuzz_$name: run ${seconds}s"
  rc=0
  # The first corpus directory receives new inputs; the reference articles are read only.
  "$bin" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$name-" \
    "$work" "$root/fuzz/corpus/$name" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  if [ "$long" -eq 1 ] && [ "$rc" -eq 0 ]; then
    # Keep the corpus small: merge it into a fresh directory, then swap.
    rm -rf "$work.merge"
    mkdir -p "$work.merge"
    "$bin" -merge=1 "$work.merge" "$work" >>"$log" 2>&1 || rc=$?
    if [ "$rc" -eq 0 ]; then
      rm -rf "$work"
      mv "$work.merge" "$work"
    fi
  fi
  if [ "$rc" -ne 0 ]; then
    tail -n 40 "$log" >&2
    failed+=("$name")
    summary+=("fuzz_$name: FAILED (exit $rc) after ${execs:-?} executions; log $log")
  else
    summary+=("fuzz_$name: ${execs:-?} executions in ${seconds}s, no crash; corpus $work ($(find "$work" -type f | wc -l) inputs)")
  fi
done

echo
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} harness(es) failed: ${failed[*]}" >&2
  exit 1
fi
