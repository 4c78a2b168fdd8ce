"""The LLM player's own log (``<Name>_log.txt``; the release keeps one, 0013/Charlie_log.txt).

Entries look like::

    # NEW LOG
    ## TIME: 20:24:57
    ## OPERATION: prompt in generate_message
    ## CONTENT: first line of content
    more content lines ...

The content is the agent's raw prompts and outputs, kept verbatim (it is model I/O, not typed
text, so nothing is cleaned). The log starts before the game does (the agent is warmed up with
a rules question), so entries can precede the game's start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, time
from pathlib import Path

from bot.protection.dataset.llmafia_model import LLMafiaGame, place_time

_TIME = re.compile(r"^## TIME: (\d{1,2}):(\d{2}):(\d{2})\s*$")
_OPERATION = "## OPERATION: "
_CONTENT = "## CONTENT: "
_NEW = "# NEW LOG"

SCHEDULING = "scheduling decision"
VOTE = "generated vote in get_vote"


@dataclass(frozen=True)
class AgentLogEntry:
    t: datetime
    operation: str
    content: str


def read_agent_log(path: Path, game: LLMafiaGame | None = None) -> list[AgentLogEntry]:
    """Parse an agent log; times are dated against ``game``'s start when given.

    Without a game, times are placed relative to the first entry on 1970-01-01 (midnight
    crossings still count forward).
    """
    text = Path(path).read_bytes().decode("utf-8", errors="replace").replace("\r\n", "\n")
    raw: list[tuple[time, str, list[str]]] = []
    cur: tuple[time, str, list[str]] | None = None
    pending_time: time | None = None
    pending_op = ""
    for line in text.split("\n"):
        if line == _NEW:
            cur, pending_time, pending_op = None, None, ""
            continue
        m = _TIME.match(line)
        if cur is None and m is not None:
            pending_time = time(int(m.group(1)), int(m.group(2)), int(m.group(3)))
        elif cur is None and line.startswith(_OPERATION):
            pending_op = line[len(_OPERATION) :].strip()
        elif cur is None and line.startswith(_CONTENT) and pending_time is not None:
            cur = (pending_time, pending_op, [line[len(_CONTENT) :]])
            raw.append(cur)
        elif cur is not None:
            cur[2].append(line)
    if not raw:
        return []
    start = game.start_time if game is not None else datetime.combine(date(1970, 1, 1), raw[0][0])
    return [
        AgentLogEntry(place_time(tod, start), op, "\n".join(body).rstrip("\n"))
        for tod, op, body in raw
    ]
