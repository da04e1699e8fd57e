"""The reference toolkit's QueueGuard on Redis, through the C Redis
component: LLEN + RPUSH in one script, overflow to the dead-letter list
(never dropped), one warning per crossing of the threshold, consumers that
acknowledge and recover; a dead Redis is a clear Python exception."""
import asyncio
import threading

import pytest

import breakwater as bw
from conftest import _free_port


def guard(port, **kw):
    kw.setdefault("max_size", 10)
    kw.setdefault("warn_threshold", 0.7)
    return bw.QueueGuard("recovery", port=port, **kw)


def test_guard_admits_below_max_and_dead_letters_the_rest(redis_server):
    events = []
    q = guard(redis_server, sink=bw.Sink(events.append))
    results = [q.safe_enqueue(f"thread-{i}") for i in range(13)]
    assert results == [True] * 10 + [False] * 3
    assert q.size() == 10 and q.dlq_size() == 3
    entry = q.dlq(0)
    assert entry["reason"] == "queue_full" and entry["payload"] == "thread-10"
    assert q.dlq(3) is None
    names = [e["event"] for e in events]
    assert names.count("queue_warning") == 1        # once, at 7 of 10
    assert names.count("dead_lettered") == 3
    warning = next(e for e in events if e["event"] == "queue_warning")
    assert warning["kind"] == "queue"
    s = q.stats()
    assert s["admitted"] == 10 and s["dead_lettered"] == 3 and s["warnings"] == 1


def test_consumers_ack_and_recover(redis_server):
    q = guard(redis_server)
    for i in range(3):
        assert q.enqueue(f"job-{i}".encode())
    assert q.dequeue("worker-1") == b"job-0"
    assert q.dequeue("worker-1") == b"job-1"
    assert q.ack("worker-1", b"job-0") is True
    assert q.ack("worker-1", b"job-0") is False      # already acknowledged
    # worker-1 crashed with job-1 unacknowledged: it goes back to the front
    assert q.recover("worker-1") == 1
    assert q.dequeue("worker-2") == b"job-1"
    assert q.dequeue("worker-2") == b"job-2"
    assert q.dequeue("worker-2") is None
    assert q.size() == 0


def test_concurrent_producers_never_exceed_max_size(redis_server):
    """Conservation: admitted + dead-lettered = offered, and the queue holds
    exactly max_size (the check and the push are one script)."""
    q = guard(redis_server, max_size=50)
    offered, per_thread = 4, 40
    admitted = []
    lock = threading.Lock()

    def produce(t):
        n = sum(q.enqueue(f"{t}-{i}") for i in range(per_thread))
        with lock:
            admitted.append(n)
    threads = [threading.Thread(target=produce, args=(t,)) for t in range(offered)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sum(admitted) == 50
    assert q.size() == 50 and q.dlq_size() == offered * per_thread - 50


def test_async_forms_do_not_block_the_loop(redis_server):
    q = guard(redis_server)

    async def main():
        ticks = []

        async def heartbeat():
            while True:
                ticks.append(1)
                await asyncio.sleep(0)
        hb = asyncio.create_task(heartbeat())
        ok = await asyncio.gather(*(q.enqueue_async(f"a{i}") for i in range(5)))
        got = await q.dequeue_async("c")
        hb.cancel()
        return ok, got, len(ticks)
    ok, got, ticks = asyncio.run(main())
    assert ok == [True] * 5 and got is not None and ticks > 0


def test_dead_redis_is_a_clear_exception(redis_server):
    dead = _free_port()
    with pytest.raises(bw.RedisUnavailable) as e:
        bw.QueueGuard("q", port=dead, connect_timeout_ms=100)
    assert isinstance(e.value, ConnectionError) and f"127.0.0.1:{dead}" in str(e.value)
    with pytest.raises(bw.RedisUnavailable):
        bw.QueueGuard("q", host="redis.invalid", connect_timeout_ms=100)


def test_redis_going_away_raises_on_operations(redis_server, tmp_path):
    import socket
    q = guard(redis_server, command_timeout_ms=200)
    assert q.enqueue("x")
    with socket.create_connection(("127.0.0.1", redis_server)) as s:
        s.sendall(b"SHUTDOWN NOSAVE\r\n")
        s.recv(16)
    with pytest.raises(bw.RedisUnavailable):
        q.enqueue("y")
    with pytest.raises(bw.RedisUnavailable):
        q.size()
    assert q.stats()["errors"] >= 2


def test_bad_queue_input(redis_server):
    with pytest.raises(bw.ConfigError) as e:
        guard(redis_server, max_size=0)
    assert e.value.field == "max_size"
    with pytest.raises(bw.ConfigError) as e:
        guard(redis_server, warn_threshold=1.5)
    assert e.value.field == "warn_threshold"
    with pytest.raises(bw.ConfigError) as e:
        guard(redis_server, max_size=-1)
    assert e.value.field == "max_size"
    with pytest.raises(bw.ConfigError):
        bw.QueueGuard(port=70000)
    with pytest.raises(TypeError):
        guard(redis_server, max_size="ten")
    with pytest.raises(TypeError):
        bw.QueueGuard(42)
    q = guard(redis_server)
    with pytest.raises(TypeError):
        q.enqueue(42)
    with pytest.raises(TypeError):
        q.dequeue(None)
    with pytest.raises(ValueError):
        q.dlq(-1)
