"""Events: what the C core reports (a breaker opened, a retry gave up, a
queue item was dead-lettered, ...) delivered to Python.

A :class:`Sink` calls a Python callable with each event as a ``dict`` —
the JSON object the core writes for it (docs/events.md: ``event``, ``ts``,
``kind``, ``name``, ``reason`` and the event's own fields)::

    seen = []
    sink = breakwater.events.Sink(seen.append)
    breaker = breakwater.Breaker("payments", sink=sink, failure_threshold=3)

    logging_sink = breakwater.events.to_logging(logging.getLogger("bw"))

Pass the sink to any policy (``sink=``), to a :class:`~breakwater.Pipeline`
or to a :class:`~breakwater.Registry` (the default of what it creates).

Events may come from any thread, C threads included (cffi takes the GIL
for the callback). The callback must be quick and must not change the
object that emits (isolate, reset); reading its stats is fine. An exception
raised by the callback never reaches the C core: it is counted in
:attr:`Sink.errors` and logged on the ``breakwater.events`` logger.
"""
from __future__ import annotations

import json
import logging
import threading
from typing import Any, Callable, Dict, Mapping, Optional

from ._ffi import ffi, lib

Event = Dict[str, Any]

_log = logging.getLogger("breakwater.events")

# The JSON line of an event is short (a few hundred bytes); a longer one is
# formatted again into a buffer of the size the core asked for.
_BUF = 1024


class Sink:
    """An event sink that calls ``callback(event_dict)`` for every event.

    Keep it alive as long as the objects that emit into it: every policy
    given ``sink=`` keeps a reference to it."""

    def __init__(self, callback: Callable[[Event], Any]) -> None:
        if not callable(callback):
            raise TypeError(f"callback must be callable, not {type(callback).__name__}")
        self._callback = callback
        self._lock = threading.Lock()
        self.delivered = 0
        self.errors = 0
        self._handle = ffi.new_handle(self)
        err = ffi.new("bw_error_t *")
        ptr = lib.bw_sink_callback_new(lib._bw_py_event, self._handle, err)
        if ptr == ffi.NULL:
            raise MemoryError("event sink")
        self._ptr = ffi.gc(ptr, lib.bw_sink_free)

    def _deliver(self, event: Any) -> None:
        buf = ffi.new(f"char[{_BUF}]")
        n = lib.bw_event_format_json(event, buf, _BUF)
        if n >= _BUF:
            buf = ffi.new(f"char[{n + 1}]")
            n = lib.bw_event_format_json(event, buf, n + 1)
        data = json.loads(ffi.unpack(buf, n).decode("utf-8", "replace"))
        try:
            self._callback(data)
        except Exception:
            with self._lock:
                self.errors += 1
            _log.exception("breakwater event callback %r raised on %s",
                           self._callback, data.get("event"))
            return
        with self._lock:
            self.delivered += 1

    def __repr__(self) -> str:
        return f"<Sink {self._callback!r} delivered={self.delivered} errors={self.errors}>"


@ffi.def_extern()
def _bw_py_event(event: Any, userdata: Any) -> None:
    # Runs on the emitting thread with the GIL taken by cffi. Nothing may
    # propagate into C: a failure here is logged and dropped.
    try:
        ffi.from_handle(userdata)._deliver(event)
    except BaseException:  # noqa: BLE001 - the C caller cannot take it
        try:
            _log.exception("breakwater event delivery failed")
        except BaseException:  # noqa: BLE001
            pass


#: The default level of each event for :func:`to_logging`: state changes
#: that refuse work are warnings, the rest information.
LEVELS: Mapping[str, int] = {
    "circuit_opened": logging.WARNING,
    "circuit_isolated": logging.WARNING,
    "calls_rejected": logging.WARNING,
    "retry_gave_up": logging.WARNING,
    "queue_warning": logging.WARNING,
    "dead_lettered": logging.WARNING,
    "redis_unavailable": logging.ERROR,
    "bulkhead_rejected": logging.WARNING,
    "rate_limited": logging.WARNING,
    "retries_refused": logging.WARNING,
    "budget_exhausted": logging.WARNING,
    "stage_dropped": logging.WARNING,
    "pipeline_gave_up": logging.WARNING,
    "limiter_rejected": logging.WARNING,
    "queue_dropped": logging.WARNING,
    "alert_firing": logging.WARNING,
    "throttle_refused": logging.WARNING,
}


def to_logging(logger: Optional[logging.Logger] = None,
               level: Optional[int] = None) -> Sink:
    """A sink that logs each event on ``logger`` (default: the
    ``breakwater.events`` logger) as ``"<event> <kind> '<name>': <reason>"``,
    with the whole event under the record's ``breakwater_event`` attribute
    (for structured handlers). ``level`` fixes one level for every event;
    by default :data:`LEVELS` picks WARNING/ERROR for refusals and outages
    and INFO for the rest."""
    if logger is None:
        logger = _log
    if not isinstance(logger, logging.Logger):
        raise TypeError(f"logger must be a logging.Logger, not {type(logger).__name__}")
    if level is not None and (isinstance(level, bool) or not isinstance(level, int)):
        raise TypeError("level must be a logging level (int)")

    def log(ev: Event) -> None:
        lvl = level if level is not None else LEVELS.get(ev.get("event", ""), logging.INFO)
        logger.log(lvl, "%s %s '%s': %s", ev.get("event"), ev.get("kind"),
                   ev.get("name"), ev.get("reason", ""),
                   extra={"breakwater_event": ev})
    return Sink(log)


def to_callable(callback: Callable[[Event], Any]) -> Sink:
    """The same as ``Sink(callback)``."""
    return Sink(callback)


def sink_ptr(sink: Optional[Sink]) -> Any:
    """The C sink of an optional Sink argument (NULL for None)."""
    if sink is None:
        return ffi.NULL
    if not isinstance(sink, Sink):
        raise TypeError(f"sink must be a breakwater.events.Sink, not {type(sink).__name__}")
    return sink._ptr
