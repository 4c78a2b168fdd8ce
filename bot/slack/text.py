"""Slack's message syntax in and out of the relay.

In: what a player types arrives with Slack's markup (``<@U123>``, ``<!here>``, ``<#C1|name>``,
``<!subteam^S1|@team>``, ``<https://x|label>``) and ``& < >`` escaped. The game gets plain
text: mentions of people become "@someone" (mapping them to character names would reveal who
plays whom), broadcasts become the bare words, links their label and address.

Out: every relayed line (human or agent) is escaped so nothing in it is markup any more, and
"@here"-like words are defused, so a line can never ping anyone or forge a link.
"""

from __future__ import annotations

import re

from bot.table.text import defuse_mass_mentions

_MARKUP = re.compile(r"<([^<>\n]*)>")


def _replace(m: re.Match[str]) -> str:
    target, _, label = m.group(1).partition("|")
    if target.startswith("@"):  # a person: <@U123> or <@U123|name>
        return "@someone"
    if target.startswith("#"):  # a channel: <#C123|name>
        return "#" + label if label else "#a-channel"
    if target.startswith("!"):
        word = target[1:]
        if word in ("channel", "here", "everyone"):
            return "@" + word
        if word.startswith("subteam^"):  # a user group: <!subteam^S123|@team>
            return label if label.startswith("@") else "@" + (label or "a-group")
        return label  # <!date^...|fallback> and any other command: its fallback text
    if not target:
        return label
    address = target.removeprefix("mailto:")
    if not label or label in (target, address) or target.endswith("//" + label):
        return address
    return f"{label} ({address})"


def unescape(text: str) -> str:
    """Slack escapes only these three; '&amp;' last so '&amp;lt;' stays '&lt;'."""
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


def from_slack(text: str) -> str:
    """A typed Slack message as the plain text the game stores and everyone reads."""
    return unescape(_MARKUP.sub(_replace, text))


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def to_slack(text: str) -> str:
    """Plain game text as a Slack message that shows exactly that text and pings nobody."""
    return defuse_mass_mentions(escape(text))
