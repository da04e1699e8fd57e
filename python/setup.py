"""Build script for the extensions of breakwater's Python binding:

- breakwater._bw (cffi, API mode; breakwater_build.py): the binding itself;
- breakwater._redis_c (cffi; breakwater_redis_build.py): the Redis queue
  guard, only when pkg-config finds breakwater-redis;
- breakwater._config_c (cffi; breakwater_config_build.py): configuration
  files (Registry.load_file), only when pkg-config finds breakwater-config;
- breakwater._sqlite_c (cffi; breakwater_sqlite_build.py): durable parking
  lots on SQLite, only when pkg-config finds breakwater-sqlite;
- breakwater._hot (the CPython C API; csrc/hot.c): the breaker decorator's
  hot path, compiled against the installed headers, linking nothing.

Metadata lives in pyproject.toml; the libraries and headers are found by
pkg-config."""
import os
import subprocess
import sys

from setuptools import Extension, setup

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import breakwater_config_build  # noqa: E402
import breakwater_redis_build  # noqa: E402
import breakwater_sqlite_build  # noqa: E402

modules = ["breakwater_build.py:ffibuilder"]
if breakwater_redis_build.available():
    modules.append("breakwater_redis_build.py:ffibuilder")
if breakwater_config_build.available():
    modules.append("breakwater_config_build.py:ffibuilder")
if breakwater_sqlite_build.available():
    modules.append("breakwater_sqlite_build.py:ffibuilder")

cflags = subprocess.run(["pkg-config", "--cflags-only-I", "breakwater"], check=True,
                        capture_output=True, text=True).stdout.split()
hot = Extension("breakwater._hot", ["csrc/hot.c"],
                include_dirs=[f[2:] for f in cflags],
                extra_compile_args=["-std=c11", "-Wall", "-Wextra"])

setup(cffi_modules=modules, ext_modules=[hot])
