"""Deadlines on a contextvars variable, and the X-Timeout-Budget header."""
from __future__ import annotations

import contextvars
from typing import Any, Mapping, Optional, Tuple

from ._clock import Clock, resolve
from ._errors import DeadlineExceeded
from ._ffi import NS_PER_MS, NS_PER_S, ffi, lib

HEADER = "X-Timeout-Budget"

# The deadlines entered in this context, innermost last: (owner id, clock,
# absolute reading in ns). The current deadline is the last one (each is
# already narrowed by the ones before it). A stack rather than reset tokens,
# so one deadline object may be entered by several tasks at once.
_stack: contextvars.ContextVar[Tuple[Tuple[int, Clock, int], ...]] = \
    contextvars.ContextVar("breakwater_deadline", default=())


def _current_get() -> Optional[Tuple[Clock, int]]:
    st = _stack.get()
    return None if not st else (st[-1][1], st[-1][2])


def _check_seconds(name: str, seconds: Any) -> float:
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)):
        raise TypeError(f"{name} must be a number of seconds, not {type(seconds).__name__}")
    if seconds != seconds or seconds < 0:
        raise ValueError(f"{name} must be >= 0 (got {seconds!r})")
    return float(seconds)


class deadline:
    """``with deadline(2.5):`` — the code inside, and everything it calls
    (asyncio tasks it starts included), must finish within 2.5 s.

    A nested deadline never extends the one around it (the earlier wins).
    The value lives in a ``contextvars`` variable, so each asyncio task and
    thread sees its own. :class:`Retry` never schedules a retry past it, and
    :class:`Bulkhead` refuses to admit a call once it has passed."""

    def __init__(self, seconds: float, *, clock: Optional[Clock] = None) -> None:
        self.seconds = _check_seconds("seconds", seconds)
        self.clock = resolve(clock)

    def __enter__(self) -> "deadline":
        at = self.clock.now_ns() + int(self.seconds * NS_PER_S)
        cur = _current_get()
        if cur is not None:
            at = min(at, _to_clock(cur, self.clock))
        _stack.set(_stack.get() + ((id(self), self.clock, at),))
        return self

    def __exit__(self, *exc: Any) -> None:
        st = _stack.get()
        for i in range(len(st) - 1, -1, -1):
            if st[i][0] == id(self):
                _stack.set(st[:i] + st[i + 1:])
                return
        raise RuntimeError("deadline exited without being entered")

    async def __aenter__(self) -> "deadline":
        return self.__enter__()

    async def __aexit__(self, *exc: Any) -> None:
        self.__exit__(*exc)


def _to_clock(cur: Tuple[Clock, int], clock: Clock) -> int:
    """The deadline as a reading of `clock` (through the time left)."""
    dclock, at = cur
    if dclock is clock:
        return at
    return clock.now_ns() + (at - dclock.now_ns())


def deadline_ns(clock: Clock) -> Optional[int]:
    """The current deadline as a reading of `clock`, or None."""
    cur = _current_get()
    return None if cur is None else _to_clock(cur, clock)


def remaining() -> Optional[float]:
    """Seconds left before the current deadline (never negative), or None
    when there is no deadline."""
    cur = _current_get()
    if cur is None:
        return None
    clock, at = cur
    return max(0, at - clock.now_ns()) / NS_PER_S


def check(min_remaining: float = 0.0) -> None:
    """Raises DeadlineExceeded when the deadline has passed or less than
    ``min_remaining`` seconds are left (the asyncio toolkit refuses a
    downstream call with less than 1 s left: ``check(1.0)``)."""
    min_remaining = _check_seconds("min_remaining", min_remaining)
    left = remaining()
    if left is None:
        return
    if left <= 0 or left < min_remaining:
        raise DeadlineExceeded(
            f"deadline: {left:.3f} s left, {min_remaining:.3f} s needed")


def to_header() -> Optional[str]:
    """The X-Timeout-Budget value for an outbound call (the time left in
    decimal seconds, as "2.5"), or None when there is no deadline."""
    cur = _current_get()
    if cur is None:
        return None
    clock, at = cur
    ms = max(0, (at - clock.now_ns()) // NS_PER_MS)
    buf = ffi.new("char[]", 32)
    rc = lib.bw_deadline_header_format(ms, buf, 32)
    if rc < 0:
        raise ValueError(f"deadline too far to send as {HEADER}")
    return ffi.string(buf).decode()


def headers() -> Mapping[str, str]:
    """``{"X-Timeout-Budget": ...}`` for an outbound call, or ``{}``."""
    value = to_header()
    return {} if value is None else {HEADER: value}


def parse_header(value: str) -> float:
    """Parses an X-Timeout-Budget value into seconds. Raises ValueError for
    anything malformed ("-1", "1e3", "inf", ".5")."""
    if not isinstance(value, (str, bytes)):
        raise TypeError(f"{HEADER} must be str or bytes, not {type(value).__name__}")
    raw = value.encode("latin-1", "replace") if isinstance(value, str) else value
    out = ffi.new("int64_t *")
    if lib.bw_deadline_header_parse(raw, len(raw), out) != lib.BW_OK:
        raise ValueError(f"malformed {HEADER} value {value!r}")
    return out[0] / 1000.0


def from_header(value: Optional[str], default: Optional[float] = 10.0, *,
                clock: Optional[Clock] = None) -> deadline:
    """The inbound side: a :class:`deadline` from a request's
    X-Timeout-Budget value. A missing or malformed value (never trusted)
    gives ``default`` seconds (the asyncio toolkit's 10 s); ``default=None``
    with no valid header gives an unlimited deadline.

    ``with from_header(environ.get("HTTP_X_TIMEOUT_BUDGET")): ...``"""
    seconds: Optional[float] = None
    if value is not None:
        try:
            seconds = parse_header(value)
        except ValueError:
            seconds = None
    if seconds is None:
        seconds = default
    if seconds is None:
        return _Unlimited()  # type: ignore[return-value]
    return deadline(seconds, clock=clock)


class _Unlimited:
    def __enter__(self) -> "_Unlimited":
        return self

    def __exit__(self, *exc: Any) -> None:
        return None

    async def __aenter__(self) -> "_Unlimited":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        return None


class thread_deadline:
    """Internal: sets the C core's per-thread deadline from the contextvar
    for the duration of one non-blocking call (bulkhead admission)."""

    def __init__(self, clock: Clock) -> None:
        self.at = deadline_ns(clock)

    def __enter__(self) -> None:
        if self.at is not None:
            d = ffi.new("bw_deadline_t *")
            d.at_ns = self.at
            self.prev = lib.bw_deadline_set(d[0])

    def __exit__(self, *exc: Any) -> None:
        if self.at is not None:
            lib.bw_deadline_set(self.prev)


