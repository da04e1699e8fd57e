"""Retry: transient-only (tenacity's retry_if_exception_type), a permanent
4xx-like error never retried, breaker outside and retry inside, budgets,
deadlines, async waits on asyncio.sleep."""
import asyncio
import time

import pytest

import breakwater as bw
from conftest import HTTPError, Transient, flaky


def test_transient_retried_until_success():
    clock = bw.ManualClock()
    r = bw.Retry(max_attempts=3, base_ms="500ms", jitter="none",
                 retry_on=Transient, clock=clock)
    f = flaky(2)
    assert r.call(f) == "ok"
    assert len(f.calls) == 3
    # exponential 0.5 s then 1 s: the manual clock moved by the waits
    assert clock.now() == pytest.approx(1.5)


def test_transient_exhausted_raises_last_error():
    r = bw.Retry(max_attempts=3, base_ms=100, jitter="none", retry_on=Transient,
                 clock=bw.ManualClock())
    f = flaky(10)
    with pytest.raises(Transient) as e:
        r.call(f)
    assert len(f.calls) == 3
    assert e.value.breakwater_giveup == "exhausted"


def test_permanent_4xx_never_retried():
    r = bw.Retry(max_attempts=5, base_ms=100,
                 retry_on=lambda e: isinstance(e, HTTPError) and e.status >= 500,
                 clock=bw.ManualClock())
    f = flaky(1, HTTPError(404))
    with pytest.raises(HTTPError):
        r.call(f)
    assert len(f.calls) == 1
    g = flaky(1, HTTPError(503))
    assert r.call(g) == "ok" and len(g.calls) == 2
    # an exception outside retry_on is permanent
    r2 = bw.Retry(retry_on=(ConnectionError, TimeoutError), clock=bw.ManualClock())
    h = flaky(1, ValueError)
    with pytest.raises(ValueError):
        r2.call(h)
    assert len(h.calls) == 1


def test_breaker_open_never_retried():
    clock = bw.ManualClock()
    b = bw.Breaker(failure_threshold=1, break_ms="30s", clock=clock)
    b.isolate()
    r = bw.Retry(max_attempts=5, retry_on=Exception, clock=clock)
    calls = []

    @r
    @b
    def f():
        calls.append(1)

    with pytest.raises(bw.BreakerOpen):
        f()
    assert calls == [] and b.stats()["rejected"] == 1


def test_breaker_outside_retry_inside():
    """One logical call = one breaker outcome: two transient failures the
    retry absorbs never reach the breaker; a call that exhausts its retries
    counts once."""
    clock = bw.ManualClock()
    b = bw.Breaker("hotel_api", failure_threshold=2, break_ms="30s", clock=clock)
    r = bw.Retry(max_attempts=3, base_ms=200, jitter="none", retry_on=Transient,
                 clock=clock)
    dep = flaky(2)

    @b
    @r
    def call():
        return dep()

    assert call() == "ok" and len(dep.calls) == 3
    assert b.stats()["failures"] == 0 and b.stats()["successes"] == 1
    down = flaky(100)

    @b
    @r
    def call_down():
        return down()

    for _ in range(2):
        with pytest.raises(Transient):
            call_down()
    assert len(down.calls) == 6 and b.state == "open"
    with pytest.raises(bw.BreakerOpen):
        call_down()
    assert len(down.calls) == 6


def test_tenacity_loop_sync_and_async():
    r = bw.Retry(max_attempts=4, base_ms=10, retry_on=Transient, clock=bw.ManualClock())
    f = flaky(2)
    seen = []
    for attempt in r:
        with attempt:
            seen.append(attempt.number)
            f()
    assert seen == [1, 2, 3]

    async def main():
        g = flaky(3)
        nums = []
        async for attempt in r:
            with attempt:
                nums.append(attempt.number)
                g()
        return nums
    assert asyncio.run(main()) == [1, 2, 3, 4]


def test_budget_refuses_retries():
    budget = bw.Budget("hotel", kind="token_bucket", max_tokens=3, token_ratio=0.1)
    r = bw.Retry(max_attempts=10, base_ms=1, retry_on=Transient, budget=budget,
                 clock=bw.ManualClock())
    # a bucket of 3 allows a retry while tokens > 1.5: the first failure
    # leaves 2 (retry allowed), the second 1 (refused)
    f = flaky(100)
    with pytest.raises(bw.BudgetExhausted) as e:
        r.call(f)
    assert isinstance(e.value.__cause__, Transient)
    assert len(f.calls) == 2
    s = budget.stats()
    assert s["denied"] == 1 and s["allowed"] == 1


def test_retry_after_hint_is_minimum_delay():
    class Throttled(Exception):
        retry_after = 2.0
    clock = bw.ManualClock()
    r = bw.Retry(max_attempts=2, base_ms=10, jitter="none", retry_on=Throttled,
                 clock=clock)
    f = flaky(1, Throttled)
    assert r.call(f) == "ok"
    assert clock.now() == pytest.approx(2.0)


def test_deadline_stops_retries():
    clock = bw.ManualClock()
    r = bw.Retry(max_attempts=10, base_ms="1s", jitter="none", multiplier=1,
                 retry_on=Transient, clock=clock)
    f = flaky(100)
    with bw.deadline(2.5, clock=clock):
        with pytest.raises(bw.DeadlineExceeded):
            r.call(f)
    # attempts at 0, 1 and 2 s; a retry at 3 s would pass the deadline
    assert len(f.calls) == 3
    with bw.deadline(0, clock=clock):
        with pytest.raises(bw.DeadlineExceeded):
            r.call(f)
    assert len(f.calls) == 3


def test_async_retry_waits_with_asyncio_sleep(monkeypatch):
    """Real clock: the waits are awaited asyncio.sleep calls of the delays,
    never time.sleep, and a heartbeat task ticks during each. asyncio.sleep
    is recorded and takes one turn of the loop instead of the delay."""
    r = bw.Retry(max_attempts=3, base_ms=100, jitter="none", retry_on=Transient)
    real_sleep = asyncio.sleep
    slept = []
    ticks = 0
    ticks_at_attempt = []

    async def recording_sleep(delay, *args, **kwargs):
        slept.append(delay)
        await real_sleep(0)

    def blocking_sleep(seconds):
        raise AssertionError(f"time.sleep({seconds}) would block the loop")

    monkeypatch.setattr(asyncio, "sleep", recording_sleep)
    monkeypatch.setattr(time, "sleep", blocking_sleep)

    @r
    async def call():
        ticks_at_attempt.append(ticks)
        if len(ticks_at_attempt) < 3:
            raise Transient()
        return "ok"

    async def main():
        stop = asyncio.Event()

        async def heartbeat():
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await real_sleep(0)
        hb = asyncio.create_task(heartbeat())
        out = await call()
        stop.set()
        await hb
        return out
    out = asyncio.run(main())
    assert out == "ok" and len(ticks_at_attempt) == 3
    assert slept == [0.1, 0.2]  # exponential from base_ms 100
    # the heartbeat ran during each wait: the loop was never blocked
    assert ticks_at_attempt[0] < ticks_at_attempt[1] < ticks_at_attempt[2]
