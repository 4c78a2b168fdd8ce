"""The ``mafiabot`` command line: games and the bot here; the data and research commands in
`mafiabot.data_cli`; what they share in `mafiabot.common`."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

# (typer ships its own copy of click: these are the errors its parser raises)
from typer._click.exceptions import ClickException, NoArgsIsHelpError

from bot.settings import Settings, SettingsError
from mafiabot import cli_help, common
from mafiabot.common import (
    PLAY_LOG,
    SEED_MAX,
    AgentKind,
    DaySeconds,
    Db,
    Mafia,
    NightSeconds,
    NightVoteSeconds,
    OldRoles,
    Players,
    Roles,
    Seed,
    SetupOpt,
    Speed,
    Tie,
    VoteSeconds,
    app,
    check_phases,
    check_speed,
    command_path,
    db_url,
    err,
    fail,
    game_config,
    print_error,
    read_settings,
    setup_logging,
)

#: the app (made in `mafiabot.common`), as tests and embedders import it from here
__all__ = ["app", "main"]

T = TypeVar("T")


@app.command()
def simulate(
    players: Players = 8,
    mafia: Mafia = None,
    seed: Seed = None,
    day_seconds: DaySeconds = None,
    vote_seconds: VoteSeconds = None,
    night_seconds: NightSeconds = None,
    night_vote_seconds: NightVoteSeconds = None,
    speed: Speed = 1.0,
    agent: AgentKind = None,
    with_role: Roles = None,
    old_role: OldRoles = None,
    setup: SetupOpt = None,
    tie_rule: Tie = "none",
    db: Db = None,
    resume: Annotated[
        str | None,
        typer.Option(
            "--resume",
            help="Continue an interrupted game (its id, or 'last' for the most recent).",
        ),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the result as JSON on stdout at the end.")
    ] = False,
) -> None:
    """A game of agent players only, transcript printed live."""
    from bot.local.simulate import run_simulation

    check_speed(speed)
    role = [*(with_role or []), *(old_role or [])] or None
    settings, agent, config = _setup(agent, players, resume, mafia=mafia, roles=role,
                              setup=setup, tie_rule=tie_rule, day_seconds=day_seconds,
                              vote_seconds=vote_seconds, night_seconds=night_seconds,
                              night_vote_seconds=night_vote_seconds)  # fmt: skip
    url = db_url(db, write=True, settings=settings)
    out = Console(stderr=True) if json_out else Console()
    result = _run_game(
        run_simulation(settings, out, config=config, players=players, seed=seed, speed=speed,
                       agent=agent, db_url=url, resume=resume)
    )  # fmt: skip
    if json_out:
        sys.stdout.write(json.dumps(result) + "\n")


@app.command()
def play(
    players: Players = 6,
    mafia: Mafia = None,
    seed: Seed = None,
    day_seconds: DaySeconds = None,
    vote_seconds: VoteSeconds = None,
    night_seconds: NightSeconds = None,
    night_vote_seconds: NightVoteSeconds = None,
    with_role: Roles = None,
    role: cli_help.YourRole = None,
    setup: SetupOpt = None,
    tie_rule: Tie = "none",
    agent: AgentKind = None,
    db: Db = None,
    resume: Annotated[
        str | None,
        typer.Option("--resume", help="Continue an interrupted game (id, or 'last')."),
    ] = None,
) -> None:
    """Play in the terminal against agent players (you type in your booth)."""
    from bot.local.terminal import run_play

    role, with_role = cli_help.your_role(role, with_role, resume)
    settings, agent, config = _setup(agent, players, resume, PLAY_LOG, mafia=mafia, roles=with_role,
                                     setup=setup, tie_rule=tie_rule, day_seconds=day_seconds,
                                     vote_seconds=vote_seconds, night_seconds=night_seconds,
                                     night_vote_seconds=night_vote_seconds)  # fmt: skip
    url = db_url(db, write=True, settings=settings)
    _run_game(
        run_play(settings, config=config, players=players, seed=seed, agent=agent,
                 db_url=url, resume=resume, role=role)
    )  # fmt: skip


JsonOut = Annotated[bool, typer.Option("--json", help="Print JSON.")]


@app.command("roles")
def roles_command(json_out: JsonOut = False) -> None:
    """Every role: name, faction, abilities and description."""
    from mafiabot.roles_cli import print_roles

    sys.stdout.write(print_roles(json_out) + "\n")


@app.command("setups")
def setups_command(json_out: JsonOut = False) -> None:
    """The shipped setups and the roles each deals by table size."""
    from mafiabot.roles_cli import print_setups

    sys.stdout.write(print_setups(json_out) + "\n")


@app.command()
def balance(
    setup: Annotated[str, typer.Argument(help="A setup's name or a comma-separated role list.")],
    games: Annotated[int, typer.Option(min=1, max=1_000_000, help="Games to play.")] = 400,
    players: Annotated[
        int | None, typer.Option("--players", "-n", help="Seats (default: the setup's own).")
    ] = None,
    seed: Annotated[int, typer.Option(min=0, max=SEED_MAX, help="First game's seed.")] = 0,
    json_out: JsonOut = False,
) -> None:
    """Each faction's win rate (95% interval) over all-baseline games of a setup."""
    from agent.balance import measure
    from games.errors import ConfigError
    from mafiabot.roles_cli import balance_config, balance_text

    try:
        config, players = balance_config(setup, players)
        data = measure(config, players, games, seed).to_dict()
    except ConfigError as e:
        fail(str(e))
    sys.stdout.write((json.dumps(data) if json_out else balance_text(data)) + "\n")


def _setup(
    agent: str | None, players: int, resume: str | None, log_file: str = "", **given: Any
) -> tuple[Settings, str, Any]:
    """Settings, the agent kind (``--agent``, else the LLM agent when a model is configured)
    and a checked game config, or one clear error (exit 2) and nothing created."""
    from games.errors import ConfigError

    if agent not in (None, "baseline", "llm"):
        raise typer.BadParameter("must be baseline or llm", param_hint="--agent")
    check_phases(**{k: v for k, v in given.items() if k.endswith("_seconds")})
    settings = read_settings()
    setup_logging(settings, settings.data_dir / log_file if log_file else None)
    if agent is None:
        agent = "llm" if settings.llm else "baseline"
    try:
        config = game_config(settings, **given)
        if resume is None:
            config.validate(players)
    except ConfigError as e:
        fail(str(e))
    return settings, agent, config


def _run_game(main: Coroutine[Any, Any, T]) -> T:
    """Run a game command; refusals (unknown game, missing LLM credentials) exit 2."""
    from agent.llm.base import LLMConfigError
    from bot.local.stopping import Stopped, run_stoppable
    from bot.service.port import ServiceError
    from games.errors import ConfigError

    try:
        return run_stoppable(main)  # Ctrl-C, SIGTERM, a closed stdout: saved, a hint, no trace
    except Stopped as e:
        raise typer.Exit(e.exit_code) from None
    except ConfigError as e:
        fail(str(e))
    except (LookupError, ServiceError, LLMConfigError) as e:
        fail(str(e).strip("'\""))


@app.command()
def run(
    discord: Annotated[bool, typer.Option("--discord", help="Run the Discord bot.")] = False,
    slack: Annotated[bool, typer.Option("--slack", help="Run the Slack app.")] = False,
    http: Annotated[
        int | None,
        typer.Option(
            "--http",
            metavar="PORT",
            help="Slack over HTTP on PORT (path /slack/events, signatures verified) "
            "instead of Socket Mode.",
        ),
    ] = None,
    shards: Annotated[
        str | None,
        typer.Option(
            "--shards",
            metavar="IDS",
            help="Discord shards this process connects, e.g. 0-3 or 0,2,4-6 (needs "
            "--shard-count); other processes on the same database run the others.",
        ),
    ] = None,
    shard_count: Annotated[
        int | None,
        typer.Option(
            "--shard-count",
            metavar="N",
            min=1,
            max=65_536,
            help="How many shards the Discord bot is split into, 1-65536 (default: "
            "Discord's advice).",
        ),
    ] = None,
    db: Db = None,
) -> None:
    """Run the chat adapters; --discord and --slack can run together on one event loop.

    The tokens come from the environment or a .env file in the folder you run it from:
    MAFIABOT_DISCORD_TOKEN (docs/discord.md); MAFIABOT_SLACK_BOT_TOKEN with
    MAFIABOT_SLACK_APP_TOKEN, or with --http MAFIABOT_SLACK_SIGNING_SECRET (docs/slack.md).
    """
    from bot.errors import PlatformUnreachable
    from bot.slack.app import SlackSetupError, check_settings

    settings = read_settings()
    setup_logging(settings)
    if not (slack or discord):
        raise typer.BadParameter("choose --discord and/or --slack")
    if http is not None and not slack:
        raise typer.BadParameter("--http is for --slack", param_hint="--http")
    for given, flag in ((shards, "--shards"), (shard_count, "--shard-count")):
        if given is not None and not discord:
            raise typer.BadParameter(f"{flag} is for --discord", param_hint=flag)
    sharding = {
        k: v for k, v in (("shards", shards), ("shard_count", shard_count)) if v is not None
    }
    options = None
    try:
        if slack:
            check_settings(settings, http_port=http)
        if discord:
            from bot.discord.app import _token
            from bot.discord.options import load_options

            _token(settings)
            if shards is not None:
                _check_shards(shards, shard_count)
            # a bad MAFIABOT_DISCORD_* value stops us before anything starts
            options = load_options(**sharding)
    except (SlackSetupError, SettingsError) as e:
        fail(str(e))
    url = db_url(db, write=True, settings=settings)
    from bot import heap

    heap.tune()  # a long-running process: few, short collector pauses
    try:
        asyncio.run(
            _run_adapters(
                settings, slack=slack, discord=discord, http=http, db=url, options=options
            )
        )
    except (SlackSetupError, SettingsError) as e:
        fail(str(e))
    except PlatformUnreachable as e:  # not bad input: the network; exit 1
        fail(str(e), code=1)
    except KeyboardInterrupt:
        pass
    # a log line, not a print: with MAFIABOT_LOG_FORMAT=json, stderr stays all JSON
    logging.getLogger("mafiabot.cli").info("stopped; running games carry on at the next start")


def _check_shards(shards: str, count: int | None) -> None:
    """``--shards`` against the shard count (the flag's, else MAFIABOT_DISCORD_SHARD_COUNT)."""
    from bot.discord.options import load_options
    from bot.discord.shards import parse_shards

    if count is None:
        count = load_options(shards="").shard_count
    try:
        parse_shards(shards, count)
    except ValueError as e:
        raise typer.BadParameter(str(e), param_hint="--shards") from None


async def _run_adapters(
    settings: Settings,
    *,
    slack: bool,
    discord: bool,
    http: int | None,
    db: str | None,
    options: Any = None,
) -> None:
    """One service, one event loop, every adapter asked for; /healthz and /metrics beside
    them; a graceful stop on SIGTERM (`bot.ops.serve`)."""
    from bot.ops.metrics import Metrics
    from bot.ops.serve import operations, serve_until_stopped
    from bot.runtime import running_service

    kind = "llm" if settings.llm else "baseline"
    metrics = Metrics()
    async with (
        running_service(settings, db, kind, metrics=metrics) as service,
        operations(settings, service, metrics) as ops,
    ):
        serving: dict[str, Coroutine[Any, Any, None]] = {}
        closers = []
        if slack:
            from bot.slack.app import SlackRunner

            slack_runner = SlackRunner(settings, service)
            ops.watch_slack(slack_runner)
            closers.append(slack_runner.close)
        try:
            if slack:
                await slack_runner.prepare()
                serving["slack"] = slack_runner.serve(http_port=http)
            if discord:
                from bot.discord.app import MafiaBot, serve_discord
                from bot.ops.discord_relay import RelayTimer

                bot = MafiaBot(service, settings, options, metrics=RelayTimer(metrics))
                ops.watch_discord(bot)
                serving["discord"] = serve_discord(service, settings, bot=bot)
            await serve_until_stopped(ops, serving, watchdog=True)
        finally:
            for close in closers:
                await close()


@app.command()
def replay(
    game_dir: Annotated[
        Path,
        typer.Argument(
            help="A recorded LLMafia game folder, e.g. .../llmafia/games/0006; with --html, "
            "the id of a finished game in the database.",
            metavar="GAME",
        ),
    ],
    html: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Write the finished game GAME as one self-contained HTML page to this file.",
        ),
    ] = None,
    research: Annotated[
        bool,
        typer.Option("--research", help="With --html: also the agents' decisions."),
    ] = False,
    identities: Annotated[
        Path | None,
        typer.Option("--identities", help='With --html: JSON {"user id": ["name", ...]} to scrub.'),
    ] = None,
    speed: Annotated[
        float,
        typer.Option(
            help="Play the recording this many times faster (more than 0, at most 10000)."
        ),
    ] = 1.0,
    agent: Annotated[str, typer.Option(help="baseline or llm (needs MAFIABOT_LLM).")] = "baseline",
    seed: Seed = None,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="Keep the live game in this database (default: a temporary one); with "
            "--html, the database to read the game from.",
        ),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Also print the result as one JSON object on stdout.")
    ] = False,
) -> None:
    """Replay a recorded LLMafia game's humans against our agent and compare their timing;
    or, with --html, write a finished game of ours as a replay page."""
    if html is not None:
        _replay_page(str(game_dir), html, research=research, identities=identities, db=db)
        return
    if research or identities is not None:
        raise typer.BadParameter("only with --html", param_hint="--research/--identities")
    from agent.llm.base import LLMConfigError
    from research.replay import run_replay_command

    if agent not in ("baseline", "llm"):
        raise typer.BadParameter("must be baseline or llm", param_hint="--agent")
    check_speed(speed)
    settings = read_settings()
    setup_logging(settings)
    if db is not None:
        db = db_url(db, write=True, settings=settings)
    try:
        run_replay_command(
            settings, game_dir, speed=speed, agent=agent, db_url=db, seed=seed, json_out=json_out
        )
    except (FileNotFoundError, ValueError, LLMConfigError) as e:
        fail(str(e))
    except KeyboardInterrupt:  # Ctrl-C: nothing of the recording changes; run it again later
        err.print("Stopped; the replay did not finish.", markup=False, highlight=False)
        raise typer.Exit(130) from None


def _replay_page(
    game_id: str, out: Path, *, research: bool, identities: Path | None, db: str | None
) -> None:
    """``mafiabot replay GAME --html FILE``: the page, or one line and exit 2."""
    import json

    from bot.players.replay_page import ReplayError, page_bytes
    from bot.store.db import make_engine

    names: dict[str, list[str]] = {}
    if identities is not None:
        try:
            raw = json.loads(identities.read_text(encoding="utf-8"))
            if not isinstance(raw, dict):
                raise ValueError("not an object")
            names = {str(k): [str(n) for n in v] for k, v in raw.items()}
        except (OSError, ValueError, TypeError) as e:
            fail(f"--identities {identities}: {e}")
    if out.is_dir():
        fail(f"--html {out} is a folder; give a file name.")
    if not out.parent.is_dir():
        fail(f"--html {out}: the folder {out.parent} does not exist.")
    engine = make_engine(db_url(db, write=False))
    try:
        data = page_bytes(engine, game_id, research=research, identities=names)
    except ReplayError as e:
        fail(str(e))
    finally:
        engine.dispose()
    out.write_bytes(data)
    typer.echo(f"Wrote the replay of game {game_id} to {out} ({len(data) // 1024 + 1} KiB).")


@app.command()
def history(
    count: Annotated[int, typer.Option("--count", help="How many games (1 to 25).")] = 10,
    db: Db = None,
) -> None:
    """Your last games in the terminal (`mafiabot play`): role, result, who the AI was and
    your guess, each with the command that writes its replay page."""
    from bot.invocation import command
    from bot.local.simulate import TERMINAL
    from bot.local.terminal import HUMAN_ID
    from bot.players.history import MOST, history_text, player_history
    from bot.store.db import make_engine

    if not 1 <= count <= MOST:
        raise typer.BadParameter(f"must be 1 to {MOST}", param_hint="--count")
    engine = make_engine(db_url(db, write=False))
    try:
        games = player_history(engine, "local", TERMINAL, HUMAN_ID, limit=count)
    finally:
        engine.dispose()
    replay = command("replay {game} --html replay-{game}.html")
    text = history_text(games, "you", replay, whose="Your")
    typer.echo(text.replace("**", "").replace("`", ""))


# the data and research commands join the app after the game commands (--help lists them so)
from mafiabot import data_cli  # noqa: E402, F401


def _optional_resume_value(argv: list[str]) -> list[str]:
    """Let ``--resume`` stand alone: it then means the most recent unfinished game."""
    out = list(argv)
    for i, arg in enumerate(out):
        if arg == "--resume" and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out.insert(i + 1, "last")
            break
    return out


def main(argv: Sequence[str] | None = None) -> None:
    """The ``mafiabot`` command. Bad input and unusable resources end it with one line on
    stderr and exit code 2, never a traceback: usage errors (click's multi-line panel is
    folded into one line) and database failures at any point."""
    from bot.local.stopping import guard_stdout
    from bot.store.db import DatabaseUnusable, explain, first_line

    guard_stdout()  # `mafiabot ... | head -2` ends quietly
    args = _optional_resume_value(list(sys.argv[1:] if argv is None else argv))
    try:
        code = app(args=args, prog_name="mafiabot", standalone_mode=False)
    except NoArgsIsHelpError:  # `mafiabot` or `mafiabot db` alone: the help is already shown
        code = 2
    except ClickException as e:
        ctx = getattr(e, "ctx", None)
        where = ctx.command_path if ctx is not None else command_path(args)
        print_error(f"{where}: {e.format_message()}")
        code = e.exit_code
    except typer.Abort:
        code = 1
    except DatabaseUnusable as e:
        print_error(f"{command_path(args)}: {e}")
        code = 2
    except Exception as e:
        import sqlalchemy as sa

        if not isinstance(e, sa.exc.SQLAlchemyError):
            raise
        # a database failing in the middle of a command
        problem = (
            explain(e, common.db_in_use)
            if common.db_in_use
            else f"Database error: {first_line(e)}."
        )
        print_error(f"{command_path(args)}: {problem}")
        code = 2
    sys.exit(code or 0)


if __name__ == "__main__":
    main()
