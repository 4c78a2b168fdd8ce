"""What one seat knows, built only from the events that seat was given.

The LLM agent never reads game state: everything its prompts say comes from here, and this
is filled only by :meth:`SeatKnowledge.observe`, which drops any event the seat may not see.
So a bystander's prompts can only ever contain what a bystander was shown (no den lines, no
mafia names), whatever the caller passes in.

Prompts use a bounded *window* of the chat (the last K lines, then trimmed to a character
cap), plus a status block whose size depends on the number of players, not on the length of
the game. That keeps tokens per scheduler call flat however long the game runs; facts that
must not scroll away (who is out and what they were, inspection results, votes in the
current phase) live in the status block rather than in old chat lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from games.events import (
    ChoicesOffered,
    Event,
    GameOver,
    GameStarted,
    InspectionResult,
    MessageAccepted,
    NightActionRecorded,
    PhaseExtended,
    PhaseStarted,
    PlayerEliminated,
    PrivateNote,
    RoleAssigned,
    VoteCast,
    visible,
)
from games.names import display_list, names_in_text
from games.narration import MANAGER, manager_line
from games.roles import get_role
from games.state import PhaseKind

__all__ = ["ChatEntry", "Elimination", "SeatKnowledge", "VoteSeen", "clock_text"]

Room = Literal["stage", "den"]
#: longest single line shown in a prompt; a wall of text is cut, not allowed to evict others
MAX_LINE_CHARS = 300


def clock_text(t: datetime) -> str:
    """'HH:MM:SS' as in the chat lines."""
    return t.strftime("%H:%M:%S")


@dataclass(frozen=True)
class ChatEntry:
    """A chat line as the seat saw it. ``seat`` is None for Game-Manager lines."""

    t: datetime
    place: str
    speaker: str
    text: str
    seat: int | None
    phase_seq: int

    @property
    def is_manager(self) -> bool:
        return self.seat is None

    def render(self, max_chars: int = MAX_LINE_CHARS) -> str:
        text = " ".join(self.text.split())
        if len(text) > max_chars:
            text = text[: max_chars - 1].rstrip() + "…"
        return f"[{clock_text(self.t)}] {self.speaker}: {text}"


@dataclass(frozen=True)
class VoteSeen:
    phase_seq: int
    voter: str
    target: str | None
    night: bool
    t: datetime


@dataclass(frozen=True)
class Elimination:
    name: str
    role: str
    cause: str  # "vote" | "night"
    number: int  # day or night number


class SeatKnowledge:
    """The seat's view of the game. Feed it every event the seat receives, in order."""

    def __init__(self, seat: int, name: str) -> None:
        self.seat = seat
        self.name = name
        self.players: tuple[str, ...] = ()
        self.mafia_count = 0
        self.extra_roles: tuple[str, ...] = ()
        self.alive: set[int] = set()
        self.role: str | None = None
        self.team: str | None = None
        self.partners: tuple[str, ...] = ()
        self.eliminations: list[Elimination] = []
        self.chat_opened: datetime | None = None
        # current phase
        self.phase: PhaseKind | None = None
        self.phase_number = 0
        self.phase_seq = 0
        self.phase_start: datetime | None = None
        self.deadline: datetime | None = None
        self.phase_seconds = 0.0
        self.talk_skipped = False
        self.over = False
        self.winner: str | None = None
        # what was said and done
        self.lines: list[ChatEntry] = []
        #: player messages (not Game-Manager lines) in order, every phase
        self.messages: list[ChatEntry] = []
        self.own_lines: list[str] = []
        self.phase_own = 0
        self.phase_total = 0
        self.votes: list[VoteSeen] = []
        self.current_votes: dict[str, str | None] = {}
        self.inspections: dict[str, bool] = {}
        #: private results of other roles (tracking, watching, exact roles...), as told
        self.private_results: list[str] = []
        #: night number -> the player this seat acted on that night
        self.night_targets: dict[int, str] = {}
        #: what the engine last offered this seat (its vote, or its night action)
        self.offers: dict[str, ChoicesOffered] = {}

    # --- taking in events ---------------------------------------------------------------------

    def observe(self, event: Event) -> bool:
        """Learn from ``event``; False (and nothing learnt) when this seat may not see it."""
        if not visible(event, self.seat):
            return False
        if isinstance(event, GameStarted):
            self.players = tuple(event.players)
            self.alive = set(range(len(event.players)))
            self.mafia_count = event.mafia_count
            self.extra_roles = tuple(event.extra_roles)
            self.chat_opened = event.t
        elif isinstance(event, RoleAssigned):
            if event.seat == self.seat:
                self.role, self.team, self.partners = event.role, event.team, event.partners
                self.name = event.name
            return True  # the role card is static knowledge, not a chat line
        elif isinstance(event, PhaseStarted):
            self.phase = PhaseKind(event.phase)
            self.phase_number = event.number
            self.phase_seq = event.seq
            self.phase_start = event.t
            self.deadline = event.deadline
            self.phase_seconds = event.seconds
            self.talk_skipped = event.talk_skipped
            self.phase_own = self.phase_total = 0
            self.current_votes = {}
            if self.chat_opened is None:
                self.chat_opened = event.t
        elif isinstance(event, PhaseExtended):
            if event.seq == self.phase_seq:  # time given back: the phase ends later
                self.deadline = event.deadline
                self.phase_seconds += event.seconds
        elif isinstance(event, MessageAccepted):
            entry = ChatEntry(
                event.t, event.place, event.name, event.text, event.seat, event.phase_seq
            )
            self.lines.append(entry)
            self.messages.append(entry)
            if event.seat == self.seat:
                self.own_lines.append(event.text)
            if event.phase_seq == self.phase_seq:
                self.phase_total += 1
                if event.seat == self.seat:
                    self.phase_own += 1
            return True
        elif isinstance(event, VoteCast):
            seen = VoteSeen(
                event.phase_seq, event.voter_name, event.target_name, event.night, event.t
            )
            self.votes.append(seen)
            if event.phase_seq == self.phase_seq:
                self.current_votes[event.voter_name] = event.target_name
        elif isinstance(event, PlayerEliminated):
            self.alive.discard(event.seat)
            self.eliminations.append(
                Elimination(event.name, event.role, event.cause, self.phase_number)
            )
        elif isinstance(event, InspectionResult):
            if event.seat == self.seat:
                self.inspections[event.target_name] = event.is_mafia
        elif isinstance(event, PrivateNote):
            if event.seat == self.seat:
                self.private_results.append(manager_line(event) or "")
        elif isinstance(event, NightActionRecorded):
            if event.seat == self.seat:
                self.night_targets[self.phase_number] = event.target_name
        elif isinstance(event, ChoicesOffered):
            if event.seat == self.seat:
                self.offers["night" if event.verb not in ("vote", "kill") else "vote"] = event
            return True  # a menu, not a chat line
        elif isinstance(event, GameOver):
            self.over = True
            self.winner = event.winner
        line = manager_line(event)
        if line is not None:
            self.lines.append(ChatEntry(event.t, event.place, MANAGER, line, None, self.phase_seq))
        return True

    # --- who and what -------------------------------------------------------------------------

    @property
    def names(self) -> dict[int, str]:
        return dict(enumerate(self.players))

    @property
    def is_mafia(self) -> bool:
        return self.team == "mafia"

    @property
    def me_alive(self) -> bool:
        return self.seat in self.alive

    def alive_names(self) -> list[str]:
        return [self.players[i] for i in sorted(self.alive)]

    def partner_seats(self) -> set[int]:
        wanted = {p.casefold() for p in self.partners}
        return {i for i, n in enumerate(self.players) if n.casefold() in wanted}

    def seat_of(self, name: str) -> int | None:
        folded = name.casefold()
        return next((i for i, n in enumerate(self.players) if n.casefold() == folded), None)

    @property
    def night_verb(self) -> str | None:
        return None if self.role is None else get_role(self.role).night_verb

    def uses_left(self) -> int | None:
        """How many more nights this seat's limited ability may be used, counting tonight's
        (None: unlimited, or no ability). The engine spends a use only when the action is
        carried out (not when blocked), so the nights acted give a floor; while the engine
        offers the action, at least one is left."""
        role = None if self.role is None else get_role(self.role)
        if role is None or role.uses is None or role.ability is None:
            return None
        left = max(role.uses - len(self.night_targets), 0)
        return max(left, 1) if self.night_targets_now() else left

    # --- what this seat may do now ------------------------------------------------------------

    def room(self) -> Room | None:
        """Where this seat can talk now, or None (dead, a bystander at night, game over)."""
        if self.over or self.phase is None or not self.me_alive or self.role is None:
            return None
        if self.phase.is_day:
            return "stage"
        if self.is_mafia and not self.talk_skipped and self.partner_seats() & self.alive:
            return "den"
        return None

    def room_size(self) -> int:
        """N: the living players in the room where this seat talks now."""
        if self.room() == "den":
            return len((self.partner_seats() | {self.seat}) & self.alive)
        return max(len(self.alive), 1)

    def share(self) -> float:
        """This seat's share of this phase's player messages (0 when nobody spoke)."""
        return self.phase_own / self.phase_total if self.phase_total else 0.0

    def below_share(self) -> bool:
        """Share below 1/N: the agent should take part rather than listen."""
        return self.share() < 1.0 / self.room_size()

    def votes_now(self) -> bool:
        """This seat has a vote in the current phase."""
        if self.over or not self.me_alive:
            return False
        if self.phase is PhaseKind.VOTE:
            return True
        return self.phase is PhaseKind.NIGHT_VOTE and self.is_mafia

    def acts_tonight(self) -> bool:
        """This seat has a night action still to take in the current night."""
        if self.over or not self.me_alive or self.night_verb is None or self.phase is None:
            return False
        return self.phase.is_night and self.phase_number not in self.night_targets

    def vote_targets(self) -> dict[int, str]:
        """Legal vote targets now, as the engine offered them (`ChoicesOffered`)."""
        offer = self.offers.get("vote")
        if not self.votes_now() or offer is None or offer.phase_seq != self.phase_seq:
            return {}
        return dict(zip(offer.targets, offer.target_names, strict=True))

    def night_targets_now(self) -> dict[int, str]:
        """Legal night-action targets now, as the engine offered them (once a night, at its
        first phase: still valid in the mafia's vote that follows the night talk)."""
        offer = self.offers.get("night")
        if not self.acts_tonight() or offer is None:
            return {}
        tonight = offer.phase_seq == self.phase_seq or (
            self.phase is PhaseKind.NIGHT_VOTE and offer.phase_seq == self.phase_seq - 1
        )
        return dict(zip(offer.targets, offer.target_names, strict=True)) if tonight else {}

    def addressed_in(self, entries: list[ChatEntry]) -> bool:
        """Someone else named this seat's character in one of ``entries``."""
        me = {self.seat: self.name}
        return any(e.seat != self.seat and names_in_text(e.text, me) for e in entries)

    def messages_by_others_since(self, index: int) -> list[ChatEntry]:
        """Player messages by others after the first ``index`` messages."""
        return [e for e in self.messages[index:] if e.seat != self.seat]

    # --- prompt material ----------------------------------------------------------------------

    def window(self, max_lines: int, max_chars: int) -> list[str]:
        """The recent chat as ``[HH:MM:SS] Name: text`` lines, oldest first, bounded.

        By day the den is left out (a mafia agent must not quote it on the stage); in the den
        the agent sees both, in order, since night talk builds on the day.
        """
        return [entry.render() for entry in self.window_entries(max_lines, max_chars)]

    def window_entries(self, max_lines: int, max_chars: int) -> list[ChatEntry]:
        """The entries :meth:`window` shows, oldest first (its first one tells memory where
        the window starts, so key moments it already shows are not repeated)."""
        room = self.room()
        show_den = room == "den" or (self.phase is not None and self.phase.is_night)
        picked: list[ChatEntry] = []
        total = 0
        for entry in reversed(self.lines):
            if entry.place == "den" and not show_den:
                continue
            size = len(entry.render()) + 1
            if len(picked) >= max_lines or total + size > max_chars:
                break
            picked.append(entry)
            total += size
        picked.reverse()
        return picked

    def settled_window(
        self, max_lines: int, max_chars: int, keep: int, page: int
    ) -> tuple[list[ChatEntry], int]:
        """The recent chat for a prompt, arranged for prompt caching: (entries oldest first,
        how many of them are *settled*).

        Unlike :meth:`window_entries` (always the last lines), the window's first line stays put
        while the chat grows, so every prompt repeats the one before it line for line and only
        adds at the end; once more than ``max_lines`` lines (or ``max_chars`` characters) would
        be shown, the start jumps forward so that ``keep`` or more lines remain (the lines run
        ``keep`` + 1 to ``max_lines``, in whole steps of ``max_lines - keep``). The settled lines
        are the window's whole ``page``-line pages from its start: a prompt sends them as a block
        that stays byte-identical from call to call until the next page fills. Which lines are
        shown (den or not) follows :meth:`window_entries`."""
        room = self.room()
        show_den = room == "den" or (self.phase is not None and self.phase.is_night)
        seen = [e for e in self.lines if show_den or e.place != "den"]
        n = len(seen)
        step = max(max_lines - keep, 1)
        start = max(0, -(-(n - max_lines) // step) * step)
        sizes = [len(e.render()) + 1 for e in seen[start:]]
        total = sum(sizes)
        page = max(page, 1)
        while total > max_chars and n - start > 1:
            drop = min(page, n - start - 1)
            total -= sum(sizes[:drop])
            del sizes[:drop]
            start += drop
        shown = seen[start:]
        return shown, (len(shown) // page) * page

    def phase_label(self) -> str:
        n = self.phase_number
        return {
            PhaseKind.DAY: f"Daytime {n}, discussion",
            PhaseKind.VOTE: f"Daytime {n}, voting (talk goes on)",
            PhaseKind.NIGHT: f"Nighttime {n}, mafia talk",
            PhaseKind.NIGHT_VOTE: f"Nighttime {n}, mafia vote",
            PhaseKind.OVER: "the game is over",
        }.get(self.phase or PhaseKind.OVER, "not started")

    def status(self) -> str:
        """Facts that must not scroll out of the window; size grows with players, not time."""
        out: list[str] = []
        if self.phase is not None and self.deadline is not None:
            out.append(f"Phase: {self.phase_label()}, until [{clock_text(self.deadline)}].")
        alive = self.alive_names()
        if len(alive) == len(self.players):
            out.append("Still playing: everyone at the table.")
        else:
            out.append(f"Still playing: {display_list(alive)}.")
        if self.eliminations:
            gone = [
                f"{e.name} ({e.role}, voted out on day {e.number})"
                if e.cause == "vote"
                else f"{e.name} ({e.role}, killed in night {e.number})"
                for e in self.eliminations
            ]
            out.append(f"Out of the game: {'; '.join(gone)}.")
        if self.is_mafia and self.partners:
            alive = [p for p in self.partners if self.seat_of(p) in self.alive]
            out.append(f"Your fellow mafia still in: {display_list(alive)}.")
        if self.inspections:
            found = [
                f"{n} {'IS' if is_mafia else 'is NOT'} mafia"
                for n, is_mafia in self.inspections.items()
            ]
            out.append(f"Your investigations: {'; '.join(found)}.")
        if self.private_results:
            out.append(f"What your role told you: {' '.join(self.private_results)}")
        if self.night_targets and self.role == "doctor":
            last = self.night_targets.get(self.phase_number - 1)
            if last is not None and self.phase is not None and self.phase.is_night:
                out.append(f"Last night you protected {last}.")
        if self.current_votes:
            cast = [
                f"{voter} -> {target or 'abstain'}" for voter, target in self.current_votes.items()
            ]
            out.append(f"Votes so far: {', '.join(cast)}.")
        if self.room() is not None:
            out.append(
                f"This phase you sent {self.phase_own} of the {self.phase_total} player messages "
                f"({self.room_size()} players in the room)."
            )
        return "\n".join(out)
