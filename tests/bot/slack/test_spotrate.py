"""`/mafia spotrate` on Slack: workspace admins see this workspace's spot-the-AI rate."""

from __future__ import annotations

from sqlmodel import select

from bot.store.db import session_scope
from bot.store.models import Server
from tests.bot.slack.conftest import SlackHarness
from tests.bot.test_spotrate import LLM, add_game


def server_id(harness: SlackHarness, platform: str, external_id: str) -> int:
    assert harness.engine is not None
    with session_scope(harness.engine) as s:
        row = s.exec(
            select(Server).where(Server.platform == platform, Server.external_id == external_id)
        ).first()
        if row is None:
            row = Server(platform=platform, external_id=external_id)
            s.add(row)
            s.flush()
        assert row.id is not None
        return row.id


async def test_spotrate_is_for_admins_and_shows_this_workspace(harness: SlackHarness) -> None:
    host, bob = harness.people(2)
    assert harness.engine is not None
    here = server_id(harness, "slack", harness.fake.team_id)
    elsewhere = server_id(harness, "discord", "555")
    assert "No finished game with an AI player" in await harness.slash(host, "spotrate")
    add_game(harness.engine, here, "s1", players=5, agents={4: LLM}, guesses={0: True, 1: False})
    add_game(harness.engine, here, "s2", players=6, agents={5: LLM}, guesses={2: True}, k=1)
    add_game(harness.engine, elsewhere, "d1", players=5, agents={4: LLM}, guesses={0: False}, k=2)
    assert "Only workspace admins" in await harness.slash(bob, "spotrate")
    reply = await harness.slash(host, "spotrate")
    assert "Overall: 2 of 3 answers named an AI: 67%" in reply, reply
    assert "2 games, 1 with fewer than 2 answers" in reply
    assert "llm / model-x / wry" in reply
    assert "spotrate" in await harness.slash(host, "help")
