"""Runs `breakwater ARGS... --metrics M --events E` and checks both files:
the metrics with the Prometheus checks of check_prometheus.py (a real parser
and the naming rules; promtool too when installed), with every object the
modes use present (pipeline outcomes and latency histogram, breaker,
limiter, retry, budget; for `storm`, real HTTP, the curl driver's attempts,
transport errors and responses too) and every mode as a name label; the events as JSON
lines (one object each, with an event type and a name).

Usage: check_storm_obs.py BREAKWATER ARGS..."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_prometheus  # noqa: E402

EXPECT = [
    "breakwater_pipeline_outcomes_total",
    "breakwater_pipeline_call_duration_seconds",
    "breakwater_breaker_if_state",
    "breakwater_limiter_limit",
    "breakwater_retry_policy_info",
    "breakwater_budget_retries_total",
]

# `breakwater storm` (real HTTP) also writes the curl driver's families.
HTTP_EXPECT = [
    "breakwater_http_client_attempts_total",
    "breakwater_http_client_network_calls_total",
    "breakwater_http_client_transport_errors_total",
    "breakwater_http_client_responses_total",
    "breakwater_http_client_calls_total",
]


def main(argv):
    tmp = tempfile.mkdtemp()
    metrics = os.path.join(tmp, "storm.prom")
    events = os.path.join(tmp, "storm.jsonl")
    cmd = argv + ["--metrics", metrics, "--events", events]
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL)
    if r.returncode != 0:
        print("check_storm_obs: %s exited %d" % (" ".join(cmd), r.returncode))
        return 1
    with open(metrics, encoding="utf-8") as f:
        text = f.read()
    real = len(argv) > 1 and argv[1] == "storm"  # real HTTP: the curl driver
    expect = EXPECT + (HTTP_EXPECT if real else [])
    fams, samples = check_prometheus.strict(text, expect)
    parsed = check_prometheus.real_parser(text)
    if parsed is not None and parsed != samples:
        print("check_storm_obs: prometheus_client read %d samples, strict %d"
              % (parsed, samples))
        return 1
    for mode in ("naive", "polly", "breakwater", "oracle"):
        if ('_count{name="%s"}' % mode) not in text:
            print("check_storm_obs: no latency histogram for mode %s" % mode)
            return 1
        if real and ('breakwater_http_client_attempts_total{name="%s"}'
                     % mode) not in text:
            print("check_storm_obs: no HTTP driver families for mode %s"
                  % mode)
            return 1
    if shutil.which("promtool"):
        with open(metrics, "rb") as f:
            subprocess.run(["promtool", "check", "metrics"], stdin=f,
                           check=True)
    n = 0
    with open(events, encoding="utf-8") as f:
        for line in f:
            ev = json.loads(line)
            if not isinstance(ev, dict) or "event" not in ev or "name" not in ev:
                print("check_storm_obs: bad event line %r" % line)
                return 1
            n += 1
    if n == 0:
        print("check_storm_obs: no events (the storm should retry)")
        return 1
    print("check_storm_obs: %d families, %d samples; %d events"
          % (fams, samples, n))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
