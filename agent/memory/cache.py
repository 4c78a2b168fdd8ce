"""A process-wide cache of text embeddings, shared by every seat's memory.

Every seat at a table hears the same public lines, so without a cache one chat message is
embedded once per seat (seven times at a seven-player table, ~4 ms each with MiniLM on a small
CPU). The cache maps text to vector, nothing else: a seat still only ever *adds* what it
observed to its own index, so sharing vectors cannot leak a den line into a bystander's memory.
It keeps the wrapped embedder's ``name`` and ``dim`` because its vectors are exactly the
wrapped embedder's; saved indexes stay loadable with or without the cache.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from agent.memory.embeddings import Embedder, FloatMatrix

__all__ = ["CachedEmbedder"]


class CachedEmbedder:
    """An :class:`Embedder` that remembers the last ``capacity`` texts it embedded.

    Thread-safe: seats embed from worker threads (``asyncio.to_thread``). Misses are
    embedded outside the lock, in one batched call per ``embed``.
    """

    def __init__(self, inner: Embedder, capacity: int = 50_000) -> None:
        if capacity < 1:
            raise ValueError("capacity must be >= 1")
        self.inner = inner
        self.capacity = capacity
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def name(self) -> str:
        return self.inner.name

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single str")
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        with self._lock:
            for row, text in enumerate(texts):
                vector = self._cache.get(text)
                if vector is None:
                    missing.setdefault(text, []).append(row)
                else:
                    self._cache.move_to_end(text)
                    out[row] = vector
            self.hits += len(texts) - len(missing)
            self.misses += len(missing)
        if missing:
            fresh = self.inner.embed(list(missing))
            with self._lock:
                for (text, rows), vector in zip(missing.items(), fresh, strict=True):
                    out[rows] = vector
                    self._cache[text] = np.array(vector, dtype=np.float32)
                while len(self._cache) > self.capacity:
                    self._cache.popitem(last=False)
        return out
