#!/usr/bin/env bash
# The README's code snippets are compiled, as curl verifies its examples:
# every fenced block that follows a line
#   <!-- snippet: examples/NAME.c -->
# in README.md must be, line for line, the region of that file between
# "/* snippet:begin */" and "/* snippet:end */" with the region's common
# indentation removed. The example itself is built (and run) by the build and
# scripts/test.sh, so the README shows code that compiles and runs. A marker
#   <!-- snippet: examples/NAME.c max-bw-lines=N -->
# also caps the snippet's lines of breakwater code (lines that name a bw_ or
# BW_ identifier) at N: the README promises a short example, and keeps it.
# usage: check_snippets.sh [SOURCE_DIR]; exit 1 with a diff on a mismatch.
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
readme=$root/README.md
if [ ! -f "$readme" ]; then
  echo "check_snippets: $root has no README.md: give the source tree (the checkout), not a build directory" >&2
  exit 2
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
count=0
dedent() { # strips the common leading spaces of non-empty lines
  awk '{ l[NR] = $0; if ($0 ~ /[^ ]/) { match($0, /^ */);
         if (min == "" || RLENGTH < min) min = RLENGTH } }
       END { for (i = 1; i <= NR; i++) print substr(l[i], min + 1) }'
}
while IFS= read -r spec; do
  count=$((count + 1))
  file=${spec%% *}
  cap=""
  case "$spec" in
    *" max-bw-lines="*) cap=${spec##* max-bw-lines=} ;;
  esac
  src=$root/$file
  if [ ! -f "$src" ]; then
    echo "check_snippets: README.md names $file, which does not exist" >&2
    status=1
    continue
  fi
  # the README's block: the first fence after the marker, to its closing fence
  awk -v f="$spec" '
    $0 == "<!-- snippet: " f " -->" { mark = 1; next }
    mark && !in_block && /^```/ { in_block = 1; next }
    in_block && /^```/ { exit }
    in_block { print }' "$readme" >"$work/readme"
  awk '/\/\* snippet:end \*\//   { on = 0 }
       on                         { print }
       /\/\* snippet:begin \*\//  { on = 1 }' "$src" | dedent >"$work/example"
  if [ ! -s "$work/example" ]; then
    echo "check_snippets: $file has no snippet:begin/end region" >&2
    status=1
  elif ! diff -u --label "README.md ($file)" --label "$file (region)" \
         "$work/readme" "$work/example" >&2; then
    echo "check_snippets: README.md's snippet differs from $file" >&2
    status=1
  elif [ -n "$cap" ]; then
    n=$(grep -c '\b[bB][wW]_' "$work/example" || true)
    if [ "$n" -gt "$cap" ]; then
      echo "check_snippets: $file's snippet has $n lines of breakwater code," \
           "more than the README's promise of $cap" >&2
      status=1
    fi
  fi
done < <(sed -n 's/^<!-- snippet: \(.*\) -->$/\1/p' "$readme")
if [ "$count" -eq 0 ]; then
  echo "check_snippets: no <!-- snippet: ... --> marker in README.md" >&2
  exit 1
fi
[ "$status" -eq 0 ] && echo "check_snippets: $count README snippet(s) match their examples"
exit "$status"
