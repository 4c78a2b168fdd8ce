"""Buttons and menus whose ``custom_id`` carries their state, so they outlive the process.

Every component is a `discord.ui.DynamicItem`: the bot registers the classes once
(``add_dynamic_items`` in ``setup_hook``) and discord.py rebuilds the item from the clicked
``custom_id`` alone, whether the message was sent a second or a week ago, by this process or
the one before a crash. The game id (and, for menus, the phase they belong to) is in the id, so
a menu from an earlier phase is refused instead of counting in the wrong vote.

Callbacks only parse and hand over to the bot's handlers (`Lobby`, `Actions`, `Survey`), which
they know only as the `Handlers` protocol below (this module imports none of them, nor the bot). A
component of a game another process drives is left to that process (`GameBound`: during a
rolling restart both processes receive the click, and only the game's driver answers it).
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, ClassVar, Protocol, cast

import discord

from bot.discord.sanitize import plain

ABSTAIN = "-abstain-"
MAX_OPTIONS = 25
GAME = r"(?P<game>[a-z0-9]{1,24})"

Select = discord.ui.Select[discord.ui.View]
Button = discord.ui.Button[discord.ui.View]


class LobbyHandler(Protocol):
    async def button(
        self, interaction: discord.Interaction[Any], game_id: str, action: str
    ) -> None: ...

    async def consent_answer(
        self,
        interaction: discord.Interaction[Any],
        game_id: str | None,
        agreed: bool,
        version: str,
        research: bool,
    ) -> None: ...


class ActionHandler(Protocol):
    async def vote(
        self,
        interaction: discord.Interaction[Any],
        game_id: str,
        seq: int,
        target: str | None,
        *,
        night: bool,
    ) -> None: ...

    async def night_act(
        self, interaction: discord.Interaction[Any], game_id: str, seq: int, target: str
    ) -> None: ...


class SurveyHandler(Protocol):
    async def answer(
        self,
        interaction: discord.Interaction[Any],
        game_id: str,
        seat: int,
        key: str,
        value: str,
    ) -> None: ...

    async def comment_form(
        self, interaction: discord.Interaction[Any], game_id: str, seat: int
    ) -> None: ...


class Claimer(Protocol):
    async def claim(self, game_id: str, at: datetime | None = None) -> bool: ...


class Handlers(Protocol):
    """What a clicked component reaches through ``interaction.client`` (`MafiaBot` is one)."""

    @property
    def lobby(self) -> LobbyHandler: ...

    @property
    def actions(self) -> ActionHandler: ...

    @property
    def survey(self) -> SurveyHandler: ...

    @property
    def handover(self) -> Claimer: ...


def bot_of(interaction: discord.Interaction[Any]) -> Handlers:
    return cast("Handlers", interaction.client)


def _options(values: list[tuple[str, str]]) -> list[list[discord.SelectOption]]:
    """Split (label, value) pairs into menus of at most 25 options."""
    parts = [values[i : i + MAX_OPTIONS] for i in range(0, len(values), MAX_OPTIONS)] or [[]]
    return [
        [discord.SelectOption(label=plain(lbl, 100), value=val) for lbl, val in p] for p in parts
    ]


class GameBound:
    """A component of one game: handled only by the process that drives the game (taking it
    over if nobody does); another process's check fails and discord.py drops the click there
    silently (`bot.discord.shards.Handover.claim`)."""

    async def interaction_check(self, interaction: discord.Interaction[Any], /) -> bool:
        game_id: str | None = getattr(self, "game_id", None)
        if game_id is None:
            return True
        at = discord.utils.snowflake_time(interaction.id)
        return await bot_of(interaction).handover.claim(game_id, at)


# --- lobby -------------------------------------------------------------------------------------


class LobbyButton(
    GameBound,
    discord.ui.DynamicItem[Button],
    template=rf"mafia:lobby:{GAME}:(?P<action>join|leave|start)",
):
    STYLES: ClassVar[dict[str, discord.ButtonStyle]] = {
        "join": discord.ButtonStyle.success,
        "leave": discord.ButtonStyle.secondary,
        "start": discord.ButtonStyle.primary,
    }

    def __init__(self, game_id: str, action: str) -> None:
        super().__init__(
            discord.ui.Button(
                label=action.capitalize(),
                style=self.STYLES[action],
                custom_id=f"mafia:lobby:{game_id}:{action}",
            )
        )
        self.game_id = game_id
        self.action = action

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> LobbyButton:
        return cls(match["game"], match["action"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await bot_of(interaction).lobby.button(interaction, self.game_id, self.action)


def lobby_view(game_id: str) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    for action in ("join", "leave", "start"):
        view.add_item(LobbyButton(game_id, action))
    return view


class ConsentButton(
    GameBound,
    discord.ui.DynamicItem[Button],
    template=r"mafia:consent:(?P<game>[a-z0-9]{1,24}|-):(?P<answer>yes|no):"
    r"(?P<version>[\w.\-]{1,16}):(?P<research>[01])",
):
    def __init__(self, game_id: str | None, answer: str, version: str, research: bool) -> None:
        label = ("Agree" if research else "OK") if answer == "yes" else "Decline"
        super().__init__(
            discord.ui.Button(
                label=label,
                style=discord.ButtonStyle.success
                if answer == "yes"
                else discord.ButtonStyle.danger,
                custom_id=f"mafia:consent:{game_id or '-'}:{answer}:{version}:{int(research)}",
            )
        )
        self.game_id = game_id
        self.agreed = answer == "yes"
        self.version = version
        self.research = research

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> ConsentButton:
        game = None if match["game"] == "-" else match["game"]
        return cls(game, match["answer"], match["version"], match["research"] == "1")

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await bot_of(interaction).lobby.consent_answer(
            interaction, self.game_id, self.agreed, self.version, self.research
        )


def consent_view(game_id: str | None, version: str, research: bool) -> discord.ui.View:
    view = discord.ui.View(timeout=None)
    view.add_item(ConsentButton(game_id, "yes", version, research))
    view.add_item(ConsentButton(game_id, "no", version, research))
    return view


# --- votes and night actions ---------------------------------------------------------------------


class _PhaseSelect(GameBound, discord.ui.DynamicItem[Select], template=r"mafia:__never__"):
    """A menu of character names for one phase of one game."""

    prefix = ""
    placeholder = ""

    def __init__(
        self,
        game_id: str,
        seq: int,
        part: int = 0,
        options: list[discord.SelectOption] | None = None,
    ) -> None:
        super().__init__(
            discord.ui.Select(
                custom_id=f"mafia:{self.prefix}:{game_id}:{seq}:{part}",
                placeholder=self.placeholder,
                options=options or [],
                min_values=1,
                max_values=1,
            )
        )
        self.game_id = game_id
        self.seq = seq

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> _PhaseSelect:
        return cls(match["game"], int(match["seq"]), int(match["part"]))

    def choice(self, interaction: discord.Interaction[Any]) -> str | None:
        values = self.item.values
        return values[0] if values else None


class VoteSelect(_PhaseSelect, template=rf"mafia:vote:{GAME}:(?P<seq>\d+):(?P<part>\d+)"):
    prefix = "vote"
    placeholder = "Vote: who should be voted out?"

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        choice = self.choice(interaction)
        target = None if choice == ABSTAIN else choice
        await bot_of(interaction).actions.vote(
            interaction, self.game_id, self.seq, target, night=False
        )


class KillSelect(_PhaseSelect, template=rf"mafia:kill:{GAME}:(?P<seq>\d+):(?P<part>\d+)"):
    prefix = "kill"
    placeholder = "Mafia vote: who dies tonight?"

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        choice = self.choice(interaction)
        target = None if choice == ABSTAIN else choice
        await bot_of(interaction).actions.vote(
            interaction, self.game_id, self.seq, target, night=True
        )


class ActSelect(_PhaseSelect, template=rf"mafia:act:{GAME}:(?P<seq>\d+):(?P<part>\d+)"):
    prefix = "act"
    placeholder = "Choose a player"

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        choice = self.choice(interaction)
        if choice is not None:
            await bot_of(interaction).actions.night_act(interaction, self.game_id, self.seq, choice)


def _phase_view(
    cls: type[_PhaseSelect], game_id: str, seq: int, names: list[str], abstain: str | None
) -> discord.ui.View:
    values = [(n, n) for n in names]
    if abstain is not None:
        values.append((abstain, ABSTAIN))
    view = discord.ui.View(timeout=None)
    for part, options in enumerate(_options(values)[:5]):
        view.add_item(cls(game_id, seq, part, options))
    return view


def vote_view(game_id: str, seq: int, names: list[str]) -> discord.ui.View:
    return _phase_view(VoteSelect, game_id, seq, names, "Abstain")


def night_vote_view(game_id: str, seq: int, names: list[str]) -> discord.ui.View:
    return _phase_view(KillSelect, game_id, seq, names, "Abstain (kill nobody)")


def night_action_view(game_id: str, seq: int, verb: str, names: list[str]) -> discord.ui.View:
    view = _phase_view(ActSelect, game_id, seq, names, None)
    for item in view.children:
        if isinstance(item, ActSelect):
            item.item.placeholder = f"Who do you {verb}?"
    return view


# --- survey ---------------------------------------------------------------------------------


class SurveySelect(
    GameBound,
    discord.ui.DynamicItem[Select],
    template=rf"mafia:survey:{GAME}:(?P<seat>\d+):(?P<q>ai\d|sim|time|rel)",
):
    def __init__(
        self,
        game_id: str,
        seat: int,
        question: str,
        options: list[discord.SelectOption] | None = None,
        placeholder: str = "",
    ) -> None:
        super().__init__(
            discord.ui.Select(
                custom_id=f"mafia:survey:{game_id}:{seat}:{question}",
                placeholder=placeholder,
                options=options or [],
            )
        )
        self.game_id = game_id
        self.seat = seat
        self.question = question

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> SurveySelect:
        return cls(match["game"], int(match["seat"]), match["q"])

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        values = self.item.values
        if values:
            await bot_of(interaction).survey.answer(
                interaction, self.game_id, self.seat, self.question, values[0]
            )


class CommentModal(discord.ui.Modal):
    """The survey's optional comment, as a form."""

    def __init__(self, game_id: str, seat: int, title: str, label: str) -> None:
        super().__init__(title=plain(title, 45), custom_id=f"mafia:comment:{game_id}:{seat}")
        self.game_id = game_id
        self.seat = seat
        self.text: discord.ui.TextInput[CommentModal] = discord.ui.TextInput(
            label=plain(label, 45),
            custom_id="comments",
            style=discord.TextStyle.paragraph,
            required=False,
            max_length=1000,
        )
        self.add_item(self.text)

    async def on_submit(self, interaction: discord.Interaction[Any]) -> None:
        await bot_of(interaction).survey.answer(
            interaction, self.game_id, self.seat, "note", self.text.value
        )


class CommentButton(
    GameBound, discord.ui.DynamicItem[Button], template=rf"mafia:survey:{GAME}:(?P<seat>\d+):note"
):
    """Opens the comment form (a form cannot be part of a message, so a button asks for it)."""

    def __init__(self, game_id: str, seat: int) -> None:
        super().__init__(
            discord.ui.Button(
                label="Add a comment",
                style=discord.ButtonStyle.secondary,
                custom_id=f"mafia:survey:{game_id}:{seat}:note",
            )
        )
        self.game_id = game_id
        self.seat = seat

    @classmethod
    async def from_custom_id(
        cls,
        interaction: discord.Interaction[Any],
        item: discord.ui.Item[Any],
        match: re.Match[str],
        /,
    ) -> CommentButton:
        return cls(match["game"], int(match["seat"]))

    async def callback(self, interaction: discord.Interaction[Any]) -> None:
        await bot_of(interaction).survey.comment_form(interaction, self.game_id, self.seat)


DYNAMIC_ITEMS: tuple[type[discord.ui.DynamicItem[Any]], ...] = (
    LobbyButton,
    ConsentButton,
    VoteSelect,
    KillSelect,
    ActSelect,
    SurveySelect,
    CommentButton,
)
