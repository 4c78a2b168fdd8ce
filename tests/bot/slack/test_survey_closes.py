"""On the fake Slack: the survey's guess closes at the reveal, `/mafia export` and
`/mafia spotrate` name no AI before it, and a kicked person is not announced as the AI."""

from __future__ import annotations

from sqlmodel import Session, select

from bot.players import survey
from bot.store.models import SurveyResponse
from tests.bot.slack.conftest import SlackHarness, seed_where
from tests.bot.slack.test_reveal_and_stats import (
    REVEAL,
    _agent_is_bystander,
    answer_survey,
    won_game,
)


async def test_a_guess_after_the_reveal_is_refused_and_never_counted(
    harness: SlackHarness,
) -> None:
    assert harness.adapter is not None
    harness.adapter.reveals.window = 600.0
    fake = harness.fake
    users = harness.people(5)
    game_id, agent, _ = await won_game(harness, users)
    late = users[1]  # opens the form before the reveal and sends it after
    await fake.wait_until(
        lambda: any("survey" in t.lower() for t in harness.dm_texts(late)), what="survey"
    )
    await fake.click(user=late, action_id="mafia_survey_open", channel=fake.dm(late))
    [view] = await fake.wait_until(lambda: fake.open_views(late), what="survey modal")
    harness.adapter.reveals.close()  # the window ends now
    harness.adapter.reveals.game_over(game_id, delay=0)
    expected = f"{REVEAL} {agent}. 0 of 5 of you named them."
    await harness.wait_stage(
        lambda: any(m.text == expected for m in harness.stage()), what="the reveal"
    )
    values = {"guessed_name": agent, "similarity": "4", "timing": "3", "relevance": "3"}
    await fake.submit_view(user=late, view=view, values=values)
    await fake.wait_until(
        lambda: any("Thank you" in t for t in harness.dm_texts(late)), what="thanks"
    )
    assert any(survey.GUESS_CLOSED in t for t in harness.dm_texts(late)), harness.dm_texts(late)
    stats = await harness.slash(late, "stats")
    assert "Spotted the AI: no guesses yet." in stats, stats
    rate = await harness.slash(users[0], "spotrate")
    assert "Overall: 0 of 0 answers named an AI" in rate, rate


async def test_export_and_spotrate_name_no_ai_before_the_reveal(harness: SlackHarness) -> None:
    assert harness.adapter is not None
    harness.adapter.reveals.window = 600.0
    users = harness.people(5)
    game_id, agent, _ = await won_game(harness, users)
    await answer_survey(harness, users[0], agent)  # the admin played and named the agent
    rate = await harness.slash(users[0], "spotrate")
    assert "No finished game with an AI player" in rate, rate
    reply = await harness.slash(users[0], "export")
    assert f"{game_id}: skipped, its AI has not been revealed yet" in reply, reply
    assert "Export of" not in reply and agent not in reply


async def test_a_kicked_person_is_not_announced_as_the_ai(harness: SlackHarness) -> None:
    assert harness.adapter is not None and harness.service is not None
    harness.adapter.reveals.window = 600.0
    fake = harness.fake
    users = harness.people(5)
    seed = seed_where(_agent_is_bystander)
    game_id, _ = await harness.running_game_of(
        users, f"day=1 vote=3600 night=3600 night_vote=3600 mafia=1 seed={seed}"
    )
    game = harness.live(game_id)
    assert game.state is not None
    agent = next(s for s in game.seats if s.is_agent).name
    mafia = next(s.name for s in game.state.seats if s.is_mafia)
    gone = next(u for u in users[1:] if harness.character(game_id, u) != mafia)
    blake = harness.character(game_id, gone)
    await fake.message_event(user=gone, text="hello from the person in this seat")
    await harness.wait_stage(
        lambda: any("hello from the person" in t for _, t in harness.persona_lines()),
        what="the person's line",
    )
    assert "now played by an AI" in await harness.slash(users[0], f"kick <@{gone.id}|x>")
    await fake.wait_until(
        lambda: game.state is not None and game.state.phase.kind.value == "vote",
        what="the vote",
    )
    for s in game.state.seats:
        await harness.service.vote(game_id, s.index, mafia if s.name != mafia else agent)
    await harness.wait_stage(
        lambda: any("win" in m.text for m in harness.stage()), within=15, what="the end"
    )
    stayed = [u for u in users if u is not gone]
    for n, u in enumerate(stayed):
        await answer_survey(harness, u, agent if n == 0 else blake)
    expected = (
        f"{REVEAL} {agent}. {blake}'s player left on day 1; an AI played the seat from then "
        f"on. 1 of 4 of you named {agent}."
    )
    await harness.wait_stage(
        lambda: any(m.text == expected for m in harness.stage()), what="the reveal"
    )
    for n, u in enumerate(stayed):
        spotted = "1 of 1 (100%)" if n == 0 else "0 of 1 (0%)"
        assert f"Spotted the AI: {spotted};" in await harness.slash(u, "stats")


async def test_a_form_opened_after_the_reveal_asks_no_guess_and_keeps_the_ratings(
    harness: SlackHarness,
) -> None:
    assert harness.adapter is not None and harness.service is not None
    harness.adapter.reveals.window = 1.5
    fake = harness.fake
    users = harness.people(5)
    game_id, agent, _ = await won_game(harness, users)
    expected = f"{REVEAL} {agent}. 0 of 5 of you named them."
    await harness.wait_stage(
        lambda: any(m.text == expected for m in harness.stage()), what="the reveal"
    )
    late = users[2]
    await fake.wait_until(
        lambda: any("survey" in t.lower() for t in harness.dm_texts(late)), what="survey"
    )
    await fake.click(user=late, action_id="mafia_survey_open", channel=fake.dm(late))
    [view] = await fake.wait_until(lambda: fake.open_views(late), what="survey modal")
    blocks = view.view["blocks"]
    assert survey.GUESS.key not in {b.get("block_id") for b in blocks}, blocks
    assert any(survey.GUESS_CLOSED in str(b.get("text")) for b in blocks), blocks
    values = {"similarity": "4", "timing": "3", "relevance": "2"}
    await fake.submit_view(user=late, view=view, values=values)
    await fake.wait_until(
        lambda: any("ratings are saved" in t for t in harness.dm_texts(late)), what="thanks"
    )
    seat = harness.live(game_id).seat_of_user(late.id)
    assert seat is not None
    with Session(harness.engine) as s:
        [row] = s.exec(
            select(SurveyResponse).where(
                SurveyResponse.game_id == game_id, SurveyResponse.seat_index == seat.index
            )
        ).all()
    assert (row.similarity, row.timing, row.relevance) == (4.0, 3.0, 2.0)
    assert row.guessed_name is None and row.identified_ai is None and row.guessed_at is None
