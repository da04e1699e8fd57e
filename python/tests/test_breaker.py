"""The asyncio toolkit's three agents' breakers, step by step, on a manual
clock: hotel_api 5/2/30 s, payment_api 3/3/60 s, search_agent 10/1/15 s
(consecutive failures to open / probe successes to close / seconds open)."""
import asyncio

import pytest

import breakwater as bw

AGENTS = [("hotel_api", 5, 2, 30), ("payment_api", 3, 3, 60),
          ("search_agent", 10, 1, 15)]


class Down(Exception):
    pass


def fail(b):
    with pytest.raises(Down):
        with b:
            raise Down()


def ok(b):
    with b:
        pass


@pytest.mark.parametrize("name,failures,successes,open_s", AGENTS)
def test_agent_breaker_step_by_step(name, failures, successes, open_s):
    clock = bw.ManualClock()
    b = bw.Breaker(name, clock=clock, trip_rule="consecutive",
                   failure_threshold=failures, success_threshold=successes,
                   half_open_max_calls=successes, break_ms=f"{open_s}s")
    assert b.name == name and b.state == "closed"
    # one short of the threshold: still closed; a success resets the count
    for _ in range(failures - 1):
        fail(b)
    assert b.state == "closed"
    ok(b)
    assert b.stats()["consecutive_failures"] == 0
    for i in range(failures):
        assert b.state == "closed", i
        fail(b)
    assert b.state == "open"
    assert b.retry_in == pytest.approx(open_s)
    # open: rejected fast, nothing reaches the dependency
    calls = 0
    with pytest.raises(bw.BreakerOpen) as e:
        with b:
            calls += 1
    assert calls == 0 and e.value.retry_in == pytest.approx(open_s)
    assert not isinstance(e.value, Down)
    # one ms before the break ends: still open
    clock.advance(open_s - 0.001)
    assert b.state == "open" and b.retry_in == pytest.approx(0.001)
    with pytest.raises(bw.BreakerOpen):
        ok(b)
    clock.advance(0.001)
    assert b.state == "half_open"
    # a failed probe re-opens for a full break
    fail(b)
    assert b.state == "open" and b.retry_in == pytest.approx(open_s)
    clock.advance(open_s)
    # `successes` probe successes close it; one fewer leaves it half-open
    for i in range(successes):
        assert b.state == "half_open", i
        ok(b)
    assert b.state == "closed"
    s = b.stats()
    assert s["opens"] == 2 and s["closes"] == 1 and s["rejected"] == 2


def test_ignored_exceptions_count_neither_way():
    class Declined(Exception):  # a 4xx: the caller's fault
        pass
    b = bw.Breaker("payment_api", failure_threshold=3, ignore=Declined,
                   clock=bw.ManualClock())
    for _ in range(10):
        with pytest.raises(Declined):
            with b:
                raise Declined()
    assert b.state == "closed"
    s = b.stats()
    assert s["ignored"] == 10 and s["failures"] == 0
    # a predicate works too
    b2 = bw.Breaker(failure_threshold=1, ignore=lambda e: "404" in str(e),
                    clock=bw.ManualClock())
    with pytest.raises(Down):
        with b2:
            raise Down("404")
    assert b2.state == "closed"
    fail(b2)
    assert b2.state == "open"


def test_decorator_sync_and_async():
    clock = bw.ManualClock()
    b = bw.Breaker(failure_threshold=2, break_ms="1s", clock=clock)
    calls = []

    @b
    def f(x):
        calls.append(x)
        if x < 0:
            raise Down()
        return x * 2

    @b
    async def g(x):
        await asyncio.sleep(0)
        calls.append(x)
        if x < 0:
            raise Down()
        return x * 3

    assert f(2) == 4 and f.__name__ == "f"
    assert asyncio.run(g(2)) == 6
    with pytest.raises(Down):
        f(-1)
    with pytest.raises(Down):
        asyncio.run(g(-1))
    with pytest.raises(bw.BreakerOpen):
        f(5)
    with pytest.raises(bw.BreakerOpen):
        asyncio.run(g(5))
    assert calls == [2, 2, -1, -1]


def test_permit_by_hand_and_nested_with():
    b = bw.Breaker(failure_threshold=1, clock=bw.ManualClock())
    p = b.acquire()
    p.release("ignored")
    with pytest.raises(RuntimeError):
        p.release("success")
    with pytest.raises(ValueError):
        b.acquire().release("maybe")
    # the same breaker nested: each with releases its own permit
    with b:
        with b:
            pass
    assert b.stats()["calls"] == 3


def test_async_with_many_tasks_each_own_permit():
    b = bw.Breaker(failure_threshold=1000, clock=bw.ManualClock())

    async def one(i):
        async with b:
            await asyncio.sleep(0)
            if i % 2:
                raise Down()

    async def main():
        res = await asyncio.gather(*(one(i) for i in range(100)),
                                   return_exceptions=True)
        return sum(isinstance(r, Down) for r in res)

    assert asyncio.run(main()) == 50
    s = b.stats()
    assert s["successes"] == 50 and s["failures"] == 50 and s["stale"] == 0


def test_isolate_and_reset():
    b = bw.Breaker(clock=bw.ManualClock())
    b.isolate()
    assert b.state == "isolated"
    with pytest.raises(bw.BreakerOpen) as e:
        ok(b)
    assert e.value.retry_in is None
    b.reset()
    assert b.state == "closed"
