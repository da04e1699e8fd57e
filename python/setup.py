"""Build script: the cffi extension breakwater._bw (see breakwater_build.py).

Metadata lives in pyproject.toml; this file only declares the cffi module,
which setuptools compiles against the breakwater found by pkg-config."""
from setuptools import setup

setup(cffi_modules=["breakwater_build.py:ffibuilder"])
