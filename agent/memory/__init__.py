"""Retrieval memory for agent seats: offline sentence embeddings plus a per-seat index."""

from agent.memory.embeddings import (
    ChecksumMismatchError,
    Embedder,
    EmbedderUnavailableError,
    HashingEmbedder,
    MiniLMEmbedder,
    OpenAIEmbedder,
    default_minilm,
)
from agent.memory.store import (
    EmbedderMismatchError,
    MemoryItem,
    SeatMemory,
    StaleIndexError,
    read_items,
    set_search_threads,
)

__all__ = [
    "ChecksumMismatchError",
    "Embedder",
    "EmbedderMismatchError",
    "EmbedderUnavailableError",
    "HashingEmbedder",
    "MemoryItem",
    "MiniLMEmbedder",
    "OpenAIEmbedder",
    "SeatMemory",
    "StaleIndexError",
    "default_minilm",
    "read_items",
    "set_search_threads",
]
