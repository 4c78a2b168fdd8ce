"""Benchmark of the agent's retrieval memory: MiniLM throughput and SeatMemory latency.

Run: ``uv run python bench/memory.py [--threads N]``. Offline; takes well under a minute.

To reach 100k memories quickly the bulk of each memory is random unit vectors (the
flat index's cost does not depend on what the vectors mean); every timed add and
query goes through the real MiniLM embedder with real Mafia chat lines/questions.
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import faiss
import numpy as np

from agent.memory import MemoryItem, MiniLMEmbedder, SeatMemory, set_search_threads

LLMAFIA_GAMES = Path("/work/shared/data/llmafia/games")
_LINE = re.compile(r"^\[\d\d:\d\d:\d\d\] ([^:]+): (.+)$")

FALLBACK_LINES = [
    "Rowan: I'm the detective, I checked Kai last night and he's clean",
    "Kai: why is everyone so quiet today? that's suspicious",
    "Sam: I vote Jo, she dodged every question yesterday",
    "Jo: I'm just a villager, I swear. Look at Lee instead",
    "Lee: nobody died last night, so the doctor saved someone",
    "Game-Manager: Kai voted for Jo",
    "Remi: let's not jump to conclusions before we hear from everyone",
    "Bailey: I think the mafia is trying to split the town",
]
QUESTIONS = [
    "who claimed to be the detective?",
    "who voted for Jo yesterday?",
    "who has been accusing me?",
    "who defended Kai?",
    "what did Rowan say about last night?",
    "who is acting suspicious?",
    "did anyone claim to be the doctor?",
    "who changed their vote at the last moment?",
]
SIZES = (1_000, 10_000, 100_000)
T0 = datetime(2025, 3, 1, 20, 0, tzinfo=UTC)


def chat_lines() -> tuple[list[str], str]:
    lines: dict[str, None] = {}
    for path in sorted(LLMAFIA_GAMES.glob("*/public_daytime_chat.txt")):
        for raw in path.read_text("utf-8", errors="replace").splitlines():
            match = _LINE.match(raw.strip())
            if match:
                lines.setdefault(f"{match.group(1)}: {match.group(2)}", None)
    if len(lines) >= 200:
        return list(lines), f"{len(lines)} unique LLMafia day-chat lines"
    return FALLBACK_LINES * 40, "built-in sample lines (LLMafia data not found)"


def percentiles_ms(samples: list[float]) -> tuple[float, float]:
    arr = np.asarray(samples) * 1e3
    return float(np.percentile(arr, 50)), float(np.percentile(arr, 99))


def timed(fn: Callable[[], object], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def bench_throughput(embedder: MiniLMEmbedder, lines: list[str]) -> list[tuple[str, str, str]]:
    rows = []
    single = lines[:300]
    start = time.perf_counter()
    for line in single:
        embedder.embed([line])
    elapsed = time.perf_counter() - start
    rows.append(("batch 1", f"{len(single) / elapsed:,.0f}", f"{elapsed / len(single) * 1e3:.2f}"))

    batched = lines[: 32 * 30]
    start = time.perf_counter()
    for i in range(0, len(batched), 32):
        embedder.embed(batched[i : i + 32])
    elapsed = time.perf_counter() - start
    rows.append(
        ("batch 32", f"{len(batched) / elapsed:,.0f}", f"{elapsed / len(batched) * 1e3:.2f}")
    )
    return rows


def build_memory(embedder: MiniLMEmbedder, size: int, lines: list[str]) -> SeatMemory:
    rng = np.random.default_rng(size)
    vectors = rng.standard_normal((size, embedder.dim), dtype=np.float32)
    kinds = ["message", "message", "message", "manager", "vote", "reflection"]
    items = [
        MemoryItem(
            id=i,
            text=lines[i % len(lines)],
            t=T0 + timedelta(seconds=i),
            phase=f"day-{1 + i // 2000}",
            kind=kinds[i % len(kinds)],
            source_key=f"bulk:{i}",
        )
        for i in range(size)
    ]
    memory = SeatMemory(embedder)
    memory.add_with_vectors(items, vectors)
    return memory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--threads", type=int, default=1, help="onnxruntime intra-op threads")
    parser.add_argument("--faiss-threads", type=int, default=1, help="faiss OpenMP threads")
    args = parser.parse_args()
    set_search_threads(args.faiss_threads)

    wall = time.perf_counter()
    embedder = MiniLMEmbedder(intra_op_threads=args.threads)
    start = time.perf_counter()
    embedder.warm_up()
    load_s = time.perf_counter() - start
    lines, source = chat_lines()
    embedder.embed(lines[:64])  # warm caches before timing

    print("Retrieval memory benchmark")
    print(
        f"  machine : {platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, faiss {faiss.__version__} "
        f"(search threads {args.faiss_threads}, cpus {os.cpu_count()})"
    )
    print(
        f"  embedder: {embedder.name} dim {embedder.dim}, onnxruntime intra-op threads "
        f"{args.threads}; model load + sha256 checks {load_s * 1e3:.0f} ms"
    )
    print(f"  texts   : {source}")
    print()

    print("Embedding throughput (MiniLM int8 ONNX, CPU)")
    print(f"  {'mode':<10} {'msgs/s':>10} {'ms/msg':>8}")
    for mode, rate, per in bench_throughput(embedder, lines):
        print(f"  {mode:<10} {rate:>10} {per:>8}")
    print()

    question_vectors = embedder.embed(QUESTIONS)
    print("SeatMemory latency, ms (p50 / p99). Bulk memories are random unit vectors;")
    print("timed adds embed a real chat line, timed queries embed a real question.")
    header = (
        f"  {'memories':>9} | {'add 1 (embed+index)':>20} | {'add 32 (embed+index)':>21} | "
        f"{'query k=5':>15} | {'search only':>15} | {'kinds+min_t':>15}"
    )
    print(header)
    print("  " + "-" * (len(header) - 2))
    for size in SIZES:
        memory = build_memory(embedder, size, lines)
        next_id = iter(range(size, size + 100_000))
        pick = iter(range(10**9))

        def add_one(memory: SeatMemory = memory) -> None:
            i = next(next_id)
            memory.add(
                [MemoryItem(i, lines[i % len(lines)], T0, "day-9", "message", 1.0, f"x:{i}")]
            )

        def add_batch(memory: SeatMemory = memory) -> None:
            batch = []
            for _ in range(32):
                i = next(next_id)
                batch.append(
                    MemoryItem(i, lines[i % len(lines)], T0, "day-9", "message", 1.0, f"x:{i}")
                )
            memory.add(batch)

        def query(memory: SeatMemory = memory) -> None:
            memory.query(QUESTIONS[next(pick) % len(QUESTIONS)], k=5)

        def search(memory: SeatMemory = memory) -> None:
            memory.query_vector(question_vectors[next(pick) % len(QUESTIONS)], k=5)

        min_t = T0 + timedelta(seconds=size // 2)

        def filtered(memory: SeatMemory = memory, min_t: datetime = min_t) -> None:
            memory.query(QUESTIONS[next(pick) % len(QUESTIONS)], k=5, kinds={"vote"}, min_t=min_t)

        cells = [
            percentiles_ms(timed(add_one, 100)),
            percentiles_ms(timed(add_batch, 20)),
            percentiles_ms(timed(query, 100)),
            percentiles_ms(timed(search, 200)),
            percentiles_ms(timed(filtered, 100)),
        ]
        widths = (20, 21, 15, 15, 15)
        rendered = " | ".join(
            f"{f'{p50:.2f} / {p99:.2f}':>{w}}" for (p50, p99), w in zip(cells, widths, strict=True)
        )
        print(f"  {size:>9,} | {rendered}")
        hits = memory.query("who claimed to be the detective?", k=5, kinds={"vote"})
        assert len(hits) == 5 and all(item.kind == "vote" for item, _ in hits)

    print()
    print(
        f"  'add 32' is one call adding 32 messages. Total wall time "
        f"{time.perf_counter() - wall:.1f} s"
    )


if __name__ == "__main__":
    main()
