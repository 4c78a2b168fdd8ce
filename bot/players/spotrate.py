"""Spot-the-AI rate: how often people named an agent when the survey asked "who was the AI?".

The figure LLMafia's paper leads with (its agent was named by 59.6% of people). Counted from
the store's survey answers (``survey_responses.identified_ai``: the person's guess was an
agent seat; the LLMafia release records only that flag), over ended games with at least one
agent seat whose AI has been revealed (imported LLMafia games count: their survey closed before
publication), each person's latest guess given before the reveal (`bot.players.survey.guess_counts`,
the rule every figure reads). "Agent seat" is one an agent played from start to end
(`bot.players.seat_story`); a seat a person played before a takeover is not one:

- rate = answers that named an agent / answers, with its 95% Wilson score interval;
- chance = what guessing at random among the other players gives, per answer
  (agents / (N - 1) for a game of N players: 1/(N-1) with one agent), averaged over the
  answers, so that it weighs the games as the rate does;
- games where fewer than two people answered are counted (``thin_games``; games nobody
  answered included), never hidden; their answers are in the rate.

Rows: overall, per server, and per agent setup (kind, model, persona; a game with several
differing agents has them all, joined by " + "). The model is the one the agent's decisions
were logged with (the most frequent), or the imported game's configured model.

The ``/mafia spotrate`` commands (moderators) show `chat_lines` for their own server only.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.players import seat_story, survey
from bot.store.models import Game, LLMCall, Seat, Server, SurveyResponse

ENDED = ("finished", "aborted")
Z95 = 1.959963984540054  # the standard normal's 97.5% quantile


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of k successes in n trials (None for n = 0)."""
    if n <= 0:
        return None
    p = k / n
    z2 = z * z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    low = 0.0 if k == 0 else max(0.0, min(p, centre - half))  # exact ends, no float dust
    high = 1.0 if k == n else min(1.0, max(p, centre + half))
    return low, high


@dataclass
class Rate:
    """One row: answers that named an agent among the answers of ``games`` games."""

    label: str
    named: int = 0
    answers: int = 0
    games: int = 0
    thin_games: int = 0  # games where fewer than 2 people answered (none included)
    _chances: list[float] = field(default_factory=list, repr=False)

    @property
    def rate(self) -> float | None:
        return self.named / self.answers if self.answers else None

    @property
    def interval(self) -> tuple[float, float] | None:
        return wilson(self.named, self.answers)

    @property
    def chance(self) -> float | None:
        return sum(self._chances) / len(self._chances) if self._chances else None

    def add(self, game: _GameAnswers) -> None:
        self.games += 1
        self.thin_games += game.answers < 2
        self.answers += game.answers
        self.named += game.named
        self._chances.extend([game.chance] * game.answers)

    def as_dict(self) -> dict[str, Any]:
        ci = self.interval
        return {
            "label": self.label,
            "named": self.named,
            "answers": self.answers,
            "rate": self.rate,
            "ci95": None if ci is None else [ci[0], ci[1]],
            "chance": self.chance,
            "games": self.games,
            "games_with_fewer_than_2_answers": self.thin_games,
        }


@dataclass
class SpotRates:
    overall: Rate
    by_server: list[Rate]
    by_setup: list[Rate]

    def as_dict(self) -> dict[str, Any]:
        return {
            "definition": (
                "share of survey answers to 'who was the AI?' that named an agent seat; 95% "
                "Wilson interval; chance = agents/(N-1) per answer, averaged over the answers"
            ),
            "overall": self.overall.as_dict(),
            "by_server": [r.as_dict() for r in self.by_server],
            "by_setup": [r.as_dict() for r in self.by_setup],
        }


@dataclass(frozen=True)
class _GameAnswers:
    server: str
    setup: str
    answers: int
    named: int
    chance: float


def spot_rates(
    engine: Engine,
    game_ids: Sequence[str] | None = None,
    *,
    platform: str | None = None,
    server_external_id: str | None = None,
) -> SpotRates:
    """The rates over ``game_ids`` (None: every ended game), or one server's games."""
    with Session(engine) as s:
        q = select(Game, Server).join(Server, col(Server.id) == col(Game.server_id), isouter=True)
        q = q.where(col(Game.status).in_(ENDED), col(Game.started_at).is_not(None))
        if game_ids is not None:
            q = q.where(col(Game.id).in_(list(game_ids)))
        if platform is not None:
            q = q.where(Server.platform == platform)
        if server_external_id is not None:
            q = q.where(Server.external_id == str(server_external_id))
        rows = s.exec(q.order_by(col(Game.started_at), col(Game.id))).all()
        ids = [g.id for g, _ in rows]
        seats = s.exec(select(Seat).where(col(Seat.game_id).in_(ids))).all()
        answers = s.exec(
            select(SurveyResponse)
            .where(
                col(SurveyResponse.game_id).in_(ids),
                col(SurveyResponse.identified_ai).is_not(None),
            )
            .order_by(col(SurveyResponse.id))
        ).all()
        models = s.exec(
            select(LLMCall.game_id, LLMCall.seat_index, LLMCall.model).where(
                col(LLMCall.game_id).in_(ids), col(LLMCall.model).is_not(None)
            )
        ).all()
    seats_of: dict[str, list[Seat]] = defaultdict(list)
    for seat in seats:
        seats_of[seat.game_id].append(seat)
    model_counts: dict[tuple[str, int], Counter[str]] = defaultdict(Counter)
    for game_id, seat_index, model in models:
        if model:
            model_counts[(game_id, seat_index)][model] += 1
    revealed_at = {g.id: g.revealed_at for g, _ in rows}
    latest: dict[str, dict[int, bool]] = defaultdict(dict)
    for a in answers:  # one answer a person: their latest that counts (before the reveal)
        counted = survey.counted_guess(a, revealed_at.get(a.game_id))
        if counted is not None:
            latest[a.game_id][a.seat_index] = counted
    games: list[_GameAnswers] = []
    for game, server in rows:
        if game.revealed_at is None and not _imported(game, server):
            continue  # its AI is not revealed: no figure may hint at it yet
        table = seats_of.get(game.id, [])
        agents = seat_story.the_ai(table)
        if not agents:
            continue  # nobody to spot
        people = {x.index for x in table if not x.is_agent}
        flags = [v for i, v in latest.get(game.id, {}).items() if i in people]
        chance = len(agents) / (len(table) - 1) if len(table) > 1 else 0.0
        setup = _setup(game, agents, model_counts)
        games.append(
            _GameAnswers(_server_label(server), setup, len(flags), sum(flags), min(1.0, chance))
        )
    return _rows(games)


def _imported(game: Game, server: Server | None) -> bool:
    """An LLMafia game imported from the release (its survey closed before publication)."""
    return (server is not None and server.platform == "import") or (game.config or {}).get(
        "source"
    ) == survey.IMPORTED_SOURCE


def _rows(games: Iterable[_GameAnswers]) -> SpotRates:
    overall = Rate("all games")
    servers: dict[str, Rate] = {}
    setups: dict[str, Rate] = {}
    for g in games:
        overall.add(g)
        servers.setdefault(g.server, Rate(g.server)).add(g)
        setups.setdefault(g.setup, Rate(g.setup)).add(g)
    return SpotRates(overall, list(servers.values()), list(setups.values()))


def _server_label(server: Server | None) -> str:
    if server is None:
        return "unknown server"
    name = f" ({server.name})" if server.name else ""
    return f"{server.platform} {server.external_id}{name}"


def _setup(game: Game, agents: list[Seat], models: dict[tuple[str, int], Counter[str]]) -> str:
    configured = dict((game.config or {}).get("llm_config") or {})
    parts: list[str] = []
    for seat in sorted(agents, key=lambda x: x.index):
        counts = models.get((game.id, seat.index))
        model = counts.most_common(1)[0][0] if counts else None
        if model is None:
            model = (configured.get(seat.character_name) or {}).get("model_name")
        persona = seat.persona or "default persona"
        if len(persona) > 40:
            persona = persona[:39] + "…"
        part = f"{seat.agent_kind or 'agent'} / {model or 'no model'} / {persona}"
        if part not in parts:
            parts.append(part)
    return " + ".join(parts)


# --- text ---------------------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.0f}%"


def _interval(row: dict[str, Any]) -> str:
    ci = row.get("ci95")
    return "" if not ci else f" (95% CI {_pct(ci[0])}–{_pct(ci[1])})"


def describe(row: dict[str, Any]) -> str:
    """One row (`Rate.as_dict`) as a sentence: '5 of 8 answers named an AI: 62% (95% CI
    31–86%); chance 20%; 3 games, 1 with fewer than 2 answers'."""
    n = row["games"]
    thin = row["games_with_fewer_than_2_answers"]
    return (
        f"{row['named']} of {row['answers']} answers named an AI: {_pct(row['rate'])}"
        f"{_interval(row)}; chance {_pct(row['chance'])}; {n} game{'s' if n != 1 else ''}"
        + (f", {thin} with fewer than 2 answers" if thin else "")
    )


def chat_lines(rates: SpotRates) -> list[str]:
    """What a moderator sees in chat for their server (plain text)."""
    if not rates.overall.games:
        return ["No finished game with an AI player on this server yet."]
    out = [
        "Spot-the-AI rate on this server: the share of survey answers to "
        '"who was the AI?" that named an AI player.',
        f"Overall: {describe(rates.overall.as_dict())}.",
    ]
    if rates.by_setup:
        out.append("By AI setup (kind / model / persona):")
        out.extend(f"- {r.label}: {describe(r.as_dict())}." for r in rates.by_setup)
    return out


def table_lines(spot: dict[str, Any]) -> list[str]:
    """The table `mafiabot report` prints and writes (Markdown), from `SpotRates.as_dict`."""
    out = [
        "| group | named an AI | answers | rate (95% CI) | chance | games "
        "| games with < 2 answers |",
        "|---|---|---|---|---|---|---|",
    ]
    rows = [("", spot["overall"])]
    rows += [("server: ", r) for r in spot["by_server"]]
    rows += [("setup: ", r) for r in spot["by_setup"]]
    for kind, r in rows:
        ci = r.get("ci95")
        interval = "" if not ci else f" ({_pct(ci[0])}–{_pct(ci[1])})"
        out.append(
            f"| {kind}{r['label']} | {r['named']} | {r['answers']} | {_pct(r['rate'])}{interval} "
            f"| {_pct(r['chance'])} | {r['games']} | {r['games_with_fewer_than_2_answers']} |"
        )
    return out


def server_chat_lines(engine: Engine, platform: str, server_external_id: str) -> list[str]:
    """`chat_lines` for one server's games (the moderators' ``/mafia spotrate``)."""
    return chat_lines(
        spot_rates(engine, platform=platform, server_external_id=str(server_external_id))
    )
