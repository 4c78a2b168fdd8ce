"""Pages on the web (`bot.players.web_pages`, served by `bot.ops.http`): off by default, on at an
unguessable link when the operator set a public address and a moderator turned them on; names
only for those who asked; nothing before the reveal; a withdrawn person's name gone. The board
and a replay are opened by their links in headless Chromium."""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp

from bot.ops.health import Health
from bot.ops.http import OpsServer
from bot.ops.metrics import Metrics
from bot.players import reveal
from bot.players.web_pages import web_command
from bot.protection.privacy import withdraw
from bot.service.port import GameService
from tests.bot.test_privacy import ALICE, BOB, PEOPLE, SERVER, play_table
from tests.bot.test_replay_browser import ARTIFACTS, browser  # noqa: F401  (fixture)
from tests.bot.test_reveal_stats import WINDOW, answer_all, finished

BASE = "https://mafia.example.org"


def web(service: GameService, user: str, arg: str, *, mod: bool = False, base: str = BASE) -> str:
    return web_command(
        service.engine, base, "discord", SERVER, user, arg, moderator=mod,
        display_name=PEOPLE[user][-1],
    )  # fmt: skip


async def test_pages_by_their_links_in_a_browser(
    service: GameService,
    browser: Any,  # noqa: F811
) -> None:
    from selenium.webdriver.common.by import By

    engine = service.engine
    table = await finished(service)
    running = await play_table(service, finish=False)  # a game still going: never shown
    assert "not available" in web(service, ALICE, "", base="")  # no public address: nothing
    assert "pages are off" in web(service, ALICE, "")
    assert "Only moderators" in web(service, ALICE, "on")
    said = web(service, ALICE, "on", mod=True)
    board_url = said.split("The board: ")[1].split(" ")[0]
    token = board_url.split("/p/")[1].strip("/")
    assert len(token) >= 32
    assert "show you as Alice Wonderhouse" in web(service, ALICE, "name")
    mine = web(service, ALICE, "")
    history_url = mine.split("Your games: ")[1].strip()

    async def go(url: str) -> None:  # (the server runs on this loop: the browser waits aside)
        await asyncio.to_thread(browser.get, url)

    server = OpsServer("127.0.0.1:0", Health(), Metrics(), pages=engine)
    await server.start()
    local = f"http://127.0.0.1:{server.port}"
    try:
        async with aiohttp.ClientSession() as http:
            # before the reveal: no game, nobody
            async with http.get(f"{local}/p/{token}/") as r:
                page = await r.text()
                assert (
                    r.status == 200 and "default-src 'none'" in r.headers["Content-Security-Policy"]
                )
            assert table.game_id not in page and "No one on the leaderboard" in page
            async with http.get(f"{local}/p/{token}/r/{table.game_id}") as r:
                assert r.status == 404
            # a history page names no game before its reveal: "Alice played <character>"
            # would tell the board's readers that this character was a person, not the AI
            async with http.get(history_url.replace(BASE, local)) as r:
                page = await r.text()
            assert r.status == 200 and table.game_id not in page
            assert table.name_of[ALICE] not in page and running.game_id not in page
            for uid in PEOPLE:
                answer_all(engine, table, uid, table.agent_name)
            assert reveal.claim(engine, table.game_id, window=WINDOW) is not None
            for wrong in (
                f"/p/{'x' * 32}/",
                f"/p/{token}/r/{running.game_id}",
                f"/p/{token}/h/abc",
            ):
                async with http.get(local + wrong) as r:
                    assert r.status == 404, wrong

            await go(f"{local}/p/{token}/")
            board = browser.find_element(By.ID, "board").text
            assert "Alice Wonderhouse" in board and "a player" in board
            assert PEOPLE[BOB][-1] not in board and BOB not in board  # never asked: anonymous
            assert table.agent_name not in board and "The AI: 1 game" in board
            await go(
                browser.find_element(By.LINK_TEXT, f"Game {table.game_id}").get_attribute("href")
            )
            assert browser.title == f"Mafia game {table.game_id}: replay"
            assert browser.find_element(By.ID, "ai").text == table.agent_name
            text = browser.find_element(By.TAG_NAME, "body").text
            assert "Alice Wonderhouse" not in text and ALICE not in text
            ARTIFACTS.mkdir(exist_ok=True)
            browser.save_screenshot(str(ARTIFACTS / "web-replay.png"))
            await go(history_url.replace(BASE, local))
            assert table.game_id in browser.find_element(By.ID, "history").text
            await go(browser.find_element(By.LINK_TEXT, "Replay").get_attribute("href"))
            assert browser.title == f"Mafia game {table.game_id}: replay"

            # Alice withdraws: her name is gone from the board and the replay, her link dies
            withdraw(engine, "discord", SERVER, ALICE)
            await go(f"{local}/p/{token}/")
            assert "Alice Wonderhouse" not in browser.find_element(By.TAG_NAME, "body").text
            await go(f"{local}/p/{token}/r/{table.game_id}")
            body = browser.find_element(By.TAG_NAME, "body").text
            assert "Alice Wonderhouse" not in body and table.name_of[ALICE] in body
            async with http.get(history_url.replace(BASE, local)) as r:
                assert r.status == 404
            # off: every link dies
            assert "off" in web(service, BOB, "off", mod=True)
            async with http.get(f"{local}/p/{token}/") as r:
                assert r.status == 404
    finally:
        await server.stop()
