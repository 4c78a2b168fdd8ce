"""servers.settings: a default persona written as free text becomes the nearest key, or goes

Revision ID: 0011
Revises: 0010

Personas are chosen by key now (free text from a chat command went into the agent's prompt,
so whoever wrote it could recognise the AI). A server default that names a persona by key or
title becomes that key; a description becomes the built-in persona its words are nearest to;
anything else is dropped (AI players then get a persona drawn per game). The text is kept as
``persona_was`` (never used for a prompt) and the moderator finds a note about the change in
``/mafia config`` (``persona_note``) until they choose a persona. The key table is copied here
as it was at this revision, so the migration does not change when the personas do.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

KEYS = {
    "observer": ("observer", "the quiet observer", "quiet observer"),
    "skeptic": ("skeptic", "the skeptic"),
    "leader": ("leader", "the leader"),
    "charmer": ("charmer", "the charmer"),
    "analyst": ("analyst", "the analyst"),
    "deflector": ("deflector", "the deflector"),
}
HINTS = (
    ("observer", ("quiet", "observ", "shy", "listen", "calm", "reserved", "silent", "few words")),
    ("skeptic", ("skeptic", "sceptic", "doubt", "suspicious", "question", "cynic", "paranoid")),
    ("leader", ("lead", "outgoing", "organis", "organiz", "bold", "loud", "confident", "boss")),
    ("charmer", ("charm", "friendly", "warm", "funny", "joke", "nice", "kind", "cheerful")),
    ("analyst", ("analy", "logic", "fact", "careful", "detail", "methodical", "rational")),
    ("deflector", ("deflect", "evasive", "sneaky", "dodg", "slippery")),
)
NOTE_KEPT = (
    "your default AI persona was written text, which is no longer possible (whoever wrote it "
    "could recognise the AI). It is now '{key}', the nearest built-in persona; choose another "
    "with /mafia config persona."
)
NOTE_DROPPED = (
    "your default AI persona was written text, which is no longer possible (whoever wrote it "
    "could recognise the AI), and no built-in persona is close to it, so it was removed: AI "
    "players get a persona drawn per game. Choose one with /mafia config persona."
)

servers = sa.table(
    "servers",
    sa.column("id", sa.Integer()),
    sa.column("settings", sa.JSON()),
)


def nearest(text: str) -> tuple[str | None, bool]:
    """(the key, whether ``text`` already named it exactly)."""
    folded = " ".join(text.split()).casefold()
    for key, names in KEYS.items():
        if folded in names:
            return key, True
    for key, hints in HINTS:
        if any(h in folded for h in hints):
            return key, False
    return None, False


def upgrade() -> None:
    conn = op.get_bind()
    for row in conn.execute(sa.select(servers.c.id, servers.c.settings)).all():
        settings: dict[str, Any] = dict(row.settings or {})
        old = settings.get("persona")
        if not isinstance(old, str):
            continue
        key, exact = nearest(old)
        if exact and key is not None:
            if old == key:
                continue
            settings["persona"] = key
        else:
            settings["persona_was"] = old
            if key is None:
                settings.pop("persona", None)
                settings["persona_note"] = NOTE_DROPPED
            else:
                settings["persona"] = key
                settings["persona_note"] = NOTE_KEPT.format(key=key)
        conn.execute(servers.update().where(servers.c.id == row.id).values(settings=settings))


def downgrade() -> None:
    conn = op.get_bind()
    for row in conn.execute(sa.select(servers.c.id, servers.c.settings)).all():
        settings: dict[str, Any] = dict(row.settings or {})
        if "persona_was" not in settings:
            continue
        settings["persona"] = settings.pop("persona_was")
        settings.pop("persona_note", None)
        conn.execute(servers.update().where(servers.c.id == row.id).values(settings=settings))
