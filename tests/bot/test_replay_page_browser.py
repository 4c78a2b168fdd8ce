"""The replay page as people use it, in headless Chromium (`tests.bot.test_replay_browser`'s
driver): phase links and anchors, the player filter, the research decisions under the lines
they produced, the reveal and the guesses, night actions and the tally; at a desktop and a
phone's width (no sideways scrolling at 390 px)."""

from __future__ import annotations

import asyncio
import json
import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine
from sqlmodel import select

from bot.players import reveal
from bot.players.replay_page import page_bytes
from bot.service.port import GameService
from bot.store import models as m
from bot.store.db import session_scope
from tests.bot.hostile.harness import run_main_io
from tests.bot.test_privacy import AGENT_LINE, ALICE, BOB, PEOPLE
from tests.bot.test_replay_browser import ARTIFACTS, browser, db_url  # noqa: F401  (fixtures)
from tests.bot.test_reveal_stats import WINDOW, answer_all, finished

DESKTOP, PHONE = (1280, 1000), (390, 844)


def no_sideways_scroll(driver: Any) -> None:
    wide, seen = driver.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert wide <= seen, f"the page is {wide} px wide in a {seen} px window"


def shot(driver: Any, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    assert driver.save_screenshot(str(ARTIFACTS / name))


async def test_a_played_game_s_page_at_desktop_and_phone_widths(
    service: GameService,
    engine: Engine,
    tmp_path: Path,
    browser: Any,  # noqa: F811
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    table = await finished(service)
    for uid in PEOPLE:
        answer_all(engine, table, uid, table.agent_name if uid != BOB else table.name_of[ALICE])
    assert reveal.claim(engine, table.game_id, window=WINDOW) is not None
    # the agent's decision that wrote its line, a moment before the line
    with session_scope(engine) as s:
        line = s.exec(
            select(m.Message).where(
                m.Message.game_id == table.game_id, m.Message.text == AGENT_LINE
            )
        ).one()
        s.add(
            m.LLMCall(
                game_id=table.game_id,
                seat_index=table.agent_seat,
                kind="generator",
                decision=f"say: {AGENT_LINE}",
                output="REASON-QX: sound ordinary, nobody suspects me yet",
                latency_s=0.4,
                t=line.t - timedelta(seconds=1),
            )
        )
    page = tmp_path / "replay.html"
    page.write_bytes(page_bytes(engine, table.game_id, research=True, identities=PEOPLE))
    source = page.read_text(encoding="utf-8")
    # without script the page reads in full: only the filter's box waits for the script
    assert re.findall(r"<[^<>]* hidden[ >]", source) == ["<div id='filter' hidden>"]
    assert "display: none" not in source and "display:none" not in source

    browser.set_window_size(*DESKTOP)
    browser.get(page.as_uri())
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    sections = browser.find_elements(By.CSS_SELECTOR, "section.phase")
    ids = [s.get_attribute("id") for s in sections]
    assert len(ids) >= 2 and len(set(ids)) == len(ids)
    toc = [
        a.get_attribute("href").split("#")[1]
        for a in browser.find_elements(By.CSS_SELECTOR, "#toc a")
    ]
    bands = [
        a.get_attribute("href").split("#")[1]
        for a in browser.find_elements(By.CSS_SELECTOR, "#timeline a.band")
    ]
    assert toc == [*ids, "reveal"] and bands == ids
    # a band's link takes you to its phase
    browser.find_elements(By.CSS_SELECTOR, "#timeline a.band")[-1].click()
    assert browser.execute_script("return location.hash") == f"#{ids[-1]}"
    top = browser.execute_script(
        f"return document.getElementById('{ids[-1]}').getBoundingClientRect().top"
    )
    assert abs(top) < 5
    # the days have no den column: it was silent
    for section in sections:
        if section.get_attribute("data-phase").startswith("Day"):
            assert not section.find_elements(By.CSS_SELECTOR, ".lane.den")
    # the vote: each voter's choice and the tally
    tally = browser.find_element(By.CSS_SELECTOR, ".tally").text
    mafia = next(n for u, n in table.name_of.items() if table.seat_of[u] == table.mafia_seat)
    assert re.search(rf"Tally: {re.escape(mafia)} 5", tally) and f"Chosen: {mafia}." in tally
    # research: the decision under the line it wrote, with its reason
    agent_line = next(
        el
        for el in browser.find_elements(By.CSS_SELECTOR, ".lane.stage .line.agent")
        if AGENT_LINE in el.text
    )
    why = agent_line.find_element(By.XPATH, "following-sibling::*[1]")
    assert "generator" in why.text and "REASON-QX" in why.text
    # the reveal and every person's guess
    assert browser.find_element(By.ID, "reveal-text").text == (
        f"The AI was {table.agent_name}. 4 of 5 of you named them."
    )
    guesses = browser.find_elements(By.CSS_SELECTOR, "#guesses tr")[1:]
    assert len(guesses) == 5
    assert sum("(right)" in g.text for g in guesses) == 4
    assert sum(f"{table.name_of[ALICE]} (wrong)" in g.text for g in guesses) == 1
    # the filter: one player's lines stay, the others' are dimmed
    assert browser.find_element(By.ID, "filter").is_displayed()
    Select(browser.find_element(By.ID, "who")).select_by_visible_text(table.agent_name)
    lines = browser.find_elements(By.CSS_SELECTOR, ".line[data-who]")
    mine = [el for el in lines if el.get_attribute("data-who") == table.agent_name]
    theirs = [el for el in lines if el.get_attribute("data-who") != table.agent_name]
    assert mine and theirs
    assert all("dim" not in el.get_attribute("class") for el in mine)
    assert all("dim" in el.get_attribute("class") for el in theirs)
    assert float(theirs[0].value_of_css_property("opacity")) < 0.5
    Select(browser.find_element(By.ID, "who")).select_by_visible_text("everyone")
    assert not browser.find_elements(By.CSS_SELECTOR, ".dim")
    no_sideways_scroll(browser)
    shot(browser, "replay-desktop.png")

    # a phone: one column, no sideways scrolling; the roles table scrolls in its own box
    browser.set_window_size(*PHONE)
    browser.get(page.as_uri())
    no_sideways_scroll(browser)
    lanes = browser.find_elements(By.CSS_SELECTOR, "section.phase .lane")
    assert len({lane.location["x"] for lane in lanes}) == 1  # stacked, not side by side
    box = browser.find_element(By.CSS_SELECTOR, "#roles").find_element(By.XPATH, "..")
    assert box.value_of_css_property("overflow-x") == "auto"
    assert box.size["width"] <= browser.execute_script(
        "return document.documentElement.clientWidth"
    )
    shot(browser, "replay-phone.png")


async def test_night_actions_and_their_results_on_a_simulated_game(
    db_url: str,  # noqa: F811
    tmp_path: Path,
    browser: Any,  # noqa: F811
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """(The CLI's entry point in this process, `run_main_io`, in a thread: it runs a loop of
    its own; the interpreter's start-up is not what is checked here.)"""
    from selenium.webdriver.common.by import By

    monkeypatch.setenv("MAFIABOT_DATA_DIR", str(tmp_path))
    code, out, err = await asyncio.to_thread(run_main_io, [
        "simulate", "-n", "8", "--seed", "3", "--role", "doctor", "--role", "detective",
        "--speed", "200", "--agent", "baseline", "--db", db_url, "--json",
    ], capsys)  # fmt: skip
    assert code == 0, err
    game_id = json.loads(out.strip().splitlines()[-1])["game_id"]
    page = tmp_path / "sim.html"
    code, _, err = await asyncio.to_thread(
        run_main_io, ["replay", game_id, "--html", str(page), "--db", db_url], capsys
    )
    assert code == 0, err
    browser.set_window_size(*PHONE)
    browser.get(page.as_uri())
    no_sideways_scroll(browser)
    night = " ".join(el.text for el in browser.find_elements(By.CSS_SELECTOR, ".actions"))
    assert re.search(r"\(doctor\) protected \w+\.", night), night
    assert re.search(r"\(detective\) investigated \w+\.", night), night
    assert re.search(r"learned that \w+ is (not )?mafia\.", night), night
    assert "The night's kill:" in night or "Nobody was killed" in night
    assert browser.find_elements(By.CSS_SELECTOR, ".tally")
    shot(browser, "replay-night-phone.png")


def test_night_actions_of_every_role_read_properly() -> None:
    from games.night_log import night_sentence

    names = {1: "Avery", 2: "Kai"}
    said = night_sentence(
        "night_action", {"seat": 1, "role": "escort", "verb": "block", "target_name": "Kai"}, names
    )
    assert said == "Avery (escort) blocked Kai."
    assert night_sentence("block_result", {"seat": 2, "target_name": "Avery"}, names) == (
        "Kai: block result: Avery."
    )
    assert night_sentence("phase_timer", {"seconds": 3}, names) == ""
