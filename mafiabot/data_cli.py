"""``mafiabot db``, ``consent``, ``export``, ``import-llmafia``, ``report`` and ``likeness``:
the database, people's consent, the research export and the research tools (loaded only when
one of their commands runs, so `mafiabot` starts without them)."""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from mafiabot.common import Db, app, db_app, db_url, err, fail, read_settings, setup_logging


@app.command("import-llmafia")
def import_llmafia_command(
    path: Annotated[
        Path,
        typer.Argument(help="A game folder, a folder of game folders, or the release's root."),
    ],
    db: Db = None,
) -> None:
    """Import published LLMafia games into the database as finished games; prints repairs."""
    from research.commands import run_import

    url = db_url(db, write=True)
    try:
        run_import(url, path, Console())
    except (FileNotFoundError, ValueError) as e:
        fail(str(e))


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
    _research_extra("report")
    from research.commands import run_report

    url = db_url(db, write=False)
    try:
        run_report(url, games, out, json_file, Console(), embeddings=embeddings, force=force)
    except (LookupError, ValueError) as e:
        fail(str(e).strip("'\""))


@app.command()
def likeness(
    db: Db = None,
    people: Annotated[
        Path | None,
        typer.Option(help="Human games (LLMafia folders). Default: the shared LLMafia games."),
    ] = None,
    people_games: Annotated[
        list[str] | None, typer.Option(help="Only these of them (repeat or comma-separate).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON for scripts.")] = False,
) -> None:
    """How much each kind of player's table talk looks like people's (rate, timing, text)."""
    _research_extra("likeness")
    from bot.runtime import database_url
    from research.likeness import render, run_likeness
    from research.paths import llmafia_games_dir

    settings = read_settings()
    url = database_url(settings, db)
    try:
        table = run_likeness(url, people or llmafia_games_dir(settings.llmafia_dir), people_games)
    except (FileNotFoundError, LookupError, ValueError) as e:  # (a bad game folder too)
        fail(str(e).strip("'\""))
    sys.stdout.write((json.dumps(table) if json_out else render(table)) + "\n")


def _research_extra(command: str) -> None:
    """Research commands need the ``research`` extra; without it, one line: what to install."""
    from research.extras import ResearchExtraMissing, require

    try:
        require(command)
    except ResearchExtraMissing as e:
        fail(str(e))


@db_app.command("upgrade")
def db_upgrade(db: Db = None) -> None:
    """Create or migrate the database schema to the latest version."""
    from bot.store.migrate import current

    settings = read_settings()
    json_lines = settings.log_format == "json"  # (the container's first line: JSON as the rest)
    if json_lines:
        setup_logging(settings)
    url = db_url(db, write=True, settings=settings)
    if json_lines:
        logging.getLogger("mafiabot.cli").info("Database at revision %s.", current(url))
    else:
        err.print(f"Database at revision {current(url)}.", markup=False, highlight=False)


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
    from bot.protection.privacy import run_withdraw

    _check_person(platform, server, user)
    run_withdraw(db_url(db, write=True), platform, server, user, Console())


@consent_app.command("status")
def consent_status_command(
    platform: PlatformOpt, server: ServerOpt, user: UserOpt, db: Db = None
) -> None:
    """Show a person's consent answer on a server (exit code 1 when they may not play)."""
    from bot.protection.consent import run_status

    _check_person(platform, server, user)
    if not run_status(db_url(db, write=False), platform, server, user, Console()):
        raise typer.Exit(1)


def _check_person(platform: str, server: str, user: str) -> None:
    from bot.protection.consent import check_person

    try:
        check_person(platform, server, user)
    except ValueError as e:
        fail(str(e))


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
    from bot.protection.dataset.export import run_export

    if bool(game) == all_games:
        raise typer.BadParameter("give --game ID (one or more) or --all", param_hint="--game")
    url = db_url(db, write=False)
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
        fail(str(e).strip("'\""))
