"""The reveal after the survey (`bot.players.reveal`), the players' stats and leaderboard
(`bot.players.stats`) and the replay page (`bot.players.replay_page`), on a game played through
the service."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, delete, select

from bot.players import reveal, survey
from bot.players.replay_page import ReplayError, load, render
from bot.players.stats import leaderboard, leaderboard_text, make_board, server_stats, stats_text
from bot.protection.consent import record_consent
from bot.protection.privacy import withdraw
from bot.service.port import GameService
from bot.store import models as m
from bot.store.db import session_scope
from bot.table.seats import seat_infos
from tests.bot.test_privacy import (
    ALICE,
    BOB,
    CAROL,
    DAVE,
    ERIN,
    PEOPLE,
    SERVER,
    Table,
    play_table,
    service,  # noqa: F401  (fixture)
)

WINDOW = 600.0


def answer_all(engine: Engine, table: Table, uid: str, guess: str) -> None:
    seats = seat_infos(engine, table.game_id)
    seat = table.seat_of[uid]
    for question, raw in (
        (survey.GUESS, guess),
        (survey.SIMILARITY, "4"),
        (survey.TIMING, "3"),
        (survey.RELEVANCE, "5"),
    ):
        columns = survey.answer(seats, seat, question, raw)
        survey.save_answer(engine, table.game_id, seat, "discord", columns)


async def finished(svc: GameService) -> Table:
    table = await play_table(svc)
    with session_scope(svc.engine) as s:  # play_table's half-answered surveys: not ours
        s.exec(delete(m.SurveyResponse))
    return table


def test_reveal_words() -> None:
    assert reveal.reveal_text(["Hayden"], 3, 5) == "The AI was Hayden. 3 of 5 of you named them."
    assert (
        reveal.reveal_text(["Hayden", "Rowan"], 1, 4)
        == "The AIs were Hayden and Rowan. 1 of 4 of you named one of them."
    )
    assert reveal.reveal_text(["Hayden"], 0, 0) == "The AI was Hayden."


async def test_reveal_waits_for_every_answer_then_is_given_once(
    service: GameService,  # noqa: F811
) -> None:
    engine = service.engine
    table = await finished(service)
    wrong = table.name_of[ALICE]
    people = [ALICE, BOB, CAROL, DAVE, ERIN]
    for uid in people[:-1]:
        guess = table.agent_name if uid != BOB else table.name_of[ALICE]
        answer_all(engine, table, uid, guess)
        # not everyone has answered, and the window is open: nobody is told
        assert reveal.claim(engine, table.game_id, window=WINDOW) is None
        assert not reveal.revealed(engine, table.game_id)
    assert stats_for(engine) == {}  # no stats of a game before its reveal either
    # Erin has answered only part of it: still closed to everyone
    seats = seat_infos(engine, table.game_id)
    columns = survey.answer(seats, table.seat_of[ERIN], survey.GUESS, wrong)
    survey.save_answer(engine, table.game_id, table.seat_of[ERIN], "discord", columns)
    assert reveal.claim(engine, table.game_id, window=WINDOW) is None
    answer_all(engine, table, ERIN, table.agent_name)
    text = reveal.claim(engine, table.game_id, window=WINDOW)
    assert text == f"The AI was {table.agent_name}. 4 of 5 of you named them."
    assert reveal.claim(engine, table.game_id, window=WINDOW) is None  # given once
    assert reveal.claim(engine, table.game_id, window=WINDOW, closed=True) is None


async def test_reveal_after_the_window_without_every_answer(
    service: GameService,  # noqa: F811
) -> None:
    engine = service.engine
    table = await finished(service)
    answer_all(engine, table, ALICE, table.agent_name)
    assert reveal.claim(engine, table.game_id, window=WINDOW) is None
    with session_scope(engine) as s:  # the game ended more than the window ago
        game = s.get(m.Game, table.game_id)
        assert game is not None and game.ended_at is not None
        game.ended_at -= timedelta(seconds=WINDOW + 1)
    assert (
        reveal.claim(engine, table.game_id, window=WINDOW)
        == f"The AI was {table.agent_name}. 1 of 5 of you named them."
    )


def stats_for(engine: Engine) -> dict[str, object]:
    return dict(server_stats(engine, "discord", SERVER))


async def test_stats_and_leaderboard_show_consenting_people_only(
    service: GameService,  # noqa: F811
) -> None:
    engine = service.engine
    table = await finished(service)
    for uid in PEOPLE:
        answer_all(engine, table, uid, table.agent_name if uid != BOB else table.name_of[ALICE])
    assert reveal.claim(engine, table.game_id, window=WINDOW) is not None
    stats = server_stats(engine, "discord", SERVER)
    assert set(stats) == set(PEOPLE)  # the people, never the agent
    mafia_uid = next(u for u, i in table.seat_of.items() if i == table.mafia_seat)
    for uid, mine in stats.items():
        assert mine.games == 1
        if uid == mafia_uid:
            assert (mine.games_mafia, mine.wins, mine.survived) == (1, 0, 0)
        else:
            assert (mine.games_bystanders, mine.wins_bystanders, mine.survived) == (1, 1, 1)
        assert (mine.spotted, mine.guesses) == ((0, 1) if uid == BOB else (1, 1))
    # one game each: nobody is ranked yet, everyone is listed as not ranked
    assert leaderboard(stats) == []
    winners = [s for u, s in stats.items() if u != mafia_uid]
    assert all(w.rating > stats[mafia_uid].rating for w in winners)
    text = leaderboard_text(make_board(stats), lambda u: f"<@{u}>", me=ALICE)
    assert text.count("<@") == 5 and "Not ranked yet (games so far)" in text
    assert "You: not ranked yet (1 of 3 games)." in text
    assert table.agent_name not in text
    assert "Spotted the AI: 1 of 1 (100%)" in stats_text(stats[ALICE], "Alice")
    assert "As mafia" not in stats_text(stats[ALICE], "Alice") or mafia_uid == ALICE

    # Withdrawal removes the person from the stats and the board; so does a "no".
    withdraw(engine, "discord", SERVER, CAROL)
    record_consent(engine, "discord", SERVER, DAVE, False)
    stats = server_stats(engine, "discord", SERVER)
    assert set(stats) == {ALICE, BOB, ERIN}
    assert CAROL not in leaderboard_text(make_board(stats), lambda u: u)
    # ... and agreeing again later does not bring the withdrawn games back
    record_consent(engine, "discord", SERVER, CAROL, True)
    assert CAROL not in server_stats(engine, "discord", SERVER)
    # another server's board knows nobody
    assert server_stats(engine, "discord", "G0OTHER") == {}


async def test_replay_page_of_a_finished_game(service: GameService) -> None:  # noqa: F811
    engine = service.engine
    table = await play_table(service, finish=False)
    with pytest.raises(ReplayError, match="only finished games"):
        load(engine, table.game_id)
    with pytest.raises(ReplayError, match="No game"):
        load(engine, "nosuchgame")
    mafia = next(n for u, n in table.name_of.items() if table.seat_of[u] == table.mafia_seat)
    game = service.games[table.game_id]
    state = game.state
    assert state is not None
    for seat in state.seats:
        target = mafia if seat.index != table.mafia_seat else table.agent_name
        await service.vote(table.game_id, seat.index, target)
    await service.wait_finished(table.game_id)

    page = render(load(engine, table.game_id, research=True, identities=PEOPLE))
    assert page.startswith("<!DOCTYPE html>")
    for name in [*table.name_of.values(), table.agent_name]:
        assert name in page
    for uid, names in PEOPLE.items():  # never an account
        assert uid not in page
        assert all(n not in page for n in names)
    assert f"<b id='ai'>{table.agent_name}</b>" in page
    assert "The agent's other decisions" in page and "say: " in page  # --research
    assert f"<b>{mafia}</b> is out" in page
    # nothing loaded from anywhere
    for outside in ("http://", "https://", "src=", "@import", "url("):
        assert outside not in page
    assert page.count("<script>") == 1  # the player filter's few inline lines, no more
    plain = render(load(engine, table.game_id))
    assert "decisions" not in plain
    assert all(uid not in plain for uid in PEOPLE)  # ids and mentions go even unnamed


async def test_a_withdrawn_players_seat_stays_anonymous_in_the_rating(
    service: GameService,  # noqa: F811
) -> None:
    engine = service.engine
    table = await finished(service)
    for uid in PEOPLE:
        answer_all(engine, table, uid, table.agent_name)
    reveal.claim(engine, table.game_id, window=WINDOW)
    withdraw(engine, "discord", SERVER, ALICE)
    with Session(engine) as s:
        seats = s.exec(select(m.Seat).where(m.Seat.game_id == table.game_id)).all()
    assert any(seat.withdrawn for seat in seats)
    assert ALICE not in server_stats(engine, "discord", SERVER)


async def test_the_window_reveals_once_and_a_restart_rearms_it(
    service: GameService,  # noqa: F811
) -> None:
    import asyncio

    engine = service.engine
    table = await finished(service)
    answer_all(engine, table, ALICE, table.agent_name)
    posted: list[tuple[str, str]] = []
    done = asyncio.Event()

    async def post(game_id: str, text: str) -> None:
        posted.append((game_id, text))
        done.set()

    first = reveal.Reveals(engine, 3600.0, post)
    first.game_over(table.game_id)
    await first.answered(table.game_id)  # one of five: not yet
    assert posted == []
    first.close()  # the process stops before the window closes
    # restarted: the window is re-armed with the time left (here: none, it is backdated)
    with session_scope(engine) as s:
        game = s.get(m.Game, table.game_id)
        assert game is not None and game.ended_at is not None
        game.ended_at -= timedelta(seconds=3600)
    second = reveal.Reveals(engine, 3600.0, post)
    await second.recover("discord")
    await asyncio.wait_for(done.wait(), 10)
    assert posted == [(table.game_id, f"The AI was {table.agent_name}. 1 of 5 of you named them.")]
    await second.answered(table.game_id)
    second.game_over(table.game_id, 0)
    await asyncio.sleep(0.05)
    assert len(posted) == 1
    assert reveal.pending(engine, "discord") == []
    second.close()


def test_games_finished_before_the_upgrade_are_not_revealed_again(db_url: str) -> None:
    """Upgrading must not make a bot post the reveal of every old game in its channel."""
    import sqlalchemy as sa

    from bot.store import migrate
    from bot.store.db import make_engine

    migrate.upgrade(db_url, "0009")
    eng = make_engine(db_url)
    try:
        with eng.begin() as conn:
            conn.execute(sa.text("INSERT INTO servers (platform, external_id, settings, "
                                 "logging_enabled, created_at) VALUES ('discord', 'G9', '{}', "
                                 "true, '2026-01-01 10:00:00')"))  # fmt: skip
            for gid, status, ended in (("old", "finished", "'2026-01-01 11:00:00'"),
                                       ("stopped", "aborted", "'2026-01-01 11:00:00'"),
                                       ("open", "running", "NULL")):  # fmt: skip
                conn.execute(sa.text(
                    "INSERT INTO games (id, server_id, status, config, seed, created_at, "
                    f"ended_at, clock_speed, last_seq) VALUES ('{gid}', 1, '{status}', '{{}}', "
                    f"1, '2026-01-01 10:00:00', {ended}, 1.0, 0)"
                ))  # fmt: skip
        migrate.upgrade(db_url)
        assert reveal.pending(eng, "discord") == []
        with Session(eng) as s:
            got = {g.id: g.revealed_at for g in s.exec(select(m.Game)).all()}
        assert got["old"] is not None and got["stopped"] is None and got["open"] is None
    finally:
        eng.dispose()


async def test_last_answers_racing_give_one_reveal(service: GameService) -> None:  # noqa: F811
    """The last answers (and the window's timer) arriving together: one reveal."""
    import asyncio

    engine = service.engine
    table = await finished(service)
    for uid in PEOPLE:
        answer_all(engine, table, uid, table.agent_name)
    results = await asyncio.gather(
        *(
            asyncio.to_thread(reveal.claim, engine, table.game_id, window=WINDOW, closed=i == 0)
            for i in range(6)
        )
    )
    assert [r for r in results if r is not None] == [
        f"The AI was {table.agent_name}. 5 of 5 of you named them."
    ]
