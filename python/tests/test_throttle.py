"""The client-side adaptive throttle (docs/throttle.md): exact on a manual
clock with a fixed seed. The tests replay the seed's draws with the core's
own generator (bw_rand_t), so each refusal is predicted, not sampled."""
import asyncio
import dataclasses
import datetime
import inspect
import math
import threading

import pytest

import breakwater as bw
from breakwater._bw import ffi, lib
from conftest import HTTPError

SEED = 20240917


class Overloaded(Exception):
    """The partner's fast rejection (a 429 / 503)."""


def formula(k, requests, accepts):
    """The refusal probability of docs/throttle.md, in doubles."""
    return max(0.0, (float(requests) - k * float(accepts)) / (float(requests) + 1.0))


class Replay:
    """The throttle's decisions predicted from its rule: the window's counts
    (every event here is in one window) and the seed's draws, one per
    request whose probability is above 0."""

    def __init__(self, k, seed):
        self.k = k
        self.rng = ffi.new("bw_rand_t *")
        lib.bw_rand_seed(self.rng, seed)
        self.requests = 0
        self.accepts = 0

    @property
    def p(self):
        return formula(self.k, self.requests, self.accepts)

    def refuses(self):
        """The next enter's decision (its draw consumed when p > 0)."""
        p = self.p
        return p > 0.0 and lib.bw_rand_double(self.rng) < p


def rejecting_partner():
    raise Overloaded()


def test_a_rejecting_partner_is_refused_with_the_formulas_probability():
    clock = bw.ManualClock()
    t = bw.Throttle("partner", k=2.0, seed=SEED, clock=clock)
    model = Replay(2.0, SEED)
    refused = sent = 0
    n = 300
    for _ in range(n):
        assert t.probability == model.p  # the same doubles: exact
        expect_refusal = model.refuses()
        if expect_refusal:
            with pytest.raises(bw.ThrottledError):
                t.call(rejecting_partner)
            refused += 1
        else:
            with pytest.raises(Overloaded):
                t.call(rejecting_partner)
            sent += 1
        model.requests += 1  # a refusal and a rejection both count
    s = t.stats()
    assert refused > 0 and sent > 0
    assert (s.requests, s.accepts, s.throttled, s.rejected, s.withdrawn) == (
        n, 0, refused, sent, 0)
    assert (s.window_requests, s.window_accepts) == (n, 0)
    assert s.probability == t.probability == formula(2.0, n, 0)
    assert s.in_flight == 0


def test_accepts_keep_the_probability_at_zero_and_draw_nothing():
    clock = bw.ManualClock()
    t = bw.Throttle("partner", seed=SEED, clock=clock)
    for _ in range(100):
        assert t.call(lambda: "ok") == "ok"
        assert t.probability == 0.0
    s = t.stats()
    assert (s.requests, s.accepts, s.throttled, s.rejected) == (100, 100, 0, 0)
    # Then the partner sheds: p stays 0 while requests <= K * accepts, and
    # the first draw is the seed's first (the accepts consumed none).
    model = Replay(2.0, SEED)
    model.requests = model.accepts = 100
    outcomes = []
    for _ in range(250):
        assert t.probability == model.p
        refused = model.refuses()
        exc = bw.ThrottledError if refused else Overloaded
        with pytest.raises(exc):
            t.call(rejecting_partner)
        model.requests += 1
        outcomes.append(refused)
    assert not any(outcomes[:100])  # 200 requests against 100 accepts: p 0
    assert any(outcomes)
    assert t.stats().throttled == sum(outcomes)


def test_k_sets_how_much_is_let_through():
    # K = 1 refuses as soon as anything is rejected; K = 3 tolerates up to
    # three requests per accept.
    for k in (1.0, 3.0):
        clock = bw.ManualClock()
        t = bw.Throttle(k=k, seed=SEED, clock=clock)
        for _ in range(10):
            t.call(lambda: None)
        for _ in range(5):
            with pytest.raises((Overloaded, bw.ThrottledError)):
                t.call(rejecting_partner)
        s = t.stats()
        assert t.probability == formula(k, s.window_requests, s.window_accepts)
        assert (t.probability > 0.0) == (k == 1.0)


def test_the_window_slides_on_the_manual_clock():
    clock = bw.ManualClock()
    # 1 s in 10 buckets of 100 ms: an event counts until the end of the
    # 10th bucket from its own.
    t = bw.Throttle(window_ms=1000, buckets=10, seed=SEED, clock=clock)
    for _ in range(4):  # at 0.0 s: accepts (p is 0: never refused)
        t.call(lambda: None)
    clock.set(0.5)
    # At 0.5 s: rejections. A refusal and a rejection both count as a
    # request, so the window's count does not depend on the draws.
    for _ in range(10):
        with pytest.raises((Overloaded, bw.ThrottledError)):
            t.call(rejecting_partner)
    s = t.stats()
    assert (s.window_requests, s.window_accepts) == (14, 4)
    assert t.probability == formula(2.0, 14, 4)
    clock.set(0.999999999)  # still bucket 9: the 0.0 s accepts count
    assert t.probability == formula(2.0, 14, 4)
    clock.set(1.0)  # bucket 10: bucket 0 has left the window
    s = t.stats()
    assert (s.window_requests, s.window_accepts) == (10, 0)
    assert t.probability == formula(2.0, 10, 0)
    clock.set(1.499999999)
    assert t.stats().window_requests == 10
    clock.set(1.5)  # the 0.5 s bucket leaves too: the partner is forgiven
    s = t.stats()
    assert (s.window_requests, s.window_accepts, s.probability) == (0, 0, 0.0)
    # The totals are since creation.
    assert (s.requests, s.accepts) == (14, 4)


def test_timedelta_and_text_durations():
    clock = bw.ManualClock()
    assert bw.Throttle(window_ms="2m", clock=clock).window_ms == 120000
    t = bw.Throttle(window_ms=datetime.timedelta(seconds=30), buckets=30, clock=clock)
    assert (t.window_ms, t.buckets, t.k, t.name) == (30000, 30, 2.0, "throttle")


def test_ignored_outcomes_after_an_attempt_are_accepts():
    # A 4xx: the partner answered, it did the work.
    clock = bw.ManualClock()
    t = bw.Throttle("api", seed=SEED, clock=clock)
    pl = bw.Pipeline([t], ignore=HTTPError)

    def not_found():
        raise HTTPError(404)
    for _ in range(20):
        with pytest.raises(HTTPError) as e:
            pl.call(not_found)
        assert e.value.breakwater_giveup == "permanent"
    s = t.stats()
    assert (s.requests, s.accepts, s.rejected, s.withdrawn) == (20, 20, 0, 0)
    assert (s.window_requests, s.window_accepts, t.probability) == (20, 20, 0.0)

    # With a Retry, what is outside its retry_on is permanent: answered,
    # an accept, whether the throttle is inside the retry or outside it.
    for order in ("inside", "outside"):
        t3 = bw.Throttle("api3", seed=SEED, clock=clock)
        retry = bw.Retry(max_attempts=3, base_ms=10, jitter="none",
                         retry_on=Overloaded, clock=clock)
        pl3 = bw.Pipeline([retry, t3] if order == "inside" else [t3, retry])
        with pytest.raises(HTTPError):
            pl3.call(not_found)
        s = t3.stats()
        assert (s.requests, s.accepts, s.rejected) == (1, 1, 0), order

    # The same through the throttle's own `ignore`, with `with`.
    t2 = bw.Throttle("api2", ignore=HTTPError, clock=clock)
    with pytest.raises(HTTPError):
        with t2:
            raise HTTPError(409)
    assert (t2.stats().accepts, t2.stats().rejected) == (1, 0)


def test_timeouts_and_failures_are_rejections():
    clock = bw.ManualClock()
    t = bw.Throttle(seed=SEED, clock=clock)
    with pytest.raises(TimeoutError):
        with t:
            raise TimeoutError()
    with pytest.raises(Overloaded):
        with t:
            raise Overloaded()
    s = t.stats()
    assert (s.requests, s.accepts, s.rejected) == (2, 0, 2)


def test_calls_that_never_went_out_are_withdrawn():
    clock = bw.ManualClock()
    t = bw.Throttle("api", seed=SEED, clock=clock)
    bh = bw.Bulkhead("slots", max_concurrent=1, max_wait_ms=0, clock=clock)
    held = bh.acquire()
    pl = bw.Pipeline([t, bh])
    sent = []
    for _ in range(5):
        with pytest.raises(bw.BulkheadFull):
            pl.call(lambda: sent.append(1))
    assert sent == []
    s = t.stats()
    assert (s.requests, s.withdrawn, s.accepts, s.rejected) == (5, 5, 0, 0)
    assert s.window_requests == 0 and t.probability == 0.0
    held.release()
    assert pl.call(lambda: "ok") == "ok"
    assert t.stats().accepts == 1

    # With `with`: a refusal inside, or an interruption, withdraws.
    with pytest.raises(bw.BulkheadFull):
        with t:
            raise bw.BulkheadFull("inner")
    with pytest.raises(KeyboardInterrupt):
        with t:
            raise KeyboardInterrupt()
    p = t.acquire()
    p.release("withdrawn")
    s = t.stats()
    assert (s.requests, s.withdrawn, s.window_requests) == (9, 8, 1)


def test_pipeline_refusal_is_a_throttled_error_and_never_retried():
    clock = bw.ManualClock()
    t = bw.Throttle("partner", k=1.0, seed=SEED, clock=clock)
    retry = bw.Retry(max_attempts=50, base_ms=10, jitter="none", retry_on=Overloaded,
                     clock=clock)
    pl = bw.Pipeline([retry, t])  # inside the retry: each attempt a request
    attempts = []

    def shedding():
        attempts.append(1)
        raise Overloaded()
    with pytest.raises(bw.ThrottledError) as e:
        pl.call(shedding)
    exc = e.value
    assert isinstance(exc, bw.LimiterFull) and isinstance(exc, bw.Rejected)
    assert exc.breakwater_giveup == "limit" and exc.name == "partner"
    assert isinstance(exc.__cause__, Overloaded)
    s = t.stats()
    # Every attempt that went out was rejected; the one refused ended the
    # call (not retried although 50 attempts were allowed).
    assert (s.rejected, s.throttled) == (len(attempts), 1)
    assert s.requests == len(attempts) + 1 < 50
    assert pl.stats()["failures"]["limit"] == 1


def test_outside_the_retry_a_call_is_one_request():
    clock = bw.ManualClock()
    t = bw.Throttle(seed=SEED, clock=clock)
    retry = bw.Retry(max_attempts=3, base_ms=10, jitter="none", retry_on=Overloaded,
                     clock=clock)
    pl = bw.Pipeline([t, retry])
    f_calls = []

    def twice_then_ok():
        f_calls.append(1)
        if len(f_calls) % 3:
            raise Overloaded()
        return "ok"
    assert pl.call(twice_then_ok) == "ok"
    s = t.stats()
    assert len(f_calls) == 3 and (s.requests, s.accepts, s.rejected) == (1, 1, 0)


def test_stats_conservation_with_calls_in_flight():
    clock = bw.ManualClock()
    t = bw.Throttle(k=1.0, seed=SEED, clock=clock)

    def law(s, in_flight):
        assert s.requests == (s.accepts + s.rejected + s.throttled + s.withdrawn
                              + in_flight)
        assert s.in_flight == in_flight

    held = [t.acquire() for _ in range(3)]
    law(t.stats(), 3)
    # Calls in flight count nowhere in the window yet.
    assert t.stats().window_requests == 0
    outcomes = ["success", "failure", "timed_out", "ignored", "withdrawn"]
    open_permits = list(held)
    for i in range(200):
        if i % 3 == 0 and open_permits:
            open_permits.pop(0).release(outcomes[i % len(outcomes)])
        try:
            open_permits.append(t.acquire())
        except bw.ThrottledError:
            pass
        law(t.stats(), len(open_permits))
        if len(open_permits) > 20:
            open_permits.pop().release("failure")
    for p in open_permits:
        p.release("failure")
    s = t.stats()
    law(s, 0)
    assert s.requests == 203 and s.throttled > 0
    with pytest.raises(RuntimeError):
        held[0].release("success")  # exactly once
    with pytest.raises(ValueError, match="withdrawn"):
        t.acquire().release("lost")


def test_decorator_and_inside_pipeline_the_call_is_in_flight():
    clock = bw.ManualClock()
    t = bw.Throttle(seed=SEED, clock=clock)

    @t
    def work(x):
        return t.stats().in_flight, x
    assert work(7) == (1, 7)
    assert bw.Pipeline([t]).call(lambda: t.stats().in_flight) == 1
    s = t.stats()
    assert (s.requests, s.accepts, s.in_flight) == (2, 2, 0)


def test_the_decorator_classifies_outcomes_as_with_does():
    clock = bw.ManualClock()
    t = bw.Throttle(ignore=HTTPError, seed=SEED, clock=clock)

    @t
    def raising(exc):
        if exc is not None:
            raise exc

    @t
    async def araising(exc):
        if exc is not None:
            raise exc

    cases = [(None, "accepts"), (HTTPError(404), "accepts"),
             (TimeoutError(), "rejected"), (Overloaded(), "rejected"),
             (bw.LimiterFull("inner"), "withdrawn"), (KeyboardInterrupt(), "withdrawn")]
    for fn in (raising, lambda exc: asyncio.run(araising(exc))):
        for exc, counter in cases:
            before = getattr(t.stats(), counter)
            if exc is None:
                fn(exc)
            else:
                with pytest.raises(type(exc)):
                    fn(exc)
            s = t.stats()
            assert getattr(s, counter) == before + 1, (exc, counter)
            assert s.in_flight == 0
    assert raising.__name__ == "raising"
    with pytest.raises(TypeError):
        t(42)


def test_async_forms():
    clock = bw.ManualClock()
    t = bw.Throttle("partner", k=1.0, seed=SEED, clock=clock)
    model = Replay(1.0, SEED)

    @t
    async def shed():
        await asyncio.sleep(0)
        raise Overloaded()

    async def ok():
        await asyncio.sleep(0)
        return "ok"

    async def main():
        assert await t.call_async(ok) == "ok"
        async with t:
            pass
        # A task cancelled inside `async with t` is withdrawn (whether it
        # went out is unknown: it counts neither way).
        gate = asyncio.Event()

        async def waiter():
            async with t:
                await gate.wait()
        task = asyncio.ensure_future(waiter())
        await asyncio.sleep(0)
        assert t.stats().in_flight == 1
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        model.requests = model.accepts = 2
        refusals = 0
        for _ in range(30):
            refused = model.refuses()
            with pytest.raises(bw.ThrottledError if refused else Overloaded):
                await shed()
            model.requests += 1
            refusals += refused
        return refusals

    refusals = asyncio.run(main())
    s = t.stats()
    assert refusals > 0 and s.throttled == refusals
    assert (s.requests, s.accepts, s.withdrawn, s.in_flight) == (33, 2, 1, 0)
    assert s.rejected == 30 - refusals


def test_async_pipeline_refusal():
    clock = bw.ManualClock()
    t = bw.Throttle("partner", k=1.0, seed=SEED, clock=clock)
    pl = bw.Pipeline([t])

    async def shed():
        raise Overloaded()

    async def main():
        seen = set()
        for _ in range(40):
            try:
                await pl.call_async(shed)
            except (Overloaded, bw.ThrottledError) as exc:
                seen.add(type(exc))
        return seen
    assert asyncio.run(main()) == {Overloaded, bw.ThrottledError}
    s = t.stats()
    assert s.requests == 40 and s.throttled + s.rejected == 40


def test_the_conservation_law_holds_under_threads():
    # Law: every call asked once, so requests == calls made, and with none
    # in flight at the end requests == accepts + rejected + throttled +
    # withdrawn; the threads' own tallies agree with the counters.
    t = bw.Throttle(seed=SEED)
    n_threads, n_calls = 4, 500
    tallies = []

    def work(me):
        mine = {"ok": 0, "failed": 0, "refused": 0, "withdrawn": 0}
        for i in range(n_calls):
            try:
                with t:
                    if (i + me) % 3 == 0:
                        raise Overloaded()
                    if (i + me) % 11 == 0:
                        raise bw.BulkheadFull("inner")
                mine["ok"] += 1
            except Overloaded:
                mine["failed"] += 1
            except bw.ThrottledError:
                mine["refused"] += 1
            except bw.BulkheadFull:
                mine["withdrawn"] += 1
        tallies.append(mine)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n_threads)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    s = t.stats()
    total = {key: sum(m[key] for m in tallies) for key in tallies[0]}
    assert s.requests == n_threads * n_calls
    assert (s.accepts, s.rejected, s.throttled, s.withdrawn) == (
        total["ok"], total["failed"], total["refused"], total["withdrawn"])
    assert s.in_flight == 0


@pytest.mark.parametrize("field,value", [
    ("k", 0.5), ("k", 11), ("k", math.nan), ("k", math.inf), ("k", "lots"),
    ("window_ms", 5), ("window_ms", "2d"), ("window_ms", "soon"),
    ("window_ms", "0.5ms"), ("window_ms", -1000),
    ("buckets", 0), ("buckets", 1001), ("buckets", 2**40), ("buckets", -3),
    ("buckets", 2.5),
    ("seed", -1), ("seed", 2**64), ("seed", "random"),
    ("name", ""), ("name", "x" * 500),
])
def test_bad_config_names_the_field(field, value):
    with pytest.raises(bw.ConfigError) as e:
        bw.Throttle(**{field: value})
    assert isinstance(e.value, ValueError)
    assert e.value.field == field
    assert field in str(e.value)


def test_buckets_must_divide_the_window():
    with pytest.raises(bw.ConfigError) as e:
        bw.Throttle(window_ms=1000, buckets=7)
    assert e.value.field == "buckets" and "divide" in str(e.value)


def test_wrong_types_and_unknown_fields():
    for bad in ([1], {"a": 1}, object(), b"bytes"):
        with pytest.raises(TypeError):
            bw.Throttle(name=bad)
        with pytest.raises(TypeError):
            bw.Throttle(k=bad)
    with pytest.raises(TypeError):
        bw.Throttle(clock="monotonic")
    with pytest.raises(TypeError):
        bw.Throttle(ignore=42)
    with pytest.raises(TypeError):
        bw.Throttle(max_k=3)
    with pytest.raises(ValueError):
        bw.Throttle(name="a\x00b")
    with pytest.raises(TypeError, match="max wait"):
        bw.Pipeline([(bw.Throttle(), 1.0)])


def test_pipeline_needs_the_throttles_clock():
    with pytest.raises(ValueError, match="clock"):
        bw.Pipeline([bw.Throttle(clock=bw.ManualClock()),
                      bw.Limiter(clock=bw.ManualClock())])


def test_public_surface():
    assert issubclass(bw.ThrottledError, bw.LimiterFull)
    assert issubclass(bw.ThrottledError, bw.Rejected)
    e = bw.ThrottledError("partner")
    assert e.name == "partner" and "partner" in str(e)
    for cls in (bw.Throttle, bw.ThrottleStats):
        assert inspect.getdoc(cls)
        for name, member in inspect.getmembers(cls):
            if name.startswith("_") and name != "__call__":
                continue
            if callable(member) or isinstance(member, property):
                assert inspect.getdoc(member), f"{cls.__name__}.{name}"
    with pytest.raises(dataclasses.FrozenInstanceError):
        bw.Throttle().stats().requests = 1


def test_an_attempt_cancelled_while_out_is_withdrawn():
    # The README's rule: an attempt cancelled while out has no known
    # answer, so the throttle counts it neither as an accept nor as a
    # rejection, in a pipeline (the C pipeline tells its strategies the
    # call was cancelled) as on its own.
    clock = bw.ManualClock()
    t = bw.Throttle(seed=SEED, clock=clock)

    def interrupted():
        raise KeyboardInterrupt()
    with pytest.raises(KeyboardInterrupt):
        bw.Pipeline([t]).call(interrupted)
    s = t.stats()
    assert (s.requests, s.accepts, s.rejected, s.withdrawn) == (1, 0, 0, 1)
    with pytest.raises(KeyboardInterrupt):
        t.call(interrupted)
    s = t.stats()
    assert (s.requests, s.accepts, s.rejected, s.withdrawn) == (2, 0, 0, 2)


def test_refusals_are_summarised_to_a_sink_at_most_once_a_second():
    # docs/events.md: a refusal a second or more after the last summary (or
    # the creation) emits the refusals since then, the one that triggered
    # it included; the free emits the rest. K = 1 refuses as soon as
    # anything is rejected.
    import gc
    clock = bw.ManualClock()
    events = []
    t = bw.Throttle("partner", k=1, seed=SEED, clock=clock, sink=bw.Sink(events.append))
    model = Replay(1.0, SEED)

    def one(t):
        refused = model.refuses()
        with pytest.raises(bw.ThrottledError if refused else Overloaded):
            t.call(rejecting_partner)
        model.requests += 1
        return refused
    early = sum(one(t) for _ in range(30))       # within the first second: none
    assert early > 0 and events == []
    clock.advance(1.0)
    while not one(t):                             # the first refusal a second on
        pass
    assert len(events) == 1
    e = events[0]
    assert (e["event"], e["kind"], e["name"]) == ("throttle_refused", "throttle", "partner")
    assert e["count"] == early + 1 == t.stats().throttled
    assert e["k"] == 1 and e["window_requests"] == model.requests
    assert e["window_accepts"] == 0 and e["probability"] == model.p
    later = sum(one(t) for _ in range(30))        # within the next second: none
    assert later > 0 and len(events) == 1
    total = t.stats().throttled
    del t
    gc.collect()
    assert len(events) == 2 and events[1]["count"] == later
    assert sum(ev["count"] for ev in events) == total
