"""``mafiabot play`` as a person runs it: a real subprocess, stdin piped (the terminal path
without a status bar), a game against the offline baseline agents, /quit, then --resume."""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
# a short day, then a vote long enough that the agents are still thinking when we vote
PHASES = ["--day-seconds", "6", "--vote-seconds", "60", "--night-seconds", "60",
          "--night-vote-seconds", "60"]  # fmt: skip
LINE = re.compile(r"^\[(\d\d:\d\d:\d\d)\] (?:\(private\) )?([^:]+): (.*)$")


class Terminal:
    """One ``mafiabot play`` process: what it printed so far, and a way to type into it."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.lines: list[str] = []
        self._new = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, *args: str) -> Terminal:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "mafiabot.cli", "play", *args,
            cwd=ROOT,
            env={**os.environ, "MAFIABOT_LLM": "", "PYTHONUNBUFFERED": "1", "COLUMNS": "200"},
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )  # fmt: skip
        return cls(proc)

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        async for raw in self.proc.stdout:
            self.lines.append(raw.decode().rstrip("\n"))
            self._new.set()

    def type(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{text}\n".encode())

    async def expect(self, pattern: str, after: int = 0, within: float = 30.0) -> int:
        """The index of the first printed line from ``after`` on that matches ``pattern``."""
        wanted = re.compile(pattern)

        async def look() -> int:
            while True:
                for i in range(after, len(self.lines)):
                    if wanted.search(self.lines[i]):
                        return i
                self._new.clear()
                if self.proc.returncode is not None and self._reader.done():
                    raise AssertionError(f"exited without {pattern!r}:\n" + self.text())
                await self._new.wait()

        try:
            return await asyncio.wait_for(look(), within)
        except TimeoutError:
            raise AssertionError(f"no {pattern!r} in:\n{self.text()}") from None

    async def exit_code(self) -> int:
        code = await asyncio.wait_for(self.proc.wait(), 30)
        await self._reader
        return code

    def text(self) -> str:
        return "\n".join(self.lines)


@pytest.mark.slow
async def test_play_talk_who_vote_abstain_quit_then_resume(tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'play.db'}"
    term = await Terminal.start("--players", "5", "--seed", "4", *PHASES, "--db", db)
    try:
        first = await term.expect(r"^Game \w+$")
        game_id = term.lines[first].split()[1]
        at = await term.expect(r"^You play as (\w+)\.")
        me = re.search(r"You play as (\w+)\.", term.lines[at]).group(1)  # type: ignore[union-attr]
        card = await term.expect(rf"\(private\) Game-Manager: You are {me}\. Your role: (\w+)")
        role = re.search(r"Your role: (\w+)", term.lines[card]).group(1)  # type: ignore[union-attr]
        start = await term.expect(r"Game-Manager: The game begins with 5 players: (.+)\. ")
        names = re.search(r"5 players: (.+)\. \d", term.lines[start]).group(1)  # type: ignore[union-attr]
        others = [n for n in re.split(r", | and ", names) if n != me]
        assert len(others) == 4

        # a chat line comes back as [HH:MM:SS] Name: text, stamped by the service
        term.type("hello table, who do we like?")
        said = await term.expect(rf"^\[\d\d:\d\d:\d\d\] {me}: hello table, who do we like\?$")
        # /who: the phase, the time left, my role, who is alive
        term.type("/who")
        who = await term.expect(r"^Alive \(5\): ", after=said)
        status = "\n".join(term.lines[who - 1 : who + 1])
        assert "Day 1: discussion" in status and f"you are {me}, {role}" in status
        assert re.search(r"\d:\d\d left", status)
        # a vote outside the vote: a clear message, nothing changes
        term.type(f"/vote {others[0]}")
        refused = await term.expect(r"^Voting hasn't started yet", after=who)
        assert "Traceback" not in term.text()
        assert not any(f"{me} voted for" in line for line in term.lines)
        term.type("/vote Nobodyhere")
        unknown = await term.expect(
            r"^No player called 'Nobodyhere' here\. Choose one of: ", after=refused
        )
        offered = term.lines[unknown].split("Choose one of: ")[1].rstrip(".").split(", ")
        assert sorted(offered) == sorted(others)  # not me: a vote for oneself is refused
        term.type("/dance")
        await term.expect(r"Unknown command /dance\. Type /help\.", after=refused)

        # the vote opens after the day's 6 seconds: abstain, then change to a vote
        opened = await term.expect(r"Game-Manager: Voting is open", after=said, within=40)
        # the terminal's counterpart of a vote menu: how, and for whom
        hint = await term.expect(
            r"^Your vote: /vote NAME \(one of (.+)\) or /abstain", after=opened
        )
        choices = re.search(r"one of (.+)\) or", term.lines[hint]).group(1)  # type: ignore[union-attr]
        assert sorted(choices.split(", ")) == sorted(others)
        term.type("/abstain")
        await term.expect(rf"Game-Manager: {me} abstains\.", after=opened)
        term.type(f"/vote {others[1]}")
        await term.expect(
            rf"Game-Manager: {me} (voted for|changed their vote to) {others[1]}$", after=opened
        )
        term.type(f"/vote {me}")  # not for oneself
        await term.expect(r"^You can't vote for yourself\.$", after=opened)

        term.type("/quit")
        await term.expect(rf"Saved\. Continue with: (uv run )?mafiabot play --resume {game_id}")
        assert await term.exit_code() == 0
    finally:
        if term.proc.returncode is None:
            term.proc.kill()
            await term.proc.wait()
    before = term.lines
    await asyncio.sleep(6)  # away for a while: a terminal game waits for its player

    # back in the game: the role card and the talk so far are shown again, then the game goes on
    again = await Terminal.start("--resume", "--db", db)
    try:
        again.type("/who")
        again.type("/quit")
        await again.expect(rf"^Game {game_id}$")
        earlier = await again.expect(r"^Earlier in this game:$")
        resumed = await again.expect(rf"^Resumed game {game_id} in ", after=earlier)
        # the vote goes on with the time it had left when we quit (about 59 of its 60 s)
        left = re.search(r" in Day 1: vote, (\d+) game seconds left", again.lines[resumed])
        assert left is not None and int(left.group(1)) >= 56, again.lines[resumed]
        shown = again.lines[earlier + 1 : resumed]
        assert any(f"Game-Manager: You are {me}. Your role: {role}" in s for s in shown)
        assert any(s.endswith(f"{me}: hello table, who do we like?") for s in shown)
        assert any(f"Game-Manager: {me} abstains." in s for s in shown)
        # everything said before the /quit, once and in the same order and times
        talk_before = [s for s in before if LINE.match(s)]
        talk_shown = [s for s in shown if LINE.match(s)]
        assert talk_shown[: len(talk_before)] == talk_before
        # the vote we cast before leaving still stands, and we are told so
        await again.expect(rf"^Your vote stands: {others[1]}\. ", after=resumed)
        await again.expect(r"^Alive \(\d\): ", after=resumed)
        assert await again.exit_code() == 0
    finally:
        if again.proc.returncode is None:
            again.proc.kill()
            await again.proc.wait()
