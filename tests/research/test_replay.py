"""``mafiabot replay``: real recorded games replayed into the real service at a fast clock.

The human lines that reach the live game must be exactly the recording's, in its order, less
the skips the report counts; every recorded human line and vote is either played or counted
under a documented reason.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlmodel import Session, col, select

from bot.protection.dataset.llmafia_model import MANAGER, LLMafiaGame
from bot.settings import Settings
from bot.store.db import make_engine
from bot.store.models import Message
from games.state import PhaseKind
from research.llmafia import read_game
from research.paths import llmafia_games_dir
from research.replay import ReplayResult, render_table, run_replay
from research.replay_harness import ORDER, recorded_table
from research.replay_script import build_script, replay_config
from tests.bot.test_llm_agents import Table
from tests.fakes.llm_servers import FakeOpenAIServer

GAMES = llmafia_games_dir()
SPEED = 200.0
LINE_SKIPS = {
    "closed_chat", "unknown_speaker", "game_over", "phase_skipped", "phase_over",
    "speaker_dead", "refused",
}  # fmt: skip
VOTE_SKIPS = {
    "untimed", "stale", "game_over", "phase_skipped", "phase_over", "voter_dead",
    "target_dead", "refused",
}  # fmt: skip
MEASURES = (
    "messages_per_player_per_day_phase",
    "words_per_message",
    "repeated_messages",
    "unique_words",
    "since_previous_message",
    "since_own_previous_message",
)

pytestmark = pytest.mark.skipif(
    not (GAMES / "0001" / "config.json").is_file(), reason="LLMafia data not present"
)


def game(gid: str) -> LLMafiaGame:
    return read_game(GAMES / gid)


def human_lines(g: LLMafiaGame) -> list[int]:
    llm = set(g.llm_players)
    return [
        i
        for i, x in enumerate(g.lines)
        if x.speaker != MANAGER and x.place != "manager" and x.speaker not in llm
    ]


@pytest.fixture
def no_llm_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("MAFIABOT_LLM", "MAFIABOT_SCHEDULER_LLM", "MAFIABOT_LLM_BACKUP"):
        monkeypatch.delenv(name, raising=False)
    yield


# --- the script, without a live game -----------------------------------------------------------


@pytest.mark.parametrize("gid", ["0001", "0006", "0014"])
def test_script_keeps_every_human_line_in_recorded_order_or_says_why(gid: str) -> None:
    g = game(gid)
    table = recorded_table(g)
    script = build_script(g, table.agent_name)
    lines = [c for c in script.cues if c.action == "say"]
    refs = [c.ref for c in lines]
    assert refs == sorted(refs)  # the recording's order
    assert len(lines) + sum(script.unscripted_lines.values()) == len(human_lines(g))
    assert script.recorded_lines["human"] == len(human_lines(g))
    assert all(g.lines[c.ref].text == c.text for c in lines)
    assert table.agent_name not in {c.speaker for c in script.cues}
    votes = [c for c in script.cues if c.action == "vote"]
    assert all(c.kind in (PhaseKind.VOTE, PhaseKind.NIGHT_VOTE) for c in votes)
    assert len(votes) + sum(script.unscripted_votes.values()) == script.recorded_votes["human"]
    # cues are in playing order: live phase, then offset within it
    keys = [(c.number, ORDER[c.kind] // 2) for c in script.cues]
    assert keys == sorted(keys)


def test_script_skips_lines_of_a_closed_chat_and_untimed_votes() -> None:
    g = game("0006")  # one vote-file entry was never announced
    assert build_script(g, recorded_table(g).agent_name).unscripted_votes["untimed"] == 1
    g = game("0014")  # two day-chat lines stamped in a night; a restarted host's repeats
    script = build_script(g, recorded_table(g).agent_name)
    assert script.unscripted_lines["closed_chat"] == 2
    assert script.unscripted_votes["stale"] == 12


def test_rules_follow_the_recording() -> None:
    g = game("0013")
    config = replay_config(g, recorded_table(g).deal)
    assert config.day_seconds == 120 and config.night_seconds == 45
    assert config.deal == tuple("mafia" if p.is_mafia else "bystander" for p in g.players)
    # day-1's vote took 3:16 in the recording: the live vote may take that long, plus a margin
    assert config.vote_seconds == pytest.approx(196 + 20)
    assert config.tie_rule == "random" and config.night_tie_rule == "random"
    config.validate(len(g.players))


# --- live replays --------------------------------------------------------------------------------


def check_replay(result: ReplayResult, db_url: str) -> None:
    g, table = result.game, result.table
    played = [r.cue for r in result.results if r.cue.action == "say" and r.outcome == "played"]
    # every recorded human line: played, or skipped for a documented reason
    j = result.to_json()
    json.dumps(j)
    assert j["db"] == db_url and j["live_game_id"] == result.live_game_id
    lines, votes = j["lines"], j["votes"]
    assert lines["recorded"] == len(human_lines(g))
    assert lines["replayed"] == len(played) > 0
    assert lines["replayed"] + sum(lines["skipped"].values()) == lines["recorded"]
    assert set(lines["skipped"]) <= LINE_SKIPS
    assert votes["replayed"] + sum(votes["skipped"].values()) == votes["recorded"]
    assert set(votes["skipped"]) <= VOTE_SKIPS
    assert votes["replayed"] > 0
    # what the live game holds from human seats is exactly the played cues, in recorded order
    engine = make_engine(db_url)
    try:
        with Session(engine) as s:
            rows = s.exec(
                select(Message)
                .where(Message.game_id == result.live_game_id)
                .order_by(col(Message.t), col(Message.id))
            ).all()
    finally:
        engine.dispose()
    human = [(m.speaker, m.text) for m in rows if m.seat_index not in (None, table.agent_seat)]
    assert human == [(c.speaker, c.text.strip()) for c in played]
    assert [c.ref for c in played] == sorted(c.ref for c in played)
    assert all(g.lines[c.ref].speaker == c.speaker for c in played)
    # the agent's seat took part, and the measures are there for both sides, live and recorded
    agent_rows = [m for m in rows if m.seat_index == table.agent_seat]
    assert agent_rows and all(m.speaker == table.agent_name for m in agent_rows)
    m = j["measures"]
    assert m["messages"] == {"human": len(played), "agent": len(agent_rows)}
    for key in MEASURES:
        assert set(m[key]) == {"human", "agent"}
        assert set(j["recorded_measures"][key]) == {"human", "agent"}
    assert m["words_per_message"]["agent"]["mean"] > 0
    assert m["since_own_previous_message"]["agent"]["per_message"]["n"] == len(agent_rows)
    assert j["recorded_measures"]["messages"]["human"] == len(human_lines(g))
    assert j["winner"]["recorded"] == g.winner
    assert [e["name"] for e in j["eliminations"]["recorded"]] == [e.name for e in g.eliminations]
    assert j["eliminations"]["live"], "nobody went out in the live game"
    table_text = render_table(result)
    assert "our agent" in table_text and "words / message" in table_text
    # the recordings' games have no night action but the mafia's kill vote: none counted
    assert j["night_actions"] == {"total": 0, "by_role": {}}
    assert "night actions" not in table_text
    seen = {"verb": "investigate", "actions": 2, "agent": 1, "human": 1, "with_result": 2}
    with_night = dataclasses.replace(
        result, night_actions={"total": 2, "by_role": {"detective": {**seen, "games": 1}}}
    )
    assert "night actions, live: 2 detective (investigate)" in render_table(with_night)


async def test_baseline_replay_of_a_real_game(no_llm_env: None, tmp_path: Path) -> None:
    """``--agent llm`` without a model: the baseline plays, and says so."""
    db = f"sqlite:///{tmp_path / 'replay.db'}"
    notices: list[str] = []
    result = await run_replay(
        Settings(llm=""), GAMES / "0011", speed=SPEED, agent="llm", db_url=db, seed=3,
        notice=notices.append,
    )  # fmt: skip
    assert result.agent_kind == "baseline"
    assert any("baseline" in n for n in notices)
    assert result.to_json()["agent"] == {
        "name": "Harper", "role": "bystander", "kind": "baseline", "model": None,
    }  # fmt: skip
    check_replay(result, db)


async def test_llm_replay_against_a_fake_openai_server(
    no_llm_env: None,
    fake_openai: FakeOpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    fake_openai.responder = Table(seed=7)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    db = f"sqlite:///{tmp_path / 'replay.db'}"
    result = await run_replay(
        Settings(llm="openai:gpt-4o-mini"), GAMES / "0010", speed=SPEED, agent="llm",
        db_url=db, seed=5,
    )  # fmt: skip
    assert result.agent_kind == "llm" and result.model == "openai:gpt-4o-mini"
    check_replay(result, db)
    summary = result.agent_llm
    assert summary is not None and summary["calls"] > 0
    assert summary["calls_by_kind"].get("scheduler", 0) > 0
    # every when-to-speak request the server saw is a logged call (retries share a record)
    sched = [r for r in fake_openai.requests if "<send> or <wait>" in json.dumps(r.json)]
    # (a baseline decision made in the model's place is logged too, but sent nowhere)
    sent = summary["calls_by_kind"]["scheduler"] - summary["fallbacks_by_kind"].get("scheduler", 0)
    assert sent == len(sched)
    fallbacks = sum(summary["fallbacks_by_kind"].values())
    assert summary["calls"] - fallbacks <= len(fake_openai.requests)
    assert "agent LLM:" in render_table(result)


async def test_a_folder_without_a_game_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no LLMafia game"):
        await run_replay(Settings(llm=""), tmp_path)
