"""Checks Prometheus text exposition (format 0.0.4) with a real parser:
Debian's python3-prometheus-client (prometheus_client.parser), and a strict
line parser of its own that also enforces the naming rules breakwater
follows: one HELP and one TYPE per family, before its samples, all samples
of a family together; no duplicate series; counters end in _total; no unit
in milliseconds; no negative value (no sentinel such as -1); histograms
with cumulative buckets, a +Inf bucket equal to _count, and a _sum.

Usage: check_prometheus.py [--expect PREFIX]... (--exec PROGRAM [ARG] | FILE...)
--exec runs PROGRAM with a temporary file name and checks that file.
--expect: some family must start with PREFIX. Exit 0 when valid, 1 when not."""
import math
import os
import re
import subprocess
import sys
import tempfile

NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*$")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"')
SUFFIXES = ("_bucket", "_sum", "_count")


def fail(msg):
    print("check_prometheus: " + msg)
    sys.exit(1)


def parse_labels(s, where):
    labels, pos = {}, 0
    while pos < len(s):
        m = LABEL.match(s, pos)
        if not m:
            fail("%s: bad label syntax at %r" % (where, s[pos:]))
        if m.group(1) in labels:
            fail("%s: duplicate label %s" % (where, m.group(1)))
        labels[m.group(1)] = m.group(2)
        pos = m.end()
        if pos < len(s):
            if s[pos] != ",":
                fail("%s: expected ',' at %r" % (where, s[pos:]))
            pos += 1
    return labels


def strict(text, expect):
    if not text.endswith("\n"):
        fail("the text must end with a newline")
    help_, type_, done, current = {}, {}, set(), None
    series, buckets = set(), {}
    for n, line in enumerate(text.split("\n")[:-1], 1):
        where = "line %d" % n
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            parts = line.split(" ", 3)
            if len(parts) < 4 or not NAME.match(parts[2]):
                fail("%s: malformed %r" % (where, line))
            fam = parts[2]
            table = help_ if parts[1] == "HELP" else type_
            if fam in table:
                fail("%s: second %s for %s" % (where, parts[1], fam))
            if fam in done:
                fail("%s: %s comes back after other families" % (where, fam))
            table[fam] = parts[3]
            if current is not None and current != fam:
                done.add(current)
            current = fam
            if parts[1] == "TYPE":
                if parts[3] not in ("counter", "gauge", "histogram"):
                    fail("%s: unexpected type %s" % (where, parts[3]))
            continue
        if line.startswith("#") or line == "":
            fail("%s: unexpected line %r" % (where, line))
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$", line)
        if not m:
            fail("%s: malformed sample %r" % (where, line))
        name, labels = m.group(1), parse_labels(m.group(2) or "", where)
        try:
            value = float(m.group(3))
        except ValueError:
            fail("%s: bad value %r" % (where, m.group(3)))
        fam = name
        if fam not in type_:
            for suf in SUFFIXES:
                if name.endswith(suf) and name[: -len(suf)] in type_:
                    fam = name[: -len(suf)]
        if fam not in type_ or fam not in help_:
            fail("%s: %s has no TYPE and HELP" % (where, name))
        if fam != current:
            fail("%s: %s is not with its family" % (where, name))
        kind = type_[fam]
        if kind == "histogram" and fam == name:
            fail("%s: histogram sample without suffix" % where)
        if kind == "counter" and not fam.endswith("_total"):
            fail("%s: counter %s does not end in _total" % (where, fam))
        if "_ms" in fam or fam.endswith("_milliseconds"):
            fail("%s: %s is not in base units" % (where, fam))
        if math.isnan(value) or value < 0:
            fail("%s: %s has value %s (no negative or sentinel values)"
                 % (where, name, m.group(3)))
        key = (name, tuple(sorted(labels.items())))
        if key in series:
            fail("%s: duplicate series %s%s" % (where, name, labels))
        series.add(key)
        if kind == "histogram":
            rest = tuple(sorted((k, v) for k, v in labels.items() if k != "le"))
            h = buckets.setdefault((fam, rest), {"b": [], "sum": None,
                                                  "count": None})
            if name.endswith("_bucket"):
                if "le" not in labels:
                    fail("%s: bucket without le" % where)
                h["b"].append((float(labels["le"]), value))
            elif name.endswith("_sum"):
                h["sum"] = value
            else:
                h["count"] = value
    for (fam, rest), h in buckets.items():
        les = [b[0] for b in h["b"]]
        if les != sorted(les) or not les or les[-1] != math.inf:
            fail("%s%s: buckets out of order or no +Inf" % (fam, rest))
        counts = [b[1] for b in h["b"]]
        if counts != sorted(counts):
            fail("%s%s: buckets not cumulative" % (fam, rest))
        if h["count"] is None or h["sum"] is None or h["count"] != counts[-1]:
            fail("%s%s: _count/_sum missing or +Inf != _count" % (fam, rest))
    for fam in type_:
        if fam not in help_:
            fail("%s has TYPE but no HELP" % fam)
    for prefix in expect:
        if not any(f.startswith(prefix) for f in type_):
            fail("no family starts with %s" % prefix)
    return len(type_), len(series)


def real_parser(text):
    try:
        from prometheus_client.parser import text_string_to_metric_families
    except ImportError:
        return None
    fams = list(text_string_to_metric_families(text))
    return sum(len(f.samples) for f in fams)


def main(argv):
    expect, files, i = [], [], 0
    while i < len(argv):
        if argv[i] == "--expect":
            expect.append(argv[i + 1])
            i += 2
        elif argv[i] == "--exec":
            tmp = tempfile.mkdtemp()
            out = os.path.join(tmp, "metrics.prom")
            subprocess.run(argv[i + 1:] + [out], check=True)
            files.append(out)
            break
        else:
            files.append(argv[i])
            i += 1
    if not files:
        fail("nothing to check")
    for path in files:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        fams, samples = strict(text, expect)
        parsed = real_parser(text)
        if parsed is not None and parsed != samples:
            fail("%s: prometheus_client read %d samples, the strict parser %d"
                 % (path, parsed, samples))
        print("check_prometheus: %s: %d families, %d samples%s"
              % (path, fams, samples,
                 "" if parsed is not None else
                 " (prometheus_client not installed: strict parser only)"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
