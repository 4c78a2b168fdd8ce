"""Text scrubbing shared by withdrawal (bot.protection.privacy) and the research export.

Two jobs:

- `redact_lines`: take particular people's chat lines out of other text (agent prompts quote
  the chat as "[HH:MM:SS] Name: text"; other players quote each other).
- `Scrubber`: remove what identifies a person behind a character: platform user ids and
  mentions (Discord ``<@123>``/``<@!123>``, Slack ``<@U123|name>``), account and display names
  the adapter knows (``identities``), ``@handles``, e-mail addresses and phone numbers. Names of
  seated people become their character (or withheld) label, everything else a placeholder.

With ``links`` (the research export), links and bare platform ids go too (`scrub_links`):
a link keeps its scheme and site (``https://discord.com/[link]``), never its path, query or
fragment, where Discord keeps server, channel and message ids
(``discord.com/channels/<server>/<channel>/<message>``) and Slack its team and channel ids
(``<team>.slack.com/archives/<channel>/p<ts>``); a site's subdomains go with it (a Slack
workspace's name is one), and a bare run of 17 to 19 digits (a Discord id, a "snowflake") is
"[id]".

Patterns err on the side of removing too much: a date-free run of 7-15 digits is taken for a
phone number and any ``@word`` for a handle (``@`` + a character name or a game word is
kept: players address each other that way). Short names (under 2 characters) and names that
are game words or character names are not treated as identities, so "mafia" or "Ziggy" in chat
survive a player who calls themselves that.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping

__all__ = [
    "EMAIL",
    "PHONE",
    "PLAYER",
    "WITHDRAWN",
    "WITHHELD",
    "Scrubber",
    "name_variants",
    "redact_lines",
    "remove_user_id",
    "replace_words",
    "scrub_links",
]

WITHDRAWN = "[withdrawn]"
WITHHELD = "[withheld]"
PLAYER = "[player]"
EMAIL_PLACEHOLDER = "[email]"
PHONE_PLACEHOLDER = "[phone]"
MENTION_PLACEHOLDER = "[mention]"

# Lines shorter than this are redacted only in their "Name: text" form: replacing "yes" or "lol"
# wherever it occurs would wreck unrelated text.
MIN_BARE_LINE = 8

EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
PHONE = re.compile(r"(?<![\w+])(?:\+|\b00)?\(?\d[\d \t().\-/]{5,}\d(?!\w)")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$|^\d{1,2}[./-]\d{1,2}[./-]\d{2,4}$")
LINK_PLACEHOLDER = "[link]"
ID_PLACEHOLDER = "[id]"
#: a link: with a scheme (http, https), or a Discord or Slack address typed without one;
#: group 1 is the host, group 2 the rest (port, path, query, fragment)
LINK = re.compile(
    r"(?<![\w@.])(?:https?://|(?=(?:[\w-]+\.)*(?:discord(?:app)?\.com|discord\.gg|slack\.com)/))"
    r"((?:[\w-]+\.)+[\w-]+)((?::\d+)?(?:[/?#](?:[^\s<>|\"]*[^\s<>|\".,!?;:)\]'])?)?)",
    re.IGNORECASE,
)
#: a Discord id (snowflake): 17 to 19 digits not part of a longer number
SNOWFLAKE = re.compile(r"(?<![\d])\d{17,19}(?![\d])")
USER_MENTION = re.compile(r"<@!?([A-Za-z0-9]+)(?:\|[^>]*)?>")
OTHER_MENTION = re.compile(r"<(?:@&|#|!)[^>\s]*>")
HANDLE = re.compile(r"(?<![\w@.])@([A-Za-z0-9_][\w.\-]*[\w]|[A-Za-z0-9_])")
_BROADCAST = {"everyone", "here", "channel"}
# Never treated as someone's name: words every game uses.
GAME_WORDS = frozenset(
    {
        "mafia",
        "town",
        "bystander",
        "bystanders",
        "detective",
        "doctor",
        "player",
        "players",
        "vote",
        "votes",
        "night",
        "day",
        "game",
        "manager",
        "game-manager",
        "everyone",
        "here",
        "channel",
    }
)


def replace_words(text: str, mapping: Mapping[str, str]) -> str:
    """Replace whole-word, case-insensitive occurrences of each key (an optional leading "@"
    goes too). Longer keys win over their prefixes."""
    if not mapping or not text:
        return text
    lookup = {k.casefold(): v for k, v in mapping.items() if k}
    if not lookup:
        return text
    alternatives = "|".join(re.escape(k) for k in sorted(mapping, key=len, reverse=True) if k)
    pattern = re.compile(rf"(?<!\w)@?(?:{alternatives})(?!\w)", re.IGNORECASE)

    def sub(m: re.Match[str]) -> str:
        return lookup.get(m.group(0).lstrip("@").casefold(), m.group(0))

    return pattern.sub(sub, text)


def redact_lines(
    text: str,
    lines: Iterable[tuple[str, str]],
    placeholder: str,
    *,
    min_bare: int = MIN_BARE_LINE,
) -> str:
    """Replace each (speaker, line) in ``text``: "speaker: line" becomes "speaker: placeholder";
    lines of at least ``min_bare`` characters are replaced wherever they appear.

    Agent prompts quote a player's words as one JSON string (`agent.prompting.speech`):
    ``speaker: "line"``, whole or cut short with "…", becomes ``speaker: "placeholder"``, and
    long lines are also found in their JSON-escaped form."""
    if not text:
        return text
    pairs = sorted({(s, t.strip()) for s, t in lines if t.strip()}, key=lambda p: -len(p[1]))
    by_speaker: dict[str, list[str]] = {}
    for speaker, line in pairs:
        by_speaker.setdefault(speaker, []).append(" ".join(line.split()))
    for speaker, said in by_speaker.items():
        text = _redact_quoted(text, speaker, said, placeholder)
    for speaker, line in pairs:
        text = text.replace(f"{speaker}: {line}", f"{speaker}: {placeholder}")
    for _, line in pairs:
        if len(line) >= min_bare and line != placeholder:
            text = text.replace(line, placeholder)
            escaped = json.dumps(" ".join(line.split()), ensure_ascii=False)[1:-1]
            if escaped != line:
                text = text.replace(escaped, placeholder)
    return text


def _redact_quoted(text: str, speaker: str, said: list[str], placeholder: str) -> str:
    """``speaker: "<one of said>"`` (or its start, cut with "…") -> ``speaker: "placeholder"``."""
    if f"{speaker}: " not in text:
        return text
    pattern = re.compile(rf'(?<![\w-]){re.escape(speaker)}: ("(?:[^"\\]|\\.)*")')

    def sub(m: re.Match[str]) -> str:
        try:
            quoted = json.loads(m.group(1))
        except ValueError:
            return m.group(0)
        cut = quoted.endswith("…")
        start = quoted.removesuffix("…").rstrip()
        if any(line == quoted or (cut and start and line.startswith(start)) for line in said):
            return f"{speaker}: {json.dumps(placeholder, ensure_ascii=False)}"
        return m.group(0)

    return pattern.sub(sub, text)


def remove_user_id(text: str, user_id: str, placeholder: str) -> str:
    """Replace one person's platform id, bare or as a mention, and nothing else."""
    if not text or not user_id or user_id not in text:
        return text
    text = USER_MENTION.sub(lambda m: placeholder if m.group(1) == user_id else m.group(0), text)
    return replace_words(text, {user_id: placeholder})


def name_variants(name: str) -> set[str]:
    """The forms of an account or display name worth removing: the name, an e-mail's local
    part, and each word of four or more letters of a multi-word name ("Bob McDistinctive" ->
    also "McDistinctive"), game words excepted."""
    name = name.strip()
    out = {name} if name else set()
    if "@" in name:
        local = name.split("@", 1)[0]
        if len(local) >= 4:
            out.add(local)
    words = name.split()
    if len(words) > 1:
        out.update(w for w in words if len(w) >= 4 and w.casefold() not in GAME_WORDS)
    return out


def _site(host: str) -> str:
    """The site of a host: its last two labels (three under a short second-level label, as
    in example.co.uk); subdomains, which can name a workspace or a person, go."""
    labels = host.lower().rstrip(".").split(".")
    keep = 3 if len(labels) >= 3 and len(labels[-2]) <= 3 and len(labels[-1]) == 2 else 2
    return ".".join(labels[-keep:])


def _link(m: re.Match[str]) -> str:
    scheme = m.group(0)[: m.start(1) - m.start(0)]
    rest = LINK_PLACEHOLDER if m.group(2) else ""
    return f"{scheme}{_site(m.group(1))}/{rest}" if rest else f"{scheme}{_site(m.group(1))}"


def scrub_links(text: str) -> str:
    """Links down to their site, bare Discord ids to "[id]" (see the module doc)."""
    if not text:
        return text
    return SNOWFLAKE.sub(ID_PLACEHOLDER, LINK.sub(_link, text))


class Scrubber:
    """Removes identities from text; see the module doc.

        ``names``: literal name or user id -> replacement (whole word, case-insensitive).
        ``mentions``: platform user id -> replacement for ``<@id>`` mentions; other ids become
        ``default``. ``protected``: words never replaced as names (the game's character names).
    ``links``: also `scrub_links` (the research export).
    """

    def __init__(
        self,
        names: Mapping[str, str] | None = None,
        mentions: Mapping[str, str] | None = None,
        *,
        protected: Iterable[str] = (),
        default: str = PLAYER,
        links: bool = False,
    ) -> None:
        self.links = links
        keep = {p.casefold() for p in protected} | GAME_WORDS
        self.protected = keep
        self.names = {
            k: v for k, v in (names or {}).items() if len(k) >= 2 and k.casefold() not in keep
        }
        self.mentions = dict(mentions or {})
        self.default = default

    def __call__(self, text: str) -> str:
        if not text:
            return text
        text = USER_MENTION.sub(lambda m: self.mentions.get(m.group(1), self.default), text)
        text = OTHER_MENTION.sub(MENTION_PLACEHOLDER, text)
        if self.links:
            text = scrub_links(text)
        text = replace_words(text, self.names)
        text = EMAIL.sub(EMAIL_PLACEHOLDER, text)
        text = PHONE.sub(_phone, text)
        return HANDLE.sub(self._handle, text)

    def _handle(self, m: re.Match[str]) -> str:
        handle = m.group(1).casefold()
        return m.group(0) if handle in _BROADCAST or handle in self.protected else PLAYER


def _phone(m: re.Match[str]) -> str:
    raw = m.group(0)
    digits = sum(c.isdigit() for c in raw)
    if 7 <= digits <= 15 and not _DATE.match(raw.strip()):
        return PHONE_PLACEHOLDER
    return raw
