"""breakwater — resilience policies for Python over the breakwater C core.

Circuit breakers (in-process and shared by processes), retries with
backoff and jitter, bulkheads, adaptive concurrency limiters, GCRA rate
limiters, client-side adaptive throttles, retry budgets and deadlines.
Each policy is a context manager (``with`` / ``async with``) and a
decorator (sync and async functions); keyword arguments are the C core's
field names, checked by the core.

Distribution name: ``breakwater-resilience``; import name: ``breakwater``.
"""
from ._bw import lib as _c_lib
from ._bw import ffi as _c_ffi
from ._clock import Clock, ManualClock
from ._deadline import (HEADER, check, deadline, from_header, headers,
                        parse_header, remaining, to_header)
from ._errors import (BreakerOpen, BreakwaterError, BudgetExhausted,
                      BulkheadFull, ConfigError, DeadlineExceeded,
                      LimiterFull, RateLimited, Rejected, ThrottledError)
from ._guard import Permit
from ._policies import (Breaker, Budget, Bulkhead, Limiter, RateLimiter,
                        SharedBreaker)
from ._retry import Attempt, Retry
from ._throttle import Throttle, ThrottleStats
from . import events
from .events import Sink
from ._pipeline import Pipeline, PipelineAttempt, Timeout
from ._parking import Parked, ParkingLot, Reprocessor
from ._registry import Registry, default_registry
from ._queue import QueueGuard, RedisUnavailable

__version__ = "0.1.0"
core_version: str = _c_ffi.string(_c_lib.bw_version()).decode()

__all__ = [
    "Attempt", "Breaker", "BreakerOpen", "BreakwaterError", "Budget",
    "BudgetExhausted", "Bulkhead", "BulkheadFull", "Clock", "ConfigError",
    "DeadlineExceeded", "HEADER", "Limiter", "LimiterFull", "ManualClock",
    "Parked", "ParkingLot", "Permit", "Pipeline", "PipelineAttempt", "QueueGuard", "RateLimited",
    "RateLimiter", "RedisUnavailable",
    "Registry", "Rejected", "Reprocessor", "Retry", "SharedBreaker", "Sink",
    "Throttle", "ThrottleStats", "ThrottledError", "Timeout",
    "check", "core_version", "deadline", "default_registry", "events",
    "from_header", "headers", "parse_header", "remaining", "to_header",
]
