"""A real gunicorn (Debian's), 4 sync workers on 127.0.0.1, serving a WSGI
app through one SharedBreaker: failures count across workers, and once the
breaker trips every worker refuses. Started and stopped by the test."""
import concurrent.futures
import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
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


@pytest.fixture
def server(segment, tmp_path):
    port = _free_port()
    env = dict(os.environ)
    env["BW_TEST_SEGMENT"] = segment
    here = os.path.dirname(os.path.abspath(__file__))
    env["PYTHONPATH"] = os.pathsep.join(
        [here] + [p for p in sys.path if p and os.path.isdir(p)])
    log = open(tmp_path / "gunicorn.log", "w+")
    proc = subprocess.Popen(
        [GUNICORN, "--workers", "4", "--worker-class", "sync", "--preload",
         "--bind", f"127.0.0.1:{port}", "--timeout", "30",
         "--graceful-timeout", "5", "wsgi_app:app"],
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
