"""Forged ``/slack/oauth_redirect`` requests cost no write (issue 33, item 5): the redirect
has a per-client limit like ``/slack/install``'s, a state the store cannot have issued is
refused before any SQL, and one it does not hold with a read only (no DELETE in a write
transaction per request, which raised the games' write latency tenfold in a flood)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import aiohttp
import sqlalchemy as sa

from bot.slack.oauth import INSTALL_BURST, StateStore
from bot.store.models import SLACK_OAUTH_STATES
from tests.bot.slack.test_oauth import COOKIE, World, world  # noqa: F401  (the fixture)

WRITES = ("insert", "update", "delete", "replace")


@contextmanager
def statements(engine: sa.Engine) -> Iterator[list[str]]:
    """Every SQL statement run on ``engine`` meanwhile, lower-cased."""
    seen: list[str] = []

    def record(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        seen.append(statement.strip().lower())

    sa.event.listen(engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", record)


def writes(seen: list[str]) -> list[str]:
    return [s for s in seen if s.startswith(WRITES)]


async def forge(browser: aiohttp.ClientSession, world: World, client: str, state: str) -> int:  # noqa: F811
    """A redirect as an attacker makes it: a state of its own, the cookie to match."""
    async with browser.get(
        f"{world.url}/slack/oauth_redirect?code=forged&state={state}",
        headers={"Cookie": f"{COOKIE}={state}", "X-Forwarded-For": client},
        allow_redirects=False,
    ) as r:
        return r.status


async def test_many_forged_redirects_make_no_writes(world: World) -> None:  # noqa: F811
    engine = world.service.engine
    with statements(engine) as seen:
        async with aiohttp.ClientSession() as browser:
            # one client, 400 redirects: the limit answers all but the first few
            one = [
                await forge(browser, world, "203.0.113.7", str(uuid.uuid4())) for _ in range(400)
            ]
            # many clients (each within its limit), well-formed states nobody issued
            many = [
                await forge(browser, world, f"198.51.100.{i}", str(uuid.uuid4()))
                for i in range(1, 51)
            ]
            # states that cannot be ours
            odd = [
                await forge(browser, world, f"192.0.2.{i}", s)
                for i, s in enumerate(["x", "1" * 36, "' or 1=1 --", "a" * 300], start=1)
            ]
    assert one.count(429) == 400 - INSTALL_BURST
    assert 429 not in many and 429 not in odd
    assert all(code >= 400 for code in one + many + odd)  # none of them installs anything
    assert writes(seen) == []
    reads = [s for s in seen if "slack_oauth_states" in s]
    assert len(reads) <= INSTALL_BURST + len(many)  # at most one read a redirect let through


async def test_a_real_state_is_still_consumed_once(world: World) -> None:  # noqa: F811
    store = StateStore(world.service.engine)
    state = await store.async_issue()
    with statements(world.service.engine) as seen:
        assert await store.async_consume(str(uuid.uuid4())) is False
        assert await store.async_consume("not-a-state") is False
        assert writes(seen) == []
        assert await store.async_consume(state) is True
        assert await store.async_consume(state) is False
    assert len(writes(seen)) == 1  # the one DELETE that consumed it
    with world.service.engine.connect() as conn:
        left = conn.execute(sa.select(SLACK_OAUTH_STATES.c.state)).all()
    assert state not in [r[0] for r in left]
