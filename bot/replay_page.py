"""A finished game as one self-contained HTML page (``mafiabot replay GAME --html FILE``,
``/mafia replay``).

The page: the phases as coloured bands on a time line (the stage's and the den's lines as
ticks in two lanes under it, eliminations marked), then each phase in turn with the stage and
the den side by side, the votes of the phase as a table (each voter's last choice) and who
went out; at the top every character's role, their fate, and which of them were AIs. With
``research`` the agents' decisions (send or wait, fallbacks, latency) are listed beside their
lines. Everything is inline (no script, font, image or style sheet from anywhere): it works
offline and leaks nothing when opened. Only character names appear, never an account.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot import seat_story
from bot.dataset.scrub import PLAYER, Scrubber, name_variants
from bot.store.models import Event, Game, LLMCall, Message, Phase, Seat, Vote
from games.narration import MANAGER
from games.roles import get_role
from games.state import PhaseKind

#: the lanes of the time line and the phase sections
LANES = ("stage", "den")
PHASE_LABEL = {
    PhaseKind.DAY.value: "Day",
    PhaseKind.VOTE.value: "Day vote",
    PhaseKind.NIGHT.value: "Night",
    PhaseKind.NIGHT_VOTE.value: "Night vote",
}


class ReplayError(ValueError):
    """The game can't be replayed (unknown, not finished); ``str(err)`` says why."""


@dataclass
class PhaseView:
    seq: int
    kind: str
    number: int
    start: datetime
    end: datetime
    lines: dict[str, list[Message]] = field(default_factory=lambda: {lane: [] for lane in LANES})
    votes: dict[int, int | None] = field(default_factory=dict)
    out: list[dict[str, object]] = field(default_factory=list)
    decisions: list[LLMCall] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{PHASE_LABEL.get(self.kind, self.kind)} {self.number}"


@dataclass
class Replay:
    game: Game
    seats: list[Seat]
    phases: list[PhaseView]
    research: bool

    @property
    def start(self) -> datetime:
        return self.phases[0].start if self.phases else (self.game.started_at or _epoch())

    @property
    def end(self) -> datetime:
        return self.phases[-1].end if self.phases else (self.game.ended_at or self.start)

    def name(self, seat: int | None) -> str:
        for s in self.seats:
            if s.index == seat:
                return s.character_name
        return "nobody"


def _epoch() -> datetime:
    return datetime(1970, 1, 1)


Identities = Mapping[str, Sequence[str]]


def load(
    engine: Engine, game_id: str, *, research: bool = False, identities: Identities | None = None
) -> Replay:
    """Read a finished game, what was typed cleared of accounts (user ids, mentions, the
    names in ``identities``: user id -> the names they go by; e-mail addresses, phone
    numbers). Raises :class:`ReplayError`."""
    with Session(engine) as session:
        game = session.get(Game, game_id)
        if game is None:
            raise ReplayError(f"No game {game_id!r} in this database.")
        if game.status != "finished":
            raise ReplayError(
                f"Game {game_id} is {game.status}: only finished games can be replayed."
            )
        seats = list(
            session.exec(select(Seat).where(Seat.game_id == game_id).order_by(col(Seat.index)))
        )
        phases = list(
            session.exec(select(Phase).where(Phase.game_id == game_id).order_by(col(Phase.seq)))
        )
        messages = list(
            session.exec(
                select(Message)
                .where(Message.game_id == game_id, col(Message.place).in_(LANES))
                .order_by(col(Message.t), col(Message.id))
            )
        )
        votes = list(
            session.exec(
                select(Vote).where(Vote.game_id == game_id).order_by(col(Vote.t), col(Vote.id))
            )
        )
        events = list(
            session.exec(
                select(Event)
                .where(Event.game_id == game_id, Event.kind == "player_eliminated")
                .order_by(col(Event.seq))
            )
        )
        calls = (
            list(
                session.exec(
                    select(LLMCall)
                    .where(LLMCall.game_id == game_id)
                    .order_by(col(LLMCall.t), col(LLMCall.id))
                )
            )
            if research
            else []
        )
        for row in (game, *seats, *messages, *calls):
            session.expunge(row)
    clean = _cleaner(seats, identities or {})
    for message in messages:
        message.text = clean(message.text)
    for call in calls:
        call.decision = clean(call.decision) if call.decision else call.decision
        call.error = clean(call.error) if call.error else call.error
    end = game.ended_at
    views: list[PhaseView] = []
    for i, p in enumerate(phases):
        stop = p.ended_at or (phases[i + 1].started_at if i + 1 < len(phases) else end)
        views.append(PhaseView(p.seq, p.kind, p.number, p.started_at, stop or p.started_at))
    by_seq = {v.seq: v for v in views}

    def phase_at(t: datetime) -> PhaseView | None:
        for v in views:
            if v.start <= t <= v.end:
                return v
        return views[-1] if views and t > views[-1].start else (views[0] if views else None)

    for message in messages:
        view = by_seq.get(message.phase_seq or -1) or phase_at(message.t)
        if view is not None:
            view.lines[message.place].append(message)
    for vote in votes:
        view = by_seq.get(vote.phase_seq)
        if view is not None:
            view.votes[vote.voter_index] = vote.target_index  # the last one counts
    for event in events:
        view = phase_at(event.t)
        if view is not None:
            view.out.append(dict(event.payload))
    agents = {s.index for s in seats if s.is_agent}
    for call in calls:
        view = phase_at(call.t)
        if view is not None and call.seat_index in agents:
            view.decisions.append(call)
    return Replay(game, seats, views, research)


def _cleaner(seats: Sequence[Seat], identities: Identities) -> Callable[[str], str]:
    """Accounts out of free text: every person becomes "[player]" (not their character: the
    page must not pair an account with a character)."""
    names: dict[str, str] = {}
    mentions: dict[str, str] = {}
    for user in {*(s.user_id for s in seats if s.user_id), *identities}:
        mentions[user] = PLAYER
        for raw in [user, *identities.get(user, ())]:
            for variant in name_variants(str(raw)):
                names.setdefault(variant, PLAYER)
    return Scrubber(names, mentions, protected=[s.character_name for s in seats])


# --- the page --------------------------------------------------------------------------------

CSS = """
:root { --day:#f6d77a; --vote:#f0a35e; --night:#4b5d9c; --night_vote:#7a4b9c; --ink:#1d1d24; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
       margin: 0; background: #f7f7fa; }
header { background: #22243a; color: #fff; padding: 18px 28px; }
header h1 { margin: 0 0 4px; font-size: 22px; }
main { padding: 18px 28px 40px; max-width: 1200px; }
h2 { font-size: 18px; margin: 26px 0 10px; }
table { border-collapse: collapse; background: #fff; }
th, td { border: 1px solid #d9d9e3; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #ececf4; }
.ai { background: #ffe1e1; font-weight: 600; }
.badge { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 12px;
         background: #c62828; color: #fff; margin-left: 6px; }
.timeline { position: relative; background: #fff; border: 1px solid #d9d9e3;
            padding: 8px 8px 8px 70px; }
.row { position: relative; height: 26px; margin: 4px 0; }
.row .lab { position: absolute; left: -64px; width: 60px; font-size: 12px; top: 5px; color:#555; }
.band { position: absolute; top: 0; bottom: 0; border-right: 1px solid #fff; font-size: 11px;
        overflow: hidden; white-space: nowrap; padding: 4px 3px; color: #222; }
.band.night, .band.night_vote { color: #fff; }
.day { background: var(--day); } .vote { background: var(--vote); }
.night { background: var(--night); } .night_vote { background: var(--night_vote); }
.tick { position: absolute; top: 4px; width: 3px; height: 18px; background: #3b6fd8; }
.tick.agent { background: #c62828; }
.tick.manager { background: #999; }
.kill { position: absolute; top: 2px; font-size: 14px; transform: translateX(-50%); }
section.phase { background: #fff; border: 1px solid #d9d9e3; margin: 14px 0; }
section.phase > h3 { margin: 0; padding: 6px 12px; font-size: 15px; }
.lanes { display: grid; grid-template-columns: 1fr 1fr; gap: 0; }
.lanes.research { grid-template-columns: 1fr 1fr 1fr; }
.lane { padding: 6px 12px; border-top: 1px solid #eee; min-height: 30px; }
.lane + .lane { border-left: 1px solid #eee; }
.lane h4 { margin: 0 0 4px; font-size: 12px; text-transform: uppercase; color: #666; }
.line { margin: 2px 0; }
.line .t { color: #888; font-size: 12px; margin-right: 6px; font-variant-numeric: tabular-nums; }
.line.agent .who { color: #c62828; }
.line.manager { color: #666; font-style: italic; }
.who { font-weight: 600; }
.votes, .outs { padding: 6px 12px 10px; border-top: 1px solid #eee; }
.decision { font-size: 13px; margin: 2px 0; }
.decision.fallback { color: #a15c00; }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
.legend i { display: inline-block; width: 12px; height: 12px; vertical-align: -1px;
            margin-right: 4px; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _clock(t: datetime, start: datetime) -> str:
    s = max(0, int((t - start).total_seconds()))
    return f"{s // 60}:{s % 60:02d}"


def _side(role: str | None) -> str:
    if role is None:
        return "?"
    try:
        return get_role(role).team
    except KeyError:
        return "?"


def _played_by(seat: Seat) -> str:
    told = seat_story.story(seat.character_name, seat)
    return told or ("an AI agent" if seat.is_agent else "a person")


def render(replay: Replay) -> str:
    """The page, as one string of HTML."""
    game = replay.game
    start, end = replay.start, replay.end
    span = max((end - start).total_seconds(), 1e-9)
    agent_names = {s.character_name for s in seat_story.the_ai(replay.seats)}
    by_index = {s.index: s for s in replay.seats}

    def author(m: Message) -> str:
        """Who wrote the line: the player who held the seat then (`bot.seat_story`)."""
        seat = by_index.get(m.seat_index) if m.seat_index is not None else None
        return "manager" if seat is None else seat_story.wrote(seat, m)

    def pct(t: datetime) -> float:
        return max(0.0, min(100.0, 100 * (t - start).total_seconds() / span))

    out: list[str] = []
    w = out.append
    w("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>")
    w("<meta name='viewport' content='width=device-width, initial-scale=1'>")
    w(f"<title>Mafia game {_e(game.id)}: replay</title><style>{CSS}</style></head><body>")
    winner = {"bystanders": "The bystanders won", "mafia": "The mafia won"}.get(
        game.winner or "", "No winner"
    )
    ais = ", ".join(sorted(agent_names)) or "none"
    w(f"<header><h1>Mafia game {_e(game.id)}</h1>")
    w(
        f"<div id='summary'>{_e(winner)}. {len(replay.seats)} players, "
        f"{len(replay.phases)} phases, {_clock(end, start)} long. "
        f"The AI: <b id='ai'>{_e(ais)}</b>.</div></header><main>"
    )

    # roles
    fate: dict[int, str] = {}
    for view in replay.phases:
        for gone in view.out:
            seat = gone.get("seat")
            if isinstance(seat, int):
                fate[seat] = f"out in {view.label} ({gone.get('cause', '')})"
    w("<h2>Players and roles</h2><table id='roles'><tr><th>Character</th><th>Role</th>")
    w("<th>Side</th><th>Fate</th><th>Played by</th></tr>")
    for s in replay.seats:
        cls = " class='ai'" if seat_story.agent_throughout(s) else ""
        badge = "<span class='badge'>AI</span>" if seat_story.agent_throughout(s) else ""
        w(
            f"<tr{cls}><td>{_e(s.character_name)}{badge}</td><td>{_e(s.role or '?')}</td>"
            f"<td>{_e(_side(s.role))}</td><td>{_e(fate.get(s.index, 'survived'))}</td>"
            f"<td>{_e(_played_by(s))}</td></tr>"
        )
    w("</table>")

    # the time line
    w("<h2>Time line</h2><div class='legend'>")
    for kind, label in PHASE_LABEL.items():
        w(f"<span><i class='{kind}'></i>{_e(label)}</span>")
    w("<span><i style='background:#3b6fd8'></i>a person's line</span>")
    w("<span><i style='background:#c62828'></i>an AI's line</span>")
    w("<span>&#10013; elimination</span></div>")
    w("<div class='timeline' id='timeline'><div class='row'><span class='lab'>phases</span>")
    for view in replay.phases:
        left, right = pct(view.start), pct(view.end)
        w(
            f"<div class='band {_e(view.kind)}' data-phase='{_e(view.label)}' "
            f"style='left:{left:.3f}%;width:{max(right - left, 0.2):.3f}%' "
            f"title='{_e(view.label)}'>{_e(view.label)}</div>"
        )
    for view in replay.phases:
        for gone in view.out:
            w(
                f"<span class='kill' style='left:{pct(view.end):.3f}%' "
                f"title='{_e(gone.get('name', ''))} out'>&#10013;</span>"
            )
    w("</div>")
    for lane in LANES:
        w(f"<div class='row lane-{lane}'><span class='lab'>{lane}</span>")
        for view in replay.phases:
            for m in view.lines[lane]:
                kind = author(m)
                w(
                    f"<span class='tick {kind}' style='left:{pct(m.t):.3f}%' "
                    f"title='{_e(m.speaker)}'></span>"
                )
        w("</div>")
    w("</div>")

    # phase by phase
    w("<h2>Phase by phase</h2>")
    for view in replay.phases:
        w(f"<section class='phase' data-phase='{_e(view.label)}'>")
        w(
            f"<h3 class='{_e(view.kind)}'>{_e(view.label)} "
            f"<small>({_clock(view.start, start)} to {_clock(view.end, start)})</small></h3>"
        )
        cls = "lanes research" if replay.research else "lanes"
        w(f"<div class='{cls}'>")
        for lane in LANES:
            w(f"<div class='lane {lane}'><h4>{'The stage' if lane == 'stage' else 'The den'}</h4>")
            for m in view.lines[lane]:
                kind = "manager" if m.speaker == MANAGER else author(m)
                w(
                    f"<div class='line {kind}'><span class='t'>{_clock(m.t, start)}</span>"
                    f"<span class='who'>{_e(m.speaker)}</span>: {_e(m.text)}</div>"
                )
            w("</div>")
        if replay.research:
            w("<div class='lane decisions'><h4>The agent's decisions</h4>")
            for d in view.decisions:
                fb = " fallback" if d.fallback else ""
                what = d.decision or d.error or ""
                w(
                    f"<div class='decision{fb}'><span class='t'>{_clock(d.t, start)}</span>"
                    f"<b>{_e(replay.name(d.seat_index))}</b> {_e(d.kind)}: {_e(what[:300])} "
                    f"<small>({d.latency_s:.2f} s{', fallback' if d.fallback else ''})</small>"
                    "</div>"
                )
            w("</div>")
        w("</div>")
        if view.votes:
            w("<div class='votes'><table class='vote-table'><tr><th>Voter</th><th>Vote</th></tr>")
            for voter, target in sorted(view.votes.items()):
                choice = "abstained" if target is None else replay.name(target)
                w(f"<tr><td>{_e(replay.name(voter))}</td><td>{_e(choice)}</td></tr>")
            w("</table></div>")
        if view.out:
            w("<div class='outs'>")
            for gone in view.out:
                w(
                    f"<div class='out'>&#10013; <b>{_e(gone.get('name', ''))}</b> is out "
                    f"({_e(gone.get('cause', ''))}); their role was {_e(gone.get('role', '?'))}."
                    "</div>"
                )
            w("</div>")
        w("</section>")
    w("</main></body></html>")
    return "".join(out)


def page_bytes(
    engine: Engine,
    game_id: str,
    *,
    research: bool = False,
    identities: Identities | None = None,
) -> bytes:
    """The page of ``game_id`` as UTF-8. Raises :class:`ReplayError`."""
    replay = load(engine, game_id, research=research, identities=identities)
    return render(replay).encode("utf-8")
