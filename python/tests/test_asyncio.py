"""asyncio: 1,000 concurrent tasks through a limiter and a breaker with a
heartbeat that keeps ticking; the bulkhead's asyncio wait; rate limiting."""
import asyncio

import pytest

import breakwater as bw


class Down(Exception):
    pass


def test_thousand_tasks_through_limiter_and_breaker_heartbeat_ticks():
    limiter = bw.Limiter("partner", algorithm="aimd", initial_limit=50,
                         min_limit=10, max_limit=200)
    breaker = bw.Breaker("partner", failure_threshold=1000, break_ms="5s")
    in_flight = 0
    peak = 0

    async def call(i):
        nonlocal in_flight, peak
        async with breaker:
            async with limiter:
                in_flight += 1
                peak = max(peak, in_flight)
                try:
                    await asyncio.sleep(0.002)
                    if i % 10 == 0:
                        raise Down()
                    return i
                finally:
                    in_flight -= 1

    async def main():
        ticks = []  # the calls in flight at each tick
        stop = asyncio.Event()

        async def heartbeat():
            while not stop.is_set():
                ticks.append(in_flight)
                await asyncio.sleep(0)  # one tick a turn of the loop
        hb = asyncio.create_task(heartbeat())
        await asyncio.sleep(0)
        results = await asyncio.gather(*(call(i) for i in range(1000)),
                                       return_exceptions=True)
        stop.set()
        await hb
        return results, ticks

    results, ticks = asyncio.run(main())
    ok = [r for r in results if isinstance(r, int)]
    down = [r for r in results if isinstance(r, Down)]
    shed = [r for r in results if isinstance(r, bw.LimiterFull)]
    assert len(ok) + len(down) + len(shed) == 1000
    assert all(r % 10 for r in ok) and len(down) >= 1
    # the limiter held concurrency at its limit: many tasks were shed
    assert 1 <= peak <= 200 and shed
    ls, bs = limiter.stats(), breaker.stats()
    assert ls["admitted"] == len(ok) + len(down) and ls["rejected"] == len(shed)
    assert ls["in_flight"] == 0
    # the breaker saw each admitted call once; sheds count neither way
    assert bs["successes"] == len(ok) and bs["failures"] == len(down)
    assert bs["ignored"] == len(shed) and bs["state"] == "closed"
    # the heartbeat kept ticking while calls were inside the limiter and the
    # breaker: their awaits gave the loop back (calls that held it would run
    # one after another, and no tick would see more than one in flight)
    assert len(ticks) >= 2
    assert max(ticks) > 1, ticks


def test_bulkhead_async_waits_fifo_without_blocking():
    bh = bw.Bulkhead("booking_agent", max_concurrent=2, max_wait_ms="2s")
    order = []
    ticks = 0
    ticks_at_in = {}  # the heartbeat's ticks when worker i got its slot

    async def worker(i):
        async with bh:
            order.append(("in", i))
            ticks_at_in[i] = ticks
            await asyncio.sleep(0.02)
            order.append(("out", i))

    async def main():
        stop = asyncio.Event()

        async def heartbeat():
            nonlocal ticks
            while not stop.is_set():
                ticks += 1
                await asyncio.sleep(0)  # one tick a turn of the loop
        hb = asyncio.create_task(heartbeat())
        await asyncio.gather(*(worker(i) for i in range(6)))
        stop.set()
        await hb

    asyncio.run(main())
    ins = [i for k, i in order if k == "in"]
    assert ins == list(range(6))  # first come, first served
    running = peak = 0
    for k, _ in order:
        running += 1 if k == "in" else -1
        peak = max(peak, running)
    assert peak == 2
    # while the later workers waited for a slot the loop kept turning: the
    # heartbeat ticked between one pair's admission and the next
    assert ticks_at_in[0] < ticks_at_in[2] < ticks_at_in[4], ticks_at_in
    s = bh.stats()
    assert s["admitted"] == 6 and s["admitted_after_wait"] == 4
    assert s["in_use"] == 0 and s["waiting"] == 0


def test_bulkhead_sync_try_and_async_wait_timeout():
    bh = bw.Bulkhead(max_concurrent=1, max_wait_ms=50)
    with bh:
        with pytest.raises(bw.BulkheadFull):
            with bh:
                pass

    async def second():
        with pytest.raises(bw.BulkheadFull) as refused:
            async with bh:
                pass
        return str(refused.value)

    async def main():
        async with bh:
            waiter = asyncio.create_task(second())
            await asyncio.sleep(0)  # the waiter's first step: it queues
            waiting = bh.stats()["waiting"]
            message = await waiter
        async with bh:  # the slot came back
            pass
        return waiting, message
    waiting, message = asyncio.run(main())
    # it waited (not refused at once), for max_wait_ms, then gave up
    assert waiting == 1
    assert "no slot within 50 ms" in message, message
    s = bh.stats()
    assert s["wait_timeouts"] == 1 and s["in_use"] == 0 and s["waiting"] == 0


def test_bulkhead_cancelled_waiter_leaves_no_slot_behind():
    bh = bw.Bulkhead(max_concurrent=1, max_wait_ms="5s")

    async def main():
        async with bh:
            t = asyncio.create_task(bh.acquire_async())
            await asyncio.sleep(0.01)
            t.cancel()
            with pytest.raises(asyncio.CancelledError):
                await t
        async with bh:
            pass
    asyncio.run(main())
    s = bh.stats()
    assert s["cancelled"] == 1 and s["in_use"] == 0 and s["waiting"] == 0


def test_bulkhead_refuses_after_deadline():
    clock = bw.ManualClock()
    bh = bw.Bulkhead(max_concurrent=5, timeout_ms="1s", clock=clock)
    with bw.deadline(1.0, clock=clock):
        clock.advance(1.0)
        with pytest.raises(bw.DeadlineExceeded):
            with bh:
                pass
    with bh:
        pass


def test_ratelimiter_sync_refuses_async_paces():
    clock = bw.ManualClock()
    rl = bw.RateLimiter("api", rate_per_sec=10, burst=2, clock=clock)
    with rl:
        pass
    with rl:
        pass
    with pytest.raises(bw.RateLimited) as e:
        with rl:
            pass
    assert e.value.retry_in == pytest.approx(0.1)
    clock.advance(0.1)
    with rl:
        pass

    async def main():
        for _ in range(5):
            async with rl:
                pass
    t0 = clock.now()
    asyncio.run(main())
    # five calls paced at 10/s on the manual clock: 0.5 s of (virtual) waits
    assert clock.now() - t0 == pytest.approx(0.5)


def test_limiter_sheds_above_its_limit():
    lim = bw.Limiter(initial_limit=2, min_limit=1, max_limit=10)
    p1, p2 = lim.acquire(), lim.acquire()
    with pytest.raises(bw.LimiterFull):
        lim.acquire()
    p1.success()
    p2.release("timed_out")
    assert lim.stats()["drops"] >= 1
