"""Output folders of ``export`` and ``report``: nothing the command did not write is touched.

A folder the command writes into gets a marker file, ``.mafiabot-output.json``, naming what
wrote it (``kind``: "export" or "report"), the marker's ``version`` and every file written.
Then:

- a new or empty folder is used as it is;
- a folder holding an earlier output of the same kind is replaced only with ``force``, and only
  the files its marker lists are removed (sub-folders left empty by that go too); a file of
  the user's in it stays, and if the new output would have to overwrite one, nothing is done;
- any other non-empty folder, a file, or a folder that cannot be written is refused with one
  line (:class:`OutputError`), before anything is written.

The new output is first written into a staging folder inside the target and moved into place
only once it is complete, so a failure half-way leaves the earlier output as it was. The
marker lists the old and the new files while they are being swapped, so a crash in between
still leaves a folder that ``force`` can clean up.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from bot.protection.dataset.names import UnsafePath, inside

__all__ = ["MARKER", "MARKER_VERSION", "OutputError", "OutputFolder", "check_output_file"]

MARKER = ".mafiabot-output.json"
MARKER_VERSION = 1
_STAGING = ".mafiabot-staging-"
Kind = Literal["export", "report"]


class OutputError(ValueError):
    """The output folder or file cannot be used; one line saying why and what to do."""


def check_output_file(path: Path, *, force: bool, option: str = "--json") -> Path:
    """A file the user named for output: not a folder, in a folder that exists or can be made
    and written, and not already there unless ``force``."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{option} {path} is a folder: give a file name")
    if path.exists() and not force:
        raise OutputError(f"{option} {path} exists; add --force to replace it")
    _writable_dir(path.parent, option)
    return path


@dataclass
class OutputFolder:
    """One ``export``/``report`` output folder, claimed by :meth:`claim`, filled through
    :attr:`staging`, swapped in by :meth:`commit` (or dropped by :meth:`abandon`)."""

    root: Path
    kind: Kind
    old_files: list[str] = field(default_factory=list)
    staging: Path = field(default_factory=Path)

    @classmethod
    def claim(cls, root: Path, kind: Kind, *, force: bool, option: str = "--out") -> OutputFolder:
        """Check ``root`` (see the module doc) and open a staging folder in it."""
        old = cls.check(root, kind, force=force, option=option)
        try:
            Path(root).mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise OutputError(f"{option}: cannot create the folder {root} ({_why(e)})") from None
        staging = Path(tempfile.mkdtemp(prefix=_STAGING, dir=root))
        return cls(Path(root), kind, old, staging)

    @staticmethod
    def check(root: Path, kind: Kind, *, force: bool, option: str = "--out") -> list[str]:
        """Raise OutputError unless ``root`` may take a new output of ``kind``; returns the
        files of the earlier output to replace. Changes nothing."""
        root = Path(root)
        if root.exists() and not root.is_dir():
            raise OutputError(f"{option} {root} is a file, not a folder")
        _writable_dir(root, option)
        if not root.exists():
            return []
        entries = [p for p in root.iterdir() if not p.name.startswith(_STAGING)]
        old: list[str] = []
        if entries:
            marker = _read_marker(root)
            if marker is None:
                raise OutputError(
                    f"{option} {root} is not empty and holds no earlier {kind}: choose a new "
                    "or empty folder (nothing was written)"
                )
            if marker[0] != kind:
                raise OutputError(
                    f"{option} {root} holds a {marker[0]}, not a {kind}: choose another folder"
                )
            if not force:
                raise OutputError(
                    f"{option} {root} holds an earlier {kind}; add --force to replace it"
                )
            old = marker[1]
        return old

    def commit(self) -> list[Path]:
        """Swap the staged files in for the earlier output; returns the new files' paths."""
        try:
            return self._commit()
        finally:
            self.abandon()  # whatever was not moved into place

    def _commit(self) -> list[Path]:
        new = sorted(
            p.relative_to(self.staging).as_posix() for p in self.staging.rglob("*") if p.is_file()
        )
        old = set(self.old_files)
        for rel in new:  # checked before anything changes
            try:
                inside(self.root, rel)  # a sub-folder replaced by a link out of the folder
            except UnsafePath as e:
                raise OutputError(f"{e} (nothing was changed)") from None
            if rel not in old and (self.root / rel).exists():
                raise OutputError(
                    f"{self.root / rel} was not written by an earlier {self.kind}; not "
                    "overwriting it (nothing was changed)"
                )
        self._write_marker(sorted(old | set(new)))
        for rel in self.old_files:
            path = self.root / rel
            if not path.parent.resolve().is_relative_to(self.root.resolve()):
                continue  # its folder is now a link out of the output folder: leave it
            if path.is_file() or path.is_symlink():
                path.unlink()
        _remove_empty_parents(self.root, self.old_files)
        written: list[Path] = []
        for rel in new:
            target = self.root / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(self.staging / rel, target)
            written.append(target)
        self._write_marker(new)
        return written

    def abandon(self) -> None:
        """Drop what was staged; the folder is left as it was."""
        shutil.rmtree(self.staging, ignore_errors=True)

    def _write_marker(self, files: list[str]) -> None:
        data = {"kind": self.kind, "version": MARKER_VERSION, "files": files}
        tmp = self.root / f"{MARKER}.tmp"
        tmp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
        os.replace(tmp, self.root / MARKER)


def _writable_dir(folder: Path, option: str) -> None:
    """``folder`` can take new files: it exists and is writable, or it can be made (its
    nearest existing ancestor is a writable folder). Nothing is created here."""
    existing = folder
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise OutputError(f"{option}: cannot create the folder {folder} ({existing} is a file)")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as e:
        what = "write in" if existing == folder else "create the folder"
        raise OutputError(f"{option}: cannot {what} {folder} ({_why(e)})") from None


def _why(e: OSError) -> str:
    return e.strerror or type(e).__name__


def _read_marker(root: Path) -> tuple[str, list[str]] | None:
    """(kind, files) of the folder's marker, or None when there is no valid one. Listed paths
    that would leave the folder make the marker invalid (it is outside data, like any file)."""
    try:
        data = json.loads((root / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("kind") not in ("export", "report"):
        return None
    files = data.get("files")
    if not isinstance(files, list) or not all(isinstance(f, str) and f for f in files):
        return None
    try:
        for rel in files:
            inside(root, rel)
    except UnsafePath:
        return None
    return str(data["kind"]), list(files)


def _remove_empty_parents(root: Path, files: list[str]) -> None:
    """Remove the folders the listed files were in, deepest first, when they are now empty."""
    folders = {p for rel in files for p in Path(rel).parents if p != Path(".")}
    for folder in sorted(folders, key=lambda p: len(p.parts), reverse=True):
        path = root / folder
        if path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
            path.rmdir()
