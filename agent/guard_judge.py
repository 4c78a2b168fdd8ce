"""The model as a second judge of a borderline line (optional: ``LLMPlayerSettings.guard_judge``).

The patterns and the likeness bank (:mod:`agent.guard`) decide every line in well under a
millisecond and need no model. A line they let through but that comes near what they look for
(it has a word about AI, people, apologies or inability in it, or is somewhat like a
disclosing example) may be put to the seat's own model as a yes/no question, when a model is
configured for the seat. The call is bounded (``timeout_s``, one attempt, three tokens) and
anything but a clear "yes" (no, an error, a timeout, a skipped call) leaves the baseline
guard's verdict: the line passes. A "yes" is treated like a guard refusal: the line is written
again once, then the baseline's line is said.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re

from agent.guard_similar import ANCHOR, bank
from agent.guard_text import fold
from agent.llm.base import LLMClient, LLMRequest

__all__ = ["BORDER", "borderline", "judge_line", "judge_request", "parse_verdict"]

#: likeness to a disclosing example from which a line counts as borderline
BORDER = 0.25

_SYSTEM = (
    "You check chat lines from an online game of Mafia played by people in a group chat. "
    "Answer with one word: yes or no."
)
_QUESTION = (
    "Does this chat line say or suggest that whoever wrote it is an AI, a bot, a language "
    "model or an assistant (in any language), or is it a refusal, an apology for being unable "
    "to help, or assistant boilerplate rather than a person chatting? Calling someone else a "
    "bot, or asking who the AI is, is what people do: that is a no.\n"
    "Line: {line}\nAnswer yes or no."
)
_VERDICT = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)


def borderline(text: str) -> bool:
    """A line the baseline guard passed but that comes near what it looks for."""
    folded = fold(text)
    if ANCHOR.search(folded):
        return True
    pos, _, _ = bank().nearest(text)
    return pos >= BORDER


def judge_request(line: str) -> LLMRequest:
    return LLMRequest(
        system=_SYSTEM,
        messages=[("user", _QUESTION.format(line=json.dumps(line, ensure_ascii=False)))],
        max_tokens=3,
        temperature=0.0,
        kind="guard",
        max_attempts=1,
        retry_timeouts=False,
    )


def parse_verdict(text: str) -> bool | None:
    """True for yes (the line discloses), False for no, None for anything else."""
    found = _VERDICT.match(text or "")
    return None if found is None else found.group(1).casefold() == "yes"


async def judge_line(client: LLMClient, line: str, timeout_s: float) -> bool | None:
    """The model's verdict on ``line`` within ``timeout_s`` real seconds, or None (no
    verdict: an error, a refusal, a timeout, an unclear answer)."""
    req = dataclasses.replace(judge_request(line), timeout_s=timeout_s)
    try:
        resp = await asyncio.wait_for(client.complete(req), timeout_s)
    except Exception:  # no verdict: the baseline guard's stands
        return None
    return parse_verdict(resp.text)
