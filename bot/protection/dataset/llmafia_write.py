"""Write an LLMafiaGame back in the release's own folder layout.

Byte format follows the originals: chats are "[HH:MM:SS] Name: text" lines each ending in a
newline; name lists and who_wins.txt have no final newline; config.json is indented by four
spaces with no final newline; vote and survey files end every entry with a newline. What cannot
come back: removed duplicates, cleaned characters, the original line order of lines that were
out of time order (they are written in time order), and the dropped personal fields (config
``real_name``, ``notes``, ``preparation_command``; real_names.txt and notes.txt are not written).
Private per-player chat files are not written either.

What LLMafia's own analysis code (``analyze.py``) needs is written as the release has it:

- ``<Name>_status.txt`` for every player: "VOTED_OUT" for one the game eliminated (voted out or
  killed at night), else "JOINED", each with its newline.
- ``<Name>_log.txt`` for the agent's seat (LLMafia finds its LLM player by this file): the text
  passed as ``agent_log``, else a short marker saying the decisions are not in the export.
- ``<Name>_survey.txt`` for every person: a person who left no survey gets an empty one (the
  analysis opens one for every person and counts no answers from an empty one).
- A line imported from LLMafia is written with LLMafia's own text (`ChatLine.raw`: typed
  backspaces and escape sequences as the release has them), so its analysis counts the same
  messages and words as on the original.
- No chat line without text: the line pattern of the analysis needs some, and a line whose
  text is empty once written (one that was all backspaces, say) is left out and counted in
  ``Written.empty_lines``.

A line break inside a stored text (older games kept them) is written as a space
(`games.text.one_line`): the format has no escape, and a break would start a line that reads as
somebody else's. Per-player files are named after validated character names only
(`bot.protection.dataset.names`), and every path is checked to stay inside ``out_dir``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bot.protection.dataset.llmafia_model import LLMafiaGame, Place, Survey
from bot.protection.dataset.llmafia_survey import survey_text
from bot.protection.dataset.names import UnsafePath, inside, name_problem
from games.text import LINE_BREAKS, one_line

_CHAT_FILES: dict[Place, str] = {
    "stage": "public_daytime_chat.txt",
    "den": "public_nighttime_chat.txt",
    "manager": "public_manager_chat.txt",
}
_WIN_TEXT = {"mafia": "Mafia wins!", "bystanders": "Bystanders win!"}
AGENT_LOG_MARKER = (
    "# This player was the AI agent. Its decisions are not in this export "
    "(export with the agent log to have them here).\n"
)


@dataclass(frozen=True)
class Written:
    folder: Path
    empty_lines: int  # chat lines left out because their text was empty


def write_game(game: LLMafiaGame, out_dir: Path, *, agent_log: str | None = None) -> Path:
    """Write ``game`` into ``out_dir`` (created if needed); returns the folder."""
    return write_counted(game, out_dir, agent_log=agent_log).folder


_LINE_ENDS = re.compile(f"[{re.escape(LINE_BREAKS)}]+")


def _own_text(raw: str) -> str:
    """An imported line's LLMafia text as its file had it: its typed backspaces and escape
    sequences kept (LLMafia's analysis counts them), a line break still a space."""
    return _LINE_ENDS.sub(" ", raw)


def write_counted(game: LLMafiaGame, out_dir: Path, *, agent_log: str | None = None) -> Written:
    """`write_game`, also saying how many empty chat lines were left out."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _put(out / "config.json", json.dumps(_config(game), indent=4))
    _put(out / "game_start_time.txt", game.start_time.strftime("%H:%M:%S"))
    _put(out / "player_names.txt", "\n".join(one_line(p.name) for p in game.players))
    _put(out / "mafia_names.txt", "\n".join(one_line(p.name) for p in game.players if p.is_mafia))
    empty = 0
    for place, name in _CHAT_FILES.items():
        rows = []
        for line in game.lines:
            if line.place != place:
                continue
            text = _own_text(line.raw) if line.raw else one_line(line.text)
            if not text.strip():
                empty += 1
                continue
            rows.append(f"[{line.t.strftime('%H:%M:%S')}] {one_line(line.speaker)}: {text}\n")
        _put(out / name, "".join(rows))
    eliminated = {e.name for e in game.eliminations}
    for p in game.players:
        status = "VOTED_OUT\n" if p.name in eliminated else "JOINED\n"
        _put(_player_file(out, p.name, "status"), status)
    for p in game.players:
        if p.is_llm:
            _put(_player_file(out, p.name, "log"), agent_log or AGENT_LOG_MARKER)
    for player, entries in game.vote_files.items():
        _put(_player_file(out, player, "vote"), "".join(f"{one_line(e)}\n" for e in entries))
    by_player: dict[str, list[Survey]] = {}
    for survey in game.surveys:
        by_player.setdefault(survey.player, []).append(survey)
    for p in game.players:
        if not p.is_llm:
            by_player.setdefault(p.name, [])
    for player, attempts in by_player.items():
        _put(_player_file(out, player, "survey"), "".join(survey_text(s) for s in attempts))
    winner = _WIN_TEXT[game.winner] if game.winner and game.winner_declared else ""
    _put(out / "who_wins.txt", winner)
    _put(out / "remaining_players.txt", "\n".join(one_line(p) for p in game.remaining_players))
    _put(out / "phase_status.txt", game.phase_status)
    return Written(out, empty)


def _config(game: LLMafiaGame) -> dict[str, Any]:
    config: dict[str, Any] = {
        "players": [
            {
                "name": p.name,
                "is_mafia": p.is_mafia,
                "is_llm": p.is_llm,
                "llm_config": p.llm_config,
            }
            for p in game.players
        ],
        "daytime_minutes": _minutes(game.day_minutes),
        "nighttime_minutes": _minutes(game.night_minutes),
    }
    if game.config_path is not None:
        config["config_original_path_when_game_created"] = game.config_path
    return config


def _minutes(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _player_file(out: Path, player: str, kind: str) -> Path:
    """``<out>/<player>_<kind>.txt``, refused (UnsafePath) for a name that is not a safe file
    name or a path that would leave ``out``."""
    problem = name_problem(player)
    if problem is not None:
        raise UnsafePath(f"{out}: not writing a file for the player name {player!r}: {problem}")
    return inside(out, f"{player}_{kind}.txt")


def _put(path: Path, text: str) -> None:
    path.write_bytes(text.encode("utf-8"))
