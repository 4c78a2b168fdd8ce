"""The post-game questionnaire of the LLMafia study, in each human's booth.

Four menus in one message: which player was the AI, then how human-like, how well-timed and
how relevant its messages were, each 1-5. Every answer is stored the moment it is chosen (one
``survey_responses`` row per seat, source "discord", scale "1-5"), so a half-finished survey
still counts and a restart loses nothing; choosing again changes the answer.

``about_seat_index`` is the AI the ratings describe: the one guessed when the guess named an
agent, else the only agent (None with several), as in `bot.platform_common`;
``identified_ai`` says whether the guess named an agent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import discord

from bot import survey
from bot.discord.sanitize import plain
from bot.discord.views import MAX_OPTIONS, SurveySelect

if TYPE_CHECKING:
    from bot.discord.app import MafiaBot

#: menu key -> (column, placeholder): the questions of `bot.survey`
QUESTIONS = {
    key: (q.key, f"{q.text} (1-5)")
    for key, q in (("sim", survey.SIMILARITY), ("time", survey.TIMING), ("rel", survey.RELEVANCE))
}
SCALE = [
    ("1 - not at all", "1"),
    ("2", "2"),
    ("3", "3"),
    ("4", "4"),
    ("5 - completely", "5"),
]
FIELDS = ("guessed_name", "similarity", "timing", "relevance")


def survey_message(
    game_id: str, seat: int, names: dict[int, str], agents: set[int]
) -> tuple[str, discord.ui.View]:
    text = (
        "The game is over. One of the players was an AI agent; a few questions for the "
        "research behind this game (each answer is saved as soon as you pick it):\n"
        "1. Which player do you think was the AI?\n"
        "2-4. How did its messages feel: human-like, well-timed, relevant? (1 = not at all, "
        "5 = completely)"
    )
    view = discord.ui.View(timeout=None)
    others = [n for s, n in sorted(names.items()) if s != seat]
    parts = [others[i : i + MAX_OPTIONS] for i in range(0, len(others), MAX_OPTIONS)][:2]
    for i, part in enumerate(parts):
        view.add_item(
            SurveySelect(
                game_id,
                seat,
                f"ai{i}",
                [discord.SelectOption(label=plain(n, 100), value=n) for n in part],
                placeholder=survey.GUESS.text if i == 0 else "... or one of these?",
            )
        )
    for key, (_, question) in QUESTIONS.items():
        view.add_item(
            SurveySelect(
                game_id,
                seat,
                key,
                [discord.SelectOption(label=lbl, value=val) for lbl, val in SCALE],
                placeholder=plain(question, 150),
            )
        )
    return text, view


class Survey:
    def __init__(self, bot: MafiaBot) -> None:
        self.bot = bot

    async def answer(
        self,
        interaction: discord.Interaction[Any],
        game_id: str,
        seat: int,
        question: str,
        value: str,
    ) -> None:
        seats = await self.bot.links.seats(game_id)
        mine = next((s for s in seats if s.index == seat), None)
        if mine is None or mine.user_id != str(interaction.user.id):
            await self.bot.reply(interaction, "This questionnaire belongs to another player.")
            return
        agents = [s for s in seats if s.is_agent]
        changes: dict[str, Any] = {
            "about_seat_index": agents[0].index if len(agents) == 1 else None
        }
        if question.startswith("ai"):
            guessed = next((s for s in seats if s.name == value), None)
            if guessed is None:
                await self.bot.reply(interaction, "There is no such player in this game.")
                return
            changes["guessed_name"] = guessed.name
            changes["identified_ai"] = guessed.is_agent
            if guessed.is_agent:
                changes["about_seat_index"] = guessed.index
            said = f"Your guess: {guessed.name}."
        else:
            column, _ = QUESTIONS[question]
            changes[column] = float(int(value))
            said = f"Saved: {value} of 5."
        row = await self.bot.links.save_survey(game_id, seat, changes)
        left = [f for f in FIELDS if getattr(row, f) is None]
        if left:
            await self.bot.reply(interaction, f"{said} ({len(left)} question(s) left.)")
            return
        await self.bot.reply(interaction, f"{said} All done, thank you for playing!")
        room = self.bot.rooms.get(game_id)
        booth = room.booths.get(seat) if room is not None else None
        if booth is not None:
            await self.bot.rooms.archive(booth.thread_id, lock=False)
