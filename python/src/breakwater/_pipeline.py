"""Pipelines: policies stacked outermost first, driven by the C core's
sans-I/O state machine (bw_pipeline_t, docs/pipeline.md)."""
from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
from typing import (Any, AsyncIterator, Awaitable, Callable, Dict, Iterator,
                    List, Optional, Sequence, Tuple, TypeVar)

from ._clock import Clock, resolve
from ._deadline import _check_seconds, deadline, deadline_ns
from ._errors import (BreakerOpen, BreakwaterError, BudgetExhausted,
                      BulkheadFull, DeadlineExceeded, LimiterFull,
                      RateLimited, Rejected, ThrottledError)
from ._ffi import NS_PER_MS, error_from, ffi, lib
from ._guard import Classifier, check_classifier, matches
from ._policies import (Budget, Bulkhead, Limiter, RateLimiter,
                        SharedBreaker, _BreakerBase)
from ._parking import Parked, ParkingLot
from ._retry import Retry, wait_ms, wait_ms_async
from ._throttle import Throttle
from .events import Sink, sink_ptr

F = TypeVar("F", bound=Callable[..., Any])

_ATTEMPT, _WAIT, _DONE = lib.BW_STEP_ATTEMPT, lib.BW_STEP_WAIT, lib.BW_STEP_DONE
_OK, _TRANSIENT = lib.BW_VERDICT_OK, lib.BW_VERDICT_TRANSIENT
_PERMANENT, _REJECTED = lib.BW_VERDICT_PERMANENT, lib.BW_VERDICT_REJECTED
_NO_HINT = lib.BW_RETRY_AFTER_NONE
_REFUSALS = (lib.BW_FAILURE_BREAKER, lib.BW_FAILURE_LIMIT, lib.BW_FAILURE_RATELIMIT)


class Timeout:
    """A pipeline strategy: each attempt's time limit, in seconds (after the
    :class:`Retry` when there is one). Coroutine attempts are cancelled when
    it runs out (``asyncio.wait_for``; on a :class:`ManualClock`, when the
    clock is advanced past it) and reported as timed out; a plain
    function cannot be interrupted, so it sees the limit as its current
    :class:`deadline` (``breakwater.remaining()``, ``to_header()``) and an
    attempt that raises ``TimeoutError`` counts as timed out. The limit an
    attempt gets is the C pipeline's (``attempt_timeout_ms``): this one,
    narrowed by the deadline and by a :class:`Limiter` with
    ``stuck_timeout`` inside the retry."""

    def __init__(self, seconds: float) -> None:
        self.seconds = _check_seconds("seconds", seconds)

    def __repr__(self) -> str:
        return f"Timeout({self.seconds!r})"


def _ms(seconds: float) -> int:
    return int(round(seconds * 1000))


def _set_done(fut: asyncio.Future) -> None:
    if not fut.done():
        fut.set_result(None)


async def _within(coro: Awaitable[Any], clock: Clock, ms: int) -> Any:
    """Awaits an attempt within its time limit of ``ms`` on ``clock``, or
    cancels it and raises TimeoutError. On the monotonic clock that is
    ``asyncio.wait_for``. A :class:`ManualClock` has no timer: the attempt
    runs as a task and is cancelled when the clock is advanced to its end
    (by the test, or by another call's wait), so a time limit is as exact
    as the rest of a test on a manual clock, and never real time."""
    if not clock.is_manual:
        return await asyncio.wait_for(coro, ms / 1000.0)
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(coro)
    expired = loop.create_future()
    remove = clock._alarm(clock.now_ns() + ms * NS_PER_MS,  # type: ignore[attr-defined]
                          lambda: loop.call_soon_threadsafe(_set_done, expired))
    try:
        await asyncio.wait((task, expired), return_when=asyncio.FIRST_COMPLETED)
    except BaseException:  # this call was cancelled: so is its attempt
        task.cancel()
        raise
    finally:
        remove()
        expired.cancel()
    if task.done():  # an answer in time wins, as with wait_for
        return task.result()
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    raise TimeoutError(f"the attempt ran out of its {ms} ms")


class _Run:
    """One logical call through a pipeline: the C call and the last error."""

    __slots__ = ("pl", "c", "last", "step", "work")

    def __init__(self, pl: "Pipeline", work: Optional[bytes] = None) -> None:
        self.pl = pl
        self.c = ffi.new("bw_pipeline_call_t *")
        self.last: Optional[BaseException] = None
        # The work to park if the call fails (the C fallback bw_park_fallback
        # reads it from the call's `user`); it lives as long as the call.
        self.work = None
        if work is not None:
            w = ffi.new("bw_park_work_t *")
            buf = ffi.new("char[]", work)
            w.data, w.len = buf, len(work)
            self.work = (w, buf)
            self.c.user = w
        at = deadline_ns(pl._clock) if pl._deadline_aware else None
        outer = pl._no_deadline if at is None else _deadline_of(at)
        self.step = lib.bw_pipeline_begin_at(pl._ptr, self.c, outer, pl._now(pl._cclock))

    def ok(self) -> None:
        self.last = None
        self.step = lib.bw_pipeline_report(self.c, _OK, _NO_HINT,
                                           self.pl._now(self.pl._cclock))

    def failed(self, exc: BaseException) -> None:
        """Reports an attempt's exception (an Exception: the others cancel)."""
        pl = self.pl
        self.last = exc
        now = pl._now(pl._cclock)
        verdict = pl._verdict(exc)
        if verdict == _TRANSIENT and isinstance(exc, TimeoutError):
            self.step = lib.bw_pipeline_report_timeout(self.c, now)
            return
        if verdict == _PERMANENT:
            self.c.user = ffi.NULL  # a permanent failure (a 4xx) is never parked
        hint = _NO_HINT
        ra = getattr(exc, "retry_after", None)
        if isinstance(ra, (int, float)) and not isinstance(ra, bool) and ra >= 0:
            hint = int(ra * 1000)
        self.step = lib.bw_pipeline_report(self.c, verdict, hint, now)

    def resume(self) -> None:
        self.step = lib.bw_pipeline_resume(self.c, self.pl._now(self.pl._cclock))

    def cancel(self) -> None:
        lib.bw_pipeline_cancel(self.c)

    @contextlib.contextmanager
    def cancelled_if_interrupted(self) -> Iterator[None]:
        """Around a wait between attempts (either call loop): whatever it
        raises (a KeyboardInterrupt, a cancelled task) cancels the call
        before it propagates."""
        try:
            yield
        except BaseException:
            self.cancel()
            raise

    def bad_step(self) -> RuntimeError:
        """A step this driver does not know (a driver bug, never silently a
        success): the call is cancelled and the error to raise returned."""
        self.cancel()
        return RuntimeError(f"pipeline '{self.pl.name}': step {self.step}")

    def raise_failure(self) -> None:
        """The iterators' end: a call that ended outside an attempt's exit
        (refused at the start, or at a resume: a deadline or a breaker
        between attempts) raises its failure here."""
        if self.c.failure != lib.BW_FAILURE_NONE:
            raise self.failure()

    def attempt_deadline(self) -> Optional[float]:
        """The attempt's time limit in seconds, or None."""
        ms = self.c.attempt_timeout_ms
        return None if ms < 0 else ms / 1000.0

    def failure(self) -> BaseException:
        """The exception for a call that ended with a failure."""
        pl, c, last = self.pl, self.c, self.last
        f = c.failure
        why = ffi.string(lib.bw_failure_name(f)).decode()
        if f in _REFUSALS:
            exc: BaseException = pl._refusal(f, c.index)
        elif f == lib.BW_FAILURE_BUDGET:
            exc = BudgetExhausted(f"pipeline '{pl.name}': the retry budget refused a retry")
        elif f == lib.BW_FAILURE_DEADLINE:
            exc = DeadlineExceeded(f"pipeline '{pl.name}': the deadline passed")
        elif last is not None:
            exc = last  # exhausted, permanent, retry_after, elapsed, ...
        else:  # pragma: no cover - every other failure follows an attempt
            exc = BreakwaterError(f"pipeline '{pl.name}' gave up ({why})")
        if exc is not last and last is not None:
            exc.__cause__ = last
        try:
            exc.breakwater_giveup = why  # type: ignore[attr-defined]
        except AttributeError:
            pass
        return exc


def _deadline_of(at_ns: int) -> Any:
    d = ffi.new("bw_deadline_t *")
    d.at_ns = at_ns
    return d[0]


class PipelineAttempt:
    """One attempt of ``for attempt in pipeline:``; use it as ``with
    attempt:`` (or ``async with``). Its exit reports the outcome: an
    exception that will be retried is swallowed, a final one is raised."""

    __slots__ = ("_run", "number", "_reported")

    def __init__(self, run: _Run) -> None:
        self._run = run
        self.number: int = run.c.attempt
        self._reported = False

    @property
    def timeout(self) -> Optional[float]:
        """This attempt's time limit in seconds, or None."""
        return self._run.attempt_deadline()

    def _require_used(self) -> None:
        """The iterators, after yielding this attempt: one not used as
        ``with attempt:`` reported nothing, and the call cannot go on."""
        if not self._reported:
            raise RuntimeError("each pipeline attempt must be used as `with attempt:`")

    def __enter__(self) -> "PipelineAttempt":
        return self

    def __exit__(self, et: Any, exc: Optional[BaseException], tb: Any) -> bool:
        run = self._run
        self._reported = True
        if exc is None:
            run.ok()
            return False
        if not isinstance(exc, Exception):  # cancelled or interrupted
            run.cancel()
            return False
        run.failed(exc)
        if run.step != _DONE:
            return True  # retried: the loop waits and tries again
        final = run.failure()
        if final is exc:
            return False
        raise final

    async def __aenter__(self) -> "PipelineAttempt":
        return self

    async def __aexit__(self, et: Any, exc: Optional[BaseException], tb: Any) -> bool:
        return self.__exit__(et, exc, tb)


class Pipeline:
    """Policies stacked in the order given, outermost first (Polly's
    builder), run by the C core's pipeline: one state machine decides every
    admission, wait, attempt and retry.

    ``Pipeline([limiter, breaker, retry, Timeout(2)])`` — the strategies are
    the policy objects themselves: :class:`Breaker`, :class:`SharedBreaker`,
    :class:`Bulkhead`, :class:`Limiter`, :class:`RateLimiter`,
    :class:`Throttle` (never waits; put it before a limiter or bulkhead),
    :class:`Retry` (at most one; its budget included), a
    :class:`deadline` (the whole call's time; before the retry) and
    :class:`Timeout` (each attempt's; after the retry). A bulkhead waits up
    to its ``max_wait_ms`` for a slot; limiters and rate limiters refuse at
    once unless given as ``(policy, max_wait_seconds)``. Strategies before
    the retry are entered once per call, those after it once per attempt.

    Outcomes: no exception is a success. An exception matching ``ignore``
    (the pipeline's or a member breaker's / limiter's) is *permanent*: not
    retried, and neither a success nor a failure for the breakers (a 4xx).
    With a :class:`Retry`, exceptions matching its ``retry_on`` are
    *transient* (retried, failures for the breakers) and the others
    permanent; without one every other exception is transient (a failure).
    ``TimeoutError`` from a transient attempt counts as timed out.

    Failures raise: :class:`BreakerOpen`, :class:`BulkheadFull` /
    :class:`LimiterFull` / :class:`ThrottledError` (a LimiterFull),
    :class:`RateLimited` (a strategy refused, never
    retried), :class:`BudgetExhausted`, :class:`DeadlineExceeded` (each
    ``from`` the last error), or the last attempt's own exception. Every
    raised exception carries ``breakwater_giveup`` (the C failure name).
    With ``fallback=fn``, ``fn(exc)`` runs instead and its value is returned
    (awaited if it is awaitable, in the async forms).

    Parking: with ``park=lot`` (a :class:`ParkingLot`) the C core's
    ``bw_park_fallback`` parks the call's work when it fails — the call's
    one positional argument, or ``work(*args, **kwargs)``, encoded by the
    lot before the call (so work that cannot be parked is a TypeError up
    front). A permanent failure (``ignore``, or outside the retry's
    ``retry_on``: a 4xx) is never parked: it is raised. A parked call
    returns :class:`Parked` (``accepted`` False when the lot was full and
    the work went to its dead-letter queue), or ``fallback(exc)`` when there
    is a fallback too; the exception carries ``breakwater_parked``. A
    :class:`Reprocessor` replays the lot. The ``for attempt in pipeline``
    forms have no arguments and park nothing.

    Use: ``@pipeline`` (sync and async functions), ``pipeline.call(fn, ...)``,
    ``await pipeline.call_async(fn, ...)``, or ``for attempt in pipeline:
    with attempt: ...`` (``async for``). Waits sleep (``asyncio.sleep`` in
    the async forms; a :class:`ManualClock` is advanced instead). The
    current :class:`deadline` bounds the call.

    ``min_attempt=S`` sends no attempt with less than S seconds of the
    current deadline left: the call raises :class:`DeadlineExceeded`
    instead (the core's ``min_attempt_ms``; nothing without a deadline).

    A configuration file's pipelines are Pipelines too:
    ``registry.pipeline(name, retry_on=..., ignore=...)``
    (:meth:`Registry.pipeline`)."""

    def __init__(self, strategies: Sequence[Any], *, name: Optional[str] = None,
                 clock: Optional[Clock] = None, ignore: Classifier = None,
                 fallback: Optional[Callable[[BaseException], Any]] = None,
                 sink: Optional[Sink] = None,
                 sleep: Optional[Callable[[float], Any]] = None,
                 park: Optional[ParkingLot] = None,
                 work: Optional[Callable[..., Any]] = None,
                 min_attempt: Optional[float] = None) -> None:
        if name is not None and not isinstance(name, str):
            raise TypeError(f"name must be a str, not {type(name).__name__}")
        if isinstance(strategies, (str, bytes)) or not isinstance(strategies, (list, tuple)):
            raise TypeError("strategies must be a list of policies, outermost first")
        if fallback is not None and not callable(fallback):
            raise TypeError("fallback must be callable")
        if sleep is not None and not callable(sleep):
            raise TypeError("sleep must be callable")
        if park is not None and not isinstance(park, ParkingLot):
            raise TypeError(f"park must be a ParkingLot, not {type(park).__name__}")
        if work is not None and not callable(work):
            raise TypeError("work must be callable (it gets the call's arguments)")
        if work is not None and park is None:
            raise TypeError("work needs park= (the ParkingLot to park it in)")
        self._park = park
        self._work = work
        if clock is not None:
            clock = resolve(clock)
        self._ignore = check_classifier("ignore", ignore)
        self._fallback = fallback
        self._sleep = sleep
        cfg = ffi.new("bw_pipeline_config_t *")
        lib.bw_pipeline_config_init(cfg)
        keep: List[Any] = []
        if name is not None:
            if "\x00" in name:
                raise ValueError("name must not contain a NUL character")
            cname = ffi.new("char[]", name.encode())
            keep.append(cname)
            cfg.name = cname
        cfg.sink = sink_ptr(sink)
        if min_attempt is not None:  # seconds; the core's min_attempt_ms
            seconds = _check_seconds("min_attempt", min_attempt)
            if seconds > 86400:
                raise ValueError(f"min_attempt must be at most 86400 s (got {seconds!r})")
            cfg.min_attempt_ms = round(seconds * 1000)
        if park is not None:  # the C core parks a failed call's work
            cfg.fallback = ffi.addressof(lib, "bw_park_fallback")
            cfg.fallback_userdata = park._ptr
        members: List[Any] = []
        ignores: List[Classifier] = []
        clocks: List[Clock] = []
        self._retry: Optional[Retry] = None
        for i, entry in enumerate(strategies):
            policy, wait = entry, None
            if isinstance(entry, tuple):
                if len(entry) != 2:
                    raise TypeError(f"strategies[{i}]: a tuple is (policy, max_wait_seconds)")
                policy, wait = entry
                if not isinstance(policy, (Bulkhead, Limiter, RateLimiter)):
                    raise TypeError(f"strategies[{i}]: only a bulkhead, limiter or rate "
                                    "limiter takes a max wait")
                wait = _check_seconds(f"strategies[{i}] max wait", wait)
            rc = self._add(cfg, i, policy, wait)
            if rc == lib.BW_E_LIMIT:
                raise ValueError(f"strategies: at most "
                                 f"{lib.BW_PIPELINE_MAX_STRATEGIES} strategies")
            if rc != lib.BW_OK:  # pragma: no cover - objects are never NULL here
                raise ValueError(f"strategies[{i}]: refused ({rc})")
            members.append(policy)
            ign = getattr(policy, "_ignore", None)
            if ign is not None:
                ignores.append(ign)
            c = getattr(policy, "_clock", None) if not isinstance(policy, Retry) else policy.clock
            if c is not None and not isinstance(policy, SharedBreaker):
                clocks.append(c)
        self._clock = self._pick_clock(clock, clocks)
        self._member_ignores = tuple(ignores)
        self._deadline_aware = True
        err = ffi.new("bw_error_t *")
        ptr = lib.bw_pipeline_new(cfg, err)
        if ptr == ffi.NULL:
            raise error_from(err, "pipeline")
        keep_members = (tuple(members), sink, park)
        self._ptr = ffi.gc(ptr, lambda p, k=keep_members: (lib.bw_pipeline_free(p), k))
        self.strategies: Tuple[Any, ...] = tuple(members)
        self.name = ffi.string(lib.bw_pipeline_name(ptr)).decode()
        self._now = lib.bw_clock_now
        self._cclock = self._clock._ptr
        self._no_deadline = _deadline_of(lib.BW_DEADLINE_NONE_NS)

    @classmethod
    def _borrow(cls, ptr: Any, owner: Any, clock: Clock, members: Sequence[Any], *,
                ignore: Classifier = None,
                fallback: Optional[Callable[[BaseException], Any]] = None,
                sleep: Optional[Callable[[float], Any]] = None) -> "Pipeline":
        """A Pipeline over a C pipeline that a registry made and owns
        (Registry.pipeline): ``members`` are Python wrappers of its
        strategies in the C order, so that the classification (the retry's
        ``retry_on``, the members' ``ignore``) and the refusal exceptions
        are those of a Pipeline built in Python. ``owner`` (the registry's)
        is kept: the C pipeline lives as long as this object."""
        if fallback is not None and not callable(fallback):
            raise TypeError("fallback must be callable")
        if sleep is not None and not callable(sleep):
            raise TypeError("sleep must be callable")
        self = cls.__new__(cls)
        self._park, self._work = None, None
        self._ignore = check_classifier("ignore", ignore)
        self._fallback, self._sleep = fallback, sleep
        self._retry = next((m for m in members if isinstance(m, Retry)), None)
        self._member_ignores = tuple(i for i in (getattr(m, "_ignore", None)
                                                 for m in members) if i is not None)
        self._clock = clock
        self._deadline_aware = True
        self._ptr = ptr  # borrowed: the registry frees it
        self._registry = owner
        self.strategies = tuple(members)
        self.name = ffi.string(lib.bw_pipeline_name(ptr)).decode()
        self._now = lib.bw_clock_now
        self._cclock = clock._ptr
        self._no_deadline = _deadline_of(lib.BW_DEADLINE_NONE_NS)
        return self

    # ---- construction -----------------------------------------------------
    def _add(self, cfg: Any, i: int, policy: Any, wait: Optional[float]) -> int:
        if isinstance(policy, _BreakerBase):
            return lib.bw_pipeline_add_breaker_if(cfg, policy._iface)
        if isinstance(policy, Bulkhead):
            ms = policy.max_wait_ms if wait is None else _ms(wait)
            return lib.bw_pipeline_add_limit(cfg, lib.bw_bulkhead_as_limit(policy._ptr), ms)
        if isinstance(policy, Limiter):
            return lib.bw_pipeline_add_limit(cfg, lib.bw_limiter_as_limit(policy._ptr),
                                             0 if wait is None else _ms(wait))
        if isinstance(policy, RateLimiter):
            return lib.bw_pipeline_add_ratelimit(cfg, policy._ptr,
                                                 0 if wait is None else _ms(wait))
        if isinstance(policy, Throttle):  # refuses at once: never waited out
            return lib.bw_pipeline_add_strategy(cfg, lib.bw_throttle_strategy(policy._ptr), 0)
        if isinstance(policy, Retry):
            if self._retry is not None:
                raise ValueError(f"strategies[{i}]: at most one retry")
            self._retry = policy
            return lib.bw_pipeline_add_retry(cfg, policy._policy)
        if isinstance(policy, deadline):
            return lib.bw_pipeline_add_deadline(cfg, _ms(policy.seconds))
        if isinstance(policy, Timeout):
            return lib.bw_pipeline_add_timeout(cfg, _ms(policy.seconds))
        if isinstance(policy, Budget):
            raise TypeError(f"strategies[{i}]: a Budget is not a strategy; give it to "
                            "the Retry (Retry(budget=...))")
        raise TypeError(f"strategies[{i}]: not a breakwater policy "
                        f"({type(policy).__name__})")

    @staticmethod
    def _pick_clock(clock: Optional[Clock], clocks: List[Clock]) -> Clock:
        """Time passed to the C pipeline must be on its strategies' clock."""
        distinct = {id(c): c for c in clocks}
        if clock is not None:
            if any(c is not clock for c in distinct.values()):
                raise ValueError("clock: every strategy must use the pipeline's clock")
            return clock
        if len(distinct) > 1:
            raise ValueError("clock: the strategies use different clocks")
        return next(iter(distinct.values())) if distinct else resolve(None)

    # ---- classification and failures -------------------------------------
    def _verdict(self, exc: BaseException) -> int:
        if isinstance(exc, Rejected):
            return _REJECTED
        if matches(self._ignore, exc) or any(matches(i, exc) for i in self._member_ignores):
            return _PERMANENT
        if self._retry is not None and not matches(self._retry.retry_on, exc):
            return _PERMANENT
        return _TRANSIENT

    def _refusal(self, failure: int, index: int) -> BaseException:
        # On a refusal the C call's (private) index is the strategy that
        # refused; fall back on the first strategy of the failure's kind.
        member = self.strategies[index] if index < len(self.strategies) else None
        kinds = {lib.BW_FAILURE_BREAKER: (_BreakerBase,),
                 lib.BW_FAILURE_LIMIT: (Bulkhead, Limiter, Throttle),
                 lib.BW_FAILURE_RATELIMIT: (RateLimiter,)}[failure]
        if not isinstance(member, kinds):
            member = next((m for m in self.strategies if isinstance(m, kinds)), None)
        if isinstance(member, _BreakerBase):
            return BreakerOpen(member.name, member.retry_in)
        if isinstance(member, Bulkhead):
            return BulkheadFull(f"bulkhead '{member.name}' is full (pipeline '{self.name}')")
        if isinstance(member, Limiter):
            return LimiterFull(f"limiter '{member.name}' is at its limit (pipeline '{self.name}')")
        if isinstance(member, Throttle):
            return ThrottledError(member.name, f" (pipeline '{self.name}')")
        name = member.name if member is not None else self.name
        return RateLimited(name, None)

    def _payload(self, args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Optional[bytes]:
        """The call's work in the parking lot's stored form (None: no lot)."""
        if self._park is None:
            return None
        if self._work is not None:
            work = self._work(*args, **kwargs)
        elif len(args) == 1 and not kwargs:
            work = args[0]
        else:
            raise TypeError(f"pipeline '{self.name}' parks the call's one positional "
                            f"argument; this call has {len(args)} and {len(kwargs)} "
                            "keyword arguments: give Pipeline(work=fn) to choose")
        return self._park.encode(work)

    def _give_up(self, run: _Run, fallback: bool = True) -> Any:
        exc = run.failure()
        parked: Optional[Parked] = None
        c = run.c
        if run.work is not None and c.fallback_ran and c.fallback_rc in (lib.BW_OK,
                                                                         lib.BW_E_FULL):
            parked = Parked(self._park, self._park._settle(c.fallback_rc), exc)
        if self._park is not None:
            try:
                exc.breakwater_parked = parked is not None  # type: ignore[attr-defined]
            except AttributeError:
                pass
        if not fallback:
            raise exc
        if self._fallback is not None:
            return self._fallback(exc)
        if parked is not None:
            return parked
        raise exc

    # ---- waits --------------------------------------------------------------
    def _wait_sync(self, ms: int) -> None:
        wait_ms(self._sleep, self._clock, ms)

    async def _wait_async(self, ms: int) -> None:
        await wait_ms_async(self._sleep, self._clock, ms)

    # ---- calls ----------------------------------------------------------------
    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Calls fn(*args, **kwargs) through the pipeline."""
        return self._call(fn, args, kwargs)

    def _call(self, fn: Callable[..., Any], args: Tuple[Any, ...], kwargs: Dict[str, Any],
              park: bool = True) -> Any:
        """call(); with park False (a replay) nothing is parked and no
        fallback runs: a failure raises."""
        run = _Run(self, self._payload(args, kwargs) if park else None)
        result = None
        while True:
            step = run.step
            if step == _ATTEMPT:
                limit = run.attempt_deadline()
                try:
                    if limit is None:
                        result = fn(*args, **kwargs)
                    else:
                        with deadline(limit, clock=self._clock):
                            result = fn(*args, **kwargs)
                except Exception as exc:
                    run.failed(exc)
                    continue
                except BaseException:
                    run.cancel()
                    raise
                run.ok()
            elif step == _WAIT:
                with run.cancelled_if_interrupted():
                    self._wait_sync(run.c.delay_ms)
                run.resume()
            elif step == _DONE:
                break
            else:  # pragma: no cover - a driver bug
                raise run.bad_step()
        if run.c.failure == lib.BW_FAILURE_NONE:
            return result
        return self._give_up(run, park)

    async def call_async(self, fn: Callable[..., Awaitable[Any]], *args: Any,
                         **kwargs: Any) -> Any:
        """Awaits fn(*args, **kwargs) through the pipeline; an attempt past
        its time limit is cancelled (asyncio.wait_for; on a ManualClock when
        the clock is advanced past it) and counts as timed out."""
        return await self._call_async(fn, args, kwargs)

    async def _call_async(self, fn: Callable[..., Awaitable[Any]], args: Tuple[Any, ...],
                          kwargs: Dict[str, Any], park: bool = True) -> Any:
        """call_async(); with park False (a replay) nothing is parked and no
        fallback runs: a failure raises."""
        run = _Run(self, self._payload(args, kwargs) if park else None)
        result = None
        while True:
            step = run.step
            if step == _ATTEMPT:
                limit = run.attempt_deadline()
                try:
                    if limit is None:
                        result = await fn(*args, **kwargs)
                    else:
                        async with deadline(limit, clock=self._clock):
                            result = await _within(fn(*args, **kwargs), self._clock,
                                                   run.c.attempt_timeout_ms)
                except Exception as exc:
                    run.failed(exc)
                    continue
                except BaseException:
                    run.cancel()
                    raise
                run.ok()
            elif step == _WAIT:
                with run.cancelled_if_interrupted():
                    await self._wait_async(run.c.delay_ms)
                run.resume()
            elif step == _DONE:
                break
            else:  # pragma: no cover - a driver bug
                raise run.bad_step()
        if run.c.failure == lib.BW_FAILURE_NONE:
            return result
        out = self._give_up(run, park)
        if inspect.isawaitable(out):
            out = await out
        return out

    def __iter__(self) -> Iterator[PipelineAttempt]:
        """``for attempt in pipeline: with attempt: ...`` — one logical call;
        refusals and waits happen between the attempts, a final failure is
        raised from the last ``with attempt:`` (or from the loop)."""
        run = _Run(self)
        try:
            while run.step != _DONE:
                if run.step == _WAIT:
                    self._wait_sync(run.c.delay_ms)
                    run.resume()
                    continue
                attempt = PipelineAttempt(run)
                yield attempt
                attempt._require_used()
        except GeneratorExit:
            run.cancel()
            raise
        run.raise_failure()

    async def __aiter__(self) -> AsyncIterator[PipelineAttempt]:
        """``async for attempt in pipeline: with attempt: ...`` — waits are
        awaited (asyncio.sleep), never blocking the loop."""
        run = _Run(self)
        try:
            while run.step != _DONE:
                if run.step == _WAIT:
                    await self._wait_async(run.c.delay_ms)
                    run.resume()
                    continue
                attempt = PipelineAttempt(run)
                yield attempt
                attempt._require_used()
        except GeneratorExit:
            run.cancel()
            raise
        run.raise_failure()

    def __call__(self, fn: F) -> F:
        """Decorates a function or a coroutine function."""
        if not callable(fn):
            raise TypeError(f"Pipeline decorates callables, not {type(fn).__name__}")
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def awrapper(*args: Any, **kwargs: Any) -> Any:
                return await self.call_async(fn, *args, **kwargs)
            return awrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            return self.call(fn, *args, **kwargs)
        return wrapper  # type: ignore[return-value]

    def stats(self) -> Dict[str, Any]:
        """Counters since creation: calls, attempts, successes, cancelled,
        and failures by kind (``{"breaker": 2, "exhausted": 1, ...}``)."""
        s = ffi.new("bw_pipeline_stats_t *")
        lib.bw_pipeline_stats(self._ptr, s)
        failures = {ffi.string(lib.bw_failure_name(k)).decode(): s.failures[k]
                    for k in range(1, lib.BW_FAILURE__COUNT)}
        return {"calls": s.calls, "attempts": s.attempts, "successes": s.successes,
                "cancelled": s.cancelled, "failures": failures}

    def __repr__(self) -> str:
        return f"<Pipeline {self.name!r} {list(self.strategies)!r}>"
