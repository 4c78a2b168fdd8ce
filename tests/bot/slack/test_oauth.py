"""Slack for many workspaces: "Add to Slack" through our real HTTP endpoints, each workspace's
game posting with its own (rotated) token, and a workspace that removes the app losing only its
own games, their data kept. On SQLite and PostgreSQL (`db_url`).

Slack is `FakeSlackOAuth` on loopback: ``oauth.v2.access`` (codes and refresh_token grants) in
front of one `FakeSlack` per workspace, every request to the app signed as Slack signs it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import aiohttp
import pytest
import sqlalchemy as sa
from aiohttp import web
from slack_sdk.oauth.installation_store import Installation
from slack_sdk.web.async_client import AsyncWebClient
from sqlmodel import col

from bot.protection.crypto import KEY_FILE, SecretBox, open_value, sealed
from bot.protection.dataset.export import export_games
from bot.seats.agents import make_agent_factory
from bot.service.port import GameService
from bot.service.timers import make_scheduler
from bot.settings import Settings
from bot.slack.app import SlackRunner, SlackSetupError, run_slack
from bot.slack.oauth import SCOPES
from bot.slack.workspaces import InstalledWorkspaces
from bot.store.db import make_engine
from bot.store.migrate import upgrade
from bot.store.models import SLACK_BOTS, SLACK_INSTALLATIONS, SLACK_OAUTH_STATES, Game
from tests.bot.slack.conftest import SlackHarness
from tests.fakes.slack import FakeSlack, FakeSlackOAuth, FakeUser

CLIENT_ID = "1234567890.0987654321"
CLIENT_SECRET = "fake-client-secret-7f3a"
SECRET = "fake-oauth-signing-secret"
LONG = "day=3600 vote=3600 night=3600 night_vote=3600"
COOKIE = "slack-app-oauth-state"


@dataclass
class World:
    slack: FakeSlackOAuth
    runner: SlackRunner
    service: GameService
    db_url: str
    url: str  # our app's origin
    harnesses: dict[str, SlackHarness] = field(default_factory=dict)

    @property
    def workspaces(self) -> InstalledWorkspaces:
        ws = self.runner.adapter.workspaces
        assert isinstance(ws, InstalledWorkspaces)
        return ws

    async def workspace(self, domain: str, **kwargs: Any) -> tuple[FakeSlack, SlackHarness]:
        fake = await self.slack.add_workspace(domain, **kwargs)
        fake.target = f"{self.url}/slack/events"
        h = SlackHarness(fake, self.db_url, SECRET)
        h.engine, h.service, h.adapter = self.service.engine, self.service, self.runner.adapter
        self.harnesses[fake.team_id] = h
        return fake, h

    async def start_install(self, browser: aiohttp.ClientSession) -> tuple[str, str]:
        """GET /slack/install: (Slack's consent URL it sends the browser to, state cookie)."""
        async with browser.get(f"{self.url}/slack/install", allow_redirects=False) as r:
            assert r.status == 302, await r.text()
            cookie = r.cookies[COOKIE].value
            return r.headers["Location"], cookie

    async def finish_install(
        self, browser: aiohttp.ClientSession, back: str, cookie: str | None
    ) -> tuple[int, str]:
        """Slack's redirect to /slack/oauth_redirect, as the browser follows it."""
        headers = {"Cookie": f"{COOKIE}={cookie}"} if cookie is not None else {}
        async with browser.get(back, headers=headers, allow_redirects=False) as r:
            return r.status, await r.text()

    async def install(self, fake: FakeSlack) -> None:
        async with aiohttp.ClientSession() as browser:
            consent, cookie = await self.start_install(browser)
            status, page = await self.finish_install(
                browser, self.slack.approve(consent, fake), cookie
            )
        assert status == 200, page

    def rows(self, table: sa.Table, team: str | None = None) -> list[Any]:
        """The rows of ``table``, tokens as Slack issued them (stored encrypted under the key
        the runner made in its data folder: `bot.protection.crypto.key_file_box`)."""
        query = sa.select(table)
        if team is not None:
            query = query.where(table.c.team_id == team)
        with self.service.engine.connect() as conn:
            found = [dict(r) for r in conn.execute(query).mappings()]
        key = self.runner.settings.data_dir / KEY_FILE
        box = SecretBox([key.read_text().strip()]) if key.exists() else None
        return [
            {k: open_value(box, v) if isinstance(v, str) and sealed(v) else v for k, v in r.items()}
            for r in found
        ]

    def status(self, game_id: str) -> tuple[str, str | None]:
        with self.service.engine.connect() as conn:
            row = conn.execute(
                sa.select(col(Game.status), col(Game.end_reason)).where(col(Game.id) == game_id)
            ).one()
        return str(row[0]), row[1]


def _bound_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


@pytest.fixture
async def world(db_url: str, tmp_path: Path) -> AsyncIterator[World]:
    upgrade(db_url)
    engine = make_engine(db_url)
    scheduler = make_scheduler()
    scheduler.start()
    service = GameService(engine, scheduler, make_agent_factory())
    sock = _bound_socket()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    async with FakeSlackOAuth(
        client_id=CLIENT_ID, client_secret=CLIENT_SECRET, signing_secret=SECRET
    ) as slack:
        settings = Settings(
            _env_file=None,
            data_dir=tmp_path,
            slack_client_id=CLIENT_ID,
            slack_client_secret=CLIENT_SECRET,
            slack_signing_secret=SECRET,
            slack_redirect_uri=f"{url}/slack/oauth_redirect",
            slack_api_url=slack.base_url,
            slack_bot_token=None,
            slack_app_token=None,
        )
        runner = SlackRunner(settings, service, allow_test_options=True)
        await runner.prepare()
        site_runner = web.AppRunner(runner.web_app(), access_log=None, shutdown_timeout=0.5)
        await site_runner.setup()
        await web.SockSite(site_runner, sock).start()
        try:
            yield World(slack, runner, service, db_url, url)
        finally:
            await runner.close()
            await site_runner.cleanup()
            await service.close()
            scheduler.shutdown(wait=False)
            engine.dispose()


async def _game(h: SlackHarness, n: int = 4) -> tuple[str, list[FakeUser]]:
    users = h.people(n)
    return await h.running_game_of(users, LONG)


async def _say(h: SlackHarness, user: FakeUser, text: str, **kwargs: Any) -> Any:
    result = await h.fake.message_event(user=user, channel=h.fake.dm(user), text=text, **kwargs)
    assert result.status == 200, result
    return result


def _persona_texts(h: SlackHarness) -> list[str]:
    return [text for _name, text in h.persona_lines()]


# --- installing -------------------------------------------------------------------------------


async def test_two_workspaces_installed_each_game_posts_with_its_own_token(world: World) -> None:
    a, ha = await world.workspace("acme")
    b, hb = await world.workspace("bravo")
    await world.install(a)
    await world.install(b)
    installs = {row["team_id"]: row for row in world.rows(SLACK_INSTALLATIONS)}
    assert set(installs) == {a.team_id, b.team_id}
    assert installs[a.team_id]["bot_token"] in world.slack.tokens(a)
    assert installs[b.team_id]["bot_token"] in world.slack.tokens(b)
    assert installs[a.team_id]["bot_refresh_token"] and installs[a.team_id]["bot_token_expires_at"]
    assert set(installs[a.team_id]["bot_scopes"].split(",")) >= {"chat:write", "commands"}

    game_a, users_a = await _game(ha)
    game_b, users_b = await _game(hb)
    assert world.service.games[game_a].status == world.service.games[game_b].status == "running"
    await _say(ha, users_a[1], "Morning from acme")
    await _say(hb, users_b[1], "Morning from bravo")
    await ha.wait_stage(lambda: "Morning from acme" in _persona_texts(ha), what="acme line")
    await hb.wait_stage(lambda: "Morning from bravo" in _persona_texts(hb), what="bravo line")
    await world.runner.adapter.drain()

    for fake in (a, b):
        posts = fake.calls("chat.postMessage")
        assert posts, fake.team_id
        # every call in a workspace carried a token Slack issued to that workspace's install
        # (not the other workspace's, nor any other token), and none was refused
        issued = set(world.slack.tokens(fake))
        assert {c.token for c in fake.calls()} <= issued
        assert not [c for c in fake.calls() if c.response.get("ok") is False]
    assert "Morning from bravo" not in _persona_texts(ha)
    assert "Morning from acme" not in _persona_texts(hb)
    assert world.slack.tokens(a)[0] != world.slack.tokens(b)[0]
    assert {g.grant_type for g in world.slack.grants} == {"authorization_code"}


async def test_a_workspace_of_an_enterprise_grid_org_installs_plays_and_leaves(
    world: World,
) -> None:
    """A workspace of an Enterprise Grid organisation: its installation carries the org's id,
    and its requests carry both ids. It is found by its workspace (team ids are unique across
    Slack), so its game plays with its own token, and its removal ends its game."""
    a, ha = await world.workspace("acme", enterprise=True)
    enterprise = a.workspace.enterprise_id
    assert enterprise is not None
    await world.install(a)
    (row,) = world.rows(SLACK_INSTALLATIONS, a.team_id)
    assert row["enterprise_id"] == enterprise and not row["is_enterprise_install"]

    game_a, users_a = await _game(ha)
    assert world.service.games[game_a].status == "running"
    await _say(ha, users_a[1], "Morning from the org")
    await ha.wait_stage(lambda: "Morning from the org" in _persona_texts(ha), what="grid line")
    await world.runner.adapter.drain()
    assert {c.token for c in a.calls()} <= set(world.slack.tokens(a))
    assert not [c for c in a.calls() if c.response.get("ok") is False]

    world.slack.revoke(a)
    assert (await a.event(event={"type": "app_uninstalled"})).status == 200
    await _left(world, game_a, "the app was removed from this Slack workspace")
    await _uninstalled(world, a)
    assert world.rows(SLACK_INSTALLATIONS, a.team_id) == []
    assert world.rows(SLACK_BOTS, a.team_id) == []


async def test_a_bad_missing_or_replayed_state_is_refused(world: World) -> None:
    a, _ = await world.workspace("acme")
    async with aiohttp.ClientSession() as browser:
        # no state cookie (another browser finishing the install): refused, nothing saved
        consent, cookie = await world.start_install(browser)
        status, _ = await world.finish_install(browser, world.slack.approve(consent, a), None)
        assert status == 400
        # a cookie for another state
        consent, cookie = await world.start_install(browser)
        back = world.slack.approve(consent, a)
        other_consent, other_cookie = await world.start_install(browser)
        status, _ = await world.finish_install(browser, back, other_cookie)
        assert status == 400
        # a state we never issued, with a matching cookie
        forged = back.replace(f"state={cookie}", "state=forged-state")
        assert forged != back
        status, _ = await world.finish_install(browser, forged, "forged-state")
        assert status == 401
        assert world.rows(SLACK_INSTALLATIONS) == []

    # the real one, then the same redirect again (a replay) and twice at once (through a
    # proxy from another client: one address comes back as often as it may start installs)
    async with aiohttp.ClientSession(headers={"X-Forwarded-For": "192.0.2.7"}) as browser:
        status, page = await world.finish_install(browser, back, cookie)
        assert status == 200, page
        status, _ = await world.finish_install(browser, back, cookie)
        assert status == 401
        back2 = world.slack.approve(other_consent, a)
        both = await asyncio.gather(
            world.finish_install(browser, back2, other_cookie),
            world.finish_install(browser, back2, other_cookie),
        )
        assert sorted(s for s, _ in both) == [200, 401]
    assert len(world.rows(SLACK_INSTALLATIONS, a.team_id)) >= 1
    assert world.rows(SLACK_OAUTH_STATES) == [] or all(
        r["state"] not in (cookie, other_cookie) for r in world.rows(SLACK_OAUTH_STATES)
    )


async def test_unsigned_or_badly_signed_requests_are_refused(world: World) -> None:
    a, _ = await world.workspace("acme")
    await world.install(a)
    user = a.add_user("mallory")
    bad = await a.slash(user=user, channel=a.add_channel("x", members=[user]), forge=True)
    assert bad.status == 401
    # a workspace that never installed the app gets no game (and no token is used)
    c, _ = await world.workspace("charlie")
    stranger = c.add_user("stranger")
    result = await c.slash(user=stranger, channel=c.add_channel("y", members=[stranger]))
    assert result.status in (200, 401)
    assert c.calls() == []
    with world.service.engine.connect() as conn:
        assert conn.execute(sa.select(sa.func.count()).select_from(Game)).scalar() == 0


# --- token rotation -----------------------------------------------------------------------------


async def test_an_expired_token_is_refreshed_once_under_concurrent_use(world: World) -> None:
    a, h = await world.workspace("acme")
    world.slack.token_seconds = 3600  # the install's token expires within the refresh window
    await world.install(a)
    world.slack.token_seconds = 43_200
    first = world.slack.tokens(a)[0]
    world.slack.expire(a)  # ... and now it has expired
    installed = len(a.calls())  # (the install itself checked the token with auth.test)

    game_id, _ = await _game(h, 4)  # many calls at once: clicks, posts, DMs
    both = await asyncio.gather(
        world.workspaces.client(a.team_id), world.workspaces.client(a.team_id)
    )
    assert both[0] is both[1]
    refreshes = world.slack.refreshes(a)
    assert [g.ok for g in refreshes] == [True], refreshes  # once, and never refused
    newest = world.slack.tokens(a)[-1]
    assert newest != first and both[0].token == newest
    assert first not in {c.token for c in a.calls()[installed:]}  # never used expired
    assert not world.slack.refused
    stored = world.rows(SLACK_INSTALLATIONS, a.team_id)
    assert [r["bot_token"] for r in stored] == [newest]
    assert game_id in world.service.games


async def test_two_concurrent_first_calls_refresh_once(world: World) -> None:
    a, _ = await world.workspace("acme")
    world.slack.token_seconds = 3600
    await world.install(a)
    world.slack.token_seconds = 43_200
    world.slack.expire(a)
    store, reads = world.workspaces.store, []
    find = store.async_find_team

    async def counted(team: str) -> Installation | None:
        reads.append(team)
        return await find(team)

    store.async_find_team = counted  # type: ignore[method-assign, assignment]
    clients = await asyncio.gather(*(world.workspaces.client(a.team_id) for _ in range(5)))
    assert len({id(c) for c in clients}) == 1
    assert [g.ok for g in world.slack.refreshes(a)] == [True]
    # the callers that waited for the lock took what the first one read and refreshed
    assert reads == [a.team_id]
    assert (await clients[0].auth_test())["team_id"] == a.team_id


# --- leaving ------------------------------------------------------------------------------------


@dataclass
class Two:
    """Two installed workspaces, a game running in each; a line said in a's."""

    a: FakeSlack
    ha: SlackHarness
    game_a: str
    users_a: list[FakeUser]
    b: FakeSlack
    hb: SlackHarness
    game_b: str
    users_b: list[FakeUser]


async def _two_games(world: World) -> Two:
    a, ha = await world.workspace("acme")
    b, hb = await world.workspace("bravo")
    await world.install(a)
    await world.install(b)
    game_a, users_a = await _game(ha)
    game_b, users_b = await _game(hb)
    await _say(ha, users_a[1], "A line before the end")
    await ha.wait_stage(lambda: "A line before the end" in _persona_texts(ha), what="line")
    return Two(a, ha, game_a, users_a, b, hb, game_b, users_b)


async def _left(world: World, game_id: str, reason: str) -> None:
    await world.harnesses[next(iter(world.harnesses))].fake.wait_until(
        lambda: world.status(game_id)[0] == "aborted", within=10, what="game aborted"
    )
    assert world.status(game_id) == ("aborted", reason)


async def _uninstalled(world: World, fake: FakeSlack) -> None:
    """Wait for the workspace's installation and bot rows to be deleted: that happens after its
    games are stopped, so a game seen aborted does not mean the rows are gone yet."""
    await fake.wait_until(
        lambda: (
            not world.rows(SLACK_INSTALLATIONS, fake.team_id)
            and not world.rows(SLACK_BOTS, fake.team_id)
        ),
        within=10,
        what="installation deleted",
    )


def _exported(world: World, game_id: str, out: Path) -> None:
    """What `mafiabot export --all` writes has the game (and no game still running)."""
    report = export_games(world.service.engine, "all", out, formats=["jsonl"])
    assert [g.game_id for g in report.exported] == [game_id], report.skipped
    assert (out / "jsonl" / f"{game_id}.jsonl").read_text()


@pytest.mark.parametrize("how", ["app_uninstalled", "tokens_revoked"])
async def test_leaving_one_workspace_stops_only_its_games(
    world: World, how: str, tmp_path: Path
) -> None:
    two = await _two_games(world)
    a, ha, game_a, users_a = two.a, two.ha, two.game_a, two.users_a
    b, hb, game_b, users_b = two.b, two.hb, two.game_b, two.users_b
    # a lobby still open in the leaving workspace ends too
    other = ha.fake.add_channel("mafia-2", members=ha.users)
    lobby_reply = await ha.slash(ha.users[0], "new", channel=other)
    lobby_a = lobby_reply.split("`")[1]
    b_calls = len(b.calls())

    world.slack.revoke(a)  # Slack has already cut the tokens when it tells the app
    event: dict[str, Any] = {"type": how}
    if how == "tokens_revoked":
        event["tokens"] = {"oauth": [], "bot": [a.bot.id]}
    for _ in range(2):  # Slack may deliver it twice
        result = await a.event(event=event, event_id="Ev-leave")
        assert result.status == 200
    reason = (
        "the app was removed from this Slack workspace"
        if how == "app_uninstalled"
        else "the app's access to this Slack workspace was revoked"
    )
    await _left(world, game_a, reason)
    await _left(world, lobby_a, reason)
    await _uninstalled(world, a)
    assert world.rows(SLACK_INSTALLATIONS, a.team_id) == []
    assert world.rows(SLACK_BOTS, a.team_id) == []
    assert world.status(game_b)[0] == "running"
    assert len(world.rows(SLACK_INSTALLATIONS, b.team_id)) == 1

    # workspace b plays on, with its own token
    await _say(hb, users_b[2], "Still here in bravo")
    await hb.wait_stage(lambda: "Still here in bravo" in _persona_texts(hb), what="b line")
    assert len(b.calls()) > b_calls
    # a's later requests find no installation: nothing is sent there
    await world.runner.adapter.drain()
    a_calls = len(a.calls())
    await _say(ha, users_a[1], "Anyone?")
    await world.runner.adapter.drain()
    assert len(a.calls()) == a_calls
    _exported(world, game_a, tmp_path / "export")


async def test_user_token_revocation_leaves_the_workspace_alone(world: World) -> None:
    a, ha = await world.workspace("acme")
    await world.install(a)
    game_a, users_a = await _game(ha)
    event = {"type": "tokens_revoked", "tokens": {"oauth": [users_a[0].id], "bot": []}}
    assert (await a.event(event=event)).status == 200
    await _say(ha, users_a[1], "Bot still fine")
    await ha.wait_stage(lambda: "Bot still fine" in _persona_texts(ha), what="line")
    assert world.status(game_a)[0] == "running"
    assert len(world.rows(SLACK_INSTALLATIONS, a.team_id)) == 1


async def test_uninstall_while_a_line_is_relayed(world: World, tmp_path: Path) -> None:
    two = await _two_games(world)
    a, game_a = two.a, two.game_a
    world.slack.revoke(a)
    _, leave = await asyncio.gather(
        _say(two.ha, two.users_a[2], "Last words in the same millisecond"),
        a.event(event={"type": "app_uninstalled"}),
    )
    assert leave.status == 200
    await _left(world, game_a, "the app was removed from this Slack workspace")
    await world.runner.adapter.drain()
    history = await world.service.history(game_a)
    said = [e for e in history if "Last words" in str(e)]
    assert len(said) <= 1  # in before the end, or refused: never twice, never after
    assert world.status(two.game_b)[0] == "running"
    _exported(world, game_a, tmp_path / "export")


async def test_the_same_line_event_delivered_twice_is_relayed_once(world: World) -> None:
    a, ha = await world.workspace("acme")
    await world.install(a)
    _, users_a = await _game(ha)
    dm = a.dm(users_a[1])
    first = await a.message_event(user=users_a[1], channel=dm, text="Only once")
    assert first.status == 200
    delivery, _ = a.deliveries[-1]
    delivery.headers = {"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_timeout"}
    again = await a.send(None, delivery)  # the same event, same id: Slack's redelivery
    assert again.status == 200
    await ha.wait_stage(lambda: "Only once" in _persona_texts(ha), what="line")
    await world.runner.adapter.drain()
    assert _persona_texts(ha).count("Only once") == 1


def test_a_state_is_consumed_once_even_by_racing_redirects(engine: sa.Engine) -> None:
    """Many redirects carrying one state at the same moment: exactly one passes."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    from bot.slack.oauth import StateStore

    store = StateStore(engine)
    for _ in range(5):
        state = store.sync.issue()
        start = threading.Barrier(8)

        def consume(state: str = state, start: threading.Barrier = start) -> bool:
            start.wait()
            return store._consume(state)

        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(lambda _: consume(), range(8)))
        assert results.count(True) == 1, results
    assert store._consume("never-issued") is False


async def test_the_env_token_app_removed_from_its_workspace_ends_its_games(
    harness: SlackHarness, tmp_path: Path
) -> None:
    """Without Add to Slack (the token in .env) uninstalling ends the games the same way."""
    game_id = await harness.running_game()
    result = await harness.fake.event(event={"type": "app_uninstalled"})
    assert result.status == 200
    assert harness.service is not None
    await harness.service.wait_finished(game_id)
    assert harness.live(game_id).status == "aborted"
    report = export_games(harness.service.engine, [game_id], tmp_path / "x", formats=["jsonl"])
    assert [g.game_id for g in report.exported] == [game_id]


async def test_no_token_reaches_the_log_even_at_debug(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    a, h = await world.workspace("acme")
    world.slack.token_seconds = 3600
    await world.install(a)
    world.slack.token_seconds = 43_200
    world.slack.expire(a)
    await _game(h, 4)
    assert len(world.slack.refreshes(a)) == 1
    secrets = [*world.slack.tokens(a), CLIENT_SECRET]
    secrets += [r["bot_refresh_token"] for r in world.rows(SLACK_INSTALLATIONS)]
    assert caplog.records
    leaked = [s for s in secrets if s in caplog.text]
    assert leaked == []


# --- settings and the real server --------------------------------------------------------------


def _oauth_settings(db_url: str, **more: Any) -> Settings:
    return Settings(
        _env_file=None,
        database_url=db_url,
        slack_client_id=CLIENT_ID,
        slack_signing_secret=SECRET,
        **more,
    )


async def test_add_to_slack_settings_are_checked_before_anything_starts(db_url: str) -> None:
    with pytest.raises(SlackSetupError, match="MAFIABOT_SLACK_CLIENT_SECRET"):
        await run_slack(_oauth_settings(db_url), http_port=0)
    with pytest.raises(SlackSetupError, match="--http"):
        await run_slack(_oauth_settings(db_url, slack_client_secret=CLIENT_SECRET))


async def test_run_slack_serves_the_install_link(db_url: str) -> None:
    upgrade(db_url)
    sock = _bound_socket()
    port = int(sock.getsockname()[1])
    sock.close()
    settings = _oauth_settings(
        db_url, slack_client_secret=CLIENT_SECRET, slack_api_url="http://127.0.0.1:9/api/"
    )
    task = asyncio.create_task(run_slack(settings, http_port=port, host="127.0.0.1"))
    try:
        async with aiohttp.ClientSession() as browser:
            for _ in range(200):
                try:
                    async with browser.get(
                        f"http://127.0.0.1:{port}/slack/install", allow_redirects=False
                    ) as r:
                        status, location = r.status, r.headers.get("Location", "")
                        break
                except aiohttp.ClientConnectionError:
                    assert not task.done(), task
                    await asyncio.sleep(0.05)
            else:
                raise AssertionError("the server never came up")
        assert status == 302
        assert location.startswith("http://127.0.0.1:9/oauth/v2/authorize?")
        query = parse_qs(urlparse(location).query)
        assert query["client_id"] == [CLIENT_ID]
        assert query["scope"] == [",".join(SCOPES)]
        assert query["state"][0]
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


async def test_a_token_refreshed_by_another_process_is_picked_up(world: World) -> None:
    """Two processes share the database: the other one refreshed the token, then the one this
    process still holds expired. The refused post reads the installation again and goes out."""
    a, h = await world.workspace("acme")
    await world.install(a)
    game_id, users = await _game(h, 4)
    ours = world.slack.tokens(a)[-1]
    assert (await world.workspaces.client(a.team_id)).token == ours

    other = InstalledWorkspaces(  # the other process: same database, same Slack app
        world.workspaces.store,
        world.workspaces.rotator,
        lambda token: AsyncWebClient(token=token, base_url=world.slack.base_url),
        rotate_minutes=24 * 60,  # its clock is later: the token is due there
    )
    await other.installation(a.team_id)  # the other process refreshes (and saves) it
    theirs = world.slack.tokens(a)[-1]
    assert theirs != ours and [g.ok for g in world.slack.refreshes(a)] == [True]
    world.slack.expire(a, ours)

    await _say(h, users[1], "Said after the other refresh")
    await h.wait_stage(lambda: "Said after the other refresh" in _persona_texts(h), what="line")
    assert (await world.workspaces.client(a.team_id)).token == theirs
    assert [g.ok for g in world.slack.refreshes(a)] == [True]  # no refresh of our own
    assert world.status(game_id)[0] == "running"


async def test_a_refresh_slack_fails_once_is_tried_again_and_nothing_is_lost(
    world: World,
) -> None:
    a, h = await world.workspace("acme")
    await world.install(a)
    game_id, users = await _game(h, 4)
    world.runner.adapter.out.delivery.backoff = 0.01
    ours = world.slack.tokens(a)[-1]
    # time passes: the stored token is about to expire, and Slack's refresh hiccups once
    with world.service.engine.begin() as conn:
        conn.execute(
            sa.update(SLACK_INSTALLATIONS)
            .where(SLACK_INSTALLATIONS.c.team_id == a.team_id)
            .values(bot_token_expires_at=datetime.now(UTC).replace(tzinfo=None))
        )
    await world.workspaces.stale(a.team_id, ours)  # (as if the cache had aged with it)
    world.slack.expire(a, ours)
    world.slack.failing_refreshes = 1

    await _say(h, users[1], "Through a refresh hiccup")
    await h.wait_stage(lambda: "Through a refresh hiccup" in _persona_texts(h), what="line")
    assert [g.ok for g in world.slack.refreshes(a)] == [True]  # one ok after one refused
    assert [g.error for g in world.slack.grants if not g.ok] == ["internal_error"]
    assert world.status(game_id)[0] == "running"


async def test_a_workspace_uninstalled_through_another_process_ends_its_games_here(
    world: World,
) -> None:
    """The event reached another process, which deleted the installation: this one learns it
    when Slack refuses its token, and ends that workspace's games the same way."""
    two = await _two_games(world)
    with world.service.engine.begin() as conn:
        for table in (SLACK_INSTALLATIONS, SLACK_BOTS):
            conn.execute(sa.delete(table).where(table.c.team_id == two.a.team_id))
    world.slack.revoke(two.a)
    await _say(two.ha, two.users_a[2], "Is anyone there?")
    await _left(world, two.game_a, "the app is no longer installed in this Slack workspace")
    assert world.status(two.game_b)[0] == "running"
    assert len(world.rows(SLACK_INSTALLATIONS, two.b.team_id)) == 1
