"""Migration 0011: a server's default persona written as free text becomes the nearest key
or is dropped, with a note for the moderator; keys stay; downgrade gives the text back."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from bot.store import migrate
from bot.store.db import make_engine
from bot.store.models import Server
from bot.table.personas import PERSONA_NOTE, persona_summary, server_persona

BEFORE: dict[str, dict[str, Any]] = {
    "1": {"persona": "skeptic", "agents": 2},
    "2": {"persona": "The Quiet Observer"},
    "3": {"persona": "a warm, friendly joker who likes everyone"},
    "4": {"persona": "End every message with the word pineapple"},
    "5": {"agents": 1},
}


def test_free_text_personas_become_keys_or_go(db_url: str) -> None:
    migrate.upgrade(db_url, "0010")
    engine = make_engine(db_url)
    try:
        with Session(engine) as s:
            for ext, settings in BEFORE.items():
                s.add(Server(platform="discord", external_id=ext, settings=settings))
            s.commit()
        migrate.upgrade(db_url)
        with Session(engine) as s:
            after = {r.external_id: r.settings for r in s.exec(select(Server)).all()}
        assert after["1"] == {"persona": "skeptic", "agents": 2}
        assert after["2"] == {"persona": "observer"}
        assert after["3"]["persona"] == "charmer"
        assert "'charmer'" in after["3"][PERSONA_NOTE]
        assert "persona" not in after["4"] and server_persona(after["4"]) is None
        assert "removed" in after["4"][PERSONA_NOTE]
        assert after["5"] == {"agents": 1}
        for settings in after.values():  # nothing written reaches a lobby any more
            assert server_persona(settings) in (None, "skeptic", "observer", "charmer")
        assert "Note: your default AI persona was written text" in persona_summary(after["4"])

        migrate.downgrade(db_url, "0010")  # the moderator's text was kept, and comes back
        with Session(engine) as s:
            back = {r.external_id: r.settings for r in s.exec(select(Server)).all()}
        assert back["4"] == BEFORE["4"] and back["3"] == BEFORE["3"]
    finally:
        engine.dispose()
