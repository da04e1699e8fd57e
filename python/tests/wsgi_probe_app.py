"""A WSGI app for test_gunicorn.py's probe test: one SharedBreaker (created
in gunicorn's master with --preload) with a single half-open probe whose
lease (half_open_timeout_ms) is 5 s.

GET /fail   waits 0.2 s, calls a failing dependency: 502, or 503 when refused
GET /check  waits 0.2 s, calls a healthy dependency: 200, or 503 when refused
GET /hang   takes a permit (the half-open probe when half-open), writes this
            worker's pid to $BW_TEST_DIR/hang.pid, then hangs (until killed)
Every answer's body is "<status word> <worker pid>"."""
import os
import time

import breakwater as bw

breaker = bw.SharedBreaker("probe", segment=os.environ["BW_TEST_SEGMENT"],
                           trip_rule="consecutive", failure_threshold=2,
                           break_ms="1s", half_open_max_calls=1,
                           success_threshold=1, half_open_timeout_ms="5s")


class DependencyDown(Exception):
    pass


def app(environ, start_response):
    path = environ.get("PATH_INFO", "")
    if path not in ("/fail", "/check", "/hang"):
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found"]
    if path != "/hang":
        time.sleep(0.2)
    try:
        with breaker:
            if path == "/fail":
                raise DependencyDown()
            if path == "/hang":
                pidfile = os.path.join(os.environ["BW_TEST_DIR"], "hang.pid")
                with open(pidfile + ".tmp", "w") as f:
                    f.write(str(os.getpid()))
                os.rename(pidfile + ".tmp", pidfile)
                time.sleep(3600)  # the holder of the probe: killed by the test
        status, word = "200 OK", "ok"
    except DependencyDown:
        status, word = "502 Bad Gateway", "failed"
    except bw.BreakerOpen:
        status, word = "503 Service Unavailable", "open"
    body = f"{word} {os.getpid()}".encode()
    start_response(status, [("Content-Type", "text/plain"),
                            ("Content-Length", str(len(body)))])
    return [body]
