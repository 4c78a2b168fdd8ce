"""What the Game-Manager posts for an engine event, and where: pure functions, no Discord calls.

The renderer (`bot.discord.render`) feeds every event through `track` (the adapter's picture of
the table: who is alive, names, roles, the choices each seat has been offered) and the
`*_posts` functions, and hands the resulting `Post` specs to the notifier. Keeping this apart
from the sending makes where a line goes (stage, one booth, the den) and which menu hangs
under it testable on its own.

Menus carry character names in seat order, exactly the seats the engine offered
(`games.events.ChoicesOffered`); nothing here decides whom a seat may target.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Literal

from bot.discord.rooms import Room
from bot.table.status import phase_label
from games.events import (
    ChoicesOffered,
    Event,
    GameStarted,
    PhaseStarted,
    PlayerEliminated,
    RoleAssigned,
)
from games.narration import role_card
from games.roles import get_role, registered_roles
from games.state import GameState, PhaseKind

BOOTH_INTRO = (
    "This is your booth: only you and the Game-Manager can see it. Type here to talk. By day "
    "your lines appear on the stage (the game channel) under your character name; at night, if "
    "you are mafia, in your partners' booths (and theirs in yours). Nobody sees your account "
    "name, and one of the players is an AI."
)
DEN_INTRO = (
    "As mafia, your booth is also your den: what you type here at night reaches your partners, "
    "and their night lines appear here under their character names."
)
MenuKind = Literal["vote", "kill", "act"]


@dataclass(frozen=True)
class Menu:
    """A select menu for one phase: ``names`` in seat order (an abstain option when
    ``abstain``); ``verb`` is the night action's (``act`` menus)."""

    game_id: str
    kind: MenuKind
    seq: int
    names: tuple[str, ...]
    abstain: bool = False
    verb: str | None = None


@dataclass(frozen=True)
class Post:
    """One Game-Manager post: on the ``stage``, in ``seat``'s ``booth``, or in the ``den``
    (each reader's booth; ``audience`` the seats the event was visible to, ``menus`` each
    reader's own menu)."""

    place: Literal["stage", "booth", "den"]
    text: str
    seat: int | None = None
    menu: Menu | None = None
    audience: frozenset[int] | None = None
    menus: Mapping[int, Menu] = field(default_factory=dict)


def seat_card(state: GameState, seat: int) -> str:
    """The role card of ``seat`` as the game stands (for a new booth mid-game: a substitute's,
    or one that replaced a deleted booth), with the den note for the mafia."""
    me = state.seats[seat]
    partners = (
        tuple(s.name for s in state.seats if s.is_mafia and s.index != seat) if me.is_mafia else ()
    )
    card = role_card(
        RoleAssigned(
            t=state.phase.started_at,
            seat=seat,
            name=me.name,
            role=me.role,
            team=get_role(me.role).team,
            partners=partners,
        )
    )
    return f"{card}\n\n{DEN_INTRO}" if me.is_mafia else card


def is_mafia(room: Room, seat: int) -> bool:
    return get_role(room.roles.get(seat, "bystander")).team == "mafia"


# --- the table as the events tell it ---------------------------------------------------------


def track(room: Room, e: Event) -> None:
    """Update the room's picture of the table with one event (before its posts are made)."""
    if isinstance(e, GameStarted):
        room.started = True
        room.alive = set(range(len(e.players)))
        room.names = dict(enumerate(e.players))
    elif isinstance(e, RoleAssigned):
        room.roles[e.seat] = e.role
    elif isinstance(e, PlayerEliminated):
        room.alive.discard(e.seat)
    elif isinstance(e, ChoicesOffered):
        offer(room, e)


def role_posts(room: Room, e: RoleAssigned, line: str | None) -> list[Post]:
    if line is None:
        return []
    den = f"\n\n{DEN_INTRO}" if e.team == "mafia" else ""
    return [Post("booth", f"{line}\n\n{BOOTH_INTRO}{den}", seat=e.seat)]


# --- menus: the engine's choices --------------------------------------------------------------

#: a choice's verb -> the menu that offers it
MENU_KINDS: dict[str, MenuKind] = {
    "vote": "vote",
    "kill": "kill",
    "investigate": "act",
    "protect": "act",
}


def offer(room: Room, e: ChoicesOffered) -> None:
    """Keep a seat's newest choices of each kind (a night action's stays valid until dawn)."""
    room.offers[(e.seat, e.verb)] = e


def menu_of(room: Room, e: ChoicesOffered) -> Menu:
    kind = MENU_KINDS.get(e.verb, "act")  # every role's own night verb is an action menu
    verb = e.verb if kind == "act" else None
    return Menu(room.game_id, kind, e.phase_seq, e.target_names, e.can_abstain, verb)


def offers_now(room: Room, seq: int, verbs: AbstractSet[str]) -> list[ChoicesOffered]:
    """The choices offered at phase ``seq`` with one of ``verbs``, in seat order."""
    found = [o for (_, verb), o in room.offers.items() if verb in verbs and o.phase_seq == seq]
    return sorted(found, key=lambda o: o.seat)


def vote_menu(room: Room, seq: int) -> Menu | None:
    """The day vote's menu on the stage, shared by every voter: each character some voter was
    offered, in seat order (the engine refuses a voter's own name, with a reason)."""
    offered = offers_now(room, seq, {"vote"})
    if not offered:
        return None
    names = {t: n for o in offered for t, n in zip(o.targets, o.target_names, strict=True)}
    abstain = any(o.can_abstain for o in offered)
    return Menu(room.game_id, "vote", seq, tuple(names[t] for t in sorted(names)), abstain)


def kill_menus(room: Room, seq: int) -> dict[int, Menu]:
    """Each human mafia's own kill menu."""
    return {
        o.seat: menu_of(room, o) for o in offers_now(room, seq, {"kill"}) if o.seat in room.humans
    }


def act_post(room: Room, e: ChoicesOffered) -> Post | None:
    """A human night actor's menu (detective, doctor, escort...)."""
    if e.seat not in room.humans:
        return None
    menu = menu_of(room, e)
    return Post("booth", f"Choose who to {e.verb} tonight:", seat=e.seat, menu=menu)


def act_posts(room: Room, seq: int) -> list[Post]:
    posts = (act_post(room, o) for o in offers_now(room, seq, NIGHT_VERBS))
    return [p for p in posts if p is not None]


#: every role's night action verb (investigate, protect, block, track...)
NIGHT_VERBS = frozenset(
    verb for verb in (get_role(r).night_verb for r in registered_roles()) if verb is not None
)


def open_act(room: Room, state: GameState, seat: int) -> ChoicesOffered | None:
    """The night action ``seat`` was offered tonight and has not used yet."""
    p = state.phase
    if not p.kind.is_night or seat in state.night_actions:
        return None
    mine = [o for (s, verb), o in room.offers.items() if s == seat and verb in NIGHT_VERBS]
    # tonight's: offered at this phase or the night's talk just before it
    tonight = [o for o in mine if o.phase_seq >= p.seq - 1]
    return max(tonight, key=lambda o: o.phase_seq) if tonight else None


# --- phases ----------------------------------------------------------------------------------


def hint(kind: PhaseKind, mafia: bool) -> str:
    """What a living player can do in a phase, for their booth."""
    if kind is PhaseKind.DAY:
        return "Type here to talk."
    if kind is PhaseKind.VOTE:
        return "Vote with the menu under the Game-Manager's message on the stage."
    if not mafia:
        return "Only the mafia talk at night."
    if kind is PhaseKind.NIGHT:
        return "Type here to talk with your partners; their lines appear here."
    return "Vote with the mafia's menu here."


def phase_posts(room: Room, e: PhaseStarted, line: str | None, when: str) -> list[Post]:
    """The announcement on the stage (with the day vote's menu), each living human's booth
    note and night menu, then the den's (a mafia's booth reads: the phase, then the den)."""
    kind = PhaseKind(e.phase)
    posts: list[Post] = []
    if line is not None:
        menu = vote_menu(room, e.seq) if kind is PhaseKind.VOTE else None
        posts.append(Post("stage", line, menu=menu))
    label = phase_label(e.phase, e.number)
    acts = {p.seat: p for p in act_posts(room, e.seq)}
    for seat in sorted(room.alive):
        if seat not in room.humans:
            continue
        posts.append(
            Post("booth", f"{label}, ends {when}. {hint(kind, is_mafia(room, seat))}", seat=seat)
        )
        if seat in acts:
            posts.append(acts[seat])
    if kind is PhaseKind.NIGHT:
        posts.append(Post("den", f"Den, night {e.number}: talk with your partners until {when}."))
    elif kind is PhaseKind.NIGHT_VOTE:
        posts.append(
            Post(
                "den",
                f"Den, night {e.number}: choose who to kill, until {when}. A split vote kills "
                "nobody.",
                menus=kill_menus(room, e.seq),
            )
        )
    return posts


def resumed_posts(room: Room, state: GameState, when: str) -> list[Post]:
    """After a restart: the Game-Manager is back, and the current phase's menus again (their
    announcement may have been lost with the old process)."""
    p = state.phase
    text = (
        f"The Game-Manager is back after a restart. {phase_label(p.kind.value, p.number)} goes "
        f"on, ends {when}."
    )
    menu = vote_menu(room, p.seq) if p.kind is PhaseKind.VOTE else None
    posts = [Post("stage", text, menu=menu)]
    if p.kind is PhaseKind.NIGHT_VOTE:
        posts.append(Post("den", "The night vote goes on:", menus=kill_menus(room, p.seq)))
    for seat in sorted(room.alive):
        posts.extend(night_menu_posts(room, state, seat))
    return posts


def seat_posts(room: Room, state: GameState, seat: int) -> list[Post]:
    """The menus of the current phase for one seat's booth (a substitute's new booth: the old
    booth's menus went with it)."""
    if state.over or seat not in room.alive:
        return []
    posts: list[Post] = []
    kill = kill_menus(room, state.phase.seq).get(seat)
    if state.phase.kind is PhaseKind.NIGHT_VOTE and kill is not None:
        posts.append(Post("booth", "The night vote goes on:", seat=seat, menu=kill))
    return posts + night_menu_posts(room, state, seat)


def night_menu_posts(room: Room, state: GameState, seat: int) -> list[Post]:
    """A human detective's or doctor's menu, at night, if they have not acted yet."""
    found = open_act(room, state, seat)
    post = act_post(room, found) if found is not None else None
    return [] if post is None else [post]


# --- deaths and the end ----------------------------------------------------------------------


def graveyard_readers(room: Room) -> list[int]:
    """The seats whose booths are the graveyard: the dead people (every dead seat's lines go
    there, but only people read). There is no graveyard thread, whose member list would tell
    the dead which of them was a person and so who the AI was."""
    return sorted(s for s in room.humans if room.started and s not in room.alive)


def eliminated_posts(room: Room, e: PlayerEliminated) -> list[Post]:
    posts: list[Post] = []
    if room.graveyard:  # every death joins the graveyard, an AI's too, in the same words
        joined = f"{e.name} has joined the graveyard."
        posts += [Post("booth", joined, seat=s) for s in graveyard_readers(room) if s != e.seat]
    if e.seat not in room.humans:
        return posts
    if room.graveyard:
        text = (
            "You have been eliminated. You can keep watching the stage. You are in the "
            "graveyard now: what you type here goes to the other eliminated players, never to "
            "the living. Thanks for playing!"
        )
    else:
        text = (
            "You have been eliminated. You can keep watching the stage; from now on your lines "
            "are not relayed. Thanks for playing!"
        )
    return [*posts, Post("booth", text, seat=e.seat)]


STOPPED = "The game was stopped. Thanks for playing!"
