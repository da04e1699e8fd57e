"""Exceptions raised by breakwater."""
from __future__ import annotations

from typing import Optional


class BreakwaterError(Exception):
    """Base class of every exception breakwater raises."""


class ConfigError(BreakwaterError, ValueError):
    """A keyword argument's value was refused by the C core's validation,
    or a configuration file was refused (:meth:`Registry.load_file`).

    ``field`` names the offending configuration field; the message is the
    core's own sentence (it names the field and the rule). For a file,
    the message is ``FILE:LINE: KEY: RULE``; ``path``, ``line`` (1-based,
    None when the error is about no line: an unreadable file, the
    environment), ``field`` (the key, e.g.
    ``breaker.payment_api.failure_threshold``) and ``rule`` hold its
    parts."""

    def __init__(self, message: str, field: str = "", *, path: Optional[str] = None,
                 line: Optional[int] = None, rule: Optional[str] = None) -> None:
        super().__init__(message)
        self.field = field
        self.path = path
        self.line = line
        self.rule = rule


class Rejected(BreakwaterError):
    """A policy refused the call before it started (never retried)."""


class BreakerOpen(Rejected):
    """The circuit breaker is open (or its probe slots are taken).

    ``retry_in`` is the number of seconds until a call may be admitted
    (0.0 when a probe slot may free at any moment), or None when the breaker
    is isolated by an operator."""

    def __init__(self, name: str, retry_in: Optional[float]) -> None:
        when = "isolated" if retry_in is None else f"retry in {retry_in:.3f} s"
        super().__init__(f"circuit '{name}' is open ({when})")
        self.name = name
        self.retry_in = retry_in


class BulkheadFull(Rejected):
    """No slot was free in the bulkhead (or the wait for one ran out)."""


class LimiterFull(Rejected):
    """The adaptive concurrency limiter is at its limit: the call is shed."""


class ThrottledError(LimiterFull):
    """The client-side adaptive throttle (:class:`Throttle`) refused the
    call before it went out: the partner has been rejecting requests, and
    this client sends about K times what it accepts. A :class:`LimiterFull`
    (a local refusal on load: a pipeline reports it as the failure
    ``"limit"``, as the C core does), so code that handles a shed call
    handles this one too; never retried. ``name`` is the throttle's."""

    def __init__(self, name: str, detail: str = "") -> None:
        super().__init__(f"throttle '{name}' refused the call{detail}")
        self.name = name


class RateLimited(Rejected):
    """The rate limiter refused the call; ``retry_in`` seconds until a slot
    (None when not known: a pipeline's rate limiter)."""

    def __init__(self, name: str, retry_in: Optional[float]) -> None:
        when = "" if retry_in is None else f" (retry in {retry_in:.3f} s)"
        super().__init__(f"rate limit '{name}' reached{when}")
        self.name = name
        self.retry_in = retry_in


class BudgetExhausted(Rejected):
    """The retry budget refused a retry (retries would multiply load)."""


class DeadlineExceeded(BreakwaterError, TimeoutError):
    """The current deadline has passed, or too little time is left."""
