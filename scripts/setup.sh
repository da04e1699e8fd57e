#!/usr/bin/env bash
# Installs what breakwater needs on Debian 12, only what is missing.
# Idempotent: a second run installs nothing and touches no package list.
set -euo pipefail

packages=(build-essential cmake pkg-config libcmocka-dev clang libclang-rt-14-dev clang-format cppcheck git
  libevent-dev libcurl4-openssl-dev libsqlite3-dev sqlite3 libhiredis-dev redis-server gnuplot-nox
  help2man python3-jsonschema
  # configuration files (INI, parsed by inih)
  libinih-dev
  # the Python binding (python/): Debian's interpreter, cffi, pip, pytest, gunicorn
  python3-dev python3-cffi python3-pip python3-setuptools python3-pytest gunicorn
  # the peers the Python benchmarks compare against
  python3-circuitbreaker python3-tenacity
  # promtool (`promtool check metrics`) and a real exposition parser, for the
  # Prometheus tests
  prometheus python3-prometheus-client
  # libcurl's own static link line (pkg-config --static libcurl) names the
  # libraries it was built with: their -dev packages, for the static check.
  libnghttp2-dev librtmp-dev libssh2-1-dev libpsl-dev libkrb5-dev libldap-dev
  libzstd-dev libbrotli-dev libidn2-dev libssl-dev zlib1g-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
    || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi
