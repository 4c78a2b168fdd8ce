"""The post-game survey on Slack: a button in each booth opens a modal of the survey's
questions (`bot.players.survey`, the same on every platform); the answers are checked there and
stored
once per seat. A form sent after the reveal keeps its ratings but not its guess (the guess
closes at the reveal), and the respondent is told so in one line.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from slack_sdk.errors import SlackApiError

from bot.players import reveal, survey
from bot.slack import blocks as B
from bot.slack.delivery import why
from bot.slack.lobby import PLATFORM
from bot.slack.text import to_slack
from bot.slack.workspaces import WorkspaceGone
from bot.table.seats import seat_infos

if TYPE_CHECKING:
    from bot.slack.adapter import Ctx, SlackAdapter

log = logging.getLogger(__name__)


async def open_survey(adapter: SlackAdapter, ctx: Ctx, game_id: str) -> str | None:
    seats = await adapter.store.run(lambda: seat_infos(adapter.service.engine, game_id))
    mine = next((s for s in seats if s.user_id == ctx.user and not s.is_agent), None)
    if mine is None:
        return "You didn't play in that game."
    engine = adapter.service.engine
    if await adapter.store.run(lambda: survey.answered(engine, game_id, mine.index)):
        return "You have already answered this survey. Thank you!"
    if ctx.trigger_id is None:
        return "Click the button again, please."
    closed = await adapter.store.run(lambda: reveal.revealed(engine, game_id))
    try:
        await (await adapter.out.client(ctx.team)).views_open(
            trigger_id=ctx.trigger_id,
            view=B.survey_modal(game_id, survey.choices(seats, mine.index), guess_closed=closed),
        )
    except (SlackApiError, WorkspaceGone) as err:
        log.warning("survey modal failed: %s", why(err))
        return "I couldn't open the survey; please click again."
    return None


async def submit_survey(
    adapter: SlackAdapter, ctx: Ctx, game_id: str, values: dict[str, Any]
) -> tuple[dict[str, str], Any]:
    """(errors by block id, a follow-up to await after the ack)."""
    engine = adapter.service.engine
    seats = await adapter.store.run(lambda: seat_infos(engine, game_id))
    mine = next((s for s in seats if s.user_id == ctx.user and not s.is_agent), None)
    if mine is None:
        return {survey.GUESS.key: "You didn't play in this game."}, None

    def given(question: survey.Question) -> str:
        return B.selected(values, question.key, question.key) or ""

    errors: dict[str, str] = {}
    # a form opened after the reveal asks no guess (and one sent then has its guess dropped)
    closed = await adapter.store.run(lambda: reveal.revealed(engine, game_id))
    for question in survey.REQUIRED:
        if question.kind == "guess" and closed and not given(question):
            continue
        try:
            survey.answer(seats, mine.index, question, given(question))
        except survey.SurveyError as err:
            errors[question.key] = str(err)
    if errors:
        return errors, None
    similarity, timing, relevance = (survey.parse_rating(given(q)) for q in survey.RATINGS)
    form = survey.SurveyAnswer(
        given(survey.GUESS), similarity, timing, relevance, given(survey.COMMENTS) or None
    )
    row = survey.response(game_id, seats, mine.index, form, PLATFORM)
    result = await adapter.store.run(lambda: survey.store_form(engine, row))
    stored = result != "answered"

    async def thank() -> None:
        if stored:
            # Who the AI was is said on the stage, to everyone at once, when the survey
            # closes (bot.players.reveal): never to one player ahead of the others.
            await adapter.reveals.answered(game_id)
        dm = await adapter.out.open_dm(ctx.team, ctx.user, report=False)
        if dm is None:
            return
        if not stored:
            adapter.out.post(
                dm,
                "You had already answered this survey; the first answer counts.",
                team=ctx.team,
                report=False,
            )
            return
        if result == "saved without the guess":  # the AI was revealed meanwhile
            thanks = survey.GUESS_CLOSED + " Thank you, your ratings are saved."
        else:
            thanks = "Thank you, your answers are saved. " + reveal.WHEN
        adapter.out.post(
            dm,
            to_slack(thanks),
            team=ctx.team,
            report=False,
        )

    return {}, thank()
