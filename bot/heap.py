"""The garbage collector of a long-running bot: few, short pauses.

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

Reference cycles are still collected; only their collection comes a little later.
"""

from __future__ import annotations

import gc

#: net allocations between two young collections (CPython's default: 700)
GEN0 = 10_000


def tune() -> None:
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GEN0, gen1, gen2)
