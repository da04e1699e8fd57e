"""Registry: get-or-create by name per kind over bw_registry_t, objects
added from elsewhere, and registry.prometheus() — parsed with
prometheus_client's own parser."""
import gc
import weakref

import pytest

import breakwater as bw


class Down(Exception):
    pass


def parse(text):
    parser = pytest.importorskip("prometheus_client.parser")
    samples = {}
    for family in parser.text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def value(samples, metric, **labels):
    key = (metric, tuple(sorted(labels.items())))
    assert key in samples, f"{metric}{labels} not in {sorted(k for k in samples if metric in k[0])}"
    return samples[key]


def test_get_or_create_by_name_per_kind():
    reg = bw.Registry(clock=bw.ManualClock())
    b = reg.breaker("payments", failure_threshold=3, trip_rule="consecutive")
    assert isinstance(b, bw.Breaker) and b.name == "payments"
    assert reg.breaker("payments") is b           # the same object, fields ignored
    assert reg.breaker("search") is not b
    bh = reg.bulkhead("payments", max_concurrent=2)  # its own namespace
    assert isinstance(bh, bw.Bulkhead) and bh.name == "payments"
    assert reg.bulkhead("payments") is bh
    assert isinstance(reg.limiter("payments", initial_limit=5), bw.Limiter)
    assert isinstance(reg.rate_limiter("payments", rate_per_sec=10), bw.RateLimiter)
    budget = reg.budget("payments")
    r = reg.retry("payments", max_attempts=2, base_ms=1, jitter="none", budget=budget,
                  retry_on=Down)
    assert isinstance(r, bw.Retry) and r.budget is budget
    assert reg.count("breaker") == 2 and reg.count("bulkhead") == 1
    assert reg.count("limiter") == reg.count("ratelimit") == reg.count("retry") == 1
    # they work, and the breaker's fields were applied (3 consecutive)
    for _ in range(3):
        with pytest.raises(Down):
            with b:
                raise Down()
    assert b.state == "open"
    with bh:
        assert bh.stats()["in_use"] == 1
    assert bw.default_registry() is bw.default_registry()


def test_objects_outlive_the_registry_reference():
    reg = bw.Registry()
    b = reg.breaker("kept")
    del reg
    gc.collect()
    with b:        # the breaker keeps its registry (which owns it) alive
        pass
    assert b.stats()["successes"] == 1


def test_prometheus_text_parses():
    clock = bw.ManualClock()
    reg = bw.Registry(clock=clock)
    b = reg.breaker("payment_api", trip_rule="consecutive", failure_threshold=2)
    for _ in range(2):
        with pytest.raises(Down):
            with b:
                raise Down()
    with pytest.raises(bw.BreakerOpen):
        with b:
            pass
    bh = reg.bulkhead("rooms", max_concurrent=4)
    with bh:
        text = reg.prometheus()
    assert isinstance(text, str) and text.endswith("\n")
    samples = parse(text)
    assert any(name.startswith("breakwater_") for name, _ in samples)
    # the breaker's counters, labelled by its name
    counted = {k: v for k, v in samples.items()
               if ("name", "payment_api") in k[1] and "breaker" in k[0]}
    assert counted, text
    assert 2.0 in counted.values()   # two failures
    held = {k: v for k, v in samples.items() if ("name", "rooms") in k[1]}
    assert held, text


def test_added_objects_appear_in_prometheus(segment):
    reg = bw.Registry()
    sb = bw.SharedBreaker("shared_pay", segment=segment, failure_threshold=5)
    assert reg.add(sb) is sb
    bh = reg.add(bw.Bulkhead("outside", max_concurrent=3))
    pl = reg.add(bw.Pipeline([bw.Breaker("pb")], name="checkout"))
    pl.call(lambda: None)
    assert reg.count("breaker_if") == 1 and reg.count("pipeline") == 1
    text = reg.prometheus()
    for name in ("shared_pay", "outside", "checkout"):
        assert f'"{name}"' in text, name
    parse(text)
    with pytest.raises(bw.ConfigError) as e:
        reg.add(bw.Bulkhead("outside"))   # the name is taken in that kind
    assert e.value.field == "name"
    del bh


def test_bad_registry_input():
    reg = bw.Registry()
    with pytest.raises(TypeError):
        reg.breaker(42)
    with pytest.raises(bw.ConfigError) as e:
        reg.breaker("")
    with pytest.raises(bw.ConfigError) as e:
        reg.bulkhead("b", max_concurrent=0)
    assert e.value.field == "max_concurrent"
    assert reg.count("bulkhead") == 0
    with pytest.raises(TypeError, match="unexpected keyword"):
        reg.breaker("x", failure_treshold=3)
    with pytest.raises(TypeError):
        reg.add(bw.Breaker())
    with pytest.raises(TypeError):
        reg.add("bulkhead")
    with pytest.raises(ValueError):
        reg.count("nothing")
    with pytest.raises(ValueError):
        bw.Registry(max_objects=-1)
    with pytest.raises(TypeError):
        bw.Registry(sink=print)


def test_added_objects_live_as_long_as_the_registrys_wrappers():
    # The C registry borrows what add() puts in it, and a wrapper reached by
    # name (which keeps the C registry, not the Registry) uses it: the added
    # object lives as long as the C registry does, not only the Registry.
    reg = bw.Registry()
    added = weakref.ref(reg.add(bw.Bulkhead("outside", max_concurrent=2)))
    bh = reg.bulkhead("outside")
    del reg
    gc.collect()
    assert added() is not None
    slot = bh.acquire()
    assert bh.stats()["in_use"] == 1
    slot.release()
    assert bh.stats()["in_use"] == 0


def test_a_registry_pipeline_is_wrapped_from_the_objects_it_holds():
    # Registry.pipeline reads the C pipeline's strategies back and wraps
    # each object by kind and name; the object must be the registry's own
    # (the same pointer), which tells a limiter from a bulkhead of its name.
    clock = bw.ManualClock()
    reg = bw.Registry(clock=clock)
    bh = reg.bulkhead("x", max_concurrent=1, max_wait_ms=0)
    lim = reg.limiter("x")
    rl = reg.rate_limiter("r", rate_per_sec=10)
    br = reg.breaker("b")
    rt = reg.retry("t", max_attempts=2)
    reg.add(bw.Pipeline([bw.deadline(5, clock=clock), (rl, 0.25), lim, br, rt,
                         bw.Timeout(1)], name="mix"))
    view = reg.pipeline("mix", sleep=lambda s: None)
    assert [type(m).__name__ for m in view.strategies] == [
        "deadline", "RateLimiter", "Limiter", "Breaker", "Retry", "Timeout"]
    assert view.strategies[0].seconds == 5.0 and view.strategies[5].seconds == 1.0
    assert view.strategies[1] is rl and view.strategies[2] is lim
    assert view.strategies[3] is br and view.strategies[4]._policy == rt._policy
    assert view.call(lambda: "ok") == "ok" and view.stats()["successes"] == 1
    # the bulkhead named "x" is the bulkhead, not the limiter
    added = weakref.ref(reg.add(bw.Pipeline([bh], name="slots")))
    slots = reg.pipeline("slots")
    assert slots.strategies == (bh,)
    # an object of the same name that is not the registry's is refused,
    # naming the pipeline and the strategy
    reg.add(bw.Pipeline([br, bw.Bulkhead("x", clock=clock)], name="impostor"))
    with pytest.raises(ValueError) as e:
        reg.pipeline("impostor")
    assert "'impostor'" in str(e.value) and "strategies[1] (limit 'x')" in str(e.value)
    # the view keeps the added pipeline it runs (the C registry only
    # borrows it) alive when the Registry goes
    del reg, e
    gc.collect()
    assert added() is not None
    assert slots.call(lambda: 7) == 7 and slots.stats()["successes"] == 1


class Overloaded(Exception):
    """The partner's fast rejection (a 429 / 503)."""


def test_throttles_by_name_on_the_registrys_clock():
    clock = bw.ManualClock()
    reg = bw.Registry(clock=clock)
    t = reg.throttle("partner", k=3, window_ms="10s", buckets=10, seed=7)
    assert isinstance(t, bw.Throttle) and t.name == "partner"
    assert (t.k, t.window_ms, t.buckets) == (3.0, 10000, 10)
    assert reg.throttle("partner") is t                    # the same object
    assert reg.throttle("partner", k=3, buckets=10) is t   # the same fields
    assert reg.count("throttle") == 1
    # a field that differs from the live throttle's is refused, naming it
    with pytest.raises(bw.ConfigError) as e:
        reg.throttle("partner", k=2)
    assert isinstance(e.value, ValueError) and e.value.field == "k"
    assert "3" in str(e.value) and "2" in str(e.value)
    with pytest.raises(bw.ConfigError) as e:
        reg.throttle("partner", window_ms="1m")
    assert e.value.field == "window_ms"
    # bad fields are the core's errors, and make nothing
    with pytest.raises(bw.ConfigError) as e:
        reg.throttle("other", k=0.5)
    assert e.value.field == "k" and "[1, 10]" in str(e.value)
    with pytest.raises(bw.ConfigError) as e:
        reg.throttle("other", window_ms=1000, buckets=7)
    assert e.value.field == "buckets"
    with pytest.raises(TypeError, match="unexpected keyword"):
        reg.throttle("other", kk=2)
    assert reg.count("throttle") == 1
    # one rejection: p = (1 - 3 * 0) / (1 + 1), read on the registry's clock
    with pytest.raises(Overloaded):
        with t:
            raise Overloaded()
    assert t.probability == 0.5
    clock.advance(10.0)                                    # the window has slid past it
    assert t.probability == 0.0
    s = t.stats()
    assert (s.requests, s.rejected, s.window_requests) == (1, 1, 0)
    # ignore is the wrapper's: an accept (a 4xx)
    t4 = reg.throttle("four", ignore=KeyError)
    with pytest.raises(KeyError):
        with t4:
            raise KeyError("404")
    assert t4.stats().accepts == 1


def test_throttle_families_in_prometheus():
    clock = bw.ManualClock()
    reg = bw.Registry(clock=clock)
    t = reg.throttle("partner", k=1, seed=7)
    t.call(lambda: None)                                   # an accept
    with pytest.raises(Overloaded):                        # p is 0: sent, rejected
        t.call(rejecting)
    # p = (2 - 1) / 3: seed 7's first draw, 0.70, admits it; never sent
    permit = t.acquire()
    permit.release("withdrawn")
    added = reg.add(bw.Throttle("outside", clock=clock))
    assert reg.count("throttle") == 2
    samples = parse(reg.prometheus())
    s = t.stats()
    assert (s.requests, s.accepts, s.rejected, s.throttled, s.withdrawn) == (3, 1, 1, 0, 1)
    assert (s.window_requests, s.window_accepts) == (2, 1)  # withdrawn: not counted
    for metric, want in (("requests_total", 3), ("accepts_total", 1),
                         ("rejected_total", 1), ("throttled_total", 0),
                         ("withdrawn_total", 1), ("window_requests", 2),
                         ("window_accepts", 1),
                         ("refusal_probability", (2 - 1) / (2 + 1))):
        assert value(samples, f"breakwater_throttle_{metric}", name="partner") == want, metric
    assert value(samples, "breakwater_throttle_requests_total", name="outside") == 0
    with pytest.raises(bw.ConfigError) as e:
        reg.add(bw.Throttle("outside", clock=clock))      # the name is taken in that kind
    assert e.value.field == "name"
    with pytest.raises(bw.ConfigError):
        reg.add(added)                                     # once only


def rejecting():
    raise Overloaded()


def test_a_registry_pipeline_wraps_its_throttle():
    clock = bw.ManualClock()
    reg = bw.Registry(clock=clock)
    t = reg.throttle("partner", ignore=KeyError)
    lim = reg.limiter("partner")
    rt = reg.retry("r", max_attempts=2, base_ms=1, jitter="none")
    reg.add(bw.Pipeline([rt, t, lim], name="out"))
    view = reg.pipeline("out", sleep=lambda s: None)
    assert [type(m).__name__ for m in view.strategies] == ["Retry", "Throttle", "Limiter"]
    assert view.strategies[1] is t and view.strategies[2] is lim
    assert view.call(lambda: "ok") == "ok"
    assert t.stats().accepts == 1
    # the throttle's ignore is a member's: permanent, an accept, not retried
    calls = []

    def not_found():
        calls.append(1)
        raise KeyError("404")
    with pytest.raises(KeyError):
        view.call(not_found)
    assert len(calls) == 1 and t.stats().accepts == 2
    # a throttle of the same name that is not the registry's is refused
    reg.add(bw.Pipeline([bw.Throttle("partner", clock=clock)], name="impostor"))
    with pytest.raises(ValueError) as e:
        reg.pipeline("impostor")
    assert "'impostor'" in str(e.value) and "strategies[0] (custom 'partner')" in str(e.value)
