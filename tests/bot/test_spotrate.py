"""Spot-the-AI rate (bot.players.spotrate): per server, per agent setup and overall, with the
Wilson interval and the chance level; in `mafiabot report` (table and plot) and, for
moderators, in chat on Discord and Slack (tests/bot/discord/test_moderation.py,
tests/bot/slack/test_commands.py)."""

from __future__ import annotations

import io
import json
from collections.abc import Set as AbstractSet
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from rich.console import Console
from sqlalchemy.engine import Engine
from sqlmodel import select

from bot.players.spotrate import server_chat_lines, spot_rates, wilson
from bot.store.db import make_engine, session_scope
from bot.store.migrate import upgrade
from bot.store.models import Game, LLMCall, Seat, Server, SurveyResponse
from research.commands import run_report
from research.report import build_report, render_markdown

T0 = datetime(2026, 3, 1, 18, 0, tzinfo=UTC)


def add_game(
    engine: Engine,
    server: int,
    game_id: str,
    *,
    players: int,
    agents: dict[int, tuple[str, str | None, str | None]],  # seat -> (kind, model, persona)
    guesses: dict[int, bool | None],  # person's seat -> named an agent (None: skipped it)
    status: str = "finished",
    k: int = 0,
    revealed: bool = True,
    late: AbstractSet[int] = frozenset(),
) -> None:
    """A game whose survey was answered (each guess 1 min after the end, ``late`` ones 10 min
    after) and, when ``revealed``, whose AI was revealed 5 min after its end."""
    ended = T0 + timedelta(hours=k, minutes=30)
    with session_scope(engine) as s:
        s.add(
            Game(
                id=game_id,
                server_id=server,
                status=status,
                seed=1,
                started_at=T0 + timedelta(hours=k),
                ended_at=ended,
                winner="mafia",
                revealed_at=ended + timedelta(minutes=5) if revealed else None,
            )
        )
        s.flush()
        for i in range(players):
            kind, model, persona = agents.get(i, (None, None, None))
            s.add(
                Seat(
                    game_id=game_id,
                    index=i,
                    character_name=f"P{i}",
                    user_id=None if i in agents else f"u{k}-{i}",
                    is_agent=i in agents,
                    agent_kind=kind,
                    persona=persona,
                )
            )
            if model is not None:
                for _ in range(3):
                    s.add(LLMCall(game_id=game_id, seat_index=i, kind="generator", model=model))
        for seat, named in guesses.items():
            at = ended + timedelta(minutes=10 if seat in late else 1)
            s.add(
                SurveyResponse(
                    game_id=game_id,
                    seat_index=seat,
                    identified_ai=named,
                    source="discord",
                    t=at,
                    guessed_at=None if named is None else at,
                )
            )


def servers(engine: Engine) -> tuple[int, int]:
    with session_scope(engine) as s:
        a = Server(platform="discord", external_id="111", name="Alpha")
        b = Server(platform="slack", external_id="T222")
        s.add(a)
        s.add(b)
        s.flush()
        assert a.id is not None and b.id is not None
        return a.id, b.id


LLM = ("llm", "model-x", "wry")
BASE = ("baseline", None, None)


def seed(engine: Engine) -> None:
    """Alpha (Discord): g1 6 players, LLM at 0, 5 answers, 3 named it; g2 5 players, baseline
    at 4, one answer (named it) and a skipped question; g3 (aborted after the start) 7 players,
    LLM, nobody answered; g4: no agent at all (not counted). Slack: g5 4 players, LLM at 3,
    3 answers, none named it."""
    a, b = servers(engine)
    add_game(
        engine, a, "g1", players=6, agents={0: LLM},
        guesses={1: True, 2: True, 3: True, 4: False, 5: False}, k=0,
    )  # fmt: skip
    add_game(engine, a, "g2", players=5, agents={4: BASE}, guesses={0: True, 1: None}, k=1)
    add_game(engine, a, "g3", players=7, agents={6: LLM}, guesses={}, status="aborted", k=2)
    add_game(engine, a, "g4", players=5, agents={}, guesses={0: True, 1: False}, k=3)
    add_game(engine, b, "g5", players=4, agents={3: LLM}, guesses={0: False, 1: False, 2: False})


@pytest.fixture
def seeded(engine: Engine) -> Engine:
    seed(engine)
    return engine


def test_wilson_interval_matches_the_textbook_values() -> None:
    # Wilson score intervals (z = 1.96): 0/10 -> [0, 0.2775], 5/10 -> [0.2366, 0.7634],
    # 31 of 52 (59.6%, the paper's rate) -> [0.4607, 0.7184] (worked by hand)
    lo, hi = wilson(0, 10) or (9.0, 9.0)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)
    assert wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(31, 52) == pytest.approx((0.4607, 0.7184), abs=1e-4)
    assert wilson(0, 0) is None


def test_rates_per_server_setup_and_overall(seeded: Engine) -> None:
    rates = spot_rates(seeded)
    o = rates.overall
    # g4 has no agent: nothing to spot; g2's skipped question is no answer
    assert (o.named, o.answers, o.games) == (4, 9, 4)
    assert o.thin_games == 2  # g2 (one answer) and g3 (none): counted, not hidden
    assert o.rate == pytest.approx(4 / 9)
    assert o.interval == pytest.approx(wilson(4, 9))
    # chance per answer: g1 1/5 (x5), g2 1/4 (x1), g5 1/3 (x3)
    assert o.chance == pytest.approx((5 * (1 / 5) + 1 / 4 + 3 * (1 / 3)) / 9)
    by_server = {r.label: r for r in rates.by_server}
    alpha = by_server["discord 111 (Alpha)"]
    assert (alpha.named, alpha.answers, alpha.games, alpha.thin_games) == (4, 6, 3, 2)
    slack = by_server["slack T222"]
    assert (slack.named, slack.answers, slack.rate) == (0, 3, 0.0)
    assert slack.interval == pytest.approx((0.0, wilson(0, 3)[1]))  # type: ignore[index]
    by_setup = {r.label: r for r in rates.by_setup}
    assert set(by_setup) == {"llm / model-x / wry", "baseline / no model / default persona"}
    llm = by_setup["llm / model-x / wry"]
    assert (llm.named, llm.answers, llm.games, llm.thin_games) == (3, 8, 3, 1)
    base = by_setup["baseline / no model / default persona"]
    assert (base.named, base.answers, base.chance) == (1, 1, 0.25)


def test_one_server_in_chat(seeded: Engine) -> None:
    lines = server_chat_lines(seeded, "discord", "111")
    text = "\n".join(lines)
    assert "4 of 6 answers named an AI: 67% (95% CI 30%–90%)" in text
    assert "3 games, 2 with fewer than 2 answers" in text
    assert "llm / model-x / wry: 3 of 5 answers named an AI: 60%" in text
    assert "T222" not in text and "slack" not in text  # another server's games are not shown
    assert server_chat_lines(seeded, "discord", "999") == [
        "No finished game with an AI player on this server yet."
    ]


def test_report_has_the_table_and_the_plot(seeded: Engine, tmp_path: Path, db_url: str) -> None:
    report = build_report(seeded, ["g1", "g2", "g5"])
    spot = report["spot_the_ai"]
    assert (spot["overall"]["named"], spot["overall"]["answers"]) == (4, 9)
    assert spot["overall"]["ci95"] == pytest.approx(list(wilson(4, 9) or ()))
    assert spot["overall"]["games_with_fewer_than_2_answers"] == 1
    md = render_markdown(report, {"spot_the_ai": "spot_the_ai.png"})
    assert "## Spot-the-AI rate" in md and "| all games | 4 | 9 | 44% (19%–73%) |" in md
    assert "| setup: llm / model-x / wry | 3 | 8 |" in md and "![Spot-the-AI rate]" in md
    # the command: prints the table, writes the plot beside report.md
    buf = io.StringIO()
    run_report(
        db_url, ["g1", "g2", "g5"], tmp_path / "rep", tmp_path / "r.json",
        Console(file=buf, width=200), embeddings=False,
    )  # fmt: skip
    printed = buf.getvalue()
    assert "Spot-the-AI rate" in printed and "| server: slack T222 | 0 | 3 |" in printed
    assert (tmp_path / "rep" / "spot_the_ai.png").stat().st_size > 1000
    assert json.loads((tmp_path / "r.json").read_text())["spot_the_ai"]["overall"]["games"] == 3


def test_a_fresh_store_has_no_rates(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    upgrade(url)
    engine = make_engine(url)
    rates = spot_rates(engine)
    assert rates.overall.games == 0 and rates.overall.rate is None and rates.by_setup == []
    engine.dispose()


def test_only_revealed_games_and_guesses_given_before_the_reveal_count(engine: Engine) -> None:
    """A game whose AI is not revealed yet gives no figure (a moderator switching their guess
    and asking again would learn the AI); a guess given after the reveal never counts."""
    a, _ = servers(engine)
    add_game(engine, a, "open", players=5, agents={0: LLM}, guesses={1: True}, revealed=False)
    assert spot_rates(engine).overall.games == 0
    assert server_chat_lines(engine, "discord", "111") == [
        "No finished game with an AI player on this server yet."
    ]
    add_game(
        engine, a, "shut", players=6, agents={0: LLM},
        guesses={1: True, 2: False, 3: True, 4: True}, late={3, 4}, k=1,
    )  # fmt: skip
    o = spot_rates(engine).overall
    assert (o.named, o.answers, o.games) == (1, 2, 1)


def test_a_seat_a_person_played_before_a_takeover_is_not_the_ai(engine: Engine) -> None:
    """P1 was a person until a kick on day 1, then an agent played it: P0 is the game's only
    AI, and the chance level counts one AI among five others."""
    a, _ = servers(engine)
    add_game(engine, a, "kick", players=6, agents={0: LLM}, guesses={2: True, 3: False})
    with session_scope(engine) as s:
        seat = s.exec(select(Seat).where(Seat.game_id == "kick", Seat.index == 1)).one()
        seat.is_agent, seat.agent_kind, seat.user_id = True, "baseline", None
        seat.handovers = [
            {"from": "person", "to": "agent", "phase": "day 1", "seq": 3, "t": T0.isoformat()}
        ]
    o = spot_rates(engine).overall
    assert o.chance == pytest.approx(1 / 5)
    assert "baseline" not in spot_rates(engine).by_setup[0].label
