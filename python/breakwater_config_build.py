"""cffi API-mode builder for ``breakwater._config_c``: configuration files
loaded into a registry (include/breakwater/config_file.h), linked to the
installed ``libbreakwater_config`` found through pkg-config (module
``breakwater-config``). A separate extension so that the core binding
builds without the config component (it needs inih); setup.py adds it only
when pkg-config finds the module, and ``Registry.load_file`` says so when
it is missing."""
import breakwater_pkgconfig

MODULES = ["breakwater-config"]


def available():
    """True when pkg-config knows the breakwater-config module."""
    return breakwater_pkgconfig.available(MODULES)


CDEF = r"""
typedef struct bw_registry_s bw_registry_t;
#define BW_OK 0
#define BW_E_INVAL ...
#define BW_E_NOMEM ...
#define BW_E_NOTFOUND ...
#define BW_E_IO ...
#define BW_E_LIMIT ...
typedef struct { const char *env_prefix; ...; } bw_config_file_options_t;
typedef struct { int code; unsigned line; char key[128]; char rule[512];
                 char message[896]; } bw_config_diag_t;
typedef struct { size_t created; size_t applied; size_t not_applied;
                 size_t kept; char *report; } bw_config_reload_t;
typedef struct bw_config_file_s bw_config_file_t;
void bw_config_file_options_init(bw_config_file_options_t *opt);
bw_config_file_t *bw_config_file_read(const char *path,
                                      const bw_config_file_options_t *opt,
                                      bw_config_diag_t *diag);
void bw_config_file_free(bw_config_file_t *f);
size_t bw_config_file_count(const bw_config_file_t *f);
int bw_config_file_object(const bw_config_file_t *f, size_t i,
                          const char **kind, const char **name);
int bw_config_file_apply(const bw_config_file_t *f, bw_registry_t *reg,
                         bw_config_diag_t *diag);
void bw_config_reload_clear(bw_config_reload_t *r);
int bw_registry_reload_ex(bw_registry_t *reg, const char *path,
                          const bw_config_file_options_t *opt,
                          bw_config_reload_t *report, bw_config_diag_t *diag);
"""

ffibuilder = breakwater_pkgconfig.ffi_builder(
    CDEF, "breakwater._config_c",
    "#include <breakwater/config_file.h>\n",
    MODULES, optional=True)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
