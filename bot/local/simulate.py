"""``mafiabot simulate``: agent players only, transcript printed live."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

from rich.console import Console

from agent.decisions import DecisionSummary
from bot import invocation
from bot.local.model_check import agent_for_the_model
from bot.local.render import ConsoleRenderer
from bot.local.stopping import stdout_closed
from bot.runtime import database_url, running_service
from bot.service.live import LiveGame
from bot.service.port import GameService
from bot.service.transcript import transcript
from bot.settings import Settings
from bot.store.db import make_engine, session_scope
from bot.store.decisions import summary_for_game
from bot.store.models import Game
from bot.table.status import PHASE_NAMES
from games.config import GameConfig

#: the local "servers" games are created on: one per command, so each resumes its own games
TERMINAL, SIMULATION = "terminal", "simulate"
_COMMAND = {TERMINAL: "play", SIMULATION: "simulate"}


async def pick_resume(service: GameService, resume: str, origin: str = SIMULATION) -> str:
    """The game ``--resume`` means: the id given, or ("last") the newest unfinished game that
    this command (``origin``) started. A game the other command started is pointed there."""
    other = TERMINAL if origin == SIMULATION else SIMULATION
    mine = await service.unfinished_games(["local"], servers=[origin])
    theirs = await service.unfinished_games(["local"], servers=[other])
    elsewhere = invocation.command(f"{_COMMAND[other]} --resume")
    if resume == "last":
        if mine:
            return mine[0]
        hint = f" (there is one to continue with: {elsewhere} {theirs[0]})" if theirs else ""
        raise LookupError(f"There is no unfinished game to resume{hint}.")
    if resume not in mine and resume in theirs:
        raise LookupError(
            f"Game {resume} was started with {invocation.command(_COMMAND[other])}; "
            f"continue it with: {elsewhere} {resume}"
        )
    return resume


def to_stderr(line: str) -> None:
    """A progress line on stderr (nothing once stdout is closed: the command is ending)."""
    if not stdout_closed():
        Console(stderr=True).print(line, markup=False, highlight=False, soft_wrap=True)


def resume_command(command: str, game_id: str, settings: Settings, db_url: str | None) -> str:
    """The line that continues ``game_id``: ``--db`` too when the game is not in the
    default database (``uv run mafiabot play --resume ID --db URL``)."""
    args = f"{command} --resume {game_id}"
    if db_url and db_url != database_url(settings):
        args += f" --db {shlex.quote(db_url)}"
    return invocation.command(args)


@contextlib.contextmanager
def stop_hint(command: str, settings: Settings, db_url: str | None) -> Iterator[list[LiveGame]]:
    """On Ctrl-C or SIGTERM (the command's task cancelled: `bot.local.stopping`), once the
    service has shut down and saved, one line on stderr: how to carry on with the game put
    in the yielded list, if it has not ended (nothing when standard output was closed: the
    command then ends quietly)."""
    playing: list[LiveGame] = []
    try:
        yield playing
    except asyncio.CancelledError:
        game = playing[-1] if playing else None
        started = game is not None and game.state is not None and not game.finished.is_set()
        if game is not None and started and not stdout_closed():
            Console(stderr=True).print(
                f"Stopped; game {game.id} is saved. Continue with: "
                f"{resume_command(command, game.id, settings, db_url)}",
                markup=False,
                highlight=False,
                soft_wrap=True,
            )
        raise


def ensure_started(game: LiveGame, command: str) -> None:
    """A game still in its lobby was never dealt: there is nothing to resume (waiting for it
    would hang), so say so (``LookupError``, one line). Checked on a read-only copy
    (``GameService.replay``) before anything is taken over."""
    if game.state is None:
        raise LookupError(
            f"Game {game.id} never started (it is still in its lobby): there is nothing to "
            f"resume. Start a new game with: {invocation.command(command)}"
        )


def describe_agents(settings: Settings, kind: str) -> str:
    """Who plays the agent seats, as the banner names it."""
    if kind == "llm" and settings.llm:
        return f"the LLM agent ({settings.llm})"
    return "the offline baseline agent"


def describe_resume(game: LiveGame) -> str:
    state = game.state
    if state is None:
        return f"Resumed game {game.id} in its lobby."
    if state.over:
        return f"Game {game.id} had already ended."
    assert state.phase.deadline is not None
    left = max(0.0, (state.phase.deadline - game.clock.now()).total_seconds())
    phase = PHASE_NAMES[state.phase.kind].format(n=state.phase.number)
    return f"Resumed game {game.id} in {phase}, {left:.0f} game seconds left in this phase."


async def run_simulation(
    settings: Settings,
    out: Console,
    *,
    config: GameConfig,
    players: int,
    seed: int | None,
    speed: float,
    agent: str,
    db_url: str | None,
    resume: str | None,
) -> dict[str, Any]:
    if agent == "llm" and not settings.llm:
        out.print("[yellow]No LLM configured (MAFIABOT_LLM); the offline baseline agent plays.[/]")
        agent = "baseline"
    agent = await agent_for_the_model(settings, agent, out)
    with stop_hint(_COMMAND[SIMULATION], settings, db_url) as playing:
        return await _simulate(settings, out, config, players, seed, speed, agent, db_url,
                               resume, playing)  # fmt: skip


async def _simulate(
    settings: Settings,
    out: Console,
    config: GameConfig,
    players: int,
    seed: int | None,
    speed: float,
    agent: str,
    db_url: str | None,
    resume: str | None,
    playing: list[LiveGame],
) -> dict[str, Any]:
    async with running_service(settings, db_url, agent, progress=to_stderr) as service:
        if resume is not None:
            game_id = await pick_resume(service, resume)
            out.print(f"Game {game_id}", highlight=False)
            service.subscribe(ConsoleRenderer(out, omniscient=True, game_id=game_id))
            ensure_started(await service.replay(game_id), _COMMAND[SIMULATION])  # (read only)
            game = await service.resume(game_id)
            playing.append(game)
            out.print(describe_resume(game), highlight=False)
        else:
            game_id = await service.create_game(
                config, seed=seed, speed=speed, server_external_id=SIMULATION
            )
            out.print(f"Game {game_id}", highlight=False)
            playing.append(service.games[game_id])
            out.print(
                f"{players} AI agents play: {describe_agents(settings, agent)}.", highlight=False
            )
            for _ in range(players):
                await service.join(game_id, None, is_agent=True, agent_kind=agent)
            service.subscribe(ConsoleRenderer(out, omniscient=True, game_id=game_id))
            await service.start(game_id)
        game = service.games[game_id]
        await service.wait_finished(game_id)
        await service.drain(game_id)
        result = await game_summary(service, game)
    # Every agent record is flushed once the service, the agents and their end-of-game
    # learning have shut down, so the summary is taken afterwards.
    summary = await asyncio.to_thread(store_agent_summary, database_url(settings, db_url), game_id)
    if summary.calls:
        for line in summary.lines():
            out.print(line, highlight=False)
    result["agents"] = asdict(summary)
    return result


def store_agent_summary(url: str, game_id: str) -> DecisionSummary:
    """Summarise the agents' LLM use from the decision log and keep it with the game."""
    engine = make_engine(url)
    try:
        summary = summary_for_game(engine, game_id)
        with session_scope(engine) as session:
            row = session.get(Game, game_id)
            if row is not None:
                row.agent_summary = asdict(summary)
        return summary
    finally:
        engine.dispose()


async def game_summary(service: GameService, game: LiveGame) -> dict[str, Any]:
    history = await service.history(game.id)
    state = game.state
    assert state is not None
    return {
        "game_id": game.id,
        "winner": state.winner,
        "end_reason": state.end_reason,
        "players": [
            {
                "name": s.name,
                "role": s.role,
                "alive": s.alive,
                "is_agent": game.seats[s.index].is_agent,
            }
            for s in state.seats
        ],
        "phases": sum(1 for e in history if e["kind"] == "phase_started"),
        "transcript": transcript(history),
    }
