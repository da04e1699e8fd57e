import os
import uuid

import pytest


# Shared by test_retry.py and test_pipeline.py (`from conftest import ...`).
class Transient(Exception):
    """The retried kind of failure in the retry and pipeline tests."""


class HTTPError(Exception):
    """A status-carrying failure (a 4xx is permanent); `retry_after`, when
    given, is the server's hint in seconds."""

    def __init__(self, status, retry_after=None):
        super().__init__(f"HTTP {status}")
        self.status = status
        if retry_after is not None:
            self.retry_after = retry_after


def flaky(failures, exc=Transient):
    """A callable that raises `exc` `failures` times, then returns "ok"."""
    calls = []

    def f():
        calls.append(1)
        if len(calls) <= failures:
            raise exc() if isinstance(exc, type) else exc
        return "ok"
    f.calls = calls
    return f


@pytest.fixture
def segment():
    """A fresh shared-memory segment name, removed afterwards."""
    import breakwater
    name = f"/bw-pytest-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    yield name
    breakwater.SharedBreaker.unlink(name)


def _free_port():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _ping(port, timeout=0.5):
    import socket
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(b"PING\r\n")
            return s.recv(16).startswith(b"+PONG")
    except OSError:
        return False


@pytest.fixture
def redis_server(tmp_path):
    """A private redis-server on a free loopback port, without persistence,
    stopped afterwards. Yields its port. Skips (reported) when redis-server
    or the Redis component is missing."""
    import shutil
    import subprocess
    import time
    from breakwater import _queue
    if _queue.lib is None:
        pytest.skip("built without the Redis component (breakwater-redis)")
    exe = os.environ.get("BW_REDIS_SERVER") or shutil.which("redis-server")
    if exe is None:
        pytest.skip("redis-server not installed")
    port = _free_port()
    log = open(tmp_path / "redis.log", "w+")
    proc = subprocess.Popen(
        [exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
         "--appendonly", "no", "--dir", str(tmp_path)],
        stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while not _ping(port):
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                pytest.fail(f"redis-server did not start on {port}:\n{log.read()}")
            time.sleep(0.02)
        yield port
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
