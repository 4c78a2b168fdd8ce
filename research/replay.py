"""``mafiabot replay GAME_DIR``: a recorded LLMafia game's humans against our agent, live.

The recorded humans' lines and votes are played at their recorded times (the game clock runs
``speed`` times faster) into a real game (the real GameService, SQLite, APScheduler timers),
with our agent (baseline, or the LLM agent when MAFIABOT_LLM is set) in the seat the study's
LLM player had. Then the agent's timing and volume are set beside the humans', with the
report's own measures (research.report), and beside the study's LLM on the recording.
Agent versions can so be compared on the same real conversations.

How the recording meets our rules (what is replayed, what is skipped, and why):

- Setup. Same names, seats and roles. Day and night lengths are the recording's config. A vote
  phase lasts the longest recorded vote of its kind plus 20 s (the study's host waited for every
  vote; ours ends a vote as soon as everyone alive has voted, so normally the last vote ends it,
  as in the recording). Ties are broken at random: the study's host put one player out every
  day and night. With one mafia left the night talk is skipped, as the host did.
- Time. The engine's timers advance the phases. Every recorded line and vote is anchored to
  its phase: a line is played as long after the live phase's start as it was typed after the
  recorded one's (a line typed after the host's "time to vote!" call: after the live vote's
  start, as long as after that call); a vote as long after the live vote's start as it was
  cast after the recorded call. So a live phase holds exactly the recorded phase's lines and
  votes, in the recorded order.
  A line whose offset outlasts the live discussion goes on into the same day's (night's) vote,
  where talk is allowed; one whose phase is over live is skipped (``phase_over``). Phases the
  study's host restarted after a crash (0014's days 2 and 3, 0015's day 2) ran several times
  their configured length; what they hold past the live phase is skipped as ``phase_over``
  (a notice says which phases), so such games compare less of their chat.
- Speed. Recorded times and our timers scale with ``speed``; a model's latency does not, so at
  ``--speed 10`` a 1 s LLM call takes 10 game seconds. Compare LLM agents at the same speed
  (1 for faithful timing); the baseline is unaffected.
- Votes. The announced votes ("X voted for Y", with times) are cast at their times, changes of
  mind included. Untimed vote-file entries and the announcements a restarted host repeated
  (from or for players already out) are left out (``untimed``, ``stale``). A vote whose target
  is out in the live game (``target_dead``) or that the rules refuse is skipped and counted.
- Divergence. Our agent votes its own way, so who goes out can differ from the recording. Then
  the recorded lines and votes of players who are out live are skipped (``speaker_dead``,
  ``voter_dead``), players who are out only in the recording stay silent, and the game can
  end earlier (``game_over``) or later than recorded. Both eliminations lists are reported, and
  where they part. The replay stops when the live game leaves the recording's last phase.
- Night. The den lines of recorded mafia humans are replayed in the live den. Lines stamped
  while their chat was closed (a day-chat line during a night, a den line by day: the study's
  host showed them later) are skipped (``closed_chat``). If the live night has no talk (one
  mafia left live, two recorded), its den lines are skipped (``phase_skipped``).
- The recorded LLM's own lines and votes are never replayed: that seat is ours.

Measures (research.report, per player type): messages per player per day phase, words per
message, repeated messages, unique words, time since the previous message in the chat, time
between a player's own messages (bug-fixed). Computed on the live game (replayed humans vs our
agent) and on the recording imported into a throw-away store (humans vs the study's LLM).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import make_url

from bot.protection.dataset.llmafia_model import LLMafiaGame
from bot.protection.dataset.stored import store_game_id
from bot.runtime import running_service
from bot.settings import Settings
from bot.store.db import make_engine
from bot.store.decisions import summary_for_game
from bot.store.migrate import upgrade
from games.config import GameConfig
from games.errors import RuleError
from games.state import PhaseKind
from research.importer import import_game
from research.llmafia import read_game
from research.replay_harness import (
    ORDER,
    CueResult,
    LiveElimination,
    PhaseWatch,
    ScriptPlayer,
    SeatTable,
    recorded_table,
    seat_recorded_game,
)
from research.replay_script import Script, build_script, replay_config
from research.report import build_report
from research.report_paper import TYPES

__all__ = ["ReplayResult", "render_table", "run_replay", "run_replay_command"]

RECORDING_OVER = "the recording ends here"
MEASURES = (
    ("messages_per_player_per_day_phase", "messages / player / day phase"),
    ("words_per_message", "words / message"),
    ("repeated_messages", "repeated messages / player"),
    ("unique_words", "unique words / player"),
)
TIMINGS = (
    ("since_previous_message", "s since previous message"),
    ("since_own_previous_message", "s between own messages (bug-fixed)"),
)


@dataclass
class ReplayResult:
    """Everything one replay found; ``to_json()`` is what ``--json`` prints."""

    game: LLMafiaGame
    table: SeatTable
    live_game_id: str
    agent_kind: str
    model: str | None
    config: GameConfig
    speed: float
    seed: int | None
    script: Script
    results: list[CueResult]
    refusals: Counter[str]
    live_eliminations: list[LiveElimination]
    live_winner: str | None
    ended: str
    measures: dict[str, Any]
    recorded_measures: dict[str, Any]
    real_seconds: float
    agent_llm: dict[str, Any] | None = None
    db_url: str | None = None
    notices: list[str] = field(default_factory=list)
    #: the live game's night actions by role (`research.report_night`)
    night_actions: dict[str, Any] = field(default_factory=dict)

    def outcomes(self, action: str) -> Counter[str]:
        return Counter(r.outcome for r in self.results if r.cue.action == action)

    def _tally(self, action: str) -> dict[str, Any]:
        live = self.outcomes(action)
        unscripted = (
            self.script.unscripted_lines if action == "say" else self.script.unscripted_votes
        )
        recorded = self.script.recorded_lines if action == "say" else self.script.recorded_votes
        skipped = {**unscripted, **{k: v for k, v in live.items() if k != "played"}}
        return {
            "recorded": recorded.get("human", 0),
            "replayed": live.get("played", 0),
            "skipped": dict(sorted(skipped.items())),
            "recorded_llm_seat": recorded.get("llm", 0),
        }

    def divergence(self) -> str | None:
        """The recorded phase where the live eliminations first differ, None if they never do
        (within the phases both games had)."""
        recorded = [(e.name, e.phase) for e in self.game.eliminations]
        live = [(e.name, e.phase) for e in self.live_eliminations]
        for a, b in zip(recorded, live, strict=False):
            if a != b:
                return min(a[1], b[1], key=self._phase_order)
        if len(recorded) != len(live):
            longer = recorded if len(recorded) > len(live) else live
            return longer[min(len(recorded), len(live))][1]
        return None

    @staticmethod
    def _phase_order(label: str) -> tuple[int, int]:
        family, _, number = label.partition("-")
        return (int(number), 0 if family == "day" else 1)

    def to_json(self) -> dict[str, Any]:
        c = self.config
        return {
            "game": self.game.game_id,
            "live_game_id": self.live_game_id,
            "db": _masked(self.db_url),
            "agent": {
                "name": self.table.agent_name,
                "role": self.table.deal[self.table.agent_seat],
                "kind": self.agent_kind,
                "model": self.model,
            },
            "speed": self.speed,
            "seed": self.seed,
            "rules": {
                "day_seconds": c.day_seconds,
                "vote_seconds": c.vote_seconds,
                "night_seconds": c.night_seconds,
                "night_vote_seconds": c.night_vote_seconds,
                "tie_rule": c.tie_rule,
            },
            "lines": self._tally("say"),
            "votes": self._tally("vote"),
            "refusals": dict(self.refusals),
            "eliminations": {
                "recorded": [
                    {"name": e.name, "role": e.role, "phase": e.phase}
                    for e in self.game.eliminations
                ],
                "live": [asdict(e) for e in self.live_eliminations],
                "diverged_at": self.divergence(),
            },
            "winner": {"recorded": self.game.winner, "live": self.live_winner},
            "ended": self.ended,
            "recorded_restarts": {p.label: len(p.restarts) for p in self.game.phases if p.restarts},
            "measures": self.measures,
            "recorded_measures": self.recorded_measures,
            "agent_llm": self.agent_llm,
            "real_seconds": round(self.real_seconds, 2),
            "notices": self.notices,
            "night_actions": self.night_actions,
        }


def _masked(url: str | None) -> str | None:
    """The database URL without its password (it goes to stdout)."""
    if url is None:
        return None
    return make_url(url).render_as_string(hide_password=True)


# --- measures ---------------------------------------------------------------------------------


def _stats(s: dict[str, Any]) -> dict[str, Any]:
    return {"mean": s.get("mean"), "std": s.get("std"), "n": s.get("n", 0)}


def pick_measures(report: dict[str, Any]) -> dict[str, Any]:
    """The timing/volume measures of a report, by player type (human, agent), without the
    histograms."""
    out: dict[str, Any] = {
        "messages": {"human": report["human_messages"], "agent": report["agent_messages"]},
    }
    for key, _ in MEASURES:
        out[key] = {k: _stats(report[key][k]) for k in TYPES}
    for key, _ in TIMINGS:
        m = report["timing"][key]
        out[key] = {
            k: {
                "per_message": _stats(m["per_message"][k]),
                "per_player_mean": _stats(m["per_player_mean"][k]),
            }
            for k in TYPES
        }
    return out


def recorded_measures(game: LLMafiaGame) -> dict[str, Any]:
    """The same measures on the recording itself (humans vs the study's LLM), via a throw-away
    store so the user's database never gets the import."""
    with tempfile.TemporaryDirectory(prefix="mafiabot-recorded-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'recorded.db'}"
        upgrade(url)
        engine = make_engine(url)
        try:
            import_game(engine, game)
            return pick_measures(build_report(engine, [store_game_id(game.game_id)]))
        finally:
            engine.dispose()


# --- the replay -------------------------------------------------------------------------------


def _last_position(game: LLMafiaGame) -> tuple[int, int]:
    last = game.phases[-1]
    kind = PhaseKind.VOTE if last.kind == "day" else PhaseKind.NIGHT_VOTE
    return (last.number, ORDER[kind])


async def run_replay(
    settings: Settings,
    game_dir: Path,
    *,
    speed: float = 1.0,
    agent: str = "baseline",
    db_url: str | None = None,
    seed: int | None = None,
    notice: Callable[[str], None] = lambda _: None,
    progress: Callable[[str], None] | None = None,
) -> ReplayResult:
    """Replay one recorded game (see the module doc). ``db_url`` keeps the live game in that
    database; by default it lives in a temporary one. ``notice`` gets one-line remarks."""
    game_dir = Path(game_dir)
    if not (game_dir / "config.json").is_file():
        raise FileNotFoundError(f"no LLMafia game at {game_dir} (no config.json)")
    if agent not in ("baseline", "llm"):
        raise ValueError(f"unknown agent {agent!r}: baseline or llm")
    if speed <= 0:
        raise ValueError("speed must be positive")
    game = read_game(game_dir)
    table = recorded_table(game)
    script = build_script(game, table.agent_name)
    config = replay_config(game, table.deal)
    notices: list[str] = []

    def say(text: str) -> None:
        notices.append(text)
        notice(text)

    restarted = [p.label for p in game.phases if p.restarts]
    if restarted:
        say(
            f"The study's host restarted {', '.join(restarted)} after crashes: those phases ran "
            "longer than configured, so their lines and votes past the live phase are skipped "
            "(phase_over)."
        )
    kind = agent
    if agent == "llm" and not settings.llm:
        say("No LLM configured (MAFIABOT_LLM); the offline baseline agent plays.")
        kind = "baseline"
    if kind == "baseline":  # a baseline replay needs no model credentials
        settings = settings.model_copy(update={"llm": ""})
    with tempfile.TemporaryDirectory(prefix="mafiabot-replay-") as tmp:
        url = db_url or f"sqlite:///{Path(tmp) / 'replay.db'}"
        real0 = time.monotonic()
        async with running_service(settings, url, kind, progress=progress) as service:
            game_id = await seat_recorded_game(
                service, table, config, speed=speed, seed=seed, agent_kind=kind
            )
            watch = PhaseWatch(game_id)
            service.subscribe(watch)
            if progress is not None:  # a line a phase: a replay at --speed 10 takes minutes
                service.subscribe(PhaseProgress(game_id, len(game.phases), progress))
            await service.start(game_id)
            player = ScriptPlayer(service, game_id, watch)
            await player.play(script.cues)
            await watch.wait_past(_last_position(game))
            ended = "game over"
            if not watch.over:
                try:
                    await service.end(game_id, RECORDING_OVER)
                    ended = "recording over"
                except RuleError:  # it ended by itself meanwhile
                    pass
            await service.wait_finished(game_id)
            await service.drain(game_id)
            if service.decision_log is not None:
                await service.decision_log.flush()
            real = time.monotonic() - real0
            live_report = await asyncio.to_thread(build_report, service.engine, [game_id])
            agent_llm = None
            if kind == "llm":
                summary = await asyncio.to_thread(summary_for_game, service.engine, game_id)
                agent_llm = asdict(summary)
    recorded = await asyncio.to_thread(recorded_measures, game)
    return ReplayResult(
        game=game,
        table=table,
        live_game_id=game_id,
        agent_kind=kind,
        model=settings.llm or None,
        config=config,
        speed=speed,
        seed=seed,
        script=script,
        results=player.results,
        refusals=player.refusals,
        live_eliminations=watch.eliminations,
        live_winner=watch.winner,
        ended=ended,
        measures=pick_measures(live_report),
        recorded_measures=recorded,
        real_seconds=real,
        agent_llm=agent_llm,
        db_url=db_url,
        notices=notices,
        night_actions=live_report.get("night_actions") or {},
    )


class PhaseProgress:
    """Says each phase of the replayed game as it starts (``say``: stderr), with the time
    taken so far: a long replay shows it is moving."""

    def __init__(self, game_id: str, phases: int, say: Callable[[str], None]) -> None:
        self.game_id, self.phases, self.say = game_id, phases, say
        self.began = time.monotonic()
        self.count = 0

    async def on_events(self, game: Any, events: Any) -> None:
        from bot.table.status import phase_label
        from games.events import PhaseStarted

        if game.id != self.game_id:
            return
        for event in events:
            if isinstance(event, PhaseStarted):
                self.count += 1
                name = phase_label(event.phase, event.number)
                elapsed = time.monotonic() - self.began
                self.say(
                    f"Replaying: {name} (phase {self.count} of the recording's {self.phases}, "
                    f"{elapsed:.0f} s so far)"
                )


# --- output -----------------------------------------------------------------------------------


def _cell(s: dict[str, Any] | None, digits: int = 1) -> str:
    if not s or s.get("mean") is None:
        return "-"
    return f"{s['mean']:.{digits}f} ±{s['std']:.{digits}f}"


def _skips(tally: dict[str, Any]) -> str:
    parts = [f"{n} {k.replace('_', ' ')}" for k, n in tally["skipped"].items() if n]
    return "; skipped: " + ", ".join(parts) if parts else "; none skipped"


def _elims(items: list[tuple[str, str]]) -> str:
    return ", ".join(f"{n} ({p})" for n, p in items) or "nobody"


def render_table(result: ReplayResult) -> str:
    """A compact plain-text report: what was replayed, then human vs agent, live and recorded."""
    j = result.to_json()
    a = j["agent"]
    model = f" ({a['model']})" if a["model"] else ""
    lines = [
        f"LLMafia game {j['game']} replayed as {j['live_game_id']} at {result.speed:g}x in "
        f"{result.real_seconds:.1f} s: our {a['kind']} agent{model} plays {a['name']} "
        f"({a['role']}).",
        f"human lines: {j['lines']['recorded']} recorded, {j['lines']['replayed']} replayed"
        + _skips(j["lines"]),
        f"human votes: {j['votes']['recorded']} recorded, {j['votes']['replayed']} cast"
        + _skips(j["votes"]),
    ]
    el = j["eliminations"]
    rec = [(e["name"], e["phase"]) for e in el["recorded"]]
    live = [(e["name"], e["phase"]) for e in el["live"]]
    parted = f"parted at {el['diverged_at']}" if el["diverged_at"] else "the same"
    lines.append(f"out, recorded: {_elims(rec)}")
    lines.append(f"out, live:     {_elims(live)}  ({parted})")
    lines.append(
        f"winner: recorded {j['winner']['recorded'] or '-'}, live "
        f"{j['winner']['live'] or 'none (' + j['ended'] + ')'}"
    )
    night = result.night_actions.get("by_role") or {}
    if night:
        acts = ", ".join(f"{r['actions']} {role} ({r['verb']})" for role, r in night.items())
        lines.append(f"night actions, live: {acts}")
    live_m, rec_m = result.measures, result.recorded_measures
    header = ("", "humans live", "our agent", "humans rec.", "study LLM")
    rows: list[tuple[str, ...]] = [
        (
            "messages",
            str(live_m["messages"]["human"]),
            str(live_m["messages"]["agent"]),
            str(rec_m["messages"]["human"]),
            str(rec_m["messages"]["agent"]),
        )
    ]
    for key, label in MEASURES:
        rows.append(
            (
                label,
                _cell(live_m[key]["human"]),
                _cell(live_m[key]["agent"]),
                _cell(rec_m[key]["human"]),
                _cell(rec_m[key]["agent"]),
            )
        )
    for key, label in TIMINGS:
        rows.append(
            (
                label,
                *(
                    _cell(m[key][k]["per_message"])
                    for m, k in ((live_m, "human"), (live_m, "agent"), (rec_m, "human"))
                ),
                _cell(rec_m[key]["agent"]["per_message"]),
            )
        )
    width = max(len(r[0]) for r in rows)
    lines.append("")
    lines.append(f"{header[0]:<{width}}" + "".join(f"{h:>14}" for h in header[1:]))
    for r in rows:
        lines.append(f"{r[0]:<{width}}" + "".join(f"{c:>14}" for c in r[1:]))
    lines.append("(mean ±std; timing per message; 'rec.' = the recording)")
    if result.agent_llm and result.agent_llm.get("calls"):
        s = result.agent_llm
        lines.append(
            f"agent LLM: {s['calls']} calls, {s['input_tokens']} prompt tokens, "
            f"{s['fallbacks']} fallbacks"
        )
    return "\n".join(lines)


def run_replay_command(
    settings: Settings,
    game_dir: Path,
    *,
    speed: float,
    agent: str,
    db_url: str | None,
    seed: int | None,
    json_out: bool,
) -> ReplayResult:
    """What ``mafiabot replay`` does: replay, print the table (stderr with ``--json``) and,
    with ``--json``, one JSON object on stdout."""
    table_out = sys.stderr if json_out else sys.stdout

    def notice(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    result = asyncio.run(
        run_replay(
            settings, game_dir, speed=speed, agent=agent, db_url=db_url, seed=seed, notice=notice,
            progress=notice,
        )
    )  # fmt: skip
    print(render_table(result), file=table_out, flush=True)
    if json_out:
        sys.stdout.write(json.dumps(result.to_json(), default=str) + "\n")
    return result
