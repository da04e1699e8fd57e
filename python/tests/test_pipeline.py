"""Pipeline([...]) over the C pipeline: strategies are the policy objects,
outermost first; every form (call, decorator, `for attempt in`, async);
failures raise the Python exceptions. Time is a manual clock: every wait is
exact and takes no real time."""
import asyncio

import pytest

import breakwater as bw
from conftest import HTTPError, Transient, flaky


def stack(clock, threshold=2, attempts=3, **retry):
    breaker = bw.Breaker("partner", clock=clock, trip_rule="consecutive",
                         failure_threshold=threshold, break_ms="30s")
    r = bw.Retry(max_attempts=attempts, base_ms=100, jitter="none",
                 retry_on=Transient, clock=clock, **retry)
    return breaker, r, bw.Pipeline([breaker, r], name="checkout")


def test_retry_inside_breaker_outside_counts_one_failure_per_call():
    clock = bw.ManualClock()
    breaker, _, pl = stack(clock)
    f = flaky(100)
    with pytest.raises(Transient) as e:
        pl.call(f)
    assert len(f.calls) == 3                   # three attempts
    assert clock.now() == pytest.approx(0.3)   # waits 0.1 + 0.2, exactly
    assert e.value.breakwater_giveup == "exhausted"
    s = breaker.stats()
    assert s["failures"] == 1 and s["state"] == "closed"  # one logical call
    with pytest.raises(Transient):
        pl.call(f)
    assert breaker.state == "open"
    # open: refused before any attempt, never retried
    before = len(f.calls)
    with pytest.raises(bw.BreakerOpen) as e:
        pl.call(f)
    assert len(f.calls) == before
    assert e.value.name == "partner" and e.value.retry_in == pytest.approx(30.0)  # opened at 0.6 s, now
    assert e.value.breakwater_giveup == "breaker"
    st = pl.stats()
    assert st["calls"] == 3 and st["attempts"] == 6 and st["successes"] == 0
    assert st["failures"]["exhausted"] == 2 and st["failures"]["breaker"] == 1


def test_success_after_transient_failures_returns_the_value():
    clock = bw.ManualClock()
    breaker, _, pl = stack(clock)
    f = flaky(2)
    assert pl.call(f) == "ok"
    assert len(f.calls) == 3
    assert breaker.stats()["successes"] == 1 and breaker.stats()["failures"] == 0
    assert pl.stats()["successes"] == 1


def test_permanent_error_raised_at_once_and_ignored_by_the_breaker():
    clock = bw.ManualClock()
    breaker, _, pl = stack(clock)
    f = flaky(1, HTTPError(404))
    with pytest.raises(HTTPError) as e:
        pl.call(f)
    assert len(f.calls) == 1 and clock.now() == 0
    assert e.value.breakwater_giveup == "permanent"
    s = breaker.stats()
    assert s["ignored"] == 1 and s["failures"] == 0


def test_breaker_ignore_is_permanent_without_a_retry():
    clock = bw.ManualClock()
    breaker = bw.Breaker(clock=clock, failure_threshold=1, trip_rule="consecutive",
                         ignore=lambda e: isinstance(e, HTTPError) and e.status < 500)
    pl = bw.Pipeline([breaker])
    with pytest.raises(HTTPError):
        pl.call(flaky(1, HTTPError(400)))
    assert breaker.state == "closed"
    with pytest.raises(HTTPError):
        pl.call(flaky(1, HTTPError(503)))  # no retry: every other error is a failure
    assert breaker.state == "open"


def test_retry_after_is_a_minimum_delay():
    clock = bw.ManualClock()
    _, _, pl = stack(clock, attempts=2, max_ms="10s")
    f_exc = Transient()
    f_exc.retry_after = 2.0
    calls = []

    def g():
        calls.append(1)
        if len(calls) == 1:
            raise f_exc
        return "ok"
    assert pl.call(g) == "ok"
    assert clock.now() == pytest.approx(2.0)


def test_bulkhead_full_and_limiter_full():
    clock = bw.ManualClock()
    bh = bw.Bulkhead("rooms", max_concurrent=1, max_wait_ms=0, clock=clock)
    pl = bw.Pipeline([bh])
    inner = []

    def nested():
        with pytest.raises(bw.BulkheadFull) as e:
            pl.call(lambda: None)
        inner.append(e.value.breakwater_giveup)
        return "outer"
    assert pl.call(nested) == "outer"
    assert inner == ["limit"]
    assert bh.stats()["in_use"] == 0

    lim = bw.Limiter("lim", initial_limit=1, min_limit=1, max_limit=1, clock=clock)
    pl2 = bw.Pipeline([lim])
    with pytest.raises(bw.LimiterFull):
        pl2.call(lambda: pl2.call(lambda: None))
    assert lim.stats()["in_flight"] == 0


def test_bulkhead_waits_for_a_slot_on_the_manual_clock():
    clock = bw.ManualClock()
    bh = bw.Bulkhead("rooms", max_concurrent=1, clock=clock)
    waits = []

    def sleep(seconds):
        waits.append(seconds)
        clock.advance(seconds)
        if len(waits) == 3:
            permit.release()  # the holder finishes during the third wait
    pl = bw.Pipeline([(bh, 1.0)], sleep=sleep)
    permit = bh.acquire()
    assert pl.call(lambda: "got it") == "got it"
    assert len(waits) == 3 and all(w > 0 for w in waits)
    # nobody releases: the wait ends after max_wait (1 s), then BulkheadFull
    permit = bh.acquire()
    waits.clear()
    with pytest.raises(bw.BulkheadFull):
        bw.Pipeline([(bh, 1.0)], sleep=lambda s: clock.advance(s)).call(lambda: None)
    permit.release()


def test_rate_limiter_refusal():
    clock = bw.ManualClock()
    rl = bw.RateLimiter("api", rate_per_sec=1, burst=1, clock=clock)
    pl = bw.Pipeline([rl])
    assert pl.call(lambda: 1) == 1
    with pytest.raises(bw.RateLimited) as e:
        pl.call(lambda: 2)
    assert e.value.name == "api"
    # with a wait long enough for the next token, it paces instead
    assert bw.Pipeline([(rl, 2.0)]).call(lambda: 3) == 3
    assert clock.now() == pytest.approx(1.0)


def test_deadline_strategy_bounds_the_retries():
    clock = bw.ManualClock()
    r = bw.Retry(max_attempts=10, base_ms="400ms", jitter="none", multiplier=1,
                 retry_on=Transient, clock=clock)
    pl = bw.Pipeline([bw.deadline(1.0), r])
    f = flaky(100)
    with pytest.raises(bw.DeadlineExceeded) as e:
        pl.call(f)
    assert isinstance(e.value.__cause__, Transient)
    assert e.value.breakwater_giveup == "deadline"
    assert len(f.calls) == 3          # at 0, 0.4, 0.8; a retry at 1.2 would be late
    assert clock.now() == pytest.approx(0.8)


def test_min_attempt_sends_no_attempt_with_too_little_deadline_left():
    # attempts 400 ms apart under a 1 s deadline: the one at 0.8 s has
    # 0.2 s left; min_attempt 0.25 does not send it, 0.2 does
    for min_attempt, calls in ((0.25, 2), (0.2, 3)):
        clock = bw.ManualClock()
        r = bw.Retry(max_attempts=10, base_ms="400ms", jitter="none", multiplier=1,
                     retry_on=Transient, clock=clock)
        pl = bw.Pipeline([bw.deadline(1.0), r], min_attempt=min_attempt)
        f = flaky(100)
        with pytest.raises(bw.DeadlineExceeded) as e:
            pl.call(f)
        assert e.value.breakwater_giveup == "deadline"
        assert len(f.calls) == calls
        assert clock.now() == pytest.approx(0.8)
    with pytest.raises(ValueError, match="min_attempt must be >= 0"):
        bw.Pipeline([], min_attempt=-1)
    with pytest.raises(ValueError, match="at most 86400 s"):
        bw.Pipeline([], min_attempt=float("inf"))


def test_context_deadline_bounds_the_call():
    clock = bw.ManualClock()
    r = bw.Retry(max_attempts=10, base_ms="400ms", jitter="none", multiplier=1,
                 retry_on=Transient, clock=clock)
    pl = bw.Pipeline([r])
    f = flaky(100)
    with bw.deadline(0.5, clock=clock):
        with pytest.raises(bw.DeadlineExceeded):
            pl.call(f)
    assert len(f.calls) == 2


def test_timeout_is_the_attempts_deadline_for_sync_code():
    clock = bw.ManualClock()
    r = bw.Retry(max_attempts=2, base_ms=100, jitter="none", clock=clock)
    pl = bw.Pipeline([r, bw.Timeout(0.25)])
    seen = []
    assert pl.call(lambda: seen.append(bw.remaining())) is None
    assert seen == [pytest.approx(0.25)]


def test_budget_exhausted():
    clock = bw.ManualClock()
    budget = bw.Budget("hotel", kind="token_bucket", max_tokens=2, token_ratio=0.1,
                       clock=clock)
    r = bw.Retry(max_attempts=5, base_ms=10, jitter="none", retry_on=Transient,
                 budget=budget, clock=clock)
    pl = bw.Pipeline([r])
    f = flaky(1000)
    with pytest.raises(bw.BudgetExhausted) as e:
        pl.call(f)
    assert isinstance(e.value.__cause__, Transient)
    assert e.value.breakwater_giveup == "budget"


def test_fallback_parks_the_work_and_returns_its_value():
    clock = bw.ManualClock()
    breaker, _, _ = stack(clock, threshold=1)
    parked = []
    # The work of each call (here from a counter: the calls take no
    # argument) is parked in a real ParkingLot by the C core's fallback,
    # then the Python fallback's value is returned.
    lot = bw.ParkingLot("orders", clock=clock)
    orders = iter(range(100))
    pl = bw.Pipeline([breaker], park=lot, work=lambda: {"order": next(orders)},
                     fallback=lambda exc: parked.append(exc) or "parked")
    assert pl.call(flaky(1)) == "parked"
    assert pl.call(flaky(0)) == "parked"      # open: refused, parked too
    assert isinstance(parked[0], Transient) and isinstance(parked[1], bw.BreakerOpen)
    assert [e.breakwater_parked for e in parked] == [True, True]
    assert len(lot) == 2
    # reprocessed once the breaker closes again
    clock.advance(30)
    assert pl.call(flaky(0)) == "ok"
    assert breaker.state == "closed"
    replayed = []
    rp = bw.Reprocessor(lot, replayed.append, breaker=breaker)
    assert rp.step() == 2
    assert replayed == [{"order": 0}, {"order": 1}]   # in order, once each
    assert len(lot) == 0 and rp.step() == 0
    s = lot.stats()
    assert s["parked"] == 2 and s["acked"] == 2 and s["dead_lettered"] == 0


def test_decorator_and_attempt_loop():
    clock = bw.ManualClock()
    breaker, _, pl = stack(clock)
    f = flaky(1)

    @pl
    def charge(order):
        """charges an order"""
        return f() + order
    assert charge("!") == "ok!" and charge.__doc__ == "charges an order"

    g = flaky(2)
    for attempt in pl:
        with attempt:
            result = g()
    assert result == "ok" and len(g.calls) == 3 and attempt.number == 3

    h = flaky(100)
    with pytest.raises(Transient):
        for attempt in pl:
            with attempt:
                h()
    assert len(h.calls) == 3
    breaker.isolate()
    with pytest.raises(bw.BreakerOpen):
        for attempt in pl:
            with attempt:
                pytest.fail("an attempt while isolated")


def test_base_exception_cancels_the_call():
    clock = bw.ManualClock()
    breaker, _, pl = stack(clock)

    def interrupted():
        raise KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt):
        pl.call(interrupted)
    st = pl.stats()
    assert st["cancelled"] == 1
    s = breaker.stats()
    assert s["failures"] == 0 and s["ignored"] == 1


def test_async_retries_on_the_manual_clock():
    clock = bw.ManualClock()
    breaker, _, pl = stack(clock)
    f = flaky(2)

    @pl
    async def fetch():
        await asyncio.sleep(0)
        return f()
    assert asyncio.run(fetch()) == "ok"
    assert len(f.calls) == 3 and clock.now() == pytest.approx(0.3)

    async def loop_form():
        g = flaky(100)
        with pytest.raises(Transient):
            async for attempt in pl:
                async with attempt:
                    g()
        return len(g.calls)
    assert asyncio.run(loop_form()) == 3


def test_async_timeout_cancels_a_hung_attempt():
    r = bw.Retry(max_attempts=2, base_ms=1, jitter="none")
    pl = bw.Pipeline([r, bw.Timeout(0.02)])
    started = []

    async def hang():
        started.append(1)
        await asyncio.sleep(3600)

    with pytest.raises(TimeoutError):
        asyncio.run(pl.call_async(hang))
    assert len(started) == 2          # timed out, retried, timed out
    assert pl.stats()["failures"]["exhausted"] == 1


def test_async_timeout_on_a_manual_clock_follows_the_clock():
    # A ManualClock has no timer: a coroutine attempt is cut when the clock
    # is advanced to its time limit, exactly, and never by real time.
    clock = bw.ManualClock()
    r = bw.Retry(max_attempts=2, base_ms=100, jitter="none", clock=clock)
    pl = bw.Pipeline([r, bw.Timeout(0.5)])
    starts = []

    async def hang():
        starts.append(clock.now())
        await asyncio.Event().wait()

    async def turns(until=lambda: False):
        for _ in range(50):                   # loop turns, not time
            if until():
                return
            await asyncio.sleep(0)

    async def scenario():
        t = asyncio.create_task(pl.call_async(hang))
        await turns()
        assert starts == [0.0]
        clock.advance(0.499)
        await turns()
        assert not t.done() and starts == [0.0]
        clock.advance(0.001)                  # cut at 0.5, retried 100 ms later
        await turns(lambda: len(starts) == 2)
        assert starts == [0.0, pytest.approx(0.6)]
        clock.advance(0.5)
        await turns(t.done)
        with pytest.raises(TimeoutError):
            await t
        assert pl.stats()["failures"]["exhausted"] == 1
        # an answer in time is returned; a cancelled call cancels its
        # attempt; neither leaves an alarm on the clock
        async def quick():
            clock.advance(0.2)
            return "ok"
        assert await pl.call_async(quick) == "ok"
        t = asyncio.create_task(pl.call_async(hang))
        await turns(lambda: len(starts) == 3)
        t.cancel()
        with pytest.raises(asyncio.CancelledError):
            await t
        assert clock._alarms == []
        assert pl.stats()["cancelled"] == 1

    asyncio.run(scenario())


def test_pipeline_gave_up_event():
    events = []
    sink = bw.Sink(events.append)
    clock = bw.ManualClock()
    pl = bw.Pipeline([bw.Breaker(clock=clock)], name="pay", sink=sink)
    with pytest.raises(Transient):
        pl.call(flaky(1))
    assert [e["event"] for e in events] == ["pipeline_gave_up"]
    assert events[0]["name"] == "pay" and events[0]["kind"] == "pipeline"


def test_shared_breaker_in_a_pipeline(segment):
    sb = bw.SharedBreaker("pl_shared", segment=segment, failure_threshold=1,
                          break_ms="60s")
    pl = bw.Pipeline([sb])
    with pytest.raises(Transient):
        pl.call(flaky(1))
    with pytest.raises(bw.BreakerOpen) as e:
        pl.call(flaky(0))
    assert e.value.name == "pl_shared"


def test_bad_pipelines():
    clock = bw.ManualClock()
    r = bw.Retry(clock=clock)
    with pytest.raises(TypeError):
        bw.Pipeline(bw.Breaker())                 # not a list
    with pytest.raises(TypeError, match=r"strategies\[1\]"):
        bw.Pipeline([bw.Breaker(clock=clock), "retry"])
    with pytest.raises(TypeError, match="Budget"):
        bw.Pipeline([bw.Budget()])
    with pytest.raises(ValueError, match="at most one retry"):
        bw.Pipeline([r, bw.Retry(clock=clock)])
    with pytest.raises(ValueError, match="clock"):
        bw.Pipeline([bw.Breaker(clock=clock), bw.Retry()])  # two clocks
    with pytest.raises(bw.ConfigError) as e:
        bw.Pipeline([r, bw.deadline(1)])           # a deadline after the retry
    assert "strategies[1]" in e.value.field + str(e.value)
    with pytest.raises(bw.ConfigError) as e:
        bw.Pipeline([bw.Timeout(1), r])           # a timeout before the retry
    with pytest.raises(ValueError, match="strategies"):
        bw.Pipeline([bw.Timeout(1)] * 9)
    with pytest.raises(TypeError):
        bw.Pipeline([(bw.Breaker(), 1.0)])          # only limits wait
    with pytest.raises(ValueError):
        bw.Pipeline([(bw.Bulkhead(), -1)])
    with pytest.raises(TypeError):
        bw.Pipeline([], fallback=42)
    with pytest.raises(ValueError):
        bw.Timeout(-1)
    with pytest.raises(TypeError):
        bw.Pipeline([])(42)
