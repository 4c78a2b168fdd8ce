"""Per-seat retrieval memory: what one agent seat has observed, searchable by meaning.

Each seat gets its own :class:`SeatMemory` so that nothing a seat could not have seen
(another seat's night chat, say) can leak into its retrieval. Vectors live in an exact
faiss ``IndexFlatIP``; with unit vectors inner product is cosine, and at the sizes a
game reaches (thousands of items) exact search costs well under a millisecond, so
there is no reason to accept approximate recall.

Persistence treats ``items.jsonl`` as the source of truth and the faiss file as a
cache of its embeddings: ``meta.json`` (written last) ties the two together, and a
missing, stale or foreign index is detected on load and can be rebuilt from the items.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import uuid
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

import faiss
import numpy as np
import numpy.typing as npt

from agent.memory.embeddings import Embedder, l2_normalize

__all__ = [
    "FORMAT_VERSION",
    "KIND_MANAGER",
    "KIND_MESSAGE",
    "KIND_REFLECTION",
    "KIND_ROLE",
    "KIND_VOTE",
    "EmbedderMismatchError",
    "MemoryItem",
    "SeatMemory",
    "StaleIndexError",
    "read_items",
    "set_search_threads",
]

log = logging.getLogger(__name__)

KIND_MESSAGE: Final = "message"
KIND_MANAGER: Final = "manager"
KIND_VOTE: Final = "vote"
KIND_REFLECTION: Final = "reflection"
KIND_ROLE: Final = "role"

FORMAT_VERSION: Final = 1
ITEMS_FILE: Final = "items.jsonl"
INDEX_FILE: Final = "index.faiss"
META_FILE: Final = "meta.json"

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
#: Items re-embedded per embedder call during rebuild, to bound peak memory.
_REBUILD_CHUNK = 4096


@dataclass(frozen=True, slots=True)
class MemoryItem:
    """One thing a seat observed or concluded.

    ``text`` is what gets embedded, so it should read on its own (include the
    speaker: ``"Rowan: I'm the detective"``). ``source_key`` names the underlying
    observation (e.g. a chat message id); adding a second item with the same key is a
    no-op, which makes replaying events after a restart safe.
    """

    id: int
    text: str
    t: datetime
    phase: str
    kind: str
    importance: float = 1.0
    source_key: str | None = None

    def __post_init__(self) -> None:
        if self.id < 0:
            raise ValueError(f"MemoryItem.id must be >= 0, got {self.id}")
        if self.t.tzinfo is None or self.t.utcoffset() is None:
            raise ValueError("MemoryItem.t must be a timezone-aware datetime")
        if not self.kind:
            raise ValueError("MemoryItem.kind must be non-empty")
        if not math.isfinite(self.importance):
            raise ValueError("MemoryItem.importance must be finite")

    def to_record(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "t": self.t.isoformat(),
            "phase": self.phase,
            "kind": self.kind,
            "importance": self.importance,
            "source_key": self.source_key,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> MemoryItem:
        source_key = record.get("source_key")
        return cls(
            id=int(record["id"]),
            text=str(record["text"]),
            t=datetime.fromisoformat(str(record["t"])),
            phase=str(record["phase"]),
            kind=str(record["kind"]),
            importance=float(record.get("importance", 1.0)),
            source_key=None if source_key is None else str(source_key),
        )


class StaleIndexError(RuntimeError):
    """The saved faiss index is missing or does not match the saved items; rebuild it."""


class EmbedderMismatchError(StaleIndexError):
    """The saved vectors come from a different embedder than the one supplied."""


def _micros(t: datetime) -> int:
    return (t - _EPOCH) // _MICROSECOND


class _Column:
    """An append-only int64 column with amortised O(1) growth, for filter masks."""

    def __init__(self) -> None:
        self._data: npt.NDArray[np.int64] = np.empty(64, dtype=np.int64)
        self._n = 0

    def extend(self, values: Sequence[int]) -> None:
        need = self._n + len(values)
        if need > len(self._data):
            grown = np.empty(max(need, 2 * len(self._data)), dtype=np.int64)
            grown[: self._n] = self._data[: self._n]
            self._data = grown
        self._data[self._n : need] = values
        self._n = need

    def view(self) -> npt.NDArray[np.int64]:
        return self._data[: self._n]


class SeatMemory:
    """Retrieval memory of one seat: items plus their vectors in an exact cosine index.

    Not thread-safe: meant to be owned by one seat on one event loop. Embedding is
    synchronous and CPU-bound, so async callers should use ``asyncio.to_thread``.
    Scores are raw cosines; weighting by importance or recency is the caller's policy.
    """

    def __init__(self, embedder: Embedder) -> None:
        if embedder.dim < 1:
            raise ValueError("embedder.dim must be positive")
        self._embedder = embedder
        self._reset()

    def _reset(self) -> None:
        self._index = faiss.IndexFlatIP(self._embedder.dim)
        self._items: list[MemoryItem] = []
        self._row_by_id: dict[int, int] = {}
        self._sources: set[str] = set()
        self._kind_codes: dict[str, int] = {}
        self._kind_col = _Column()
        self._time_col = _Column()
        self._next_id = 0

    # ------------------------------------------------------------------ reading

    @property
    def embedder(self) -> Embedder:
        return self._embedder

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[MemoryItem]:
        """Items in the order they were added."""
        return iter(list(self._items))

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._row_by_id

    def get(self, item_id: int) -> MemoryItem | None:
        row = self._row_by_id.get(item_id)
        return None if row is None else self._items[row]

    def has_source(self, source_key: str) -> bool:
        return source_key in self._sources

    def next_id(self) -> int:
        """An id not yet used in this memory (one more than the largest)."""
        return self._next_id

    # ------------------------------------------------------------------ writing

    def _select_new(self, items: Iterable[MemoryItem]) -> list[tuple[int, MemoryItem]]:
        """Drop repeats (same source_key, or an identical item) and reject id clashes.

        Validates the whole batch before anything is stored, so a bad batch changes
        nothing.
        """
        fresh: list[tuple[int, MemoryItem]] = []
        batch_ids: dict[int, MemoryItem] = {}
        batch_sources: set[str] = set()
        for position, item in enumerate(items):
            if item.source_key is not None and (
                item.source_key in self._sources or item.source_key in batch_sources
            ):
                continue
            existing = self.get(item.id) or batch_ids.get(item.id)
            if existing is not None:
                if existing == item:
                    continue
                raise ValueError(
                    f"memory id {item.id} is already used by a different item "
                    f"({existing.text!r}); use next_id() or a source_key"
                )
            fresh.append((position, item))
            batch_ids[item.id] = item
            if item.source_key is not None:
                batch_sources.add(item.source_key)
        return fresh

    def add(self, items: Iterable[MemoryItem]) -> list[MemoryItem]:
        """Embed (in one batched call) and store the items that are new.

        Returns the items actually stored; repeats of stored observations are skipped.
        """
        fresh = [item for _, item in self._select_new(items)]
        if not fresh:
            return []
        vectors = self._embedder.embed([item.text for item in fresh])
        self._commit(fresh, vectors)
        return fresh

    def add_with_vectors(
        self, items: Sequence[MemoryItem], vectors: npt.NDArray[np.floating[Any]]
    ) -> list[MemoryItem]:
        """Store items whose embeddings are already known (one row per item, same order).

        For callers that embedded elsewhere with the same embedder; rows are
        re-normalised. Repeats are skipped exactly as in :meth:`add`.
        """
        matrix = np.asarray(vectors)
        if matrix.shape != (len(items), self._embedder.dim):
            raise ValueError(
                f"vectors have shape {matrix.shape}, expected ({len(items)}, {self._embedder.dim})"
            )
        selected = self._select_new(items)
        if not selected:
            return []
        fresh = [item for _, item in selected]
        if len(fresh) < len(items):
            matrix = matrix[[position for position, _ in selected]]
        self._commit(fresh, matrix)
        return fresh

    def remember(
        self,
        text: str,
        *,
        t: datetime,
        phase: str,
        kind: str,
        importance: float = 1.0,
        source_key: str | None = None,
    ) -> MemoryItem | None:
        """Add one observation under a fresh id; None if ``source_key`` was already stored."""
        if source_key is not None and source_key in self._sources:
            return None
        item = MemoryItem(
            id=self.next_id(),
            text=text,
            t=t,
            phase=phase,
            kind=kind,
            importance=importance,
            source_key=source_key,
        )
        added = self.add([item])
        return added[0] if added else None

    def _commit(self, items: list[MemoryItem], vectors: npt.NDArray[np.floating[Any]]) -> None:
        matrix = np.asarray(vectors)
        if matrix.shape != (len(items), self._embedder.dim):
            raise ValueError(
                f"embedder {self._embedder.name} returned shape {matrix.shape}, "
                f"expected ({len(items)}, {self._embedder.dim})"
            )
        unit = l2_normalize(matrix)
        if not np.isfinite(unit).all():
            raise ValueError("embeddings contain NaN or infinity")
        self._index.add(unit)
        first_row = len(self._items)
        self._items.extend(items)
        codes: list[int] = []
        for offset, item in enumerate(items):
            self._row_by_id[item.id] = first_row + offset
            if item.source_key is not None:
                self._sources.add(item.source_key)
            codes.append(self._kind_codes.setdefault(item.kind, len(self._kind_codes)))
        self._kind_col.extend(codes)
        self._time_col.extend([_micros(item.t) for item in items])
        self._next_id = max(self._next_id, max((item.id + 1 for item in items), default=0))

    def rebuild(self, items: Iterable[MemoryItem]) -> None:
        """Replace the contents with ``items``, re-embedding them all.

        Used when the saved index is missing, stale or from another embedder. Built
        aside and swapped in, so a failure leaves the memory as it was.
        """
        fresh = SeatMemory(self._embedder)
        batch: list[MemoryItem] = []
        for item in items:
            batch.append(item)
            if len(batch) >= _REBUILD_CHUNK:
                fresh.add(batch)
                batch = []
        fresh.add(batch)
        self._adopt(fresh)

    def _adopt(self, other: SeatMemory) -> None:
        self._index = other._index
        self._items = other._items
        self._row_by_id = other._row_by_id
        self._sources = other._sources
        self._kind_codes = other._kind_codes
        self._kind_col = other._kind_col
        self._time_col = other._time_col
        self._next_id = other._next_id

    # ------------------------------------------------------------------ querying

    def query(
        self,
        question: str,
        k: int,
        kinds: Collection[str] | None = None,
        min_t: datetime | None = None,
    ) -> list[tuple[MemoryItem, float]]:
        """The ``k`` items most similar to ``question``, best first, with cosine scores.

        ``kinds`` keeps only items of those kinds and ``min_t`` only items with
        ``t >= min_t``. Filters are applied inside the search (an ID selector), so
        up to ``k`` matching items come back however rare the kind is.
        """
        if isinstance(kinds, str):
            raise TypeError("kinds must be a collection of kind names, not a single str")
        if k <= 0 or not self._items or (kinds is not None and not kinds):
            return []
        vector = self._embedder.embed([question])
        return self.query_vector(vector[0], k, kinds=kinds, min_t=min_t)

    def query_vector(
        self,
        vector: npt.NDArray[np.floating[Any]],
        k: int,
        kinds: Collection[str] | None = None,
        min_t: datetime | None = None,
    ) -> list[tuple[MemoryItem, float]]:
        """:meth:`query` with an already-embedded question (a vector of length dim)."""
        if isinstance(kinds, str):
            raise TypeError("kinds must be a collection of kind names, not a single str")
        if min_t is not None and (min_t.tzinfo is None or min_t.utcoffset() is None):
            raise ValueError("min_t must be a timezone-aware datetime")
        n = len(self._items)
        if k <= 0 or n == 0 or (kinds is not None and not kinds):
            return []
        q = l2_normalize(np.asarray(vector, dtype=np.float32).reshape(1, -1))
        if q.shape[1] != self._embedder.dim:
            raise ValueError(f"query vector has dim {q.shape[1]}, expected {self._embedder.dim}")

        if kinds is None and min_t is None:
            scores, rows = self._index.search(q, min(k, n))
        else:
            mask = np.ones(n, dtype=bool)
            if kinds is not None:
                codes = [self._kind_codes[kind] for kind in kinds if kind in self._kind_codes]
                mask &= np.isin(self._kind_col.view(), codes)
            if min_t is not None:
                mask &= self._time_col.view() >= _micros(min_t)
            allowed = int(mask.sum())
            if allowed == 0:
                return []
            # faiss reads the bitmap through a raw pointer: it must outlive the search.
            bitmap = np.packbits(mask, bitorder="little")
            selector = faiss.IDSelectorBitmap(n, faiss.swig_ptr(bitmap))
            params = faiss.SearchParameters()
            params.sel = selector
            scores, rows = self._index.search(q, min(k, allowed), params=params)

        return [
            (self._items[int(row)], float(score))
            for score, row in zip(scores[0], rows[0], strict=True)
            if row >= 0
        ]

    # ------------------------------------------------------------------ persistence

    def save(self, directory: str | os.PathLike[str]) -> None:
        """Write index, items and meta, each atomically (temp file + rename).

        Meta goes last and records digests of the other two, so a crash between
        renames leaves a state that :meth:`load` recognises as stale rather than one
        that silently pairs vectors with the wrong items.
        """
        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)

        index_tmp = _temp_name(path, INDEX_FILE)
        try:
            faiss.write_index(self._index, str(index_tmp))
            _fsync_file(index_tmp)
            index_sha = _file_sha256(index_tmp)
            os.replace(index_tmp, path / INDEX_FILE)
        finally:
            index_tmp.unlink(missing_ok=True)

        items_blob = "".join(
            json.dumps(item.to_record(), ensure_ascii=False) + "\n" for item in self._items
        ).encode("utf-8")
        _atomic_write(path / ITEMS_FILE, items_blob)

        meta = {
            "format": FORMAT_VERSION,
            "embedder": self._embedder.name,
            "dim": self._embedder.dim,
            "count": len(self._items),
            "items_sha256": hashlib.sha256(items_blob).hexdigest(),
            "index_sha256": index_sha,
        }
        _atomic_write(path / META_FILE, (json.dumps(meta, indent=2) + "\n").encode("utf-8"))
        _fsync_dir(path)

    @classmethod
    def load(cls, directory: str | os.PathLike[str], embedder: Embedder) -> SeatMemory:
        """Load a saved memory without re-embedding anything.

        Raises FileNotFoundError when nothing was saved there,
        :class:`EmbedderMismatchError` when it was saved with another embedder, and
        :class:`StaleIndexError` when the index is missing or does not match the items
        (see :meth:`load_or_rebuild`).
        """
        path = Path(directory)
        items_blob = (path / ITEMS_FILE).read_bytes()
        try:
            meta = json.loads((path / META_FILE).read_text("utf-8"))
        except FileNotFoundError as exc:
            raise StaleIndexError(f"{path / META_FILE} is missing") from exc
        except json.JSONDecodeError as exc:
            raise StaleIndexError(f"{path / META_FILE} is not valid JSON") from exc
        if not isinstance(meta, dict) or meta.get("format") != FORMAT_VERSION:
            raise StaleIndexError(f"{path / META_FILE} has an unknown format")
        if meta.get("embedder") != embedder.name or meta.get("dim") != embedder.dim:
            raise EmbedderMismatchError(
                f"memory in {path} was embedded with {meta.get('embedder')!r} "
                f"(dim {meta.get('dim')}), not {embedder.name!r} (dim {embedder.dim})"
            )
        if meta.get("items_sha256") != hashlib.sha256(items_blob).hexdigest():
            raise StaleIndexError(f"{path / ITEMS_FILE} changed after the index was saved")
        index_path = path / INDEX_FILE
        if not index_path.is_file():
            raise StaleIndexError(f"{index_path} is missing")
        if meta.get("index_sha256") != _file_sha256(index_path):
            raise StaleIndexError(f"{index_path} does not match {path / META_FILE}")

        items = _parse_items(items_blob, path / ITEMS_FILE)
        index = faiss.read_index(str(index_path))
        if (
            not isinstance(index, faiss.IndexFlatIP)
            or index.d != embedder.dim
            or index.ntotal != len(items)
            or meta.get("count") != len(items)
        ):
            raise StaleIndexError(f"{index_path} does not hold {len(items)} vectors")

        memory = cls(embedder)
        memory._index = index
        memory._restore_items(items)
        return memory

    @classmethod
    def load_or_rebuild(
        cls,
        directory: str | os.PathLike[str],
        embedder: Embedder,
        *,
        resave: bool = True,
    ) -> SeatMemory:
        """:meth:`load`, falling back to re-embedding ``items.jsonl`` when the index is
        missing, stale or from another embedder (then saving it again if ``resave``).

        A directory with no ``items.jsonl`` yields an empty memory.
        """
        path = Path(directory)
        if not (path / ITEMS_FILE).is_file():
            return cls(embedder)
        try:
            return cls.load(path, embedder)
        except StaleIndexError as exc:
            log.warning("rebuilding retrieval memory in %s: %s", path, exc)
        memory = cls(embedder)
        memory.rebuild(read_items(path))
        if resave:
            memory.save(path)
        return memory

    def _restore_items(self, items: list[MemoryItem]) -> None:
        """Register items whose vectors are already in ``self._index``, in row order."""
        codes: list[int] = []
        for row, item in enumerate(items):
            if item.id in self._row_by_id:
                raise StaleIndexError(f"duplicate memory id {item.id} in saved items")
            self._row_by_id[item.id] = row
            if item.source_key is not None:
                self._sources.add(item.source_key)
            codes.append(self._kind_codes.setdefault(item.kind, len(self._kind_codes)))
        self._items = list(items)
        self._kind_col.extend(codes)
        self._time_col.extend([_micros(item.t) for item in items])
        self._next_id = max(self._next_id, max((item.id + 1 for item in items), default=0))


def set_search_threads(n: int) -> None:
    """Set faiss's OpenMP thread count (process-wide) used by every search.

    A seat's query is one vector against at most ~10^5 rows, a few milliseconds of
    work; on a busy two-core host, OpenMP's spinning worker threads made single-query
    searches slower and far jumpier (p99) than one thread, and they compete with
    onnxruntime and the event loop. Services should call ``set_search_threads(1)``.
    """
    if n < 1:
        raise ValueError("n must be >= 1")
    faiss.omp_set_num_threads(n)


def read_items(directory: str | os.PathLike[str]) -> list[MemoryItem]:
    """The items saved in ``directory`` (the source of truth for a rebuild)."""
    path = Path(directory) / ITEMS_FILE
    return _parse_items(path.read_bytes(), path)


def _parse_items(blob: bytes, where: Path) -> list[MemoryItem]:
    items: list[MemoryItem] = []
    for lineno, line in enumerate(blob.decode("utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise TypeError("not a JSON object")
            items.append(MemoryItem.from_record(record))
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"{where}:{lineno}: bad memory record: {exc}") from exc
    return items


def _temp_name(directory: Path, final_name: str) -> Path:
    return directory / f".{final_name}.{os.getpid()}.{uuid.uuid4().hex}.tmp"


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    # Makes the renames durable on POSIX; directories cannot be opened on Windows.
    with contextlib.suppress(OSError):
        _fsync_file(path)


def _atomic_write(target: Path, data: bytes) -> None:
    tmp = _temp_name(target.parent, target.name)
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
