"""A seat's memory manager (SeatMind): what goes in, what comes back, what survives a restart.

Retrieval is checked with the real MiniLM embedder through the agent's own path (events from
the real engine -> observe -> flush -> retrieve); the hashing embedder only stands in where
meaning does not matter (sizes, bookkeeping).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from agent.knowledge import SeatKnowledge
from agent.memory import HashingEmbedder, MiniLMEmbedder
from agent.memory.cache import CachedEmbedder
from agent.memory.embeddings import FloatMatrix
from agent.memory.informative import InformativeIndex, Observation, claims_role, read_event
from agent.memory.seatmind import MindSettings, SeatMind, event_source_key
from agent.memory.store import INDEX_FILE
from games import GameConfig, GameState, apply, new_game
from games.actions import Action, Say, Tick, Vote
from games.events import Event, MessageAccepted, event_from_dict, event_to_dict, visible
from games.state import PhaseKind
from tests.agent.memory.chat_data import llmafia_chat_lines

T0 = datetime(2025, 2, 10, 20, 0, 0, tzinfo=UTC)
NAMES = ["Ari", "Blake", "Casey", "Drew", "Eden", "Finley", "Gray"]
DEAL = ("bystander", "mafia", "mafia", "detective", "doctor", "bystander", "bystander")
LONG_DAY = GameConfig(
    deal=DEAL,
    roles=("detective", "doctor"),
    day_seconds=3600,
    vote_seconds=60,
    night_seconds=60,
    night_vote_seconds=30,
)
CLAIM = "ok listen, i'm the detective. checked drew last night and drew is clean"
QUESTION = "who claimed to be the detective?"
REPO = Path(__file__).resolve().parents[2]


class Game:
    """A game on the real engine, driven line by line."""

    def __init__(self, config: GameConfig = LONG_DAY) -> None:
        self.t = T0
        self.state: GameState
        self.state, self.events = new_game(config, NAMES, 3, T0)

    def do(self, action: Action) -> list[Event]:
        self.state, events = apply(self.state, action)
        self.events.extend(events)
        return events

    def say(self, seat: int, text: str) -> None:
        self.t += timedelta(seconds=1)
        self.do(Say(seat, text, self.t))

    def end_phase(self) -> None:
        assert self.state.phase.deadline is not None
        self.t = self.state.phase.deadline
        self.do(Tick(self.t))


@pytest.fixture(scope="module")
def minilm() -> MiniLMEmbedder:
    embedder = MiniLMEmbedder()
    embedder.warm_up()
    return embedder


def chat_game(lines: Sequence[str], claim_at: int) -> Game:
    """A long day: the recorded lines said round the table, one detective claim among them."""
    g = Game()
    alive = [0, 1, 2, 3, 5, 6]
    for i, line in enumerate(lines):
        text = line.split(": ", 1)[-1]
        if i == claim_at:
            g.say(4, CLAIM)
        g.say(alive[i % len(alive)], text)
    return g


def feed(mind: SeatMind, events: Sequence[Event]) -> None:
    for event in events:
        mind.observe(event)


class Counting:
    """An embedder that counts the texts it embeds."""

    def __init__(self, inner: HashingEmbedder | MiniLMEmbedder) -> None:
        self.inner = inner
        self.texts = 0

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def name(self) -> str:
        return self.inner.name

    def embed(self, texts: Sequence[str]) -> FloatMatrix:
        self.texts += len(texts)
        return self.inner.embed(texts)


# --- retrieval with real embeddings --------------------------------------------------------------


async def test_the_claim_is_found_among_hundreds_of_lines(minilm: MiniLMEmbedder) -> None:
    lines = llmafia_chat_lines()[:400]
    g = chat_game(lines, claim_at=170)
    mind = SeatMind(0, minilm)
    feed(mind, g.events)
    assert await mind.flush() >= len(lines)
    hits = await mind.retrieve(QUESTION, 3)
    claim = f'Eden: "{CLAIM}"'  # a player's words are quoted (agent.prompting.speech)
    assert any(item.text == claim for item, _ in hits), [i.text for i, _ in hits]
    # it is also a key moment: ranked above the ordinary chat, in every prompt
    k = SeatKnowledge(0, "Ari")
    for e in g.events:
        k.observe(e)
    block = mind.render_block(k, "generator", window_start=g.t)
    assert CLAIM in block


async def test_memory_survives_a_restart_in_another_process(
    minilm: MiniLMEmbedder, tmp_path: Path
) -> None:
    lines = llmafia_chat_lines()[:300]
    g = chat_game(lines, claim_at=120)
    folder = tmp_path / "g1" / "0"
    mind = SeatMind(0, minilm, directory=folder)
    feed(mind, g.events)
    await mind.add_reflection(2, "day-1", "Eden says she is the detective and cleared Drew.", g.t)
    await mind.save()
    here = [(i.source_key, round(s, 4)) for i, s in await mind.retrieve(QUESTION, 5)]
    count = len(mind.memory)

    script = (
        "import asyncio, json, sys\n"
        "from agent.memory import MiniLMEmbedder\n"
        "from agent.memory.seatmind import SeatMind\n"
        "async def main():\n"
        "    mind = SeatMind(0, MiniLMEmbedder(), directory=sys.argv[1])\n"
        "    await mind.prepare()\n"
        "    hits = await mind.retrieve(sys.argv[2], 5)\n"
        "    print(json.dumps({'n': len(mind.memory), 'notes': len(mind.reflections),\n"
        "        'hits': [[i.source_key, round(s, 4)] for i, s in hits]}))\n"
        "asyncio.run(main())\n"
    )
    proc = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-c", script, str(folder), QUESTION],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    there = json.loads(proc.stdout.strip().splitlines()[-1])
    assert there["n"] == count and there["notes"] == 1
    assert [tuple(h) for h in there["hits"]] == here

    # the service replays every visible event after a restart: nothing is stored twice,
    # nothing is embedded again
    counting = Counting(minilm)
    again = SeatMind(0, counting, directory=folder)
    feed(again, g.events)
    assert await again.flush() == 0
    assert counting.texts == 0
    assert len(again.memory) == count
    assert again.latest_reflection is not None

    # a lost index is rebuilt from the saved items, with the same answers
    (folder / INDEX_FILE).unlink()
    rebuilt = SeatMind(0, minilm, directory=folder)
    feed(rebuilt, g.events)
    await rebuilt.flush()
    assert len(rebuilt.memory) == count
    assert [(i.source_key, round(s, 4)) for i, s in await rebuilt.retrieve(QUESTION, 5)] == here


# --- what a seat may hold ----------------------------------------------------------------------


def night_game() -> Game:
    g = Game(GameConfig(deal=DEAL, roles=("detective", "doctor")))
    g.say(0, "morning all, who do we think it is")
    g.say(5, "blake is weirdly quiet, sus")
    g.end_phase()  # vote
    for voter in (0, 1, 2, 3, 4, 6):
        g.t += timedelta(seconds=1)
        g.do(Vote(voter, 5, g.t))
    g.t += timedelta(seconds=1)
    g.do(Vote(5, 1, g.t))
    while g.state.phase.kind is not PhaseKind.NIGHT:
        g.end_phase()
    g.say(1, "kill ari tonight, she is onto us")
    g.say(2, "agreed, ari it is")
    return g


async def test_a_bystander_never_holds_what_it_was_not_shown() -> None:
    g = night_game()
    den = [e.text for e in g.events if isinstance(e, MessageAccepted) and e.place == "den"]
    assert den
    bystander = SeatMind(0, HashingEmbedder(64))
    mafia = SeatMind(1, HashingEmbedder(64))
    feed(bystander, g.events)  # everything, hidden events included: the mind must drop them
    feed(mafia, g.events)
    await bystander.flush()
    await mafia.flush()
    held = [item.text for item in bystander.memory]
    assert held and not any(d in t for d in den for t in held)
    assert not any("fellow mafia" in t.casefold() for t in held)
    assert all(any(d in t for t in (i.text for i in mafia.memory)) for d in den)
    # the vote is summarised as one key moment, who voted for whom
    summary = [o for o in bystander.informative.top(20) if o.text.startswith("Vote result")]
    assert summary and "Finley chosen" in summary[0].text and "-> Finley" in summary[0].text


async def test_prompt_material_is_bounded_and_flat_as_the_game_grows() -> None:
    sizes = {}
    for n in (100, 2000):
        g = Game()
        for i in range(n):
            g.say(i % 7 if i % 7 != 4 else 3, f"finley is sus, line {i} and blake is lying {i}")
        mind = SeatMind(0, HashingEmbedder(64), settings=MindSettings())
        feed(mind, g.events)
        k = SeatKnowledge(0, "Ari")
        for e in g.events:
            k.observe(e)
        await mind.add_reflection(k.phase_seq, "day-1", "x " * 400, g.t)
        start = k.window_entries(30, 2400)[0].t
        for kind in ("scheduler", "generator", "vote"):
            block = await mind.prompt_block(k, kind, start)
            sizes[(n, kind)] = len(block)
            assert len(block) <= 2200
    assert sizes[(2000, "scheduler")] < sizes[(2000, "generator")]
    for kind in ("scheduler", "generator", "vote"):
        assert abs(sizes[(2000, kind)] - sizes[(100, kind)]) <= 0.1 * sizes[(100, kind)]


# --- informative messages ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "role"),
    [
        ("i'm the detective, trust me", "detective"),
        ("Detective here. blake is mafia", "detective"),
        ("as the doctor i saved someone", "doctor"),
        ("im a bystander btw", "bystander"),
        ("i'm not the detective lol", None),
        ("the detective should speak up", None),
    ],
)
def test_role_claims(text: str, role: str | None) -> None:
    assert claims_role(text) == role


def read(text: str, speaker: int = 1, seat: int = 0) -> Observation | None:
    event = MessageAccepted(t=T0, seat=speaker, name=NAMES[speaker], text=text, phase_seq=1)
    return read_event(
        event, seat=seat, names=tuple(NAMES), phase="day-1", phase_seq=1, source_key="k"
    )


@pytest.mark.parametrize(
    ("text", "tag", "score"),
    [
        ("i'm the detective and casey is mafia", "result", 3.5),
        ("im the doctor fyi", "claim", 3.5),
        ("casey is sus", "accusation", 3.0),
        ("ari is sus", "accusation", 3.5),  # about the observing seat
        ("drew is clean i trust drew", "defence", 2.5),
        ("good morning everyone", "chat", 1.0),
    ],
)
def test_lines_are_scored_by_what_they_say(text: str, tag: str, score: float) -> None:
    obs = read(text)
    assert obs is not None
    assert (obs.tag, obs.importance) == (tag, score)
    assert obs.text == f'Blake: "{text}"'


def test_the_informative_index_keeps_the_top_and_filters() -> None:
    index = InformativeIndex(capacity=5)

    def add(i: int, importance: float, place: str = "stage") -> None:
        index.add(
            Observation(
                f"line {i}",
                T0 + timedelta(seconds=i),
                "day-1",
                1,
                "message",
                place,
                importance,
                "chat",
                f"k{i}",
            )
        )

    for i in range(20):
        add(i, 1.0)
    add(20, 3.0)
    add(21, 3.0, "den")
    add(20, 9.0)  # same key: ignored
    assert len(index) == 5
    top = index.top(3)
    assert [o.text for o in top] == ["line 19", "line 20", "line 21"]  # oldest first
    assert [o.text for o in index.top(3, den=False)] == ["line 18", "line 19", "line 20"]
    before = T0 + timedelta(seconds=19)
    assert [o.text for o in index.top(2, before=before)] == ["line 17", "line 18"]
    assert index.top(0) == []


def test_source_keys_are_stable_and_repeats_are_numbered() -> None:
    g = night_game()
    event = g.events[-1]
    assert event_source_key(event_from_dict(event_to_dict(event))) == event_source_key(event)
    mind = SeatMind(1, HashingEmbedder(32))
    first = mind.observe(event)
    second = mind.observe(event)
    assert first is not None and second is not None
    assert second.source_key == f"{first.source_key}#2"
    assert mind.observe(g.events[-1]) is not None
    hidden = [e for e in g.events if not visible(e, 0)]
    assert hidden and all(SeatMind(0, HashingEmbedder(32)).observe(e) is None for e in hidden)


def test_the_cache_returns_the_inner_vectors_and_embeds_each_text_once() -> None:
    inner = Counting(HashingEmbedder(64))
    cache = CachedEmbedder(inner, capacity=3)
    texts = ["a b", "c d", "a b", "e f"]
    out = cache.embed(texts)
    assert np.allclose(out, inner.inner.embed(texts))
    assert inner.texts == 3 and (cache.hits, cache.misses) == (1, 3)
    cache.embed(["c d", "g h"])  # "a b" was least recently used: evicted
    cache.embed(["a b"])
    assert inner.texts == 5
    assert cache.name == inner.name and cache.dim == 64
