"""The ``mafiabot`` command line."""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections.abc import Coroutine
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console

from bot.settings import Settings, SettingsError, load_settings

app = typer.Typer(
    help="Host Mafia with an AI agent as a hidden player.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
db_app = typer.Typer(help="Database schema.", no_args_is_help=True)
app.add_typer(db_app, name="db")

err = Console(stderr=True)
T = TypeVar("T")


def _settings() -> Settings:
    try:
        return load_settings()
    except SettingsError as e:
        err.print(f"[red]{e}[/]")
        raise typer.Exit(2) from None


def _logging(settings: Settings) -> None:
    from bot.ops.logs import configure_logging  # text or JSON lines, secrets blanked out

    configure_logging(settings)


Players = Annotated[int, typer.Option("--players", "-n", help="Seats at the table (5-30).")]
Seed = Annotated[int | None, typer.Option(help="Seed for roles, names and agents.")]
DaySeconds = Annotated[float | None, typer.Option(help="Day discussion length, game seconds.")]
VoteSeconds = Annotated[float | None, typer.Option(help="Day vote length, game seconds.")]
NightSeconds = Annotated[float | None, typer.Option(help="Night talk length, game seconds.")]
NightVoteSeconds = Annotated[float | None, typer.Option(help="Night vote length, game seconds.")]
Db = Annotated[str | None, typer.Option("--db", help="Database URL (default: SQLite in data/).")]
Roles = Annotated[
    list[str] | None, typer.Option("--role", help="Extra role in play: detective, doctor.")
]
Tie = Annotated[str, typer.Option(help="Day vote ties: none (nobody out) or random.")]


def _game_config(settings: Settings, **given: Any) -> Any:
    from games.config import GameConfig

    values: dict[str, Any] = {
        "day_seconds": settings.day_seconds,
        "vote_seconds": settings.vote_seconds,
        "night_seconds": settings.night_seconds,
        "night_vote_seconds": settings.night_vote_seconds,
    }
    values.update({k: v for k, v in given.items() if v is not None})
    if "roles" in values:
        values["roles"] = tuple(values["roles"])
    return GameConfig(**values)


@app.command()
def simulate(
    players: Players = 8,
    mafia: Annotated[int | None, typer.Option(help="Number of mafia (default by players).")] = None,
    seed: Seed = None,
    day_seconds: DaySeconds = None,
    vote_seconds: VoteSeconds = None,
    night_seconds: NightSeconds = None,
    night_vote_seconds: NightVoteSeconds = None,
    speed: Annotated[float, typer.Option(help="Run the clock this many times faster.")] = 1.0,
    agent: Annotated[str, typer.Option(help="baseline or llm.")] = "baseline",
    role: Roles = None,
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

    if speed <= 0:
        raise typer.BadParameter("must be positive", param_hint="--speed")
    settings, config = _setup(agent, players, resume, mafia=mafia, roles=role,
                              tie_rule=tie_rule, day_seconds=day_seconds,
                              vote_seconds=vote_seconds, night_seconds=night_seconds,
                              night_vote_seconds=night_vote_seconds)  # fmt: skip
    out = Console(stderr=True) if json_out else Console()
    result = _run_game(
        run_simulation(settings, out, config=config, players=players, seed=seed, speed=speed,
                       agent=agent, db_url=db, resume=resume)
    )  # fmt: skip
    if json_out:
        sys.stdout.write(json.dumps(result) + "\n")


@app.command()
def play(
    players: Players = 6,
    seed: Seed = None,
    day_seconds: DaySeconds = None,
    vote_seconds: VoteSeconds = None,
    night_seconds: NightSeconds = None,
    night_vote_seconds: NightVoteSeconds = None,
    role: Roles = None,
    tie_rule: Tie = "none",
    agent: Annotated[str, typer.Option(help="baseline or llm.")] = "baseline",
    db: Db = None,
    resume: Annotated[
        str | None,
        typer.Option("--resume", help="Continue an interrupted game (id, or 'last')."),
    ] = None,
) -> None:
    """Play in the terminal against agent players (you type in your booth)."""
    from bot.local.terminal import run_play

    settings, config = _setup(agent, players, resume, roles=role, tie_rule=tie_rule,
                              day_seconds=day_seconds, vote_seconds=vote_seconds,
                              night_seconds=night_seconds,
                              night_vote_seconds=night_vote_seconds)  # fmt: skip
    try:
        _run_game(
            run_play(settings, config=config, players=players, seed=seed, agent=agent,
                     db_url=db, resume=resume)
        )  # fmt: skip
    except KeyboardInterrupt:
        err.print("Stopped. Resume with: mafiabot play --resume")


def _setup(agent: str, players: int, resume: str | None, **given: Any) -> tuple[Settings, Any]:
    """Settings and a checked game config, or one clear error (exit 2) and nothing created."""
    from games.errors import ConfigError

    settings = _settings()
    _logging(settings)
    if agent not in ("baseline", "llm"):
        raise typer.BadParameter("must be baseline or llm", param_hint="--agent")
    try:
        config = _game_config(settings, **given)
        if resume is None:
            config.validate(players)
    except ConfigError as e:
        err.print(f"[red]Can't set up this game:[/] {e}")
        raise typer.Exit(2) from None
    return settings, config


def _run_game(main: Coroutine[Any, Any, T]) -> T:
    """Run a game command; refusals (unknown game, missing LLM credentials) exit 2."""
    from agent.llm.base import LLMConfigError
    from bot.service import ServiceError
    from games.errors import ConfigError

    try:
        return asyncio.run(main)
    except ConfigError as e:
        err.print(f"[red]Can't set up this game:[/] {e}")
    except (LookupError, ServiceError, LLMConfigError) as e:
        err.print(f"[red]{e}[/]")
    raise typer.Exit(2)


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
    db: Db = None,
) -> None:
    """Run the chat adapters; --discord and --slack can run together on one event loop."""
    from bot.settings import SettingsError
    from bot.slack.app import SlackSetupError, check_settings

    settings = _settings()
    _logging(settings)
    if not (slack or discord):
        raise typer.BadParameter("choose --discord and/or --slack")
    if http is not None and not slack:
        raise typer.BadParameter("--http is for --slack", param_hint="--http")
    try:
        if slack:
            check_settings(settings, http_port=http)
        if discord:
            from bot.discord.app import _token

            _token(settings)
        asyncio.run(_run_adapters(settings, slack=slack, discord=discord, http=http, db=db))
    except (SlackSetupError, SettingsError) as e:
        err.print(f"[red]{e}[/]")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        pass
    # a log line, not a print: with MAFIABOT_LOG_FORMAT=json, stderr stays all JSON
    logging.getLogger("bot.cli").info("stopped; running games carry on at the next start")


async def _run_adapters(
    settings: Settings, *, slack: bool, discord: bool, http: int | None, db: str | None
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

                bot = MafiaBot(service, settings, metrics=RelayTimer(metrics))
                ops.watch_discord(bot)
                serving["discord"] = serve_discord(service, settings, bot=bot)
            await serve_until_stopped(ops, serving, watchdog=True)
        finally:
            for close in closers:
                await close()


@app.command()
def replay(
    game_dir: Annotated[
        Path, typer.Argument(help="A recorded LLMafia game folder, e.g. .../llmafia/games/0006.")
    ],
    speed: Annotated[float, typer.Option(help="Play the recording this many times faster.")] = 1.0,
    agent: Annotated[str, typer.Option(help="baseline or llm (needs MAFIABOT_LLM).")] = "baseline",
    seed: Seed = None,
    db: Annotated[
        str | None,
        typer.Option(
            "--db", help="Keep the live game in this database (default: a temporary one)."
        ),
    ] = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Also print the result as one JSON object on stdout.")
    ] = False,
) -> None:
    """Replay a recorded LLMafia game's humans against our agent; compare their timing."""
    from agent.llm.base import LLMConfigError
    from bot.research.replay import run_replay_command

    settings = _settings()
    _logging(settings)
    if agent not in ("baseline", "llm"):
        raise typer.BadParameter("must be baseline or llm", param_hint="--agent")
    if speed <= 0:
        raise typer.BadParameter("must be positive", param_hint="--speed")
    try:
        run_replay_command(
            settings, game_dir, speed=speed, agent=agent, db_url=db, seed=seed, json_out=json_out
        )
    except (FileNotFoundError, ValueError, LLMConfigError) as e:
        err.print(str(e), markup=False)
        raise typer.Exit(2) from None


@app.command("import-llmafia")
def import_llmafia_command(
    path: Annotated[
        Path,
        typer.Argument(help="A game folder, a folder of game folders, or the release's root."),
    ],
    db: Db = None,
) -> None:
    """Import published LLMafia games into the database as finished games; prints repairs."""
    from bot.research.commands import run_import
    from bot.runtime import database_url

    url = database_url(_settings(), db)
    try:
        run_import(url, path, Console())
    except (FileNotFoundError, ValueError) as e:
        err.print(str(e), markup=False, soft_wrap=True)
        raise typer.Exit(2) from None


@app.command()
def report(
    out: Annotated[Path, typer.Option("--out", help="Folder for report.md and the PNG figures.")],
    db: Db = None,
    games: Annotated[
        list[str] | None,
        typer.Option(
            "--games",
            help="Game ids (repeat or comma-separate; 0013 means llmafia-0013). "
            "Default: every finished game.",
        ),
    ] = None,
    json_file: Annotated[
        Path | None, typer.Option("--json", help="Also write every figure as JSON here.")
    ] = None,
    embeddings: Annotated[
        bool,
        typer.Option(
            "--embeddings/--no-embeddings",
            help="Table 4: how separable messages are, on offline MiniLM sentence embeddings.",
        ),
    ] = True,
    force: Annotated[
        bool, typer.Option("--force", help="Replace an earlier report in --out, and --json.")
    ] = False,
) -> None:
    """The LLMafia paper's Tables 1-5 and Figures 4-7, human against agent players."""
    from bot.research.commands import run_report
    from bot.runtime import database_url

    url = database_url(_settings(), db)
    try:
        run_report(url, games, out, json_file, Console(), embeddings=embeddings, force=force)
    except (LookupError, ValueError) as e:
        err.print(str(e), markup=False, soft_wrap=True)
        raise typer.Exit(2) from None


@db_app.command("upgrade")
def db_upgrade(db: Db = None) -> None:
    """Create or migrate the database schema to the latest version."""
    from bot.runtime import database_url
    from bot.store.migrate import current, upgrade

    settings = _settings()
    url = database_url(settings, db)
    upgrade(url)
    err.print(f"Database at revision {current(url)}.")


consent_app = typer.Typer(help="Consent answers and withdrawal.", no_args_is_help=True)
app.add_typer(consent_app, name="consent")

PlatformOpt = Annotated[str, typer.Option("--platform", help="discord, slack or local.")]
ServerOpt = Annotated[str, typer.Option("--server", help="Guild or workspace id.")]
UserOpt = Annotated[str, typer.Option("--user", help="The person's platform user id.")]


@consent_app.command("withdraw")
def consent_withdraw(
    platform: PlatformOpt, server: ServerOpt, user: UserOpt, db: Db = None
) -> None:
    """Remove a person from every stored game on a server, for good; records the withdrawal."""
    from bot.privacy import run_withdraw
    from bot.runtime import database_url

    run_withdraw(database_url(_settings(), db), platform, server, user, Console())


@consent_app.command("status")
def consent_status_command(
    platform: PlatformOpt, server: ServerOpt, user: UserOpt, db: Db = None
) -> None:
    """Show a person's consent answer on a server (exit code 1 when they may not play)."""
    from bot.consent import run_status
    from bot.runtime import database_url

    if not run_status(database_url(_settings(), db), platform, server, user, Console()):
        raise typer.Exit(1)


@app.command("export")
def export_command(
    out: Annotated[Path, typer.Option("--out", help="Folder for the bundle.")],
    game: Annotated[
        list[str] | None, typer.Option("--game", help="Game id (repeat or comma-separate).")
    ] = None,
    all_games: Annotated[
        bool, typer.Option("--all", help="Every ended game played here (not imports).")
    ] = False,
    formats: Annotated[
        str, typer.Option("--format", help="Comma-separated: llmafia,jsonl,csv.")
    ] = "llmafia,jsonl,csv",
    with_agent_log: Annotated[
        bool, typer.Option("--with-agent-log", help="Also the agent's prompts and outputs.")
    ] = False,
    identities: Annotated[
        Path | None,
        typer.Option("--identities", help='JSON {"user id": ["name", ...]} to scrub from text.'),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace an earlier export in --out (only that).")
    ] = False,
    db: Db = None,
) -> None:
    """Anonymised research export of finished games (consenting players only)."""
    from bot.research.export import run_export
    from bot.runtime import database_url

    if bool(game) == all_games:
        raise typer.BadParameter("give --game ID (one or more) or --all", param_hint="--game")
    url = database_url(_settings(), db)
    try:
        run_export(
            url,
            None if all_games else game,
            out,
            formats,
            with_agent_log,
            Console(),
            identities_file=identities,
            force=force,
        )
    except (LookupError, ValueError) as e:
        err.print(str(e), markup=False, soft_wrap=True)
        raise typer.Exit(2) from None


def _optional_resume_value(argv: list[str]) -> list[str]:
    """Let ``--resume`` stand alone: it then means the most recent unfinished game."""
    out = list(argv)
    for i, arg in enumerate(out):
        if arg == "--resume" and (i + 1 == len(out) or out[i + 1].startswith("-")):
            out.insert(i + 1, "last")
            break
    return out


def main() -> None:
    app(args=_optional_resume_value(sys.argv[1:]), prog_name="mafiabot")


if __name__ == "__main__":
    main()
