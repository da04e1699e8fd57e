"""Fallback with recovery (the tenacity article's scenario 2): a pipeline
that fails transiently, or is refused by its open breaker, parks the call's
work in a ParkingLot (the C core's memory queue store, bw_park_fallback);
a Reprocessor (the C core's bw_reprocessor_t) replays it once the breaker
is closed again. Every item parked is processed exactly once, retried later
or dead-lettered — never lost: at every step

    parked + requeued == processed (acked) + dead-lettered + still parked.

Time is a ManualClock: retry waits, nack delays and the breaker's break are
exact and take no real time."""
import asyncio

import pytest

import breakwater as bw


class Transient(Exception):
    pass


class HTTPError(Exception):
    def __init__(self, status):
        super().__init__(f"HTTP {status}")
        self.status = status


def conserved(lot):
    """The conservation law of a lot, checked on its own counters."""
    s = lot.stats()
    assert (s["inherited"] + s["parked"] + s["requeued"]
            == s["acked"] + s["dead_lettered"] + s["depth"]), s
    return s


class Downstream:
    """A notifications service that is down until told otherwise."""

    def __init__(self):
        self.down = True
        self.delivered = []
        self.attempts = 0

    def send(self, notification):
        self.attempts += 1
        if self.down:
            raise Transient("notifications-service is down")
        self.delivered.append(notification)


def notifications(clock, lot, threshold=3):
    breaker = bw.Breaker("notifications", clock=clock, trip_rule="consecutive",
                         failure_threshold=threshold, success_threshold=1, break_ms="30s")
    retry = bw.Retry(max_attempts=2, base_ms=100, jitter="none", retry_on=Transient,
                     clock=clock)
    return breaker, bw.Pipeline([breaker, retry], name="notify", park=lot)


def test_an_outage_parks_k_items_and_one_pass_drains_them_in_order():
    clock = bw.ManualClock()
    lot = bw.ParkingLot("pending_notifications", clock=clock, max_deliveries=3)
    breaker, pl = notifications(clock, lot)
    svc = Downstream()
    k = 8
    for i in range(k):
        r = pl.call(svc.send, {"task": i, "user": 7})
        assert isinstance(r, bw.Parked) and r.accepted and r.lot is lot
        # the first three exhaust their two attempts; then the breaker is open
        assert r.error.breakwater_giveup == ("exhausted" if i < 3 else "breaker")
        assert r.error.breakwater_parked is True
        s = conserved(lot)
        assert s["parked"] == i + 1 and s["depth"] == i + 1
    assert svc.attempts == 3 * 2                 # refused calls never reach it
    assert breaker.state == "open" and len(lot) == k

    rp = bw.Reprocessor(lot, svc.send, breaker=breaker)
    assert rp.step() == 0                        # open: paused, nothing claimed
    assert rp.stats() == {"backlog": k, "dlq_depth": 0, "processed": 0, "failed": 0,
                          "rejected": 0, "paused": 1}
    assert lot.stats()["claimed"] == 0

    svc.down = False
    clock.advance(30)                            # the break is over: half-open
    assert rp.step() == 0                        # not closed yet: still paused
    assert pl.call(svc.send, {"task": "live"}) is None   # the probe succeeds
    assert breaker.state == "closed"
    assert rp.step() == k                        # one pass drains the backlog
    assert svc.delivered == [{"task": "live"}] + [{"task": i, "user": 7} for i in range(k)]
    s = conserved(lot)
    assert s["depth"] == 0 and s["acked"] == k and s["dead_lettered"] == 0
    assert rp.stats()["processed"] == k and rp.stats()["paused"] == 2
    # exactly once: nothing is replayed again
    assert rp.step() == 0 and rp.drain() == 0
    assert len(svc.delivered) == k + 1
    assert breaker.stats()["successes"] == 1 + k   # each replay went through it


def test_replays_retried_later_then_dead_lettered_and_permanent_at_once():
    clock = bw.ManualClock()
    lot = bw.ParkingLot("jobs", clock=clock, max_deliveries=2)
    seen = []
    fixed = []

    def handle(work):
        seen.append(work)
        if work == "poison":
            raise ValueError("malformed notification")
        if work == "flaky" and not fixed:
            raise Transient("still down")

    for w in ("poison", "flaky", "good"):
        assert lot.park(w) is True
    rp = bw.Reprocessor(lot, handle, permanent=ValueError, retry_delay=5, batch=10)
    assert rp.step() == 1
    assert seen == ["poison", "flaky", "good"]
    st = rp.stats()
    assert (st["processed"], st["rejected"], st["failed"]) == (1, 1, 1)
    s = conserved(lot)
    assert s["depth"] == 1 and s["dead_lettered"] == 1      # the poison at once
    assert rp.step() == 0 and seen[-1] == "good"            # flaky waits 5 s
    clock.advance(4.999)
    assert rp.step() == 0 and len(seen) == 3
    clock.advance(0.001)
    assert rp.step() == 0 and seen[-1] == "flaky"           # its second delivery
    s = conserved(lot)
    assert s["depth"] == 0 and s["dead_lettered"] == 2      # max_deliveries reached
    dl = lot.dead_letters()
    assert [(d["work"], d["reason"], d["deliveries"]) for d in dl] == [
        ("poison", "rejected", 1), ("flaky", "max_deliveries", 2)]
    assert dl[1]["time"] == pytest.approx(5.0)
    # an operator puts the flaky one back once it is fixed
    fixed.append(True)
    assert lot.requeue(dl[1]["id"]) is True
    s = conserved(lot)
    assert s["depth"] == 1 and s["requeued"] == 1 and s["dlq_depth"] == 1
    assert rp.drain() == 1 and seen[-1] == "flaky"
    s = conserved(lot)
    assert s["depth"] == 0 and s["acked"] == 2
    lot.discard(dl[0]["id"])
    assert lot.dead_letters() == []
    with pytest.raises(KeyError):
        lot.discard(dl[0]["id"])


def test_a_full_lot_dead_letters_the_work_never_drops_it():
    clock = bw.ManualClock()
    lot = bw.ParkingLot("small", clock=clock, max_size=2, codec="bytes")
    breaker = bw.Breaker(clock=clock, trip_rule="consecutive", failure_threshold=1)
    pl = bw.Pipeline([breaker], park=lot)

    def send(body):
        raise Transient()
    results = [pl.call(send, f"n{i}".encode()) for i in range(3)]
    assert [r.accepted for r in results] == [True, True, False]
    assert results[2].error.breakwater_parked is True
    s = conserved(lot)
    assert s["depth"] == 2 and s["refused_full"] == 1
    (d,) = lot.dead_letters()
    assert d["reason"] == "queue_full" and d["work"] == b"n2"


def test_a_permanent_failure_is_raised_not_parked():
    clock = bw.ManualClock()
    lot = bw.ParkingLot(clock=clock)
    breaker, _ = notifications(clock, lot)
    pl4 = bw.Pipeline([breaker, bw.Retry(max_attempts=3, retry_on=Transient, clock=clock)],
                      park=lot)

    def send(n):
        raise HTTPError(400)
    with pytest.raises(HTTPError) as e:
        pl4.call(send, {"n": 1})
    assert e.value.breakwater_giveup == "permanent" and e.value.breakwater_parked is False
    assert len(lot) == 0 and conserved(lot)["parked"] == 0


def test_the_existing_fallback_still_runs_after_parking():
    clock = bw.ManualClock()
    lot = bw.ParkingLot(clock=clock)
    breaker, _ = notifications(clock, lot, threshold=1)
    seen = []
    pl = bw.Pipeline([breaker], park=lot, work=lambda n, *, channel: {"n": n, "via": channel},
                     fallback=lambda exc: seen.append(exc) or "queued for later")

    def send(n, *, channel):
        raise Transient()
    assert pl.call(send, 1, channel="sms") == "queued for later"
    assert pl.call(send, 2, channel="mail") == "queued for later"
    assert [e.breakwater_parked for e in seen] == [True, True]
    assert isinstance(seen[1], bw.BreakerOpen)
    got = []
    clock.advance(30)
    breaker.reset()
    assert bw.Reprocessor(lot, got.append, breaker=breaker).step() == 2
    assert got == [{"n": 1, "via": "sms"}, {"n": 2, "via": "mail"}]


def test_replays_through_a_pipeline_gate_on_its_breaker_and_never_repark():
    clock = bw.ManualClock()
    lot = bw.ParkingLot(clock=clock, max_deliveries=5)
    breaker, pl = notifications(clock, lot, threshold=1)
    svc = Downstream()
    for i in range(3):
        assert isinstance(pl.call(svc.send, i), bw.Parked)
    assert breaker.state == "open" and len(lot) == 3
    rp = bw.Reprocessor(lot, svc.send, pipeline=pl, retry_delay=1)
    assert rp.step() == 0 and rp.stats()["paused"] == 1
    assert lot.stats()["claimed"] == 0
    clock.advance(30)
    breaker.reset()
    # still down: the first replay fails (two attempts) and opens the
    # breaker; the rest of the batch is handed back without being tried
    before = svc.attempts
    assert rp.step() == 0
    assert svc.attempts == before + 2
    s = conserved(lot)
    assert s["parked"] == 3 and s["depth"] == 3     # nothing parked twice
    assert breaker.state == "open"
    svc.down = False
    clock.advance(30)
    breaker.reset()
    assert rp.drain() == 3
    assert svc.delivered == [0, 1, 2]
    assert conserved(lot)["depth"] == 0
    with pytest.raises(ValueError, match="twice"):
        bw.Reprocessor(lot, svc.send, pipeline=pl, breaker=breaker)


def test_async_calls_park_too():
    clock = bw.ManualClock()
    lot = bw.ParkingLot(clock=clock)
    breaker, pl = notifications(clock, lot)

    async def send(n):
        await asyncio.sleep(0)
        raise Transient()
    r = asyncio.run(pl.call_async(send, {"n": 1}))
    assert isinstance(r, bw.Parked) and r.accepted
    assert clock.now() == pytest.approx(0.1)      # one retry wait, exactly
    assert len(lot) == 1


def test_a_handler_interrupted_hands_the_batch_back():
    clock = bw.ManualClock()
    lot = bw.ParkingLot(clock=clock)
    for i in range(3):
        lot.park(i)
    calls = []

    def handle(w):
        calls.append(w)
        raise KeyboardInterrupt()
    rp = bw.Reprocessor(lot, handle, retry_delay=0)
    with pytest.raises(KeyboardInterrupt):
        rp.step()
    assert calls == [0]
    s = conserved(lot)
    assert s["depth"] == 3 and s["acked"] == 0
    got = []
    rp.handler = got.append
    assert rp.step() == 3 and got == [0, 1, 2]


def test_bad_parking_input():
    clock = bw.ManualClock()
    with pytest.raises(bw.ConfigError) as e:
        bw.ParkingLot(max_size=0)
    assert e.value.field == "max_size"
    with pytest.raises(bw.ConfigError) as e:
        bw.ParkingLot(warn_threshold=1.5)
    assert e.value.field == "warn_threshold"
    with pytest.raises(bw.ConfigError) as e:
        bw.ParkingLot(max_deliveries=-1)
    assert e.value.field == "max_deliveries"
    with pytest.raises(TypeError):
        bw.ParkingLot(max_size="ten")
    with pytest.raises(ValueError, match="codec"):
        bw.ParkingLot(codec="xml")
    with pytest.raises(TypeError):
        bw.ParkingLot(42)
    lot = bw.ParkingLot(clock=clock)
    with pytest.raises(TypeError, match="JSON"):
        lot.park(object())
    with pytest.raises(ValueError, match="JSON"):
        lot.park(float("nan"))
    with pytest.raises(TypeError, match="bytes"):
        bw.ParkingLot(codec="bytes").park(1)
    assert conserved(lot)["parked"] == 0
    with pytest.raises(TypeError):
        bw.Pipeline([], park=42)
    with pytest.raises(TypeError, match="park"):
        bw.Pipeline([], work=lambda x: x)
    pl = bw.Pipeline([bw.Breaker(clock=clock)], park=lot)
    called = []
    with pytest.raises(TypeError, match="work="):
        pl.call(lambda a, b: called.append(1), 1, 2)
    assert called == []                               # refused before the call
    with pytest.raises(TypeError):
        bw.Reprocessor(lot, 42)
    with pytest.raises(TypeError):
        bw.Reprocessor([], print)
    with pytest.raises(bw.ConfigError) as e:
        bw.Reprocessor(lot, print, batch=0)
    assert e.value.field == "batch"
    with pytest.raises(bw.ConfigError) as e:
        bw.Reprocessor(lot, print, visibility=0)
    assert e.value.field == "visibility"
    with pytest.raises(bw.ConfigError) as e:
        bw.Reprocessor(lot, print, retry_delay=-1)
    assert e.value.field == "retry_delay"
    with pytest.raises(TypeError):
        bw.Reprocessor(lot, print, breaker=bw.Bulkhead())
    with pytest.raises(TypeError):
        bw.Reprocessor(lot, print, permanent=42)
    with pytest.raises(bw.ConfigError):
        lot.dead_letters(limit=0)


def test_async_handlers_are_replayed_on_the_loop_in_order():
    clock = bw.ManualClock()
    lot = bw.ParkingLot(clock=clock)
    breaker, pl = notifications(clock, lot)
    svc = Downstream()

    async def send(n):
        await asyncio.sleep(0)
        svc.send(n)

    async def outage():
        return [await pl.call_async(send, i) for i in range(4)]
    assert all(isinstance(r, bw.Parked) for r in asyncio.run(outage()))
    assert breaker.state == "open" and len(lot) == 4
    rp = bw.Reprocessor(lot, send, pipeline=pl)
    with pytest.raises(TypeError, match="step_async"):
        rp.step()                                # a coroutine handler
    assert conserved(lot)["claimed"] == 0

    async def recovery():
        ticks = []

        async def heartbeat():
            while True:
                ticks.append(1)
                await asyncio.sleep(0)
        hb = asyncio.create_task(heartbeat())
        paused = await rp.step_async()           # still open: paused
        svc.down = False
        clock.advance(30)
        breaker.reset()
        done = await rp.drain_async()
        hb.cancel()
        return paused, done, len(ticks)
    paused, done, ticks = asyncio.run(recovery())
    assert paused == 0 and done == 4 and ticks > 0
    assert svc.delivered == [0, 1, 2, 3]
    s = conserved(lot)
    assert s["depth"] == 0 and s["acked"] == 4 and s["parked"] == 4


def test_threads_park_and_replay_every_item_exactly_once():
    """Conservation under threads: 4 producers park 50 items each through a
    pipeline whose breaker is isolated (every call refused, every work
    parked) while 2 threads step a reprocessor; at the end every item was
    delivered exactly once, and parked == acked + dead-lettered + depth."""
    import threading
    lot = bw.ParkingLot("threads", max_size=1000)
    pl = bw.Pipeline([bw.Breaker("isolated")], park=lot)
    pl.strategies[0].isolate()
    delivered = []
    rp = bw.Reprocessor(lot, delivered.append, batch=8)
    producing = threading.Event()
    producing.set()
    results = []

    def produce(t):
        for i in range(50):
            r = pl.call(lambda w: pytest.fail("refused calls never run"), [t, i])
            results.append(r.accepted)

    def consume():
        for _ in range(1_000_000):       # bounded: ends long before
            if rp.step() == 0 and not producing.is_set() and len(lot) == 0:
                return
    producers = [threading.Thread(target=produce, args=(t,)) for t in range(4)]
    consumers = [threading.Thread(target=consume) for _ in range(2)]
    for th in producers + consumers:
        th.start()
    for th in producers:
        th.join(60)
    producing.clear()
    for th in consumers:
        th.join(60)
    assert not any(th.is_alive() for th in producers + consumers)
    assert results == [True] * 200
    assert sorted(map(tuple, delivered)) == [(t, i) for t in range(4) for i in range(50)]
    s = conserved(lot)
    assert s["parked"] == 200 and s["acked"] == 200 and s["depth"] == 0


@pytest.fixture
def sqlite_lot_factory(tmp_path):
    try:
        from breakwater import _sqlite_c  # noqa: F401
    except ImportError:
        pytest.skip("built without the SQLite component (breakwater-sqlite)")
    return lambda **kw: bw.ParkingLot("pending", path=tmp_path / "parked.db", **kw)


def test_a_sqlite_lot_keeps_parked_work_across_handles(sqlite_lot_factory, tmp_path):
    """The durable lot: work parked through a pipeline by one handle is
    replayed, in order, by a handle opened afterwards (a restarted worker),
    with its dead letters; the law counts what the new handle inherited."""
    clock = bw.ManualClock(1000)
    lot = sqlite_lot_factory(clock=clock, max_deliveries=2)
    breaker, pl = notifications(clock, lot, threshold=1)
    svc = Downstream()
    for i in range(5):
        assert pl.call(svc.send, {"n": i}).accepted
    assert conserved(lot)["depth"] == 5 and lot.path == str(tmp_path / "parked.db")
    del pl, lot                                   # the worker goes away

    lot2 = sqlite_lot_factory(clock=clock, max_deliveries=2)
    s = conserved(lot2)
    assert s["inherited"] == 5 and s["depth"] == 5 and s["parked"] == 0
    svc.down = False
    breaker.reset()

    def send(work):
        if work["n"] == 3:
            raise Transient("still failing for this one")
        svc.send(work)
    rp = bw.Reprocessor(lot2, send, breaker=breaker, retry_delay=1)
    # n=3 fails and opens the breaker (threshold 1): n=4 is never claimed
    # (the reprocessor asks the breaker before each claim), so only n=3 is
    # nacked
    assert rp.step() == 3
    assert svc.delivered == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert breaker.state == "open"
    s = conserved(lot2)
    assert s["depth"] == 2 and s["acked"] == 3 and s["nacked"] == 1
    breaker.reset()
    assert rp.step() == 1                         # n=4 at once; n=3 waits 1 s
    clock.advance(1)
    assert rp.step() == 0                         # n=3's second failure
    assert svc.delivered[-1] == {"n": 4}
    s = conserved(lot2)
    assert s["depth"] == 0 and s["acked"] == 4 and s["dead_lettered"] == 1
    (d,) = lot2.dead_letters()
    assert d["work"] == {"n": 3} and d["reason"] == "max_deliveries"
    assert d["deliveries"] == 2


def test_bad_sqlite_lots(sqlite_lot_factory, tmp_path):
    bad = tmp_path / "not-a-db"
    bad.write_bytes(b"this is not a database, it is a text file" * 100)
    with pytest.raises(bw.ConfigError) as e:
        bw.ParkingLot(path=bad)
    assert e.value.field == "path" and str(bad) in str(e.value)
    with pytest.raises(bw.ConfigError) as e:
        sqlite_lot_factory(synchronous="sometimes")
    assert e.value.field == "synchronous"
    with pytest.raises(bw.ConfigError) as e:
        sqlite_lot_factory(max_size=0)
    assert e.value.field == "max_size"
    with pytest.raises(TypeError):
        bw.ParkingLot(path=42)
    lot = sqlite_lot_factory(synchronous="full")
    assert lot.park({"ok": True}) and len(lot) == 1


def test_a_lot_in_the_registry_is_on_the_dashboard():
    """Parked work is a number on a dashboard, not a table nobody reads."""
    clock = bw.ManualClock()
    lot = bw.ParkingLot("pending_notifications", clock=clock, max_size=10)
    reg = bw.Registry(clock=clock)
    assert reg.add(lot) is lot and reg.count("queue_store") == 1
    for i in range(3):
        lot.park(i)
    text = reg.prometheus()
    depth = [ln for ln in text.splitlines()
             if ln.startswith("breakwater_queue_store_depth{")]
    assert len(depth) == 1 and 'name="pending_notifications"' in depth[0]
    assert depth[0].endswith(" 3")
    with pytest.raises(bw.ConfigError):
        reg.add(bw.ParkingLot("pending_notifications"))   # the name is taken
