"""Fallback with recovery (docs/stores.md, "Fallback with recovery"): a
:class:`ParkingLot` keeps the work of calls that failed for a transient
reason (a breaker open, retries exhausted, a deadline), in a C queue store
with its dead-letter queue and queue guard; a :class:`Reprocessor` replays
it through a handler once the dependency is back, over the C core's
``bw_reprocessor_t``. A fallback that only parks, without a job that
replays, turns "the worker hangs" into "notifications silently never
arrive": the pair closes the loop."""
from __future__ import annotations

import asyncio
import inspect
import json
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional

from ._clock import Clock, resolve
from ._errors import BreakwaterError, ConfigError
from ._ffi import c_path, c_text, error_from, ffi, lib
from ._guard import Classifier, check_classifier, matches
from ._policies import Breaker
from .events import Sink, sink_ptr

if TYPE_CHECKING:  # the pipeline module imports this one
    from ._pipeline import Pipeline

#: the codecs a ParkingLot stores its work with
CODECS = ("json", "bytes")


def _uint(field: str, value: Any, low: int, high: int = 0xFFFFFFFF) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{field} must be an int, not {type(value).__name__}")
    if not low <= value <= high:
        raise ConfigError(f"{field} must be an integer in [{low}, {high}] (got {value})",
                          field)
    return value


def _ratio(field: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{field} must be a number, not {type(value).__name__}")
    return float(value)


class ParkingLot:
    """Parked work: a bounded queue of payloads (the core's memory queue
    store, ``bw_mem_queue_new``) with a dead-letter queue.

    ``ParkingLot("pending_notifications", max_size=1000, max_deliveries=5)``
    — ``codec="json"`` (default) stores any JSON-serialisable value and
    hands it back decoded; ``codec="bytes"`` stores ``bytes`` (or ``str``,
    as UTF-8) and hands back ``bytes``. Keyword arguments are the store's
    fields (docs/stores.md): ``max_size`` (the guard; 10000),
    ``warn_threshold`` (0.7), ``warn_rearm_threshold`` (0.6),
    ``max_deliveries`` (5: an item replayed and failed that many times goes
    to the dead-letter queue), ``dlq_max`` (10000). Bad values raise
    :class:`ConfigError` naming the field. ``clock`` is the store's clock
    (retry delays and leases; a :class:`ManualClock` in tests), ``sink``
    receives ``queue_warning`` and ``dead_lettered`` events.

    Park with :meth:`park`, or give it to a pipeline
    (``Pipeline([...], park=lot)``): a call that fails transiently or is
    refused parks its work (the C core's ``bw_park_fallback``). Replay with
    a :class:`Reprocessor`. Conservation, at every moment (see
    :meth:`stats`): ``inherited + parked + requeued == acked +
    dead_lettered + depth``.

    The queue lives in this process's memory; with ``path=`` it is the
    SQLite store instead (the SQLite component, ``breakwater-sqlite``): a
    durable queue named ``name`` in that file, committed before
    :meth:`park` returns, shared by every lot (and process) that opens the
    same file and name; ``synchronous="full"`` also survives a power loss
    (docs/stores.md). Its default clock is the wall clock (leases and
    delays must mean the same after a reboot). ``inherited`` is what was
    waiting when this lot opened it; the law holds while this lot is the
    file's only user. Thread-safe."""

    def __init__(self, name: str = "parked", *, codec: str = "json",
                 path: Any = None, synchronous: str = "normal",
                 clock: Optional[Clock] = None, sink: Optional[Sink] = None,
                 max_size: Optional[int] = None, warn_threshold: Optional[float] = None,
                 warn_rearm_threshold: Optional[float] = None,
                 max_deliveries: Optional[int] = None,
                 dlq_max: Optional[int] = None) -> None:
        c_text("name", name)
        if codec not in CODECS:
            raise ValueError(f"codec must be one of {', '.join(CODECS)} (got {codec!r})")
        self.codec = codec
        self._clock = resolve(clock)
        self.path: Optional[str] = None
        cfg = ffi.new("bw_queue_store_config_t *")
        lib.bw_queue_store_config_init(cfg)
        cname = ffi.new("char[]", name.encode())
        cfg.name = cname
        if max_size is not None:
            cfg.max_size = _uint("max_size", max_size, 0)
        if max_deliveries is not None:
            cfg.max_deliveries = _uint("max_deliveries", max_deliveries, 0)
        if dlq_max is not None:
            cfg.dlq_max = _uint("dlq_max", dlq_max, 0)
        if warn_threshold is not None:
            cfg.warn_threshold = _ratio("warn_threshold", warn_threshold)
        if warn_rearm_threshold is not None:
            cfg.warn_rearm_threshold = _ratio("warn_rearm_threshold", warn_rearm_threshold)
        if clock is not None:  # else the backend's default (see above)
            cfg.clock = self._clock._ptr
        cfg.sink = sink_ptr(sink)
        # The queue borrows its clock and sink: they (and their C objects)
        # outlive it.
        pins = (self._clock, sink, self._clock._ptr, cfg.sink)
        if path is None:
            err = ffi.new("bw_error_t *")
            ptr = lib.bw_mem_queue_new(cfg, err)  # validates: names the field
            if ptr == ffi.NULL:
                raise error_from(err, "parking lot")
            self._ptr = ffi.gc(ptr, lambda p, k=pins: (lib.bw_queue_store_free(p), k))
        else:
            self._ptr = self._open_sqlite(path, synchronous, cfg, pins)
        self.name = ffi.string(lib.bw_queue_store_name(self._ptr)).decode()
        self._lock = threading.Lock()
        self._parked = 0  # payloads offered to the lot (accepted or not)
        self._inherited = self.stats()["depth"]  # waiting when it was opened

    def _open_sqlite(self, path: Any, synchronous: str, cfg: Any, pins: Any) -> Any:
        """The SQLite queue (breakwater._sqlite_c) for cfg, as a core
        bw_queue_store_t * that closes its file when collected."""
        try:
            from ._sqlite_c import ffi as sffi, lib as slib
        except ImportError:
            raise RuntimeError("breakwater was built without the SQLite component "
                               "(pkg-config module breakwater-sqlite)") from None
        path = c_path(path)
        syncs = {"normal": slib.BW_SQLITE_SYNC_NORMAL, "full": slib.BW_SQLITE_SYNC_FULL}
        if synchronous not in syncs:
            raise ConfigError(f"synchronous must be 'normal' or 'full' (got {synchronous!r})",
                              "synchronous")

        def addr(cdata: Any) -> int:
            return int(ffi.cast("uintptr_t", cdata))

        sc = sffi.new("bw_sqlite_config_t *")
        slib.bw_sqlite_config_init(sc)
        cpath = sffi.new("char[]", path.encode())
        sc.path, sc.synchronous = cpath, syncs[synchronous]
        err = sffi.new("bw_error_t *")
        db = slib.bw_sqlite_open(sc, err)
        if db == sffi.NULL:
            raise self._sqlite_error(sffi, slib, err, path)
        qc = sffi.new("bw_queue_store_config_t *")
        for field in ("max_size", "warn_threshold", "warn_rearm_threshold",
                      "max_deliveries", "dlq_max"):
            setattr(qc, field, getattr(cfg, field))
        qc.name = sffi.cast("char *", addr(cfg.name))
        for field, ctype in (("clock", "bw_clock_t *"), ("wall_clock", "bw_clock_t *"),
                             ("sink", "bw_sink_t *")):
            setattr(qc, field, sffi.cast(ctype, addr(getattr(cfg, field))))
        q = slib.bw_sqlite_queue_new(db, qc, err)
        if q == sffi.NULL:
            slib.bw_sqlite_close(db)
            raise self._sqlite_error(sffi, slib, err, path)
        self.path = path

        def free(p: Any, db: Any = db, k: Any = pins) -> None:
            lib.bw_queue_store_free(p)  # first the queue, then its file
            slib.bw_sqlite_close(db)
        return ffi.gc(ffi.cast("bw_queue_store_t *", addr(q)), free)

    @staticmethod
    def _sqlite_error(sffi: Any, slib: Any, err: Any, path: str) -> BaseException:
        message = sffi.string(err.message).decode("utf-8", "replace") or path
        if err.code == slib.BW_E_NOMEM:
            return MemoryError(message)
        # BW_E_INVAL names a field; BW_E_IO is the file (not a database,
        # another application's, a newer schema, an OS error): field "path".
        field = sffi.string(err.field).decode("utf-8", "replace") or "path"
        return ConfigError(message, field, path=path)

    # ---- payloads ---------------------------------------------------------
    def encode(self, work: Any) -> bytes:
        """The stored form of ``work`` under this lot's codec (TypeError /
        ValueError when it cannot be stored)."""
        if self.codec == "bytes":
            if isinstance(work, str):
                return work.encode("utf-8")
            if isinstance(work, (bytes, bytearray, memoryview)):
                return bytes(work)
            raise TypeError(f"parking lot '{self.name}' (codec bytes): work must be "
                            f"bytes or str, not {type(work).__name__}")
        try:
            return json.dumps(work, separators=(",", ":"), allow_nan=False).encode()
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"parking lot '{self.name}' (codec json): work is not "
                            f"JSON-serialisable: {exc}") from None

    def decode(self, data: bytes) -> Any:
        """A stored payload back in Python form."""
        if self.codec == "bytes":
            return data
        return json.loads(data.decode("utf-8"))

    # ---- parking --------------------------------------------------------------
    def park(self, work: Any) -> bool:
        """Parks ``work``: True when it is stored; False when the guard
        refused it (the lot holds ``max_size`` items): it is then in the
        dead-letter queue with reason ``queue_full`` — never dropped."""
        data = self.encode(work)
        rc = lib.bw_queue_store_enqueue(self._ptr, data, len(data), ffi.NULL)
        return self._settle(rc)

    def _settle(self, rc: int) -> bool:
        """Counts one parked payload by the enqueue's status."""
        if rc == lib.BW_E_NOMEM:
            raise MemoryError(f"parking lot '{self.name}'")
        if rc not in (lib.BW_OK, lib.BW_E_FULL):
            raise BreakwaterError(f"parking lot '{self.name}': enqueue failed "
                                  f"({ffi.string(lib.bw_strerror(rc)).decode()})")
        with self._lock:
            self._parked += 1
        return rc == lib.BW_OK

    # ---- reading ------------------------------------------------------------
    def __len__(self) -> int:
        """Items waiting (the backlog): ready, delayed and being replayed."""
        return self.stats()["depth"]

    def stats(self) -> Dict[str, Any]:
        """A snapshot: ``parked`` (payloads offered, by :meth:`park` or a
        pipeline), ``depth`` (waiting), ``dlq_depth``, ``inherited`` (the
        depth when the lot was opened: 0 in memory), and this lot's store
        counters (``enqueued``, ``refused_full``, ``claimed``, ``acked``,
        ``nacked``, ``dead_lettered``, ``requeued``, ``dlq_dropped``,
        ``warnings``). ``inherited + parked + requeued == acked +
        dead_lettered + depth``."""
        s = ffi.new("bw_queue_store_stats_t *")
        lib.bw_queue_store_stats(self._ptr, s)
        out: Dict[str, Any] = {n: getattr(s, n) for n in (
            "depth", "in_flight", "dlq_depth", "max_size", "enqueued", "refused_full",
            "claimed", "acked", "nacked", "dead_lettered", "requeued", "dlq_dropped",
            "stale", "warnings")}
        out["fill"], out["warning"] = s.fill, bool(s.warning)
        with self._lock:
            out["parked"] = self._parked
        out["inherited"] = getattr(self, "_inherited", 0)
        return out

    def dead_letters(self, limit: int = 100, after: int = 0) -> List[Dict[str, Any]]:
        """Up to ``limit`` dead-letter records with id > ``after``, oldest
        first: dicts with ``id``, ``item_id``, ``reason`` (``queue_full``,
        ``max_deliveries``, ``rejected``), ``error``, ``deliveries``,
        ``time`` (seconds on the lot's clock) and ``work`` (decoded; the raw
        bytes when it does not decode)."""
        limit = _uint("limit", limit, 1, 1 << 20)
        after = _uint("after", after, 0, (1 << 64) - 1)
        recs = ffi.new("bw_dlq_record_t[]", limit)
        n = ffi.new("size_t *")
        rc = lib.bw_queue_store_dlq_list(self._ptr, after, limit, recs, n)
        if rc != lib.BW_OK:
            raise BreakwaterError(f"parking lot '{self.name}': dlq_list failed ({rc})")
        out = []
        try:
            for i in range(n[0]):
                r = recs[i]
                raw = ffi.unpack(ffi.cast("char *", r.payload), r.len) if r.len else b""
                try:
                    work = self.decode(raw)
                except ValueError:
                    work = raw
                out.append({"id": r.id, "item_id": r.item_id,
                            "reason": ffi.string(r.reason).decode(),
                            "error": ffi.string(r.error).decode("utf-8", "replace"),
                            "deliveries": r.deliveries, "time": r.time_ns / 1e9,
                            "work": work})
        finally:
            lib.bw_dlq_records_clear(recs, n[0])
        return out

    def requeue(self, dlq_id: int) -> bool:
        """Puts a dead-letter record back as a new parked item (deliveries
        0): True; False when the lot is full (the record stays).
        KeyError when there is no such record."""
        dlq_id = _uint("dlq_id", dlq_id, 1, (1 << 64) - 1)
        rc = lib.bw_queue_store_dlq_requeue(self._ptr, dlq_id, ffi.NULL)
        if rc == lib.BW_E_NOTFOUND:
            raise KeyError(dlq_id)
        return rc == lib.BW_OK

    def discard(self, dlq_id: int) -> None:
        """Deletes a dead-letter record (KeyError when there is none)."""
        dlq_id = _uint("dlq_id", dlq_id, 1, (1 << 64) - 1)
        if lib.bw_queue_store_dlq_delete(self._ptr, dlq_id) == lib.BW_E_NOTFOUND:
            raise KeyError(dlq_id)

    def __repr__(self) -> str:
        where = f" in {self.path!r}" if self.path is not None else ""
        return f"<ParkingLot {self.name!r}{where} codec={self.codec} depth={len(self)}>"


class Parked:
    """What a call through a pipeline with ``park=`` returns when it failed
    and its work was parked (or dead-lettered by the lot's guard):
    ``accepted`` (False: the lot was full, the work is in its dead-letter
    queue), ``error`` (the exception the call would have raised, with
    ``breakwater_giveup``) and ``lot`` (the :class:`ParkingLot`)."""

    __slots__ = ("lot", "accepted", "error")

    def __init__(self, lot: ParkingLot, accepted: bool, error: BaseException) -> None:
        self.lot, self.accepted, self.error = lot, accepted, error

    def __repr__(self) -> str:
        where = "parked" if self.accepted else "dead-lettered (lot full)"
        return f"<Parked in {self.lot.name!r}: {where} after {self.error!r}>"


class _StepState(threading.local):
    """Per-thread state of a running step: the first BaseException a
    handler raised (re-raised after the step) and whether a breaker refused
    (the rest of the batch is handed back untouched)."""
    stop: Optional[BaseException] = None
    refused: bool = False
    loop: Any = None  # step_async's event loop (coroutine handlers run there)


class Reprocessor:
    """Replays a :class:`ParkingLot` through ``handler(work)`` once the
    dependency is back, over the C core's reprocessor (``bw_reprocessor_t``).

    ``Reprocessor(lot, send, breaker=breaker)`` — each :meth:`step` does
    nothing (it is *paused*) unless the breaker is closed; otherwise it
    claims up to ``batch`` items, oldest first, and replays each through the
    breaker (a failing replay counts against it like any call). With
    ``pipeline=pl`` each replay runs as ``pl.call(handler, work)`` instead
    (its retries, timeouts and breakers; never parked again) and the step
    pauses unless every breaker of the pipeline is closed; do not give a
    breaker that is also in the pipeline (it would count each replay twice).

    Outcomes: a handler that returns processed the item (acked, exactly
    once). An exception matching ``permanent`` (types or a predicate), or
    one the pipeline gave up on as permanent, means the item never will be
    good: it goes to the dead-letter queue at once (reason ``rejected``).
    Any other exception is transient: the item is retried after
    ``retry_delay`` seconds (on the lot's clock), and dead-lettered (reason
    ``max_deliveries``) after the lot's ``max_deliveries`` replays. A
    ``BaseException`` (KeyboardInterrupt) hands the rest of the batch back
    and is raised from :meth:`step`.

    ``batch`` (16) items per step, each leased for ``visibility`` seconds
    (30) — a replay that outlives its lease may be claimed again. Step from
    a loop, a timer or a scheduler; :meth:`drain` steps until the backlog
    is empty or a step makes no progress. Thread-safe: steps may run in
    several threads at once (the handler then runs concurrently)."""

    def __init__(self, lot: ParkingLot, handler: Callable[[Any], Any], *,
                 breaker: Optional[Breaker] = None, pipeline: Optional[Pipeline] = None,
                 permanent: Classifier = None, name: str = "reprocessor",
                 batch: int = 16, visibility: float = 30.0,
                 retry_delay: float = 1.0) -> None:
        from ._pipeline import Pipeline  # noqa: F811 (it imports this module)
        from ._policies import _BreakerBase
        if not isinstance(lot, ParkingLot):
            raise TypeError(f"lot must be a ParkingLot, not {type(lot).__name__}")
        if not callable(handler):
            raise TypeError(f"handler must be callable, not {type(handler).__name__}")
        if breaker is not None and not isinstance(breaker, Breaker):
            raise TypeError("breaker must be an in-process breakwater Breaker "
                            f"(the C reprocessor's gate), not {type(breaker).__name__}")
        if pipeline is not None and not isinstance(pipeline, Pipeline):
            raise TypeError(f"pipeline must be a breakwater Pipeline, not "
                            f"{type(pipeline).__name__}")
        if not isinstance(name, str) or "\x00" in name:
            raise TypeError("name must be a str without NUL characters")
        self.permanent = check_classifier("permanent", permanent)
        gates = ()
        if pipeline is not None:
            gates = tuple(m for m in pipeline.strategies if isinstance(m, _BreakerBase))
            if breaker is not None and any(g is breaker for g in gates):
                raise ValueError("breaker: it is in the pipeline too, so each replay "
                                 "would count twice; give only the pipeline")
        self.lot, self.handler, self.breaker, self.pipeline = lot, handler, breaker, pipeline
        self._gates = gates
        cfg = ffi.new("bw_reprocessor_config_t *")
        lib.bw_reprocessor_config_init(cfg)
        cname = ffi.new("char[]", name.encode())
        cfg.name = cname
        cfg.queue = lot._ptr
        cfg.breaker = breaker._ptr if breaker is not None else ffi.NULL
        cfg.fn = lib._bw_py_reprocess
        self._handle = ffi.new_handle(self)
        cfg.userdata = self._handle
        cfg.batch = _uint("batch", batch, 0)
        # The core checks them (visibility_ms >= 1, retry_delay_ms >= 0).
        cfg.visibility_ms = _seconds_to_ms("visibility", visibility)
        cfg.retry_delay_ms = _seconds_to_ms("retry_delay", retry_delay)
        err = ffi.new("bw_error_t *")
        ptr = lib.bw_reprocessor_new(cfg, err)
        if ptr == ffi.NULL:
            e = error_from(err, "reprocessor")
            # The Python names of the C fields (seconds, not milliseconds).
            e.field = {"visibility_ms": "visibility",  # type: ignore[attr-defined]
                       "retry_delay_ms": "retry_delay"}.get(e.field, e.field)
            raise e
        # It borrows the queue and the breaker: they outlive it.
        self._ptr = ffi.gc(ptr, lambda p, k=(lot, breaker): (lib.bw_reprocessor_free(p), k))
        self.name = name
        self._state = _StepState()
        self._lock = threading.Lock()
        self._paused = 0  # steps paused by a pipeline's breaker (not the C gate)

    # ---- the replay of one item (called by the C reprocessor) -------------
    def _replay(self, item: Any) -> int:
        st = self._state
        if st.stop is not None or st.refused:
            return lib.BW_E_OPEN  # hand it back: nacked, retried later
        data = ffi.unpack(ffi.cast("char *", item.payload), item.len) if item.len else b""
        try:
            work = self.lot.decode(data)
        except ValueError:
            return lib.BW_E_INVAL  # it will never decode: dead-lettered
        try:
            if st.loop is not None:  # step_async: a coroutine handler, on the loop
                if self.pipeline is not None:
                    coro = self.pipeline._call_async(self.handler, (work,), {}, park=False)
                else:
                    coro = self.handler(work)
                asyncio.run_coroutine_threadsafe(coro, st.loop).result()
            elif self.pipeline is not None:
                self.pipeline._call(self.handler, (work,), {}, park=False)
            else:
                self.handler(work)
        except Exception as exc:  # noqa: BLE001 - classified, never lost
            if matches(self.permanent, exc) or getattr(
                    exc, "breakwater_giveup", None) == "permanent":
                return lib.BW_E_INVAL
            if getattr(exc, "breakwater_giveup", None) == "breaker":
                st.refused = True  # the pipeline's breaker opened mid-step
            return lib.BW_E_IO
        except BaseException as exc:  # noqa: BLE001 - raised after the step
            st.stop = exc
            return lib.BW_E_OPEN  # not processed: handed back, the step ends
        return lib.BW_OK

    # ---- stepping -----------------------------------------------------------
    def step(self) -> int:
        """One pass over at most ``batch`` parked items; returns how many
        were processed (acked). 0 when paused (a breaker not closed) or
        nothing was ready. A coroutine function handler needs
        :meth:`step_async`."""
        if inspect.iscoroutinefunction(self.handler):
            raise TypeError(f"reprocessor '{self.name}': the handler is a coroutine "
                            "function: use await step_async()")
        return self._step(None)

    async def step_async(self) -> int:
        """:meth:`step` without blocking the event loop: the C step runs in
        the loop's default executor, and a coroutine function handler (or a
        pipeline's ``call_async`` of it) runs on this loop, one item at a
        time, in order. A plain handler runs in the executor's thread."""
        loop = asyncio.get_running_loop()
        coro = inspect.iscoroutinefunction(self.handler)
        return await loop.run_in_executor(None, self._step, loop if coro else None)

    async def drain_async(self, max_steps: int = 1000) -> int:
        """:meth:`drain` with :meth:`step_async`."""
        max_steps = _uint("max_steps", max_steps, 1)
        total = 0
        for _ in range(max_steps):
            if len(self.lot) == 0:
                break
            n = await self.step_async()
            total += n
            if n == 0:
                break
        return total

    def _step(self, loop: Any) -> int:
        if any(g.state != "closed" for g in self._gates):
            with self._lock:
                self._paused += 1
            return 0
        st = self._state
        st.stop, st.refused, st.loop = None, False, loop
        done = ffi.new("size_t *")
        try:
            rc = lib.bw_reprocessor_step(self._ptr, done)
        finally:
            stop, st.stop, st.refused, st.loop = st.stop, None, False, None
        if stop is not None:
            raise stop
        if rc == lib.BW_E_OPEN:
            return 0
        if rc == lib.BW_E_NOMEM:
            raise MemoryError(f"reprocessor '{self.name}'")
        if rc != lib.BW_OK:
            raise BreakwaterError(f"reprocessor '{self.name}': step failed "
                                  f"({ffi.string(lib.bw_strerror(rc)).decode()})")
        return done[0]

    def drain(self, max_steps: int = 1000) -> int:
        """Steps until nothing is waiting or a step processes nothing (paused,
        or every waiting item is delayed or failing); at most ``max_steps``
        steps. Returns how many were processed."""
        max_steps = _uint("max_steps", max_steps, 1)
        total = 0
        for _ in range(max_steps):
            if len(self.lot) == 0:
                break
            n = self.step()
            total += n
            if n == 0:
                break
        return total

    def stats(self) -> Dict[str, int]:
        """``backlog`` (items waiting), ``dlq_depth``, ``processed``,
        ``failed`` (replays that will be retried), ``rejected`` (permanent:
        dead-lettered at once) and ``paused`` (steps that did nothing
        because a breaker was not closed)."""
        s = ffi.new("bw_reprocessor_stats_t *")
        lib.bw_reprocessor_stats(self._ptr, s)
        out = {n: getattr(s, n) for n in ("backlog", "dlq_depth", "processed",
                                           "failed", "rejected", "paused")}
        with self._lock:
            out["paused"] += self._paused
        return out

    def __repr__(self) -> str:
        return f"<Reprocessor {self.name!r} of {self.lot.name!r}>"


def _seconds_to_ms(field: str, seconds: Any) -> int:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError(f"{field} must be a number of seconds, not {type(seconds).__name__}")
    if seconds != seconds or abs(seconds) > 1e12:
        raise ConfigError(f"{field} must be a finite number of seconds (got {seconds!r})",
                          field)
    return int(round(seconds * 1000))


@ffi.def_extern(error=lib.BW_E_IO)  # never 0 (BW_OK: an ack) on a failure
def _bw_py_reprocess(userdata: Any, item: Any) -> int:
    # Runs on the stepping thread with the GIL taken by cffi; every outcome
    # is classified in _replay, so nothing propagates into C.
    try:
        return ffi.from_handle(userdata)._replay(item)
    except BaseException:  # noqa: BLE001 - cannot reach C: retried later
        return lib.BW_E_IO
