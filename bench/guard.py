"""How well the disclosure guard (agent/guard.py) holds, and what it costs.

Two corpora:

- **disclosing**: ``tests/agent/guard_disclosing.tsv``, lines that would mark the seat (self-
  reference as an AI in eleven languages, model and vendor names, assistant preambles and notes,
  refusals, a mafia seat's role statement, list and markdown formatting, masked letters). A line
  marked ``any`` must be refused for a bystander and a mafia seat alike; ``mafia``, for a mafia
  seat on the stage. Recall: the share refused.
- **ordinary**: ``tests/agent/guard_ordinary.tsv``, table talk in the same eleven languages
  (accusations about "the bot", votes, claims, apologies, "of course"), for both seats: the
  people's lines below are English, this checks the other languages do not raise alarms.
- **people**: every line people wrote in the LLMafia games (stage and den; not the LLM's, not
  the Game-Manager's), each checked as if the seat that wrote it said it, with that seat's role,
  room and the game's earlier lines. A refusal there is a false alarm: an agent's person-like
  line would have been replaced by the baseline's.

Prints recall, false alarms on both (each one listed), and the time per line (p50/p99) of the
check without a model: CPU time of the checking thread (what the check costs; on a shared
machine wall time also counts other processes' turns, so it is printed too).

    uv run python bench/guard.py [GAMES_DIR]

Targets: recall >= 98%, false alarms <= 1%, p99 <= 2 ms.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from agent.guard import check_line
from agent.knowledge import ChatEntry, SeatKnowledge
from games.events import GameStarted, PhaseStarted, RoleAssigned

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "agent" / "guard_disclosing.tsv"
ORDINARY = CORPUS.with_name("guard_ordinary.tsv")
TABLE = ("Ari", "Blake", "Casey", "Drew", "Eden", "Finley", "Gray")
RECALL_TARGET = 0.98
FALSE_ALARM_TARGET = 0.01
HISTORY = 40


@dataclass(frozen=True)
class Case:
    """A line and the seat that says it."""

    text: str
    seat: SeatKnowledge
    label: str  # language (disclosing) or game id (people)


def seat(
    name: str,
    players: tuple[str, ...],
    *,
    mafia: bool,
    partners: tuple[str, ...] = (),
    day: bool = True,
    history: tuple[ChatEntry, ...] = (),
) -> SeatKnowledge:
    """A seat's knowledge on day or night 1: its role, the table, the lines seen so far."""
    t = datetime(2025, 1, 1, tzinfo=UTC)
    me = players.index(name)
    k = SeatKnowledge(me, name)
    k.observe(GameStarted(t=t, players=players, mafia_count=2, extra_roles=()))
    team = "mafia" if mafia else "bystanders"
    role = "mafia" if mafia else "bystander"
    k.observe(RoleAssigned(t=t, seat=me, name=name, role=role, team=team, partners=partners))
    k.observe(
        PhaseStarted(
            t=t,
            phase="day" if day else "night",
            number=1,
            seq=1,
            deadline=t + timedelta(minutes=5),
            seconds=300.0,
        )
    )
    for entry in history:
        k.lines.append(entry)
        if entry.place == ("stage" if day else "den"):
            k.messages.append(entry)
    return k


def disclosing(path: Path = CORPUS) -> list[Case]:
    """The disclosing corpus, one case per seat the line must be refused for."""
    out: list[Case] = []
    for raw in path.read_text("utf-8").splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        lang, who, text = raw.split("\t", 2)
        mafia = seat("Blake", TABLE, mafia=True, partners=("Casey",))
        if who == "mafia":
            out.append(Case(text, mafia, lang))
        else:
            out.append(Case(text, seat("Ari", TABLE, mafia=False), lang))
            out.append(Case(text, mafia, lang))
    return out


def ordinary(path: Path = ORDINARY) -> list[Case]:
    """The multilingual table talk, for a bystander and for a mafia seat."""
    out: list[Case] = []
    for raw in path.read_text("utf-8").splitlines():
        if not raw.strip() or raw.startswith("#"):
            continue
        lang, text = raw.split("\t", 1)
        out.append(Case(text, seat("Ari", TABLE, mafia=False), lang))
        out.append(Case(text, seat("Blake", TABLE, mafia=True, partners=("Casey",)), lang))
    return out


def people(games_dir: Path | None = None) -> list[Case]:
    """Every person's line of the LLMafia games, as said by that person's seat."""
    from research.llmafia import read_games
    from research.paths import llmafia_games_dir

    folder = games_dir or llmafia_games_dir()
    out: list[Case] = []
    for game in read_games(folder):
        players = tuple(p.name for p in game.players)
        mafia = {p.name for p in game.players if p.is_mafia}
        llm = set(game.llm_players)
        seen: list[ChatEntry] = []
        for line in game.lines:
            if line.place == "manager" or line.speaker not in players:
                continue
            if line.speaker not in llm:
                is_mafia = line.speaker in mafia
                partners = tuple(sorted(mafia - {line.speaker})) if is_mafia else ()
                k = seat(
                    line.speaker,
                    players,
                    mafia=is_mafia,
                    partners=partners,
                    day=line.place == "stage",
                    history=tuple(seen[-HISTORY:]),
                )
                out.append(Case(line.text, k, game.game_id))
            who = players.index(line.speaker)
            seen.append(ChatEntry(line.t, line.place, line.speaker, line.text, who, 1))
    return out


def refused(cases: list[Case]) -> Iterator[tuple[Case, str | None]]:
    for case in cases:
        yield case, check_line(case.text, case.seat)


def timed(cases: list[Case], clock: Callable[[], float]) -> list[float]:
    """Seconds per check, by ``clock``."""
    out = []
    for case in cases:
        start = clock()
        check_line(case.text, case.seat)
        out.append(clock() - start)
    return out


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str]) -> int:
    games = Path(argv[0]) if argv else None
    bad = disclosing()
    good = people(games)
    talk = ordinary()
    check_line("warm up", bad[0].seat)  # the banks and patterns are built once per process
    missed = [(c, r) for c, r in refused(bad) if r is None]
    alarms = [(c, r) for c, r in refused(good) if r is not None]
    talk_alarms = [(c, r) for c, r in refused(talk) if r is not None]
    recall = 1 - len(missed) / len(bad)
    false_alarms = len(alarms) / len(good)
    langs = sorted({c.label for c in bad})
    print(f"disclosing corpus: {len(bad)} checks ({len(langs)} languages: {', '.join(langs)})")
    print(f"  recall {recall:.1%} (target >= {RECALL_TARGET:.0%}); missed {len(missed)}")
    for case, _ in missed:
        print(f"    missed [{case.label}] {case.text!r}")
    print(f"people's lines of the LLMafia games: {len(good)}")
    print(f"  false alarms {false_alarms:.2%} (target <= {FALSE_ALARM_TARGET:.0%}); {len(alarms)}")
    for case, reason in alarms:
        print(f"    [{case.label}] {reason}: {case.text[:90]!r}")
    talk_rate = len(talk_alarms) / len(talk)
    print(f"ordinary table talk in {len({c.label for c in talk})} languages: {len(talk)} checks")
    print(
        f"  false alarms {talk_rate:.2%} (target <= {FALSE_ALARM_TARGET:.0%}); {len(talk_alarms)}"
    )
    for case, reason in talk_alarms:
        print(f"    [{case.label}] {reason}: {case.text!r}")
    every = bad + good + talk
    for label, clock in (("cpu", time.thread_time), ("wall", time.perf_counter)):
        runs = [timed(every, clock) for _ in range(3)]
        per_line = [statistics.median(x) for x in zip(*runs, strict=True)]
        print(
            f"time per line ({label}, median of 3 runs, {len(every)} lines): "
            f"p50 {p(per_line, 0.5) * 1e3:.3f} ms, p99 {p(per_line, 0.99) * 1e3:.3f} ms, "
            f"max {max(per_line) * 1e3:.3f} ms"
        )
    ok = (
        recall >= RECALL_TARGET
        and false_alarms <= FALSE_ALARM_TARGET
        and talk_rate <= FALSE_ALARM_TARGET
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
