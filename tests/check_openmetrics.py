"""Checks the registry's OpenMetrics exposition (bw_registry_write_openmetrics)
with a real parser, Debian's python3-prometheus-client
(prometheus_client.openmetrics.parser, which enforces the OpenMetrics 1.0
rules: the closing # EOF, counter families named without _total and their
samples with it, UNIT lines matching the family name's suffix, histogram
buckets), and checks that it carries exactly the samples of the Prometheus
text exposition (prometheus_client.parser) of the same registry: same
names, labels and values, sample for sample.

Usage: check_openmetrics.py [--expect FAMILY]... PROGRAM
PROGRAM [--openmetrics] FILE writes the exposition of one registry to FILE
(tests/registry_expo). --expect: the OpenMetrics text must have a family of
that name (as OpenMetrics names it: a counter without _total), with at
least one sample. Exit 0 when valid, 1 when not, 77 (skipped) without
prometheus_client."""
import subprocess
import sys
import tempfile

try:
    from prometheus_client.openmetrics.parser import (
        text_string_to_metric_families as parse_openmetrics)
    from prometheus_client.parser import (
        text_string_to_metric_families as parse_prometheus)
except ImportError:
    print("check_openmetrics: skipped: python3-prometheus-client is not installed")
    sys.exit(77)


def fail(msg):
    print("check_openmetrics: " + msg)
    sys.exit(1)


def run(program, *args):
    with tempfile.NamedTemporaryFile(suffix=".txt") as out:
        subprocess.run([program, *args, out.name], check=True)
        with open(out.name, "rb") as f:
            return f.read().decode("utf-8")


def samples(families):
    """Every sample as (name, sorted labels) -> value; a duplicate fails."""
    seen = {}
    for fam in families:
        for s in fam.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            if key in seen:
                fail("duplicate series %s%s" % key)
            seen[key] = s.value
    return seen


def main():
    args, expect = sys.argv[1:], []
    while len(args) > 2 and args[0] == "--expect":
        expect.append(args[1])
        args = args[2:]
    program = args[0]
    om_text = run(program, "--openmetrics")
    prom_text = run(program)
    if not om_text.endswith("# EOF\n"):
        fail("the OpenMetrics text must end with '# EOF' and a newline")
    if om_text.count("# EOF") != 1:
        fail("'# EOF' must appear once, at the end")
    om = list(parse_openmetrics(om_text))  # raises on any violation
    prom = list(parse_prometheus(prom_text))
    counters = [f for f in om if f.type == "counter"]
    if not counters:
        fail("no counter family")
    for f in counters:
        if f.name.endswith("_total"):
            fail("counter family %s: OpenMetrics names it without _total" % f.name)
        for s in f.samples:
            if s.name != f.name + "_total":
                fail("counter %s has sample %s" % (f.name, s.name))
    units = {f.name: f.unit for f in om if f.unit}
    for name in ("breakwater_breaker_time_in_state_seconds",
                 "breakwater_pipeline_call_duration_seconds"):
        if units.get(name) != "seconds":
            fail("%s: expected UNIT seconds, got %r" % (name, units.get(name)))
    if not any(f.type == "histogram" for f in om):
        fail("no histogram family")
    names = {f.name: f for f in om}
    for name in expect:
        if name not in names or not names[name].samples:
            fail("no family %s with samples" % name)
    a, b = samples(om), samples(prom)
    if a.keys() != b.keys():
        only_om = sorted(a.keys() - b.keys())[:5]
        only_prom = sorted(b.keys() - a.keys())[:5]
        fail("the two expositions differ: only in OpenMetrics %s; only in "
             "Prometheus text %s" % (only_om, only_prom))
    for k in a:
        if a[k] != b[k] and not (a[k] != a[k] and b[k] != b[k]):  # NaN == NaN
            fail("%s%s: %r in OpenMetrics, %r in Prometheus text" % (k[0], k[1], a[k], b[k]))
    print("check_openmetrics: %d families, %d samples, the same as the "
          "Prometheus text" % (len(om), len(a)))


if __name__ == "__main__":
    main()
