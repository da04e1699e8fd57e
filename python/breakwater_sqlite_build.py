"""cffi API-mode builder for ``breakwater._sqlite_c``: the SQLite queue
store (include/breakwater/store_sqlite.h), for durable parking lots
(``ParkingLot(path=...)``), linked to the installed ``libbreakwater_sqlite``
found through pkg-config (module ``breakwater-sqlite``). A separate
extension so that the core binding builds without the SQLite component;
setup.py adds it only when pkg-config finds the module. The queue it makes
is used through the core's store interface (breakwater._bw): the pointers
cross between the two extensions as addresses."""
import breakwater_pkgconfig

MODULES = ["breakwater-sqlite"]


def available():
    """True when pkg-config knows the breakwater-sqlite module."""
    return breakwater_pkgconfig.available(MODULES)


CDEF = breakwater_pkgconfig.COMPONENT_CDEF + r"""
typedef struct { const char *name; uint32_t max_size; double warn_threshold;
  double warn_rearm_threshold; uint32_t max_deliveries; uint32_t dlq_max;
  const bw_clock_t *clock; const bw_clock_t *wall_clock; bw_sink_t *sink; }
  bw_queue_store_config_t;
typedef struct bw_queue_store_s bw_queue_store_t;
typedef enum { BW_SQLITE_SYNC_NORMAL = 0, BW_SQLITE_SYNC_FULL = 1 }
  bw_sqlite_sync_t;
typedef struct { const char *path; bw_sqlite_sync_t synchronous;
  int64_t busy_timeout_ms; bool group_commit; ...; } bw_sqlite_config_t;
typedef struct bw_sqlite_s bw_sqlite_t;
void bw_sqlite_config_init(bw_sqlite_config_t *cfg);
bw_sqlite_t *bw_sqlite_open(const bw_sqlite_config_t *cfg, bw_error_t *err);
void bw_sqlite_close(bw_sqlite_t *db);
bw_queue_store_t *bw_sqlite_queue_new(bw_sqlite_t *db,
                                      const bw_queue_store_config_t *cfg,
                                      bw_error_t *err);
void bw_queue_store_free(bw_queue_store_t *q);
"""

ffibuilder = breakwater_pkgconfig.ffi_builder(
    CDEF, "breakwater._sqlite_c", "#include <breakwater/store_sqlite.h>\n", MODULES,
    optional=True)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
