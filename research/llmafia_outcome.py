"""The votes and the outcome of an LLMafia game folder, as the reader repairs them.

Votes: the host's "X voted for Y" announcements are the only timed votes; ``<Name>_vote.txt``
entries no announcement accounts for are kept without a time. Outcome: the announced roles
are checked against the config, the winner is who_wins.txt's (or what the rules say of who is
left, when the game stalled), and the status files are compared with the manager chat. Every
disagreement is a repair on the folder (`research.llmafia_folder.GameFolder.fix`).
"""

from __future__ import annotations

import re

from bot.protection.dataset.llmafia_model import MANAGER, Elimination, Player, VoteRecord, Winner
from research.llmafia_folder import GameFolder, RawLine

__all__ = [
    "VOTED_FOR",
    "build_votes",
    "check_roles",
    "check_status_files",
    "decide_winner",
    "read_vote_files",
]

VOTED_FOR = re.compile(r"^(\S+) voted for (\S+)\s*$")
_VOTE_PREFIX = re.compile(r"^(Daytime|Nighttime)_(?:Voting_?)?")


def read_vote_files(game: GameFolder, players: list[Player]) -> dict[str, list[str]]:
    files: dict[str, list[str]] = {}
    prefixed = 0
    for p in players:
        if not (game.folder / f"{p.name}_vote.txt").is_file():
            continue
        entries: list[str] = []
        for line in game.file_lines(f"{p.name}_vote.txt"):
            entry = line.strip()
            if not entry:
                continue
            stripped = _VOTE_PREFIX.sub("", entry)
            if stripped != entry:
                prefixed += 1
            entries.append(stripped)
        files[p.name] = entries
    if prefixed:
        game.fix(
            "vote_prefix",
            f"{prefixed} vote-file entries carried a phase prefix (e.g. 'Daytime_X'); "
            "stripped to the player name",
            prefixed,
        )
    return files


def build_votes(
    game: GameFolder,
    ordered: list[RawLine],
    labels: list[str],
    elim_phase: dict[str, int],
    vote_files: dict[str, list[str]],
) -> list[VoteRecord]:
    def alive(name: str, phase: int) -> bool:
        return elim_phase.get(name, len(labels)) >= phase

    announced: list[tuple[RawLine, str, str, bool]] = []
    for r in ordered:
        if r.speaker != MANAGER or r.place == "manager":
            continue
        m = VOTED_FOR.match(r.text)
        if m is None:
            continue
        voter, target = m.group(1), m.group(2)
        valid = alive(voter, r.phase) and alive(target, r.phase)
        announced.append((r, voter, target, valid))
    stale = sum(1 for *_, valid in announced if not valid)
    if stale:
        game.fix(
            "stale_votes",
            f"{stale} announced votes come from or go to players already voted out (a "
            "restarted host re-announced old votes); kept with valid=False",
            stale,
        )
    votes = [
        VoteRecord(voter, target, labels[r.phase], r.t, "announced", valid)
        for r, voter, target, valid in announced
    ]
    votes.extend(_unannounced_votes(game, announced, labels, vote_files))
    return votes


def _unannounced_votes(
    game: GameFolder,
    announced: list[tuple[RawLine, str, str, bool]],
    labels: list[str],
    vote_files: dict[str, list[str]],
) -> list[VoteRecord]:
    """Vote-file entries no announcement accounts for, placed between the matched ones.

    Every announcement shows the voter's latest file entry at that moment, so announcements
    match file entries in order; a re-announcement (after a restart) matches the same entry
    again. Entries left over were overwritten before anyone counted them.
    """
    out: list[VoteRecord] = []
    for voter, entries in vote_files.items():
        mine = [(r.phase, target) for r, v, target, _ in announced if v == voter]
        matched: dict[int, int] = {}  # entry index -> phase index
        j = 0
        for phase, target in mine:
            if not (j < len(entries) and entries[j] == target) and (
                j > 0 and entries[j - 1] == target
            ):
                continue  # the same entry announced again
            k = next((i for i in range(j, len(entries)) if entries[i] == target), None)
            if k is None:
                continue
            matched[k] = phase
            j = k + 1
        for i, target in enumerate(entries):
            if i in matched:
                continue
            before = [matched[k] for k in matched if k < i]
            after = [matched[k] for k in matched if k > i]
            phase_label = None
            if before and after and max(before) == min(after):
                phase_label = labels[max(before)]
            out.append(VoteRecord(voter, target, phase_label, None, "file", None))
    if out:
        game.fix(
            "unannounced_votes",
            f"{len(out)} vote-file entries were never announced (changed before the count "
            "or cast after it); kept as source='file' without a time",
            len(out),
        )
    return out


def check_roles(game: GameFolder, eliminations: list[Elimination], players: list[Player]) -> None:
    by_name = {p.name: p for p in players}
    for e in eliminations:
        p = by_name.get(e.name)
        if p is None:
            game.fix("unknown_player", f"{e.name} voted out in {e.phase} is not in config")
        elif (e.role == "mafia") != p.is_mafia:
            game.fix("role_mismatch", f"{e.name} announced as {e.role} contradicts config")


def decide_winner(
    game: GameFolder, players: list[Player], eliminations: list[Elimination], remaining: list[str]
) -> tuple[Winner | None, bool]:
    out_names: set[str] = set()
    ended: str | None = None
    later = 0
    for e in eliminations:
        if ended is not None:
            later += 1
        out_names.add(e.name)
        alive = [p for p in players if p.name not in out_names]
        over = _rule_winner(alive)
        if over is not None and ended is None and e is not eliminations[-1]:
            mafia = sum(p.is_mafia for p in alive)
            ended = (
                f"by the rules the {over} had won when {e.name} was voted out in {e.phase} "
                f"({mafia} mafia vs {len(alive) - mafia} bystanders)"
            )
    if ended is not None:
        game.fix(
            "game_over_missed",
            f"{ended}; the host went on for {later} more eliminations (a restarted host "
            "lost track of who was out)",
        )
    alive_names = [p.name for p in players if p.name not in out_names]
    if remaining != alive_names:
        game.fix(
            "remaining_mismatch",
            f"remaining_players.txt lists {remaining}, the eliminations leave {alive_names}",
        )
    rule = _rule_winner([p for p in players if p.name not in out_names])
    said = (game.text_of("who_wins.txt") or "").strip()
    declared: Winner | None = None
    if said.lower().startswith("mafia"):
        declared = "mafia"
    elif said.lower().startswith("bystander"):
        declared = "bystanders"
    elif said:
        game.fix("winner_unreadable", f"who_wins.txt says {said!r}")
    if declared is not None:
        if rule is not None and rule != declared:
            game.fix("winner_mismatch", f"who_wins.txt says {declared}, the rules say {rule}")
        return declared, True
    how = (
        f"inferred '{rule}' from who is left ({', '.join(alive_names)})"
        if rule is not None
        else "no winner can be inferred: neither side had won"
    )
    game.fix("empty_winner", f"who_wins.txt is empty (the game stalled); {how}")
    return rule, False


def check_status_files(
    game: GameFolder, players: list[Player], eliminations: list[Elimination]
) -> None:
    out = {e.name: e.phase for e in eliminations}
    wrong: list[str] = []
    for p in players:
        status = (game.text_of(f"{p.name}_status.txt") or "").strip()
        if not status:
            continue
        if status == "VOTED_OUT" and p.name not in out:
            wrong.append(f"{p.name} says VOTED_OUT but was never voted out")
        elif status != "VOTED_OUT" and p.name in out:
            wrong.append(f"{p.name} says {status} but was voted out in {out[p.name]}")
    if wrong:
        game.fix(
            "status_mismatch",
            "<Name>_status.txt disagrees with the manager chat (status files are not used): "
            + "; ".join(wrong),
            len(wrong),
        )


def _rule_winner(alive: list[Player]) -> Winner | None:
    mafia = sum(p.is_mafia for p in alive)
    if mafia == 0:
        return "bystanders"
    if mafia >= len(alive) - mafia:
        return "mafia"
    return None
