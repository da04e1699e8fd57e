"""Deadlines on a contextvars variable and the X-Timeout-Budget header."""
import asyncio

import pytest

import breakwater as bw


def test_nesting_never_extends():
    clock = bw.ManualClock()
    assert bw.remaining() is None and bw.to_header() is None
    with bw.deadline(2.5, clock=clock):
        assert bw.remaining() == pytest.approx(2.5)
        assert bw.to_header() == "2.5"
        with bw.deadline(10, clock=clock):
            assert bw.remaining() == pytest.approx(2.5)
        with bw.deadline(1, clock=clock):
            assert bw.headers() == {"X-Timeout-Budget": "1"}
        clock.advance(1.5)
        assert bw.to_header() == "1"
        bw.check(1.0)
        with pytest.raises(bw.DeadlineExceeded):
            bw.check(1.001)
        clock.advance(1)
        with pytest.raises(bw.DeadlineExceeded):
            bw.check()
        assert bw.to_header() == "0"
    assert bw.remaining() is None


def test_header_round_trip_and_inbound_default():
    assert bw.parse_header("2.5") == 2.5
    assert bw.parse_header(" 10.0 ") == 10.0
    assert bw.parse_header("29.87654321098765") == 29.876
    clock = bw.ManualClock()
    with bw.from_header("1.25", clock=clock):
        assert bw.to_header() == "1.25"
    with bw.from_header("garbage", clock=clock):  # never trusted: default 10 s
        assert bw.remaining() == pytest.approx(10)
    with bw.from_header(None, default=None):
        assert bw.remaining() is None


def test_each_asyncio_task_sees_its_own_deadline():
    clock = bw.ManualClock()

    async def task(seconds):
        async with bw.deadline(seconds, clock=clock):
            await asyncio.sleep(0)
            return bw.remaining()

    async def main():
        return await asyncio.gather(task(1), task(2), task(3))
    assert asyncio.run(main()) == [1.0, 2.0, 3.0]
    assert bw.remaining() is None


def test_one_deadline_object_entered_by_many_tasks():
    clock = bw.ManualClock()
    d = bw.deadline(5, clock=clock)

    async def task(i):
        async with d:
            await asyncio.sleep(0.001 * (5 - i))
            left = bw.remaining()
        return left, bw.remaining()

    async def main():
        return await asyncio.gather(*(task(i) for i in range(5)))
    assert asyncio.run(main()) == [(5.0, None)] * 5
