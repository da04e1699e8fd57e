"""Client-side adaptive throttling (Google SRE, "Handling Overload") over
the C core's bw_throttle_t (include/breakwater/throttle.h,
docs/throttle.md)."""
from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
from typing import Any, Callable, Dict, Optional, TypeVar

from ._clock import Clock
from ._errors import Rejected, ThrottledError
from ._ffi import ffi, lib
from ._guard import OUTCOMES, Classifier, Guard, Permit, check_classifier, matches, new_permit
from ._policies import _new_policy
from .events import Sink

# A Permit outcome of a Throttle only: the call never went out (another
# policy inside refused it), or it was cancelled (whether it went out is
# unknown, so it counts neither way). Left as IGNORED with no attempt
# made, which the throttle counts as withdrawn. Not a bw_outcome_t.
_WITHDRAWN = -1

F = TypeVar("F", bound=Callable[..., Any])


@dataclasses.dataclass(frozen=True)
class ThrottleStats:
    """A snapshot of a :class:`Throttle` (``bw_throttle_stats_t``).

    Totals since creation: ``requests`` (every call that asked: admitted or
    refused), ``accepts`` (answered: a success, or an ``ignore`` match — a
    4xx, the partner did the work), ``rejected`` (a failure or a timeout:
    the partner shed it), ``throttled`` (refused here), ``withdrawn``
    (admitted but never sent). ``window_requests`` / ``window_accepts``:
    the sliding window's counts now; ``probability``: the refusal
    probability now. ``requests == accepts + rejected + throttled +
    withdrawn + in_flight``."""

    requests: int
    accepts: int
    rejected: int
    throttled: int
    withdrawn: int
    window_requests: int
    window_accepts: int
    probability: float

    @property
    def in_flight(self) -> int:
        """Calls admitted and not yet released (the conservation law's
        remainder)."""
        return (self.requests - self.accepts - self.rejected - self.throttled
                - self.withdrawn)


class Throttle(Guard):
    """Client-side adaptive throttling (the SRE book's): refuses locally a
    share of the calls to a partner that has been rejecting them, with
    probability ``max(0, (requests - k * accepts) / (requests + 1))`` over a
    sliding window, so the client sends about ``k`` times what the partner
    accepts instead of spending a network call (and the partner's work) on
    each rejection.

    ``Throttle("partner", k=2.0, window_ms="60s", buckets=60, seed=0,
    clock=None, ignore=None, sink=None)`` — keyword arguments are the C
    core's configuration fields (kind ``throttle``, docs/configuration.md),
    set through ``bw_config_set`` as for every other policy:
    ``k`` in [1, 10]; ``window_ms`` in [10 ms, 1 day] (a number of ms,
    ``"60s"``, a timedelta); ``buckets`` in [1, 1000], dividing the window
    in whole nanoseconds; ``seed`` for the refusal draws (0: from the
    operating system; any other value reproducible). An unknown field
    raises ``TypeError``, a bad value :class:`ConfigError` naming the
    field, with the core's rule. ``sink`` receives ``throttle_refused``
    summaries (docs/events.md: the refusals since the last summary, at
    most one a second, and the rest when the throttle is freed).

    ``with throttle:``, ``async with``, ``@throttle`` and ``call`` admit a
    call or raise :class:`ThrottledError` at once (never waits). The
    block's outcome: no exception is an accept; an ``ignore`` match (a
    4xx: the partner answered) is an accept too; ``TimeoutError`` or any
    other exception is a rejection; a refusal by another policy inside
    (a :class:`Rejected`: the call never went out) or a cancellation
    (whether it went out is unknown) is withdrawn, counted nowhere in the
    window. A :class:`Permit` from
    :meth:`acquire` is released with ``"success"``, ``"ignored"`` (a 4xx),
    ``"failure"``, ``"timed_out"`` or ``"withdrawn"``.

    In a :class:`Pipeline` it is a strategy (``bw_throttle_strategy``):
    after the :class:`Retry` each attempt is a request, before it each
    call; a refusal ends the call with :class:`ThrottledError`
    (``breakwater_giveup == "limit"``), never retried. Put it before a
    limiter or bulkhead so that a refusal takes no slot. There the C
    pipeline classifies: a permanent failure (an ``ignore``, or outside the
    retry's ``retry_on``) is an accept, a transient one or a timeout a
    rejection, a refusal further in withdraws the call, and so does an
    attempt cancelled while out (a cancelled task, a KeyboardInterrupt):
    its answer is unknown (the pipeline tells its strategies the call was
    cancelled)."""

    _outcomes: Dict[str, int] = {**OUTCOMES, "withdrawn": _WITHDRAWN}

    def __init__(self, name: Optional[str] = None, *, clock: Optional[Clock] = None,
                 ignore: Classifier = None, sink: Optional[Sink] = None,
                 **fields: Any) -> None:
        self._ignore = check_classifier("ignore", ignore)
        # The sink and the clock outlive the throttle: its free flushes the
        # last throttle_refused summary through them.
        _new_policy(self, "throttle", lib.BW_CONFIG_THROTTLE, name, clock, sink, fields)
        self._bind()

    def _bind(self) -> None:
        """Name and clock of the throttle at self._ptr (a registry's
        wrapper binds the same way)."""
        self.name = ffi.string(lib.bw_throttle_name(self._ptr)).decode()
        self._cclock = self._clock._ptr

    def _config(self) -> Any:
        live = ffi.new("bw_throttle_config_t *")
        lib.bw_throttle_config_of(self._ptr, live)
        return live

    @property
    def k(self) -> float:
        """The multiplier K in force (a configuration reload may change it
        live: :meth:`Registry.reload`)."""
        return float(self._config().k)

    @property
    def window_ms(self) -> int:
        """The sliding window, in milliseconds (fixed at creation)."""
        return int(self._config().window_ms)

    @property
    def buckets(self) -> int:
        """The window's buckets (fixed at creation)."""
        return int(self._config().buckets)

    def acquire(self) -> Permit:
        """Admits a call now or raises :class:`ThrottledError` (never waits).
        Release the permit exactly once."""
        slot = new_permit()  # the throttle's state for this call
        if lib.bw_py_throttle_enter(self._ptr, self._cclock, slot) != lib.BW_OK:
            raise ThrottledError(self.name)
        return Permit(self, slot)

    async def acquire_async(self) -> Permit:
        """As :meth:`acquire`: a throttle never waits, so neither does
        ``async with``."""
        return self.acquire()

    def _release(self, permit: Permit, outcome: int) -> None:
        if outcome == _WITHDRAWN:  # never sent: IGNORED with no attempt made
            lib.bw_py_throttle_leave(self._ptr, permit._c, lib.BW_IGNORED, False)
        else:  # the call went out: an accept or a rejection
            lib.bw_py_throttle_leave(self._ptr, permit._c, outcome, True)

    def __call__(self, fn: F) -> F:
        """Decorates a function or a coroutine function: each call is
        admitted (or refused with :class:`ThrottledError`) and its outcome
        reported, as ``with throttle:`` would, without the context
        variable that pairs a ``with`` block's exit with its permit (the
        wrapper holds it: about half the cost)."""
        if not callable(fn):
            raise TypeError(f"Throttle decorates callables, not {type(fn).__name__}")
        acquire, outcome_name = self.acquire, self._outcome_name
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def awrapper(*args: Any, **kwargs: Any) -> Any:
                permit = acquire()
                try:
                    result = await fn(*args, **kwargs)
                except BaseException as exc:
                    permit.release(outcome_name(exc))
                    raise
                permit.release("success")
                return result
            return awrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            permit = acquire()
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:
                permit.release(outcome_name(exc))
                raise
            permit.release("success")
            return result
        return wrapper  # type: ignore[return-value]

    def _outcome_name(self, exc: Optional[BaseException]) -> str:
        """How the block's exception counts: none -> success (an accept);
        a rejection by another policy or a cancellation -> withdrawn (never
        sent); an ``ignore`` match -> ignored (a 4xx: an accept); a
        TimeoutError -> timed_out; anything else -> failure (both
        rejections)."""
        if exc is None:
            return "success"
        if isinstance(exc, Rejected) or not isinstance(exc, Exception):
            return "withdrawn"
        if matches(self._ignore, exc):
            return "ignored"
        if isinstance(exc, (TimeoutError, asyncio.TimeoutError)):
            return "timed_out"
        return "failure"

    @property
    def probability(self) -> float:
        """The refusal probability now, over the window at the clock's
        current reading."""
        return lib.bw_throttle_probability(self._ptr)

    def stats(self) -> ThrottleStats:
        """A snapshot taken under the throttle's lock."""
        s = ffi.new("bw_throttle_stats_t *")
        lib.bw_throttle_stats(self._ptr, s)
        return ThrottleStats(s.requests, s.accepts, s.rejected, s.throttled,
                             s.withdrawn, s.window_requests, s.window_accepts,
                             s.probability)
