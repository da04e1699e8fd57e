"""A real gunicorn (Debian's), 4 sync workers on 127.0.0.1, serving a WSGI
app through one SharedBreaker: failures count across workers, and once the
breaker trips every worker refuses; a worker killed (kill -9) while holding
the half-open probe does not wedge the others (the probe is a lease).
Started and stopped by the test."""
import concurrent.futures
import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

import breakwater as bw

GUNICORN = shutil.which("gunicorn")
pytestmark = pytest.mark.skipif(GUNICORN is None, reason="gunicorn not installed")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path)
        r = conn.getresponse()
        return r.status, r.read().decode()
    finally:
        conn.close()


def _burst(port, path, n=4):
    """n requests at once: sync workers are busy 0.2 s each, so 4 requests
    land on 4 distinct workers."""
    with concurrent.futures.ThreadPoolExecutor(n) as ex:
        return list(ex.map(lambda _: _get(port, path), range(n)))


def _serve(app, segment, tmp_path):
    """Runs gunicorn (4 sync workers, --preload) serving `app` on a free
    loopback port until the generator is closed; yields the port once all
    4 workers answer."""
    port = _free_port()
    env = dict(os.environ)
    env["BW_TEST_SEGMENT"] = segment
    env["BW_TEST_DIR"] = str(tmp_path)
    here = os.path.dirname(os.path.abspath(__file__))
    env["PYTHONPATH"] = os.pathsep.join(
        [here] + [p for p in sys.path if p and os.path.isdir(p)])
    log = open(tmp_path / "gunicorn.log", "w+")
    proc = subprocess.Popen(
        [GUNICORN, "--workers", "4", "--worker-class", "sync", "--preload",
         "--bind", f"127.0.0.1:{port}", "--timeout", "30",
         "--graceful-timeout", "5", app],
        env=env, stdout=log, stderr=subprocess.STDOUT, cwd=here)
    try:
        deadline = time.monotonic() + 20
        while True:
            if proc.poll() is not None:
                log.seek(0)
                pytest.fail(f"gunicorn exited ({proc.returncode}):\n{log.read()}")
            try:
                if _get(port, "/nothing")[0] == 404:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("gunicorn did not start within 20 s")
            time.sleep(0.05)
        # every worker up: a burst of 4 answered by 4 distinct workers
        while len({b.split()[1] for _, b in _burst(port, "/check")}) < 4:
            if time.monotonic() > deadline:
                pytest.fail("4 workers did not answer within 20 s")
        yield port
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture
def server(segment, tmp_path):
    yield from _serve("wsgi_app:app", segment, tmp_path)


@pytest.fixture
def probe_server(segment, tmp_path):
    yield from _serve("wsgi_probe_app:app", segment, tmp_path)


def test_gunicorn_workers_share_one_breaker(server, segment):
    port = server
    first = _burst(port, "/fail")
    second = _burst(port, "/fail")
    statuses = [s for s, _ in first + second]
    assert statuses == [502] * 8, first + second
    pids = {body.split()[1] for _, body in first + second}
    assert len(pids) >= 2  # the 8 failures came from several workers
    # the threshold (8) was reached in total across workers: every worker
    # now refuses, the healthy dependency is not called
    refused = _burst(port, "/check")
    assert [s for s, _ in refused] == [503] * 4, refused
    assert len({body.split()[1] for _, body in refused}) == 4
    # this process attaches to the same breaker and sees it open
    mine = bw.SharedBreaker("partner", segment=segment, failure_threshold=8,
                            break_ms="60s")
    assert mine.state == "open"
    s = mine.stats()
    assert s["failures"] == 8 and s["rejected"] == 4 and s["successes"] >= 4
    mine.reset()
    assert [s for s, _ in _burst(port, "/check")] == [200] * 4


def _poll(what, check, limit=20.0):
    """Polls check() every 50 ms until it is true; fails after `limit`
    seconds (a bound on the wait, not a timing assertion)."""
    end = time.monotonic() + limit
    while not check():
        if time.monotonic() > end:
            pytest.fail(f"{what}: not reached within {limit} s")
        time.sleep(0.05)


def test_killed_probe_holder_does_not_wedge_the_others(probe_server, segment, tmp_path):
    """kill -9 the worker that holds the half-open probe: its lease
    (half_open_timeout_ms) expires, another worker probes, the breaker
    closes and every worker serves again."""
    port = probe_server
    assert [s for s, _ in (_get(port, "/fail"), _get(port, "/fail"))] == [502, 502]
    mine = bw.SharedBreaker("probe", segment=segment, trip_rule="consecutive",
                            failure_threshold=2, break_ms="1s", half_open_max_calls=1,
                            success_threshold=1, half_open_timeout_ms="5s")
    assert mine.state in ("open", "half_open")
    _poll("half-open after break_ms", lambda: mine.state == "half_open")
    # a worker takes the only probe and hangs holding it
    hang = threading.Thread(target=lambda: _quiet_get(port, "/hang"), daemon=True)
    hang.start()
    pidfile = tmp_path / "hang.pid"
    _poll("the probe holder's pid", pidfile.exists)
    holder = int(pidfile.read_text())
    # while it holds the probe, the other workers refuse
    status, body = _get(port, "/check")
    assert status == 503 and int(body.split()[1]) != holder, body
    os.kill(holder, signal.SIGKILL)
    # the lease expires: a surviving (or respawned) worker probes and closes it
    _poll("a successful probe after the holder died",
          lambda: _get(port, "/check")[0] == 200, limit=30.0)
    assert mine.state == "closed"
    assert [s for s, _ in _burst(port, "/check")] == [200] * 4
    stats = mine.stats()
    assert stats["closes"] == 1 and stats["half_opens"] >= 1


def _quiet_get(port, path):
    try:
        _get(port, path)
    except OSError:  # the worker was killed mid-request
        pass
