"""Every shipped setup plays to an end with baseline agents in every seat, and no agent makes
an act its role can't (a refused intent would show a hidden role to the table)."""

from __future__ import annotations

import random

import pytest

from agent.balance import measure
from agent.fastsim import EPOCH, simulate_fast
from agent.knowledge import SeatKnowledge
from agent.prompting import _role_note
from agent.role_card import role_card
from games.config import GameConfig
from games.engine import new_game
from games.events import NightActionRecorded, PrivateNote, RoleAssigned, visible
from games.names import pick_names
from games.roles import get_role
from games.setups import SETUPS


@pytest.mark.parametrize("name", sorted(SETUPS))
def test_each_setup_plays_to_a_winner_without_refused_acts(name: str) -> None:
    setup = SETUPS[name]
    for seed in range(3):
        result = simulate_fast(
            GameConfig(setup=name), setup.balance_players, seed, keep_events=True
        )
        assert result.winner is not None and result.refused == 0
        events = result.events or ()
        role = {e.seat: e.role for e in events if isinstance(e, RoleAssigned)}
        for e in events:
            if isinstance(e, NightActionRecorded):  # only a role with that action acted
                assert get_role(role[e.seat]).night_verb == e.verb


def test_roles_use_their_abilities_and_hear_their_results() -> None:
    """Across a few Town of Salem games every acting role acts, and results come back."""
    verbs: set[str] = set()
    notes: set[str] = set()
    for seed in range(8):
        result = simulate_fast(GameConfig(setup="salem"), 13, seed, keep_events=True)
        for e in result.events or ():
            if isinstance(e, NightActionRecorded):
                verbs.add(e.role)
            elif isinstance(e, PrivateNote):
                notes.add(e.verb)
    acting = {"detective", "doctor", "lookout", "framer", "serial_killer", "vigilante"}
    assert acting <= verbs
    assert {"watch", "investigate", "target"} <= notes


def test_a_balance_count_agrees_with_the_games_it_played() -> None:
    config = GameConfig(setup="carnival")
    balance = measure(config, 8, 10, seed=0)
    winners = [simulate_fast(config, 8, s).winner for s in range(10)]
    assert balance.wins["town"] == winners.count("bystanders")
    assert balance.wins["mafia"] == winners.count("mafia")


def test_the_llm_seat_is_told_its_roles_goal_from_the_registry() -> None:
    config = GameConfig(setup="salem")
    state, events = new_game(config, pick_names(9, random.Random(1)), 1, EPOCH)
    told = set()
    for seat in state.seats:
        k = SeatKnowledge(seat.index, seat.name)
        for e in events:
            if visible(e, seat.index):
                k.observe(e)
        note = _role_note(k)
        role = get_role(seat.role)
        if seat.role not in ("mafia", "bystander", "detective", "doctor"):
            # its goal and its card (name, faction, ability) from the registry
            assert note.endswith(role_card(seat.role))
            assert f"Role card: {seat.role} ({role.faction})." in note
        if role.faction == "neutral":
            assert note == f"{role.description} {role_card(seat.role)}"
            told.add(seat.role)
        elif role.faction == "town" and seat.role not in ("bystander", "detective", "doctor"):
            assert role.description in note
            told.add(seat.role)
    assert {"jester", "lookout"} <= told
