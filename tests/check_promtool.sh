#!/bin/sh
# Runs PROGRAM [ARG...] FILE (it writes Prometheus text to FILE) and checks
# FILE with `promtool check metrics` (Debian: the prometheus package).
# Exit 77 (skipped) without promtool.
set -eu
if ! command -v promtool >/dev/null 2>&1; then
  echo "check_promtool: skipped: promtool is not installed (apt-get install prometheus)"
  exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$@" "$tmp/metrics.prom"
promtool check metrics <"$tmp/metrics.prom"
echo "check_promtool: $(grep -c '^# TYPE' "$tmp/metrics.prom") families pass promtool"
