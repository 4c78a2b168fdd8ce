"""The survey closes at the reveal, nothing names the AI before it, and a seat handed from a
person to an agent is told truly (`bot.players.survey`, `bot.players.reveal`,
`bot.players.seat_story`, the export and
the replay page), on games played through the service."""

from __future__ import annotations

import csv
import io
import zipfile
from datetime import timedelta

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import Session, delete, select

from bot.players import reveal, survey
from bot.players.replay_page import load, render
from bot.players.stats import server_stats
from bot.protection.dataset.export import export_zip
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
    LINES,
    SERVER,
    Table,
    play_table,
    service,  # noqa: F401  (fixture)
)

WINDOW = 600.0


def guess(engine: Engine, table: Table, uid: str, name: str) -> m.SurveyResponse:
    seats = seat_infos(engine, table.game_id)
    seat = table.seat_of[uid]
    columns = survey.answer(seats, seat, survey.GUESS, name)
    return survey.save_answer(engine, table.game_id, seat, "discord", columns)


def rate(engine: Engine, table: Table, uid: str) -> m.SurveyResponse:
    seats = seat_infos(engine, table.game_id)
    seat = table.seat_of[uid]
    row = survey.save_answer(engine, table.game_id, seat, "discord", {})
    for question in survey.RATINGS:
        columns = survey.answer(seats, seat, question, "3")
        row = survey.save_answer(engine, table.game_id, seat, "discord", columns)
    return row


async def finish(svc: GameService, table: Table) -> None:
    game = svc.games[table.game_id]
    assert game.state is not None
    seats = game.state.seats
    mafia = seats[table.mafia_seat]
    for seat in seats:
        target = mafia if seat.index != mafia.index else seats[(mafia.index + 1) % len(seats)]
        await svc.vote(table.game_id, seat.index, target.name)
    await svc.wait_finished(table.game_id)
    with session_scope(svc.engine) as s:  # play_table's half-answered surveys: not ours
        s.exec(delete(m.SurveyResponse))


def export(engine: Engine, table: Table) -> dict[str, str]:
    data, _ = export_zip(engine, [table.game_id], revealed_only=True)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        return {n: zf.read(n).decode("utf-8") for n in zf.namelist()}


async def test_a_guess_after_the_reveal_is_refused_and_never_counted(
    service: GameService,  # noqa: F811
) -> None:
    engine = service.engine
    table = await play_table(service, finish=False)
    await finish(service, table)
    agent = table.agent_name
    # before the reveal a guess may be changed: the latest counts
    guess(engine, table, ALICE, table.name_of[BOB])
    row = guess(engine, table, ALICE, agent)
    assert row.identified_ai and row.guessed_at is not None
    guess(engine, table, BOB, table.name_of[ALICE])
    text = reveal.claim(engine, table.game_id, window=WINDOW, closed=True)
    assert text == f"The AI was {agent}. 1 of 5 of you named them."
    # after it: no new guess, no changed guess; the ratings stay open
    for uid in (CAROL, BOB):
        with pytest.raises(survey.GuessClosed, match="closed when the AI was revealed"):
            guess(engine, table, uid, agent)
    assert rate(engine, table, CAROL).similarity == 3.0
    # a whole form sent after the reveal (Slack's modal) keeps the ratings, not the guess
    seats = seat_infos(engine, table.game_id)
    form = survey.SurveyAnswer(agent, 4, 4, 4)
    late = survey.response(table.game_id, seats, table.seat_of[DAVE], form, "slack")
    assert survey.store_form(engine, late) == "saved without the guess"
    with Session(engine) as s:
        rows = {
            r.seat_index: r
            for r in s.exec(
                select(m.SurveyResponse).where(m.SurveyResponse.game_id == table.game_id)
            )
        }
    assert rows[table.seat_of[BOB]].guessed_name == table.name_of[ALICE]  # unchanged
    assert rows[table.seat_of[CAROL]].guessed_name is None
    assert rows[table.seat_of[DAVE]].identified_ai is None
    assert rows[table.seat_of[DAVE]].similarity == 4.0
    # a guess stored after the reveal (by an older version) is never counted anywhere
    with session_scope(engine) as s:
        game = s.get(m.Game, table.game_id)
        assert game is not None and game.revealed_at is not None
        stored = s.get(m.SurveyResponse, rows[table.seat_of[CAROL]].id)
        assert stored is not None
        stored.guessed_name, stored.identified_ai = agent, True
        stored.guessed_at = stored.t = game.revealed_at + timedelta(minutes=3)
    spotted = {
        uid: (s.spotted, s.guesses) for uid, s in server_stats(engine, "discord", SERVER).items()
    }
    assert spotted.get(ALICE) == (1, 1) and spotted.get(CAROL, (0, 0)) == (0, 0)
    page = render(load(engine, table.game_id))  # the replay's guesses: the counted ones only
    carol, alice = table.name_of[CAROL], table.name_of[ALICE]
    assert f"<tr data-who='{carol}'><td>{carol}</td><td>no guess</td></tr>" in page
    assert f"<tr data-who='{alice}'><td>{alice}</td><td>{agent} (right)</td></tr>" in page
    assert "1 of 5 of you named them." in page
    surveys = list(csv.DictReader(io.StringIO(export(engine, table)["csv/surveys.csv"])))
    given = {r["player"]: (r["guess_given"], r["guess_counts"]) for r in surveys}
    assert given[table.name_of[ALICE]] == ("before reveal", "True")
    assert given[table.name_of[CAROL]] == ("after reveal", "False")
    assert given[table.name_of[DAVE]] == ("no guess", "False")
    seconds = {r["player"]: r["guess_seconds_from_reveal"] for r in surveys}
    assert int(seconds[table.name_of[ALICE]]) <= 0 and seconds[table.name_of[CAROL]] == "180"


async def test_nothing_exported_names_the_ai_before_the_reveal(
    service: GameService,  # noqa: F811
) -> None:
    engine = service.engine
    table = await play_table(service, finish=False)
    await finish(service, table)
    data, report = export_zip(engine, [table.game_id], revealed_only=True)
    assert report.exported == [] and "not been revealed" in report.skipped[table.game_id]
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        bundle = "\n".join(zf.read(n).decode("utf-8") for n in zf.namelist())
    assert table.agent_name not in bundle and "True" not in bundle
    assert reveal.claim(engine, table.game_id, window=WINDOW, closed=True)
    players = list(csv.DictReader(io.StringIO(export(engine, table)["csv/players.csv"])))
    assert [p["name"] for p in players if p["is_llm"] == "True"] == [table.agent_name]


async def test_a_kicked_person_is_not_announced_as_the_ai(
    service: GameService,  # noqa: F811
) -> None:
    """Erin spoke, then was kicked on day 1 and an agent played her seat on: the reveal names
    the one AI and tells Erin's seat's story; guesses naming Erin's character are not credited;
    the replay marks Erin's own line as a person's and the agent's later line as an AI's."""
    engine = service.engine
    table = await play_table(service, finish=False)
    kicked = table.seat_of[ERIN]
    erin = table.name_of[ERIN]
    await service.replace_seat(table.game_id, kicked, agent_kind="baseline")
    await service.say(table.game_id, kicked, "ZZ-AFTER the seat talks on")
    await finish(service, table)
    agent = table.agent_name
    for uid, name in ((ALICE, erin), (BOB, agent), (CAROL, erin), (DAVE, erin)):
        row = guess(engine, table, uid, name)
        assert row.identified_ai == (name == agent)
        for question in survey.RATINGS:
            columns = survey.answer(seat_infos(engine, table.game_id), 0, question, "4")
            row = survey.save_answer(engine, table.game_id, table.seat_of[uid], "discord", columns)
        assert row.about_seat_index == table.agent_seat  # the ratings are about the AI
    text = reveal.claim(engine, table.game_id, window=WINDOW)  # everyone left has answered
    assert text == (
        f"The AI was {agent}. {erin}'s player left on day 1; an AI played the seat from then "
        f"on. 1 of 4 of you named {agent}."
    )
    page = render(load(engine, table.game_id))
    assert f"<span class='who'>{erin}</span>: {LINES[ERIN][0]}</div>" in page
    person_line = page.index(LINES[ERIN][0])
    assert page.rfind("<div class='line person'", 0, person_line) > page.rfind(
        "<div class='line agent'", 0, person_line
    )
    agent_line = page.index("ZZ-AFTER the seat talks on")
    assert page.rfind("<div class='line agent'", 0, agent_line) > page.rfind(
        "<div class='line person'", 0, agent_line
    )
    assert f"<b id='ai'>{agent}</b>" in page
    players = list(csv.DictReader(io.StringIO(export(engine, table)["csv/players.csv"])))
    assert [p["name"] for p in players if p["is_llm"] == "True"] == [agent]


async def test_the_replay_of_a_game_of_one_person_asks_no_guess_as_the_reveal(
    service: GameService,  # noqa: F811
) -> None:
    """A table of one person and AI players only (the terminal's): the survey asks them no
    guess, so the reveal counts none, and the replay page says what the reveal said."""
    engine = service.engine
    table = await play_table(service, finish=False)
    await finish(service, table)
    with session_scope(engine) as s:  # everyone but Alice: an agent from start to end
        for seat in s.exec(select(m.Seat).where(m.Seat.game_id == table.game_id)):
            if seat.index != table.seat_of[ALICE]:
                seat.is_agent, seat.user_id = True, None
    said = reveal.claim(engine, table.game_id, window=WINDOW, closed=True)
    assert said is not None and "of you named" not in said
    page = render(load(engine, table.game_id))
    assert f"<p id='reveal-text'>{said}</p>" in page
    assert "of you named" not in page and "id='guesses'" not in page
