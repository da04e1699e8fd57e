"""The reference toolkit's three agents from a configuration file:
Registry.load_file(examples/config/agents.ini) through the config component
(breakwater-config), then each agent's breaker trips at its own threshold
(hotel 5, payment 3, search 10 failures in a row), waits its own break
(30 s, 60 s, 15 s) and closes after its own number of probe successes
(2, 3, 1) — on the registry's ManualClock, exactly. Bad files raise
ConfigError naming FILE:LINE, the key and the rule. The file's pipelines
(registry.pipeline) run as Python Pipelines over the C pipelines the file
made: the Polly lab's retries and breaker as the file says, Python
exceptions classified by the arguments given; a file's bulkhead keeps its
max_wait_ms when reached by name."""
import os
import pathlib
import shutil

import pytest

import breakwater as bw

AGENTS = [("hotel_api", 5, 2, 30), ("payment_api", 3, 3, 60), ("search_agent", 10, 1, 15)]


class Transient(Exception):
    pass


def _agents_ini():
    roots = [os.environ.get("BREAKWATER_SOURCE_DIR"),
             str(pathlib.Path(__file__).resolve().parents[2])]
    for root in roots:
        if root and os.path.isfile(os.path.join(root, "examples/config/agents.ini")):
            return os.path.join(root, "examples/config/agents.ini")
    pytest.skip("examples/config/agents.ini not found: set BREAKWATER_SOURCE_DIR")


@pytest.fixture
def agents_ini():
    try:
        from breakwater import _config_c  # noqa: F401
    except ImportError:
        pytest.skip("built without the config component (breakwater-config)")
    return _agents_ini()


def fail(breaker):
    with pytest.raises(Transient):
        with breaker:
            raise Transient()


@pytest.mark.parametrize("name,failures,successes,break_s", AGENTS)
def test_the_three_agents_trip_at_their_own_thresholds(agents_ini, name, failures,
                                                      successes, break_s):
    clock = bw.ManualClock()
    reg = bw.Registry(clock=clock)
    made = reg.load_file(agents_ini, env_prefix=None)
    assert ("breaker", name) in made and ("pipeline", name) in made
    assert reg.count("breaker") == 4 and reg.count("pipeline") == 4
    b = reg.breaker(name)
    assert b.name == name
    for _ in range(failures - 1):
        fail(b)
    assert b.state == "closed"
    fail(b)
    assert b.state == "open"
    assert b.retry_in == pytest.approx(break_s)
    with pytest.raises(bw.BreakerOpen):
        with b:
            pass
    clock.advance(break_s - 0.001)
    assert b.state == "open"
    clock.advance(0.001)
    assert b.state == "half_open"
    for i in range(successes):
        assert b.state == "half_open", i
        with b:
            pass
    assert b.state == "closed"
    # the same object every time, and it is in the exposition
    assert reg.breaker(name) is b
    assert f'name="{name}"' in reg.prometheus()


def test_bad_files_name_the_file_line_key_and_rule(agents_ini, tmp_path):
    reg = bw.Registry()
    bad = tmp_path / "bad.ini"
    bad.write_text("[breaker.hotel_api]\nfailure_threshold = 0\n")
    with pytest.raises(bw.ConfigError) as e:
        reg.load_file(bad, env_prefix=None)
    err = e.value
    assert isinstance(err, ValueError)
    assert str(err).startswith(f"{bad}:2: breaker.hotel_api.failure_threshold: ")
    assert err.path == str(bad) and err.line == 2
    assert err.field == "breaker.hotel_api.failure_threshold"
    assert "failure_threshold" in err.rule and "'0'" in err.rule
    assert reg.count("breaker") == 0                  # nothing made

    bad.write_text("[breaker.x]\nfailure_treshold = 3\n")
    with pytest.raises(bw.ConfigError) as e:
        reg.load_file(bad, env_prefix=None)
    assert e.value.line == 2 and "failure_treshold" in str(e.value)

    with pytest.raises(bw.ConfigError) as e:
        reg.load_file(tmp_path / "missing.ini")
    assert e.value.line is None and "missing.ini" in str(e.value)

    # a second load of the same names makes nothing and says which
    reg.load_file(agents_ini, env_prefix=None)
    with pytest.raises(bw.ConfigError) as e:
        reg.load_file(agents_ini, env_prefix=None)
    assert "hotel_api" in str(e.value) or "exists" in str(e.value)

    with pytest.raises(TypeError):
        reg.load_file(42)
    with pytest.raises(ValueError):
        reg.load_file("a\x00b")


def test_the_environment_overrides_the_file(agents_ini, monkeypatch):
    monkeypatch.setenv("PYTEST_HOTEL_API_BREAKER_FAILURE_THRESHOLD", "2")
    reg = bw.Registry(clock=bw.ManualClock())
    reg.load_file(agents_ini, env_prefix="PYTEST")
    b = reg.breaker("hotel_api")
    fail(b)
    fail(b)
    assert b.state == "open"
    monkeypatch.setenv("PYTEST_NOBODY_BREAKER_FAILURE_THRESHOLD", "2")
    with pytest.raises(bw.ConfigError) as e:
        bw.Registry().load_file(agents_ini, env_prefix="PYTEST")
    assert "PYTEST_NOBODY_BREAKER_FAILURE_THRESHOLD" in str(e.value)


def test_reload_applies_changed_thresholds_to_live_breakers(agents_ini, tmp_path):
    path = tmp_path / "agents.ini"
    shutil.copy(agents_ini, path)
    clock = bw.ManualClock()
    reg = bw.Registry(clock=clock)
    reg.load_file(path, env_prefix=None)
    b = reg.breaker("payment_api")
    text = path.read_text()
    path.write_text(text.replace("failure_threshold = 3       ;",
                                 "failure_threshold = 4       ;"))
    out = reg.reload(path, env_prefix=None)
    assert out["applied"] == 1 and out["created"] == 0
    assert "breaker.payment_api.failure_threshold: 3 -> 4: applied" in out["report"]
    for _ in range(3):
        fail(b)
    assert b.state == "closed"
    fail(b)
    assert b.state == "open"
    # a bad reload changes nothing
    path.write_text(text.replace("failure_threshold = 3       ;",
                                 "failure_threshold = x       ;"))
    with pytest.raises(bw.ConfigError) as e:
        reg.reload(path, env_prefix=None)
    assert e.value.line is not None and e.value.line > 0


# ---- the file's pipelines from Python ---------------------------------------
#
# [pipeline.polly] = retry.polly (3 attempts, decorrelated jitter on base
# 200 ms, capped at 1.5 s), breaker.polly (time window: opens at 50 %
# failures over 10 s once 20 calls were seen; 15 s open), timeout 2s.
# The waits between attempts go to a recording sleep, so the registry's
# ManualClock stands still and every failure lands in the breaker's window.


class Permanent(Exception):
    pass


def _polly(agents_ini, **kwargs):
    clock = bw.ManualClock()
    reg = bw.Registry(clock=clock)
    reg.load_file(agents_ini, env_prefix=None)
    waits = []
    pl = reg.pipeline("polly", sleep=waits.append, **kwargs)
    return clock, reg, pl, waits


def test_a_file_pipeline_retries_as_the_file_says_and_its_breaker_opens(agents_ini):
    clock, reg, pl, waits = _polly(agents_ini, retry_on=Transient)
    assert isinstance(pl, bw.Pipeline) and pl.name == "polly"
    kinds = [type(m).__name__ for m in pl.strategies]
    assert kinds == ["Retry", "Breaker", "Timeout"]
    assert pl.strategies[1] is reg.breaker("polly")
    assert pl.strategies[2].seconds == 2.0
    attempts = []

    def flaky():
        attempts.append(clock.now())
        raise Transient("down")

    # 6 calls x 3 attempts (max_attempts = 3): 18 failures, the breaker
    # still closed (minimum_calls = 20)
    for call in range(6):
        with pytest.raises(Transient) as e:
            pl.call(flaky)
        assert e.value.breakwater_giveup == "exhausted"
        assert len(attempts) == 3 * (call + 1)
    assert reg.breaker("polly").state == "closed"
    # decorrelated jitter (docs/retry.md): a call's first two delays add up
    # to f(t2) / 1.4 x base_ms, t2 in [1, 2), f(t) = 2^t tanh(sqrt(4t)):
    # in [0.2754, 0.5676) s for base_ms 200 (each delay rounded to the ms)
    assert len(waits) == 12 and all(0 <= w <= 1.5 for w in waits), waits
    for first, second in zip(waits[0::2], waits[1::2]):
        assert 0.273 <= first + second <= 0.570, waits
    # the 7th call: failures 19 and 20 open it; the third attempt is refused
    # by the breaker, never made, and the call raises BreakerOpen from the
    # last error
    with pytest.raises(bw.BreakerOpen) as e:
        pl.call(flaky)
    assert len(attempts) == 20
    assert e.value.breakwater_giveup == "breaker"
    assert e.value.name == "polly" and e.value.retry_in == pytest.approx(15.0)
    assert isinstance(e.value.__cause__, Transient)
    assert reg.breaker("polly").state == "open"
    # refused at once now: no attempt
    with pytest.raises(bw.BreakerOpen):
        pl.call(flaky)
    assert len(attempts) == 20
    stats = pl.stats()
    assert stats["calls"] == 8 and stats["attempts"] == 20
    assert stats["failures"]["exhausted"] == 6 and stats["failures"]["breaker"] == 2
    # break_ms = 15s, then one probe success closes it (success_threshold 1)
    clock.advance(15.0)
    assert pl.call(lambda: "ok") == "ok"
    assert reg.breaker("polly").state == "closed"


def test_a_file_pipeline_classifies_with_the_arguments_given(agents_ini):
    clock, reg, pl, waits = _polly(agents_ini, retry_on=Transient, ignore=KeyError)
    calls = []

    def permanent():
        calls.append(1)
        raise Permanent("bad request")

    # outside retry_on: permanent, one attempt, raised as it is
    with pytest.raises(Permanent) as e:
        pl.call(permanent)
    assert len(calls) == 1 and e.value.breakwater_giveup == "permanent"
    with pytest.raises(KeyError):
        pl.call(lambda: {}["x"])
    # permanent failures are not breaker failures: 25 of them leave it closed
    for _ in range(25):
        with pytest.raises(Permanent):
            pl.call(permanent)
    assert reg.breaker("polly").state == "closed" and waits == []
    # another wrapper of the same C pipeline retries everything by default
    other = reg.pipeline("polly", sleep=waits.append)
    with pytest.raises(Permanent):
        other.call(permanent)
    assert len(calls) == 1 + 25 + 3
    assert other.stats()["calls"] == pl.stats()["calls"] == 28


def test_a_file_pipeline_decorates_loops_and_awaits(agents_ini):
    import asyncio
    clock, reg, pl, waits = _polly(agents_ini, retry_on=Transient)
    seen = []

    @pl
    def twice_then_ok(x):
        seen.append(x)
        if len(seen) < 3:
            raise Transient()
        return x * 2
    assert twice_then_ok(21) == 42 and seen == [21, 21, 21] and len(waits) == 2

    numbers = []
    for attempt in pl:
        with attempt:
            numbers.append(attempt.number)
            if attempt.number < 2:
                raise Transient()
    assert numbers == [1, 2]

    tries = []

    async def flaky_async():
        tries.append(1)
        if len(tries) < 3:
            raise Transient()
        return "done"
    assert asyncio.run(pl.call_async(flaky_async)) == "done" and len(tries) == 3

    async def always():
        tries.append(1)
        raise Transient()
    with pytest.raises(Transient):
        asyncio.run(pl.call_async(always))
    assert len(tries) == 6


def test_a_file_pipeline_keeps_the_registry_alive(agents_ini):
    import gc
    clock, reg, pl, waits = _polly(agents_ini)
    del reg
    gc.collect()
    assert pl.call(lambda: 7) == 7
    assert pl.stats()["successes"] == 1


def test_an_unknown_pipeline_name_raises_naming_it(agents_ini, tmp_path):
    reg = bw.Registry(clock=bw.ManualClock())
    reg.load_file(agents_ini, env_prefix=None)
    with pytest.raises(KeyError) as e:
        reg.pipeline("nobody")
    assert "nobody" in str(e.value)
    with pytest.raises(TypeError):
        reg.pipeline(3)
    # a pipeline added from Python exists, but its strategies are not the file's
    reg.add(bw.Pipeline([bw.Bulkhead("b")], name="mine"))
    with pytest.raises(ValueError) as e:
        reg.pipeline("mine")
    assert "mine" in str(e.value)
    # retry_on for a pipeline without a retry says so
    ini = tmp_path / "one.ini"
    ini.write_text("[bulkhead.x]\n[pipeline.only]\nstrategies = bulkhead.x wait 0\n")
    reg.load_file(ini, env_prefix=None)
    with pytest.raises(ValueError) as e:
        reg.pipeline("only", retry_on=Transient)
    assert "retry_on" in str(e.value) and "only" in str(e.value)
    with pytest.raises(ValueError):
        reg.pipeline("only", retry_on=Exception)
    # without a retry every exception is a failure, raised as it is
    with pytest.raises(Transient):
        reg.pipeline("only").call(fail_with_transient)


def fail_with_transient():
    raise Transient()


def test_the_agents_pipelines_wait_as_their_bulkheads_say(agents_ini):
    reg = bw.Registry(clock=bw.ManualClock())
    reg.load_file(agents_ini, env_prefix=None)
    # [bulkhead.default] max_wait_ms = 2s reaches every bulkhead of the file
    bh = reg.bulkhead("payment_agent")
    assert bh.max_wait_ms == 2000
    assert reg.bulkhead("payment_agent", max_concurrent=5, max_wait_ms=2000) is bh
    with pytest.raises(ValueError) as e:
        reg.bulkhead("payment_agent", max_wait_ms=500)
    assert isinstance(e.value, bw.ConfigError) and e.value.field == "max_wait_ms"
    assert "2000" in str(e.value) and "500" in str(e.value)
    with pytest.raises(ValueError) as e:
        reg.bulkhead("payment_agent", max_concurrent=6)
    assert e.value.field == "max_concurrent"
    pl = reg.pipeline("payment_api", retry_on=Transient)
    assert [type(m).__name__ for m in pl.strategies] == ["Bulkhead", "Retry", "Breaker"]
    assert pl.strategies[0] is bh
    # the file's 2 s wait for a slot, on the registry's clock, then BulkheadFull
    clock = reg._clock
    slots = [bh.acquire() for _ in range(5)]
    t0 = clock.now()
    with pytest.raises(bw.BulkheadFull) as e:
        pl.call(lambda: None)
    assert "payment_agent" in str(e.value) and e.value.breakwater_giveup == "limit"
    assert clock.now() - t0 == pytest.approx(2.0)
    for s in slots:
        s.release()
    assert pl.call(lambda: "in") == "in"


def test_a_file_bulkhead_keeps_its_max_wait_when_reached_by_name(tmp_path, agents_ini):
    ini = tmp_path / "slow.ini"
    ini.write_text("[bulkhead.slow]\nmax_concurrent = 1\nmax_wait_ms = 300ms\n")
    clock = bw.ManualClock()
    reg = bw.Registry(clock=clock)
    reg.load_file(ini, env_prefix=None)
    bh = reg.bulkhead("slow")
    assert bh.max_wait_ms == 300                      # not the default 2000
    pl = bw.Pipeline([bh])                            # a Python pipeline waits as the file says
    slot = bh.acquire()
    t0 = clock.now()
    with pytest.raises(bw.BulkheadFull):
        pl.call(lambda: None)
    assert clock.now() - t0 == pytest.approx(0.3)
    slot.release()
    with pytest.raises(bw.ConfigError) as e:
        reg.bulkhead("slow", max_wait_ms=2000)
    assert e.value.field == "max_wait_ms"


def test_the_standard_http_pipelines_of_a_file(agents_ini):
    ini = os.path.join(os.path.dirname(agents_ini), "http.ini")
    reg = bw.Registry(clock=bw.ManualClock())
    reg.load_file(ini, env_prefix=None)
    kinds = lambda pl: [type(m).__name__ for m in pl.strategies]  # noqa: E731
    pay = reg.pipeline("payments", retry_on=Transient, sleep=lambda s: None)
    assert kinds(pay) == ["deadline", "Limiter", "Breaker", "Retry", "Timeout"]
    assert pay.strategies[0].seconds == 20.0 and pay.strategies[4].seconds == 2.0
    assert pay.strategies[2] is reg.breaker("payments")
    search = reg.pipeline("search")                   # use_retry = off
    assert kinds(search) == ["deadline", "Limiter", "Breaker", "Timeout"]
    attempts = []

    def flaky():
        attempts.append(1)
        raise Transient()
    with pytest.raises(Transient):
        pay.call(flaky)
    assert len(attempts) == 2                         # retry.max_attempts = 2
    with pytest.raises(Transient):
        search.call(flaky)
    assert len(attempts) == 3
    # limit_per_attempt = true: the limiter inside the retry, a slot per attempt
    inv = reg.pipeline("inventory", retry_on=Transient, sleep=lambda s: None)
    assert kinds(inv) == ["deadline", "Breaker", "Retry", "Limiter", "Timeout"]
    assert inv.strategies[3] is reg.limiter("inventory")
    assert inv.strategies[4].seconds == 2.0
    assert inv.call(lambda: 42) == 42
    assert reg.limiter("inventory").stats()["admitted"] == 1
    with pytest.raises(Transient):
        inv.call(flaky)
    assert len(attempts) == 7                         # the preset's 4 attempts
    assert reg.limiter("inventory").stats()["admitted"] == 5  # one slot each


def test_a_pipeline_made_by_reload_is_reachable(agents_ini, tmp_path):
    path = tmp_path / "agents.ini"
    shutil.copy(agents_ini, path)
    reg = bw.Registry(clock=bw.ManualClock())
    reg.load_file(path, env_prefix=None)
    with pytest.raises(KeyError):
        reg.pipeline("extra")
    path.write_text(path.read_text() +
                    "\n[pipeline.extra]\nstrategies = retry.hotel_api, breaker.hotel_api\n")
    out = reg.reload(path, env_prefix=None)
    assert "pipeline.extra: created" in out["report"]
    pl = reg.pipeline("extra", retry_on=Transient, sleep=lambda s: None)
    assert [type(m).__name__ for m in pl.strategies] == ["Retry", "Breaker"]
    attempts = []

    def flaky():
        attempts.append(1)
        raise Transient()
    with pytest.raises(Transient):
        pl.call(flaky)
    assert len(attempts) == 3                         # retry.hotel_api: max_attempts = 3


@pytest.fixture
def config_component():
    try:
        from breakwater import _config_c  # noqa: F401
    except ImportError:
        pytest.skip("built without the config component (breakwater-config)")


class Overloaded(Exception):
    """The partner's fast rejection (a 429 / 503)."""


def overloaded():
    raise Overloaded()


THROTTLE_INI = """\
[throttle.partner]
k = {k}
window_ms = 1h
buckets = 60
seed = {seed}

[retry.partner]
max_attempts = 3
base_ms = 100ms
multiplier = 1
jitter = none

[pipeline.partner]
strategies = retry.partner, throttle.partner, timeout 2s
"""


def test_a_file_throttle_in_a_file_pipeline_refuses_as_the_formula_says(
        config_component, tmp_path):
    # The file's throttle inside the file's retry: each attempt is a request.
    # The refusals are predicted from the rule and the seed's draws (the
    # window is an hour: every event of the test stays in it).
    from test_throttle import SEED, Replay
    ini = tmp_path / "partner.ini"
    ini.write_text(THROTTLE_INI.format(k=2, seed=SEED))
    clock = bw.ManualClock()
    reg = bw.Registry(clock=clock)
    assert ("throttle", "partner") in reg.load_file(ini, env_prefix=None)
    t = reg.throttle("partner")
    assert (t.k, t.window_ms, t.buckets) == (2.0, 3600000, 60)
    assert reg.throttle("partner", k=2, window_ms="1h") is t
    with pytest.raises(bw.ConfigError) as e:
        reg.throttle("partner", k=3)
    assert e.value.field == "k"
    pl = reg.pipeline("partner", retry_on=Overloaded)
    assert [type(m).__name__ for m in pl.strategies] == ["Retry", "Throttle", "Timeout"]
    assert pl.strategies[1] is t
    model = Replay(2.0, SEED)
    sent = refused = 0
    for _ in range(40):
        attempts = 0
        while True:                       # the retry's attempts, as predicted
            if model.refuses():
                expect = bw.ThrottledError
                model.requests += 1
                break
            attempts += 1
            model.requests += 1
            if attempts == 3:
                expect = Overloaded
                break
        before = t.stats()
        with pytest.raises(expect) as e:
            pl.call(overloaded)
        after = t.stats()
        assert after.rejected - before.rejected == attempts
        assert after.throttled - before.throttled == (expect is bw.ThrottledError)
        if expect is bw.ThrottledError:
            assert e.value.name == "partner" and e.value.breakwater_giveup == "limit"
            refused += 1
        else:
            assert e.value.breakwater_giveup == "exhausted"
        sent += attempts
    s = t.stats()
    assert refused > 0 and sent > 0
    assert (s.requests, s.accepts, s.rejected, s.throttled) == (
        model.requests, 0, sent, refused)
    assert t.probability == model.p
    assert pl.stats()["failures"]["limit"] == refused


def test_a_file_throttle_takes_the_environment_and_a_reload(config_component, tmp_path,
                                                            monkeypatch):
    ini = tmp_path / "partner.ini"
    ini.write_text(THROTTLE_INI.format(k=2, seed=1))
    monkeypatch.setenv("PYTEST_PARTNER_THROTTLE_K", "4")
    reg = bw.Registry(clock=bw.ManualClock())
    reg.load_file(ini, env_prefix="PYTEST")
    t = reg.throttle("partner")
    assert t.k == 4.0
    # k is applied live; the window is fixed at creation (reported)
    ini.write_text(THROTTLE_INI.format(k=3, seed=1).replace("window_ms = 1h",
                                                             "window_ms = 2h"))
    out = reg.reload(ini, env_prefix=None)
    lines = [line for line in out["report"] if line.startswith("throttle.partner.")]
    assert any(line.startswith("throttle.partner.k: 4 -> 3") and "applied" in line
               for line in lines), out["report"]
    assert any(line.startswith("throttle.partner.window_ms") and "not applied" in line
               for line in lines), out["report"]
    assert reg.throttle("partner") is t and t.k == 3.0 and t.window_ms == 3600000
    # a bad value names the file, the line and the key; nothing changes
    ini.write_text(THROTTLE_INI.format(k=0.5, seed=1))
    with pytest.raises(bw.ConfigError) as e:
        reg.reload(ini, env_prefix=None)
    assert e.value.line == 2 and e.value.field == "throttle.partner.k"
    assert "[1, 10]" in e.value.rule
    assert t.k == 3.0


def test_a_file_limiter_with_stuck_timeout_cuts_a_file_pipelines_attempt(
        config_component, tmp_path):
    # [limiter.NAME] startup_max_step and stuck_timeout from a file; inside
    # the file pipeline's retry an attempt above the proven level gets the
    # stuck age (2 x the 100 ms answers; trusted once 16 have come back)
    # instead of the file's timeout 2s.
    ini = tmp_path / "limits.ini"
    ini.write_text("[limiter.partner]\ninitial_limit = 10\nstuck_ratio = 2\n"
                   "stuck_timeout = true\nstartup_max_step = 100\n"
                   "[retry.partner]\nmax_attempts = 2\n"
                   "[pipeline.partner]\n"
                   "strategies = retry.partner, limiter.partner, timeout 2s\n")
    clock = bw.ManualClock()
    reg = bw.Registry(clock=clock)
    reg.load_file(ini, env_prefix=None)
    pl = reg.pipeline("partner", retry_on=Transient)
    lim = reg.limiter("partner")
    assert pl.strategies[1] is lim
    seen = []

    def answer():
        seen.append(bw.remaining())
        clock.advance(0.1)
        return "ok"
    for _ in range(16):                       # level 1, its own 2 s; proves 1
        assert pl.call(answer) == "ok"
    other = lim.acquire()
    assert pl.call(answer) == "ok"            # level 2: cut to 200 ms
    assert seen == [2.0] * 16 + [0.2]
    other.release("success")


def test_an_existing_limiter_rate_limiter_or_budget_keeps_its_settings(tmp_path):
    """Reached again by name, an object made by the file keeps its settings:
    the same fields are fine, a differing one raises ConfigError naming it
    (as for bulkheads and throttles), instead of being silently ignored."""
    ini = tmp_path / "kinds.ini"
    ini.write_text("[limiter.search]\nmax_limit = 50\n"
                   "[ratelimit.search]\nrate_per_sec = 20\n"
                   "[budget.search]\nkind = ratio\nbudget_percent = 10\n")
    reg = bw.Registry(clock=bw.ManualClock())
    reg.load_file(ini, env_prefix=None)
    assert reg.limiter("search", max_limit=50) is reg.limiter("search")
    with pytest.raises(bw.ConfigError) as e:
        reg.limiter("search", max_limit=80)
    assert e.value.field == "max_limit"
    assert reg.rate_limiter("search", rate_per_sec=20) is reg.rate_limiter("search")
    with pytest.raises(bw.ConfigError) as e:
        reg.rate_limiter("search", rate_per_sec=30)
    assert e.value.field == "rate_per_sec"
    assert reg.budget("search", budget_percent=10) is reg.budget("search")
    with pytest.raises(bw.ConfigError) as e:
        reg.budget("search", budget_percent=25)
    assert e.value.field == "budget_percent"
