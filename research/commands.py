"""What ``mafiabot import-llmafia`` and ``mafiabot report`` do, as plain functions.

The typer wrappers in mafiabot/cli.py only resolve the database URL and pass the options on, so
everything here is testable without the CLI. Both migrate the database first: an import into a
fresh file must work, and a report on an old schema would fail on the survey table.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console

from bot.players.spotrate import table_lines
from bot.protection.dataset.outdir import OutputFolder, check_output_file
from bot.protection.dataset.stored import resolve_game_ids
from bot.store.db import make_engine
from bot.store.migrate import upgrade
from research.importer import ImportResult, import_llmafia
from research.llmafia import find_game_folders
from research.report import Embedder, build_report, write_report

__all__ = ["run_import", "run_report"]


def run_import(db_url: str, path: Path, console: Console) -> list[ImportResult]:
    """Import LLMafia games from ``path``; prints, per game, what was repaired and imported, or
    that it was skipped and why. Raises ValueError (one line) when no game could be imported."""
    path = Path(path)
    find_game_folders(path)  # a missing path or a file: one line, before the database is touched
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        report = import_llmafia(engine, path)
    finally:
        engine.dispose()
    for result in report.imported:
        for line in result.summary():
            # markup off: repair details contain [brackets] and user text
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    for skipped in report.skipped:
        console.print(skipped.summary(), markup=False, highlight=False, soft_wrap=True)
    replaced = sum(r.replaced for r in report.imported)
    skipped_note = f"; {len(report.skipped)} skipped" if report.skipped else ""
    console.print(
        f"{len(report.imported)} games imported ({replaced} replaced an earlier import)"
        f"{skipped_note}.",
        markup=False,
        highlight=False,
    )
    if not report.imported:
        raise ValueError(f"no game imported from {path}: every game folder was skipped")
    return report.imported


def _default_embedder(console: Console) -> Embedder | None:
    try:
        from agent.memory.embeddings import default_minilm

        embedder = default_minilm()
        embedder.embed(["warm up"])
        return embedder
    except Exception as e:  # the model files are optional for reports
        console.print(f"Table 4 skipped: no sentence embedder ({e}).", markup=False)
        return None


def run_report(
    db_url: str,
    games: Sequence[str] | None,
    out: Path | None,
    json_file: Path | None,
    console: Console,
    *,
    embeddings: bool = True,
    embedder: Embedder | None = None,
    force: bool = False,
) -> dict[str, object]:
    """Build the report for ``games`` (None or empty: every finished game) and write it.

    Ids may be given one per item or comma-separated; LLMafia folder names work ("0013").

    ``embeddings`` turns Table 4 on, with ``embedder`` or the offline MiniLM model. The output
    folder is treated as `bot.protection.dataset.outdir` says (``force`` replaces an earlier report,
    and
    an existing ``json_file``); a bad one raises ValueError with one line before any work.
    """
    if out is None and json_file is None:
        raise ValueError("nothing to write: give an output folder or a JSON file")
    if json_file is not None:
        check_output_file(json_file, force=force)
    if out is not None:
        OutputFolder.check(out, "report", force=force)
    wanted = [x.strip() for g in games or () for x in g.split(",") if x.strip()]
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        ids = resolve_game_ids(engine, wanted) if wanted else None
        if embeddings and embedder is None:
            embedder = _default_embedder(console)
        report = build_report(engine, ids, embedder if embeddings else None)
    finally:
        engine.dispose()
    if not report["games"]:
        console.print("No finished games in the store: nothing to report.", markup=False)
    written: list[Path] = []
    if out is not None:
        folder = OutputFolder.claim(out, "report", force=force)
        try:
            write_report(report, folder.staging)
        except BaseException:
            folder.abandon()
            raise
        written.extend(folder.commit())
    if json_file is not None:
        written.extend(write_report(report, None, json_file))
    console.print(
        f"Report on {report['games']} games ({report['messages']} player messages):",
        markup=False,
        highlight=False,
    )
    for path in written:
        console.print(f"  {path}", markup=False, highlight=False)
    spot = report.get("spot_the_ai")
    if isinstance(spot, dict) and spot["overall"]["games"]:
        console.print("Spot-the-AI rate (who was the AI? answers naming an agent):", markup=False)
        for line in table_lines(spot):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
    return report
