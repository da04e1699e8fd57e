"""Runs `breakwater ARGS... --metrics M --events E --json J` and checks the
files: the metrics with the Prometheus checks of check_prometheus.py (a real
parser and the naming rules; promtool too when installed), with every object
the modes use present (pipeline outcomes and latency histogram, breaker,
limiter, retry, budget; for `storm`, real HTTP, the curl driver's attempts,
transport errors and responses too) and every mode run (all four, or the one
of --mode) as a name label; the events as JSON lines (one object each, with
an event type and a name).

The client-side throttle: with --sre-k K (K != 0) its families are there for
name="breakwater" and no other mode, its totals add up (requests = accepts +
rejected + throttled + withdrawn: nothing is in flight once the run is over)
and the JSON's throttle_refused is its throttled total, each also counted as
a limiter failure; without --sre-k there is no throttle family and every
mode's throttle_refused is 0. --throttle (before BREAKWATER) expects the
throttle without --sre-k: a --config file's [throttle.storm].

Usage: check_storm_obs.py [--throttle] BREAKWATER ARGS..."""
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


# The throttle's families (registry.md), all with one sample a throttle.
THROTTLE_EXPECT = [
    "breakwater_throttle_requests_total",
    "breakwater_throttle_accepts_total",
    "breakwater_throttle_rejected_total",
    "breakwater_throttle_throttled_total",
    "breakwater_throttle_withdrawn_total",
    "breakwater_throttle_window_requests",
    "breakwater_throttle_window_accepts",
    "breakwater_throttle_refusal_probability",
]

MODES = ("naive", "polly", "breakwater", "oracle")


def flag_value(argv, flag):
    """The value of `--flag V` or `--flag=V` in argv (the last one), or
    None."""
    value = None
    for i, a in enumerate(argv):
        if a == flag and i + 1 < len(argv):
            value = argv[i + 1]
        elif a.startswith(flag + "="):
            value = a[len(flag) + 1:]
    return value


def samples_of(text, family):
    """{name label: value} of the family's samples."""
    out = {}
    for line in text.splitlines():
        if line.startswith(family + '{name="'):
            name = line[len(family) + 7:line.index('"}')]
            out[name] = float(line.rsplit(" ", 1)[1])
    return out


def check_throttle(text, doc, modes, sre_k):
    """The throttle's families and the JSON's throttle_refused (see the
    module's comment). An error message, or None."""
    rows = {m["mode"]: m for m in doc["modes"]}
    if sorted(rows) != sorted(modes):
        return "the JSON's modes are %s, expected %s" % (sorted(rows), modes)
    if not sre_k:
        if "breakwater_throttle_" in text:
            return "throttle families without --sre-k"
        for m, row in rows.items():
            if row["throttle_refused"] != 0:
                return "mode %s: throttle_refused %d without --sre-k" % (
                    m, row["throttle_refused"])
        return None
    got = {}
    for fam in THROTTLE_EXPECT:
        got[fam] = samples_of(text, fam)
        want = ["breakwater"] if "breakwater" in modes else []
        if sorted(got[fam]) != want:
            return "%s: samples for %s, expected %s" % (
                fam, sorted(got[fam]), want)
    if "breakwater" not in modes:
        return None
    v = {fam[len("breakwater_throttle_"):]: got[fam]["breakwater"]
         for fam in THROTTLE_EXPECT}
    parts = (v["accepts_total"] + v["rejected_total"] + v["throttled_total"]
             + v["withdrawn_total"])
    if v["requests_total"] != parts or v["requests_total"] < 1:
        return ("throttle: requests_total %g != accepts + rejected + "
                "throttled + withdrawn = %g" % (v["requests_total"], parts))
    if not 0 <= v["refusal_probability"] < 1:
        return "throttle: refusal_probability %g not in [0, 1)" % (
            v["refusal_probability"])
    row = rows["breakwater"]
    if row["throttle_refused"] != v["throttled_total"]:
        return "JSON throttle_refused %d != throttled_total %g" % (
            row["throttle_refused"], v["throttled_total"])
    if row["failures"]["limiter"] < row["throttle_refused"]:
        return ("JSON: %d limiter failures, fewer than the %d throttle "
                "refusals" % (row["failures"]["limiter"],
                              row["throttle_refused"]))
    for m, r in rows.items():
        if m != "breakwater" and r["throttle_refused"] != 0:
            return "mode %s: throttle_refused %d (it has no throttle)" % (
                m, r["throttle_refused"])
    return None


def main(argv):
    forced = len(argv) > 0 and argv[0] == "--throttle"
    if forced:
        argv = argv[1:]
    tmp = tempfile.mkdtemp()
    metrics = os.path.join(tmp, "storm.prom")
    events = os.path.join(tmp, "storm.jsonl")
    figures = os.path.join(tmp, "storm.json")
    cmd = argv + ["--metrics", metrics, "--events", events, "--json", figures]
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL)
    if r.returncode != 0:
        print("check_storm_obs: %s exited %d" % (" ".join(cmd), r.returncode))
        return 1
    with open(metrics, encoding="utf-8") as f:
        text = f.read()
    with open(figures, encoding="utf-8") as f:
        doc = json.load(f)
    real = len(argv) > 1 and argv[1] == "storm"  # real HTTP: the curl driver
    mode = flag_value(argv, "--mode")
    modes = MODES if mode in (None, "all") else (mode,)
    sre_k = forced or float(flag_value(argv, "--sre-k") or 0) != 0
    expect = EXPECT + (HTTP_EXPECT if real else [])
    config = flag_value(argv, "--config")
    if config is not None:
        # The breakwater mode is the file's: a limiter only if it has one.
        with open(config, encoding="utf-8") as f:
            if "[limiter.storm]" not in f.read():
                expect.remove("breakwater_limiter_limit")
    if sre_k and "breakwater" in modes:
        expect = expect + THROTTLE_EXPECT
    fams, samples = check_prometheus.strict(text, expect)
    parsed = check_prometheus.real_parser(text)
    if parsed is not None and parsed != samples:
        print("check_storm_obs: prometheus_client read %d samples, strict %d"
              % (parsed, samples))
        return 1
    msg = check_throttle(text, doc, modes, sre_k)
    if msg is not None:
        print("check_storm_obs: " + msg)
        return 1
    for mode in modes:
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
