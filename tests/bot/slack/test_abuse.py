"""Unauthenticated requests to the Slack endpoints cannot fill the database or the log
(issue 21): ``/slack/install`` issues states at a bounded rate per client address, expired
states are deleted and the store is bounded; a request with a bad signature is logged as one
WARNING line without its body, also when the app is built without our logging set-up."""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime, timedelta

import aiohttp
import pytest
import sqlalchemy as sa

from bot.limits import LOBBY_IDLE_SECONDS
from bot.slack.oauth import INSTALL_BURST, StatesFull, StateStore
from bot.store.models import SLACK_OAUTH_STATES
from tests.bot.idle import idle_since
from tests.bot.slack.conftest import SlackHarness
from tests.bot.slack.test_oauth import World, world  # noqa: F401  (the fixture)

MARK = "SECRET-BOOTH-TEXT-"


def _states(world: World) -> int:  # noqa: F811
    return len(world.rows(SLACK_OAUTH_STATES))


async def test_install_states_are_issued_at_a_bounded_rate(world: World) -> None:  # noqa: F811
    codes: list[int] = []
    async with aiohttp.ClientSession() as browser:
        for _ in range(200):
            async with browser.get(f"{world.url}/slack/install", allow_redirects=False) as r:
                codes.append(r.status)
    assert codes.count(302) == INSTALL_BURST
    assert codes.count(429) == 200 - INSTALL_BURST
    assert _states(world) == INSTALL_BURST
    # and a real install still works for someone else (another address is not held up)
    a, _ = await world.workspace("acme")
    gate_free = aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=("127.0.0.2", 0)))
    async with gate_free as browser:
        consent, cookie = await world.start_install(browser)
        status, page = await world.finish_install(browser, world.slack.approve(consent, a), cookie)
    assert status == 200, page


async def test_install_limit_behind_a_reverse_proxy_is_per_client(
    world: World,  # noqa: F811
) -> None:
    """The documented set-up runs the app behind an https proxy (here: on this machine, so
    trusted without configuration): every request then comes from the proxy's address. The
    limit counts the client the proxy saw (the right-most X-Forwarded-For, which the proxy
    appends), so one client spending its installs, or writing X-Forwarded-For itself, does
    not shut anyone else out, and gains nothing."""

    async def through_proxy(browser: aiohttp.ClientSession, client: str, sent: str = "") -> int:
        forwarded = f"{sent}, {client}" if sent else client
        async with browser.get(
            f"{world.url}/slack/install",
            headers={"X-Forwarded-For": forwarded},
            allow_redirects=False,
        ) as r:
            return r.status

    async with aiohttp.ClientSession() as browser:
        # the attacker, with an X-Forwarded-For of its own, new every time
        codes = [
            await through_proxy(browser, "203.0.113.9", sent=f"198.51.100.{i}") for i in range(20)
        ]
        assert codes.count(302) == INSTALL_BURST and codes.count(429) == 20 - INSTALL_BURST
        # someone else behind the same proxy still gets their install started
        assert await through_proxy(browser, "192.0.2.44") == 302
        # an IPv6 client is one client across its /64
        v6 = [await through_proxy(browser, f"2001:db8:1:2::{i:x}") for i in range(1, 21)]
        assert v6.count(302) == INSTALL_BURST
    assert _states(world) == 2 * INSTALL_BURST + 1


def test_client_key_trusts_forwarded_for_only_from_a_trusted_proxy() -> None:
    from bot.limits import LOCAL_PROXIES, client_key, proxy_networks

    local = proxy_networks(LOCAL_PROXIES)
    ours = local + proxy_networks("10.0.0.0/8")
    # straight from the internet: whatever it wrote in X-Forwarded-For is ignored
    assert client_key("203.0.113.9", ["1.2.3.4"], ours) == "203.0.113.9"
    # through two proxies of ours: the address the outer one saw
    assert client_key("127.0.0.1", ["6.6.6.6, 203.0.113.9, 10.1.2.3"], ours) == "203.0.113.9"
    # several headers count as one list; an IPv4-mapped peer is its IPv4 address
    assert client_key("::ffff:127.0.0.1", ["6.6.6.6", "203.0.113.9"], local) == "203.0.113.9"
    # a proxy we do not know is a client like any other
    assert client_key("10.1.2.3", ["203.0.113.9"], local) == "10.1.2.3"
    assert client_key("2001:db8::1", [], local) == client_key("2001:db8::ffff", [], local)
    assert client_key("127.0.0.1", [], local) == "127.0.0.1"


async def test_expired_states_are_deleted_and_the_store_is_bounded(
    world: World,  # noqa: F811
) -> None:
    store = StateStore(world.service.engine, max_states=3)
    past = datetime.now(UTC).replace(tzinfo=None) - timedelta(seconds=5)
    with world.service.engine.begin() as conn:
        conn.execute(
            sa.insert(SLACK_OAUTH_STATES),
            [{"state": f"old-{i}", "expire_at": past} for i in range(50)],
        )
    assert _states(world) == 50
    await store.async_issue()
    assert _states(world) == 1  # the expired ones went
    await store.async_issue()
    await store.async_issue()
    with pytest.raises(StatesFull):
        await store.async_issue()
    assert _states(world) == 3


def _no_body_logged(records: list[logging.LogRecord]) -> None:
    assert not [r for r in records if MARK in r.getMessage()]
    warned = [r for r in records if "bad or stale Slack signature" in r.getMessage()]
    assert warned and all(r.levelno == logging.WARNING for r in warned)
    assert len(warned) == 1  # a burst of refusals is one line


async def test_a_badly_signed_request_is_one_warning_without_its_body(
    world: World,  # noqa: F811
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    body = MARK + "x" * 200_000
    async with aiohttp.ClientSession() as session:
        for _ in range(3):
            async with session.post(
                f"{world.url}/slack/events",
                data=body,
                headers={
                    "Content-Type": "application/x-www-form-urlencoded",
                    "X-Slack-Request-Timestamp": "1",
                    "X-Slack-Signature": "v0=00",
                },
            ) as r:
                assert r.status == 401
    _no_body_logged(caplog.records)


async def test_socketless_app_without_oauth_logs_no_body_either(
    harness: SlackHarness, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    users = harness.people(2)
    result = await harness.fake.message_event(
        user=users[0], channel=harness.fake.dm(users[0]), text=MARK + "hello", forge=True
    )
    assert result.status == 401
    _no_body_logged(caplog.records)


async def test_consent_withdrawal_runs_in_the_background_with_a_cooldown(
    harness: SlackHarness,
) -> None:
    fake = harness.fake
    users = harness.people(2)
    harness.consent_all(users)
    bob = users[1]
    first = await harness.slash(bob, "consent withdraw")
    assert "withdrawn" in first
    await fake.wait_until(
        lambda: any("Your withdrawal is done" in t for t in harness.dm_texts(bob)),
        within=120,  # (a worker process is started for it, at a low priority)
        what="the note that the withdrawal is done",
    )
    again = await harness.slash(bob, "consent withdraw")
    assert "Please wait" in again and "withdrawn" not in again


async def test_an_idle_lobby_closes_by_itself(harness: SlackHarness) -> None:
    users = harness.people(3)
    harness.consent_all(users)
    game_id = await harness.new_game(users[0], "")
    await harness.join_all(users[1:])
    adapter = harness.adapter
    assert adapter is not None
    assert await adapter.idle_lobbies.sweep() == []  # not idle yet
    later = time.monotonic() + LOBBY_IDLE_SECONDS + 1
    assert await adapter.idle_lobbies.sweep(now=later) == [game_id]
    assert harness.live(game_id).status == "aborted"
    await harness.fake.wait_until(
        lambda: any(
            "nobody started it" in str(c.args.get("text", "")) + str(c.args.get("blocks", ""))
            for c in harness.fake.calls("chat.update")
        ),
        what="the lobby shown closed",
    )


async def test_a_lobby_idle_across_a_restart_closes(harness: SlackHarness) -> None:
    """As on Discord: the idle hour goes on across a restart, not from the bot's start."""
    users = harness.people(2)
    harness.consent_all(users)
    game_id = await harness.new_game(users[0], "")
    await harness.join_all(users[1:])
    assert harness.engine is not None
    idle_since(harness.engine, game_id, 40)
    await harness.shutdown()
    adapter = await harness.boot()
    assert harness.live(game_id).status == "lobby"
    assert await adapter.idle_lobbies.sweep() == []  # 40 minutes idle: not yet
    later = time.monotonic() + 21 * 60
    assert await adapter.idle_lobbies.sweep(now=later) == [game_id]
    assert harness.live(game_id).status == "aborted"
    await harness.fake.wait_until(
        lambda: any(
            "nobody started it" in str(c.args.get("text", "")) + str(c.args.get("blocks", ""))
            for c in harness.fake.calls("chat.update")
        ),
        what="the lobby shown closed",
    )


async def test_a_stranger_flooding_the_bots_messages_gets_one_answer(
    harness: SlackHarness,
) -> None:
    """Someone in no game writing to the bot 30 times is told once that they are in no
    game (`bot.limits.STRAY_NOTE_EVERY`), not answered 30 times: each answer is a post."""
    adapter = harness.adapter
    assert adapter is not None
    stranger = harness.people(1)[0]
    dm = harness.fake.dm(stranger)
    team = stranger.team_id
    for i in range(30):
        await adapter.relay.on_dm(team, stranger.id, dm.id, f"17000000{i:02d}.000100", "hello?")
    await adapter.out.delivery.drain()
    told = [t for t in harness.dm_texts(stranger) if "not in a running game" in t]
    assert len(told) == 1


async def test_a_withdrawal_cut_short_by_a_restart_is_finished_and_told(
    harness: SlackHarness,
) -> None:
    """As on Discord: a withdrawal under way when the app stopped is taken up at the next
    start and the person is told, in a direct message, that it is done."""
    from sqlmodel import Session, select

    from bot.store.models import WithdrawalJob

    bob = harness.people(1)[0]
    harness.consent_all([bob])
    assert harness.engine is not None
    with Session(harness.engine) as session:  # as if the app stopped half-way
        session.merge(
            WithdrawalJob(platform="slack", server_external_id=bob.team_id, user_id=bob.id)
        )
        session.commit()
    await harness.shutdown()
    await harness.boot()
    await harness.fake.wait_until(
        lambda: any("Your withdrawal is done" in t for t in harness.dm_texts(bob)),
        within=120,
        what="the note that the withdrawal is done",
    )
    assert harness.engine is not None
    with Session(harness.engine) as session:
        assert not session.exec(select(WithdrawalJob)).all()
