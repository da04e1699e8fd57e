"""What the cffi builders (breakwater_build.py, breakwater_redis_build.py,
breakwater_sqlite_build.py, breakwater_config_build.py) share: asking
pkg-config about breakwater's installed modules, and pointing an FFI
builder's C source at them (include and library directories, the libraries,
and the library directory as an rpath so that the extension finds the
installed shared libraries without LD_LIBRARY_PATH). A build-time
module, imported by the builders; it is not installed."""
import subprocess

from cffi import FFI


def available(modules):
    """True when pkg-config knows every module in ``modules``."""
    try:
        return subprocess.run(["pkg-config", "--exists", *modules]).returncode == 0
    except OSError:
        return False


def pkg(modules, *args):
    """pkg-config's answer to ``args`` for ``modules``, split into words."""
    out = subprocess.run(["pkg-config", *args, *modules], check=True,
                         capture_output=True, text=True).stdout
    return out.split()


# The declarations the component builders (Redis, SQLite) both open with:
# the error struct, the opaque sink and clock, and the status codes they
# answer with.
COMPONENT_CDEF = r"""
typedef struct { int code; char field[48]; char message[208]; } bw_error_t;
typedef struct bw_sink_s bw_sink_t;
typedef struct bw_clock_s bw_clock_t;
#define BW_OK 0
#define BW_E_INVAL ...
#define BW_E_NOMEM ...
#define BW_E_IO ...
"""


def ffi_builder(cdef, name, source, modules, optional=False):
    """An FFI builder for ``cdef`` whose C source (extension ``name``,
    ``source`` the includes) is compiled against ``modules``. An optional
    extension gets its source only when pkg-config knows the modules
    (setup.py then leaves the builder out)."""
    ffibuilder = FFI()
    ffibuilder.cdef(cdef)
    if not optional or available(modules):
        set_source(ffibuilder, name, source, modules)
    return ffibuilder


def set_source(ffibuilder, name, source, modules):
    """``ffibuilder.set_source(name, source)`` compiled against and linked
    to the installed ``modules`` found by pkg-config."""
    def strip(args):  # "-I/usr/include" -> "/usr/include"
        return [f[2:] for f in pkg(modules, *args)]

    libdirs = strip(["--libs-only-L"])
    ffibuilder.set_source(
        name, source,
        include_dirs=strip(["--cflags-only-I"]),
        library_dirs=libdirs,
        libraries=strip(["--libs-only-l"]),
        runtime_library_dirs=libdirs,
        extra_compile_args=["-std=c11", "-D_POSIX_C_SOURCE=200809L"],
    )
