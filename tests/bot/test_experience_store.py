"""The LLM agent's memory and learning, through the real GameService (SQLite), the real SDK
clients against the loopback fake LLM server, and the real MiniLM embedder.

Whole games check what the unit tests cannot: a bystander seat's memory never holds a den line
(its saved items are read back from disk), a game resumed after a crash replays its events into
the agents without duplicating a memory, and a second game on the same database shows, in the
prompts the fake server received, advice drawn from the first game's experiences and a
strategy note that the first game wrote (and that the second game rewrites). The consent rules
of the pool and the withdrawal hooks are checked on hand-made rows.
"""

from __future__ import annotations

import asyncio
import random
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from agent.decisions import InMemoryDecisionLog
from agent.experience import ExperienceStep, GameDebrief, named_players
from agent.llm.anthropic_backend import AnthropicClient
from agent.llm.retry import RetryPolicy
from agent.llm_player import LLMPlayerSettings
from agent.memory import HashingEmbedder, MiniLMEmbedder, read_items
from agent.memory.cache import CachedEmbedder
from agent.memory.seatmind import MindSettings
from bot.protection.privacy import withdraw
from bot.seats.experience_store import (
    ExperienceStore,
    experiences_for_game,
    latest_strategy_note,
    may_feed_pool,
    record_experiences,
    save_strategy_note,
    scope_key,
    strategy_history,
)
from bot.seats.llm_agents import AgentLearning, LLMAgentConfig, LLMClients, llm_player_factory
from bot.service.port import GameService
from bot.store import models as m
from bot.store.db import session_scope
from games.config import GameConfig
from games.events import Event, PhaseStarted
from games.names import CHARACTER_NAMES
from tests.bot.waiting import Watch
from tests.fakes.llm_servers import FakeAnthropicServer, content_text, last_user_text

JSON = dict[str, Any]
NAMES = ["Ari", "Blake", "Casey", "Drew", "Eden", "Finley", "Gray"]
DEAL = ("bystander", "mafia", "mafia", "detective", "doctor", "bystander", "bystander")
MAFIA = {"Blake", "Casey"}
CONFIG = GameConfig(
    deal=DEAL,
    roles=("detective", "doctor"),
    day_seconds=30,
    vote_seconds=12,
    night_seconds=50,  # 2 s of wall time: the mafia talk even on a loaded box
    night_vote_seconds=10,
)
#: slower than the other whole-game tests: a seat reflects (three calls, embeddings, a save)
#: at the start of each phase, and the den must still have time to talk at night
SPEED = 25.0
PLAYER = LLMPlayerSettings(
    people_lengths=False,  # phases of a few game seconds: tests/agent/test_shape.py has these
    human_timing=False,
    seconds_per_word=0.4,
    max_typing_s=4.0,
    debounce_s=(0.8, 1.5),
    max_debounce_s=3.0,
    min_consult_gap_s=3.0,
    quiet_s=8.0,
    open_delay_s=(0.5, 2.0),
)
FAST = RetryPolicy(
    max_attempts=2, timeout_s=2.0, base_delay_s=0.01, max_delay_s=0.02, max_retry_after_s=0.2
)
WORDS = [
    *("hmm", "ok", "so", "honestly", "wait", "look", "blake", "casey", "drew", "eden"),
    *("finley", "gray", "ari", "quiet", "loud", "vote", "sus", "weird", "fine", "maybe"),
    *("never", "always", "today", "tonight", "really", "though", "clearly", "nobody"),
]
ADVICE = "You should vote early with the table and keep asking the quietest player direct questions"
T0 = datetime(2025, 5, 1, 20, 0, tzinfo=UTC)


# --- a scripted model that also reflects -------------------------------------------------------


def system_of(req: JSON) -> str:
    return content_text(req["system"]) if "system" in req else ""


KINDS = (
    ("decide WHEN to talk", "scheduler"),
    ("write your next chat message", "generator"),
    ("cast a vote", "vote"),
    ("choose tonight's target", "night_action"),
    ("choose the questions to think over", "questions"),
    ("think before you act", "answers"),
    ("rate the other players", "suspicion"),
    ("learn from earlier games", "suggestion"),
    ("draw lessons", "lessons"),
    ("rewrite your strategy note", "strategy"),
)


def kind_of(req: JSON) -> str:
    # the task's text is in the system part or (after the cacheable part) the user message
    system = system_of(req) + "\n".join(
        content_text(m.get("content")) for m in req.get("messages") or []
    )
    for phrase, kind in KINDS:
        if phrase in system:
            return kind
    raise AssertionError(f"unknown prompt: {system[-200:]}")


def options_of(req: JSON) -> list[str]:
    found = re.search(r"(?:Choose one of|and nothing else): (.+)", last_user_text(req))
    return [n.strip() for n in found.group(1).split(",")] if found else []


@dataclass
class Mind:
    """Talks a little, reflects in the asked format, rates players as JSON, learns."""

    seed: int = 1
    rewrites: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)
    rng: random.Random = field(default_factory=random.Random)

    def __post_init__(self) -> None:
        self.rng.seed(self.seed)

    def __call__(self, req: JSON) -> str:
        kind = kind_of(req)
        self.by_kind[kind] = self.by_kind.get(kind, 0) + 1
        user = last_user_text(req)
        if kind == "scheduler":
            return "<send>" if "mafia talk" in user or self.rng.random() < 0.4 else "<wait>"
        if kind == "generator":
            return " ".join(self.rng.sample(WORDS, 5)) + f" line{self.by_kind[kind]}"
        if kind in ("vote", "night_action"):
            options = options_of(req)
            if kind == "vote" and "tonight's victim" not in user:
                return next(
                    (n for n in ("Finley", "Gray", "Ari", "Drew") if n in options), options[0]
                )
            return options[0]
        if kind == "questions":
            return "PICK: 1, 3, 8\nASK: Who is steering the votes today?"
        if kind == "answers":
            return (
                "1. It is a discussion phase and I can talk and vote.\n"
                "2. Nobody has made a believable role claim yet.\n"
                "3. The loud ones keep accusing the quiet ones.\n"
                "4. Whoever pushes the vote hardest.\n"
                "NOTE: The loudest accusers may be hiding something and the quiet players are "
                "being blamed; I will ask direct questions and vote carefully."
            )
        if kind == "suspicion":
            players = re.search(r"Players to rate: (.+)", user)
            assert players is not None
            names = re.split(r", | and ", players.group(1).strip())
            return (
                "{"
                + ", ".join(
                    f'"{n}": {{"score": {0.2 + 0.1 * i:.1f}, "why": "voted oddly"}}'
                    for i, n in enumerate(names)
                )
                + "}"
            )
        if kind == "suggestion":
            return ADVICE
        if kind == "lessons":
            return (
                "- When Blake claims a role early, test the claim before trusting it.\n"
                "- Vote early when the table agrees, so the mafia cannot split it.\n"
                "- Ask the quietest players direct questions."
            )
        self.rewrites += 1
        return (
            "Test early role claims before trusting them, vote early with the table and ask "
            "the quiet ones direct questions, and do not follow Casey blindly. "
            f"Revision {self.seed}.{self.rewrites}."
        )


# --- playing -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm() -> CachedEmbedder:
    embedder = MiniLMEmbedder()
    embedder.warm_up()
    return CachedEmbedder(embedder)


def clients(server: FakeAnthropicServer) -> LLMClients:
    client = AnthropicClient(
        "claude-haiku-4-5", api_key="test", base_url=server.base_url, policy=FAST
    )
    return LLMClients(client, client)


@dataclass
class Run:
    service: GameService
    game_id: str
    history: list[JSON]
    log: InMemoryDecisionLog

    def den_texts(self) -> list[str]:
        return [e["text"] for e in self.history if e["kind"] == "message" and e["place"] == "den"]


async def play(
    engine: Engine,
    scheduler: Any,
    learning: AgentLearning,
    server: FakeAnthropicServer,
    *,
    seed: int = 11,
    stop_at: Callable[[Event], bool] | None = None,
    limit_s: float = 40.0,
) -> Run:
    log = InMemoryDecisionLog()
    factory = llm_player_factory(
        LLMAgentConfig(llm="anthropic:x", player=PLAYER),
        log,
        clients=clients(server),
        learning=learning,
    )
    service = GameService(engine, scheduler, factory)
    watch = Watch()
    service.subscribe(watch)
    game_id = await service.create_game(CONFIG, seed=seed, speed=SPEED)
    for name in NAMES:
        await service.join(game_id, None, is_agent=True, name=name)
    await service.start(game_id)
    try:
        if stop_at is None:
            await asyncio.wait_for(service.wait_finished(game_id), limit_s)
            await service.drain(game_id)
            await factory.wait_learning()
        else:
            try:  # every committed event is seen: a short phase cannot slip between looks
                await watch.until(lambda: any(map(stop_at, watch.events)), limit_s)
            except TimeoutError:
                raise AssertionError("the game never got there") from None
        history = await service.history(game_id)
    finally:
        await service.close()
        await factory.aclose()
    return Run(service, game_id, history, log)


def seat_dirs(root: Path, game_id: str) -> dict[int, Path]:
    return {int(p.name): p for p in (root / game_id).iterdir() if p.is_dir()}


def requests_of(server: FakeAnthropicServer, kind: str) -> list[JSON]:
    return [r.json for r in server.requests if r.json is not None and kind_of(r.json) == kind]


@pytest.mark.slow
async def test_a_second_game_learns_from_the_first(
    engine: Engine, scheduler: Any, minilm: CachedEmbedder, tmp_path: Path
) -> None:
    root = tmp_path / "memory"
    store = ExperienceStore(engine, "server")
    learning = AgentLearning(minilm, root, store, MindSettings(keep_after_game=True))
    async with FakeAnthropicServer(Mind(seed=1)) as fake:
        first = await play(engine, scheduler, learning, fake)
        first_requests = list(fake.requests)

    # --- the first game: the seats reflected, rated and learnt ---
    assert first.history[-1]["kind"] == "game_over"
    kinds = {r.kind for r in first.log.records}
    assert {"reflection", "suspicion", "experience"} <= kinds
    # (answered: a rating cut short for a vote or a consultation falls back to the heuristic)
    suspicion = [r for r in first.log.records if r.kind == "suspicion" and r.answered]
    assert suspicion and all(r.valid and not r.fallback for r in suspicion)
    assert all("voted oddly" in (r.decision or "") for r in suspicion)

    # den lines are in the mafia seats' memories and nowhere else
    den = first.den_texts()
    assert den, "the mafia talked at night"
    for seat, folder in seat_dirs(root, first.game_id).items():
        texts = [item.text for item in read_items(folder)]
        kinds_seen = {item.kind for item in read_items(folder)}
        assert "reflection" in kinds_seen
        holds_den = [t for t in texts if any(d in t for d in den)]
        if NAMES[seat] in MAFIA:
            assert holds_den
        else:
            assert holds_den == [], (seat, holds_den[:3])
    # ... and in no prompt a bystander seat sent, memory blocks included
    for rec in first_requests:
        assert rec.json is not None
        prompt = system_of(rec.json) + last_user_text(rec.json)
        if "Your role: mafia" not in prompt and "Your role:" in prompt:
            assert not any(text in prompt for text in den)

    # experiences: one row per reflected phase per seat, scored by the paper's rule
    rows = experiences_for_game(engine, first.game_id)
    assert rows and {r.seat_index for r in rows} == set(range(7))
    with Session(engine) as s:
        game = s.get_one(m.Game, first.game_id)
        winner = game.winner
    days = rows[0].days
    for row in rows:
        won = row.team == winner
        assert row.won is won
        assert row.score == (1000 - days if won else days)
        assert len(row.vector) == 4 * row.dim == 4 * minilm.dim
    server_id = game.server_id
    scope = scope_key("server", server_id)
    first_notes = {role: latest_strategy_note(engine, scope, role) for role in set(DEAL)}
    assert all(note is not None for note in first_notes.values())
    for note in first_notes.values():
        assert note is not None
        assert named_players(note.note, NAMES) == []
        assert not any(re.search(rf"\b{n}\b", note.note) for n in CHARACTER_NAMES)
        assert all(named_players(lesson, NAMES) == [] for lesson in note.lessons)
        assert "a player" in note.note  # "Casey" was stripped

    # --- the second game on the same database ---
    async with FakeAnthropicServer(Mind(seed=2)) as fake:
        second = await play(engine, scheduler, learning, fake, seed=12)
        advised = [
            r.json
            for r in fake.requests
            if r.json is not None
            and kind_of(r.json) in ("generator", "vote", "night_action")
            and f"Advice from your past games: {ADVICE}" in last_user_text(r.json)
        ]
        noted = [
            r.json
            for r in fake.requests
            if r.json is not None
            and "Notes to yourself from earlier games as the" in system_of(r.json)
        ]
        suggestions = requests_of(fake, "suggestion")
        # the note is part of the static prefix: byte-identical across a seat's calls of a kind
        systems: dict[tuple[str, str], set[str]] = {}
        for rec in fake.requests:
            assert rec.json is not None
            who = re.search(r"^You are (\w+), one of these players", system_of(rec.json), re.M)
            if who is not None:
                systems.setdefault((who.group(1), kind_of(rec.json)), set()).add(
                    system_of(rec.json)
                )
        assert systems and all(len(s) == 1 for s in systems.values())
    assert second.history[-1]["kind"] == "game_over"
    assert suggestions, "the pool had similar, differently scored experiences to contrast"
    bad_example = last_user_text(suggestions[0])
    assert "The bad example:" in bad_example and "their side" in bad_example
    assert advised, "the suggestion reached the prompts"
    assert noted
    for role, before in first_notes.items():
        history = strategy_history(engine, scope, role)
        assert history[-1].version > before.version  # type: ignore[union-attr]
        assert history[-1].note != before.note  # type: ignore[union-attr]
        assert history[-1].game_id == second.game_id


@pytest.mark.slow
async def test_a_resumed_game_does_not_duplicate_memories(
    engine: Engine, scheduler: Any, minilm: CachedEmbedder, tmp_path: Path
) -> None:
    root = tmp_path / "memory"
    learning = AgentLearning(minilm, root, None, MindSettings(keep_after_game=True))

    def at_first_night_vote(event: Event) -> bool:
        return isinstance(event, PhaseStarted) and event.phase == "night_vote"

    async with FakeAnthropicServer(Mind(seed=3)) as fake:
        run = await play(engine, scheduler, learning, fake, stop_at=at_first_night_vote)
        before = {seat: read_items(d) for seat, d in seat_dirs(root, run.game_id).items()}
        assert all(before.values())
        # seat 5 lost its memory folder: it must be rebuilt from the replayed events
        lost = seat_dirs(root, run.game_id)[5]
        for path in lost.iterdir():
            path.unlink()

        log = InMemoryDecisionLog()
        factory = llm_player_factory(
            LLMAgentConfig(llm="anthropic:x", player=PLAYER),
            log,
            clients=clients(fake),
            learning=learning,
        )
        service = GameService(engine, scheduler, factory)
        try:
            await service.resume(run.game_id)
            await service.drain(run.game_id)
            minds = {seat: factory.minds[(run.game_id, seat)] for seat in range(7)}
            for mind in minds.values():
                await mind.flush()
            after = {seat: list(mind.memory) for seat, mind in minds.items()}
        finally:
            await service.close()
            await factory.aclose()

    for seat, items in after.items():
        keys = [i.source_key for i in items]
        assert len(keys) == len(set(keys)), f"seat {seat} holds a memory twice"
        pairs = [(i.text, i.t) for i in items if i.kind != "reflection"]
        assert len(pairs) == len(set(pairs))
        old = {i.source_key for i in before[seat]}
        if seat == 5:
            old = {i.source_key for i in before[seat] if i.kind != "reflection"}
        assert old <= set(keys), f"seat {seat} lost memories in the restart"


# --- the pool's rules on hand-made rows ----------------------------------------------------------


def add_game(
    engine: Engine,
    game_id: str,
    *,
    platform: str = "local",
    server: str = "local",
    humans: dict[int, str] | None = None,
    status: str = "finished",
    logging_enabled: bool = True,
) -> int:
    humans = humans or {}
    with session_scope(engine) as s:
        row = s.exec(
            select(m.Server).where(m.Server.platform == platform, m.Server.external_id == server)
        ).first()
        if row is None:
            row = m.Server(platform=platform, external_id=server, logging_enabled=logging_enabled)
            s.add(row)
            s.flush()
        assert row.id is not None
        s.add(
            m.Game(
                id=game_id,
                server_id=row.id,
                status=status,
                seed=1,
                winner="mafia" if status == "finished" else None,
                started_at=T0,
                ended_at=T0 + timedelta(minutes=20) if status == "finished" else None,
            )
        )
        s.flush()
        for i, name in enumerate(NAMES[:4]):
            s.add(
                m.Seat(
                    game_id=game_id,
                    index=i,
                    character_name=name,
                    user_id=humans.get(i),
                    is_agent=i not in humans,
                    role=DEAL[i],
                )
            )
        return row.id


def debrief(game_id: str, seat: int = 0, *, score_won: bool = True) -> GameDebrief:
    embedder = HashingEmbedder(64)
    steps = (
        ExperienceStep(3, "day-1", "Blake is pushing hard on the quiet ones", "said: why blake"),
        ExperienceStep(4, "vote-1", "I trust Drew after the vote", "voted for Blake"),
    )
    return GameDebrief(
        game_id=game_id,
        seat=seat,
        role="bystander",
        team="bystanders",
        won=score_won,
        days=3,
        steps=steps,
        vectors=embedder.embed([s.reflection for s in steps]),
        embedder=embedder.name,
    )


def feeds(engine: Engine, game_id: str) -> bool:
    with Session(engine) as s:
        return may_feed_pool(s, game_id)


def test_only_consented_finished_games_feed_the_pool(engine: Engine) -> None:
    add_game(engine, "sim")  # agents only, on the operator's machine
    assert feeds(engine, "sim")
    add_game(engine, "live", status="running")
    assert not feeds(engine, "live")
    add_game(engine, "dc1", platform="discord", server="guild", humans={1: "u1"})
    assert not feeds(engine, "dc1")  # u1 never agreed
    with session_scope(engine) as s:
        s.add(
            m.Consent(
                platform="discord",
                server_external_id="guild",
                user_id="u1",
                version="1",
                agreed=True,
                research=True,
                t=T0,
            )
        )
    assert feeds(engine, "dc1")
    add_game(engine, "quiet", platform="discord", server="nolog", logging_enabled=False)
    assert not feeds(engine, "quiet")  # logging off: agents only, still nothing learnt
    assert record_experiences(engine, debrief("quiet"), None) == 0
    assert save_strategy_note(engine, "global", "bystander", "note", [], "quiet") is None

    assert record_experiences(engine, debrief("dc1"), None) == 2
    assert record_experiences(engine, debrief("dc1"), None) == 0  # idempotent
    withdraw(engine, "discord", "guild", "u1")
    assert not feeds(engine, "dc1")
    assert experiences_for_game(engine, "dc1") == []  # the withdrawal hook
    assert record_experiences(engine, debrief("dc1"), None) == 0


def test_withdrawal_removes_the_games_memories_on_disk(engine: Engine, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    AgentLearning(HashingEmbedder(32), root)  # registers the root
    add_game(engine, "dc2", platform="discord", server="g2", humans={2: "u2"})
    (root / "dc2" / "0").mkdir(parents=True)
    (root / "dc2" / "0" / "items.jsonl").write_text("{}\n")
    (root / "other" / "0").mkdir(parents=True)
    withdraw(engine, "discord", "g2", "u2")
    assert not (root / "dc2").exists()
    assert (root / "other" / "0").exists()


async def test_pool_scope_threshold_and_notes(engine: Engine) -> None:
    a = add_game(engine, "a1", server="one")
    add_game(engine, "a2", server="one")
    b = add_game(engine, "b1", server="two")
    assert record_experiences(engine, debrief("a1", 0, score_won=True), a) == 2
    assert record_experiences(engine, debrief("a2", 1, score_won=False), a) == 2
    assert record_experiences(engine, debrief("b1", 2, score_won=False), b) == 2
    query = HashingEmbedder(64).embed(["Blake is pushing hard on the quiet ones"])[0]
    name = HashingEmbedder(64).name

    local = ExperienceStore(engine, "server").for_game("a9", a)
    found = await local.similar(None, query, name, 0.5, 50)
    assert {e.score for e in found} == {997.0, 3.0}  # server one only: a1 won, a2 lost
    assert all(e.reflection.startswith("Blake") for e in found)  # the threshold drops the rest
    assert found == sorted(found, key=lambda e: -e.similarity)
    everyone = ExperienceStore(engine, "global").for_game("a9", a)
    assert len(await everyone.similar(None, query, name, 0.5, 50)) == 3
    assert await everyone.similar(None, query, "another-embedder", 0.5, 50) == []
    assert await everyone.similar("mafia", query, name, 0.5, 50) == []

    pool = ExperienceStore(engine, "server").for_game("a1", a)
    assert await pool.strategy_note("bystander") is None

    async def first(current: str | None) -> str | None:
        assert current is None
        return "Ask quiet players direct questions."

    async def second(current: str | None) -> str | None:
        return f"{current} Vote early."

    assert await pool.update_strategy("bystander", first, ["ask"]) == (
        "Ask quiet players direct questions."
    )
    assert await pool.update_strategy("bystander", second, ["vote"]) == (
        "Ask quiet players direct questions. Vote early."
    )
    history = strategy_history(engine, scope_key("server", a), "bystander")
    assert [h.version for h in history] == [1, 2] and history[1].lessons == ["vote"]
    other = ExperienceStore(engine, "server").for_game("b1", b)
    assert await other.strategy_note("bystander") is None  # another server's note
    assert np.isclose(np.linalg.norm(query), 1.0)
