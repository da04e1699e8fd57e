"""A WSGI app for test_gunicorn.py: every worker calls a "dependency"
through one SharedBreaker (created in gunicorn's master with --preload, so
the pre-fork workers inherit it).

GET /fail   waits 0.2 s (so concurrent requests land on distinct workers),
            then calls a dependency that fails: 502, or 503 when refused
GET /check  waits 0.2 s, then calls a healthy dependency: 200, or 503
Every answer's body is "<status word> <worker pid>"."""
import os
import time

import breakwater as bw

breaker = bw.SharedBreaker("partner", segment=os.environ["BW_TEST_SEGMENT"],
                           failure_threshold=8, break_ms="60s")


class DependencyDown(Exception):
    pass


def app(environ, start_response):
    path = environ.get("PATH_INFO", "")
    if path not in ("/fail", "/check"):
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"not found"]
    time.sleep(0.2)
    try:
        with breaker:
            if path == "/fail":
                raise DependencyDown()
        status, word = "200 OK", "ok"
    except DependencyDown:
        status, word = "502 Bad Gateway", "failed"
    except bw.BreakerOpen as e:
        status, word = "503 Service Unavailable", "open"
        headers = [("Retry-After", str(int(e.retry_in or 1)))]
    body = f"{word} {os.getpid()}".encode()
    hdrs = [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))]
    if word == "open":
        hdrs += headers
    start_response(status, hdrs)
    return [body]
