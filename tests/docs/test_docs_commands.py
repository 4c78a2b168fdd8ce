"""The README is a front page and the docs pages say things in the order a reader needs them
(issue 22, item 8); every ``mafiabot`` command line they show is one the CLI accepts, and the
ones that can run here do."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from mafiabot.cli import _optional_resume_value, app

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = ["playing", "discord", "slack", "operating", "research", "configuration"]
OTHERS = ["run-your-own-model", "hidden-player", "limits-and-secrets", "stats-and-replay",
          "llmafia-export"]  # fmt: skip


def shell_blocks(path: Path) -> list[str]:
    """The command lines of a page's ```sh blocks (continuations joined, comments dropped)."""
    text = path.read_text(encoding="utf-8")
    lines: list[str] = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.split(" #", 1)[0].strip()
            if line and not line.startswith("#"):
                lines.append(line)
    return lines


def mafiabot_args(line: str) -> list[str] | None:
    """``uv run [--frozen --no-dev] mafiabot ARGS`` (or plain ``mafiabot ARGS``) -> ARGS."""
    words = shlex.split(line.replace("[", "").replace("]", ""))
    while words and re.match(r"^[A-Z_]+=", words[0]):  # VAR=value prefixes
        words.pop(0)
    if words[:2] == ["uv", "run"]:
        words = [w for w in words[2:] if w not in ("--frozen", "--no-dev")]
    if not words or words[0] != "mafiabot":
        return None
    for i, word in enumerate(words):  # shell redirections and pipes are not arguments
        if word in (">", "|", "<", "&&"):
            return words[1:i]
    return words[1:]


def documented_commands() -> list[tuple[str, list[str]]]:
    found = []
    for path in [README, *(ROOT / "docs" / f"{p}.md" for p in PAGES)]:
        for line in shell_blocks(path):
            args = mafiabot_args(line)
            if args is not None:
                found.append((f"{path.name}: {line}", args))
    return found


def test_the_readme_is_a_front_page() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 200
    for command in ("make play", "make test"):
        assert f"{command} " in text
    # where to go next: the pages in reading order, then the topic pages
    links = re.findall(r"\]\(docs/([a-z-]+)\.md\)", text)
    order = [links.index(p) for p in PAGES]
    assert order == sorted(order), links
    for page in OTHERS:
        assert page in links, page
    for page in PAGES:
        assert (ROOT / "docs" / f"{page}.md").exists(), page


def test_the_docs_say_it_in_the_order_it_is_needed() -> None:
    discord = (ROOT / "docs" / "discord.md").read_text(encoding="utf-8")
    env = discord.index("cp .env.example .env")
    assert env < discord.index("MAFIABOT_DISCORD_TOKEN"), "the token goes in a .env not made yet"
    assert discord.index("MAFIABOT_DISCORD_GUILD_IDS") < discord.index("mafiabot run --discord")
    slack = (ROOT / "docs" / "slack.md").read_text(encoding="utf-8")
    assert "| `/mafia help`" in slack
    assert slack.index("cp .env.example .env") < slack.index("MAFIABOT_SLACK_BOT_TOKEN")
    playing = (ROOT / "docs" / "playing.md").read_text(encoding="utf-8")
    assert playing.index("## Rules") < playing.index("## In the terminal")


def test_the_operating_commands_are_safe_everywhere() -> None:
    text = (ROOT / "docs" / "operating.md").read_text(encoding="utf-8")
    lines = shell_blocks(ROOT / "docs" / "operating.md")
    dumps = [line for line in lines if "pg_dump" in line or "psql" in line]
    assert dumps and all(" exec -T " in line for line in dumps), dumps
    # without Docker: `uv run` after `uv sync --no-dev` must not reinstall the dev tools
    runs = [line for line in lines if line.startswith("uv run")]
    assert runs and all("--no-dev" in line for line in runs), runs
    assert "Docker Compose v2" in text and "podman-compose" in text and "2.24" in text


@pytest.mark.parametrize(("where", "args"), documented_commands(), ids=lambda v: str(v)[:60])
def test_every_documented_command_line_is_accepted(where: str, args: list[str]) -> None:
    """Parsed by the real command line (options, types, choices), without running it."""
    command: Any = typer.main.get_command(app)
    rest = _optional_resume_value(args)  # (as `main` does: a bare --resume means the last game)
    path = ["mafiabot"]
    while rest and rest[0] in (getattr(command, "commands", None) or {}):
        path.append(rest[0])
        command = command.commands[rest.pop(0)]
    assert not hasattr(command, "commands") or rest == ["--help"], f"{where}: no such command"
    if rest != ["--help"]:
        command.make_context(" ".join(path), rest)  # raises on an unknown option or a bad value


def test_the_readme_commands_that_can_run_here_do(tmp_path: Path) -> None:
    env = {"MAFIABOT_DATA_DIR": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    for args in (["--help"], ["db", "upgrade"]):
        done = subprocess.run(
            [sys.executable, "-m", "mafiabot.cli", *args],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "mafiabot.db").exists()
