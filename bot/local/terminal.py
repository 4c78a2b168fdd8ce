"""``mafiabot play``: you play in the terminal against agent players.

Your terminal is your booth: you see the stage (and the den when you are mafia) as
``[HH:MM:SS] Name: text`` lines and type chat lines or commands. In an interactive terminal a
status bar counts down the phase; otherwise reminders are printed before each deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import threading
from collections.abc import Sequence
from datetime import timedelta

from rich.console import Console
from rich.markup import escape

from bot.errors import ServiceError
from bot.local.render import PHASE_NAMES, ConsoleRenderer
from bot.local.simulate import TERMINAL, describe_resume, pick_resume
from bot.runtime import running_service
from bot.service import GameService, LiveGame
from bot.settings import Settings
from games.config import GameConfig
from games.errors import RuleError
from games.events import Event, GameOver, PhaseStarted
from games.names import display_list
from games.roles import get_role
from games.state import GameState, PhaseKind

HUMAN_ID = "local:you"

HELP = """\
Type a line to talk. Commands:
  /vote NAME     vote for NAME (during a vote; you can change it until the deadline)
  /abstain       abstain in the current vote
  /act NAME      your role's night action (detective: investigate, doctor: protect)
  /who           players, what is known about them, and the time left
  /help          this help
  /quit          leave; the game is saved, continue with: mafiabot play --resume"""


def seconds_left(game: LiveGame) -> float | None:
    state = game.state
    if state is None or state.phase.deadline is None:
        return None
    return max(0.0, (state.phase.deadline - game.clock.now()).total_seconds())


def status_line(game: LiveGame, seat: int) -> str:
    state = game.state
    if state is None:
        return "Waiting for the game to start"
    me = state.seats[seat]
    phase = PHASE_NAMES[state.phase.kind].format(n=state.phase.number)
    left = seconds_left(game)
    clock = f" | {int(left) // 60}:{int(left) % 60:02d} left" if left is not None else ""
    life = "" if me.alive else " (eliminated, watching)"
    return f"{phase}{clock} | you are {me.name}, {me.role}{life} | /help"


def who(game: LiveGame, seat: int) -> str:
    state = game.state
    if state is None:
        return "The game hasn't started."
    me = state.seats[seat]
    lines = [status_line(game, seat)]
    alive = [s.name for s in state.seats if s.alive]
    lines.append(f"Alive ({len(alive)}): {display_list(alive)}")
    dead = [f"{s.name} ({s.role})" for s in state.seats if not s.alive]
    if dead:
        lines.append(f"Out: {', '.join(dead)}")
    if me.is_mafia:
        partners = [s.name for s in state.seats if s.is_mafia and s.index != seat]
        lines.append(f"Your fellow mafia: {display_list(partners)}")
    if state.phase.kind.is_vote and state.votes:
        votes = [
            f"{state.seats[v].name} -> {state.seats[t].name if t is not None else 'abstain'}"
            for v, t in state.votes.items()
            if state.phase.kind is PhaseKind.VOTE or me.is_mafia
        ]
        if votes:
            lines.append("Votes: " + ", ".join(votes))
    return "\n".join(lines)


class Reminders:
    """Prints 'N seconds left' before each deadline (for terminals without a status bar)."""

    def __init__(self, console: Console, game_id: str) -> None:
        self.console = console
        self.game_id = game_id
        self._handles: list[object] = []

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        if game.id != self.game_id:
            return
        for event in events:
            if isinstance(event, PhaseStarted):
                for h in self._handles:
                    h.cancel()  # type: ignore[attr-defined]
                self._handles = []
                for before in (30, 10):
                    if event.seconds > before * 2:
                        at = event.deadline - timedelta(seconds=before)
                        self._handles.append(
                            game.timers.call_at(at, self._say(f"{before} seconds left."))
                        )
            elif isinstance(event, GameOver):
                for h in self._handles:
                    h.cancel()  # type: ignore[attr-defined]

    def _say(self, text: str):  # type: ignore[no-untyped-def]
        async def run() -> None:
            self.console.print(f"[dim]{text}[/]")

        return run


def cue(state: GameState | None, seat: int, phase_seq: int) -> str | None:
    """What the person at ``seat`` can do in the phase that just started (the terminal's
    counterpart of the menus on Discord and Slack), or None when there is nothing to do."""
    if state is None or state.over or state.phase.seq != phase_seq:
        return None
    me = state.seats[seat]
    if not me.alive:
        return None
    kind = state.phase.kind
    if kind.is_vote and seat in state.votes:  # (after a resume: the vote is still there)
        voted = state.votes[seat]
        shown = "abstain" if voted is None else state.seats[voted].name
        return f"Your vote stands: {shown}. /vote NAME changes it until the deadline."
    names = ", ".join(state.seats[i].name for i in state.vote_targets(seat))
    if kind is PhaseKind.VOTE:
        return f"Your vote: /vote NAME (one of {names}) or /abstain; you can change it."
    if kind is PhaseKind.NIGHT_VOTE and me.is_mafia:
        return f"Tonight's kill: /vote NAME (one of {names})."
    role = get_role(me.role)
    if (
        kind.is_night
        and role.night_verb
        and role.team != "mafia"
        and seat not in state.night_actions
    ):
        return f"Tonight you may {role.night_verb} someone: /act NAME."
    return None


class Cues:
    """Prints :func:`cue` for the person's seat whenever a phase starts."""

    def __init__(self, console: Console, game_id: str, user_id: str) -> None:
        self.console = console
        self.game_id = game_id
        self.user_id = user_id

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        me = game.seat_of_user(self.user_id)
        if game.id != self.game_id or me is None:
            return
        for event in events:
            if isinstance(event, PhaseStarted):
                self.show(game, me.index, event.seq)

    def show(self, game: LiveGame, seat: int, phase_seq: int) -> None:
        line = cue(game.state, seat, phase_seq)
        if line is not None:
            self.console.print(f"[cyan]{escape(line)}[/]", highlight=False)


async def handle_line(service: GameService, game: LiveGame, seat: int, line: str) -> str | None:
    """Carry out one typed line; returns a message for the player, or None."""
    line = line.strip()
    if not line:
        return None
    if not line.startswith("/"):
        await service.say(game.id, seat, line)
        return None
    command, _, arg = line[1:].partition(" ")
    command = command.lower()
    arg = arg.strip()
    if command in ("help", "h", "?"):
        return HELP
    if command == "who":
        return who(game, seat)
    if command == "vote":
        if not arg:
            return "Usage: /vote NAME"
        await service.vote(game.id, seat, arg)
        return None
    if command == "abstain":
        await service.vote(game.id, seat, None)
        return None
    if command in ("act", "investigate", "protect"):
        if not arg:
            return f"Usage: /{command} NAME"
        await service.night_act(game.id, seat, arg)
        return None  # (the Game-Manager confirms it in private, with the name as spelled)
    return f"Unknown command /{command}. Type /help."


def _stdin_lines(loop: asyncio.AbstractEventLoop, queue: asyncio.Queue[str | None]) -> None:
    """Read stdin in a daemon thread (never blocks exit) and hand lines to the loop."""

    def pump() -> None:
        for raw in sys.stdin:
            loop.call_soon_threadsafe(queue.put_nowait, raw.rstrip("\n"))
        loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=pump, daemon=True, name="stdin").start()


async def _input_loop(service: GameService, game: LiveGame, seat: int, console: Console) -> None:
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    finished = asyncio.create_task(game.finished.wait())
    if interactive:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.patch_stdout import patch_stdout

        session: PromptSession[str] = PromptSession(
            bottom_toolbar=lambda: status_line(game, seat), refresh_interval=1.0
        )
        with patch_stdout(raw=True):
            while not game.finished.is_set():
                prompt = asyncio.create_task(session.prompt_async("> "))
                done, _ = await asyncio.wait({prompt, finished}, return_when="FIRST_COMPLETED")
                if prompt not in done:
                    prompt.cancel()
                    with contextlib.suppress(BaseException):
                        await prompt
                    break
                try:
                    line = prompt.result()
                except (EOFError, KeyboardInterrupt):
                    break
                if not await _run_line(service, game, seat, line, console):
                    break
        return
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    _stdin_lines(asyncio.get_running_loop(), queue)
    while not game.finished.is_set():
        getter = asyncio.create_task(queue.get())
        done, _ = await asyncio.wait({getter, finished}, return_when="FIRST_COMPLETED")
        if getter not in done:
            getter.cancel()
            break
        typed = getter.result()
        if typed is None:  # end of input: keep watching until the game ends
            await finished
            break
        if not await _run_line(service, game, seat, typed, console):
            break


async def _run_line(
    service: GameService, game: LiveGame, seat: int, line: str, console: Console
) -> bool:
    if line.strip().lower() in ("/quit", "/exit"):
        console.print(f"Saved. Continue with: mafiabot play --resume {game.id}")
        return False
    try:
        reply = await handle_line(service, game, seat, line)
    except (RuleError, ServiceError) as e:
        console.print(f"[red]{escape(str(e))}[/]")
        return True
    if reply:
        console.print(escape(reply), highlight=False)
    return True


async def run_play(
    settings: Settings,
    *,
    config: GameConfig,
    players: int,
    seed: int | None,
    agent: str,
    db_url: str | None,
    resume: str | None,
) -> None:
    console = Console(force_terminal=sys.stdout.isatty() or None, highlight=False)
    if agent == "llm" and not settings.llm:
        console.print(
            "[yellow]No LLM configured (MAFIABOT_LLM); the offline baseline agent plays.[/]"
        )
        agent = "baseline"
    async with running_service(settings, db_url, agent) as service:
        if resume is not None:
            game_id = await pick_resume(service, resume, TERMINAL)
            console.print(f"Game {game_id}")
            game = await service.resume(game_id, paused=True)
            me = game.seat_of_user(HUMAN_ID)
            if me is None:
                raise LookupError(f"Game {game_id} has no terminal player to resume as.")
            renderer = ConsoleRenderer(console, game_id=game_id, user_id=HUMAN_ID)
            if game.replayed:
                # what this seat saw before the interruption: the role card and the talk so far
                console.print("[dim]Earlier in this game:[/]")
                renderer.show(game, game.replayed)
            service.subscribe(renderer)
            service.subscribe(Reminders(console, game_id))
            cues = Cues(console, game_id, HUMAN_ID)
            service.subscribe(cues)
            console.print(describe_resume(game))
            if game.state is not None:
                cues.show(game, me.index, game.state.phase.seq)
        else:
            game_id = await service.create_game(config, seed=seed, server_external_id=TERMINAL)
            console.print(f"Game {game_id}")
            me = await service.join(game_id, HUMAN_ID)
            for _ in range(players - 1):
                await service.join(game_id, None, is_agent=True, agent_kind=agent)
            service.subscribe(ConsoleRenderer(console, game_id=game_id, user_id=HUMAN_ID))
            service.subscribe(Reminders(console, game_id))
            service.subscribe(Cues(console, game_id, HUMAN_ID))
            console.print(
                f"You play as [bold]{me.name}[/]. The other {players - 1} players are AI agents "
                "playing like people. Type /help for commands."
            )
            await service.start(game_id)
        game = service.games[game_id]
        await _input_loop(service, game, me.index, console)
        await service.drain(game_id)
