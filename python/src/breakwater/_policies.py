"""Breakers, bulkheads, limiters, rate limiters and budgets over the C core."""
from __future__ import annotations

import asyncio
import functools
import inspect
import os
import threading
from typing import Any, Callable, Dict, Optional, TypeVar

from ._clock import Clock, resolve
from ._deadline import thread_deadline
from ._errors import (BreakerOpen, BudgetExhausted, BulkheadFull,
                      DeadlineExceeded, LimiterFull, RateLimited)
from ._ffi import NS_PER_S, c_text, configure, error_from, ffi, lib
from ._guard import (OUTCOMES, Classifier, Guard, Permit, check_classifier,
                     new_permit)
from .events import Sink, sink_ptr

F = TypeVar("F", bound=Callable[..., Any])

_BREAKER_STATS = ["generation", "consecutive_failures", "calls", "successes",
                  "failures", "ignored", "stale", "admitted", "rejected",
                  "opens", "half_opens", "closes", "retry_in_ms"]


def _check_name(name: Any) -> Optional[str]:
    if name is not None and not isinstance(name, str):
        raise TypeError(f"name must be a str, not {type(name).__name__}")
    return name


def _gc(ptr: Any, free: Any, *keep: Any) -> Any:
    """Frees ptr with `free` when collected; `keep` (clocks, budgets) stays
    alive until then, so a breaker is always freed before its clock."""
    return ffi.gc(ptr, lambda p: (free(p), keep))


def _new_policy(obj: Any, kind: str, ckind: int, name: Any, clock: Any,
                sink: Any, fields: Dict[str, Any]) -> Any:
    """Creates the C object of ``kind`` for the wrapper ``obj``: its config
    from ``name`` and ``fields`` (checked by the core's tables: errors name
    the field), on ``clock`` (kept as ``obj._clock``), emitting to
    ``sink``, freed when ``obj._ptr`` is collected (the clock and the sink
    outlive it: a free may emit a last summary); ``obj.name`` is the C
    object's. The C names follow ``bw_<kind>_config_init`` / ``_new`` /
    ``_free`` / ``_name``. Returns the config as given to ``_new``."""
    name = _check_name(name)
    obj._clock = resolve(clock)
    cfg = ffi.new(f"bw_{kind}_config_t *")
    getattr(lib, f"bw_{kind}_config_init")(cfg)
    keep: list = []
    configure(ckind, cfg, {"name": name, **fields}, keep)
    cfg.clock = obj._clock._ptr
    cfg.sink = sink_ptr(sink)
    err = ffi.new("bw_error_t *")
    ptr = getattr(lib, f"bw_{kind}_new")(cfg, err)  # validates; copies the name
    if ptr == ffi.NULL:
        raise error_from(err, kind)
    obj._ptr = _gc(ptr, getattr(lib, f"bw_{kind}_free"), obj._clock, sink)
    obj.name = ffi.string(getattr(lib, f"bw_{kind}_name")(ptr)).decode()
    return cfg


try:
    from . import _hot  # the C hot path of breaker decorators (csrc/hot.c)
    if _hot.PERMIT_SIZE != ffi.sizeof("bw_permit_t"):  # pragma: no cover
        _hot = None
except ImportError:  # pragma: no cover - built without it: the cffi path
    _hot = None


def _address(fn_name: str) -> int:
    return int(ffi.cast("uintptr_t", ffi.addressof(lib, fn_name)))


class _BreakerBase(Guard):
    _hot_ok = False  # the C hot path applies (in-process breakers only)
    _acq: Any
    _rel: Any
    _state: Any
    _retry_in: Any
    _poll: Any
    _stats: Any
    _isolate: Any
    _reset: Any
    _ptr: Any

    def acquire(self) -> Permit:
        """Admits a call now or raises :class:`BreakerOpen` (never waits)."""
        p = new_permit()
        rc = self._acq(self._ptr, p)
        if rc == lib.BW_OK:
            return Permit(self, p)
        if rc == lib.BW_E_OPEN:
            raise BreakerOpen(self.name, self.retry_in)
        raise RuntimeError(f"breaker acquire failed: {ffi.string(lib.bw_strerror(rc)).decode()}")

    def _release(self, permit: Permit, outcome: int) -> None:
        if outcome == lib.BW_TIMED_OUT:
            outcome = lib.BW_FAILURE
        self._rel(self._ptr, permit._c, outcome)

    def __call__(self, fn: F) -> F:
        """Decorates a function or a coroutine function: each call is
        admitted (or refused with :class:`BreakerOpen`) and its outcome
        reported, as ``with breaker:`` would.

        The hot path of a protected call: two C calls and no allocation
        (C permits are reused from a free list private to the decorated
        function; a permit is owned by one call from pop to append)."""
        if not callable(fn):
            raise TypeError(f"{type(self).__name__} decorates callables, not {type(fn).__name__}")
        hot = self._hot_path(fn)
        if hot is not None:
            return hot
        acq, rel, ptr, new = self._acq, self._rel, self._ptr, ffi.new
        ok, success, failure = lib.BW_OK, lib.BW_SUCCESS, lib.BW_FAILURE
        outcome_name, codes = self._outcome_name, OUTCOMES
        pool: list = []

        def outcome(exc: BaseException) -> int:
            try:
                code = codes[outcome_name(exc)]
            except Exception:  # a broken ignore predicate: a failure, as in C
                return failure
            return failure if code == lib.BW_TIMED_OUT else code

        # What the sync and the async wrapper share: a permit from the pool
        # (or a new one) admitted, or BreakerOpen; an outcome reported and
        # the permit back in the pool.
        def admit() -> Any:
            try:
                p = pool.pop()
            except IndexError:
                p = new("bw_permit_t *")
            if acq(ptr, p) != ok:
                pool.append(p)
                raise self._open()
            return p

        def settle(p: Any, code: int) -> None:
            rel(ptr, p, code)
            pool.append(p)

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def awrapper(*args: Any, **kwargs: Any) -> Any:
                p = admit()
                try:
                    result = await fn(*args, **kwargs)
                except BaseException as exc:
                    settle(p, outcome(exc))
                    raise
                settle(p, success)
                return result
            return awrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            p = admit()
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                settle(p, outcome(exc))
                raise
            settle(p, success)
            return result
        return wrapper  # type: ignore[return-value]

    def _open(self) -> BreakerOpen:
        return BreakerOpen(self.name, self.retry_in)

    def _outcome_code(self, exc: BaseException) -> int:
        code = OUTCOMES[self._outcome_name(exc)]
        return lib.BW_FAILURE if code == lib.BW_TIMED_OUT else code

    def _hot_path(self, fn: Any) -> Any:
        """The C hot path (breakwater._hot) for a plain function on an
        in-process breaker without a sink: acquire and release are called
        with the GIL held, which is safe only when nothing they do can wait
        for Python — a sink's callback needs the GIL and may run while the
        breaker holds a lock (and a shared breaker may wait on a lease)."""
        if (_hot is None or not self._hot_ok or getattr(self, "_sink", None) is not None
                or inspect.iscoroutinefunction(fn)):
            return None
        g = _hot.Guarded(fn, self._outcome_code, self._open, self,
                         _address("bw_breaker_acquire"), _address("bw_breaker_release"),
                         int(ffi.cast("uintptr_t", self._ptr)))
        return functools.update_wrapper(g, fn)

    @property
    def state(self) -> str:
        """"closed", "open", "half_open", "isolated" or "disabled" (after
        applying a due OPEN -> HALF_OPEN transition)."""
        self._poll(self._ptr)
        return ffi.string(lib.bw_state_name(self._state(self._ptr))).decode()

    @property
    def retry_in(self) -> Optional[float]:
        """Seconds until a call may be admitted (0.0 when it may be now);
        None when isolated."""
        ms = self._retry_in(self._ptr)
        return None if ms < 0 else ms / 1000.0

    def isolate(self) -> None:
        """Forces the breaker open until :meth:`reset`."""
        self._isolate(self._ptr)

    def reset(self) -> None:
        """Closes the breaker, clearing its windows and counts (totals kept)."""
        self._reset(self._ptr)

    def stats(self) -> Dict[str, Any]:
        """A snapshot of the counters, with "state" by name."""
        s = ffi.new("bw_breaker_stats_t *")
        self._stats(self._ptr, s)
        out: Dict[str, Any] = {n: getattr(s, n) for n in _BREAKER_STATS}
        out["state"] = ffi.string(lib.bw_state_name(s.state)).decode()
        return out


class Breaker(_BreakerBase):
    """A circuit breaker (in this process).

    ``Breaker("payment_api", failure_threshold=3, success_threshold=3,
    break_ms="60s")`` — keyword arguments are the C core's field names
    (docs/configuration.md), values as text or numbers (durations: "30s",
    "250ms", or a number of ms). ``ignore`` (exception types or a predicate)
    marks exceptions that count neither way (a 4xx); other exceptions are
    failures. Use it as ``with breaker:``, ``async with breaker:``,
    ``@breaker`` or through :meth:`acquire` and a :class:`Permit`."""

    _hot_ok = True

    def __init__(self, name: Optional[str] = None, *, clock: Optional[Clock] = None,
                 ignore: Classifier = None, sink: Optional[Sink] = None,
                 **fields: Any) -> None:
        self._ignore = check_classifier("ignore", ignore)
        _new_policy(self, "breaker", lib.BW_CONFIG_BREAKER, name, clock, sink, fields)
        self._sink = sink
        self._bind()

    def _bind(self) -> None:
        """Name and C entry points of the breaker at self._ptr."""
        self.name = ffi.string(lib.bw_breaker_name(self._ptr)).decode()
        self._iface = lib.bw_breaker_iface(self._ptr)
        self._acq, self._rel = lib.bw_breaker_acquire, lib.bw_breaker_release
        self._state, self._retry_in = lib.bw_breaker_state, lib.bw_breaker_retry_in_ms
        self._poll, self._stats = lib.bw_breaker_poll, lib.bw_breaker_stats
        self._isolate, self._reset = lib.bw_breaker_isolate, lib.bw_breaker_reset


def _default_segment() -> str:
    return f"/breakwater-py-{os.getuid()}"


class SharedBreaker(_BreakerBase):
    """A circuit breaker in POSIX shared memory (breakwater-shm): every
    process that opens the same ``segment`` and ``name`` shares one breaker
    — failures count across pre-fork workers, and a trip is seen by all.

    Create it before forking (children inherit it) or in each worker with
    the same settings (different settings are refused, naming the field).
    The clock is the system-wide monotonic clock. Supported: the
    consecutive and time-window trip rules."""

    def __init__(self, name: str, *, segment: Optional[str] = None,
                 size: Optional[int] = None, ignore: Classifier = None,
                 sink: Optional[Sink] = None, **fields: Any) -> None:
        if not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        segment = _default_segment() if segment is None else segment
        c_text("segment", segment)
        self._ignore = check_classifier("ignore", ignore)
        c_sink = sink_ptr(sink)  # checked before the segment is opened
        self.segment = segment
        err = ffi.new("bw_error_t *")
        sc = ffi.new("bw_shm_config_t *")
        lib.bw_shm_config_init(sc)
        seg_b = segment.encode()
        sc.name = ffi.new("char[]", seg_b)
        keep_seg = sc.name
        if size is not None:
            if isinstance(size, bool) or not isinstance(size, int):
                raise TypeError("size must be an int (bytes)")
            if size < 0:
                raise ValueError("size must be >= 0")
            sc.size = size
        shm = lib.bw_shm_open(sc, err)
        del keep_seg
        if shm == ffi.NULL:
            raise error_from(err, "shared memory segment")
        cfg = ffi.new("bw_breaker_config_t *")
        lib.bw_breaker_config_init(cfg)
        keep: list = []
        try:
            configure(lib.BW_CONFIG_BREAKER, cfg, {"name": name, **fields}, keep)
        except BaseException:
            lib.bw_shm_close(shm)
            raise
        cfg.sink = c_sink
        ptr = lib.bw_shm_breaker_new(shm, cfg, err)
        if ptr == ffi.NULL:
            lib.bw_shm_close(shm)
            raise error_from(err, "shared breaker")

        def free(p: Any, shm: Any = shm, sink: Any = sink) -> None:
            lib.bw_shm_breaker_free(p)
            lib.bw_shm_close(shm)
        self._ptr = ffi.gc(ptr, free)
        self._clock = resolve(None)  # the system-wide monotonic clock
        self.name = ffi.string(lib.bw_shm_breaker_name(ptr)).decode()
        self._iface = lib.bw_shm_breaker_iface(ptr)
        self._acq, self._rel = lib.bw_shm_breaker_acquire, lib.bw_shm_breaker_release
        self._state, self._retry_in = lib.bw_shm_breaker_state, lib.bw_shm_breaker_retry_in_ms
        self._poll, self._stats = lib.bw_shm_breaker_poll, lib.bw_shm_breaker_stats
        self._isolate, self._reset = lib.bw_shm_breaker_isolate, lib.bw_shm_breaker_reset

    @staticmethod
    def unlink(segment: Optional[str] = None) -> bool:
        """Removes a segment's name (processes that have it keep it).
        True if it existed."""
        segment = _default_segment() if segment is None else segment
        if not isinstance(segment, str):
            raise TypeError("segment must be a str")
        err = ffi.new("bw_error_t *")
        rc = lib.bw_shm_unlink(segment.encode(), err)
        if rc == lib.BW_E_NOTFOUND:
            return False
        if rc != lib.BW_OK:
            raise error_from(err, "unlink")
        return True


class _WaitState:
    """A queued async bulkhead request; the C waiter lives here."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.fut: asyncio.Future = loop.create_future()
        self.waiter = ffi.new("bw_bulkhead_waiter_t *")
        self.permit = new_permit()
        self.granted = threading.Event()
        self.handle = ffi.new_handle(self)


def _resolve_future(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(None)


@ffi.def_extern()
def _bw_py_bulkhead_grant(w: Any, p: Any, userdata: Any) -> None:
    state: _WaitState = ffi.from_handle(userdata)
    ffi.memmove(state.permit, p, ffi.sizeof("bw_permit_t"))
    state.granted.set()
    try:
        state.loop.call_soon_threadsafe(_resolve_future, state.fut)
    except RuntimeError:  # the loop is closed; the canceller releases
        pass


class Bulkhead(Guard):
    """At most ``max_concurrent`` calls at once.

    ``with bulkhead:`` takes a slot now or raises :class:`BulkheadFull`
    (never blocks). ``async with bulkhead:`` waits for a slot without
    blocking the event loop, first come first served, up to
    ``max_wait_ms`` (narrowed by the current :class:`deadline`), then raises
    :class:`BulkheadFull`."""

    def __init__(self, name: Optional[str] = None, *, clock: Optional[Clock] = None,
                 sink: Optional[Sink] = None, **fields: Any) -> None:
        cfg = _new_policy(self, "bulkhead", lib.BW_CONFIG_BULKHEAD, name, clock, sink, fields)
        self.max_wait_ms: int = cfg.max_wait_ms

    def _refused(self, rc: int) -> Exception:
        if rc == lib.BW_E_DEADLINE:
            return DeadlineExceeded(f"bulkhead '{self.name}': the deadline has passed")
        return BulkheadFull(f"bulkhead '{self.name}' is full")

    def acquire(self) -> Permit:
        """Takes a slot now or raises BulkheadFull (DeadlineExceeded when the
        current deadline has passed). Never waits."""
        p = new_permit()
        with thread_deadline(self._clock):
            rc = lib.bw_bulkhead_try_acquire(self._ptr, p)
        if rc != lib.BW_OK:
            raise self._refused(rc)
        return Permit(self, p)

    async def acquire_async(self) -> Permit:
        """Takes a slot, waiting for one (asyncio) up to max_wait_ms."""
        state = _WaitState(asyncio.get_running_loop())
        wait_ms = ffi.new("int64_t *")
        with thread_deadline(self._clock):
            rc = lib.bw_bulkhead_acquire_timed(
                self._ptr, state.permit, state.waiter,
                lib._bw_py_bulkhead_grant, state.handle, wait_ms)
        if rc == lib.BW_OK:
            return Permit(self, state.permit)
        if rc != lib.BW_BULKHEAD_QUEUED:
            raise self._refused(rc)
        try:
            await asyncio.wait_for(asyncio.shield(state.fut), wait_ms[0] / 1000.0)
        except BaseException as exc:
            timed_out = isinstance(exc, asyncio.TimeoutError)
            cancel = lib.bw_bulkhead_cancel_timeout if timed_out else lib.bw_bulkhead_cancel
            if cancel(self._ptr, state.waiter) == lib.BW_E_NOTFOUND:
                # granted meanwhile: the slot is ours; give it back
                state.granted.wait()
                lib.bw_bulkhead_release(self._ptr, state.permit)
            if timed_out:
                raise BulkheadFull(
                    f"bulkhead '{self.name}': no slot within {wait_ms[0]} ms") from None
            raise
        return Permit(self, state.permit)

    def _release(self, permit: Permit, outcome: int) -> None:
        lib.bw_bulkhead_release(self._ptr, permit._c)

    def stats(self) -> Dict[str, Any]:
        s = ffi.new("bw_bulkhead_stats_t *")
        lib.bw_bulkhead_stats(self._ptr, s)
        return {n: getattr(s, n) for n in (
            "max_concurrent", "available", "in_use", "waiting", "admitted",
            "admitted_after_wait", "rejected_full", "wait_timeouts",
            "rejected_deadline", "cancelled", "released", "timeouts")}


class Limiter(Guard):
    """An adaptive concurrency limiter (AIMD, gradient2 or vegas): a
    bulkhead whose size follows the dependency. Never waits: a call above
    the limit raises :class:`LimiterFull` (shed it). Exceptions count as
    drops (TimeoutError as timed out) unless ``ignore`` matches.

    Keyword arguments are the core's ``limiter`` fields
    (docs/limiter.md), among them the startup options
    ``startup_headroom``, ``startup_max_step`` (limited slow start: each
    startup step at most that many calls above the proven level) and
    ``stuck_ratio``, and ``stuck_timeout`` (needs ``stuck_ratio``): in a
    :class:`Pipeline` with the limiter after the :class:`Retry`, an
    attempt admitted above the proven level gets the stuck age
    (``stuck_ratio`` x the slowest good answer lately) as its time limit
    when that is shorter than its own (a :class:`Timeout`); a coroutine
    attempt is cancelled then, a plain function sees it as its
    :class:`deadline`. Its slot stays counted as long as the attempt could
    have run."""

    def __init__(self, name: Optional[str] = None, *, clock: Optional[Clock] = None,
                 ignore: Classifier = None, sink: Optional[Sink] = None,
                 **fields: Any) -> None:
        self._ignore = check_classifier("ignore", ignore)
        _new_policy(self, "limiter", lib.BW_CONFIG_LIMITER, name, clock, sink, fields)

    def acquire(self) -> Permit:
        p = new_permit()
        rc = lib.bw_limiter_try_acquire(self._ptr, p)
        if rc != lib.BW_OK:
            raise LimiterFull(f"limiter '{self.name}' is at its limit ({self.limit})")
        return Permit(self, p)

    def _release(self, permit: Permit, outcome: int) -> None:
        lib.bw_limiter_release(self._ptr, permit._c, outcome)

    @property
    def limit(self) -> int:
        """The whole-number limit in force."""
        return lib.bw_limiter_limit(self._ptr)

    def stats(self) -> Dict[str, Any]:
        """A snapshot (``bw_limiter_stats_t``): the limit, the estimate and
        the calls in flight (held slots included), the totals, and
        ``timed_out`` (timed-out releases), ``held`` (slots held now for
        timed-out calls), ``proven`` (the highest in-flight level a success
        proved), ``stuck`` (cuts by ``stuck_ratio``), ``startup`` (no
        congestion signal yet), ``stuck_timeouts`` (attempts cut by
        ``stuck_timeout`` that timed out) and ``tolerated_drops`` (drops
        within ``drop_tolerance``, also in ``drops``)."""
        s = ffi.new("bw_limiter_stats_t *")
        lib.bw_limiter_stats(self._ptr, s)
        return {n: getattr(s, n) for n in (
            "limit", "estimate", "in_flight", "admitted", "rejected",
            "successes", "drops", "ignored", "timed_out", "held", "proven",
            "stuck", "startup", "stuck_timeouts", "tolerated_drops")}


class RateLimiter(Guard):
    """A GCRA rate limiter: ``rate_per_sec`` calls a second, bursts of
    ``burst``. ``with limiter:`` admits now or raises :class:`RateLimited`
    (with ``retry_in``); ``async with limiter:`` paces: it reserves the next
    slot and awaits it (asyncio.sleep; on a ManualClock it advances the
    clock instead)."""

    def __init__(self, name: Optional[str] = None, *, clock: Optional[Clock] = None,
                 sink: Optional[Sink] = None, **fields: Any) -> None:
        _new_policy(self, "ratelimit", lib.BW_CONFIG_RATELIMIT, name, clock, sink, fields)

    def acquire(self) -> Permit:
        wait = ffi.new("int64_t *")
        if lib.bw_ratelimit_try_acquire(self._ptr, wait) != lib.BW_OK:
            raise RateLimited(self.name, wait[0] / 1000.0)
        return Permit(self, ffi.NULL)

    async def acquire_async(self) -> Permit:
        ns = lib.bw_ratelimit_reserve_ns(self._ptr)
        if ns > 0:
            if self._clock.is_manual:
                self._clock.advance(ns / NS_PER_S)  # type: ignore[attr-defined]
                await asyncio.sleep(0)
            else:
                await asyncio.sleep(ns / NS_PER_S)
        return Permit(self, ffi.NULL)

    def _release(self, permit: Permit, outcome: int) -> None:
        return None

    def stats(self) -> Dict[str, Any]:
        s = ffi.new("bw_ratelimit_stats_t *")
        lib.bw_ratelimit_stats(self._ptr, s)
        return {n: getattr(s, n) for n in ("admitted", "limited", "reserved", "reserved_waiting")}


class Budget(Guard):
    """A retry budget shared by every call to one dependency (token bucket
    or ratio), so retries cannot multiply load. Give it to
    :class:`Retry` (``Retry(budget=b)``): a refused retry raises
    :class:`BudgetExhausted`. Used on its own, ``with budget:`` (or
    ``@budget``) reports one request and its success or failure, and
    :meth:`spend_retry` asks for a retry."""

    def __init__(self, name: Optional[str] = None, *, clock: Optional[Clock] = None,
                 sink: Optional[Sink] = None, **fields: Any) -> None:
        _new_policy(self, "budget", lib.BW_CONFIG_BUDGET, name, clock, sink, fields)

    def acquire(self) -> Permit:
        lib.bw_budget_on_request(self._ptr)
        return Permit(self, ffi.NULL)

    def _release(self, permit: Permit, outcome: int) -> None:
        if outcome == lib.BW_SUCCESS:
            lib.bw_budget_on_success(self._ptr)
        elif outcome != lib.BW_IGNORED:
            lib.bw_budget_on_failure(self._ptr)

    def try_retry(self) -> bool:
        """Asks for one retry: True (counted) or False (denied)."""
        return lib.bw_budget_try_retry_ex(self._ptr) == lib.BW_OK

    def spend_retry(self) -> None:
        """Asks for one retry; raises BudgetExhausted when denied."""
        if not self.try_retry():
            raise BudgetExhausted(f"retry budget '{self.name}' is exhausted")

    def stats(self) -> Dict[str, Any]:
        s = ffi.new("bw_budget_stats_t *")
        lib.bw_budget_stats(self._ptr, s)
        return {n: getattr(s, n) for n in (
            "requests", "successes", "failures", "allowed", "denied", "tokens",
            "window_requests", "window_retries")}
