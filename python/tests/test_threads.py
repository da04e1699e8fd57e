"""Policies used from many threads at once (the GIL is released in C)."""
import threading

import pytest

import breakwater as bw


def test_breaker_and_bulkhead_from_threads_conserve_counts():
    b = bw.Breaker(failure_threshold=10**6)
    bh = bw.Bulkhead(max_concurrent=4)
    refused = []
    n_threads, n_calls = 8, 2000

    def work():
        mine = 0
        for i in range(n_calls):
            try:
                with b:
                    with bh:
                        if i % 7 == 0:
                            raise KeyError(i)
            except KeyError:
                pass
            except bw.BulkheadFull:
                mine += 1
        refused.append(mine)

    threads = [threading.Thread(target=work) for _ in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    s, hs = b.stats(), bh.stats()
    total = n_threads * n_calls
    assert s["calls"] == total and s["admitted"] == total
    assert s["ignored"] == sum(refused) == hs["rejected_full"]
    assert hs["admitted"] + hs["rejected_full"] == total
    assert hs["in_use"] == 0 and hs["released"] == hs["admitted"]


def test_budget_as_context_manager_and_decorator():
    budget = bw.Budget("ratio", kind="ratio", budget_percent=20,
                       min_retries_per_sec=0, window_ms="10s",
                       clock=bw.ManualClock())

    @budget
    def call(ok):
        if not ok:
            raise IOError()

    for i in range(10):
        try:
            call(i % 2 == 0)
        except IOError:
            pass
    s = budget.stats()
    assert s["requests"] == 10 and s["successes"] == 5 and s["failures"] == 5
    # 20 % of 10 requests: two retries, then refused
    budget.spend_retry()
    budget.spend_retry()
    with pytest.raises(bw.BudgetExhausted):
        budget.spend_retry()
