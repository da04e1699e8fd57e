#!/usr/bin/env bash
# clang-format over the C sources. --check: report and fail, change nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=$(command -v clang-format-14 || command -v clang-format)
mapfile -t files < <(git ls-files --cached --others --exclude-standard \
  -- '*.c' '*.h' | grep -v '^bench/peers/node_modules/')
if [ "${1:-}" = "--check" ]; then
  "$fmt" --dry-run --Werror "${files[@]}"
  echo "format: ${#files[@]} files clean"
else
  "$fmt" -i "${files[@]}"
fi
