"""The post-game survey files (``<Name>_survey.txt``).

Each answer is a "metric - value" line, then "Comments:" and one line of comment. The pilot
games (0001–0006) asked for 0–100; later games asked for 1–5 and added "Was the LLM identified"
(0/1). A player who ran the survey twice has both answers appended to one file; a player who
quit early has a short or empty file.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from bot.protection.dataset.llmafia_model import Scale, Survey

IDENTIFIED = "Was the LLM identified"
SIMILARITY = "similarity to human behavior"
TIMING = "timing of messaging"
RELEVANCE = "relevance of messages"
METRICS = (IDENTIFIED, SIMILARITY, TIMING, RELEVANCE)
RATINGS = (SIMILARITY, TIMING, RELEVANCE)

_FIELD = re.compile(r"^(.*?) - (.*)$")


@dataclass
class SurveyAnswers:
    """One run of the survey as written, before the game's scale is known."""

    fields: dict[str, str] = field(default_factory=dict)
    comment_lines: list[str] | None = None

    @property
    def comments(self) -> str | None:
        return None if self.comment_lines is None else "\n".join(self.comment_lines)


def parse_survey_text(text: str, clean: Callable[[str], str]) -> tuple[list[SurveyAnswers], int]:
    """Split a survey file into its runs; also returns how many lines made no sense.

    A new run starts when a known metric follows the comments or repeats a metric already
    answered. ``clean`` fixes typed characters in comments (backspaces and the like).
    """
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    runs: list[SurveyAnswers] = []
    cur: SurveyAnswers | None = None
    in_comments = False
    unparsed = 0
    for line in lines:
        m = _FIELD.match(line)
        metric = m.group(1).strip() if m else ""
        if m is not None and metric in METRICS:
            if cur is None or in_comments or metric in cur.fields:
                cur = SurveyAnswers()
                runs.append(cur)
                in_comments = False
            cur.fields[metric] = m.group(2).strip()
        elif line.strip() == "Comments:" and not in_comments:
            if cur is None:
                cur = SurveyAnswers()
                runs.append(cur)
            cur.comment_lines = []
            in_comments = True
        elif in_comments and cur is not None and cur.comment_lines is not None:
            cur.comment_lines.append(clean(line))
        else:
            unparsed += 1
    return runs or [SurveyAnswers()], unparsed


def detect_scale(runs: Iterable[SurveyAnswers]) -> tuple[Scale | None, str]:
    """The rating scale of one game's surveys, with the evidence in words.

    Decided per game, from the answers themselves: a 0 or anything above 5 cannot be a 1–5
    answer, so it proves 0–100. Without such an answer, the later survey's extra question ("Was
    the LLM identified") marks the 1–5 form. With neither, the game is read as 1–5 and the
    evidence says it is ambiguous. None when the game has no surveys.
    """
    values: list[float] = []
    marked = False
    seen = False
    for run in runs:
        seen = True
        marked = marked or IDENTIFIED in run.fields
        values.extend(v for v in (_number(run.fields.get(k)) for k in RATINGS) if v is not None)
    if not seen:
        return None, ""
    outside = sorted({v for v in values if v == 0 or v > 5})
    if outside:
        shown = ", ".join(f"{v:g}" for v in outside[:5])
        despite = " (although the survey is the later form)" if marked else ""
        return "0-100", (
            f"0-100 scale{despite}: answers {shown} cannot be on 1-5; mapped to 1-5 as 1 + 4*v/100"
        )
    if marked:
        return "1-5", (
            "1-5 scale: every answer is within 1-5 and the survey asks "
            "'Was the LLM identified' (the later form)"
        )
    return "1-5", "scale ambiguous: every answer is within 1-5 but the survey is the early form"


def to_survey(
    player: str,
    about: str | None,
    run: SurveyAnswers,
    scale: Scale,
    attempt: int = 1,
    final: bool = True,
) -> Survey:
    def rating(key: str) -> float | None:
        n = _number(run.fields.get(key))
        if n is None:
            return None
        return round(1 + 4 * n / 100, 6) if scale == "0-100" else n

    flag = _number(run.fields.get(IDENTIFIED))
    return Survey(
        player=player,
        about=about,
        fields=dict(run.fields),
        identified_llm=None if flag is None else flag != 0,
        similarity=rating(SIMILARITY),
        timing=rating(TIMING),
        relevance=rating(RELEVANCE),
        original_scale=scale,
        comments=run.comments,
        attempt=attempt,
        final=final,
    )


def survey_text(survey: Survey) -> str:
    """One run back in the file's format (original scale, cleaned comments)."""
    text = "".join(f"{k} - {v}\n" for k, v in survey.fields.items())
    if survey.comments is not None:
        text += f"Comments:\n{survey.comments}\n"
    return text


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None
