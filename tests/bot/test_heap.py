"""`bot.heap.tune`: only young collections run automatically (the older generations' stops
come at unknown moments under load); full collections on a clock instead, which still free
reference cycles. Run in a child interpreter: collector settings are process-wide."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import gc, sys, threading, time
    from bot import heap

    heap.tune(full_every=FULL_EVERY)
    tuned = time.monotonic()
    assert gc.get_threshold()[0] == heap.GEN0, gc.get_threshold()
    assert gc.get_threshold()[1] >= 1 << 30, gc.get_threshold()
    assert gc.get_threshold()[2] >= 1 << 30, gc.get_threshold()
    assert abs(sys.getswitchinterval() - heap.SWITCH_SECONDS) < 1e-6, sys.getswitchinterval()
    freed = threading.Event()

    class Node:
        def __del__(self):
            freed.set()

    a, b = Node(), Node()
    a.other, b.other = b, a  # a reference cycle: only a collection frees it
    gc.collect(0)  # it survives a young collection: now in an older generation
    assert gc.is_tracked(a) and not freed.is_set()
    del a, b  # garbage now, out of young collections' reach
    # Enough allocations for many automatic young collections (CPython's own schedule would
    # have collected the middle generation after ten of them, and freed the cycle).
    young = gc.get_stats()[0]["collections"]
    kept = [[] for _ in range(15 * heap.GEN0)]
    assert gc.get_stats()[0]["collections"] - young >= 12, gc.get_stats()
    assert time.monotonic() - tuned < FULL_EVERY, "too slow to tell; the clock came first"
    assert not freed.is_set(), "an automatic collection reached the older generations"
    if not freed.wait(60):
        sys.exit("the cycle was never collected")
    print("ok", len(kept))
    """
)


def test_full_collections_run_on_a_clock_and_still_free_cycles() -> None:
    out = subprocess.run(
        [sys.executable, "-c", "FULL_EVERY = 5.0\n" + CHILD],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[0] == "ok"
