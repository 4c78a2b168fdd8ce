"""The interpreter of a long-running bot: few, short collector pauses; quick thread switches.

Measured with ``bench/discord_relay.py`` (1,000 games in one process): with CPython's default
thresholds the collector stopped the event loop for up to 1.6 s, 20 times in 40 s, and took
half the process's time. Every object that is still in flight at two young collections (a
line waiting for its commit, a post waiting for Discord) is promoted to the oldest generation,
and with the heap of 1,000 games (discord.py's caches, the games, the agents) each full
collection scans millions of objects; lag keeps more objects in flight, so it feeds itself.

So `tune` (called once by ``mafiabot run`` before anything is loaded):

- freezes what exists at startup (modules, classes, settings): never garbage, never scanned
  again (`gc.freeze`);
- makes young collections rarer (``GEN0`` allocations instead of 700): what is in flight for
  a few milliseconds is gone by then instead of being promoted, so the old generation grows
  only with what really lives long, and full collections come seldom. A young collection
  costs about its size (50,000 took up to 100 ms at 1,000 games; 10,000 about a fifth).

- keeps only the youngest generation on the automatic schedule. CPython collects the middle
  generation after every tenth young collection; at 1,000 games that was a 30-60 ms stop
  every 3 s (what survives young collections there is mostly the games' new lines and
  Discord's message cache, which live on), and those stops were most of the relay's slowest
  percent. Survivors of young collections now wait for the next full collection.
- takes full collections off the automatic schedule and runs one every ``FULL_EVERY``
  seconds instead, from a thread of its own. A full collection of 1,000 games' heap stops the
  process for about half a second however it is started; CPython starts one whenever the
  survivors of young collections grow by a quarter, which with games starting all the time
  means every few minutes at unpredictable moments (one in a 40-second bench window was the
  relay's worst tail). On a clock, it is one known stall every ``FULL_EVERY`` seconds, and
  the ``bot_gc`` figures of the bench show it.

Reference cycles are still collected; only their collection comes later (a cycle that became
garbage after surviving a young collection, up to ``FULL_EVERY`` seconds later: the bench
prints how much a full collection finds).

It also shortens the interpreter's thread switch interval (``SWITCH_SECONDS``, CPython's
default 5 ms): the database writer thread gives up the GIL at every SQLite or PostgreSQL call
and, to take it back from a busy event loop, waited up to the whole interval each time, so a
group commit of a few statements took tens of milliseconds under load. A writer thread
committing small groups of rows against a busy thread (``executemany`` of 4 x 8 rows on
SQLite): p50 2.5 ms at a 1 ms interval, 2.1 ms at 0.5 ms, 1.1 ms at 0.2 ms, no better below;
at 1,000 games the database calls' p99 went from 88 ms to 31 ms.
"""

from __future__ import annotations

import gc
import logging
import sys
import threading
import time

log = logging.getLogger(__name__)

#: net allocations between two young collections (CPython's default: 700)
GEN0 = 10_000
#: the interpreter's thread switch interval (seconds)
SWITCH_SECONDS = 0.0002
#: seconds between two full collections
FULL_EVERY = 600.0
#: a threshold CPython never reaches: no automatic collection of the older generations
_NEVER = 1 << 30


def tune(full_every: float = FULL_EVERY) -> None:
    gc.collect()
    gc.freeze()
    gc.set_threshold(GEN0, _NEVER, _NEVER)
    sys.setswitchinterval(SWITCH_SECONDS)
    threading.Thread(
        target=_full_collections, args=(full_every,), name="mafiabot-gc", daemon=True
    ).start()


def _full_collections(every: float) -> None:
    while True:
        time.sleep(every)
        started = time.perf_counter()
        found = gc.collect()
        log.debug(
            "full collection: %d unreachable, %.0f ms",
            found,
            (time.perf_counter() - started) * 1000,
        )
