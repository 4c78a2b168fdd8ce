"""`bot.heap.tune`: no automatic full collection (its half-second stall comes at unknown
moments under load); full collections on a clock instead, which still free reference cycles.
Run in a child interpreter: collector settings are process-wide."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import gc, sys, threading, time
    from bot import heap

    heap.tune(full_every=0.2)
    assert gc.get_threshold()[0] == heap.GEN0, gc.get_threshold()
    assert gc.get_threshold()[2] >= 1 << 30, gc.get_threshold()
    assert sys.getswitchinterval() == heap.SWITCH_SECONDS
    freed = threading.Event()

    class Node:
        def __del__(self):
            freed.set()

    a, b = Node(), Node()
    a.other, b.other = b, a  # a reference cycle: only a collection frees it
    gc.collect(1)  # it survives a young collection: now in the oldest generation
    assert gc.is_tracked(a) and not freed.is_set()
    del a, b  # garbage now, out of young collections' reach
    gc.collect(1)
    assert not freed.is_set(), "a young collection reached the oldest generation"
    if not freed.wait(30):
        sys.exit("the cycle was never collected")
    print("ok")
    """
)


def test_full_collections_run_on_a_clock_and_still_free_cycles() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
