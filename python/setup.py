"""Build script: the cffi extensions breakwater._bw (see breakwater_build.py)
and, when pkg-config finds breakwater-redis, breakwater._redis_c (the Redis
queue guard, breakwater_redis_build.py).

Metadata lives in pyproject.toml; this file only declares the cffi modules,
which setuptools compiles against the breakwater found by pkg-config."""
import os
import sys

from setuptools import setup

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import breakwater_redis_build  # noqa: E402

modules = ["breakwater_build.py:ffibuilder"]
if breakwater_redis_build.available():
    modules.append("breakwater_redis_build.py:ffibuilder")

setup(cffi_modules=modules)
