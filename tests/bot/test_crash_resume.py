"""SIGKILL ``mafiabot simulate`` mid-discussion, mid-vote and mid-night, resume each time, and
prove the finished game holds every message and vote from before each kill exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlmodel import Session, col, select

from bot.store import models as m
from bot.store.db import make_engine

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
GAME = [
    "--players", "7", "--seed", "11", "--speed", "20",
    "--day-seconds", "80", "--vote-seconds", "40",
    "--night-seconds", "60", "--night-vote-seconds", "40",
]  # fmt: skip


class Sim:
    """A ``mafiabot simulate`` subprocess whose stderr transcript is read line by line."""

    def __init__(self, args: list[str], db: str) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "MAFIABOT_DATA_DIR": str(Path(db).parent)}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mafiabot.cli",
                "simulate",
                *args,
                "--db",
                f"sqlite:///{db}",
                "--json",
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._cond = threading.Condition()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            with self._cond:
                self.lines.append(line.rstrip("\n"))
                self._cond.notify_all()
        with self._cond:
            self.lines.append("<eof>")
            self._cond.notify_all()

    def wait_for(self, pred: Callable[[list[str]], bool], timeout: float = 60) -> None:
        end = time.monotonic() + timeout
        with self._cond:
            while not pred(self.lines):
                if self.lines and self.lines[-1] == "<eof>":
                    raise AssertionError("simulate exited early:\n" + "\n".join(self.lines[-30:]))
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError("timed out; output:\n" + "\n".join(self.lines[-30:]))
                self._cond.wait(left)

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)


def after(marker: str, then: Callable[[str], bool], count: int) -> Callable[[list[str]], bool]:
    """True once ``count`` lines matching ``then`` follow the last line containing ``marker``."""

    def pred(lines: list[str]) -> bool:
        idx = max((i for i, line in enumerate(lines) if marker in line), default=-1)
        return idx >= 0 and sum(1 for line in lines[idx + 1 :] if then(line)) >= count

    return pred


def player_line(line: str) -> bool:
    return "] " in line and "Game-Manager" not in line and line.startswith("[")


def vote_line(line: str) -> bool:
    return "Game-Manager" in line and (" voted for " in line or " abstains" in line)


def snapshot(
    db: str, game_id: str
) -> tuple[list[tuple[str, str, str]], list[tuple[str, str, str]]]:
    """Player messages and votes committed so far, keyed by (time, who, what)."""
    engine = make_engine(f"sqlite:///{db}")
    try:
        with Session(engine) as s:
            seats = {
                x.index: x.character_name
                for x in s.exec(select(m.Seat).where(m.Seat.game_id == game_id)).all()
            }
            msgs = [
                (x.t.isoformat(), x.speaker, x.text)
                for x in s.exec(
                    select(m.Message)
                    .where(m.Message.game_id == game_id, col(m.Message.seat_index).is_not(None))
                    .order_by(col(m.Message.id))
                ).all()
            ]
            votes = [
                (x.t.isoformat(), seats[x.voter_index],
                 seats[x.target_index] if x.target_index is not None else "")
                for x in s.exec(select(m.Vote).where(m.Vote.game_id == game_id)).all()
            ]  # fmt: skip
    finally:
        engine.dispose()
    return msgs, votes


@pytest.mark.timeout(240)
def test_sigkill_mid_discussion_vote_and_night_then_resume(tmp_path: Path) -> None:
    db = str(tmp_path / "crash.db")
    before_msgs: list[tuple[str, str, str]] = []
    before_votes: list[tuple[str, str, str]] = []

    sim = Sim(GAME, db)
    sim.wait_for(lambda lines: any(line.startswith("Game g") for line in lines))
    game_id = next(line.split()[1] for line in sim.lines if line.startswith("Game g"))
    # 1. mid-discussion: a few lines into day 1
    sim.wait_for(after("Now it's Daytime", player_line, 3))
    sim.kill()
    msgs, votes = snapshot(db, game_id)
    assert len(msgs) >= 3
    before_msgs += msgs

    # 2. mid-vote: resume, wait for some votes, kill again
    sim = Sim(["--resume", game_id], db)
    sim.wait_for(lambda lines: any("Resumed game" in line for line in lines))
    sim.wait_for(after("Voting is open", vote_line, 2))
    sim.kill()
    msgs, votes = snapshot(db, game_id)
    assert len(votes) >= 2
    before_msgs += msgs
    before_votes += votes

    # 3. mid-night: resume (id omitted: the most recent unfinished game), kill at night
    sim = Sim(["--resume"], db)
    sim.wait_for(lambda lines: any(f"Resumed game {game_id}" in line for line in lines))
    sim.wait_for(after("Nighttime", lambda line: True, 1), timeout=90)
    time.sleep(0.5)
    sim.kill()
    msgs, votes = snapshot(db, game_id)
    before_msgs += msgs
    before_votes += votes

    # 4. resume to the end
    sim = Sim(["--resume", game_id], db)
    assert sim.proc.stdout is not None
    out = sim.proc.stdout.read()
    assert sim.proc.wait(120) == 0, "\n".join(sim.lines[-30:])
    result = json.loads(out)
    assert result["game_id"] == game_id
    assert result["winner"] in ("mafia", "bystanders")

    final_msgs = Counter(
        (e["t"], e["speaker"], e["text"])
        for e in result["transcript"]
        if "speaker" in e and e["speaker"] != "Game-Manager"
    )
    final_votes = Counter(
        (e["t"], e["voter"], e["target"] or "") for e in result["transcript"] if "voter" in e
    )
    for msg in set(before_msgs):
        assert final_msgs[msg] == 1, f"message {msg} appears {final_msgs[msg]} times"
    for vote in set(before_votes):
        assert final_votes[vote] == 1, f"vote {vote} appears {final_votes[vote]} times"
    # and nothing anywhere is duplicated
    assert max(final_msgs.values()) == 1
    end_msgs, end_votes = snapshot(db, game_id)
    assert len(end_msgs) == len(set(end_msgs)) == sum(final_msgs.values())
    assert len(end_votes) == sum(final_votes.values())
