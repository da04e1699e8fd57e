"""The public surface: names, docstrings, version, type information."""
import inspect
import os

import breakwater as bw


def test_every_public_name_is_documented():
    for name in bw.__all__:
        obj = getattr(bw, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            assert inspect.getdoc(obj), name


def test_versions_and_typing_marker():
    assert bw.__version__ == "0.1.0"
    assert bw.core_version.count(".") == 2
    assert os.path.exists(os.path.join(os.path.dirname(bw.__file__), "py.typed"))


def test_exception_hierarchy():
    assert issubclass(bw.ConfigError, ValueError)
    assert issubclass(bw.DeadlineExceeded, TimeoutError)
    for exc in (bw.BreakerOpen, bw.BulkheadFull, bw.LimiterFull,
                bw.RateLimited, bw.BudgetExhausted):
        assert issubclass(exc, bw.Rejected) and issubclass(exc, bw.BreakwaterError)
    e = bw.BreakerOpen("payment_api", 1.5)
    assert e.retry_in == 1.5 and "payment_api" in str(e)


def test_names_come_from_the_core():
    assert bw.Bulkhead().name == "bulkhead" and bw.Bulkhead("pay").name == "pay"
    assert bw.Limiter().name == "limiter" and bw.RateLimiter().name == "ratelimit"
    assert bw.Budget().name == "budget" and bw.Breaker().name == "breaker"
    assert bw.Retry().name == "retry"
    assert bw.Retry(preset="tenacity").name == "tenacity"
    assert bw.Retry("mine", preset="tenacity").name == "mine"


def test_new_objects_document_their_methods():
    """help() on what issue 20's second part added is useful: every public
    method and property has a docstring."""
    for cls in (bw.Pipeline, bw.PipelineAttempt, bw.Timeout, bw.Registry,
                bw.QueueGuard, bw.Sink):
        assert inspect.getdoc(cls), cls
        for name, member in inspect.getmembers(cls):
            if name.startswith("_") and name not in ("__call__", "__iter__", "__aiter__"):
                continue
            if callable(member) or isinstance(member, property):
                assert inspect.getdoc(member), f"{cls.__name__}.{name}"
    assert inspect.getdoc(bw.events.to_logging) and inspect.getdoc(bw.default_registry)
