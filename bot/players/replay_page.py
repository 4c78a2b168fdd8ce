"""A finished game as one self-contained HTML page (``mafiabot replay GAME --html FILE``,
``/mafia replay``).

The page: at the top every character's role, their fate, and which of them were AIs; a table
of contents with a link per phase; the phases as coloured bands on a time line (each band a
link to its phase; the stage's and the den's lines as ticks in two lanes under it,
eliminations marked); then each phase in turn (an anchor each): the stage and the den side by
side (no den on a day, where it is silent), the night actions and their results, the votes of
the phase as a table (each voter's last choice) with the tally, and who went out; at the end
the reveal and every person's survey guess (given before the reveal). With ``research`` each
of the agents' decisions (send or wait, the line, the vote, fallbacks, latency, the model's
answer as its reason) stands under the line or vote it produced; the rest of them after the
phase.

A player filter (a few lines of inline script) dims everyone else's lines; without script the
page reads in full. Under ~700 px wide it is one column and each table scrolls in its own box.
Everything is inline (no script, font, image or style sheet from anywhere): it works offline
and leaks nothing when opened. Only character names appear, never an account.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.players import seat_story, survey
from bot.players.reveal import reveal_text
from bot.protection.dataset.scrub import PLAYER, Scrubber, name_variants
from bot.store.models import Event, Game, LLMCall, Message, Phase, Seat, SurveyResponse, Vote
from games.narration import MANAGER
from games.night_log import night_sentence
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
    #: every vote row of the phase in order (changes included)
    ballots: list[Vote] = field(default_factory=list)
    out: list[dict[str, object]] = field(default_factory=list)
    #: night actions and their results, as sentences
    actions: list[str] = field(default_factory=list)
    #: the vote's outcome (``vote_resolved``'s payload)
    tally: list[dict[str, object]] = field(default_factory=list)
    #: the agents' decisions of the phase that are not shown under a line or vote
    decisions: list[LLMCall] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return f"phase-{self.seq}"

    @property
    def is_day(self) -> bool:
        return self.kind in (PhaseKind.DAY.value, PhaseKind.VOTE.value)

    @property
    def label(self) -> str:
        return f"{PHASE_LABEL.get(self.kind, self.kind)} {self.number}"


@dataclass
class Replay:
    game: Game
    seats: list[Seat]
    phases: list[PhaseView]
    research: bool
    #: seat -> the name they guessed in the survey before the reveal (people only)
    guesses: dict[int, str | None] = field(default_factory=dict)
    #: message id -> the decisions that produced that line; vote id -> those of that vote
    why_line: dict[int, list[LLMCall]] = field(default_factory=dict)
    why_vote: dict[int, list[LLMCall]] = field(default_factory=dict)

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
                .where(Event.game_id == game_id, col(Event.kind).not_in(NOT_SHOWN))
                .order_by(col(Event.seq))
            )
        )
        answers = list(
            session.exec(select(SurveyResponse).where(SurveyResponse.game_id == game_id))
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
        call.output = clean(call.output) if call.output else call.output
        call.prompt = ""  # (never shown: it holds others' words at length)
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
            view.ballots.append(vote)
    names = {s.index: s.character_name for s in seats}
    roles = {s.index: s.role for s in seats if s.role}
    current: PhaseView | None = None
    for event in events:  # in the game's order: each after the phase that began before it
        payload = dict(event.payload)
        if event.kind == "phase_started":
            seq = payload.get("seq")
            current = by_seq.get(seq if isinstance(seq, int) else -1, current)
            continue
        view = current or phase_at(event.t)
        if view is None:
            continue
        if event.kind == "player_eliminated":
            view.out.append(payload)
        elif event.kind == "vote_resolved":
            view.tally.append(payload)
        else:
            said = night_sentence(event.kind, payload, names, roles)
            if said:
                view.actions.append(said)
    agents = {s.index for s in seats if s.is_agent}
    mine = [c for c in calls if c.seat_index in agents]
    why_line, why_vote, rest = _attach(mine, messages, votes)
    for call in rest:
        view = phase_at(call.t)
        if view is not None:
            view.decisions.append(call)
    # the people asked for a guess, as the reveal counts them (`bot.players.reveal.tally`): not one
    # whose every other seat is an agent's (the terminal's player: the survey asks no guess)
    guesses: dict[int, str | None] = {
        s.index: None
        for s in seats
        if not s.is_agent
        and not s.withdrawn
        and not all(o.is_agent for o in seats if o.index != s.index)
    }
    for answer in answers:  # only a guess given before the reveal counts (bot.players.survey)
        if answer.seat_index in guesses and survey.guess_counts(answer, game.revealed_at):
            guesses[answer.seat_index] = answer.guessed_name
    return Replay(game, seats, views, research, guesses, why_line, why_vote)


#: the decisions that produce a line, and those that produce a vote or night choice
SPEAKS = ("scheduler", "generator")
CHOOSES = ("vote", "night_action")


def _attach(
    calls: Sequence[LLMCall], messages: Sequence[Message], votes: Sequence[Vote]
) -> tuple[dict[int, list[LLMCall]], dict[int, list[LLMCall]], list[LLMCall]]:
    """Each decision under what it produced: a seat's line gets the last decision of each
    speaking kind (scheduler, generator) that seat took since its line before; its vote the
    last vote or night-action decision since its vote before. Returns (by message id, by vote
    id, the rest: superseded decisions, reflections, those that produced nothing)."""
    products: list[tuple[datetime, int, str, int]] = []  # (t, seat, "line" | "vote", id)
    for m in messages:
        if m.seat_index is not None and m.id is not None and m.speaker != MANAGER:
            products.append((m.t, m.seat_index, "line", m.id))
    for v in votes:
        if v.id is not None:
            products.append((v.t, v.voter_index, "vote", v.id))
    why: dict[str, dict[int, list[LLMCall]]] = {"line": {}, "vote": {}}
    rest: list[LLMCall] = []
    pending: dict[tuple[int, str], dict[str, LLMCall]] = {}
    Product = tuple[int, str, int]  # (seat, "line" | "vote", id)
    timeline: list[tuple[datetime, int, LLMCall | None, Product | None]] = [
        (c.t, 0, c, None) for c in calls
    ]
    timeline += [(t, 1, None, (seat, what, pid)) for t, seat, what, pid in products]
    for _, _, call, product in sorted(timeline, key=lambda x: (x[0], x[1])):
        if call is not None:
            kind = "line" if call.kind in SPEAKS else "vote" if call.kind in CHOOSES else ""
            if not kind:
                rest.append(call)
                continue
            waiting = pending.setdefault((call.seat_index, kind), {})
            older = waiting.pop(call.kind, None)
            if older is not None:
                rest.append(older)  # superseded before it produced anything
            waiting[call.kind] = call
        elif product is not None:
            seat, kind, pid = product
            waiting = pending.pop((seat, kind), {})
            if waiting:
                why[kind][pid] = sorted(waiting.values(), key=lambda c: c.t)
    for waiting in pending.values():
        rest.extend(waiting.values())
    return why["line"], why["vote"], sorted(rest, key=lambda c: c.t)


#: the events the page leaves out (lines and votes have their own rows; the rest is the
#: engine's bookkeeping); every other kind is shown (`games.night_log.night_sentence`)
NOT_SHOWN = (
    "message",
    "vote_cast",
    "choices_offered",
    "phase_ended",
    "phase_extended",
    "game_started",
    "role_assigned",
    "game_over",
)


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
html { -webkit-text-size-adjust: 100%; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
       margin: 0; background: #f7f7fa; overflow-wrap: anywhere; }
header { background: #22243a; color: #fff; padding: 18px 28px; }
header h1 { margin: 0 0 4px; font-size: 22px; }
main { padding: 18px 28px 40px; max-width: 1200px; }
h2 { font-size: 18px; margin: 26px 0 10px; }
.scroll { max-width: 100%; overflow-x: auto; }
.scroll table { overflow-wrap: normal; }
.scroll th, #roles td { white-space: nowrap; }
table { border-collapse: collapse; background: #fff; }
th, td { border: 1px solid #d9d9e3; padding: 4px 10px; text-align: left; vertical-align: top; }
th { background: #ececf4; }
.ai { background: #ffe1e1; font-weight: 600; }
.badge { display: inline-block; padding: 0 6px; border-radius: 8px; font-size: 12px;
         background: #c62828; color: #fff; margin-left: 6px; }
nav#toc ol { list-style: none; padding: 0; margin: 0; display: flex; flex-wrap: wrap; gap: 4px; }
nav#toc a { display: inline-block; padding: 2px 8px; border-radius: 10px; font-size: 13px;
            text-decoration: none; color: #222; }
nav#toc a.night, nav#toc a.night_vote { color: #fff; }
.timeline { position: relative; background: #fff; border: 1px solid #d9d9e3;
            padding: 8px 8px 8px 70px; }
.row { position: relative; height: 26px; margin: 4px 0; }
.row .lab { position: absolute; left: -64px; width: 60px; font-size: 12px; top: 5px; color:#555; }
.band { position: absolute; top: 0; bottom: 0; border-right: 1px solid #fff; font-size: 11px;
        overflow: hidden; white-space: nowrap; padding: 4px 3px; color: #222;
        text-decoration: none; }
.band.night, .band.night_vote { color: #fff; }
.day { background: var(--day); } .vote { background: var(--vote); }
.night { background: var(--night); } .night_vote { background: var(--night_vote); }
.tick { position: absolute; top: 4px; width: 3px; height: 18px; background: #3b6fd8; }
.tick.agent { background: #c62828; }
.tick.manager { background: #999; }
.kill { position: absolute; top: 2px; font-size: 14px; transform: translateX(-50%); }
#filter { margin: 10px 0; }
section.phase { background: #fff; border: 1px solid #d9d9e3; margin: 14px 0; }
section.phase > h3 { margin: 0; padding: 6px 12px; font-size: 15px; }
section.phase > h3 a { color: inherit; }
section.phase > h3.night, section.phase > h3.night_vote { color: #fff; }
.lanes { display: grid; grid-template-columns: 1fr; gap: 0; }
.lanes.n2 { grid-template-columns: 1fr 1fr; }
.lanes.n3 { grid-template-columns: 1fr 1fr 1fr; }
.lane { padding: 6px 12px; border-top: 1px solid #eee; min-height: 30px; min-width: 0; }
.lane + .lane { border-left: 1px solid #eee; }
.lane h4 { margin: 0 0 4px; font-size: 12px; text-transform: uppercase; color: #666; }
.line { margin: 2px 0; }
.line .t { color: #888; font-size: 12px; margin-right: 6px; font-variant-numeric: tabular-nums; }
.line.agent .who { color: #c62828; }
.line.manager { color: #666; font-style: italic; }
.dim { opacity: .25; }
.who { font-weight: 600; }
.votes, .outs, .actions, .tally { padding: 6px 12px 10px; border-top: 1px solid #eee; }
.why { font-size: 12px; color: #6a4a00; margin: 0 0 4px 18px; }
.why .reason { color: #555; }
.decision { font-size: 13px; margin: 2px 0; }
.decision.fallback, .why.fallback { color: #a15c00; }
.legend span { display: inline-block; margin-right: 14px; font-size: 12px; }
.legend i { display: inline-block; width: 12px; height: 12px; vertical-align: -1px;
            margin-right: 4px; }
@media (max-width: 700px) {
  header, main { padding-left: 12px; padding-right: 12px; }
  .lanes.n2, .lanes.n3 { grid-template-columns: 1fr; }
  .lane + .lane { border-left: 0; }
  .timeline { padding-left: 44px; }
  .row .lab { left: -40px; width: 38px; font-size: 10px; }
  .band { font-size: 0; }
}
"""

#: the player filter: dims the lines and decisions of everyone else (the page reads in full
#: without it: the filter's box is hidden until this runs)
SCRIPT = """
(function () {
  var box = document.getElementById('filter'), pick = document.getElementById('who');
  box.hidden = false;
  pick.addEventListener('change', function () {
    var who = pick.value;
    document.querySelectorAll('[data-who]').forEach(function (el) {
      el.classList.toggle('dim', who !== '' && el.getAttribute('data-who') !== who);
    });
  });
})();
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


def _why(d: LLMCall, replay: Replay) -> str:
    fb = " fallback" if d.fallback else ""
    what = (d.decision or d.error or "")[:300]
    reason = (d.output or "").strip()
    said = (
        f" <span class='reason'>— its answer: {_e(reason[:300])}</span>"
        if reason and reason != what
        else ""
    )
    return (
        f"<div class='why{fb}' data-who='{_e(replay.name(d.seat_index))}'>&#8627; "
        f"{_e(d.kind)}: {_e(what)}{said} <small>({d.latency_s:.2f} s"
        f"{', fallback' if d.fallback else ''})</small></div>"
    )


def _who_kind(m: Message, seats: Mapping[int, Seat]) -> str:
    """Who wrote the line: the player who held the seat then (`bot.players.seat_story`)."""
    seat = seats.get(m.seat_index) if m.seat_index is not None else None
    if seat is None or m.speaker == MANAGER:
        return "manager"
    return seat_story.wrote(seat, m)


def _played_by(seat: Seat) -> str:
    told = seat_story.story(seat.character_name, seat)
    return told or ("an AI agent" if seat.is_agent else "a person")


def render(replay: Replay) -> str:
    """The page, as one string of HTML."""
    game = replay.game
    start, end = replay.start, replay.end
    span = max((end - start).total_seconds(), 1e-9)
    by_index = {s.index: s for s in replay.seats}
    # "the AI": the seats an agent played from start to end (docs/spot-the-ai.md)
    agent_names = [s.character_name for s in seat_story.the_ai(replay.seats)]

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
    w("<h2>Players and roles</h2><div class='scroll'><table id='roles'>")
    w("<tr><th>Character</th><th>Role</th><th>Side</th><th>Fate</th><th>Played by</th></tr>")
    for s in replay.seats:
        cls = " class='ai'" if seat_story.agent_throughout(s) else ""
        badge = "<span class='badge'>AI</span>" if seat_story.agent_throughout(s) else ""
        w(
            f"<tr{cls}><td>{_e(s.character_name)}{badge}</td><td>{_e(s.role or '?')}</td>"
            f"<td>{_e(_side(s.role))}</td><td>{_e(fate.get(s.index, 'survived'))}</td>"
            f"<td>{_e(_played_by(s))}</td></tr>"
        )
    w("</table></div>")

    # contents
    w("<h2>Contents</h2><nav id='toc'><ol>")
    for view in replay.phases:
        w(f"<li><a class='{_e(view.kind)}' href='#{view.anchor}'>{_e(view.label)}</a></li>")
    w("<li><a href='#reveal'>The reveal and the guesses</a></li></ol></nav>")

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
            f"<a class='band {_e(view.kind)}' href='#{view.anchor}' "
            f"data-phase='{_e(view.label)}' "
            f"style='left:{left:.3f}%;width:{max(right - left, 0.2):.3f}%' "
            f"title='{_e(view.label)}'>{_e(view.label)}</a>"
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
                w(
                    f"<span class='tick {_who_kind(m, by_index)}' style='left:{pct(m.t):.3f}%' "
                    f"title='{_e(m.speaker)}'></span>"
                )
        w("</div>")
    w("</div>")

    # the filter (shown by the script; without it the page reads in full)
    w("<div id='filter' hidden><label>Follow one player: <select id='who'>")
    w("<option value=''>everyone</option>")
    for s in replay.seats:
        w(f"<option>{_e(s.character_name)}</option>")
    w("</select></label> (the others' lines are dimmed)</div>")

    # phase by phase
    w("<h2>Phase by phase</h2>")
    for view in replay.phases:
        _phase(w, replay, view, by_index, start)

    _reveal(w, replay, agent_names)
    w(f"</main><script>{SCRIPT}</script></body></html>")
    return "".join(out)


def _phase(
    w: Callable[[str], None],
    replay: Replay,
    view: PhaseView,
    by_index: Mapping[int, Seat],
    start: datetime,
) -> None:
    w(f"<section class='phase' id='{view.anchor}' data-phase='{_e(view.label)}'>")
    w(
        f"<h3 class='{_e(view.kind)}'><a href='#{view.anchor}'>{_e(view.label)}</a> "
        f"<small>({_clock(view.start, start)} to {_clock(view.end, start)})</small></h3>"
    )
    why_line, why_vote = replay.why_line, replay.why_vote
    lanes = [ln for ln in LANES if ln == "stage" or view.lines[ln] or not view.is_day]
    rest = view.decisions
    columns = len(lanes) + (1 if replay.research and rest else 0)
    w(f"<div class='lanes n{columns}'>")
    for lane in lanes:
        w(f"<div class='lane {lane}'><h4>{'The stage' if lane == 'stage' else 'The den'}</h4>")
        for m in view.lines[lane]:
            w(
                f"<div class='line {_who_kind(m, by_index)}' data-who='{_e(m.speaker)}'>"
                f"<span class='t'>{_clock(m.t, start)}</span>"
                f"<span class='who'>{_e(m.speaker)}</span>: {_e(m.text)}</div>"
            )
            for d in why_line.get(m.id, []) if m.id is not None else []:
                w(_why(d, replay))
        w("</div>")
    if replay.research and rest:
        w("<div class='lane decisions'><h4>The agent's other decisions</h4>")
        for d in rest:
            fb = " fallback" if d.fallback else ""
            what = d.decision or d.error or ""
            w(
                f"<div class='decision{fb}' data-who='{_e(replay.name(d.seat_index))}'>"
                f"<span class='t'>{_clock(d.t, start)}</span>"
                f"<b>{_e(replay.name(d.seat_index))}</b> {_e(d.kind)}: {_e(what[:300])} "
                f"<small>({d.latency_s:.2f} s{', fallback' if d.fallback else ''})</small>"
                "</div>"
            )
        w("</div>")
    w("</div>")
    if view.actions:
        w("<div class='actions'><b>In the night:</b>")
        for said in view.actions:
            w(f"<div class='action'>{_e(said)}</div>")
        w("</div>")
    if view.votes:
        last = {b.voter_index: b for b in view.ballots}
        w("<div class='votes'><div class='scroll'><table class='vote-table'>")
        w("<tr><th>Voter</th><th>Vote</th></tr>")
        for voter, target in sorted(view.votes.items()):
            choice = "abstained" if target is None else replay.name(target)
            name = replay.name(voter)
            w(f"<tr data-who='{_e(name)}'><td>{_e(name)}</td><td>{_e(choice)}")
            ballot = last.get(voter)
            if ballot is not None and ballot.id is not None:
                for d in why_vote.get(ballot.id, []):
                    w(_why(d, replay))
            w("</td></tr>")
        w("</table></div></div>")
    for result in view.tally:
        w(f"<div class='tally'>{_e(_tally_text(result))}</div>")
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


def _tally_text(result: Mapping[str, object]) -> str:
    """ "Tally: Avery 4, Blake 1; abstained: Casey. Chosen: Avery." """
    raw = result.get("tally")
    pairs = raw if isinstance(raw, list | tuple) else []
    counts = ", ".join(
        f"{p[0]} {p[1]}" for p in pairs if isinstance(p, list | tuple) and len(p) == 2
    )
    abstained = result.get("abstained")
    held = ", ".join(str(x) for x in abstained) if isinstance(abstained, list | tuple) else ""
    tied = result.get("tied")
    chosen = result.get("chosen_name")
    text = f"Tally: {counts or 'no votes'}"
    if held:
        text += f"; abstained: {held}"
    text += "."
    if tied and isinstance(tied, list | tuple):
        text += f" Tied: {', '.join(str(x) for x in tied)}."
        if result.get("tie_broken_randomly"):
            text += " The tie was broken at random."
    text += f" Chosen: {chosen}." if chosen else " Nobody was chosen."
    return text


def _reveal(w: Callable[[str], None], replay: Replay, agents: Sequence[str]) -> None:
    """The reveal, and every person's guess."""
    named = [g for g in replay.guesses.values() if g is not None]
    spotted = sum(g in agents for g in named)
    w("<h2 id='reveal'>The reveal and the guesses</h2>")
    stories = [seat_story.story(s.character_name, s) for s in replay.seats if seat_story.mixed(s)]
    told = reveal_text(list(agents), spotted, len(replay.guesses), [t for t in stories if t])
    told = told or "No AI played."
    if replay.game.revealed_at is None:
        told += " (Not announced yet.)"
    w(f"<p id='reveal-text'>{_e(told)}</p>")
    if not replay.guesses:
        return
    w("<div class='scroll'><table id='guesses'><tr><th>Player</th><th>Their guess</th></tr>")
    for seat, guess in sorted(replay.guesses.items()):
        name = replay.name(seat)
        if guess is None:
            said = "no guess"
        else:
            said = f"{guess} ({'right' if guess in agents else 'wrong'})"
        w(f"<tr data-who='{_e(name)}'><td>{_e(name)}</td><td>{_e(said)}</td></tr>")
    w("</table></div>")


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
