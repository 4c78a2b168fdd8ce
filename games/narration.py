"""The Game-Manager's words for each event, shared by every renderer and the transcript.

Wording follows the LLMafia games ("Ziggy was voted out. Their role was mafia") so exported
logs read like the study's.
"""

from __future__ import annotations

from games.events import (
    Event,
    GameOver,
    GameStarted,
    InspectionResult,
    NightActionRecorded,
    NightResult,
    PhaseExtended,
    PhaseStarted,
    PlayerEliminated,
    PrivateNote,
    RoleAssigned,
    SoloWin,
    VoteCast,
    VoteResolved,
    is_draw,
)
from games.names import display_list
from games.roles import get_role

MANAGER = "Game-Manager"


def duration(seconds: float) -> str:
    """'2 minutes', '45 seconds', '1.5 minutes'."""
    if seconds >= 60:
        minutes = seconds / 60
        text = f"{minutes:.2f}".rstrip("0").rstrip(".")
        return f"{text} minute" + ("" if text == "1" else "s")
    text = f"{seconds:.1f}".rstrip("0").rstrip(".")
    return f"{text} second" + ("" if text == "1" else "s")


def role_card(event: RoleAssigned) -> str:
    lines = [f"You are {event.name}. Your role: {event.role}."]
    lines.append(get_role(event.role).description)
    if event.partners:
        lines.append(f"Your fellow mafia: {display_list(list(event.partners))}.")
    elif event.team == "mafia":
        lines.append("You are the only mafia.")
    return " ".join(lines)


def manager_line(event: Event) -> str | None:
    """The Game-Manager line for ``event``, or None when it is not announced as a line."""
    if isinstance(event, GameStarted):
        extra = (
            f" Special roles in play: {display_list(list(event.extra_roles))}."
            if (event.extra_roles)
            else ""
        )
        return (
            f"The game begins with {len(event.players)} players: "
            f"{display_list(list(event.players))}. {event.mafia_count} of them "
            f"{'is' if event.mafia_count == 1 else 'are'} mafia.{extra}"
        )
    if isinstance(event, RoleAssigned):
        return role_card(event)
    if isinstance(event, PhaseStarted):
        d = duration(event.seconds)
        if event.phase == "day":
            return (
                f"Now it's Daytime {event.number} for {d}, everyone can communicate "
                "and see messages. Voting opens after the discussion."
            )
        if event.phase == "vote":
            return (
                f"Voting is open for {d}: vote for who you think is mafia. You can change "
                "your vote until the time is up or everyone has voted."
            )
        if event.phase == "night":
            return f"Now it's Nighttime for {d}, only mafia can communicate and see messages."
        if event.phase == "night_vote":
            if event.talk_skipped:
                return (
                    f"Now it's Nighttime for {d}, only mafia can act. There is only one mafia "
                    "member alive, so no need for discussion - cutting straight to voting!"
                )
            return f"Mafia, vote now on who to kill tonight ({d})."
        return None
    if isinstance(event, PhaseExtended):
        return (
            f"The Game-Manager was away for a moment and the clock stood still: this phase "
            f"gets {duration(event.seconds)} back."
        )
    if isinstance(event, VoteCast):
        if event.target_name is None:
            return f"{event.voter_name} abstains."
        verb = "changed their vote to" if event.changed else "voted for"
        return f"{event.voter_name} {verb} {event.target_name}"
    if isinstance(event, VoteResolved):
        if event.chosen_name is not None:
            if event.tie_broken_randomly:
                return (
                    f"The vote was tied between {display_list(list(event.tied))}; "
                    f"chance picked {event.chosen_name}."
                )
            return None  # the elimination line says it
        if event.tied:
            target = "nobody is killed" if event.night else "nobody is voted out"
            return f"The vote is tied between {display_list(list(event.tied))}, so {target}."
        return (
            "No votes were cast, so nobody is killed."
            if event.night
            else ("No votes were cast, so nobody is voted out.")
        )
    if isinstance(event, PlayerEliminated):
        if event.role == "hidden":
            how = "killed during the night" if event.cause == "night" else "voted out"
            return f"{event.name} was {how}. Their role is hidden"
        if event.cause == "night":
            return f"{event.name} was killed during the night. Their role was {event.role}"
        return f"{event.name} was voted out. Their role was {event.role}"
    if isinstance(event, NightResult):
        return "Nobody was killed during the night." if event.victim is None else None
    if isinstance(event, InspectionResult):
        verdict = "IS mafia" if event.is_mafia else "is NOT mafia"
        return f"Your investigation: {event.target_name} {verdict}."
    if isinstance(event, PrivateNote):
        return note_line(event)
    if isinstance(event, SoloWin):
        return f"{event.name} ({_role_name(event.role)}) wins: {event.reason}."
    if isinstance(event, NightActionRecorded):
        return f"You chose to {event.verb} {event.target_name} tonight."
    if isinstance(event, GameOver):
        if is_draw(event.winner, event.reason):
            head = f"The game ends in a draw{event.reason.removeprefix('draw')}."
        elif event.winner is None:
            head = f"The game was stopped ({event.reason})."
        else:
            head = _winner_line(event.winner)
        roles = ", ".join(f"{n} ({r})" for n, r in event.roles)
        return f"{head} Roles: {roles}."
    return None


def _role_name(role: str) -> str:
    return role.replace("_", " ")


def _winner_line(winner: str) -> str:
    if winner == "mafia":
        return "Mafia wins!"
    if winner == "bystanders":
        return "Bystanders win!"
    return f"The {_role_name(winner)} wins!"


def note_line(event: PrivateNote) -> str:
    """A private result, in the booth's words."""
    who = event.target_name or "someone"
    names = display_list(list(event.names)) if event.names else "nobody"
    if event.result == "blocked":
        return f"Someone kept you busy tonight: your {event.verb} did nothing."
    if event.verb == "investigate":
        return f"Your investigation: {who}'s role is {_role_name(event.result)}."
    if event.verb == "track":
        return f"You followed {who}: they visited {names}."
    if event.verb == "watch":
        return f"You watched {who}: visited by {names}."
    if event.verb == "clean":
        return f"You cleaned up after {who}: their role was {_role_name(event.result)}."
    if event.verb == "target":
        return f"Your target: get {who} voted out by day."
    if event.verb == "became":
        return f"Your target {who} died, and not by a vote: you are now a jester."
    return f"{event.verb}: {event.result}."
