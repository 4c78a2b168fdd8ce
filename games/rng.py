"""Seeded randomness for the engine: every draw comes from the game's seed and a label."""

from __future__ import annotations

import random


def rng_for(state_seed: int, label: str) -> random.Random:
    """A generator derived from the game seed and a label (stable across processes)."""
    return random.Random(f"{state_seed}:{label}")
