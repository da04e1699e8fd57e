"""Per-call overhead of breakwater's Python decorators over a bare call,
side by side in one run with Debian's python3-circuitbreaker and
python3-tenacity.

    PYTHONPATH=<site with breakwater> /usr/bin/python3 python/bench/bench_overhead.py [--n N] [--reps R]

Each case calls a trivial function (sync, or a coroutine awaited in a loop)
N times; the best of R repetitions is kept (the least disturbed), and the
bare call's time is subtracted: what is left is the policy's own cost per
call. Targets (issue 20): the breaker decorator <= 1/3 of circuitbreaker's
overhead, the retry decorator on a succeeding call <= 1/10 of tenacity's.
Prints a Markdown table."""
import argparse
import asyncio
import platform
import sys
import time

import breakwater as bw

try:
    import circuitbreaker
except ImportError:  # pragma: no cover
    circuitbreaker = None
try:
    import tenacity
except ImportError:  # pragma: no cover
    tenacity = None


def best_sync(fn, n, reps):
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, time.perf_counter() - t0)
    return best / n * 1e9


def best_async(fn, n, reps):
    async def loop():
        for _ in range(n):
            await fn()

    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        asyncio.run(loop())
        best = min(best, time.perf_counter() - t0)
    return best / n * 1e9


def cases():
    def bare():
        return 1

    async def abare():
        return 1

    sync = [("bare call", bare)]
    sync.append(("breakwater Breaker decorator",
                 bw.Breaker("bench", failure_threshold=5, break_ms="30s")(bare)))
    if circuitbreaker is not None:
        sync.append(("circuitbreaker @circuit",
                     circuitbreaker.circuit(failure_threshold=5, recovery_timeout=30)(bare)))
    sync.append(("breakwater Retry decorator",
                 bw.Retry("bench", max_attempts=3, retry_on=ConnectionError)(bare)))
    if tenacity is not None:
        sync.append(("tenacity @retry",
                     tenacity.retry(stop=tenacity.stop_after_attempt(3),
                                    retry=tenacity.retry_if_exception_type(ConnectionError))(bare)))
    # The throttle with the partner healthy (p = 0, no draw): its cost is
    # the Python permit protocol around the strategy's enter and leave.
    sync.append(("breakwater Throttle decorator", bw.Throttle("bench")(bare)))
    sync.append(("breakwater Pipeline([breaker, retry]) decorator",
                 bw.Pipeline([bw.Breaker("pb"), bw.Retry(max_attempts=3,
                                                         retry_on=ConnectionError)])(bare)))

    asyn = [("bare await", abare)]
    asyn.append(("breakwater Breaker decorator (async)",
                 bw.Breaker("abench", failure_threshold=5, break_ms="30s")(abare)))
    asyn.append(("breakwater Retry decorator (async)",
                 bw.Retry("abench", max_attempts=3, retry_on=ConnectionError)(abare)))
    if tenacity is not None:
        asyn.append(("tenacity @retry (async)",
                     tenacity.retry(stop=tenacity.stop_after_attempt(3),
                                    retry=tenacity.retry_if_exception_type(ConnectionError))(abare)))
    asyn.append(("breakwater Throttle decorator (async)", bw.Throttle("abench")(abare)))
    asyn.append(("breakwater Pipeline([breaker, retry]) (async)",
                 bw.Pipeline([bw.Breaker("apb"), bw.Retry(max_attempts=3,
                                                          retry_on=ConnectionError)])(abare)))
    return sync, asyn


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200_000, help="calls per repetition")
    ap.add_argument("--reps", type=int, default=5, help="repetitions (best kept)")
    a = ap.parse_args()
    if a.n < 1 or a.reps < 1:
        ap.error("--n and --reps must be >= 1")
    sync, asyn = cases()
    rows = []
    base = None
    for name, fn in sync:
        ns = best_sync(fn, a.n, a.reps)
        base = ns if base is None else base
        rows.append((name, ns, ns - base))
    abase = None
    for name, fn in asyn:
        ns = best_async(fn, a.n, a.reps)
        abase = ns if abase is None else abase
        rows.append((name, ns, ns - abase))
    print(f"python {platform.python_version()}, breakwater {bw.core_version}, "
          f"circuitbreaker {'yes' if circuitbreaker else 'missing'}, "
          f"tenacity {getattr(tenacity, '__version__', 'yes') if tenacity else 'missing'}; "
          f"n={a.n}, best of {a.reps}")
    print("| case | ns/call | overhead ns/call |")
    print("|---|---:|---:|")
    for name, ns, over in rows:
        print(f"| {name} | {ns:.0f} | {over:.0f} |")
    over = {name: o for name, _, o in rows}

    def ratio(mine, theirs):
        if theirs in over and over[theirs] > 0:
            return over[mine] / over[theirs]
        return None
    for mine, theirs, target in (
            ("breakwater Breaker decorator", "circuitbreaker @circuit", 1 / 3),
            ("breakwater Retry decorator", "tenacity @retry", 1 / 10),
            ("breakwater Retry decorator (async)", "tenacity @retry (async)", 1 / 10)):
        r = ratio(mine, theirs)
        if r is not None:
            verdict = "met" if r <= target else "MISSED"
            print(f"{mine} / {theirs}: {r:.3f} (target <= {target:.3f}: {verdict})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
