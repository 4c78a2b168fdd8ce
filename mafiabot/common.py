"""What every ``mafiabot`` command shares: the typer app, one-line failures (exit 2), the
settings and the database a command uses, logging, and the options several commands take.
The commands themselves are in `mafiabot.cli` (games, the bot) and `mafiabot.data_cli`
(the database, consent, the export and the research commands)."""

from __future__ import annotations

import logging
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Annotated, Any, NoReturn, cast

import typer
from rich.console import Console

# (typer ships its own copy of click: these are the errors its parser raises)
from typer._click.globals import get_current_context as click_context

from bot.settings import Settings, SettingsError, load_settings
from mafiabot import cli_help

app = typer.Typer(
    help="Host Mafia with an AI agent as a hidden player.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},  # (every subcommand too)
)
db_app = typer.Typer(help="Database schema.", no_args_is_help=True)
app.add_typer(db_app, name="db")

err = Console(stderr=True)


cli_help.plain_help_types()
app.callback()(cli_help.main_options)  # --version


#: the database the running command uses, to name it if it fails mid-way
db_in_use: str | None = None

#: `play`'s log, in MAFIABOT_DATA_DIR: what goes wrong (a model's retries) stays off the screen
PLAY_LOG = "play.log"

#: ranges of the numbers the commands take (stated in --help)
SPEED_MAX = 10_000.0
PHASE_MIN, PHASE_MAX = 1.0, 86_400.0
SEED_MAX = 2**63 - 1  # the database keeps seeds as signed 64-bit integers


def print_error(message: str) -> None:
    err.print(message, style="red", markup=False, highlight=False, soft_wrap=True)


def fail(message: str, code: int = 2) -> NoReturn:
    """Bad input or an unusable resource: ``mafiabot <command>: <message>``, one line on
    stderr, then exit ``code`` (2: bad input, nothing changed). Said here, not in `main`, so
    the app says it the same way when it is invoked without `main` (tests, embedding)."""
    ctx = click_context(silent=True)
    where = " ".join(["mafiabot", *ctx.command_path.split()[1:]]) if ctx is not None else "mafiabot"
    print_error(f"{where}: {message}")
    raise typer.Exit(code)


def command_path(args: Sequence[str]) -> str:
    """``mafiabot db upgrade`` for ``["db", "upgrade", "--db", ...]``: who says what is wrong."""
    command: Any = typer.main.get_command(app)
    path = ["mafiabot"]
    for arg in args:
        subcommands = getattr(command, "commands", None) or {}
        if arg not in subcommands:
            break
        command = subcommands[arg]
        path.append(arg)
    return " ".join(path)


def read_settings() -> Settings:
    try:
        return load_settings()
    except SettingsError as e:
        fail(str(e))


def db_url(db: str | None, *, write: bool, settings: Settings | None = None) -> str:
    """The database URL to use, checked before anything is done: a command that writes gets a
    migrated, writable database; one that reads gets an existing, current one and changes
    nothing (an older database is refused with a line saying to run `mafiabot db upgrade`)."""
    from bot.runtime import database_url
    from bot.store.db import DatabaseUnusable
    from bot.store.migrate import prepare_for_writing, require_current

    global db_in_use
    url = database_url(settings or read_settings(), db)
    try:
        (prepare_for_writing if write else require_current)(url)
    except DatabaseUnusable as e:
        fail(str(e))
    db_in_use = url
    return url


def check_speed(speed: float) -> None:
    if not (math.isfinite(speed) and 0 < speed <= SPEED_MAX):
        raise typer.BadParameter(
            f"must be more than 0 and at most {SPEED_MAX:.0f}; got {speed}", param_hint="--speed"
        )


def check_phases(**seconds: float | None) -> None:
    for name, value in seconds.items():
        if value is not None and not (math.isfinite(value) and PHASE_MIN <= value <= PHASE_MAX):
            raise typer.BadParameter(
                f"must be from {PHASE_MIN:.0f} to {PHASE_MAX:.0f} game seconds; got {value}",
                param_hint="--" + name.replace("_", "-"),
            )


def setup_logging(settings: Settings, log_file: Path | None = None) -> None:
    from bot.ops.logs import configure_logging  # text or JSON lines, secrets blanked out

    # (`play`: the log stays off the player's screen, in a file made at its first line)
    configure_logging(
        settings, None if log_file is None else cast(IO[str], cli_help.LogFile(log_file))
    )

    # what a person must act on (a database refusing a game's writes): one plain line each
    alerts = logging.getLogger("bot.service.alerts")
    if not alerts.handlers:
        line = logging.StreamHandler(sys.stderr)
        line.setFormatter(logging.Formatter("mafiabot: %(message)s"))
        alerts.addHandler(line)
        alerts.propagate = False


Players = Annotated[int, typer.Option("--players", "-n", help="Seats at the table (5-30).")]
Seed = Annotated[
    int | None,
    typer.Option(min=0, max=SEED_MAX, help="Seed for roles, names and agents (0 to 2^63-1)."),
]
_RANGE = "game seconds, 1-86400"
DaySeconds = Annotated[float | None, typer.Option(help=f"Day discussion length ({_RANGE}).")]
VoteSeconds = Annotated[float | None, typer.Option(help=f"Day vote length ({_RANGE}).")]
NightSeconds = Annotated[float | None, typer.Option(help=f"Night talk length ({_RANGE}).")]
NightVoteSeconds = Annotated[float | None, typer.Option(help=f"Night vote length ({_RANGE}).")]
Speed = Annotated[
    float, typer.Option(help="Run the clock this many times faster (more than 0, at most 10000).")
]
Db = Annotated[str | None, typer.Option("--db", help="Database URL (default: SQLite in data/).")]
Roles = Annotated[
    list[str] | None,
    typer.Option("--with-role", metavar="ROLE", help="Extra role in play: detective, doctor."),
]
#: the old spelling of --with-role, still taken by `simulate` (in `play`, --role is yours)
OldRoles = Annotated[list[str] | None, typer.Option("--role", hidden=True)]
Tie = Annotated[str, typer.Option(help="Day vote ties: none (nobody out) or random.")]
SetupOpt = Annotated[
    str | None,
    typer.Option(
        "--setup",
        help="A named setup (mafiabot setups) or a custom list of roles, comma-separated "
        "(mafiabot roles); default: llmafia.",
    ),
]
AgentKind = Annotated[
    str | None,
    typer.Option(help="baseline or llm (default: llm when MAFIABOT_LLM names a model)."),
]
Mafia = Annotated[
    int | None, typer.Option(help="Number of mafia (default: 1 under 7 players, 2 to 10, 3 above).")
]


def game_config(settings: Settings, **given: Any) -> Any:
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
    if "setup" in values:
        from mafiabot.roles_cli import setup_config

        values.update(setup_config(values.pop("setup")))
    return GameConfig(**values)
