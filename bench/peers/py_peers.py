#!/usr/bin/python3
"""Peer microbenchmarks for breakwater: Python resilience libraries.

Each measurement decorates a no-op that succeeds with one library's
decorator and times N sequential calls, after a warm-up of N/10 calls
through the same decorated function.

Usage: /usr/bin/python3 py_peers.py [--n N | N] [--only name,name,...]

Output (stdout), one line per measurement:
    peer\t<name>\t<ns_per_call>\t<n>
Diagnostics go to stderr. A measurement whose module is not installed is
skipped with a line on stderr.
"""

import sys
import time

DEFAULT_N = 200_000


def _noop():
    return 1


def make_circuitbreaker():
    from circuitbreaker import circuit

    @circuit(failure_threshold=5, recovery_timeout=30)
    def f():
        return 1

    return f


def make_tenacity():
    from tenacity import retry, stop_after_attempt

    @retry(stop=stop_after_attempt(3))
    def f():
        return 1

    return f


def make_backoff():
    import backoff

    @backoff.on_exception(backoff.expo, Exception, max_tries=3)
    def f():
        return 1

    return f


# name -> (module to report when missing, factory)
PEERS = {
    "python.circuitbreaker": ("circuitbreaker", make_circuitbreaker),
    "python.tenacity.retry": ("tenacity", make_tenacity),
    "python.backoff.retry": ("backoff", make_backoff),
}


def usage(msg=None):
    if msg:
        print(f"py_peers: {msg}", file=sys.stderr)
    print(
        "usage: py_peers.py [--n N | N] [--only name,...]\n"
        f"names: {', '.join(PEERS)}",
        file=sys.stderr,
    )
    sys.exit(2)


def parse_n(s):
    if s is None or not s.isdigit() or int(s) < 1:
        usage(f"invalid N: {s}")
    return int(s)


def parse_only(s):
    if s is None:
        usage("--only needs a value")
    names = [x.strip() for x in s.split(",") if x.strip()]
    if not names:
        usage("--only needs at least one name")
    for name in names:
        if name not in PEERS:
            usage(f"unknown name: {name}")
    return names


def parse_args(argv):
    n = DEFAULT_N
    only = list(PEERS)
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--n":
            i += 1
            n = parse_n(argv[i] if i < len(argv) else None)
        elif a.startswith("--n="):
            n = parse_n(a[4:])
        elif a == "--only":
            i += 1
            only = parse_only(argv[i] if i < len(argv) else None)
        elif a.startswith("--only="):
            only = parse_only(a[7:])
        elif a in ("-h", "--help"):
            usage()
        elif a.isdigit():
            n = parse_n(a)
        else:
            usage(f"unknown argument: {a}")
        i += 1
    return n, only


def loop(f, count):
    sink = 0
    for _ in range(count):
        sink += f()
    if sink != count:
        raise RuntimeError(f"expected {count} successes, got {sink}")


def measure(f, n):
    loop(f, max(1, n // 10))
    t0 = time.perf_counter_ns()
    loop(f, n)
    t1 = time.perf_counter_ns()
    return (t1 - t0) / n


def main():
    n, only = parse_args(sys.argv[1:])
    print(
        f"py_peers: python {sys.version.split()[0]} ({sys.executable}), n={n}, "
        f"baseline bare no-op call: {measure(_noop, n):.1f} ns/call",
        file=sys.stderr,
    )
    for name in only:
        module, factory = PEERS[name]
        try:
            f = factory()
        except ImportError as e:
            print(
                f"py_peers: skipping {name}: module '{module}' not installed ({e})",
                file=sys.stderr,
            )
            continue
        ns = measure(f, n)
        print(f"peer\t{name}\t{ns:.1f}\t{n}", flush=True)


if __name__ == "__main__":
    main()
