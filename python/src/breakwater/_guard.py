"""The permit protocol in Python: a base class that makes every policy a
context manager (``with``/``async with``) and a decorator (sync and async)."""
from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
from typing import Any, Callable, Dict, Optional, Tuple, Type, TypeVar, Union

from ._errors import Rejected
from ._ffi import ffi, lib

F = TypeVar("F", bound=Callable[..., Any])

#: exception types, or a predicate on the exception
Classifier = Union[Type[BaseException], Tuple[Type[BaseException], ...],
                   Callable[[BaseException], bool], None]

# Permits held by `with policy:` blocks, per context (thread / asyncio task):
# a tuple of (policy id, Permit), innermost last.
_held: contextvars.ContextVar[tuple] = contextvars.ContextVar(
    "breakwater_permits", default=())


def matches(classifier: Classifier, exc: BaseException) -> bool:
    """True when exc is of the classifier's types or satisfies its predicate."""
    if classifier is None:
        return False
    if isinstance(classifier, type) or isinstance(classifier, tuple):
        return isinstance(exc, classifier)
    return bool(classifier(exc))


def check_classifier(name: str, classifier: Classifier) -> Classifier:
    if classifier is None or callable(classifier) and not isinstance(classifier, tuple):
        if isinstance(classifier, type) and not issubclass(classifier, BaseException):
            raise TypeError(f"{name} must be exception types or a predicate")
        return classifier
    if isinstance(classifier, tuple) and all(
            isinstance(t, type) and issubclass(t, BaseException) for t in classifier):
        return classifier
    raise TypeError(f"{name} must be an exception type, a tuple of them, or a predicate")


OUTCOMES = {"success": lib.BW_SUCCESS, "failure": lib.BW_FAILURE,
            "ignored": lib.BW_IGNORED, "timed_out": lib.BW_TIMED_OUT}


class Permit:
    """One admitted call: release it exactly once with its outcome
    (``"success"``, ``"failure"``, ``"ignored"`` — a 4xx, the caller's
    fault — or ``"timed_out"``). Also a context manager that releases with
    the outcome of its block."""

    __slots__ = ("_owner", "_c", "_released")

    def __init__(self, owner: "Guard", c: Any) -> None:
        self._owner = owner
        self._c = c
        self._released = False

    def release(self, outcome: str = "success") -> None:
        if self._released:
            raise RuntimeError("this permit was already released")
        codes = self._owner._outcomes
        if outcome not in codes:
            raise ValueError(f"outcome must be one of {', '.join(codes)} (got {outcome!r})")
        self._released = True
        self._owner._release(self, codes[outcome])

    def success(self) -> None:
        self.release("success")

    def failure(self) -> None:
        self.release("failure")

    def ignore(self) -> None:
        self.release("ignored")

    @property
    def released(self) -> bool:
        return self._released

    def __enter__(self) -> "Permit":
        return self

    def __exit__(self, et: Any, exc: Optional[BaseException], tb: Any) -> None:
        if not self._released:
            self.release(self._owner._outcome_name(exc))


class Guard:
    """Base of every admission policy (breakers, bulkheads, limiters, rate
    limiters, budgets). Subclasses implement ``acquire`` (never waits; raises
    a :class:`Rejected` subclass) and ``_release``; ``acquire_async`` may
    wait without blocking the event loop."""

    name: str
    _ignore: Classifier = None
    #: the outcomes a Permit of this policy may be released with, by name
    #: (a Throttle adds "withdrawn")
    _outcomes: Dict[str, int] = OUTCOMES

    def acquire(self) -> Permit:  # pragma: no cover - abstract
        raise NotImplementedError

    async def acquire_async(self) -> Permit:
        return self.acquire()

    def _release(self, permit: Permit, outcome: int) -> None:  # pragma: no cover
        raise NotImplementedError

    def _outcome_name(self, exc: Optional[BaseException]) -> str:
        """How the block's exception counts: none -> success; a rejection by
        another policy, a cancellation, or an ``ignore`` match -> ignored
        (not the dependency's fault); a TimeoutError -> timed_out; anything
        else -> failure."""
        if exc is None:
            return "success"
        if isinstance(exc, Rejected) or not isinstance(exc, Exception):
            return "ignored"
        if matches(self._ignore, exc):
            return "ignored"
        if isinstance(exc, TimeoutError) or isinstance(exc, asyncio.TimeoutError):
            return "timed_out"
        return "failure"

    # ---- with / async with ------------------------------------------------
    def _push(self, permit: Permit) -> None:
        _held.set(_held.get() + ((id(self), permit),))

    def _pop(self) -> Permit:
        held = _held.get()
        for i in range(len(held) - 1, -1, -1):
            if held[i][0] == id(self):
                _held.set(held[:i] + held[i + 1:])
                return held[i][1]
        raise RuntimeError(f"{type(self).__name__} exited without being entered")

    def __enter__(self) -> Permit:
        permit = self.acquire()
        self._push(permit)
        return permit

    def __exit__(self, et: Any, exc: Optional[BaseException], tb: Any) -> None:
        permit = self._pop()
        if not permit.released:
            permit.release(self._outcome_name(exc))

    async def __aenter__(self) -> Permit:
        permit = await self.acquire_async()
        self._push(permit)
        return permit

    async def __aexit__(self, et: Any, exc: Optional[BaseException], tb: Any) -> None:
        self.__exit__(et, exc, tb)

    # ---- decorator --------------------------------------------------------
    def __call__(self, fn: F) -> F:
        """Decorates a function or a coroutine function: each call runs
        inside ``with self:`` (``async with self:`` for coroutines)."""
        if not callable(fn):
            raise TypeError(f"{type(self).__name__} decorates callables, not {type(fn).__name__}")
        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def awrapper(*args: Any, **kwargs: Any) -> Any:
                async with self:
                    return await fn(*args, **kwargs)
            return awrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)
        return wrapper  # type: ignore[return-value]

    def call(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Calls fn(*args, **kwargs) inside ``with self:``."""
        with self:
            return fn(*args, **kwargs)

    async def call_async(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """Awaits fn(*args, **kwargs) inside ``async with self:``."""
        async with self:
            return await fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def new_permit() -> Any:
    return ffi.new("bw_permit_t *")
