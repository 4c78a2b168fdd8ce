"""``mafiabot play``: you play in the terminal against agent players.

Your terminal is your booth: you see the stage (and the den when you are mafia) as
``[HH:MM:SS] Name: text`` lines and type chat lines or commands. In an interactive terminal a
status bar counts down the phase; otherwise reminders are printed before each deadline.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import re
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from rich.console import Console
from rich.markup import escape

from bot import invocation
from bot.errors import ServiceError
from bot.local.model_check import agent_for_the_model
from bot.local.render import ConsoleRenderer
from bot.local.simulate import (
    TERMINAL,
    describe_agents,
    describe_resume,
    ensure_started,
    pick_resume,
    resume_command,
    stop_hint,
    to_stderr,
)
from bot.players import reveal, stats, survey
from bot.runtime import running_service
from bot.service.clock import utcnow
from bot.service.live import LiveGame
from bot.service.port import GameService
from bot.settings import Settings
from bot.table.help import RESUME, help_text, roles_in_play
from bot.table.help import TERMINAL as TERMINAL_COMMANDS
from bot.table.status import PHASE_NAMES
from games.config import GameConfig
from games.errors import ConfigError, RuleError
from games.events import ChoicesOffered, Event, GameOver, PhaseStarted, is_draw
from games.names import display_list
from games.state import GameState, PhaseKind

HUMAN_ID = "local:you"

log = logging.getLogger(__name__)

#: what a terminal can put in a typed or pasted line that is not text: escape sequences (arrow
#: keys, bracketed paste, colours, titles), control characters, undecodable bytes
_NOT_TEXT = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1bO.|\x1b[@-_]?"
    r"|[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff]"
)


def typed_text(line: str) -> str:
    """A typed or pasted line without what is not text, so escape sequences neither reach
    the table nor turn a command into chat."""
    return _NOT_TEXT.sub("", line.replace("\t", " ")).strip()


#: where the booth is, as the terminal's help says it
BOOTH = (
    "This terminal is your booth: you see the stage here, your role card and private results "
    "(and the den at night if you are mafia). Type a line to talk."
)


def terminal_help(roles: Sequence[str] = ()) -> str:
    """The help of every platform (`bot.table.help`), with the terminal's commands."""
    text = help_text(
        commands=TERMINAL_COMMANDS, roles=roles_in_play(roles), booth=BOOTH, markup="plain"
    )
    return text.replace(RESUME, invocation.command("play --resume"))


HELP = terminal_help()


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


def cue(offer: ChoicesOffered, state: GameState | None) -> str | None:
    """What the person can do now, from the engine's offer (the terminal's counterpart of the
    menus on Discord and Slack); None once the offer is stale or the night action is taken."""
    if state is None or state.over or not offered_now(offer, state):
        return None
    names = ", ".join(offer.target_names)
    if offer.verb in ("vote", "kill"):
        if offer.seat in state.votes:  # (after a resume: the vote is still there)
            voted = state.votes[offer.seat]
            shown = "abstain" if voted is None else state.seats[voted].name
            return f"Your vote stands: {shown}. /vote NAME changes it until the deadline."
        if offer.verb == "vote":
            return f"Your vote: /vote NAME (one of {names}) or /abstain; you can change it."
        return f"Tonight's kill: /vote NAME (one of {names})."
    if offer.seat in state.night_actions:
        return None
    return f"Tonight you may {offer.verb} someone: /act NAME (one of {names})."


def offered_now(offer: ChoicesOffered, state: GameState) -> bool:
    """Is ``offer`` for the current phase? A night action is offered once a night, at its
    first phase, and stands through the mafia's vote that follows the night talk."""
    if offer.phase_seq == state.phase.seq:
        return True
    prior = state.prior
    return (
        offer.verb not in ("vote", "kill")
        and state.phase.kind is PhaseKind.NIGHT_VOTE
        and prior is not None
        and prior.phase.seq == offer.phase_seq
    )


class Cues:
    """Prints :func:`cue` for the person's seat whenever the engine offers it a choice."""

    def __init__(self, console: Console, game_id: str, user_id: str) -> None:
        self.console = console
        self.game_id = game_id
        self.user_id = user_id

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        me = game.seat_of_user(self.user_id)
        if game.id != self.game_id or me is None:
            return
        for event in events:
            if isinstance(event, ChoicesOffered) and event.seat == me.index:
                self.show(cue(event, game.state))

    def recall(self, game: LiveGame, seat: int) -> None:
        """After a resume: the offers of the current phase again (from the replayed log)."""
        offers = [e for e in game.replayed if isinstance(e, ChoicesOffered) and e.seat == seat]
        for offer in offers[-2:]:  # (at most a night action and a vote are current)
            self.show(cue(offer, game.state))

    def show(self, line: str | None) -> None:
        if line is not None:
            self.console.print(f"[cyan]{escape(line)}[/]", highlight=False)


async def handle_line(
    service: GameService, game: LiveGame, seat: int, line: str, at: datetime | None = None
) -> str | None:
    """Carry out one typed line (read at ``at``: judged against the phase current then);
    returns a message for the player, or None."""
    line = typed_text(line)
    if not line:
        return None
    if not line.startswith("/"):
        await service.say(game.id, seat, line, at=at)
        return None
    command, _, arg = line[1:].partition(" ")
    command = command.lower()
    arg = arg.strip()
    if command in ("help", "h", "?"):
        return terminal_help(game.config.roles)
    if command == "who":
        return who(game, seat)
    if command == "vote":
        if not arg:
            return "Usage: /vote NAME"
        await service.vote(game.id, seat, arg, at=at)
        return None
    if command == "abstain":
        await service.vote(game.id, seat, None, at=at)
        return None
    if command in ("act", "investigate", "protect"):
        if not arg:
            return f"Usage: /{command} NAME"
        try:
            await service.night_act(game.id, seat, arg, at=at)
        except RuleError:
            hint = mafia_act_hint(game.state, seat)
            if hint is None:
                raise
            return hint
        return None  # (the Game-Manager confirms it in private, with the name as spelled)
    return f"Unknown command /{command}. Type /help."


def mafia_act_hint(state: GameState | None, seat: int) -> str | None:
    """The mafia have no /act: their night choice is the kill, made with /vote. Said instead
    of the engine's bare "Your role has no night action." (None for anyone else)."""
    if state is None or not state.seats[seat].alive or not state.seats[seat].is_mafia:
        return None
    when = "now" if state.phase.kind is PhaseKind.NIGHT_VOTE else "when the night's kill vote opens"
    return f"The mafia have no /act: choose tonight's kill with /vote NAME ({when})."


#: a typed line and the moment it was read (the terminal's platform time)
Typed = tuple[str, datetime]


class Keyboard:
    """The person's lines, each with the moment it was read: a prompt with a status bar in an
    interactive terminal, else stdin read by a daemon thread (never blocks exit)."""

    def __init__(self, status: Callable[[], str]) -> None:
        self.interactive = self.has_bar()
        self.ended = False  # no more input will come
        self._status = status
        self._queue: asyncio.Queue[Typed | None] | None = None
        self._session: Any = None

    @staticmethod
    def has_bar() -> bool:
        """An interactive terminal: a prompt with the status bar counting the phase down."""
        return sys.stdin.isatty() and sys.stdout.isatty()

    @contextlib.contextmanager
    def opened(self) -> Iterator[None]:
        if not self.interactive:
            yield
            return
        from prompt_toolkit import PromptSession
        from prompt_toolkit.patch_stdout import patch_stdout

        self._session = PromptSession(bottom_toolbar=self._status, refresh_interval=1.0)
        with patch_stdout(raw=True):
            yield

    async def read(self, stop: asyncio.Event | None = None) -> Typed | None:
        """The next line, or None when ``stop`` is set first or input has ended."""
        if self.ended:
            return None
        if self.interactive:
            getter: asyncio.Task[Any] = asyncio.create_task(self._session.prompt_async("> "))
        else:
            getter = asyncio.create_task(self._lines().get())
        waits: set[asyncio.Task[Any]] = {getter}
        if stop is not None:
            waits.add(asyncio.create_task(stop.wait()))
        done, pending = await asyncio.wait(waits, return_when="FIRST_COMPLETED")
        for task in pending:
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        if getter not in done:
            return None
        try:
            got = getter.result()
        except (EOFError, KeyboardInterrupt):
            got = None
        if got is None:
            self.ended = True
            return None
        return got if not self.interactive else (got, utcnow())

    def _lines(self) -> asyncio.Queue[Typed | None]:
        if self._queue is None:
            queue: asyncio.Queue[Typed | None] = asyncio.Queue()
            loop = asyncio.get_running_loop()

            def pump() -> None:
                for raw in sys.stdin:
                    loop.call_soon_threadsafe(queue.put_nowait, (raw.rstrip("\n"), utcnow()))
                loop.call_soon_threadsafe(queue.put_nowait, None)

            threading.Thread(target=pump, daemon=True, name="stdin").start()
            self._queue = queue
        return self._queue


async def _input_loop(
    service: GameService,
    game: LiveGame,
    seat: int,
    console: Console,
    keys: Keyboard,
    resume: str | None = None,
) -> bool:
    """Play until the game ends (True) or the person leaves (False): /quit, or Ctrl-D and
    Ctrl-C at the prompt, which say the same as /quit."""
    while not game.finished.is_set():
        typed = await keys.read(game.finished)
        if typed is None:
            if keys.ended and not keys.interactive:  # end of input: watch until the end
                await game.finished.wait()
            elif keys.ended and not game.finished.is_set():  # Ctrl-D or Ctrl-C at the prompt
                console.print(f"Saved. Continue with: {_resume_line(game, resume)}", soft_wrap=True)
            return game.finished.is_set()
        if not await _run_line(service, game, seat, typed, console, resume):
            return False
    return True


def _resume_line(game: LiveGame, resume: str | None) -> str:
    return resume or invocation.command(f"play --resume {game.id}")


async def _run_line(
    service: GameService,
    game: LiveGame,
    seat: int,
    typed: Typed,
    console: Console,
    resume: str | None = None,
) -> bool:
    line, at = typed
    if typed_text(line).lower() in ("/quit", "/exit"):
        console.print(f"Saved. Continue with: {_resume_line(game, resume)}", soft_wrap=True)
        return False
    try:
        reply = await handle_line(service, game, seat, line, at)
    except (RuleError, ServiceError) as e:
        console.print(f"[red]{escape(str(e))}[/]")
        return True
    except Exception as e:  # the input handler must outlive any one line
        log.debug("typed line failed", exc_info=True)
        console.print(f"[red]That line was not sent ({escape(type(e).__name__)}).[/]")
        return True
    if reply:
        console.print(escape(reply), highlight=False)
    return True


async def ask_survey(
    service: GameService, game: LiveGame, seat: int, console: Console, keys: Keyboard
) -> None:
    """The post-game survey of every platform (`bot.players.survey`), one line per question: Enter
    skips a question, /skip the rest. Each answer is stored as soon as it is given."""
    questions = survey.questions_for(game.seats, seat)
    console.print(
        f"{survey.intro_for(game.seats, seat)} Press Enter to skip a question, or type /skip "
        "to skip them all.",
        highlight=False,
    )
    for question in questions:
        console.print(f"[cyan]{escape(survey_prompt(game, seat, question))}[/]", highlight=False)
        while True:
            typed = await keys.read()
            if typed is None:
                return
            text = typed[0].strip()
            if text.lower() in ("/skip", "/quit", "/exit"):
                console.print("Survey skipped. Thanks for playing!")
                return
            if not text:
                break
            try:
                columns = survey.answer(game.seats, seat, question, text)
            except survey.SurveyError as e:
                console.print(f"[red]{escape(str(e))}[/]")
                continue
            await asyncio.to_thread(
                survey.save_answer, service.engine, game.id, seat, SURVEY_SOURCE, columns
            )
            break
    console.print("Thank you, your answers are saved.")


async def show_reveal(
    service: GameService, game: LiveGame, console: Console, window: float
) -> None:
    """The reveal (`bot.players.reveal`), the same words as on every platform: the terminal's one
    person has answered (or skipped) the survey, so it has closed."""
    text = await asyncio.to_thread(
        reveal.claim, service.engine, game.id, window=window, closed=True
    )
    if text:
        console.print(f"[bold]{escape(text)}[/]", highlight=False)
        await asyncio.to_thread(stats.count_revealed, service.engine, game.id)


#: ``survey_responses.source`` of the terminal's answers
SURVEY_SOURCE = "local"


def survey_prompt(game: LiveGame, seat: int, question: survey.Question) -> str:
    if question.kind == "guess":
        return f"{question.text} ({', '.join(survey.choices(game.seats, seat))})"
    if question.kind == "rating":
        return f"{question.text} 1-5 {survey.SCALE_HINT}"
    return question.text


def deal_with_role(
    config: GameConfig, players: int, seed: int, role: str
) -> tuple[GameConfig, int]:
    """The game's deal with the person's seat holding ``role``: the seed deals every role
    as usual (`games.engine.assign_roles`), then one seat of that role, drawn by the seed, is
    the person's. Returns the config with that deal fixed and the person's place in it
    (the deal is by seat as joined, so the person joins there)."""
    import dataclasses
    import random

    from games.engine import assign_roles

    dealt = assign_roles(config, players, seed)
    seats = [i for i, r in enumerate(dealt) if r == role]
    if not seats:
        raise ConfigError(f"This game deals no {role} seat; choose another role.")
    place = random.Random(f"{seed}:your-role").choice(seats)
    return dataclasses.replace(config, deal=tuple(dealt)), place


async def run_play(
    settings: Settings,
    *,
    config: GameConfig,
    players: int,
    seed: int | None,
    agent: str,
    db_url: str | None,
    resume: str | None,
    role: str | None = None,
) -> None:
    console = Console(force_terminal=sys.stdout.isatty() or None, highlight=False)
    if agent == "llm" and not settings.llm:
        console.print(
            "[yellow]No LLM configured (MAFIABOT_LLM); the offline baseline agent plays.[/]"
        )
        agent = "baseline"
    agent = await agent_for_the_model(settings, agent, console)
    place = 0
    if role is not None and resume is None:
        if seed is None:
            seed = random.randrange(2**63)
        config, place = deal_with_role(config, players, seed, role)
    with stop_hint("play", settings, db_url) as playing:  # Ctrl-C off the prompt, SIGTERM
        await _play(settings, console, config, players, seed, agent, db_url, resume, playing,
                    place)  # fmt: skip


async def _play(
    settings: Settings,
    console: Console,
    config: GameConfig,
    players: int,
    seed: int | None,
    agent: str,
    db_url: str | None,
    resume: str | None,
    playing: list[LiveGame],
    place: int = 0,
) -> None:
    bar = Keyboard.has_bar()
    async with running_service(settings, db_url, agent, progress=to_stderr) as service:
        if resume is not None:
            game_id = await pick_resume(service, resume, TERMINAL)
            console.print(f"Game {game_id}")
            ensure_started(await service.replay(game_id), "play")  # (read only)
            game = await service.resume(game_id, paused=True)
            playing.append(game)
            me = game.seat_of_user(HUMAN_ID)
            if me is None:
                raise LookupError(f"Game {game_id} has no terminal player to resume as.")
            renderer = ConsoleRenderer(console, game_id=game_id, user_id=HUMAN_ID)
            if game.replayed:
                # what this seat saw before the interruption: the role card and the talk so far
                console.print("[dim]Earlier in this game:[/]")
                renderer.show(game, game.replayed)
            service.subscribe(renderer)
            if not bar:  # (the status bar counts down already)
                service.subscribe(Reminders(console, game_id))
            cues = Cues(console, game_id, HUMAN_ID)
            service.subscribe(cues)
            console.print(describe_resume(game))
            cues.recall(game, me.index)
        else:
            game_id = await service.create_game(
                config, seed=seed, speed=settings.clock_speed, server_external_id=TERMINAL
            )
            console.print(f"Game {game_id}")
            playing.append(service.games[game_id])
            for _ in range(place):  # (with --role, the deal is by seat as joined)
                await service.join(game_id, None, is_agent=True, agent_kind=agent)
            me = await service.join(game_id, HUMAN_ID)
            for _ in range(players - 1 - place):
                await service.join(game_id, None, is_agent=True, agent_kind=agent)
            service.subscribe(ConsoleRenderer(console, game_id=game_id, user_id=HUMAN_ID))
            if not bar:  # (the status bar counts down already)
                service.subscribe(Reminders(console, game_id))
            service.subscribe(Cues(console, game_id, HUMAN_ID))
            console.print(
                f"You play as [bold]{escape(me.name)}[/]. The other {players - 1} players are AI "
                f"agents playing like people: {escape(describe_agents(settings, agent))}. "
                "Type /help for commands."
            )
            await service.start(game_id)
        game = service.games[game_id]
        keys = Keyboard(lambda: status_line(game, me.index))
        resume_line = resume_command("play", game_id, settings, db_url)
        with keys.opened():
            over = await _input_loop(service, game, me.index, console, keys, resume_line)
            await service.drain(game_id)
            state = game.state
            if over and state is not None and (state.winner or is_draw(None, state.end_reason)):
                await ask_survey(service, game, me.index, console, keys)
                await show_reveal(service, game, console, settings.reveal_after_seconds)
