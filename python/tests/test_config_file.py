"""The reference toolkit's three agents from a configuration file:
Registry.load_file(examples/config/agents.ini) through the config component
(breakwater-config), then each agent's breaker trips at its own threshold
(hotel 5, payment 3, search 10 failures in a row), waits its own break
(30 s, 60 s, 15 s) and closes after its own number of probe successes
(2, 3, 1) — on the registry's ManualClock, exactly. Bad files raise
ConfigError naming FILE:LINE, the key and the rule."""
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
