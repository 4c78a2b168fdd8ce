"""Setup rules: player counts, mafia counts, the role deal, day 1, and impossible setups."""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta

import pytest

from games import ConfigError, GameConfig, PhaseKind, default_mafia_count, new_game
from games.events import GameStarted, PhaseStarted, RoleAssigned
from tests.games.helpers import NAMES, T0, of_type, one

DEFAULT_MAFIA = [(5, 1), (6, 1), (7, 2), (8, 2), (9, 2), (10, 2), (11, 3), (12, 3)]
EXTRA_ROLE_SETS = [
    (),
    ("detective",),
    ("doctor",),
    ("detective", "doctor"),
    ("doctor", "detective"),
]


@pytest.mark.parametrize(("players", "mafia"), DEFAULT_MAFIA)
def test_default_mafia_count_by_player_count(players: int, mafia: int) -> None:
    assert default_mafia_count(players) == mafia
    assert GameConfig().mafia_count(players) == mafia


@pytest.mark.parametrize("extras", EXTRA_ROLE_SETS)
@pytest.mark.parametrize(("players", "mafia"), DEFAULT_MAFIA)
def test_role_distribution(players: int, mafia: int, extras: tuple[str, ...]) -> None:
    config = GameConfig(roles=extras)
    for seed in range(8):
        state, events = new_game(config, NAMES[:players], seed, T0)
        expected = Counter({"mafia": mafia, "bystander": players - mafia - len(extras)})
        expected.update(extras)
        assert Counter(s.role for s in state.seats) == expected
        assert len(state.mafia()) == mafia
        started = one(events, GameStarted)
        assert started.mafia_count == mafia
        assert started.extra_roles == extras
        assert started.players == NAMES[:players]
        assert started.visible_to is None


@pytest.mark.parametrize(("players", "mafia"), DEFAULT_MAFIA)
def test_roles_are_dealt_by_seed(players: int, mafia: int) -> None:
    def deal(seed: int) -> tuple[str, ...]:
        state, _ = new_game(GameConfig(roles=("detective", "doctor")), NAMES[:players], seed, T0)
        return tuple(s.role for s in state.seats)

    assert [deal(s) for s in range(10)] == [deal(s) for s in range(10)]
    assert len({deal(s) for s in range(30)}) > 1
    # every seat can be mafia: the deal is not biased to fixed seats
    mafia_seats = {i for s in range(200) for i, r in enumerate(deal(s)) if r == "mafia"}
    assert mafia_seats == set(range(players))


@pytest.mark.parametrize(
    ("players", "day_seconds", "t"),
    [
        (5, 120.0, T0),
        (8, 30.0, T0 + timedelta(hours=5)),
        (12, 600.5, T0 + timedelta(days=1, seconds=7)),
    ],
)
def test_game_opens_day_one(players: int, day_seconds: float, t: datetime) -> None:
    state, events = new_game(GameConfig(day_seconds=day_seconds), NAMES[:players], 3, t)
    assert state.phase.kind is PhaseKind.DAY
    assert (state.phase.number, state.phase.seq) == (1, 1)
    assert state.phase.started_at == t
    assert state.phase.deadline == t + timedelta(seconds=day_seconds)
    assert state.alive() == frozenset(range(players))
    assert state.winner is None and not state.over
    assert state.votes == {} and state.night_actions == {}
    started = events[-1]
    assert isinstance(started, PhaseStarted)
    assert (started.phase, started.number, started.seq) == ("day", 1, 1)
    assert started.deadline == state.phase.deadline
    assert started.seconds == day_seconds
    assert started.visible_to is None
    assert isinstance(events[0], GameStarted)


@pytest.mark.parametrize("players", range(5, 13))
def test_role_cards_are_private_and_mafia_know_partners(players: int) -> None:
    state, events = new_game(GameConfig(roles=("detective", "doctor")), NAMES[:players], 5, T0)
    cards = of_type(events, RoleAssigned)
    assert [c.seat for c in cards] == list(range(players))
    mafia_names = {state.seats[i].name for i in state.mafia()}
    for card in cards:
        seat = state.seats[card.seat]
        assert card.place == "booth"
        assert card.visible_to == frozenset({card.seat})
        assert (card.name, card.role, card.team) == (seat.name, seat.role, seat.team)
        if seat.is_mafia:
            assert set(card.partners) == mafia_names - {seat.name}
        else:
            assert card.partners == ()


@pytest.mark.parametrize(
    ("players", "mafia"),
    [(5, 1), (5, 2), (6, 2), (7, 1), (7, 3), (8, 3), (9, 4), (10, 4), (11, 5), (12, 5), (12, 1)],
)
def test_mafia_override_within_bounds(players: int, mafia: int) -> None:
    state, events = new_game(GameConfig(mafia=mafia), NAMES[:players], 0, T0)
    assert len(state.mafia()) == mafia
    assert one(events, GameStarted).mafia_count == mafia


@pytest.mark.parametrize(
    ("players", "mafia", "message"),
    [
        (5, 3, "3 mafia among 5 players is too many.*Use at most 2"),
        (6, 3, "3 mafia among 6 players is too many.*Use at most 2"),
        (7, 4, "4 mafia among 7 players is too many.*Use at most 3"),
        (8, 4, "4 mafia among 8 players is too many.*Use at most 3"),
        (12, 6, "6 mafia among 12 players is too many.*Use at most 5"),
        (9, 0, "at least 1 mafia"),
        (9, -2, "at least 1 mafia"),
    ],
)
def test_mafia_override_out_of_bounds(players: int, mafia: int, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        new_game(GameConfig(mafia=mafia), NAMES[:players], 0, T0)


SIX = list(NAMES[:6])


@pytest.mark.parametrize(
    ("config", "names", "message"),
    [
        (GameConfig(), NAMES[:4], r"at least 5 players; this game has 4\."),
        (GameConfig(), [], r"at least 5 players; this game has 0\."),
        (GameConfig(), [f"P{i}" for i in range(31)], r"At most 30 players.*has 31\."),
        (GameConfig(mafia=3), SIX, "3 mafia among 6 players is too many"),
        (
            GameConfig(roles=("sheriff",)),
            SIX,
            r"Unknown extra role 'sheriff'\. Available: "
            r"bodyguard, .*detective, doctor, .*vigilante\.",
        ),
        (GameConfig(roles=("mafia",)), SIX, "Unknown extra role 'mafia'"),
        (GameConfig(roles=("bystander",)), SIX, "Unknown extra role 'bystander'"),
        (GameConfig(roles=("doctor", "doctor")), SIX, "role 'doctor' is listed twice"),
        (GameConfig(), ["Ari", "ari", "Casey", "Drew", "Eden"], "names must be unique"),
        (GameConfig(), ["Ari", " Ari ", "Casey", "Drew", "Eden"], "names must be unique"),
        (GameConfig(), ["ÉDEN", "éden", "Casey", "Drew", "Ari"], "names must be unique"),
        (GameConfig(), ["Ari", "  ", "Casey", "Drew", "Eden"], "non-empty name"),
        (GameConfig(day_seconds=0), SIX, "day seconds must be more than 0 and at most 86400"),
        (GameConfig(vote_seconds=-5), SIX, "vote seconds must be more than 0"),
        (GameConfig(night_seconds=86401), SIX, "night seconds must be more than 0"),
        (GameConfig(night_vote_seconds=0), SIX, "night vote seconds must be more than 0"),
        (GameConfig(tie_rule="coin"), SIX, "tie rule must be one of none, random; got 'coin'"),  # type: ignore[arg-type]
        (GameConfig(night_tie_rule="x"), SIX, "night tie rule must be one of"),  # type: ignore[arg-type]
        (GameConfig(max_message_chars=0), SIX, "max message chars must be between"),
    ],
)
def test_impossible_setups_raise_one_clear_config_error(
    config: GameConfig, names: list[str], message: str
) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        new_game(config, names, 0, T0)
    text = str(info.value)
    assert "\n" not in text and text.endswith(".")


def test_config_dict_round_trip_and_unknown_settings() -> None:
    config = GameConfig(mafia=2, roles=("doctor",), tie_rule="random", vote_seconds=10.0)
    assert GameConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ConfigError, match="Unknown game settings: colour"):
        GameConfig.from_dict({"colour": "red"})


def test_naive_start_time_is_refused() -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        new_game(GameConfig(), NAMES[:5], 0, datetime(2024, 1, 1))


# --- fixed deals (replays of recorded games) --------------------------------------------------


def test_fixed_deal_is_dealt_exactly() -> None:
    from datetime import UTC, datetime

    from games.config import GameConfig
    from games.engine import new_game

    deal = ("bystander", "mafia", "bystander", "bystander", "mafia", "bystander", "bystander")
    names = ["Blake", "Charlie", "Casey", "Ziggy", "Logan", "Parker", "Peyton"]
    t = datetime(2026, 1, 1, tzinfo=UTC)
    for seed in (1, 2, 3):
        state, _ = new_game(GameConfig(deal=deal), names, seed, t)
        assert tuple(s.role for s in state.seats) == deal


@pytest.mark.parametrize(
    ("deal", "message"),
    [
        (("mafia", "bystander", "bystander", "bystander"), "at least 5"),
        (("mafia",) * 3 + ("bystander",) * 3, "too many"),
        (("bystander",) * 6, "at least 1 mafia"),
        (("mafia", "bystander", "bystander", "bystander", "bystander"), "lists 5 roles for 6"),
        (("mafia", "wizard", "bystander", "bystander", "bystander", "bystander"), "Unknown role"),
        (("mafia", "doctor", "bystander", "bystander", "bystander", "bystander"), "must match"),
    ],
)
def test_impossible_fixed_deals_are_refused(deal: tuple[str, ...], message: str) -> None:
    from games.config import GameConfig
    from games.errors import ConfigError

    players = 6 if len(deal) != 4 else 4
    with pytest.raises(ConfigError, match=message):
        GameConfig(deal=deal).validate(players)
