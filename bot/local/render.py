"""Terminal rendering of events as ``[HH:MM:SS] Name: text`` lines, for one seat's view."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape

from bot.service.live import LiveGame
from games.events import Event, MessageAccepted, VoteCast, visible
from games.narration import MANAGER, manager_line
from games.text import one_line


def format_event(event: Event) -> tuple[str, str] | None:
    """(speaker, text) for an event, or None when it has nothing to show."""
    if isinstance(event, MessageAccepted):
        return event.name, event.text
    line = manager_line(event)
    return (MANAGER, line) if line is not None else None


class ConsoleRenderer:
    """Prints what ``seat`` may see (None: an all-seeing spectator, for simulations).

    ``user_id`` instead follows that person's seat in the game: seat numbers are only final
    once the service has seated everyone at the start, after this renderer subscribed."""

    def __init__(
        self,
        console: Console,
        seat: int | None = None,
        omniscient: bool = False,
        game_id: str | None = None,
        user_id: str | None = None,
    ) -> None:
        self.console = console
        self.seat = seat
        self.omniscient = omniscient
        self.game_id = game_id
        self.user_id = user_id

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        self.show(game, events)

    def show(self, game: LiveGame, events: Sequence[Event]) -> None:
        if self.game_id is not None and game.id != self.game_id:
            return
        seat = self.seat
        if self.user_id is not None:
            me = game.seat_of_user(self.user_id)
            seat = None if me is None else me.index
        for event in events:
            if not self.omniscient and not visible(event, seat):
                continue
            if self.omniscient and event.place == "booth":
                continue
            shown = format_event(event)
            if shown is None:
                continue
            speaker, text = one_line(shown[0]), one_line(shown[1])  # one line stays one line
            stamp = event.t.strftime("%H:%M:%S")
            tag = {"den": "[red](den)[/] ", "booth": "[cyan](private)[/] "}.get(event.place, "")
            if speaker == MANAGER:
                style = "bold yellow"
            elif isinstance(event, VoteCast):
                style = "magenta"
            else:
                style = "bold"
            self.console.print(
                f"[dim]\\[{stamp}][/] {tag}[{style}]{escape(speaker)}[/]: {escape(text)}",
                highlight=False,
                soft_wrap=True,
            )
