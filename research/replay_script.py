"""A recorded LLMafia game as a replay script and a live game setup (research/replay.py).

The recording's phases become the engine's: an LLMafia day is our day discussion followed by a
day vote, its night our night talk followed by the mafia's vote. Each human line is anchored to
the live phase it was typed in: to the discussion, at its offset from the recorded phase start,
or, when typed after the host's "time to vote!" line, to the vote phase at its offset from that
line. Each timed vote is anchored to its vote phase the same way. The live phases then carry
the cues wherever the engine's timers put them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from bot.protection.dataset.llmafia_model import MANAGER, LLMafiaGame, Phase
from games.config import GameConfig
from games.state import PhaseKind
from research.replay_harness import Cue

__all__ = ["Script", "build_script", "replay_config"]

# recorded things that never become cues
CLOSED_CHAT = "closed_chat"  # a day-chat line stamped in a night, or a den line in a day
UNKNOWN_SPEAKER = "unknown_speaker"  # a speaker not in the game's config
UNTIMED = "untimed"  # a vote-file entry never announced: no time to cast it at
STALE = "stale"  # an announced vote from or for a player already out (host restart)

#: vote phases last as long as the longest recorded one plus this, and at least MIN_VOTE_S
VOTE_MARGIN_S = 20.0
MIN_VOTE_S = 30.0

_TALK = {"day": PhaseKind.DAY, "night": PhaseKind.NIGHT}
_VOTE = {"day": PhaseKind.VOTE, "night": PhaseKind.NIGHT_VOTE}


@dataclass
class Script:
    """The cues in playing order, plus what the recording held that no cue carries."""

    cues: list[Cue]
    #: player lines the recording holds, by kind of speaker ("human", "llm")
    recorded_lines: Counter[str] = field(default_factory=Counter)
    recorded_votes: Counter[str] = field(default_factory=Counter)
    #: recorded human lines / votes left out of the script, by reason
    unscripted_lines: Counter[str] = field(default_factory=Counter)
    unscripted_votes: Counter[str] = field(default_factory=Counter)


def _vote_spans(game: LLMafiaGame, kind: str) -> list[float]:
    """How long each recorded vote of this kind lasted: from the "time to vote!" line to the
    next phase (or the last vote cast, for the game's last phase)."""
    spans: list[float] = []
    for p in game.phases:
        if p.kind != kind:
            continue
        begin = p.voting_start or p.start
        end = p.end or max(
            (v.t for v in game.votes if v.phase == p.label and v.t is not None), default=None
        )
        if end is not None:
            spans.append(max((end - begin).total_seconds(), 0.0))
    return spans


def replay_config(game: LLMafiaGame, deal: tuple[str, ...]) -> GameConfig:
    """Our rules set to the recording's: its day and night lengths; vote phases as long as the
    longest recorded vote of their kind plus a margin (the host waited for every vote, ours
    ends a vote once everyone has voted, so the margin only matters when someone's vote cannot
    be cast live); ties broken at random, because the study's host put somebody out in every
    phase; the night talk skipped with a single mafia left, as the host did."""
    day_vote = max([MIN_VOTE_S, *(s + VOTE_MARGIN_S for s in _vote_spans(game, "day"))])
    night_vote = max([MIN_VOTE_S, *(s + VOTE_MARGIN_S for s in _vote_spans(game, "night"))])
    return GameConfig(
        deal=deal,
        day_seconds=game.day_minutes * 60 or 180.0,
        vote_seconds=day_vote,
        night_seconds=game.night_minutes * 60 or 60.0,
        night_vote_seconds=night_vote,
        tie_rule="random",
        night_tie_rule="random",
        skip_night_talk_single_mafia=True,
    )


def _anchor(phase: Phase, t: datetime, vote: bool) -> tuple[PhaseKind, float]:
    opened = phase.voting_start
    if vote or (opened is not None and t >= opened):
        begin = opened or phase.start
        return _VOTE[phase.kind], max((t - begin).total_seconds(), 0.0)
    return _TALK[phase.kind], max((t - phase.start).total_seconds(), 0.0)


def build_script(game: LLMafiaGame, agent_name: str) -> Script:
    """Every human line and timed vote of the recording as cues, in the recording's order.

    ``Cue.ref`` is the line's index in ``game.lines`` or the vote's in ``game.votes``.
    """
    phases = {p.label: p for p in game.phases}
    index = {p.label: i for i, p in enumerate(game.phases)}
    names = {p.name for p in game.players}
    script = Script(cues=[])
    keyed: list[tuple[tuple[int, int, float, int, int], Cue]] = []
    for i, line in enumerate(game.lines):
        if line.speaker == MANAGER or line.place == "manager":
            continue
        if line.speaker not in names:
            script.recorded_lines["unknown"] += 1
            script.unscripted_lines[UNKNOWN_SPEAKER] += 1
            continue
        if line.speaker == agent_name:
            script.recorded_lines["llm"] += 1
            continue
        script.recorded_lines["human"] += 1
        phase = phases[line.phase]
        if (line.place == "stage") != (phase.kind == "day"):
            script.unscripted_lines[CLOSED_CHAT] += 1
            continue
        kind, offset = _anchor(phase, line.t, vote=False)
        cue = Cue(kind, phase.number, offset, line.speaker, "say", line.text, i)
        keyed.append(((index[phase.label], 0 if kind in _TALK.values() else 1, offset, 0, i), cue))
    for i, vote in enumerate(game.votes):
        if vote.voter == agent_name:
            script.recorded_votes["llm"] += 1
            continue
        script.recorded_votes["human"] += 1
        if vote.t is None or vote.phase is None or vote.source != "announced":
            script.unscripted_votes[UNTIMED] += 1
            continue
        if vote.valid is False:
            script.unscripted_votes[STALE] += 1
            continue
        phase = phases[vote.phase]
        kind, offset = _anchor(phase, vote.t, vote=True)
        cue = Cue(kind, phase.number, offset, vote.voter, "vote", vote.target, i)
        keyed.append(((index[phase.label], 1, offset, 1, i), cue))
    keyed.sort(key=lambda kc: kc[0])
    script.cues = [c for _, c in keyed]
    return script
