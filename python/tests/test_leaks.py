"""No leaks over 100k calls: Python memory (tracemalloc) and the C heap
(glibc's mallinfo2: bytes in use by malloc, where the C core allocates)
stay flat through Breaker, Retry, Bulkhead, Throttle and Pipeline calls —
successes and failures — and objects created and dropped are freed
(ffi.gc).

Bounds: after a warm-up, growth over 100k calls must stay under 64 KiB of
Python memory and 256 KiB of C heap; a leak of one 8-byte pointer per call
would be 800 KB."""
import asyncio
import ctypes
import ctypes.util
import gc
import tracemalloc

import pytest

import breakwater as bw

CALLS = 100_000
PY_BOUND = 64 * 1024
C_BOUND = 256 * 1024


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
        "uordblks", "fordblks", "keepcost")]


def _c_heap():
    """Bytes malloc has handed out and not had back (None if unknown)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    if not hasattr(libc, "mallinfo2"):
        return None
    libc.mallinfo2.restype = _Mallinfo2
    m = libc.mallinfo2()
    return m.uordblks + m.hblkhd


class Down(Exception):
    pass


def _measure(run):
    """Growth (python bytes, C bytes) of run(CALLS) after a warm-up."""
    run(5_000)
    gc.collect()
    tracemalloc.start()
    try:
        run(1_000)
        gc.collect()
        py0, c0 = tracemalloc.get_traced_memory()[0], _c_heap()
        run(CALLS)
        gc.collect()
        py1, c1 = tracemalloc.get_traced_memory()[0], _c_heap()
    finally:
        tracemalloc.stop()
    return py1 - py0, (None if c0 is None else c1 - c0)


def _check(growth):
    py, c = growth
    assert py < PY_BOUND, f"Python memory grew by {py} bytes over {CALLS} calls"
    if c is not None:
        assert c < C_BOUND, f"the C heap grew by {c} bytes over {CALLS} calls"


def _sometimes_failing(policy_call):
    def run(n):
        for i in range(n):
            try:
                policy_call(i)
            except (Down, bw.Rejected):
                pass
    return run


def test_breaker_calls_do_not_leak():
    b = bw.Breaker("leak", trip_rule="consecutive", failure_threshold=1_000_000)

    @b
    def f(i):
        if i % 10 == 0:
            raise Down()
        return i
    _check(_measure(_sometimes_failing(f)))


def test_retry_calls_do_not_leak():
    r = bw.Retry("leak", max_attempts=2, base_ms=1, jitter="none", retry_on=Down,
                 clock=bw.ManualClock())

    @r
    def f(i):
        if i % 10 == 0:
            raise Down()
        return i
    _check(_measure(_sometimes_failing(f)))


def test_bulkhead_calls_do_not_leak():
    bh = bw.Bulkhead("leak", max_concurrent=4)

    @bh
    def f(i):
        if i % 10 == 0:
            raise Down()
        return i
    _check(_measure(_sometimes_failing(f)))


def test_pipeline_calls_do_not_leak():
    clock = bw.ManualClock()
    pl = bw.Pipeline([bw.Bulkhead("pl", max_concurrent=4, clock=clock),
                      bw.Breaker("pl", clock=clock, trip_rule="consecutive",
                                 failure_threshold=1_000_000),
                      bw.Retry(max_attempts=2, base_ms=1, jitter="none", retry_on=Down,
                               clock=clock)])

    @pl
    def f(i):
        if i % 10 == 0:
            raise Down()
        return i
    _check(_measure(_sometimes_failing(f)))


def test_async_calls_do_not_leak():
    b = bw.Breaker("aleak", trip_rule="consecutive", failure_threshold=1_000_000)

    @b
    async def f(i):
        if i % 10 == 0:
            raise Down()
        return i

    def run(n):
        async def main():
            for i in range(n):
                try:
                    await f(i)
                except Down:
                    pass
        asyncio.run(main())
    _check(_measure(run))


def test_throttle_calls_do_not_leak():
    """Accepts, rejections and refusals (the partner rejects every third
    call: p rises above 0 on the manual clock's one window), by the
    decorator and in a pipeline; and throttles created and dropped."""
    clock = bw.ManualClock()
    t = bw.Throttle("leak", k=1.0, seed=1, clock=clock)
    pl = bw.Pipeline([t])

    def partner(i):
        if i % 3 == 0:
            raise Down()
        return i
    _check(_measure(_sometimes_failing(t(partner))))
    _check(_measure(_sometimes_failing(lambda i: pl.call(partner, i))))
    assert t.stats().throttled > 0

    def churn(n):
        for _ in range(n // 10):
            bw.Throttle(clock=clock).call(lambda: None)
    _check(_measure(churn))


def test_parking_and_replaying_do_not_leak():
    """Every call is refused (the breaker is isolated) and parks its work;
    every 100 calls a reprocessor drains the lot (successes, and every
    tenth replay a permanent failure to the dead-letter queue, which is
    then emptied): payloads, records and the callback's objects are freed."""
    clock = bw.ManualClock()
    lot = bw.ParkingLot("leak", clock=clock, max_size=1000, dlq_max=1000)
    breaker = bw.Breaker("parked", clock=clock)
    breaker.isolate()
    pl = bw.Pipeline([breaker], park=lot)

    def handle(work):
        if work["i"] % 10 == 0:
            raise ValueError("poison")
    rp = bw.Reprocessor(lot, handle, permanent=ValueError, batch=100)

    def run(n):
        for i in range(n):
            pl.call(lambda w: None, {"i": i})
            if i % 100 == 99:
                assert rp.step() == 90
                for d in lot.dead_letters():
                    lot.discard(d["id"])
        assert len(lot) < 100
    _check(_measure(run))


def test_objects_are_freed():
    """20k policies created and dropped: ffi.gc frees each C object."""
    sink = bw.Sink(lambda ev: None)

    def run(n):
        for i in range(n // 5):
            clock = bw.ManualClock()
            b = bw.Breaker("b", clock=clock, sink=sink)
            bh = bw.Bulkhead("bh", clock=clock)
            r = bw.Retry(clock=clock, budget=bw.Budget(clock=clock))
            pl = bw.Pipeline([bh, b, r])
            reg = bw.Registry(clock=clock)
            reg.breaker("x")
            reg.add(pl)
            lot = bw.ParkingLot(clock=clock, sink=sink)
            rp = bw.Reprocessor(lot, print, breaker=b)
            ppl = bw.Pipeline([b], park=lot)
            del clock, b, bh, r, pl, reg, lot, rp, ppl
    growth = _measure(lambda n: run(min(n, 20_000)))
    _check(growth)


def test_the_c_heap_probe_sees_a_leak():
    """The C-heap measure is sensitive enough: 100k malloc'd pointers of 8
    bytes (what a one-pointer-per-call leak would keep) are far above the
    bound."""
    if _c_heap() is None:
        pytest.skip("glibc without mallinfo2")
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    before = _c_heap()
    held = [libc.malloc(8) for _ in range(CALLS)]
    try:
        assert all(held)
        assert _c_heap() - before > C_BOUND
    finally:
        for p in held:
            libc.free(p)
