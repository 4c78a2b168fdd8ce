"""The board people read (`bot.players.stats`): shared ranks, a minimum of games, pages, your own
place, plain words, records per side and role, spot-the-AI beyond chance, the AI's row; and
the ratings counted once per revealed game (``player_ratings``), not re-rated per query."""

from __future__ import annotations

import re

import sqlalchemy as sa
from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from bench.stats import PLATFORM, SERVER, populate
from bot.players.stats import (
    MIN_GAMES,
    PAGE,
    AIStats,
    PlayerStats,
    board,
    catch_up,
    leaderboard_text,
    make_board,
    stats_text,
)
from bot.protection.consent import record_consent
from bot.protection.privacy import withdraw
from bot.store.models import PlayerRating, RatedGame, utcnow


def person(user: str, mu: float, games: int = 5, **more: object) -> PlayerStats:
    s = PlayerStats(user, games=games, wins=games // 2, mu=mu, rating=mu, sigma=3.0)
    for k, v in more.items():
        setattr(s, k, v)
    return s


def test_shared_ranks_minimum_games_pages_and_your_place() -> None:
    people = {f"u{i:02d}": person(f"u{i:02d}", 30.0 - i * 0.5) for i in range(40)}
    people["u05"].mu = people["u05"].rating = people["u04"].mu  # a tie for 5th
    people["new"] = person("new", 40.0, games=MIN_GAMES - 1)  # strong, but not enough games
    b = make_board(people)
    assert [r for r, s in b.ranked[:7]] == [1, 2, 3, 4, 5, 5, 7]
    assert b.rank_of("new") is None and [s.user_id for s in b.unranked] == ["new"]
    first = leaderboard_text(b, str, me="u30")
    rows = [ln for ln in first.splitlines() if re.match(r"=?\d+\. ", ln)]
    assert len(rows) == PAGE > 10
    assert "=5. u04:" in first and "=5. u05:" in first and "\n7. u06:" in first
    assert "page 1 of 3" in first and "(more: page 2)" in first
    assert "You: #31 of 40." in first
    assert "Not ranked yet (games so far): new (2)." in first
    third = leaderboard_text(b, str, page=3, me="new")
    assert "31. u30:" in third and "40. u39:" in third and "(more" not in third
    assert "You: not ranked yet (2 of 3 games)." in third
    assert "page 3 of 3" in leaderboard_text(b, str, page=99)  # past the end: the last page
    # plain words, and the numbers only on request
    assert "one of the strongest" in first and "mu " not in first
    numbers = leaderboard_text(b, str, numbers=True)
    assert "1. u00: mu 30.0, sigma 3.0, mu - 3 sigma 21.0;" in numbers


def test_records_per_side_and_role_and_spotting_beyond_chance() -> None:
    town = person("town", 26.0, games=4, roles={"doctor": (1, 1), "bystander": (3, 1)})
    town.games_bystanders, town.wins_bystanders = 4, 2
    text = stats_text(town, "Town", rank=(2, 7))
    assert "#2 of 7 on the leaderboard" in text
    assert "As a bystander (town): won 2 of 4 (50%) (won/played: bystander 1/3, doctor 1/1)." in (
        text
    )
    assert "mafia" not in text.lower()  # never played mafia: not a word about it
    assert "Skill: about average (sure)." in text
    assert "mu 26.0" in stats_text(town, "Town", numbers=True)
    # spotting: 3 of 6 at tables of 11 (chance 10%) beats 4 of 6 at tables of 3 (chance 50%)
    big = person("big", 25.0, guesses=6, spotted=3, chance=0.6)
    small = person("small", 25.0, guesses=6, spotted=4, chance=3.0)
    b = make_board({"big": big, "small": small})
    assert [s.user_id for _, s in b.spotters] == ["big", "small"]
    assert "Spotted the AI: 3 of 6 (50%); guessing at random: about 10%." in stats_text(big, "B")
    text = leaderboard_text(b, str)
    assert "Best at spotting the AI (beyond chance at their tables): 1. big 3/6 (chance 10%)" in (
        text
    )
    ai = leaderboard_text(make_board({"big": big}, AIStats(12, 5, 40, 14, 8.0)), str)
    assert (
        "The AI: 12 games, won 5 of 12 (42%); named by 14 of 40 guesses at its games (35%; " in (ai)
        and "about 20%)" in ai
    )


def _ratings(engine: Engine) -> dict[str, tuple[float, float, int]]:
    with Session(engine) as s:
        rows = s.exec(select(PlayerRating)).all()
    return {r.user_id: (round(r.mu, 9), round(r.sigma, 9), r.games) for r in rows}


def test_each_revealed_game_is_counted_once_and_as_a_full_recount_would(engine: Engine) -> None:
    populate(engine, 40, 8)
    assert catch_up(engine, PLATFORM, SERVER) == 40
    assert catch_up(engine, PLATFORM, SERVER) == 0  # nothing new: nothing re-rated
    first = _ratings(engine)
    assert sum(g for u, (_, _, g) in first.items() if u != "@ai") == 40 * 5
    populate(engine, 3, 8, start=40)  # three more games are revealed
    b = board(engine, PLATFORM, SERVER)  # the query counts them
    with Session(engine) as s:
        assert len(s.exec(select(RatedGame)).all()) == 43
    assert b.ai is not None and b.ai.games == 43
    assert sum(s.games for _, s in b.ranked) + sum(s.games for s in b.unranked) == 43 * 5
    counted = _ratings(engine)
    # the same numbers as counting the whole history from scratch
    with engine.begin() as conn:
        conn.execute(sa.delete(RatedGame))
        conn.execute(sa.delete(PlayerRating))
    assert catch_up(engine, PLATFORM, SERVER) == 43
    assert _ratings(engine) == counted
    # ranks are shared only by equal ratings; the board lists the consenting people only
    record_consent(engine, PLATFORM, SERVER, "U00003", False)
    b = board(engine, PLATFORM, SERVER)
    assert b.of("U00003") is None and b.of("U00002") is not None


def test_a_withdrawal_takes_the_person_off_for_good(engine: Engine) -> None:
    populate(engine, 12, 6)
    assert board(engine, PLATFORM, SERVER).of("U00001") is not None
    withdraw(engine, PLATFORM, SERVER, "U00001")
    with Session(engine) as s:  # their row is gone at once, not just hidden
        assert not s.exec(select(PlayerRating).where(PlayerRating.user_id == "U00001")).all()
    assert board(engine, PLATFORM, SERVER).of("U00001") is None
    record_consent(engine, PLATFORM, SERVER, "U00001", True)
    assert board(engine, PLATFORM, SERVER).of("U00001") is None  # the old games stay gone
    populate(engine, 4, 6, start=12, since=utcnow())  # new games after agreeing again count
    again = board(engine, PLATFORM, SERVER).of("U00001")
    assert again is not None and 0 < again.games <= 4


def test_two_counting_at_once_count_each_game_once(engine: Engine) -> None:
    import threading

    populate(engine, 120, 10)
    threads = [threading.Thread(target=catch_up, args=(engine, PLATFORM, SERVER)) for _ in "ab"]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    catch_up(engine, PLATFORM, SERVER)  # (whatever a busy database left for later)
    with Session(engine) as s:
        assert len(s.exec(select(RatedGame)).all()) == 120
    people = {u: g for u, (_, _, g) in _ratings(engine).items() if u != "@ai"}
    assert sum(people.values()) == 120 * 5
