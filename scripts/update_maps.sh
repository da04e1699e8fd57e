#!/usr/bin/env bash
# Rewrites the version scripts (the exported-symbol lists of the shared
# libraries) from a build: every global function or object of default
# visibility (BW_EXTERN) in each static library. Run it after adding or
# removing a public function, and review the diff: it is the ABI change.
# usage: update_maps.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$1
exported() { # the BW_EXTERN symbols defined in an archive, sorted
  readelf -sW "$1" | awk '$5 == "GLOBAL" && $6 == "DEFAULT" && $7 != "UND" {print $8}' | sort -u
}
write_map() { # archive map libname
  {
    echo "/* $3: the exported symbols of the shared library, one per line in"
    echo " * alphabetical order; scripts/check_libs.sh fails when the library exports"
    echo " * anything else. Regenerate with scripts/update_maps.sh BUILD_DIR. */"
    echo "BREAKWATER_0.1 {"
    echo "  global:"
    exported "$1" | sed 's/^/    /; s/$/;/'
    echo "  local:"
    echo "    *;"
    echo "};"
  } >"$2"
}
write_map "$build/libbreakwater.a" "$root/src/core/breakwater.map" libbreakwater
for a in $(find "$build/src" -name 'libbreakwater_*.a'); do
  c=$(basename "$a" .a)
  c=${c#libbreakwater_}
  map=$(find "$root/src" -name "$c.map" | head -n 1)
  [ -n "$map" ] || map="$(dirname "$(grep -l "bw_add_component($c" -r "$root/src" --include=CMakeLists.txt | head -n 1)")/$c.map"
  write_map "$a" "$map" "libbreakwater_$c"
  echo "update_maps: $map"
done
