"""`/mafia` subcommands: config, status, end, consent (and withdrawal), kick, export."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from sqlmodel import Session, select

from bot.protection.consent import has_consent
from bot.store.models import Consent
from tests.bot.slack.conftest import SlackHarness
from tests.fakes.slack import web_api


async def test_config_status_and_end_in_the_lobby(harness: SlackHarness) -> None:
    users = harness.people(3)
    host, bob = users[0], users[1]
    game_id = await harness.new_game(host, "day=90")
    assert "Day 1.5 minutes" in await harness.slash(bob, "config")
    assert "Only the host" in await harness.slash(bob, "config vote=20")
    reply = await harness.slash(host, "config vote=20s roles=doctor agents=2")
    assert "vote 20 seconds" in reply and "doctor" in reply and "AI players: 2" in reply
    game = harness.live(game_id)
    assert game.config.vote_seconds == 20 and game.config.roles == ("doctor",)
    assert "Unknown setting" in await harness.slash(host, "config speed=9")  # test-only
    assert "Unknown role" in await harness.slash(host, "config roles=wizard")
    assert "lobby" in await harness.slash(bob, "status")
    await harness.fake.wait_until(
        lambda: "AI players: 2" in str(harness.stage()[0].blocks), what="lobby refreshed"
    )
    assert "There is already a game here" in await harness.slash(bob, "new")
    assert "Only the host" in await harness.slash(bob, "end")
    assert "cancelled" in await harness.slash(host, "end")
    assert game.status == "aborted"
    await harness.fake.wait_until(
        lambda: "cancelled by the host" in str(harness.stage()[0].blocks), what="lobby closed"
    )
    assert "is open" in await harness.slash(bob, "new")  # the channel is free again


async def test_new_in_a_channel_without_the_app(harness: SlackHarness) -> None:
    users = harness.people(1)
    outside = harness.fake.add_channel("random", members=users, bot_member=False)
    reply = await harness.slash(users[0], "new", channel=outside)
    assert "not a member" in reply and "/invite" in reply
    assert harness.service is not None
    assert [g.status for g in harness.service.games.values()] == ["aborted"]
    assert "is open" in await harness.slash(users[0], "new")  # elsewhere it works
    dm = harness.fake.dm(users[0])
    assert "(not in a DM)" in await harness.slash(users[0], "new", channel=dm)


async def test_consent_command_and_withdrawal(harness: SlackHarness) -> None:
    fake = harness.fake
    users = harness.people(2)
    host, bob = users
    team = fake.team_id
    assert harness.engine is not None
    game_id = await harness.new_game(host, "")
    before = len(fake.responses)
    await fake.slash(user=bob, channel=harness.channel, text="consent")
    [reply] = (await fake.wait_for_responses(before + 1))[before:]
    assert "No answer recorded" in reply.text
    await fake.click(user=bob, action_id="mafia_consent_open", channel=harness.channel)
    [view] = await fake.wait_until(lambda: fake.open_views(bob), what="the notice")
    await fake.submit_view(user=bob, view=view)
    engine = harness.engine
    assert engine is not None
    await fake.wait_until(lambda: has_consent(engine, "slack", team, bob.id))
    await harness.join_all([bob])
    assert harness.live(game_id).seat_of_user(bob.id) is not None

    reply_text = await harness.slash(bob, "consent withdraw")
    assert "withdrawn" in reply_text
    assert harness.live(game_id).seat_of_user(bob.id) is None  # taken out of the lobby
    assert not has_consent(harness.engine, "slack", team, bob.id)
    with Session(harness.engine) as s:
        rows = s.exec(select(Consent).where(Consent.user_id == bob.id)).all()
    assert rows and all(r.withdrawn_at is not None for r in rows)
    # Joining again asks again.
    await fake.click(user=bob, action_id="mafia_join", channel=harness.channel)
    await fake.wait_until(lambda: fake.open_views(bob), what="the notice again")


async def test_kick_hands_the_seat_to_an_agent(harness: SlackHarness) -> None:
    fake = harness.fake
    game_id = await harness.running_game()
    host, bob, carol = harness.users[:3]
    status = await harness.slash(carol, "status")
    assert "Day 1: discussion" in status
    assert f"You are {harness.character(game_id, carol)}" in status
    assert "Only the host" in await harness.slash(carol, f"kick <@{bob.id}|bob>")
    name = harness.character(game_id, bob)
    reply = await harness.slash(host, f"kick <@{bob.id}|bob>")
    assert "now played by an AI" in reply
    seat = next(s for s in harness.live(game_id).seats if s.name == name)
    assert seat.is_agent and seat.user_id is None
    await fake.wait_until(lambda: any("took you out" in t for t in harness.dm_texts(bob)))
    await fake.message_event(user=bob, text="still here?")
    await fake.wait_until(
        lambda: any("not in a running game" in t for t in harness.dm_texts(bob)),
        what="the kicked player is told",
    )
    assert "still here?" not in [t for _, t in harness.persona_lines()]


@pytest.fixture
async def upload_server(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[dict[str, Any]]:
    """files.getUploadURLExternal / upload / files.completeUploadExternal, which the fake
    Slack does not model, patched in for this test only."""
    got: dict[str, Any] = {}

    async def upload(request: web.Request) -> web.Response:
        got["data"] = await request.read()
        return web.Response(text="OK")

    app = web.Application()
    app.router.add_post("/upload/{file}", upload)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    origin = f"http://127.0.0.1:{runner.addresses[0][1]}"

    def get_url(c: web_api.Call) -> dict[str, Any]:
        c.need("files:write")
        got["filename"] = c.args.get("filename")
        return {"upload_url": f"{origin}/upload/F1", "file_id": "F00000001"}

    def complete(c: web_api.Call) -> dict[str, Any]:
        c.need("files:write")
        got["channel"] = c.args.get("channel_id")
        got["comment"] = c.args.get("initial_comment")
        return {"files": [{"id": "F00000001", "title": "export"}]}

    monkeypatch.setitem(web_api.HANDLERS, "files.getUploadURLExternal", ("bot", get_url))
    monkeypatch.setitem(web_api.HANDLERS, "files.completeUploadExternal", ("bot", complete))
    try:
        yield got
    finally:
        await runner.cleanup()


async def test_export_is_for_admins_and_anonymised(
    harness: SlackHarness, upload_server: dict[str, Any]
) -> None:
    fake = harness.fake
    game_id = await harness.running_game()
    host, bob = harness.users[:2]
    await fake.message_event(user=bob, text=f"I think <@{host.id}> is lying")
    await harness.wait_stage(lambda: any("@someone" in t for _, t in harness.persona_lines()))
    assert "no finished game" in await harness.slash(host, "export")
    assert "ended" in await harness.slash(host, "end")
    assert "Only workspace admins" in await harness.slash(bob, "export")
    reply = await harness.slash(host, "export")
    assert "Export of 1 game(s)" in reply, reply
    assert upload_server["channel"] == fake.dm(host).id
    # the file's name says nothing of the workspace it came from
    assert re.fullmatch(r"mafiabot-export-\d{8}-\d{6}\.zip", upload_server["filename"])
    archive = zipfile.ZipFile(io.BytesIO(upload_server["data"]))
    names = archive.namelist()
    assert "manifest.json" in names and any(game_id in n for n in names)
    blob = b"".join(archive.read(n) for n in names).decode("utf-8", "replace")
    for u in harness.users:
        assert u.id not in blob and not re.search(rf"\b{u.name}\b", blob, re.IGNORECASE)
