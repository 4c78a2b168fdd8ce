"""SeatMemory: retrieval over real Mafia chat with real MiniLM vectors, filters, persistence."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from agent.memory import (
    EmbedderMismatchError,
    HashingEmbedder,
    MemoryItem,
    MiniLMEmbedder,
    SeatMemory,
    StaleIndexError,
    read_items,
)
from tests.agent.memory.chat_data import T0, chat_items, llmafia_chat_lines

CLAIM = "Rowan: I'm the detective, I checked Kai last night and he's clean"
N_CHAT = 400


@pytest.fixture(scope="module")
def chat_memory(minilm: MiniLMEmbedder) -> SeatMemory:
    """Several hundred real LLMafia day-chat lines with one detective claim hidden inside."""
    lines = llmafia_chat_lines()
    assert len(lines) >= N_CHAT
    sample = random.Random(20250301).sample(lines, N_CHAT)
    sample.insert(237, CLAIM)
    memory = SeatMemory(minilm)
    added = memory.add(chat_items(sample))
    assert len(added) == len(memory) == N_CHAT + 1
    return memory


def _item(i: int, text: str, kind: str = "message", **kw: object) -> MemoryItem:
    return MemoryItem(
        id=i,
        text=text,
        t=kw.pop("t", T0 + timedelta(minutes=i)),  # type: ignore[arg-type]
        phase=str(kw.pop("phase", "day-1")),
        kind=kind,
        importance=float(kw.pop("importance", 1.0)),  # type: ignore[arg-type]
        source_key=kw.pop("source_key", f"src:{i}"),  # type: ignore[arg-type]
    )


# ------------------------------------------------------------------- retrieval


@pytest.mark.parametrize(
    "question",
    [
        "who claimed to be the detective?",
        "Did anyone reveal their role as detective?",
        "Who is the detective?",
    ],
)
def test_detective_claim_is_retrieved_in_top_3(chat_memory: SeatMemory, question: str) -> None:
    hits = chat_memory.query(question, k=3)
    assert len(hits) == 3
    assert CLAIM in [item.text for item, _ in hits], [item.text for item, _ in hits]
    scores = [score for _, score in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(-1.0 <= s <= 1.0001 for s in scores)


def test_unrelated_question_does_not_rank_the_claim_first(chat_memory: SeatMemory) -> None:
    top = chat_memory.query("who wants to share a pancake recipe?", k=1)
    assert top[0][0].text != CLAIM


def test_query_edge_cases(chat_memory: SeatMemory, minilm: MiniLMEmbedder) -> None:
    assert chat_memory.query("anything", k=0) == []
    assert chat_memory.query("anything", k=3, kinds=set()) == []
    assert SeatMemory(minilm).query("anything", k=5) == []
    assert len(chat_memory.query("anything", k=10_000)) == len(chat_memory)
    with pytest.raises(TypeError):
        chat_memory.query("anything", k=3, kinds="message")


# ------------------------------------------------------------------- filters


def test_kinds_filter_returns_k_results_even_when_rare(minilm: MiniLMEmbedder) -> None:
    memory = SeatMemory(minilm)
    memory.add(chat_items(llmafia_chat_lines()[:200]))
    memory.add(
        [
            _item(900, "Kai: I will vote to eliminate Rowan today"),
            _item(901, "Sam: everyone vote Rowan out, trust me"),
            _item(902, "Jo: why is everybody voting against Rowan?"),
        ]
    )
    votes = [
        _item(1000 + i, f"{voter} voted to eliminate {target}", kind="vote")
        for i, (voter, target) in enumerate(
            [("Kai", "Rowan"), ("Sam", "Rowan"), ("Jo", "Sam"), ("Lee", "Jo")]
        )
    ]
    memory.add([*votes, _item(2000, "I am the town doctor", kind="role")])
    question = "who voted against Rowan?"

    unfiltered = memory.query(question, k=3)
    assert any(item.kind == "message" for item, _ in unfiltered)  # the filter has work to do
    hits = memory.query(question, k=3, kinds={"vote"})
    assert len(hits) == 3
    assert {item.kind for item, _ in hits} == {"vote"}
    assert {item.text for item, _ in hits[:2]} == {
        "Kai voted to eliminate Rowan",
        "Sam voted to eliminate Rowan",
    }
    # Asking for more than exist returns all of that kind, not padding from others.
    assert len(memory.query(question, k=10, kinds={"vote"})) == 4
    both = memory.query("what is my role?", k=5, kinds={"vote", "role"})
    assert both[0][0].kind == "role"
    assert len(both) == 5
    assert {item.kind for item, _ in both} == {"vote", "role"}
    assert memory.query(question, k=3, kinds={"reflection"}) == []


def test_min_t_filter_is_inclusive_and_combines_with_kinds() -> None:
    memory = SeatMemory(HashingEmbedder())
    memory.add(
        [
            _item(0, "Kai voted Rowan", kind="vote", t=T0),
            _item(1, "Kai voted Rowan again", kind="vote", t=T0 + timedelta(hours=1)),
            _item(2, "Kai voted Rowan message", kind="message", t=T0 + timedelta(hours=2)),
        ]
    )
    later = memory.query("Kai voted Rowan", k=5, min_t=T0 + timedelta(hours=1))
    assert sorted(item.id for item, _ in later) == [1, 2]
    both = memory.query("Kai voted Rowan", k=5, kinds={"vote"}, min_t=T0 + timedelta(hours=1))
    assert [item.id for item, _ in both] == [1]
    assert memory.query("Kai", k=5, min_t=T0 + timedelta(days=1)) == []
    with pytest.raises(ValueError, match="aware"):
        memory.query("Kai", k=5, min_t=datetime(2025, 1, 1))


# ------------------------------------------------------------------- idempotency


def test_readding_same_source_key_is_a_noop() -> None:
    memory = SeatMemory(HashingEmbedder())
    first = memory.add([_item(0, "Kai: hello", source_key="discord:123")])
    assert len(first) == 1
    again = memory.add(
        [
            _item(5, "Kai: hello (edited)", source_key="discord:123"),
            _item(6, "Sam: hi", source_key="discord:124"),
            _item(7, "Sam: hi", source_key="discord:124"),  # repeated within one batch
        ]
    )
    assert [item.id for item in again] == [6]
    assert len(memory) == 2
    assert memory.get(0) is not None and memory.get(0).text == "Kai: hello"  # type: ignore[union-attr]
    assert 5 not in memory and 7 not in memory
    assert memory.has_source("discord:123")
    repeat = memory.remember("dup", t=T0, phase="day-1", kind="message", source_key="discord:124")
    assert repeat is None
    assert len(memory) == 2


def test_identical_item_is_a_noop_but_id_clash_is_rejected_atomically() -> None:
    memory = SeatMemory(HashingEmbedder())
    item = _item(0, "Kai: hello", source_key=None)
    memory.add([item])
    assert memory.add([item]) == []
    with pytest.raises(ValueError, match="already used"):
        memory.add([_item(1, "fine"), _item(0, "another text", source_key=None)])
    assert len(memory) == 1 and 1 not in memory  # nothing from the bad batch was stored


def test_remember_allocates_fresh_ids() -> None:
    memory = SeatMemory(HashingEmbedder())
    memory.add([_item(41, "old")])
    a = memory.remember("I am the doctor", t=T0, phase="night-1", kind="role", importance=3.0)
    b = memory.remember("Kai seems nervous", t=T0, phase="day-2", kind="reflection")
    assert a is not None and b is not None
    assert (a.id, b.id) == (42, 43)
    assert memory.query("doctor", k=1, kinds={"role"})[0][0] == a


def test_memory_item_validation() -> None:
    with pytest.raises(ValueError, match="aware"):
        MemoryItem(id=0, text="x", t=datetime(2025, 1, 1), phase="day-1", kind="message")
    with pytest.raises(ValueError):
        MemoryItem(id=-1, text="x", t=T0, phase="day-1", kind="message")
    with pytest.raises(ValueError):
        MemoryItem(id=0, text="x", t=T0, phase="day-1", kind="message", importance=float("nan"))


def test_add_with_vectors_skips_repeats_with_their_rows() -> None:
    embedder = HashingEmbedder(dim=16)
    memory = SeatMemory(embedder)
    memory.add([_item(0, "a", source_key="k0")])
    items = [_item(1, "b", source_key="k0"), _item(2, "c", source_key="k2")]
    vectors = np.zeros((2, 16), dtype=np.float32)
    vectors[0, 0] = 1.0
    vectors[1, 5] = 3.0  # not normalised on purpose
    assert [item.id for item in memory.add_with_vectors(items, vectors)] == [2]
    probe = np.zeros(16, dtype=np.float32)
    probe[5] = 1.0
    (hit, score), *_ = memory.query_vector(probe, k=1)
    assert hit.id == 2 and score == pytest.approx(1.0, abs=1e-6)
    with pytest.raises(ValueError, match="shape"):
        memory.add_with_vectors(items, vectors[:1])


# ------------------------------------------------------------------- persistence


def test_save_then_load_gives_identical_results(
    chat_memory: SeatMemory, minilm: MiniLMEmbedder, tmp_path: Path
) -> None:
    chat_memory.save(tmp_path / "seat-3")
    assert sorted(p.name for p in (tmp_path / "seat-3").iterdir()) == [
        "index.faiss",
        "items.jsonl",
        "meta.json",
    ]
    loaded = SeatMemory.load(tmp_path / "seat-3", MiniLMEmbedder())
    assert len(loaded) == len(chat_memory)
    assert list(loaded) == list(chat_memory)
    for question in ["who claimed to be the detective?", "who should we vote for?", "hello"]:
        assert loaded.query(question, k=5) == chat_memory.query(question, k=5)
        assert loaded.query(question, k=3, min_t=T0 + timedelta(seconds=200)) == (
            chat_memory.query(question, k=3, min_t=T0 + timedelta(seconds=200))
        )
    # State that is not in the index survives too: idempotency keys and fresh ids.
    assert loaded.add(chat_items(["Kai: dup"], start_id=0)) == []
    assert loaded.next_id() == chat_memory.next_id()


def test_save_overwrites_without_leaving_temp_files(tmp_path: Path) -> None:
    memory = SeatMemory(HashingEmbedder())
    memory.add([_item(0, "one")])
    memory.save(tmp_path)
    memory.add([_item(1, "two")])
    memory.save(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["index.faiss", "items.jsonl", "meta.json"]
    assert [item.id for item in SeatMemory.load(tmp_path, HashingEmbedder())] == [0, 1]
    meta = json.loads((tmp_path / "meta.json").read_text())
    assert meta["embedder"] == HashingEmbedder().name and meta["dim"] == 256
    assert meta["count"] == 2


def test_load_rejects_another_embedder(tmp_path: Path) -> None:
    memory = SeatMemory(HashingEmbedder(dim=64))
    memory.add([_item(0, "Kai: hello")])
    memory.save(tmp_path)
    with pytest.raises(EmbedderMismatchError, match="hashing-not-semantic:64"):
        SeatMemory.load(tmp_path, HashingEmbedder(dim=128))


@pytest.mark.parametrize("damage", ["delete_index", "append_item", "delete_meta"])
def test_stale_index_is_detected_and_rebuilt_from_items(tmp_path: Path, damage: str) -> None:
    embedder = HashingEmbedder()
    memory = SeatMemory(embedder)
    memory.add([_item(i, f"message number {i} about Kai") for i in range(20)])
    memory.save(tmp_path)
    expected = memory.query("message 7 Kai", k=4)
    if damage == "delete_index":
        (tmp_path / "index.faiss").unlink()
    elif damage == "append_item":
        with open(tmp_path / "items.jsonl", "a", encoding="utf-8") as fh:
            fh.write(json.dumps(_item(99, "late message about Kai").to_record()) + "\n")
    else:
        (tmp_path / "meta.json").unlink()

    with pytest.raises(StaleIndexError):
        SeatMemory.load(tmp_path, embedder)
    rebuilt = SeatMemory.load_or_rebuild(tmp_path, embedder)
    assert len(rebuilt) == (21 if damage == "append_item" else 20)
    got = rebuilt.query("message 7 Kai", k=4)
    if damage != "append_item":
        assert got == expected
    else:
        assert rebuilt.get(99) is not None
    # The rebuilt index was saved again, so the next load needs no rebuild.
    assert len(SeatMemory.load(tmp_path, embedder)) == len(rebuilt)


def test_rebuild_replaces_contents_and_reembeds(tmp_path: Path) -> None:
    memory = SeatMemory(HashingEmbedder())
    memory.add([_item(0, "old stuff")])
    records = [_item(i, f"Kai said thing {i}") for i in range(3)]
    memory.rebuild(records)
    assert [item.id for item in memory] == [0, 1, 2]
    assert memory.query("Kai said thing 2", k=1)[0][0].id == 2
    memory.save(tmp_path)
    assert read_items(tmp_path) == records


def test_load_or_rebuild_on_empty_directory(tmp_path: Path) -> None:
    memory = SeatMemory.load_or_rebuild(tmp_path / "nothing", HashingEmbedder())
    assert len(memory) == 0
    with pytest.raises(FileNotFoundError):
        SeatMemory.load(tmp_path / "nothing", HashingEmbedder())
