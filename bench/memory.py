"""Benchmark of the agent's retrieval memory: MiniLM throughput, SeatMemory latency, and the
LLM agent's own overhead per decision.

Run: ``uv run python bench/memory.py [--threads N] [--faiss-threads N]``. Offline; about 60 s.

To reach 100k memories quickly the bulk of each memory is random unit vectors (the
flat index's cost does not depend on what the vectors mean); every timed add and
query goes through the real MiniLM embedder with real Mafia chat lines/questions.

"Agent overhead per decision" is what a seat with memory (:class:`SeatMind`) adds to every
scheduler / generator / vote call, LLM excluded: building the memory block (key moments,
related earlier lines found by a faiss search, note, suspects, advice) and the whole request,
at 10k memories from a real engine game. Storing the new lines (embedding) is ingest, timed
apart, as is the per-phase reflection retrieval (4 questions embedded and searched).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

import faiss
import numpy as np

from agent.knowledge import SeatKnowledge
from agent.memory import MemoryItem, MiniLMEmbedder, SeatMemory, set_search_threads
from agent.memory.embeddings import FloatMatrix, l2_normalize
from agent.memory.seatmind import SeatMind
from agent.prompting import (
    PromptWindow,
    estimate_tokens,
    generator_request,
    load_prompts,
    scheduler_request,
    target_request,
)
from games import GameConfig, apply, new_game
from games.actions import Say
from games.events import Event, MessageAccepted, visible
from research.paths import llmafia_games_dir

LLMAFIA_GAMES = llmafia_games_dir()
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


def bench_throughput(embedder: MiniLMEmbedder, lines: list[str]) -> list[tuple[str, float]]:
    """Messages/s for one message per call and for calls of 32, same lines, median of 3."""
    sample = lines[:320]

    def one_by_one() -> None:
        for line in sample:
            embedder.embed([line])

    def in_batches() -> None:
        for i in range(0, len(sample), 32):
            embedder.embed(sample[i : i + 32])

    return [
        ("batch 1", len(sample) / statistics.median(timed(one_by_one, 3))),
        ("batch 32", len(sample) / statistics.median(timed(in_batches, 3))),
    ]


def build_memory(embedder: MiniLMEmbedder, size: int, lines: list[str]) -> SeatMemory:
    """A memory of ``size`` items whose vectors are random unit vectors (see module doc)."""
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


def bench_size(
    memory: SeatMemory, lines: list[str], question_vectors: FloatMatrix
) -> list[tuple[float, float]]:
    """p50/p99 (ms) of: add 1, add 32, query, search only, filtered query."""
    size = len(memory)
    next_id = iter(range(memory.next_id(), memory.next_id() + 100_000))
    pick = iter(range(10**9))
    min_t = T0 + timedelta(seconds=size // 2)

    def message(i: int) -> MemoryItem:
        return MemoryItem(i, lines[i % len(lines)], T0, "day-9", "message", 1.0, f"x:{i}")

    def add_one() -> None:
        memory.add([message(next(next_id))])

    def add_batch() -> None:
        memory.add([message(next(next_id)) for _ in range(32)])

    def query() -> None:
        memory.query(QUESTIONS[next(pick) % len(QUESTIONS)], k=5)

    def search() -> None:
        memory.query_vector(question_vectors[next(pick) % len(QUESTIONS)], k=5)

    def filtered() -> None:
        question = QUESTIONS[next(pick) % len(QUESTIONS)]
        hits = memory.query(question, k=5, kinds={"vote"}, min_t=min_t)
        assert len(hits) == 5 and all(item.kind == "vote" for item, _ in hits)

    return [
        percentiles_ms(timed(add_one, 100)),
        percentiles_ms(timed(add_batch, 20)),
        percentiles_ms(timed(query, 100)),
        percentiles_ms(timed(search, 200)),
        percentiles_ms(timed(filtered, 100)),
    ]


def bench_persistence(memory: SeatMemory) -> tuple[float, float]:
    """Seconds to save and to load (no re-embedding) the memory, one run each."""
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        start = time.perf_counter()
        memory.save(tmp)
        save_s = time.perf_counter() - start
        start = time.perf_counter()
        loaded = SeatMemory.load(tmp, memory.embedder)
        load_s = time.perf_counter() - start
        assert len(loaded) == len(memory)
    return save_s, load_s


class Switchable:
    """Random unit vectors (to build 10k memories in a second), then the real embedder."""

    def __init__(self, real: MiniLMEmbedder) -> None:
        self.real = real
        self.fake = True
        self.rng = np.random.default_rng(7)

    @property
    def dim(self) -> int:
        return self.real.dim

    @property
    def name(self) -> str:
        return self.real.name

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        if not self.fake:
            return self.real.embed(texts)
        return l2_normalize(self.rng.standard_normal((len(texts), self.dim), dtype=np.float32))


OVERHEAD_SIZE = 10_000
OVERHEAD_TARGET_MS = 5.0
NAMES = ["Ari", "Blake", "Casey", "Drew", "Eden", "Finley", "Gray"]
DEAL = ("bystander", "mafia", "mafia", "detective", "doctor", "bystander", "bystander")


def long_day(lines: list[str], count: int) -> tuple[list[Event], datetime]:
    """A real engine game with ``count`` recorded lines said on one long day."""
    config = GameConfig(deal=DEAL, roles=("detective", "doctor"), day_seconds=86_400)
    state, events = new_game(config, NAMES, 1, T0)
    t = T0
    for i in range(count):
        t += timedelta(seconds=2)
        text = lines[i % len(lines)].split(": ", 1)[-1]
        state, more = apply(state, Say(1 + i % 6, text, t))
        events.extend(more)
    return events, t


async def bench_agent_overhead(
    embedder: MiniLMEmbedder, lines: list[str]
) -> tuple[dict[str, tuple[float, float]], dict[str, float]]:
    """p50/p99 ms of the agent's per-decision overhead at OVERHEAD_SIZE memories (see the module
    docstring), plus ingest, reflection retrieval, and event-loop stalls while embedding."""
    events, t = long_day(lines, OVERHEAD_SIZE)
    switch = Switchable(embedder)
    mind = SeatMind(0, switch)
    k = SeatKnowledge(0, NAMES[0])
    for e in events:
        if visible(e, 0):
            k.observe(e)
            mind.observe(e)
    await mind.flush()
    await mind.add_reflection(k.phase_seq, "day-1", "Blake keeps accusing quiet players. " * 8, t)
    names = list(NAMES[1:])
    mind.suspicion.update({n: (0.1 * i, "voted oddly") for i, n in enumerate(names)}, {}, names,
                          {}, k.phase_seq)  # fmt: skip
    mind.suggestion = "You should ask the quietest player a direct question before voting."
    switch.fake = False
    book = load_prompts()
    window = PromptWindow()
    size = len(mind.memory)

    async def decide(kind: str) -> int:
        entries = k.window_entries(window.lines, window.chars)
        block = await mind.prompt_block(k, kind, entries[0].t if entries else None)
        if kind == "scheduler":
            req, _ = scheduler_request(book, k, "p", t, window, memory=block)
        elif kind == "generator":
            req = generator_request(book, k, "p", t, window, memory=block)
        else:
            req = target_request(book, k, "p", t, window, "vote", names, memory=block)
        return estimate_tokens(req.system + req.messages[0][1])

    samples: dict[str, list[float]] = {"scheduler": [], "generator": [], "vote": []}
    ingest: list[float] = []
    tokens: dict[str, int] = {}
    next_t = t
    for i in range(300):
        next_t += timedelta(seconds=2)
        said = MessageAccepted(
            t=next_t, seat=1 + i % 6, name=NAMES[1 + i % 6], text=lines[(i * 7) % len(lines)],
            phase_seq=k.phase_seq,
        )  # fmt: skip
        k.observe(said)
        mind.observe(said)
        start = time.perf_counter()
        await mind.flush()  # ingest: embed the new line (worker thread) and index it
        ingest.append(time.perf_counter() - start)
        for kind in samples:
            start = time.perf_counter()
            tokens[kind] = await decide(kind)
            samples[kind].append(time.perf_counter() - start)
    overhead = {kind: percentiles_ms(v) for kind, v in samples.items()}
    overhead["ingest (1 line)"] = percentiles_ms(ingest)
    questions = QUESTIONS[:4]
    retrieve = []
    for _ in range(30):
        start = time.perf_counter()
        await mind.retrieve_many(questions, 4)
        retrieve.append(time.perf_counter() - start)
    overhead["reflection retrieval (4 q)"] = percentiles_ms(retrieve)
    extra = {"memories": float(size), **{f"tokens {k}": float(v) for k, v in tokens.items()}}
    extra.update(await loop_stalls(embedder, lines))
    return overhead, extra


async def loop_stalls(embedder: MiniLMEmbedder, lines: list[str]) -> dict[str, float]:
    """The longest the event loop went unserved while 32 lines were embedded: inline versus in
    a worker thread (what SeatMind.flush does)."""

    async def worst_gap(work: asyncio.Future[object] | None, inline: bool) -> float:
        stop = asyncio.Event()
        gaps: list[float] = []

        async def ticker() -> None:
            last = time.perf_counter()
            while not stop.is_set():
                await asyncio.sleep(0.001)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        task = asyncio.create_task(ticker())
        await asyncio.sleep(0.01)
        batch = lines[100:132]
        if inline:
            embedder.embed(batch)
            await asyncio.sleep(0.005)
        else:
            await asyncio.to_thread(embedder.embed, batch)
        stop.set()
        await task
        return max(gaps) * 1e3

    inline = [await worst_gap(None, True) for _ in range(5)]
    threaded = [await worst_gap(None, False) for _ in range(5)]
    return {
        "loop stall inline ms": float(statistics.median(inline)),
        "loop stall thread ms": float(statistics.median(threaded)),
    }


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
        f"  machine : {platform.machine()}, {os.cpu_count()} cpus, "
        f"{platform.python_implementation()} {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print(
        f"  embedder: {embedder.name} (dim {embedder.dim}), onnxruntime intra-op threads "
        f"{args.threads}; first load incl. sha256 checks {load_s * 1e3:.0f} ms"
    )
    print(f"  index   : faiss {faiss.__version__} IndexFlatIP, search threads {args.faiss_threads}")
    print(f"  texts   : {source}")
    print()

    print("Embedding throughput (same 320 chat lines, median of 3 runs)")
    print(f"  {'mode':<10} {'msgs/s':>10} {'ms/msg':>8}")
    for mode, rate in bench_throughput(embedder, lines):
        print(f"  {mode:<10} {rate:>10,.0f} {1e3 / rate:>8.2f}")
    print()

    question_vectors = embedder.embed(QUESTIONS)
    print("SeatMemory latency in ms, p50 / p99. NOTE: the bulk of each memory is random unit")
    print("vectors (to build 100k fast); every timed add embeds a real chat line with MiniLM and")
    print("every timed query embeds a real question ('search only' reuses embedded questions).")
    widths = (20, 21, 15, 15, 19)
    titles = (
        "add 1 (embed+index)",
        "add 32 (embed+index)",
        "query k=5",
        "search only",
        "query kinds+min_t",
    )
    header = f"  {'memories':>9} | " + " | ".join(
        f"{title:>{w}}" for title, w in zip(titles, widths, strict=True)
    )
    print(header)
    print("  " + "-" * (len(header) - 2))
    persistence: list[tuple[int, float, float]] = []
    for size in SIZES:
        memory = build_memory(embedder, size, lines)
        cells = bench_size(memory, lines, question_vectors)
        rendered = " | ".join(
            f"{f'{p50:.2f} / {p99:.2f}':>{w}}" for (p50, p99), w in zip(cells, widths, strict=True)
        )
        print(f"  {size:>9,} | {rendered}")
        persistence.append((len(memory), *bench_persistence(memory)))
    print("  ('add 32' is one add() call of 32 messages; kinds+min_t keeps ~1/12 of the rows)")
    print()

    print("Persistence (one run each; save = write_index + items.jsonl + sha256 + fsync)")
    print(f"  {'memories':>9} | {'save ms':>9} | {'load ms':>9}")
    for count, save_s, load_s in persistence:
        print(f"  {count:>9,} | {save_s * 1e3:>9.0f} | {load_s * 1e3:>9.0f}")
    print()

    overhead, extra = asyncio.run(bench_agent_overhead(embedder, lines))
    print(
        f"Agent overhead per decision at {int(extra['memories']):,} memories (SeatMind, real "
        "engine game), LLM excluded, 300 decisions of each kind"
    )
    print("  memory block (key moments, related lines via faiss, note, suspects, advice) + the")
    print("  whole request; 'ingest' embeds and indexes one new line (worker thread)")
    print(f"  {'':28} {'p50 ms':>8} {'p99 ms':>8} {'prompt tokens':>14}")
    worst = 0.0
    for name, (p50, p99) in overhead.items():
        tok = extra.get(f"tokens {name}")
        shown = f"{tok:>14.0f}" if tok is not None else f"{'':>14}"
        print(f"  {name:<28} {p50:>8.2f} {p99:>8.2f}{shown}")
        if name in ("scheduler", "generator", "vote"):
            worst = max(worst, p99)
    verdict = "PASS" if worst <= OVERHEAD_TARGET_MS else "FAIL"
    print(f"  target p99 <= {OVERHEAD_TARGET_MS:g} ms per decision: {verdict} ({worst:.2f} ms)")
    print(
        f"  event loop stalled while embedding 32 lines: inline "
        f"{extra['loop stall inline ms']:.0f} ms, in a worker thread "
        f"{extra['loop stall thread ms']:.1f} ms (median of 5)"
    )
    print()
    print(f"Total wall time {time.perf_counter() - wall:.1f} s")


if __name__ == "__main__":
    main()
