"""Pieces of the ``mafiabot`` command line (`mafiabot.cli`) about how it reads: its help texts,
``--version``, ``play``'s log file and ``play --role``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO, Annotated, Any

import typer


def plain_help_types() -> None:
    """typer's help shows ``<bool>`` beside every flag and ``<int range>
    [0<=x<=9223372036854775807]`` beside a bounded number; our help texts say the values
    and ranges in words, so a flag shows no type and a number no range."""
    from typer import core

    shown = core.TyperOption.display_type

    def display_type(self: Any, ctx: Any) -> str | None:
        if self.is_flag:
            return None
        return shown(self, ctx).replace(" range>", ">")

    core.TyperOption.display_type = display_type  # type: ignore[assignment,method-assign]
    core.TyperOption._get_number_range_help_str = lambda self: None  # type: ignore[method-assign]


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"mafiabot {version('mafiabot')}")
        raise typer.Exit()


def main_options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """Host Mafia with an AI agent as a hidden player."""


class LogFile:
    """A log file opened at its first line (bad input, refused before any, leaves none);
    where it can't be written, the lines go to stderr."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._file: IO[str] | None = None

    def write(self, text: str) -> int:
        if self._file is None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self._file = self.path.open("a", encoding="utf-8")
            except OSError:
                self._file = sys.stderr
        return self._file.write(text)

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()


YourRole = Annotated[
    str | None,
    typer.Option(
        "--role",
        metavar="ROLE",
        help="Your own role (mafia, bystander, detective, doctor...); the others are dealt at "
        "random.",
    ),
]


def your_role(
    role: str | None, with_role: list[str] | None, resume: str | None
) -> tuple[str | None, list[str] | None]:
    """``play --role ROLE``: the role (any in the role registry, so new roles work as they
    come) and the extra roles in play, which then include a special role you play."""
    from games.roles import registered_roles

    if role is None:
        return None, with_role
    if resume is not None:
        raise typer.BadParameter("a resumed game keeps its roles", param_hint="--role")
    role = role.strip().lower()
    if role not in registered_roles():
        known = ", ".join(registered_roles())
        raise typer.BadParameter(f"no role {role!r}; one of {known}", param_hint="--role")
    if role not in ("mafia", "bystander") and role not in (with_role or []):
        with_role = [*(with_role or []), role]
    return role, with_role
