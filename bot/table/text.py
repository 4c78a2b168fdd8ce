"""Relayed text and character pictures, the same on every platform.

Platform syntax (Slack's ``<@U…>``, Discord's ``<@123>``) is each adapter's business; this
module only sees plain text.
"""

from __future__ import annotations

import re
from urllib.parse import quote

#: invisible, keeps "@here" from being read as a mention by any client or server
WORD_JOINER = "\u2060"
MASS_MENTIONS = ("everyone", "here", "channel")
_MASS = re.compile(r"(?<![\w.])@(" + "|".join(MASS_MENTIONS) + r")\b", re.IGNORECASE)


def defuse_mass_mentions(text: str) -> str:
    """Show "@everyone", "@here", "@channel" as typed but unable to notify anybody: a player
    (or the agent) must never be able to ping a whole workspace through the relay."""
    return _MASS.sub(lambda m: "@" + WORD_JOINER + m.group(1), text)


#: Character avatars: one picture per character name, the same for humans and agents, so an
#: icon never tells them apart. ``{seed}`` is the URL-quoted name.
AVATAR_URL_TEMPLATE = "https://api.dicebear.com/9.x/thumbs/png?seed={seed}&size=128"


def avatar_url(name: str, template: str = AVATAR_URL_TEMPLATE) -> str:
    return template.format(seed=quote(name, safe=""))
