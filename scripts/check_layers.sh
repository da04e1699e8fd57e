#!/usr/bin/env bash
# The layer boundary: a header under src/ is private to its own folder. No
# file elsewhere (another component, the tools, tests, benchmarks, examples,
# fuzzers, bindings) may include it — the core's internal.h least of all.
# Components reach the core through include/breakwater/ only (ext.h is the
# extension interface). usage: check_layers.sh [SOURCE_DIR]; exit 1 with
# each offending file:line.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
status=0
while IFS= read -r hdr; do
  dir=$(dirname "$hdr")
  name=$(basename "$hdr")
  while IFS= read -r hit; do
    file=${hit%%:*}
    [ "$(dirname "$file")" = "$dir" ] && continue
    echo "check_layers: $hit: includes $hdr, private to $dir/" >&2
    status=1
  done < <(grep -rnE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"([^\"]*/)?$name\"" \
             --include='*.c' --include='*.h' --include='*.cc' \
             src tools tests bench examples fuzz python 2>/dev/null || true)
done < <(find src -name '*.h' | sort)
# Nothing may add src/ folders to its include path but the folder itself.
if grep -rnE 'src/core' --include=CMakeLists.txt . 2>/dev/null |
   grep -v '^\./CMakeLists.txt:.*BW_CORE_SOURCES' | grep -v '^\./build' |
   grep -E 'include|-I' >&2; then
  echo "check_layers: a CMakeLists.txt adds src/core to an include path" >&2
  status=1
fi
[ "$status" -eq 0 ] && echo "check_layers: every private header is included only from its own folder"
exit "$status"
