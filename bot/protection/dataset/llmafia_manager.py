"""The Game-Manager's lines of a game played here, in LLMafia's own words.

Our live narration is ours ("Voting is open for 45 seconds…", "Kai changed their vote to Gray",
"Mafia wins! Roles: …"); LLMafia's analysis code (``analyze.py``) understands only the host
sentences of the release (its ``game_constants.py``), and stops on any other. So the export does
not copy our narration: it rebuilds the host's lines from the game's events, where and how the
release's host wrote them:

- public_manager_chat.txt: "Now it's Daytime for N minutes, …", "Now it's Nighttime for N
  minutes, …", "There is only one mafia member left, … cutting straight to voting!" (a night
  whose talk was skipped gets the night announcement and this line, as in the release, where
  our narration folds both into one line), "X was voted out. Their role was R" (also for the
  night's victim, as the release says it; R is "mafia" or "bystander").
- public_daytime_chat.txt: "Daytime has ended, now it's time to vote! Waiting for all players
  to vote..." and every day vote as "X voted for Y" (a changed vote is a new "X voted for Y").
- public_nighttime_chat.txt: the same for the night and the mafia's votes.

The release has no line for an abstention, a tie, a save or the game's end (who_wins.txt says
who won), so none is written. Names pass through ``name`` (the export's anonymised labels).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.protection.dataset.llmafia_model import MANAGER, ChatLine, Place

# The release's sentences (LLMafia game_constants.py), word for word.
DAY_START = "Now it's Daytime for {} minutes, everyone can communicate and see messages and votes."
NIGHT_START = (
    "Now it's Nighttime for {} minutes, only mafia can communicate and see messages and votes."
)
VOTING_TIME = "{} has ended, now it's time to vote! Waiting for all players to vote..."
CUTTING_TO_VOTE = (
    "There is only one mafia member left, so no need for discussion - cutting straight to voting!"
)
VOTED = "{} voted for {}"
VOTED_OUT = "{} was voted out. Their role was {}"


@dataclass(frozen=True)
class StoredEvent:
    """What the translation needs of a stored event row."""

    t: datetime
    kind: str
    payload: Mapping[str, Any]


def minutes_text(minutes: float) -> str:
    """How the release prints a phase length: its config number ("3", "1", "0.75")."""
    value = round(float(minutes), 2)
    return str(int(value)) if value.is_integer() else f"{value:g}"


def manager_lines(
    events: Iterable[StoredEvent],
    *,
    day_minutes: float,
    night_minutes: float,
    phase_label: Mapping[int, str],
    name: Callable[[str], str],
    is_mafia_role: Callable[[str], bool],
) -> list[ChatLine]:
    """The Game-Manager lines of one game, in event order. ``phase_label`` maps a phase's
    sequence number to its LLMafia label ("day-1", "night-1", ...)."""
    out: list[ChatLine] = []
    phase = ""
    night_announced: set[int] = set()

    def say(t: datetime, place: Place, text: str) -> None:
        out.append(ChatLine(t=t, phase=phase, place=place, speaker=MANAGER, text=text))

    for e in events:
        p = e.payload
        if e.kind == "phase_started":
            kind, number = str(p.get("phase")), int(p.get("number", 0))
            phase = phase_label.get(int(p.get("seq", 0)), phase)
            if kind == "day":
                say(e.t, "manager", DAY_START.format(minutes_text(day_minutes)))
            elif kind == "vote":
                say(e.t, "stage", VOTING_TIME.format("Daytime"))
            elif kind == "night":
                night_announced.add(number)
                say(e.t, "manager", NIGHT_START.format(minutes_text(night_minutes)))
            elif kind == "night_vote":
                if number not in night_announced:  # the talk was skipped: one mafia left
                    night_announced.add(number)
                    say(e.t, "manager", NIGHT_START.format(minutes_text(night_minutes)))
                    say(e.t, "manager", CUTTING_TO_VOTE)
                say(e.t, "den", VOTING_TIME.format("Nighttime"))
        elif e.kind == "vote_cast":
            target = p.get("target_name")
            voter = p.get("voter_name")
            if isinstance(target, str) and isinstance(voter, str):
                place: Place = "den" if p.get("night") else "stage"
                say(e.t, place, VOTED.format(name(voter), name(target)))
        elif e.kind == "player_eliminated" and p.get("cause") in ("vote", "night"):
            role = "mafia" if is_mafia_role(str(p.get("role"))) else "bystander"
            say(e.t, "manager", VOTED_OUT.format(name(str(p.get("name"))), role))
    return out
