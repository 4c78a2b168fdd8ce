"""Named and custom setups: what each deals, and one clear line for a setup that can't work."""

from __future__ import annotations

from collections import Counter

import pytest

from games import ConfigError, GameConfig, new_game
from games.roles import get_role, registered_roles
from games.setups import DEFAULT_SETUP, SETUPS, get_setup
from tests.games.helpers import NAMES, T0

NAMES_20 = (*NAMES, "Noel", "Oakley", "Parker", "Quinn", "Reese", "Sage", "Tatum", "Uma")


def test_at_least_25_roles_in_3_factions_each_described() -> None:
    roles = [get_role(r) for r in registered_roles()]
    assert len(roles) >= 25
    assert {r.faction for r in roles} == {"town", "mafia", "neutral"}
    assert all(r.description and r.source for r in roles)


def test_the_llmafia_setup_is_the_default_and_deals_exactly_as_before() -> None:
    assert DEFAULT_SETUP == "llmafia"
    for players in (5, 8, 12):
        plain, _ = new_game(GameConfig(), NAMES[:players], 7, T0)
        named, _ = new_game(GameConfig(setup="llmafia"), NAMES[:players], 7, T0)
        assert [s.role for s in named.seats] == [s.role for s in plain.seats]
    assert "setup" not in GameConfig().to_dict() and "role_list" not in GameConfig().to_dict()


@pytest.mark.parametrize("name", sorted(SETUPS))
def test_every_shipped_setup_deals_its_roles_at_every_size(name: str) -> None:
    setup = get_setup(name)
    for players in range(setup.min_players, min(setup.max_players, len(NAMES_20)) + 1):
        state, _ = new_game(GameConfig(setup=name), NAMES_20[:players], players, T0)
        dealt = Counter(s.role for s in state.seats)
        assert dealt == Counter(setup.roles_for(players))
        assert 0 < len(state.mafia()) < players / 2


def test_a_custom_role_list_is_dealt_by_seed() -> None:
    roles = ("godfather", "consort", "detective", "doctor", "jester", "bystander", "bystander")
    config = GameConfig(role_list=roles)
    state, _ = new_game(config, NAMES[:7], 1, T0)
    assert Counter(s.role for s in state.seats) == Counter(roles)
    assert GameConfig.from_dict(config.to_dict()) == config


B3 = ("bystander",) * 3


@pytest.mark.parametrize(
    ("config", "players", "message"),
    [
        (GameConfig(role_list=("mafia", *B3[:2])), 5, "lists 3 roles for 5"),
        (GameConfig(role_list=("mafia", "sheriff", *B3)), 5, "Unknown role 'sheriff'"),
        (GameConfig(role_list=("detective", "doctor", *B3)), 5, "Nobody in this setup can kill"),
        (
            GameConfig(role_list=("mafia", "jester", "jester", "survivor", "executioner")),
            5,
            "Nobody in this setup plays for the town",
        ),
        (
            GameConfig(role_list=("mafia", "mafia", "serial_killer", *B3)),
            6,
            "3 killers .* among 6 players is too many",
        ),
        (GameConfig(setup="classic"), 5, "'classic' is for 7 to 12 players; this game has 5"),
        (GameConfig(setup="nosuch"), 7, "Unknown setup 'nosuch'. Setups: "),
        (GameConfig(setup="classic", mafia=2), 8, "either a setup .* or a mafia count"),
    ],
)
def test_a_setup_that_cannot_work_gets_one_clear_line(
    config: GameConfig, players: int, message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        config.validate(players)
    assert "\n" not in str(info.value)
