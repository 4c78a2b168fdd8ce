"""The post-game survey in each human's booth: `bot.players.survey`'s questions, rendered as menus.

The questions, their order, the 1-5 scale and how an answer is checked and stored are
`bot.players.survey`'s, the same on every platform; this module only draws them. One message holds
the guess (one or two menus of the other characters) and the three ratings; a second one
offers the optional comment (a button opening a form). Every answer is stored the moment it
is chosen (``survey_responses``, source "discord"), so a half-finished survey still counts and
a restart loses nothing; choosing again changes the answer. The guess closes at the reveal
(`bot.players.survey.save_answer` refuses it, in one line); the other menus stay open.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import discord

from bot.discord.links import LinkStore
from bot.discord.rooms import Rooms
from bot.discord.sanitize import plain
from bot.discord.views import MAX_OPTIONS, CommentButton, CommentModal, SurveySelect
from bot.players import reveal, survey
from bot.service.live import SeatInfo

Reply = Callable[[discord.Interaction[Any], str], Awaitable[None]]

#: the menu keys in custom ids (kept short, and stable for surveys already posted)
MENU_KEYS: dict[str, survey.Question] = {
    "ai0": survey.GUESS,
    "ai1": survey.GUESS,
    "sim": survey.SIMILARITY,
    "time": survey.TIMING,
    "rel": survey.RELEVANCE,
    "note": survey.COMMENTS,
}
RATING_KEYS = {q.key: k for k, q in MENU_KEYS.items() if q.kind == "rating"}


def survey_text() -> str:
    """The questions, as the first survey message lists them."""
    lines = [f"{survey.INTRO} Each answer is saved as soon as you pick it:"]
    for number, question in enumerate(survey.REQUIRED, 1):
        scale = f" {survey.SCALE_HINT}" if question.kind == "rating" else ""
        lines.append(f"{number}. {question.text}{scale}")
    return "\n".join(lines)


def survey_message(game_id: str, seat: int, choices: list[str]) -> tuple[str, discord.ui.View]:
    """The guess and the ratings: ``choices`` are the characters the respondent may name
    (`bot.players.survey.choices`)."""
    view = discord.ui.View(timeout=None)
    parts = [choices[i : i + MAX_OPTIONS] for i in range(0, len(choices), MAX_OPTIONS)][:2]
    for i, part in enumerate(parts):
        view.add_item(
            SurveySelect(
                game_id,
                seat,
                f"ai{i}",
                [discord.SelectOption(label=plain(n, 100), value=n) for n in part],
                placeholder=plain(survey.GUESS.text, 150) if i == 0 else "... or one of these?",
            )
        )
    scale = [
        discord.SelectOption(label=label, value=str(value))
        for value, label in survey.RATING_LABELS.items()
    ]
    for question in survey.RATINGS:
        view.add_item(
            SurveySelect(
                game_id,
                seat,
                RATING_KEYS[question.key],
                scale,
                placeholder=plain(question.text, 150),
            )
        )
    return survey_text(), view


def comment_message(game_id: str, seat: int) -> tuple[str, discord.ui.View]:
    view = discord.ui.View(timeout=None)
    view.add_item(CommentButton(game_id, seat))
    return survey.COMMENTS.text, view


class Survey:
    def __init__(
        self,
        links: LinkStore,
        rooms: Rooms,
        reply: Reply,
        completed: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self.links = links
        self.rooms = rooms
        self.reply = reply
        #: told the game id when someone's survey is complete (the reveal may be due)
        self.completed = completed

    async def seats(
        self, interaction: discord.Interaction[Any], game_id: str, seat: int
    ) -> list[SeatInfo] | None:
        """The game's seats, if ``seat`` is the clicker's (else they are told)."""
        rows = await self.links.seats(game_id)
        mine = next((s for s in rows if s.index == seat), None)
        if mine is None or mine.user_id != str(interaction.user.id):
            await self.reply(interaction, "This questionnaire belongs to another player.")
            return None
        return [SeatInfo(s.index, s.name, s.user_id, s.is_agent) for s in rows]

    async def comment_form(
        self, interaction: discord.Interaction[Any], game_id: str, seat: int
    ) -> None:
        if await self.seats(interaction, game_id, seat) is None:
            return
        form = CommentModal(game_id, seat, "A comment for the research", survey.COMMENTS.text)
        await interaction.response.send_modal(form)

    async def answer(
        self,
        interaction: discord.Interaction[Any],
        game_id: str,
        seat: int,
        key: str,
        value: str,
    ) -> None:
        question = MENU_KEYS.get(key)
        seats = await self.seats(interaction, game_id, seat)
        if seats is None or question is None:
            return
        engine = self.links.engine
        try:
            columns = survey.answer(seats, seat, question, value)
            row = await self.links.run(
                survey.save_answer, engine, game_id, seat, "discord", columns
            )
        except survey.SurveyError as exc:  # (a guess after the reveal: survey.GUESS_CLOSED)
            await self.reply(interaction, str(exc))
            return
        if question.kind == "guess":
            said = f"Your guess: {columns['guessed_name']}."
        elif question.kind == "rating":
            said = f"Saved: {value} of 5."
        else:
            said = "Thanks, your comment is saved."
        revealed = await self.links.run(reveal.revealed, engine, game_id)
        left = survey.still_open(row, revealed)
        if left:
            await self.reply(interaction, f"{said} ({len(left)} question(s) left.)")
            return
        when = "" if revealed else f" {reveal.WHEN}"
        await self.reply(interaction, f"{said} All done, thank you for playing!{when}")
        if self.completed is not None:
            await self.completed(game_id)
        room = self.rooms.get(game_id)
        booth = room.booths.get(seat) if room is not None else None
        if booth is not None:
            await self.rooms.archive(booth.thread_id, lock=False)
