#!/usr/bin/env bash
# Installs a build and uses every installed component the way a user would:
#   1. cmake --install into a temporary prefix; check_libs.sh on its libdir;
#   2. per component, tests/install/use_<c>.c built and run three ways:
#      pkg-config (shared), pkg-config --static (breakwater's archives, the
#      system's libraries shared), and find_package(breakwater COMPONENTS c);
#   3. one program on the shared core with shm and curl (one core, one
#      allocator, component errors that name the field);
#   4. a plugin shared object linking breakwater-shm (shared, then static
#      archives, which must be PIC) loaded with dlopen — a binding's shape;
#   5. find_package of a component that was not built fails, naming it;
#   6. a configure for /usr with a multiarch libdir: the .pc files say
#      /usr/lib/<triplet> and /usr/include, with no ../ in their paths;
#   7. the man page and the docs are installed.
# usage: install_check.sh BUILD_DIR. Exit non-zero at the first failure.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/usr
say() { printf 'install_check: %s\n' "$*"; }

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(ls -d "$prefix"/lib*/ | head -n 1)
libdir=${libdir%/}
bash "$root/scripts/check_libs.sh" "$libdir" "$root"
export PKG_CONFIG_PATH="$libdir/pkgconfig"

# The components this install has, from its pkg-config modules.
components=()
for pc in "$libdir"/pkgconfig/breakwater-*.pc; do
  c=$(basename "$pc" .pc)
  components+=("${c#breakwater-}")
done
say "components installed: ${components[*]}"
[ ${#components[@]} -gt 0 ] || { say "no component installed"; exit 1; }

# Archives only, for the static link: the linker takes the first directory
# that has a library, and prefers a .so within one directory.
mkdir -p "$work/static"
cp "$libdir"/libbreakwater*.a "$work/static/"

cc_flags=(-std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L)
for c in "${components[@]}"; do
  src="$root/tests/install/use_$c.c"
  [ -f "$src" ] || { say "no tests/install/use_$c.c for component $c"; exit 1; }
  # shellcheck disable=SC2046
  cc "${cc_flags[@]}" "$src" -o "$work/use_${c}_shared" \
    $(pkg-config --cflags --libs "breakwater-$c")
  LD_LIBRARY_PATH="$libdir" "$work/use_${c}_shared" >/dev/null
  # shellcheck disable=SC2046
  cc "${cc_flags[@]}" "$src" -o "$work/use_${c}_static" -L"$work/static" \
    $(pkg-config --static --cflags --libs "breakwater-$c")
  if readelf -d "$work/use_${c}_static" | grep -q 'NEEDED.*libbreakwater'; then
    say "use_${c}_static needs a shared libbreakwater"; exit 1
  fi
  "$work/use_${c}_static" >/dev/null
  say "breakwater-$c: built and ran through pkg-config, shared and --static"
done

cmake -S "$root/tests/install" -B "$work/fp" -DCMAKE_PREFIX_PATH="$prefix" \
  "-DBW_CHECK_COMPONENTS=$(IFS=';'; echo "${components[*]}")" \
  -DBW_EXAMPLE_SOURCE="$root/examples/breaker_flaky.c" >/dev/null
cmake --build "$work/fp" >/dev/null
LD_LIBRARY_PATH="$libdir" "$work/fp/flaky_installed" --virtual >/dev/null
"$work/fp/flaky_installed_static" --virtual >/dev/null
for c in "${components[@]}"; do
  LD_LIBRARY_PATH="$libdir" "$work/fp/use_$c" >/dev/null
  "$work/fp/use_${c}_static" >/dev/null
done
say "find_package(breakwater COMPONENTS ${components[*]}): built and ran each, shared and static"

if [[ " ${components[*]} " == *" shm "* && " ${components[*]} " == *" curl "* ]]; then
  # shellcheck disable=SC2046
  cc "${cc_flags[@]}" "$root/tests/install/use_mixed.c" -o "$work/use_mixed" \
    $(pkg-config --cflags --libs breakwater-shm breakwater-curl)
  LD_LIBRARY_PATH="$libdir" "$work/use_mixed"
  LD_LIBRARY_PATH="$libdir" "$work/fp/use_mixed" >/dev/null
fi

if [[ " ${components[*]} " == *" shm "* ]]; then
  cc "${cc_flags[@]}" "$root/tests/install/load_plugin.c" -o "$work/load_plugin" \
    -I"$prefix/include" -ldl
  # shellcheck disable=SC2046
  cc "${cc_flags[@]}" -shared -fPIC "$root/tests/install/plugin.c" \
    -o "$work/plugin_shared.so" $(pkg-config --cflags --libs breakwater-shm)
  LD_LIBRARY_PATH="$libdir" "$work/load_plugin" "$work/plugin_shared.so"
  # shellcheck disable=SC2046
  cc "${cc_flags[@]}" -shared -fPIC "$root/tests/install/plugin.c" \
    -o "$work/plugin_static.so" -L"$work/static" \
    $(pkg-config --static --cflags --libs breakwater-shm)
  "$work/load_plugin" "$work/plugin_static.so"
fi

mkdir -p "$work/nosuch"
cat >"$work/nosuch/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(nosuch C)
find_package(breakwater CONFIG REQUIRED COMPONENTS nosuch)
CM
if cmake -S "$work/nosuch" -B "$work/nosuch/b" -DCMAKE_PREFIX_PATH="$prefix" \
     >"$work/nosuch.log" 2>&1; then
  say "find_package(breakwater COMPONENTS nosuch) succeeded"; exit 1
fi
grep -q "component 'nosuch' not found" "$work/nosuch.log" ||
  { cat "$work/nosuch.log"; exit 1; }
say "find_package(breakwater COMPONENTS nosuch) fails, naming the component"

# A distribution's install: prefix /usr, multiarch libdir.
cmake -S "$root" -B "$work/usr-build" -DCMAKE_INSTALL_PREFIX=/usr \
  -DCMAKE_INSTALL_LIBDIR=lib/x86_64-linux-gnu -DBW_BUILD_TESTS=OFF \
  -DBW_BUILD_BENCH=OFF -DBW_BUILD_EXAMPLES=OFF >/dev/null
cmake --build "$work/usr-build" -j"$(nproc)" >/dev/null
DESTDIR="$work/root" cmake --install "$work/usr-build" >/dev/null
pcdir="$work/root/usr/lib/x86_64-linux-gnu/pkgconfig"
for pc in "$pcdir"/*.pc; do
  m=$(basename "$pc" .pc)
  got=$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=libdir "$m")
  inc=$(PKG_CONFIG_PATH="$pcdir" pkg-config --variable=includedir "$m")
  if [ "$got" != /usr/lib/x86_64-linux-gnu ] || [ "$inc" != /usr/include ] ||
     grep -q '\.\./' "$pc"; then
    say "$m.pc for /usr: libdir '$got', includedir '$inc'"; cat "$pc"; exit 1
  fi
done
say "for /usr: every .pc says libdir /usr/lib/x86_64-linux-gnu, includedir /usr/include, no ../"

test -s "$prefix/share/man/man1/breakwater.1" ||
  { say "no man page breakwater(1)"; exit 1; }
for f in LICENSE NEWS.md README.md; do
  test -s "$prefix/share/doc/breakwater/$f" || { say "no share/doc/breakwater/$f"; exit 1; }
done
say "man page breakwater(1) and share/doc/breakwater (LICENSE, NEWS.md, README.md) installed"
readelf -d "$libdir"/libbreakwater.so | grep -q 'SONAME.*libbreakwater.so.0.1'
say "SONAME libbreakwater.so.0.1"
