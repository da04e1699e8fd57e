"""Events to a Python callable or the logging module: each event arrives as
the dict of the JSON line the core writes (docs/events.md); a callback that
raises never reaches the C core."""
import gc
import json
import logging
import os
import threading

import pytest

import breakwater as bw



def _schema_path():
    """docs/events.schema.json of the source tree: next to python/, or under
    $BREAKWATER_SOURCE_DIR (scripts/python_check.sh tests a copy of python/)."""
    for root in (os.path.join(os.path.dirname(__file__), "..", ".."),
                 os.environ.get("BREAKWATER_SOURCE_DIR", "")):
        path = os.path.join(root, "docs", "events.schema.json")
        if root and os.path.exists(path):
            return path
    return None


class Down(Exception):
    pass


def trip(b, n=1):
    for _ in range(n):
        with pytest.raises(Down):
            with b:
                raise Down()


def test_breaker_transitions_arrive_as_dicts():
    events = []
    clock = bw.ManualClock()
    b = bw.Breaker("payment_api", clock=clock, sink=bw.Sink(events.append),
                   trip_rule="consecutive", failure_threshold=2, break_ms="30s")
    trip(b, 2)
    assert [e["event"] for e in events] == ["circuit_opened"]
    ev = events[0]
    assert ev["kind"] == "breaker" and ev["name"] == "payment_api"
    assert ev["break_ms"] == 30000 and isinstance(ev["reason"], str) and ev["reason"]
    assert isinstance(ev["ts"], str) and ev["ts"].endswith("Z")
    clock.advance(30)
    with b:
        pass
    assert [e["event"] for e in events] == ["circuit_opened", "circuit_half_opened",
                                            "circuit_closed"]


def test_events_match_the_schema():
    jsonschema = pytest.importorskip("jsonschema")
    path = _schema_path()
    if path is None:
        pytest.skip("docs/events.schema.json not found (set BREAKWATER_SOURCE_DIR)")
    with open(path) as f:
        schema = json.load(f)
    events = []
    sink = bw.Sink(events.append)
    clock = bw.ManualClock()
    b = bw.Breaker("s", clock=clock, sink=sink, failure_threshold=1,
                   trip_rule="consecutive")
    trip(b)
    r = bw.Retry("r", max_attempts=2, base_ms=10, jitter="none", clock=clock, sink=sink)
    with pytest.raises(Down):
        r.call(lambda: (_ for _ in ()).throw(Down()))
    assert {"circuit_opened", "retry_scheduled", "retry_gave_up"} <= {e["event"] for e in events}
    for ev in events:
        jsonschema.validate(ev, schema)


def test_to_logging():
    records = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)
    logger = logging.getLogger("test_events.bw")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    logger.addHandler(Keep())
    b = bw.Breaker("hotel_api", clock=bw.ManualClock(), trip_rule="consecutive",
                   failure_threshold=1, sink=bw.events.to_logging(logger))
    trip(b)
    b.reset()
    assert [r.levelno for r in records] == [logging.WARNING, logging.INFO]
    assert records[0].getMessage().startswith("circuit_opened breaker 'hotel_api': ")
    assert records[0].breakwater_event["event"] == "circuit_opened"
    assert records[1].breakwater_event["event"] == "circuit_reset"
    # one level for everything
    fixed = []
    logger.handlers[0].emit = fixed.append
    b2 = bw.Breaker("x", trip_rule="consecutive", failure_threshold=1,
                    sink=bw.events.to_logging(logger, level=logging.ERROR))
    trip(b2)
    assert [r.levelno for r in fixed] == [logging.ERROR]


def test_a_raising_callback_never_reaches_c(caplog):
    calls = []

    def bad(ev):
        calls.append(ev["event"])
        raise RuntimeError("callback bug")
    sink = bw.Sink(bad)
    clock = bw.ManualClock()
    b = bw.Breaker("b", clock=clock, sink=sink, trip_rule="consecutive",
                   failure_threshold=1, break_ms="1s")
    with caplog.at_level(logging.ERROR, logger="breakwater.events"):
        trip(b)
        clock.advance(1)
        with b:
            pass
    assert calls == ["circuit_opened", "circuit_half_opened", "circuit_closed"]
    assert sink.errors == 3 and sink.delivered == 0
    assert "callback bug" in caplog.text
    assert b.state == "closed"


def test_the_policy_keeps_its_sink_alive():
    events = []
    b = bw.Breaker("kept", trip_rule="consecutive", failure_threshold=1,
                   sink=bw.Sink(events.append))
    gc.collect()
    trip(b)
    assert [e["event"] for e in events] == ["circuit_opened"]


def test_events_from_many_threads():
    """Conservation: every breaker opened by every thread is one event."""
    events = []
    lock = threading.Lock()

    def keep(ev):
        with lock:
            events.append(ev["name"])
    sink = bw.Sink(keep)
    n_threads, per_thread = 4, 50

    def work(t):
        b = bw.Breaker(f"t{t}", sink=sink, trip_rule="consecutive", failure_threshold=1)
        for _ in range(per_thread):
            trip(b)
            b.reset()
    threads = [threading.Thread(target=work, args=(t,)) for t in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    # per_thread opens and per_thread resets per breaker
    assert len(events) == n_threads * per_thread * 2
    assert sink.delivered == len(events) and sink.errors == 0


def test_bad_sinks():
    with pytest.raises(TypeError):
        bw.Sink(42)
    with pytest.raises(TypeError, match="sink"):
        bw.Breaker(sink="stdout")
    with pytest.raises(TypeError, match="sink"):
        bw.Retry(sink=print)
    with pytest.raises(TypeError):
        bw.events.to_logging("root")


def test_every_refusal_or_loss_in_the_schema_logs_as_a_warning():
    """A new event type that refuses, drops, gives up or fires an alert must
    not log at INFO by default: LEVELS follows the schema's event list."""
    path = _schema_path()
    if path is None:
        pytest.skip("docs/events.schema.json not found (set BREAKWATER_SOURCE_DIR)")
    with open(path) as f:
        names = json.load(f)["properties"]["event"]["enum"]
    loud = ("_rejected", "_dropped", "_gave_up", "_refused", "_limited",
            "_exhausted", "_lettered", "_firing", "_unavailable", "_warning")
    for name in names:
        if name.endswith(loud):
            assert bw.events.LEVELS.get(name, logging.INFO) >= logging.WARNING, name
