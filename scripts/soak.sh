#!/usr/bin/env bash
# Soak test of the partner (not run in CI): starts `breakwater partner` on a
# free loopback port, runs storms against it (every mode, --url) in a loop
# for MINUTES, samples the partner's resident memory, open descriptors and
# threads every 10 s from /proc, prints the samples as a table, and exits 1
# if any grew by more than its margin between two samples taken with no
# storm running: one a second after the first storm (the warm-up) and one a
# second after the last:
#   RSS      +25 % and at least +8 MiB
#   fds      +16
#   threads  +0
# Everything goes to 127.0.0.1; each storm is bounded (--max-duration-s and
# timeout), and so is the whole run.
#
#   scripts/soak.sh MINUTES [CLIENTS]      (BW_BIN: the breakwater binary,
#                                           default build/tools/breakwater)
set -euo pipefail

minutes=${1:-}
clients=${2:-800}
if ! [[ "$minutes" =~ ^[0-9]+$ ]] || ((minutes < 1 || minutes > 1440)); then
  echo "usage: scripts/soak.sh MINUTES [CLIENTS]   (MINUTES in 1..1440)" >&2
  exit 2
fi
if ! [[ "$clients" =~ ^[0-9]+$ ]] || ((clients < 1 || clients > 5000)); then
  echo "soak.sh: CLIENTS must be in 1..5000 (got '$clients')" >&2
  exit 2
fi
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${BW_BIN:-$root/build/tools/breakwater}
if [[ ! -x "$bin" ]]; then
  echo "soak.sh: $bin not found: build first (or set BW_BIN)" >&2
  exit 2
fi
work=$(mktemp -d /tmp/bw-soak-XXXXXX)
partner_pid=
sampler_pid=
cleanup() {
  [[ -n "$sampler_pid" ]] && kill "$sampler_pid" 2>/dev/null || true
  [[ -n "$partner_pid" ]] && kill "$partner_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

"$bin" partner --port 0 --quiet >"$work/partner.out" 2>"$work/partner.err" &
partner_pid=$!
port=
for _ in $(seq 1 100); do
  port=$(sed -n 's/^partner listening on http:\/\/127\.0\.0\.1:\([0-9]*\) .*/\1/p' \
    "$work/partner.out" 2>/dev/null || true)
  [[ -n "$port" ]] && break
  sleep 0.1
done
if [[ -z "$port" ]]; then
  echo "soak.sh: the partner did not start:" >&2
  cat "$work/partner.err" >&2
  exit 1
fi
url="http://127.0.0.1:$port"

# One sample: seconds since start, RSS in KiB, open fds, threads.
t0=$(date +%s)
sample() {
  local rss threads fds
  rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$partner_pid/status")
  threads=$(awk '/^Threads:/ {print $2}' "/proc/$partner_pid/status")
  fds=$(find "/proc/$partner_pid/fd" -mindepth 1 -maxdepth 1 | wc -l)
  echo "$(($(date +%s) - t0)) $rss $fds $threads"
}
(
  while kill -0 "$partner_pid" 2>/dev/null; do
    sample >>"$work/samples" || true
    sleep 10
  done
) &
sampler_pid=$!

end=$((t0 + minutes * 60))
runs=0
failed=0
warm=
echo "soak: partner pid $partner_pid at $url, storms of $clients clients for $minutes min"
while (($(date +%s) < end)); do
  if timeout 300 "$bin" storm --quiet --url "$url" --clients "$clients" \
    --max-duration-s 120 >"$work/storm.out" 2>"$work/storm.err"; then
    :
  else
    failed=$((failed + 1))
    echo "soak: storm $((runs + 1)) failed: $(tail -1 "$work/storm.err")" >&2
  fi
  runs=$((runs + 1))
  # The warm-up ends with the first storm: an idle sample is the baseline.
  if [[ -z "$warm" ]]; then
    sleep 1
    warm=$(sample)
    echo "$warm idle" >>"$work/samples"
  fi
done
sleep 1
last=$(sample)
echo "$last idle" >>"$work/samples"
kill "$sampler_pid" 2>/dev/null || true
wait "$sampler_pid" 2>/dev/null || true
sampler_pid=

echo
echo "| t s | RSS KiB | fds | threads | |"
echo "|----:|--------:|----:|--------:|-|"
sort -n -s -k1,1 "$work/samples" |
  awk '{printf "| %4d | %8d | %4d | %7d | %s |\n", $1, $2, $3, $4, $5}'
read -r t_warm rss0 fd0 th0 <<<"$warm"
read -r _ rss1 fd1 th1 <<<"$last"
rss_margin=$((rss0 / 4 > 8192 ? rss0 / 4 : 8192))
status=0
check() { # name before after margin
  local verdict=ok
  if (($3 - $2 > $4)); then
    verdict="GREW (more than +$4)"
    status=1
  fi
  printf '%-8s %10s -> %-10s (margin +%s): %s\n' "$1" "$2" "$3" "$4" "$verdict"
}
echo
echo "storms: $runs ($failed failed); compared: the idle samples at t=${t_warm}s (after the first storm) and at the end"
check "RSS KiB" "$rss0" "$rss1" "$rss_margin"
check "fds" "$fd0" "$fd1" 16
check "threads" "$th0" "$th1" 0
if ((failed > 0)); then status=1; fi
exit $status
