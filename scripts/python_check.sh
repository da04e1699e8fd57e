#!/usr/bin/env bash
# The Python binding against an installed breakwater: builds python/ (cffi
# API mode: a real extension compiled against the installed headers, linked
# to the installed shared libraries found by pkg-config, with their libdir
# as rpath) with Debian's pip and setuptools, offline and without build
# isolation, into a temporary target directory, then runs its tests with
# Debian's pytest.
# usage: python_check.sh PREFIX   (an install prefix: PREFIX/lib*/pkgconfig)
#        python_check.sh --build BUILD_DIR   (installs it to a temporary prefix)
# Exit non-zero when the build fails, a test fails, or no test ran.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
say() { printf 'python_check: %s\n' "$*"; }

if [ "${1:-}" = "--build" ]; then
  cmake --install "$2" --prefix "$work/usr" >/dev/null
  prefix=$work/usr
else
  prefix=$(cd "${1:?usage: python_check.sh PREFIX | --build BUILD_DIR}" && pwd)
fi
libdir=$(ls -d "$prefix"/lib*/ | head -n 1)
libdir=${libdir%/}
export PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
# The tests run on a copy of python/: they find the repository's docs (the
# events schema) through this.
export BREAKWATER_SOURCE_DIR="$root"
pkg-config --exists breakwater breakwater-shm ||
  { say "no breakwater / breakwater-shm pkg-config module under $libdir"; exit 1; }

# Build outside the source tree (pip builds in place: copy it first).
cp -r "$root/python" "$work/src"
rm -rf "$work/src/build" "$work/src"/src/*.egg-info
"$py" -m pip install --quiet --no-build-isolation --no-deps --no-index \
  --disable-pip-version-check --root-user-action=ignore \
  --target "$work/site" "$work/src" >"$work/pip.log" 2>&1 ||
  { cat "$work/pip.log"; say "build failed"; exit 1; }
so=$(ls "$work"/site/breakwater/_bw*.so)
readelf -d "$so" | grep -q "R.*PATH.*$libdir" ||
  { say "the extension has no rpath to $libdir"; readelf -d "$so"; exit 1; }
say "built $(basename "$so") against $libdir"

set +e
(cd "$work/src" && PYTHONPATH="$work/site" timeout 300 "$py" -m pytest -q -rs \
  -p no:cacheprovider tests)
rc=$?
set -e
case $rc in
  0) say "pytest passed" ;;
  5) say "pytest collected no tests: a failure"; exit 1 ;;
  *) say "pytest failed (exit $rc)"; exit "$rc" ;;
esac
