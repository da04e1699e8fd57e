"""Retry with backoff and jitter, decided by the C core's iterator."""
from __future__ import annotations

import asyncio
import functools
import inspect
import time
from typing import (Any, AsyncIterator, Awaitable, Callable, Iterator,
                    Optional, TypeVar)

from ._clock import _MONOTONIC, Clock, resolve
from ._deadline import _stack as _deadline_stack
from ._deadline import deadline_ns
from ._errors import BudgetExhausted, DeadlineExceeded, Rejected
from ._ffi import configure, error_from, ffi, lib
from ._guard import Classifier, check_classifier, matches
from ._policies import Budget
from .events import Sink, sink_ptr

F = TypeVar("F", bound=Callable[..., Any])


def wait_ms(sleep: Optional[Callable[[float], Any]], clock: Clock, ms: int) -> None:
    """The wait between two attempts (Retry and Pipeline): the user's sleep
    when given, else a manual clock moved on, else time.sleep."""
    if sleep is not None:
        sleep(ms / 1000.0)
    elif clock.is_manual:
        clock.advance(ms / 1000.0)  # type: ignore[attr-defined]
    else:
        time.sleep(ms / 1000.0)


async def wait_ms_async(sleep: Optional[Callable[[float], Any]], clock: Clock,
                        ms: int) -> None:
    """wait_ms for a coroutine: the user's sleep is awaited when it returns
    an awaitable, a manual clock yields to the loop once, and otherwise
    asyncio.sleep, never blocking the loop."""
    if sleep is not None:
        res = sleep(ms / 1000.0)
        if inspect.isawaitable(res):
            await res
    elif clock.is_manual:
        clock.advance(ms / 1000.0)  # type: ignore[attr-defined]
        await asyncio.sleep(0)
    else:
        await asyncio.sleep(ms / 1000.0)


class Attempt:
    """One attempt of a retried block: ``with attempt:``. Its ``__exit__``
    reports the outcome to the iterator; an exception that will be retried
    is swallowed, one that gives up is raised (a refused retry raises
    :class:`BudgetExhausted` or :class:`DeadlineExceeded` from it)."""

    def __init__(self, run: "_Run", number: int) -> None:
        self._run = run
        self.number = number

    def __enter__(self) -> "Attempt":
        return self

    def __exit__(self, et: Any, exc: Optional[BaseException], tb: Any) -> bool:
        return self._run.report(exc)

    # an attempt body may be async too; the bookkeeping is the same
    async def __aenter__(self) -> "Attempt":
        return self

    async def __aexit__(self, et: Any, exc: Optional[BaseException], tb: Any) -> bool:
        return self._run.report(exc)


class _Run:
    """One logical call: the C iterator and the state between attempts."""

    def __init__(self, retry: "Retry", start_ns: Optional[int] = None) -> None:
        self.retry = retry
        self.it = ffi.new("bw_retry_t *")
        self.delay = ffi.new("int64_t *")
        self.done = False
        self.next_delay_ms: Optional[int] = None
        clock = retry.clock
        now = clock.now_ns() if start_ns is None else start_ns
        at = deadline_ns(clock)
        if at is not None and now >= at:
            raise DeadlineExceeded("deadline passed before the first attempt")
        lib.bw_retry_start(self.it, retry._policy, now)
        if at is not None:
            d = ffi.new("bw_deadline_t *")
            d.at_ns = at
            lib.bw_retry_set_deadline(self.it, d[0])

    def report(self, exc: Optional[BaseException]) -> bool:
        r = self.retry
        if exc is None:
            lib.bw_retry_next(self.it, lib.BW_VERDICT_OK, lib.BW_RETRY_AFTER_NONE,
                              r.clock.now_ns(), self.delay)
            self.done = True
            return False
        if not isinstance(exc, Exception):  # cancelled, interrupted
            self.done = True
            return False
        if isinstance(exc, Rejected):
            verdict = lib.BW_VERDICT_REJECTED
        elif matches(r.retry_on, exc):
            verdict = lib.BW_VERDICT_TRANSIENT
        else:
            verdict = lib.BW_VERDICT_PERMANENT
        hint = lib.BW_RETRY_AFTER_NONE
        ra = getattr(exc, "retry_after", None)
        if isinstance(ra, (int, float)) and not isinstance(ra, bool) and ra >= 0:
            hint = int(ra * 1000)
        rc = lib.bw_retry_next(self.it, verdict, hint, r.clock.now_ns(), self.delay)
        if rc == lib.BW_RETRY:
            self.next_delay_ms = self.delay[0]
            self.last_verdict = verdict
            return True  # swallowed: the loop waits and tries again
        self.done = True
        reason = lib.bw_retry_reason(self.it)
        why = ffi.string(lib.bw_giveup_name(reason)).decode()
        try:
            exc.breakwater_giveup = why  # type: ignore[attr-defined]
        except AttributeError:
            pass
        if reason == lib.BW_GIVEUP_BUDGET:
            raise BudgetExhausted(f"retry '{r.name}': the retry budget refused a retry") from exc
        if reason == lib.BW_GIVEUP_DEADLINE:
            raise DeadlineExceeded(f"retry '{r.name}': no time left for another attempt") from exc
        return False  # re-raise the attempt's own exception

    def before_next(self) -> None:
        """After the wait: the deadline may have passed while sleeping."""
        if lib.bw_retry_check_deadline(self.it, self.last_verdict,
                                       self.retry.clock.now_ns()) != lib.BW_RETRY:
            self.done = True
            raise DeadlineExceeded(f"retry '{self.retry.name}': the deadline passed while waiting")


class Retry:
    """Retries a call after transient failures, with backoff and jitter.

    ``Retry(max_attempts=3, base_ms="500ms", jitter="none",
    retry_on=(ConnectionError, TimeoutError))`` — keyword arguments are the
    C core's retry fields (``preset="tenacity"`` starts from a preset).
    ``retry_on`` (exception types or a predicate, tenacity's
    ``retry_if_exception_type``) says which exceptions are transient; every
    other exception is permanent and raised at once. Rejections
    (:class:`BreakerOpen`, :class:`BulkheadFull`, ...) are never retried.
    An exception with a ``retry_after`` attribute (seconds) sets the
    minimum delay. A retry is never scheduled past the current
    :class:`deadline`; a budget (``budget=``) can refuse it.

    Use: ``@retry`` (sync or async functions), ``retry.call(fn, ...)``,
    ``await retry.call_async(fn, ...)``, or tenacity's loop:
    ``for attempt in retry: with attempt: ...`` /
    ``async for attempt in retry: with attempt: ...``. Async waits use
    ``asyncio.sleep`` and never block the loop. On a :class:`ManualClock`
    the wait advances the clock instead of sleeping (tests)."""

    def __init__(self, name: Optional[str] = None, *, retry_on: Classifier = Exception,
                 budget: Optional[Budget] = None, clock: Optional[Clock] = None,
                 preset: Optional[str] = None,
                 sleep: Optional[Callable[[float], Any]] = None,
                 sink: Optional[Sink] = None, **fields: Any) -> None:
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        if budget is not None and not isinstance(budget, Budget):
            raise TypeError(f"budget must be a breakwater Budget, not {type(budget).__name__}")
        if sleep is not None and not callable(sleep):
            raise TypeError("sleep must be callable")
        self.retry_on = check_classifier("retry_on", retry_on)
        self.clock = resolve(clock)
        self.budget = budget
        self._sleep = sleep
        cfg = ffi.new("bw_retry_config_t *")
        lib.bw_retry_config_init(cfg)
        if preset is not None:
            if not isinstance(preset, str):
                raise TypeError("preset must be a str")
            if lib.bw_retry_config_preset(cfg, preset.encode()) != lib.BW_OK:
                raise ValueError(f"unknown retry preset {preset!r}")
        keep: list = []
        configure(lib.BW_CONFIG_RETRY, cfg, {"name": name, **fields}, keep)
        if budget is not None:
            cfg.budget = budget._ptr
        cfg.sink = sink_ptr(sink)
        err = ffi.new("bw_error_t *")
        ptr = lib.bw_retry_policy_new(cfg, err)
        if ptr == ffi.NULL:
            raise error_from(err, "retry")
        self._policy = ffi.gc(ptr, lambda p, b=budget, s=sink: (lib.bw_retry_policy_free(p), b, s))
        self.name = ffi.string(lib.bw_retry_policy_name(ptr)).decode()

    # ---- waiting ------------------------------------------------------------
    def _wait_sync(self, ms: int) -> None:
        wait_ms(self._sleep, self.clock, ms)

    async def _wait_async(self, ms: int) -> None:
        await wait_ms_async(self._sleep, self.clock, ms)

    # ---- tenacity's loop ----------------------------------------------------
    def __iter__(self) -> Iterator[Attempt]:
        run = _Run(self)
        n = 1
        while True:
            yield Attempt(run, n)
            if run.done or run.next_delay_ms is None:
                return
            ms, run.next_delay_ms = run.next_delay_ms, None
            self._wait_sync(ms)
            run.before_next()
            n += 1

    async def __aiter__(self) -> AsyncIterator[Attempt]:
        run = _Run(self)
        n = 1
        while True:
            yield Attempt(run, n)
            if run.done or run.next_delay_ms is None:
                return
            ms, run.next_delay_ms = run.next_delay_ms, None
            await self._wait_async(ms)
            run.before_next()
            n += 1

    # ---- calls and decorators ---------------------------------------------
    # The first attempt of a call runs before the C iterator exists when
    # that changes nothing: without a budget (whose request count begins
    # with the iterator) and without a current deadline (checked before the
    # first attempt), a successful call never touches the C core. The
    # iterator starts at the first failure, with the first attempt's start
    # time, so max_elapsed_ms counts from the same instant.
    def _lazy(self) -> bool:
        return self.budget is None and not _deadline_stack.get()

    def _start_ns(self) -> int:
        return time.monotonic_ns() if self.clock is _MONOTONIC else self.clock.now_ns()

    def _start_ns_fn(self) -> Callable[[], int]:
        # time.monotonic_ns reads CLOCK_MONOTONIC, the C default clock's source
        return time.monotonic_ns if self.clock is _MONOTONIC else self.clock.now_ns

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Calls fn(*args, **kwargs), retrying transient failures."""
        if self._lazy():
            t0 = self._start_ns()
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                run = _Run(self, t0)
                if not run.report(exc):
                    raise
            return self._again(run, fn, args, kwargs)
        for attempt in self:
            with attempt:
                return fn(*args, **kwargs)
        raise AssertionError("unreachable")  # pragma: no cover

    def _again(self, run: _Run, fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
        """The attempts after a first failure that will be retried."""
        while True:
            ms, run.next_delay_ms = run.next_delay_ms, None
            self._wait_sync(ms)  # type: ignore[arg-type]
            run.before_next()
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                if not run.report(exc):
                    raise

    async def _again_async(self, run: _Run, fn: Callable[..., Awaitable[Any]],
                           args: Any, kwargs: Any) -> Any:
        """The attempts after a first failure that will be retried (async)."""
        while True:
            ms, run.next_delay_ms = run.next_delay_ms, None
            await self._wait_async(ms)  # type: ignore[arg-type]
            run.before_next()
            try:
                return await fn(*args, **kwargs)
            except Exception as exc:
                if not run.report(exc):
                    raise

    async def call_async(self, fn: Callable[..., Awaitable[Any]], *args: Any,
                         **kwargs: Any) -> Any:
        """Awaits fn(*args, **kwargs), retrying transient failures."""
        if self._lazy():
            t0 = self._start_ns()
            try:
                return await fn(*args, **kwargs)
            except Exception as exc:
                run = _Run(self, t0)
                if not run.report(exc):
                    raise
            return await self._again_async(run, fn, args, kwargs)
        async for attempt in self:
            with attempt:
                return await fn(*args, **kwargs)
        raise AssertionError("unreachable")  # pragma: no cover

    def __call__(self, fn: F) -> F:
        if not callable(fn):
            raise TypeError(f"Retry decorates callables, not {type(fn).__name__}")
        # call / call_async's lazy first attempt, inlined (one frame less)
        stack_get, start_ns = _deadline_stack.get, self._start_ns_fn()
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def awrapper(*args: Any, **kwargs: Any) -> Any:
                if self.budget is not None or stack_get():
                    return await self.call_async(fn, *args, **kwargs)
                t0 = start_ns()
                try:
                    return await fn(*args, **kwargs)
                except Exception as exc:
                    run = _Run(self, t0)
                    if not run.report(exc):
                        raise
                return await self._again_async(run, fn, args, kwargs)
            return awrapper  # type: ignore[return-value]


        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if self.budget is not None or stack_get():
                return self.call(fn, *args, **kwargs)
            t0 = start_ns()
            try:
                return fn(*args, **kwargs)
            except Exception as exc:
                run = _Run(self, t0)
                if not run.report(exc):
                    raise
            return self._again(run, fn, args, kwargs)
        return wrapper  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"<Retry {self.name!r}>"


