#!/usr/bin/env bash
# Run breakwater's peer microbenchmarks (Node.js and Python resilience
# libraries), installing what is missing first.
#
# Usage: bash bench/peers/run.sh [--only breaker|retry|bulkhead|pipeline|all] [--quick]
#
# --only   which measurements (default: all); a comma list such as
#          breaker,retry is accepted too.
#            breaker:  cockatiel.breaker opossum.breaker python.circuitbreaker
#            retry:    cockatiel.retry python.tenacity.retry python.backoff.retry
#            bulkhead: cockatiel.bulkhead
#            pipeline: cockatiel.wrap
# --quick  10x smaller N (node 100,000, python 20,000 instead of
#          1,000,000 and 200,000).
#
# stdout: only result lines, `peer\t<name>\t<ns_per_call>\t<n>`.
# stderr: diagnostics (installs, versions, baselines, skips).
#
# Installs, each only when missing:
#   - Debian packages python3-circuitbreaker python3-tenacity python3-backoff
#     (apt-get update runs first, and only when an install is needed);
#   - npm packages from package-lock.json via `npm ci`, when node_modules is
#     missing or older than package-lock.json.
set -euo pipefail

die() { echo "run.sh: $*" >&2; exit 2; }
log() { echo "run.sh: $*" >&2; }

usage() {
  sed -n '2,23p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

# --- flags -----------------------------------------------------------------
only="all"
quick=0
while [ $# -gt 0 ]; do
  case "$1" in
    --only)
      [ $# -ge 2 ] || die "--only needs a value (breaker|retry|bulkhead|pipeline|all)"
      only="$2"; shift 2 ;;
    --only=*) only="${1#--only=}"; shift ;;
    --quick) quick=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown flag: $1 (flags: --only breaker|retry|bulkhead|pipeline|all, --quick, --help)" ;;
  esac
done

node_names=()
py_names=()
add_group() {
  case "$1" in
    breaker)  node_names+=(cockatiel.breaker opossum.breaker); py_names+=(python.circuitbreaker) ;;
    retry)    node_names+=(cockatiel.retry); py_names+=(python.tenacity.retry python.backoff.retry) ;;
    bulkhead) node_names+=(cockatiel.bulkhead) ;;
    pipeline) node_names+=(cockatiel.wrap) ;;
    all)      add_group breaker; add_group retry; add_group bulkhead; add_group pipeline ;;
    *) die "unknown --only value: '$1' (expected breaker|retry|bulkhead|pipeline|all)" ;;
  esac
}
IFS=',' read -r -a groups <<< "$only"
[ "${#groups[@]}" -gt 0 ] || die "--only needs a value (breaker|retry|bulkhead|pipeline|all)"
for g in "${groups[@]}"; do add_group "$g"; done

# Drop duplicates (e.g. --only all,breaker), keeping the first occurrence.
dedup() { local seen="" x; for x in "$@"; do case " $seen " in *" $x "*) ;; *) seen="$seen $x"; printf '%s\n' "$x" ;; esac; done; }
if [ "${#node_names[@]}" -gt 0 ]; then mapfile -t node_names < <(dedup "${node_names[@]}"); fi
if [ "${#py_names[@]}" -gt 0 ]; then mapfile -t py_names < <(dedup "${py_names[@]}"); fi

if [ "$quick" = 1 ]; then node_n=100000; py_n=20000; else node_n=1000000; py_n=200000; fi

# --- prerequisites -------------------------------------------------------------
cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"

PY=/usr/bin/python3
need_node=0; need_py=0
[ "${#node_names[@]}" -gt 0 ] && need_node=1
[ "${#py_names[@]}" -gt 0 ] && need_py=1

if [ "$need_node" = 1 ]; then
  command -v node >/dev/null 2>&1 || die "node not found on PATH (Node.js >= 20 is needed for the cockatiel/opossum peers)"
  command -v npm >/dev/null 2>&1 || die "npm not found on PATH (needed to install cockatiel/opossum)"
fi
if [ "$need_py" = 1 ]; then
  [ -x "$PY" ] || die "$PY not found (the Python peers use Debian's system python3 and its python3-* packages)"
fi

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else die "need root (or sudo) to run: $*"; fi
}

deb_installed() {
  dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed$'
}

# --- Debian packages for the Python peers --------------------------------------
if [ "$need_py" = 1 ]; then
  required=(python3-circuitbreaker python3-tenacity)
  optional=(python3-backoff)
  missing_req=(); missing_opt=()
  if command -v dpkg >/dev/null 2>&1; then
    for p in "${required[@]}"; do deb_installed "$p" || missing_req+=("$p"); done
    for p in "${optional[@]}"; do deb_installed "$p" || missing_opt+=("$p"); done
  else
    log "dpkg not found: not a Debian system, skipping package installs (missing modules will be skipped)"
  fi
  if [ "$(( ${#missing_req[@]} + ${#missing_opt[@]} ))" -gt 0 ]; then
    command -v apt-get >/dev/null 2>&1 || die "apt-get not found; install by hand: ${missing_req[*]} ${missing_opt[*]}"
    export DEBIAN_FRONTEND=noninteractive
    log "installing Debian packages: $(echo ${missing_req[@]+"${missing_req[@]}"} ${missing_opt[@]+"${missing_opt[@]}"})"
    as_root apt-get update >&2 || die "apt-get update failed"
    if [ "${#missing_req[@]}" -gt 0 ]; then
      as_root apt-get install -y --no-install-recommends "${missing_req[@]}" >&2 \
        || die "apt-get install failed: ${missing_req[*]}"
    fi
    if [ "${#missing_opt[@]}" -gt 0 ]; then
      # python3-backoff is optional: py_peers.py skips it when absent.
      as_root apt-get install -y --no-install-recommends "${missing_opt[@]}" >&2 \
        || log "warning: could not install ${missing_opt[*]}; its measurement will be skipped"
    fi
  fi
fi

# --- npm packages for the Node peers -------------------------------------------
if [ "$need_node" = 1 ]; then
  [ -f package-lock.json ] || die "package-lock.json missing in $(pwd)"
  if [ ! -d node_modules ] || [ package-lock.json -nt node_modules ]; then
    log "installing npm packages (npm ci) in $(pwd)"
    npm ci --no-audit --no-fund >&2 || die "npm ci failed in $(pwd)"
    touch node_modules   # npm ci may leave the dir mtime older than the lock
  fi
fi

# --- run -----------------------------------------------------------------------
log "versions: node $( [ "$need_node" = 1 ] && node -v || echo -), $( [ "$need_py" = 1 ] && "$PY" -c 'import sys; print("python", sys.version.split()[0])' || echo python -)"
if [ "$need_node" = 1 ]; then
  node -e '
    const fs = require("fs");
    const v = (p) => JSON.parse(fs.readFileSync(`node_modules/${p}/package.json`, "utf8")).version;
    console.error(`run.sh: npm: cockatiel ${v("cockatiel")}, opossum ${v("opossum")}`);'
fi
if [ "$need_py" = 1 ] && command -v dpkg-query >/dev/null 2>&1; then
  log "deb: $(dpkg-query -W -f='${Package} ${Version}  ' python3-circuitbreaker python3-tenacity python3-backoff 2>/dev/null || true)"
fi

status=0
if [ "$need_node" = 1 ]; then
  node node_peers.mjs --n "$node_n" --only "$(IFS=,; echo "${node_names[*]}")" || { log "node_peers.mjs failed"; status=1; }
fi
if [ "$need_py" = 1 ]; then
  "$PY" py_peers.py --n "$py_n" --only "$(IFS=,; echo "${py_names[*]}")" || { log "py_peers.py failed"; status=1; }
fi
exit "$status"
