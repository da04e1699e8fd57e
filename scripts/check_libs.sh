#!/usr/bin/env bash
# Checks the breakwater libraries in a library folder (an install's libdir or
# a build tree), given the source tree:
#   - no library leaves a core-private (bw__*) symbol undefined: a component
#     that needs one links only against the static core;
#   - each shared library exports exactly the symbols its version script
#     lists (src/core/breakwater.map, src/**/<component>.map), and each
#     static library's public (BW_EXTERN) symbols are that same list, so the
#     ABI is a reviewed list and a new public function cannot miss it
#     (scripts/update_maps.sh rewrites the lists).
# usage: check_libs.sh LIBDIR SOURCE_DIR. Exit 1 on the first finding, with
# the library and the symbols named.
set -euo pipefail
libdir=$1
src=$2
status=0
found=0

map_of() { # the version script of a library file name
  local base=${1%%.so*}
  base=${base%.a}
  base=${base#lib}
  if [ "$base" = breakwater ]; then
    echo "$src/src/core/breakwater.map"
  else
    find "$src/src" -name "${base#breakwater_}.map" | head -n 1
  fi
}

for lib in "$libdir"/libbreakwater*.a "$libdir"/libbreakwater*.so; do
  [ -e "$lib" ] || continue
  found=$((found + 1))
  # bw__ symbols used but not defined anywhere in this library.
  undef=$(comm -23 \
    <(nm -u "$lib" 2>/dev/null | awk '{print $NF}' | grep '^bw__' | sort -u) \
    <(nm --defined-only "$lib" 2>/dev/null | awk '{print $NF}' | grep '^bw__' | sort -u))
  if [ -n "$undef" ]; then
    echo "check_libs: $(basename "$lib") leaves core-private symbols undefined: $(echo $undef)" >&2
    status=1
  fi
done
[ "$found" -gt 0 ] || { echo "check_libs: no libbreakwater* in $libdir" >&2; exit 1; }

for lib in "$libdir"/libbreakwater*.so; do
  real=$(readlink -f "$lib")
  map=$(map_of "$(basename "$lib")")
  if [ -z "$map" ] || [ ! -f "$map" ]; then
    echo "check_libs: no version script for $(basename "$lib")" >&2
    status=1
    continue
  fi
  want=$(grep -E '^    [A-Za-z_][A-Za-z0-9_]*;$' "$map" | tr -d ' ;' | sort)
  have=$(nm -D --defined-only "$real" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | sort)
  if [ "$want" != "$have" ]; then
    echo "check_libs: $(basename "$lib") exports differ from $map:" >&2
    diff <(echo "$want") <(echo "$have") | sed -n 's/^[<>]/  &/p' >&2 || true
    status=1
  fi
done
for lib in "$libdir"/libbreakwater*.a; do
  map=$(map_of "$(basename "$lib")")
  [ -n "$map" ] && [ -f "$map" ] || continue
  want=$(grep -E '^    [A-Za-z_][A-Za-z0-9_]*;$' "$map" | tr -d ' ;' | sort)
  have=$(readelf -sW "$lib" | awk '$5 == "GLOBAL" && $6 == "DEFAULT" && $7 != "UND" {print $8}' | sort -u)
  if [ "$want" != "$have" ]; then
    echo "check_libs: $(basename "$lib")'s public symbols differ from $map (run scripts/update_maps.sh):" >&2
    diff <(echo "$want") <(echo "$have") | sed -n 's/^[<>]/  &/p' >&2 || true
    status=1
  fi
done
[ "$status" -eq 0 ] && echo "check_libs: $found libraries in $libdir: no undefined bw__ symbol, exports match the version scripts"
exit "$status"
