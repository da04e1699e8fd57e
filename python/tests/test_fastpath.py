"""The decorators' lean hot paths keep the semantics of `with policy:`:
a breaker decorator reuses C permits (nested and concurrent calls each own
one), binds as a method, and counts outcomes as the context manager does;
a retry decorator starts the C iterator only at the first failure, with the
first attempt's start time (max_elapsed_ms counts from it)."""
import asyncio
import threading

import pytest

import breakwater as bw


class Down(Exception):
    pass


class ClientError(Exception):
    pass


def test_breaker_decorator_counts_like_the_context_manager():
    clock = bw.ManualClock()
    b = bw.Breaker("d", clock=clock, trip_rule="consecutive", failure_threshold=3,
                   ignore=ClientError)

    @b
    def call(exc=None):
        if exc is not None:
            raise exc
        return "ok"
    assert call() == "ok"
    with pytest.raises(ClientError):
        call(ClientError())
    with pytest.raises(bw.BulkheadFull):
        call(bw.BulkheadFull("another policy refused"))
    with pytest.raises(TimeoutError):
        call(TimeoutError())
    s = b.stats()
    assert s["successes"] == 1 and s["ignored"] == 2 and s["failures"] == 1
    with pytest.raises(Down):
        call(Down())
    with pytest.raises(Down):
        call(Down())
    assert b.state == "open"
    with pytest.raises(bw.BreakerOpen) as e:
        call()
    assert e.value.retry_in == pytest.approx(b.retry_in)


def test_nested_and_recursive_calls_each_own_a_permit():
    b = bw.Breaker("rec", half_open_max_calls=1)

    @b
    def depth(n):
        return 0 if n == 0 else 1 + depth(n - 1)
    assert depth(50) == 50
    s = b.stats()
    assert s["admitted"] == 51 and s["successes"] == 51


def test_decorated_method_binds_self():
    b = bw.Breaker("m")

    class Client:
        def __init__(self):
            self.calls = 0

        @b
        def get(self, x, *, y=1):
            """gets"""
            self.calls += 1
            return x + y
    c = Client()
    assert c.get(1, y=2) == 3 and c.calls == 1
    assert Client.get.__name__ == "get" and Client.get.__doc__ == "gets"
    assert Client.get.__wrapped__ is not None


def test_concurrent_decorated_calls_release_every_permit():
    """Conservation: admitted = successes + failures, nothing in flight."""
    b = bw.Breaker("conc", trip_rule="consecutive", failure_threshold=1_000_000)

    @b
    def work(i):
        if i % 7 == 0:
            raise Down()
    n_threads, per_thread = 4, 2000

    def run():
        for i in range(per_thread):
            try:
                work(i)
            except Down:
                pass
    threads = [threading.Thread(target=run) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    s = b.stats()
    assert s["admitted"] == n_threads * per_thread
    assert s["successes"] + s["failures"] == s["admitted"]


def test_async_breaker_decorator_cancellation_is_ignored():
    b = bw.Breaker("ac", trip_rule="consecutive", failure_threshold=1)

    @b
    async def slow():
        await asyncio.sleep(3600)

    async def main():
        t = asyncio.create_task(slow())
        await asyncio.sleep(0)
        t.cancel()
        with pytest.raises(asyncio.CancelledError):
            await t
    asyncio.run(main())
    s = b.stats()
    assert s["ignored"] == 1 and s["failures"] == 0 and b.state == "closed"


def test_retry_lazy_start_counts_elapsed_from_the_first_attempt():
    clock = bw.ManualClock()
    r = bw.Retry(max_attempts=0, max_elapsed_ms="10s", base_ms="1s", multiplier=1,
                 jitter="none", retry_on=Down, clock=clock)
    calls = []

    @r
    def f():
        calls.append(clock.now())
        if len(calls) == 1:
            clock.advance(8)  # the first attempt itself takes 8 s
        raise Down()
    with pytest.raises(Down) as e:
        f()
    # counted from 0 (not from the failure at 8 s): attempts at 0, 9 and
    # 10 s, then 10 s have elapsed (from 8 s it would go on until 18 s)
    assert calls == [0.0, 9.0, 10.0]
    assert e.value.breakwater_giveup == "elapsed"


def test_retry_fast_path_success_and_slow_paths():
    clock = bw.ManualClock()
    budget = bw.Budget(kind="token_bucket", max_tokens=10, clock=clock)
    with_budget = bw.Retry(max_attempts=3, base_ms=1, jitter="none", retry_on=Down,
                           budget=budget, clock=clock)
    plain = bw.Retry(max_attempts=3, base_ms=1, jitter="none", retry_on=Down, clock=clock)
    assert plain.call(lambda: 5) == 5
    # with a budget, every call is a request the budget counts, success too
    assert with_budget.call(lambda: 6) == 6
    assert budget.stats()["requests"] == 1 and budget.stats()["successes"] == 1
    # a passed deadline refuses before the first attempt (slow path)
    with bw.deadline(0, clock=clock):
        with pytest.raises(bw.DeadlineExceeded):
            plain.call(lambda: pytest.fail("attempted after the deadline"))

    async def main():
        n = []

        async def g():
            n.append(1)
            if len(n) < 3:
                raise Down()
            return "third"
        return await plain.call_async(g), len(n)
    assert asyncio.run(main()) == ("third", 3)


def _is_c_hot_path(f):
    return type(f).__module__ == "breakwater._hot" or type(f).__name__ == "Guarded"


@pytest.mark.parametrize("with_sink", [False, True])
def test_broken_ignore_predicate_counts_a_failure_and_keeps_the_error(with_sink):
    """Both decorator paths (the C hot path without a sink, the Python one
    with a sink) release the permit even when the classifier raises."""
    events = []
    b = bw.Breaker("broken", trip_rule="consecutive", failure_threshold=1,
                   half_open_max_calls=1, ignore=lambda e: 1 / 0,
                   sink=bw.Sink(events.append) if with_sink else None)

    @b
    def call():
        raise Down()
    assert _is_c_hot_path(call) is (not with_sink and bw._policies._hot is not None)
    with pytest.raises(Down):
        call()
    s = b.stats()
    assert s["failures"] == 1 and b.state == "open"
    assert (events[0]["event"] == "circuit_opened") if with_sink else events == []


def test_c_hot_path_is_used_without_a_sink_only():
    if bw._policies._hot is None:
        pytest.skip("built without breakwater._hot")

    def f():
        return 1
    assert _is_c_hot_path(bw.Breaker()(f))
    assert not _is_c_hot_path(bw.Breaker(sink=bw.Sink(print))(f))
    assert not _is_c_hot_path(bw.Registry(sink=bw.Sink(print)).breaker("r")(f))
    assert _is_c_hot_path(bw.Registry().breaker("r")(f))

    async def g():
        return 1
    assert not _is_c_hot_path(bw.Breaker()(g))
