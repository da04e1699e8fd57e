"""The adaptive limiter's startup and stuck options through the binding
(docs/limiter.md, "Limited slow start" and "Giving up on stuck attempts"):
startup_max_step bounds each startup step, stuck_timeout cuts an
attempt admitted above the proven level to the stuck age inside a
Pipeline's retry, and drop_tolerance lets sparse drops pass — exact on a manual clock, the coroutine form cancelled
when the clock reaches the cut."""
import asyncio

import pytest

import breakwater as bw


def grow_at(lim, n):
    """Rounds of n calls at once, each answered at once, until the limit
    stops growing (four rounds unchanged); the limit then."""
    before, still = 0, 0
    for _ in range(200):
        now = lim.limit
        assert now >= n
        still = still + 1 if now == before else 0
        if still == 4:
            return now
        before = now
        permits = [lim.acquire() for _ in range(n)]
        for p in permits:
            p.release("success")
    pytest.fail("the limit still grows after 200 rounds")


def startup_limiter(**fields):
    # AIMD from 8 with slow start (startup_headroom 1: doubling per round
    # trip) and the probe_headroom cap; no overload memory.
    return bw.Limiter("partner", algorithm="aimd", initial_limit=8, probe_headroom=0.125,
                      overload_memory_ms=0, startup_headroom=1.0,
                      clock=bw.ManualClock(), **fields)


def test_startup_max_step_bounds_each_startup_step():
    lim = startup_limiter(startup_max_step=10)
    assert grow_at(lim, 8) == 16      # proven 8: doubling is within the step
    assert grow_at(lim, 16) == 26     # proven 16: 32 bounded to 16 + 10
    assert grow_at(lim, 26) == 36
    s = lim.stats()
    assert s["proven"] == 26 and s["startup"] is True
    # without the bound (the default, 0) the same levels double
    lim = startup_limiter()
    assert [grow_at(lim, n) for n in (8, 16, 32)] == [16, 32, 64]


def test_the_new_limiter_fields_are_checked_by_the_core():
    with pytest.raises(bw.ConfigError) as e:
        bw.Limiter(startup_max_step=1000001)
    assert e.value.field == "startup_max_step" and "1000000" in str(e.value)
    with pytest.raises(bw.ConfigError) as e:
        bw.Limiter(stuck_timeout=True)            # needs stuck_ratio
    assert e.value.field == "stuck_timeout" and "stuck_ratio" in str(e.value)
    with pytest.raises(bw.ConfigError) as e:
        bw.Limiter(stuck_ratio=2, stuck_timeout="sometimes")
    assert e.value.field == "stuck_timeout"
    bw.Limiter(stuck_ratio=2, stuck_timeout="true", startup_max_step=100)
    reg = bw.Registry()
    assert reg.limiter("p", stuck_ratio=2, stuck_timeout=True).stats()["startup"] is False


def test_drop_tolerance_lets_sparse_drops_pass():
    # 20 in flight of a limit of 20, drop_tolerance 0.05: one drop per round
    # (the next 20 releases) is no congestion, the second one is (AIMD's
    # backoff 0.9: 18).
    lim = bw.Limiter("partner", algorithm="aimd", initial_limit=20,
                     drop_tolerance=0.05, clock=bw.ManualClock())
    permits = [lim.acquire() for _ in range(20)]
    permits.pop().release("failure")
    assert lim.limit == 20
    permits.pop().release("failure")
    assert lim.limit == 18
    s = lim.stats()
    assert (s["drops"], s["tolerated_drops"]) == (2, 1)
    for p in permits:
        p.release("success")
    with pytest.raises(bw.ConfigError) as e:
        bw.Limiter(drop_tolerance=0.6)
    assert e.value.field == "drop_tolerance" and "[0, 0.5]" in str(e.value)


def stuck_pipeline(clock, stuck_timeout=True):
    """[Retry, Limiter, Timeout(2)]: the limiter inside the retry, each
    attempt 2 s. After 16 good answers of 100 ms (the limiter cuts no
    attempt before that many) the proven level is 1 and the stuck age
    2 x 100 ms."""
    lim = bw.Limiter("partner", initial_limit=10, stuck_ratio=2,
                     stuck_timeout=stuck_timeout, clock=clock)
    retry = bw.Retry("partner", max_attempts=2, base_ms=50, jitter="none",
                     retry_on=TimeoutError, clock=clock)
    pl = bw.Pipeline([retry, lim, bw.Timeout(2)])

    def answered_in_100_ms():
        clock.advance(0.1)
        return "ok"
    for _ in range(16):
        assert pl.call(answered_in_100_ms) == "ok"
    s = lim.stats()
    assert (s["proven"], s["in_flight"]) == (1, 0)
    return lim, pl


def test_a_plain_attempt_above_the_proven_level_sees_the_stuck_age():
    clock = bw.ManualClock()
    lim, pl = stuck_pipeline(clock)
    # at level 1 (proven): the attempt's own 2 s
    for attempt in pl:
        with attempt:
            assert attempt.timeout == 2.0
    # at level 2 (a call holds level 1): cut to 200 ms, its deadline
    other = lim.acquire()
    seen = []

    def stuck():
        seen.append(bw.remaining())
        clock.advance(0.2)
        raise TimeoutError("no answer")       # a plain function is not preempted
    with pytest.raises(TimeoutError) as e:
        pl.call(stuck)
    # timed out after 200 ms, its slot held (the partner may still be at
    # it), and retried at once: a cut attempt waits for no backoff, its
    # limit paces it. The retry, at level 3 (the other call and the held
    # slot are in flight), is above the proven level too: cut to 200 ms and
    # held as well. By then the first probe is stuck: the limit is cut to
    # the proven level.
    assert seen == [0.2, 0.2]
    assert e.value.breakwater_giveup == "exhausted"
    s = lim.stats()
    assert (s["stuck_timeouts"], s["timed_out"], s["held"], s["in_flight"]) == (2, 2, 2, 3)
    assert s["limit"] == 1
    other.release("success")


def test_without_stuck_timeout_the_attempt_keeps_its_own_limit():
    clock = bw.ManualClock()
    lim, pl = stuck_pipeline(clock, stuck_timeout=False)
    other = lim.acquire()
    seen = []
    assert pl.call(lambda: seen.append(bw.remaining()) or "ok") == "ok"
    assert seen == [2.0] and lim.stats()["stuck_timeouts"] == 0
    other.release("success")


def test_a_coroutine_attempt_above_the_proven_level_is_cut_at_the_stuck_age():
    clock = bw.ManualClock()
    lim, pl = stuck_pipeline(clock)

    async def scenario():
        b_go = asyncio.Event()
        b_seen, c_seen, c_cancelled = [], [], []

        async def b():                         # admitted at level 1: its own 2 s
            b_seen.append(bw.remaining())
            await b_go.wait()
            return "b"

        async def c():                         # admitted at level 2: the stuck age
            c_seen.append(bw.remaining())
            try:
                await asyncio.Event().wait()   # the partner never answers
            except asyncio.CancelledError:
                c_cancelled.append(clock.now())
                raise

        tb = asyncio.create_task(pl.call_async(b))
        await asyncio.sleep(0)
        tc = asyncio.create_task(pl.call_async(c))
        for _ in range(5):
            await asyncio.sleep(0)
        assert b_seen == [2.0] and c_seen == [0.2]
        admitted = clock.now()
        clock.advance(0.199)                   # 1 ms short of the stuck age
        for _ in range(5):
            await asyncio.sleep(0)
        assert not tc.done() and c_cancelled == []
        clock.advance(0.001)                   # the stuck age: cut, exactly
        for _ in range(50):                    # a few loop turns, no real time
            if len(c_seen) == 2:
                break
            await asyncio.sleep(0)
        # cut, and retried at once (a cut attempt waits for no backoff: its
        # limit paces it), above the proven level again: the stuck age too
        assert c_cancelled == [pytest.approx(admitted + 0.2, abs=1e-9)]
        assert c_seen == [0.2, 0.2] and not tc.done()
        clock.advance(0.2)
        for _ in range(50):
            if tc.done():
                break
            await asyncio.sleep(0)
        assert tc.done()
        with pytest.raises(TimeoutError) as e:
            await tc
        assert c_cancelled == [pytest.approx(admitted + 0.2, abs=1e-9),
                               pytest.approx(admitted + 0.4, abs=1e-9)]
        assert e.value.breakwater_giveup == "exhausted"
        s = lim.stats()
        assert (s["stuck_timeouts"], s["timed_out"], s["held"]) == (2, 2, 2)
        # b, at a proven level, is untouched by the cut and answers
        assert not tb.done()
        b_go.set()
        assert await tb == "b"
        return admitted

    admitted = asyncio.run(scenario())
    # each cut attempt's slot is held as long as it could have run: its own
    # 2 s x (1 + timeout_hold_ratio 0.5) from its admission (the retry's
    # 200 ms later); the limit is 1
    clock.set(admitted + 2.999)
    with pytest.raises(bw.LimiterFull):
        lim.acquire()
    assert lim.stats()["held"] == 2
    clock.set(admitted + 3.0)
    with pytest.raises(bw.LimiterFull):
        lim.acquire()
    assert lim.stats()["held"] == 1
    clock.set(admitted + 3.2)
    lim.acquire().release("success")
    assert lim.stats()["held"] == 0
