"""Phase labels, time left and the status text, the same on every platform."""

from __future__ import annotations

from bot.service.live import LiveGame
from games.events import is_draw
from games.names import display_list
from games.state import PhaseKind

PHASE_NAMES = {
    PhaseKind.DAY: "Day {n}: discussion",
    PhaseKind.VOTE: "Day {n}: vote",
    PhaseKind.NIGHT: "Night {n}: the mafia talk",
    PhaseKind.NIGHT_VOTE: "Night {n}: the mafia vote",
    PhaseKind.OVER: "Game over",
}


def phase_label(kind: PhaseKind | str, number: int) -> str:
    """The label of a phase ("Day 2: vote", "Night 1: the mafia talk"); ``kind`` may be the
    kind's value, as events carry it."""
    try:
        kind = PhaseKind(kind)
    except ValueError:
        return f"{str(kind).replace('_', ' ').capitalize()} {number}"
    return PHASE_NAMES[kind].format(n=number)


def seconds_left(game: LiveGame) -> float | None:
    """Real seconds until the phase deadline (what people experience, whatever the speed)."""
    state = game.state
    if state is None or state.phase.deadline is None:
        return None
    return game.clock.real_delay_until(state.phase.deadline)


def status_text(game: LiveGame, seat: int | None) -> str:
    """Phase, time left, who is alive and out; the asker's own character and role when
    ``seat`` is theirs (show it privately only)."""
    state = game.state
    if state is None:
        humans = sum(not s.is_agent for s in game.seats)
        return f"Game {game.id} is in the lobby ({humans} joined), status: {game.status}."
    lines = [f"Game {game.id}: " + phase_label(state.phase.kind, state.phase.number)]
    left = seconds_left(game)
    if left is not None:
        lines[0] += f", {int(left) // 60}:{int(left) % 60:02d} left"
    alive = [s.name for s in state.seats if s.alive]
    lines.append(f"Alive ({len(alive)}): {display_list(alive)}")
    out = [f"{s.name} ({s.role})" for s in state.seats if not s.alive]
    if out:
        lines.append("Out: " + ", ".join(out))
    if state.phase.kind is PhaseKind.VOTE and state.votes:
        votes = [
            f"{state.seats[v].name} -> {state.seats[t].name if t is not None else 'abstain'}"
            for v, t in state.votes.items()
        ]
        lines.append("Votes so far: " + ", ".join(votes))
    if seat is not None and 0 <= seat < len(state.seats):
        me = state.seats[seat]
        mine = f"You are {me.name}, {me.role}" + ("" if me.alive else " (out, watching)")
        if me.is_mafia:
            partners = [s.name for s in state.seats if s.is_mafia and s.index != seat]
            if partners:
                mine += f"; fellow mafia: {display_list(partners)}"
        lines.append(mine + ".")
    if state.over:
        drawn = is_draw(state.winner, state.end_reason)
        nobody = "nobody (a draw)" if drawn else "nobody (stopped)"
        lines.append("Winner: " + (state.winner or nobody) + ".")
    return "\n".join(lines)
