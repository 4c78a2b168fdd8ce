"""Matching typed names to seats: whole names, any case, never a prefix."""

from __future__ import annotations

import random

import pytest

from games import ConfigError, GameConfig, RuleError, new_game
from games.names import (
    CHARACTER_NAMES,
    display_list,
    names_in_text,
    pick_names,
    resolve_name,
    unique_name_in_text,
)
from tests.games.helpers import T0

SEATS = {0: "Ari", 1: "Ariel", 2: "Blake", 3: "Jordan", 4: "Sam"}


@pytest.mark.parametrize(
    ("query", "seat"),
    [
        ("Ari", 0),
        ("ari", 0),
        ("ARI", 0),
        ("  Ari  ", 0),
        ("@Ari", 0),
        ('"Ari"', 0),
        ("Ari.", 0),
        ("Ari!", 0),
        ("*Ari*", 0),
        ("ariel", 1),
        ("ARIEL", 1),
        ("Blake", 2),
        ("jOrDaN", 3),
    ],
)
def test_resolve_name_whole_name_any_case(query: str, seat: int) -> None:
    assert resolve_name(query, SEATS) == seat


@pytest.mark.parametrize("query", ["Ar", "Arie", "Ariell", "Jord", "Bla ke", "Sammy", "Ari Ariel"])
def test_resolve_name_never_matches_part_of_a_name(query: str) -> None:
    with pytest.raises(RuleError) as info:
        resolve_name(query, SEATS)
    message = str(info.value)
    assert f"No player called {query!r} here." in message
    assert "Choose one of: Ari, Ariel, Blake, Jordan, Sam." in message


def test_ari_does_not_match_ariel_when_ari_is_not_playing() -> None:
    with pytest.raises(RuleError, match="Choose one of: Ariel, Blake"):
        resolve_name("Ari", {1: "Ariel", 2: "Blake"})


@pytest.mark.parametrize("query", ["", "   ", "@", '""'])
def test_resolve_name_empty_query(query: str) -> None:
    with pytest.raises(RuleError, match=r"Say who: one of Ari, Ariel, Blake, Jordan, Sam\."):
        resolve_name(query, SEATS)


@pytest.mark.parametrize(
    ("text", "seats", "unique"),
    [
        ("I think Ari is lying", [0], 0),
        ("ariel and ARI both", [1, 0], None),
        ("Ariel is quiet", [1], 1),
        ("Arielle? Arian? Sammy?", [], None),
        ("Blake, then Sam, then Blake again", [2, 4], None),
        ("@jordan!", [3], 3),
        ("vote: Sam.", [4], 4),
        ("Sam's alibi", [4], 4),
        ("nobody here", [], None),
        ("Sam_2 and Blake9", [], None),
    ],
)
def test_names_in_text(text: str, seats: list[int], unique: int | None) -> None:
    assert names_in_text(text, SEATS) == seats
    assert unique_name_in_text(text, SEATS) == unique


@pytest.mark.parametrize(
    ("names", "text"),
    [([], "nobody"), (["A"], "A"), (["A", "B"], "A and B"), (["A", "B", "C"], "A, B and C")],
)
def test_display_list(names: list[str], text: str) -> None:
    assert display_list(names) == text


def test_pick_names_is_seeded_distinct_and_honours_exclusions() -> None:
    first = pick_names(12, random.Random(3), exclude=["ari", "SAM"])
    assert first == pick_names(12, random.Random(3), exclude=["ari", "SAM"])
    assert len(set(first)) == 12
    assert not {"Ari", "Sam"} & set(first)
    assert set(first) <= set(CHARACTER_NAMES)
    with pytest.raises(ValueError, match="available"):
        pick_names(len(CHARACTER_NAMES) + 1, random.Random(0))


def test_character_names_are_unique_and_resolvable() -> None:
    folded = [n.casefold() for n in CHARACTER_NAMES]
    assert len(set(folded)) == len(folded)
    seats = dict(enumerate(CHARACTER_NAMES))
    for i, name in seats.items():
        assert resolve_name(name.upper(), seats) == i
        assert unique_name_in_text(f"I vote {name.lower()}.", seats) == i


def test_names_that_resolve_alike_are_refused_at_setup() -> None:
    names = ["Ari Bee", "ari  bee", "Casey", "Drew", "Eden"]
    with pytest.raises(ConfigError, match="unique"):
        new_game(GameConfig(), names, 0, T0)
