"""cffi API-mode builder for ``breakwater._redis_c``: the Redis queue guard
(include/breakwater/store_redis.h), linked to the installed
``libbreakwater_redis`` found through pkg-config (module
``breakwater-redis``). A separate extension so that the core binding builds
without the Redis component; setup.py adds it only when pkg-config finds
the module."""
import breakwater_pkgconfig

MODULES = ["breakwater-redis"]


def available():
    """True when pkg-config knows the breakwater-redis module."""
    return breakwater_pkgconfig.available(MODULES)


CDEF = breakwater_pkgconfig.COMPONENT_CDEF + r"""
void bw_free(void *ptr);
#define BW_E_FULL ...
#define BW_E_NOTFOUND ...

typedef struct { const char *host; int port; const char *username;
  const char *password; int db; bool tls; int64_t connect_timeout_ms;
  int64_t command_timeout_ms; int64_t backoff_initial_ms;
  int64_t backoff_max_ms; const char *key_prefix; ...; } bw_redis_config_t;
typedef struct { bw_redis_config_t redis; const char *name;
  uint32_t max_size; double warn_threshold; double warn_rearm_threshold;
  uint32_t dlq_max; const bw_clock_t *wall_clock; bw_sink_t *sink; ...; }
  bw_redis_queue_config_t;
typedef struct bw_redis_queue_s bw_redis_queue_t;
typedef struct { uint64_t admitted; uint64_t dead_lettered;
  uint64_t warnings; uint64_t dequeued; uint64_t acked; uint64_t recovered;
  uint64_t errors; uint64_t dlq_dropped; } bw_redis_queue_stats_t;
void bw_redis_queue_config_init(bw_redis_queue_config_t *cfg);
bw_redis_queue_t *bw_redis_queue_new(const bw_redis_queue_config_t *cfg,
                                     bw_error_t *err);
int bw_redis_queue_enqueue(bw_redis_queue_t *q, const void *payload,
                           size_t len, uint64_t *size_out);
int bw_redis_queue_dequeue(bw_redis_queue_t *q, const char *consumer,
                           void **payload, size_t *len);
int bw_redis_queue_ack(bw_redis_queue_t *q, const char *consumer,
                       const void *payload, size_t len);
int bw_redis_queue_recover(bw_redis_queue_t *q, const char *consumer,
                           uint64_t *moved);
int bw_redis_queue_size(bw_redis_queue_t *q, uint64_t *size);
int bw_redis_queue_dlq_size(bw_redis_queue_t *q, uint64_t *size);
int bw_redis_queue_dlq_get(bw_redis_queue_t *q, uint64_t index, char **json);
void bw_redis_queue_stats(const bw_redis_queue_t *q,
                          bw_redis_queue_stats_t *out);
void bw_redis_queue_free(bw_redis_queue_t *q);
"""

ffibuilder = breakwater_pkgconfig.ffi_builder(
    CDEF, "breakwater._redis_c", "#include <breakwater/store_redis.h>\n", MODULES,
    optional=True)

if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
