"""Bad input raises clear Python exceptions, never crashes."""
import datetime
import math

import pytest

import breakwater as bw

ALL = [bw.Breaker, bw.Bulkhead, bw.Limiter, bw.RateLimiter, bw.Budget, bw.Retry]


@pytest.mark.parametrize("cls", ALL)
def test_unknown_field_is_a_type_error_naming_it(cls):
    with pytest.raises(TypeError, match="no_such_field"):
        cls(no_such_field=1)


@pytest.mark.parametrize("cls", ALL)
def test_wrong_value_types(cls):
    for bad in ([1], {"a": 1}, object(), b"bytes"):
        with pytest.raises(TypeError):
            cls(name=bad) if cls is not bw.Retry else cls(max_attempts=bad)
    with pytest.raises(TypeError):
        cls(clock="monotonic")


@pytest.mark.parametrize("cls,field,value", [
    (bw.Breaker, "failure_threshold", 0),
    (bw.Breaker, "failure_threshold", -1),
    (bw.Breaker, "failure_threshold", 2**40),
    (bw.Breaker, "failure_ratio", 1.5),
    (bw.Breaker, "failure_ratio", math.nan),
    (bw.Breaker, "failure_ratio", math.inf),
    (bw.Breaker, "break_ms", "0.5ms"),
    (bw.Breaker, "break_ms", "-3s"),
    (bw.Breaker, "break_ms", "soon"),
    (bw.Breaker, "trip_rule", "sometimes"),
    (bw.Breaker, "metrics_only", "perhaps"),
    (bw.Breaker, "name", ""),
    (bw.Breaker, "name", "x" * 500),
    (bw.Bulkhead, "max_concurrent", 0),
    (bw.Bulkhead, "max_wait_ms", "2d"),
    (bw.Limiter, "algorithm", "magic"),
    (bw.Limiter, "backoff_ratio", 1.0),
    (bw.RateLimiter, "rate_per_sec", 0),
    (bw.RateLimiter, "burst", 0),
    (bw.Budget, "kind", "infinite"),
    (bw.Budget, "max_tokens", 0.0005),
    (bw.Retry, "max_attempts", -2),
    (bw.Retry, "jitter", "wobbly"),
    (bw.Retry, "multiplier", 0.5),
])
def test_out_of_range_values_are_value_errors_naming_the_field(cls, field, value):
    with pytest.raises(ValueError) as e:
        cls(**{field: value})
    assert isinstance(e.value, bw.BreakwaterError)
    assert e.value.field == field
    assert field in str(e.value)


def test_rules_between_fields_are_checked_too():
    with pytest.raises(bw.ConfigError) as e:
        bw.Breaker(trip_rule="count_window", window_size=10, minimum_calls=20)
    assert e.value.field in ("minimum_calls", "window_size")
    with pytest.raises(bw.ConfigError) as e:
        bw.Breaker(break_ms="30s", max_break_ms="10s")
    assert e.value.field == "max_break_ms"
    with pytest.raises(bw.ConfigError):
        bw.Limiter(initial_limit=500, max_limit=100)


def test_nul_in_text_and_pointer_fields():
    with pytest.raises(ValueError):
        bw.Breaker(name="a\x00b")
    with pytest.raises((ValueError, TypeError)):
        bw.Breaker(sink="stderr")
    with pytest.raises((ValueError, TypeError)):
        bw.Breaker(clock_ns=1)


def test_good_values_in_every_form():
    b = bw.Breaker(failure_ratio="50%", trip_rule="TIME_WINDOW",
                   break_ms=datetime.timedelta(seconds=30), metrics_only=False,
                   minimum_calls=5, window_ms=2500.0)
    assert b.state == "closed"
    with pytest.raises(ValueError):
        bw.Breaker(break_ms=datetime.timedelta(microseconds=10))


def test_classifier_and_other_arguments():
    with pytest.raises(TypeError):
        bw.Retry(retry_on=42)
    with pytest.raises(TypeError):
        bw.Retry(retry_on=(ValueError, "x"))
    with pytest.raises(TypeError):
        bw.Retry(retry_on=int)
    with pytest.raises(TypeError):
        bw.Breaker(ignore="ValueError")
    with pytest.raises(TypeError):
        bw.Retry(budget="budget")
    with pytest.raises(ValueError):
        bw.Retry(preset="no-such-preset")
    with pytest.raises(TypeError):
        bw.Breaker()(42)
    assert bw.Retry(preset="tenacity").name == "tenacity"


def test_clock_and_deadline_arguments():
    with pytest.raises(ValueError):
        bw.ManualClock(-1)
    with pytest.raises(TypeError):
        bw.ManualClock("0")
    c = bw.ManualClock()
    with pytest.raises(ValueError):
        c.advance(-1)
    with pytest.raises(TypeError):
        c.advance(None)
    with pytest.raises(TypeError):
        bw.deadline("2s")
    with pytest.raises(ValueError):
        bw.deadline(-1)
    with pytest.raises(ValueError):
        bw.deadline(math.nan)
    with pytest.raises(TypeError):
        bw.parse_header(2.5)
    for bad in ["", "-1", "1e3", "inf", "nan", ".5", "1.", "1,5", "0x10", "9" * 40]:
        with pytest.raises(ValueError):
            bw.parse_header(bad)


def test_misused_permits_and_with_blocks():
    b = bw.Breaker()
    with pytest.raises(RuntimeError):
        b.__exit__(None, None, None)
    p = b.acquire()
    with pytest.raises(ValueError):
        p.release(3)
    p.success()
