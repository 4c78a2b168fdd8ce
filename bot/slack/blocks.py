"""Block Kit for the game: the lobby, vote and night menus, the consent and survey modals.

Action ids are fixed (`JOIN`, `VOTE`, ...); the game id travels in the button value or the
block id (``mafia_vote:<game>:<phase seq>``), so a menu left over from an earlier phase, or
from before a restart, is recognised for what it is.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bot.players import survey
from bot.slack.text import escape

Block = dict[str, Any]

JOIN = "mafia_join"
LEAVE = "mafia_leave"
START = "mafia_start"
VOTE = "mafia_vote"
NIGHT_ACT = "mafia_act"
SURVEY_OPEN = "mafia_survey_open"
CONSENT_OPEN = "mafia_consent_open"
CONSENT_VIEW = "mafia_consent"
SURVEY_VIEW = "mafia_survey"
ABSTAIN = "__abstain__"

MAX_SECTION = 3000


def plain(text: str) -> dict[str, Any]:
    return {"type": "plain_text", "text": text[:150] or " ", "emoji": False}


def section(text: str, **extra: Any) -> Block:
    return {"type": "section", "text": {"type": "mrkdwn", "text": text[:MAX_SECTION]}, **extra}


def button(text: str, action_id: str, value: str, style: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "type": "button",
        "text": plain(text),
        "action_id": action_id,
        "value": value,
    }
    if style:
        out["style"] = style
    return out


def option(text: str, value: str) -> dict[str, Any]:
    return {"text": plain(text), "value": value}


# --- lobby ----------------------------------------------------------------------------------------


def lobby(game_id: str, roster: str, *, open_: bool = True) -> list[Block]:
    """``roster`` is mrkdwn made by the adapter (mentions of who joined), never typed text."""
    blocks = [
        section(f"*Mafia* (game `{game_id}`)\n{roster}"),
    ]
    if open_:
        blocks.append(
            {
                "type": "actions",
                "block_id": f"lobby:{game_id}",
                "elements": [
                    button("Join", JOIN, game_id, "primary"),
                    button("Leave", LEAVE, game_id),
                    button("Start", START, game_id),
                ],
            }
        )
    return blocks


# --- menus in the booth ---------------------------------------------------------------------------


def target_menu(
    *,
    action_id: str,
    block_id: str,
    prompt: str,
    names: Sequence[str],
    placeholder: str,
    abstain: bool,
) -> list[Block]:
    options = [option(n, n) for n in names]
    if abstain:
        options.append(option("Abstain", ABSTAIN))
    return [
        section(
            prompt,
            block_id=block_id,
            accessory={
                "type": "static_select",
                "action_id": action_id,
                "placeholder": plain(placeholder),
                "options": options[:100],
            },
        )
    ]


def deadline_text(real_seconds_left: float, now_epoch: float) -> str:
    """Slack renders ``<!date^…>`` in each reader's own time zone."""
    at = int(now_epoch + real_seconds_left)
    return f"<!date^{at}^{{time_secs}}|in {int(real_seconds_left)} seconds>"


# --- consent --------------------------------------------------------------------------------------


def consent_modal(text: str, *, version: str, research: bool, game_id: str | None) -> Block:
    """The notice in a modal; submitting it is agreeing (``private_metadata`` says to which
    version and, when it came from a Join click, which game to join afterwards)."""
    meta = json.dumps({"version": version, "research": research, "game": game_id})
    paragraphs = [p for p in text.split("\n") if p.strip()]
    blocks: list[Block] = []
    for p in paragraphs:
        blocks.append(section(escape(p)))
    return {
        "type": "modal",
        "callback_id": CONSENT_VIEW,
        "private_metadata": meta,
        "title": plain("Before you play"),
        "submit": plain("I agree" if research else "OK"),
        "close": plain("Not now"),
        "blocks": blocks[:100],
    }


def consent_prompt(status: str) -> list[Block]:
    return [
        section(escape(status)),
        {
            "type": "actions",
            "elements": [button("Read the notice", CONSENT_OPEN, "open")],
        },
    ]


# --- survey ---------------------------------------------------------------------------------------


def survey_invite(game_id: str) -> list[Block]:
    return [
        section(escape(survey.INTRO)),
        {
            "type": "actions",
            "block_id": f"survey:{game_id}",
            "elements": [button("Answer the survey", SURVEY_OPEN, game_id, "primary")],
        },
    ]


def survey_modal(game_id: str, choices: Sequence[str], *, guess_closed: bool = False) -> Block:
    """The survey's questions (`bot.players.survey.QUESTIONS`) as one modal; each input's block and
    action id is the question's key. ``guess_closed`` (the AI was revealed): no guess is asked,
    and the form says why; the other questions stay."""
    blocks: list[Block] = [section(escape(survey.INTRO))]
    if guess_closed:
        blocks.append(section(escape(survey.GUESS_CLOSED)))
    for question in survey.QUESTIONS:
        element: Block
        if question.kind == "guess" and guess_closed:
            continue
        if question.kind == "guess":
            element = _select(question.key, "Pick a player", [option(n, n) for n in choices])
        elif question.kind == "rating":
            labels = survey.RATING_LABELS.items()
            element = _select(question.key, "1 to 5", [option(t, str(n)) for n, t in labels])
        else:
            element = {"type": "plain_text_input", "action_id": question.key, "multiline": True}
        block: Block = {
            "type": "input",
            "block_id": question.key,
            "label": plain(question.text),
            "element": element,
        }
        if question.kind == "comment":
            block["optional"] = True
        blocks.append(block)
    return {
        "type": "modal",
        "callback_id": SURVEY_VIEW,
        "private_metadata": game_id,
        "title": plain("After the game"),
        "submit": plain("Send"),
        "close": plain("Cancel"),
        "blocks": blocks,
    }


def _select(action_id: str, placeholder: str, options: list[dict[str, Any]]) -> Block:
    return {
        "type": "static_select",
        "action_id": action_id,
        "placeholder": plain(placeholder),
        "options": options[:100],
    }


def selected(values: dict[str, Any], block: str, action: str) -> str | None:
    """The chosen option value / typed text of one input in ``view.state.values``."""
    entry = (values.get(block) or {}).get(action) or {}
    if entry.get("selected_option"):
        return str(entry["selected_option"].get("value"))
    value = entry.get("value")
    return None if value is None else str(value)
