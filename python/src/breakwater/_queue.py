"""The queue guard on Redis (bw_redis_queue_t, docs/redis.md): a bounded
Redis list where the size check and the push are one script (LLEN + RPUSH),
overflow goes to a dead-letter list, and a warning fires at a threshold."""
from __future__ import annotations

import asyncio
import json
from typing import Any, Dict, Optional, Union

from ._errors import BreakwaterError, ConfigError
from ._ffi import c_text, ffi as _core_ffi
from .events import Sink, sink_ptr

try:
    from ._redis_c import ffi, lib  # built when pkg-config found breakwater-redis
except ImportError:  # pragma: no cover - depends on the C install
    ffi = lib = None

Payload = Union[bytes, str]


class RedisUnavailable(BreakwaterError, ConnectionError):
    """Redis could not be reached (or timed out): nothing was acknowledged."""


def _payload(item: Payload) -> bytes:
    if isinstance(item, str):
        return item.encode("utf-8")
    if isinstance(item, (bytes, bytearray, memoryview)):
        return bytes(item)
    raise TypeError(f"item must be bytes or str, not {type(item).__name__}")


def _int(field: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{field} must be an int, not {type(value).__name__}")
    return value


def _ratio(field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{field} must be a number, not {type(value).__name__}")
    return float(value)


class QueueGuard:
    """The reference toolkit's queue guard on Redis (through the C Redis
    component): ``QueueGuard("recovery", port=6379, max_size=100,
    warn_threshold=0.7)``.

    :meth:`enqueue` (alias :meth:`safe_enqueue`) runs LLEN and RPUSH as one
    script: below ``max_size`` the item is pushed and True is returned;
    otherwise it goes to the dead-letter list (reason ``queue_full``) and
    False is returned — never dropped silently. A ``queue_warning`` event
    fires once when the size reaches ``warn_threshold * max_size`` (re-armed
    below ``warn_rearm_threshold * max_size``); ``dead_lettered`` events name
    each refusal (``sink=``). Consumers :meth:`dequeue` into their own
    processing list, :meth:`ack` what they finished and :meth:`recover` what
    a crashed consumer left.

    Keyword arguments: ``host`` (default "127.0.0.1"), ``port`` (6379),
    ``password``, ``username``, ``db``, ``key_prefix`` ("bw:"),
    ``connect_timeout_ms`` / ``command_timeout_ms`` (200), ``max_size``
    (100), ``warn_threshold`` (0.7), ``warn_rearm_threshold`` (0.6),
    ``dlq_max`` (10000). Bad values raise :class:`ConfigError` naming the
    field; an unreachable Redis raises :class:`RedisUnavailable` (also a
    ``ConnectionError``), at creation and on any operation.

    Every operation is a blocking round trip bounded by the command
    timeout; the ``*_async`` forms run it in the loop's default executor so
    the event loop never blocks. Thread-safe."""

    def __init__(self, name: str = "queue", *, host: str = "127.0.0.1", port: int = 6379,
                 password: Optional[str] = None, username: Optional[str] = None,
                 db: int = 0, key_prefix: Optional[str] = None,
                 connect_timeout_ms: Optional[int] = None,
                 command_timeout_ms: Optional[int] = None,
                 max_size: Optional[int] = None, warn_threshold: Optional[float] = None,
                 warn_rearm_threshold: Optional[float] = None,
                 dlq_max: Optional[int] = None, sink: Optional[Sink] = None) -> None:
        if lib is None:
            raise RuntimeError("breakwater was built without the Redis component "
                               "(pkg-config module breakwater-redis)")
        cfg = ffi.new("bw_redis_queue_config_t *")
        lib.bw_redis_queue_config_init(cfg)
        keep = []

        def s(field: str, value: Any) -> Any:
            b = ffi.new("char[]", c_text(field, value))
            keep.append(b)
            return b
        cfg.name = s("name", name)
        cfg.redis.host = s("host", host)
        for field, value in (("port", port), ("db", db)):
            try:
                setattr(cfg.redis, field, _int(field, value))
            except OverflowError:
                raise ConfigError(f"redis.{field} out of range (got {value})", field) from None
        if password is not None:
            cfg.redis.password = s("password", password)
        if username is not None:
            cfg.redis.username = s("username", username)
        if key_prefix is not None:
            cfg.redis.key_prefix = s("key_prefix", key_prefix)
        for field, value in (("connect_timeout_ms", connect_timeout_ms),
                             ("command_timeout_ms", command_timeout_ms)):
            if value is not None:
                try:
                    setattr(cfg.redis, field, _int(field, value))
                except OverflowError:
                    raise ConfigError(f"redis.{field} out of range", field) from None
        for field, value, conv in (("max_size", max_size, _int), ("dlq_max", dlq_max, _int),
                                   ("warn_threshold", warn_threshold, _ratio),
                                   ("warn_rearm_threshold", warn_rearm_threshold, _ratio)):
            if value is None:
                continue
            v = conv(field, value)
            try:
                setattr(cfg, field, v)
            except OverflowError:
                raise ConfigError(f"{field} out of range (got {v})", field) from None
        # The sink lives in the core extension: pass its address across.
        cfg.sink = ffi.cast("bw_sink_t *", int(_core_ffi.cast("uintptr_t", sink_ptr(sink))))
        err = ffi.new("bw_error_t *")
        ptr = lib.bw_redis_queue_new(cfg, err)
        if ptr == ffi.NULL:
            message = ffi.string(err.message).decode("utf-8", "replace")
            field = ffi.string(err.field).decode("utf-8", "replace")
            if err.code == lib.BW_E_IO:
                raise RedisUnavailable(f"queue '{name}': {message or 'Redis unreachable'} "
                                       f"({host}:{port})")
            if err.code == lib.BW_E_NOMEM:
                raise MemoryError(message)
            raise ConfigError(message or "invalid queue configuration", field)
        self._ptr = ffi.gc(ptr, lambda p, k=sink: (lib.bw_redis_queue_free(p), k))
        self.name = name
        self.address = f"{host}:{port}"

    def _io(self, rc: int, what: str) -> None:
        if rc == lib.BW_E_IO:
            raise RedisUnavailable(f"queue '{self.name}': {what} failed: Redis at "
                                   f"{self.address} unavailable")
        if rc == lib.BW_E_NOMEM:
            raise MemoryError(what)
        if rc not in (lib.BW_OK, lib.BW_E_FULL, lib.BW_E_NOTFOUND):
            raise BreakwaterError(f"queue '{self.name}': {what} failed ({rc})")

    # ---- producer -----------------------------------------------------------
    def enqueue(self, item: Payload) -> bool:
        """Pushes item (bytes or str) if the queue is below max_size: True.
        Otherwise it is dead-lettered (reason queue_full): False. Raises
        RedisUnavailable when Redis cannot be reached."""
        data = _payload(item)
        rc = lib.bw_redis_queue_enqueue(self._ptr, data, len(data), ffi.NULL)
        self._io(rc, "enqueue")
        return rc == lib.BW_OK

    safe_enqueue = enqueue

    async def enqueue_async(self, item: Payload) -> bool:
        """:meth:`enqueue` without blocking the event loop."""
        return await asyncio.get_running_loop().run_in_executor(None, self.enqueue, item)

    # ---- consumers ----------------------------------------------------------
    def dequeue(self, consumer: str) -> Optional[bytes]:
        """Moves the oldest item to ``consumer``'s processing list and returns
        it, or None when the queue is empty. :meth:`ack` it when done."""
        c = c_text("consumer", consumer)
        out = ffi.new("void **")
        n = ffi.new("size_t *")
        rc = lib.bw_redis_queue_dequeue(self._ptr, c, out, n)
        self._io(rc, "dequeue")
        if rc == lib.BW_E_NOTFOUND:
            return None
        try:
            return ffi.unpack(ffi.cast("char *", out[0]), n[0])
        finally:
            lib.bw_free(out[0])

    async def dequeue_async(self, consumer: str) -> Optional[bytes]:
        """:meth:`dequeue` without blocking the event loop."""
        return await asyncio.get_running_loop().run_in_executor(None, self.dequeue, consumer)

    def ack(self, consumer: str, item: Payload) -> bool:
        """Removes a finished item from consumer's processing list: True, or
        False when it was not there."""
        data = _payload(item)
        rc = lib.bw_redis_queue_ack(self._ptr, c_text("consumer", consumer), data, len(data))
        self._io(rc, "ack")
        return rc == lib.BW_OK

    def recover(self, consumer: str) -> int:
        """Moves every unacknowledged item of a (crashed) consumer back to the
        front of the queue; returns how many."""
        moved = ffi.new("uint64_t *")
        self._io(lib.bw_redis_queue_recover(self._ptr, c_text("consumer", consumer), moved),
                 "recover")
        return moved[0]

    # ---- reading --------------------------------------------------------------
    def size(self) -> int:
        """Items in the queue (Redis LLEN)."""
        out = ffi.new("uint64_t *")
        self._io(lib.bw_redis_queue_size(self._ptr, out), "size")
        return out[0]

    def dlq_size(self) -> int:
        """Entries in the dead-letter list."""
        out = ffi.new("uint64_t *")
        self._io(lib.bw_redis_queue_dlq_size(self._ptr, out), "dlq_size")
        return out[0]

    def dlq(self, index: int = 0) -> Optional[Dict[str, Any]]:
        """Dead-letter entry ``index`` (0 = oldest) as a dict (payload,
        reason, error, ts_ms), or None."""
        index = _int("index", index)
        if index < 0:
            raise ValueError("index must be >= 0")
        out = ffi.new("char **")
        rc = lib.bw_redis_queue_dlq_get(self._ptr, index, out)
        self._io(rc, "dlq_get")
        if rc == lib.BW_E_NOTFOUND:
            return None
        try:
            return json.loads(ffi.string(out[0]).decode("utf-8", "replace"))
        finally:
            lib.bw_free(out[0])

    def stats(self) -> Dict[str, int]:
        """This handle's counters."""
        s = ffi.new("bw_redis_queue_stats_t *")
        lib.bw_redis_queue_stats(self._ptr, s)
        return {n: getattr(s, n) for n in (
            "admitted", "dead_lettered", "warnings", "dequeued", "acked",
            "recovered", "errors", "dlq_dropped")}

    def __repr__(self) -> str:
        return f"<QueueGuard {self.name!r} at {self.address}>"
