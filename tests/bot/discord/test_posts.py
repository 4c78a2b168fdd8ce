"""Where the Game-Manager's posts go, from the events alone (no Discord, no fake server)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import cast

from bot.discord.posts import (
    BOOTH_INTRO,
    DEN_INTRO,
    Post,
    eliminated_posts,
    graveyard_readers,
    open_act,
    phase_posts,
    resumed_posts,
    role_posts,
    seat_posts,
    track,
)
from bot.discord.rooms import Room
from games.config import GameConfig
from games.engine import new_game
from games.events import ChoicesOffered, GameStarted, PhaseStarted, PlayerEliminated, RoleAssigned
from games.state import GameState, PhaseKind

T0 = datetime(2026, 1, 1, tzinfo=UTC)
NAMES = ("Ash", "Bo", "Cy", "Di", "Ed", "Fay")
ROLES = ("mafia", "bystander", "doctor", "mafia", "detective", "bystander")
#: seats 0 (mafia), 1 (bystander), 2 (doctor) and 4 (detective) are people; 3 and 5 agents
HUMANS = {0: 100, 1: 101, 2: 102, 4: 104}


def table() -> Room:
    room = Room(game_id="g1", guild_id=1, channel_id=2, humans=dict(HUMANS), graveyard=True)
    track(room, GameStarted(t=T0, players=NAMES, mafia_count=2, extra_roles=("doctor",)))
    for seat, role in enumerate(ROLES):
        team = "mafia" if role == "mafia" else "bystanders"
        track(room, RoleAssigned(t=T0, seat=seat, name=NAMES[seat], role=role, team=team,
                                 partners=()))  # fmt: skip
    return room


def night_state(seq: int) -> GameState:
    """A game at the mafia's vote of a night (phase ``seq``), everyone alive."""
    state, _ = new_game(GameConfig(roles=("doctor", "detective")), list(NAMES), 3, T0)
    night = replace(state.phase, kind=PhaseKind.NIGHT_VOTE, number=1, seq=seq)
    return replace(state, phase=night)


def phase(kind: str, seq: int, number: int = 1, talk_skipped: bool = False) -> PhaseStarted:
    return PhaseStarted(
        t=T0,
        phase=kind,
        number=number,
        seq=seq,
        deadline=T0 + timedelta(minutes=3),
        seconds=180.0,
        talk_skipped=talk_skipped,
    )


def offered(room: Room, seat: int, seq: int, verb: str, targets: tuple[int, ...]) -> None:
    """The engine offers ``seat`` these ``targets`` (the adapter only shows them)."""
    e = ChoicesOffered(
        t=T0,
        visible_to=frozenset({seat}),
        seat=seat,
        phase_seq=seq,
        verb=verb,
        targets=targets,
        target_names=tuple(NAMES[t] for t in targets),
        can_abstain=verb in ("vote", "kill"),
    )
    track(room, e)


def booth_notes(posts: list[Post]) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for post in posts:
        if post.place == "booth" and post.seat is not None:
            out.setdefault(post.seat, []).append(post.text)
    return out


def test_track_keeps_the_table() -> None:
    room = table()
    assert room.started and room.alive == set(range(6))
    assert room.names[2] == "Cy" and room.roles[3] == "mafia"
    track(room, PlayerEliminated(t=T0, seat=1, name="Bo", role="bystander", cause="vote"))
    assert room.alive == {0, 2, 3, 4, 5}


def test_a_role_card_goes_to_its_booth_with_the_den_note_for_the_mafia() -> None:
    room = table()
    mafia = RoleAssigned(t=T0, seat=0, name="Ash", role="mafia", team="mafia", partners=("Di",))
    (post,) = role_posts(room, mafia, "You are Ash.")
    assert post == Post("booth", f"You are Ash.\n\n{BOOTH_INTRO}\n\n{DEN_INTRO}", seat=0)
    town = RoleAssigned(t=T0, seat=1, name="Bo", role="bystander", team="bystanders", partners=())
    (post,) = role_posts(room, town, "You are Bo.")
    assert DEN_INTRO not in post.text and post.seat == 1


def test_day_posts_the_announcement_and_a_note_in_each_living_human_booth() -> None:
    room = table()
    posts = phase_posts(room, phase("day", 2), "Now it's Daytime 1", "<t:99:R>")
    assert posts[0] == Post("stage", "Now it's Daytime 1")
    notes = booth_notes(posts)
    assert sorted(notes) == [0, 1, 2, 4]  # people only, never the agents' seats
    assert notes[1] == ["Day 1: discussion, ends <t:99:R>. Type here to talk."]
    assert not [p for p in posts if p.place == "den"]


def test_the_day_vote_hangs_its_menu_under_the_announcement() -> None:
    room = table()
    for seat in (0, 1, 2, 4, 5):  # seat 3 is offered nothing (say it cannot vote)
        offered(room, seat, 3, "vote", tuple(s for s in (0, 1, 2, 4, 5) if s != seat))
    posts = phase_posts(room, phase("vote", 3), "Voting is open", "<t:99:R>")
    stage = posts[0]
    assert stage.place == "stage" and stage.menu is not None
    # every character some voter was offered, in seat order, and abstaining
    assert stage.menu.names == ("Ash", "Bo", "Cy", "Ed", "Fay")
    assert stage.menu.kind == "vote" and stage.menu.seq == 3 and stage.menu.abstain
    assert "Vote with the menu" in booth_notes(posts)[1][0]


def test_no_choices_offered_no_menu() -> None:
    room = table()
    offered(room, 0, 2, "vote", (1, 2))  # a vote offered at another phase
    (stage, *_) = phase_posts(room, phase("vote", 3), "Voting is open", "<t:99:R>")
    assert stage.menu is None
    posts = phase_posts(room, phase("night", 4), "Nighttime", "<t:99:R>")
    assert not [p for p in posts if p.menu is not None or p.menus]


def test_night_menus_offer_exactly_the_engines_choices() -> None:
    room = table()
    offered(room, 2, 4, "protect", (0, 2, 3, 4, 5))  # the doctor: self yes, Bo (last night) no
    offered(room, 4, 4, "investigate", (0, 1, 2, 3, 5))
    posts = phase_posts(room, phase("night", 4), "Nighttime", "<t:99:R>")
    notes = booth_notes(posts)
    assert "talk with your partners" in notes[0][0]
    assert notes[1] == ["Night 1: the mafia talk, ends <t:99:R>. Only the mafia talk at night."]
    (den,) = [p for p in posts if p.place == "den"]
    assert den.text.startswith("Den, night 1: talk with your partners")
    assert not den.menus
    menus = {p.seat: p.menu for p in posts if p.place == "booth" and p.menu is not None}
    assert sorted(cast("dict[int, object]", menus)) == [2, 4]
    doctor, detective = menus[2], menus[4]
    assert doctor is not None and detective is not None
    assert doctor.names == ("Ash", "Cy", "Di", "Ed", "Fay") and doctor.verb == "protect"
    assert not doctor.abstain and doctor.kind == "act" and doctor.seq == 4
    assert detective.names == ("Ash", "Bo", "Cy", "Di", "Fay")
    assert notes[2][-1] == "Choose who to protect tonight:"


def test_the_night_vote_gives_each_human_mafia_a_kill_menu_in_the_den() -> None:
    room = table()
    offered(room, 2, 4, "protect", (0, 2, 3, 4, 5))
    for mafia in (0, 3):
        offered(room, mafia, 5, "kill", (1, 2, 4, 5))
    posts = phase_posts(room, phase("night_vote", 5), None, "<t:99:R>")
    assert not [p for p in posts if p.place == "stage"]
    (den,) = [p for p in posts if p.place == "den"]
    assert sorted(den.menus) == [0]  # the only human mafia (seat 3 is an agent)
    kill = den.menus[0]
    assert kill.kind == "kill" and kill.seq == 5 and kill.names == ("Bo", "Cy", "Ed", "Fay")
    # the doctor's menu was offered at the night's talk, not again
    assert not [p for p in posts if p.place == "booth" and p.menu is not None]


def test_an_unused_night_action_stays_open_until_dawn() -> None:
    room = table()
    state = night_state(seq=5)
    offered(room, 2, 4, "protect", (0, 2, 3, 4, 5))
    found = open_act(room, state, 2)
    assert found is not None and found.phase_seq == 4  # offered at the talk, still open
    (post,) = seat_posts(room, state, 2)  # a substitute's new booth gets it again
    assert post.menu is not None and post.menu.seq == 4
    assert open_act(room, replace(state, night_actions={2: 0}), 2) is None  # used
    assert open_act(room, night_state(seq=7), 2) is None  # an earlier night's


def test_an_eliminated_person_is_told_in_their_booth_and_an_agent_is_not() -> None:
    room = table()
    room.graveyard = False
    bo = PlayerEliminated(t=T0, seat=1, name="Bo", role="bystander", cause="vote")
    track(room, bo)
    (post,) = eliminated_posts(room, bo)
    assert post.seat == 1 and "not relayed" in post.text
    agent = PlayerEliminated(t=T0, seat=5, name="Fay", role="bystander", cause="vote")
    track(room, agent)
    assert eliminated_posts(room, agent) == []


def test_the_graveyard_is_told_of_every_death_alike_an_ais_too() -> None:
    """The graveyard is the dead people's booths (no thread whose member list says who is a
    person): each death, a person's or the AI's, is told to the dead in the same words."""
    room = table()
    bo = PlayerEliminated(t=T0, seat=1, name="Bo", role="bystander", cause="vote")
    track(room, bo)
    (post,) = eliminated_posts(room, bo)
    assert post.seat == 1 and "graveyard" in post.text and "never to the living" in post.text
    for seat, name in ((5, "Fay"), (2, "Cy")):  # the agent, then a person
        death = PlayerEliminated(t=T0, seat=seat, name=name, role="bystander", cause="night")
        track(room, death)
        told = [(p.seat, p.text) for p in eliminated_posts(room, death)]
        assert told[0] == (1, f"{name} has joined the graveyard.")
    assert graveyard_readers(room) == [1, 2]


def test_after_a_restart_the_current_phases_menus_come_back_from_the_offers() -> None:
    room = table()
    state = night_state(seq=5)
    offered(room, 2, 4, "protect", (0, 2, 3, 4, 5))
    offered(room, 4, 4, "investigate", (0, 1, 2, 3, 5))
    offered(room, 0, 5, "kill", (1, 2, 4, 5))
    posts = resumed_posts(room, replace(state, night_actions={4: 0}), "<t:99:R>")
    assert posts[0].place == "stage" and "back after a restart" in posts[0].text
    (den,) = [p for p in posts if p.place == "den"]
    assert sorted(den.menus) == [0] and den.menus[0].names == ("Bo", "Cy", "Ed", "Fay")
    acts = [p for p in posts if p.place == "booth"]
    assert [p.seat for p in acts] == [2]  # the detective has acted tonight already
