"""SharedBreaker: one breaker in shared memory for forked processes."""
import os

import pytest

import breakwater as bw


def _child(fn):
    """Runs fn() in a forked child; the child's exit code is fn's result."""
    pid = os.fork()
    if pid == 0:
        code = 99
        try:
            code = fn()
        finally:
            os._exit(code)
    return pid


def _wait(pid):
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)


def test_threshold_counted_across_forked_processes(segment):
    b = bw.SharedBreaker("payments", segment=segment, failure_threshold=6,
                         break_ms="60s")
    assert b.state == "closed"
    r_go, w_go = os.pipe()

    def fail_twice():
        # wait for the parent's go, then record two failures
        os.read(r_go, 1)
        for _ in range(2):
            try:
                with b:
                    raise IOError("down")
            except IOError:
                pass
        return 0

    kids = [_child(fail_twice) for _ in range(3)]
    os.write(w_go, b"xxx")
    assert [_wait(k) for k in kids] == [0, 0, 0]
    # 3 processes x 2 failures = 6 in total: open for everyone
    assert b.state == "open" and b.stats()["failures"] == 6

    def refused():
        try:
            with b:
                return 1
        except bw.BreakerOpen as e:
            return 0 if e.retry_in and e.retry_in > 50 else 2

    kids = [_child(refused) for _ in range(4)]
    assert [_wait(k) for k in kids] == [0, 0, 0, 0]
    with pytest.raises(bw.BreakerOpen):
        with b:
            pass
    assert b.stats()["rejected"] == 5


def test_attach_in_each_process_and_settings_must_agree(segment):
    b = bw.SharedBreaker("search", segment=segment, failure_threshold=2)

    def attach_and_fail():
        mine = bw.SharedBreaker("search", segment=segment, failure_threshold=2)
        try:
            with mine:
                raise IOError()
        except IOError:
            pass
        try:
            bw.SharedBreaker("search", segment=segment, failure_threshold=3)
        except bw.ConfigError as e:
            return 0 if e.field == "failure_threshold" else 3
        return 4

    assert _wait(_child(attach_and_fail)) == 0
    assert b.state == "closed"
    assert _wait(_child(attach_and_fail)) == 0
    assert b.state == "open"
    b.reset()
    assert b.state == "closed"


def test_shared_breaker_refuses_what_shm_cannot_do(segment):
    with pytest.raises(bw.ConfigError) as e:
        bw.SharedBreaker("x", segment=segment, trip_rule="count_window")
    assert e.value.field == "trip_rule"
    with pytest.raises(TypeError):
        bw.SharedBreaker(42, segment=segment)
    with pytest.raises(bw.ConfigError):
        bw.SharedBreaker("x", segment="/a/b")
    assert bw.SharedBreaker.unlink("/bw-pytest-never-created") is False
