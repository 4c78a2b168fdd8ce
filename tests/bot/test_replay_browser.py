"""``mafiabot replay GAME --html FILE``, and the page in a real browser: Debian's Chromium,
headless, driven by Selenium through Debian's chromedriver (nothing is downloaded). The test
asserts on what the browser rendered and keeps a screenshot in ``artifacts/`` (CI keeps it).

Without Chromium the browser test is skipped, unless ``MAFIABOT_REQUIRE_BROWSER`` is set (CI
sets it: there a missing browser is a failure, not a skip).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import Engine

from bot.service.port import GameService
from tests.bot.hostile.harness import run_main
from tests.bot.test_cli import run_cli
from tests.bot.test_privacy import PEOPLE, Table, play_table
from tests.bot.test_privacy import service as service

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = Path(os.environ.get("MAFIABOT_CHROMIUM", "/usr/bin/chromium"))
CHROMEDRIVER = Path(os.environ.get("MAFIABOT_CHROMEDRIVER", "/usr/bin/chromedriver"))
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1400",
)


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    """A SQLite file the CLI (another process) reads too."""
    return f"sqlite:///{tmp_path / 'db' / 'mafiabot.db'}"


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        if os.environ.get("MAFIABOT_REQUIRE_BROWSER"):
            pytest.fail(f"no browser: {CHROMIUM} and {CHROMEDRIVER} are needed")
        pytest.skip("Chromium and chromedriver are not installed")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    monkeypatch.setenv("SE_OFFLINE", "true")  # Selenium Manager must not download anything
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="chromium-", dir=tmp_path)
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


async def finished_game(service: GameService) -> Table:
    table = await play_table(service)
    return table


async def test_replay_html_command(
    service: GameService,
    engine: Engine,
    db_url: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """(The CLI's entry point in this process, `run_main`: four refusals, no interpreter
    started for each; the page itself is written by a real ``mafiabot`` process below.)"""
    table = await play_table(service, finish=False)
    page = tmp_path / "replay.html"
    # a game still running: refused, one line, nothing written
    code, err = run_main(["replay", table.game_id, "--html", str(page), "--db", db_url], capsys)
    assert code == 2 and "only finished games" in err and len(err.strip().splitlines()) == 1
    assert not page.exists()
    code, err = run_main(["replay", "nosuchgame", "--html", str(page), "--db", db_url], capsys)
    assert code == 2 and "No game 'nosuchgame'" in err and not page.exists()
    code, err = run_main(
        ["replay", table.game_id, "--html", str(tmp_path / "no" / "x.html"), "--db", db_url],
        capsys,
    )
    assert code == 2 and "does not exist" in err
    code, err = run_main(["replay", table.game_id, "--research"], capsys)
    assert code == 2 and "only with --html" in err


async def test_replay_page_in_a_real_browser(
    service: GameService,
    engine: Engine,
    db_url: str,
    tmp_path: Path,
    browser: Any,
) -> None:
    from selenium.webdriver.common.by import By

    table = await finished_game(service)
    page = tmp_path / "replay.html"
    names = tmp_path / "names.json"
    names.write_text(__import__("json").dumps(PEOPLE), encoding="utf-8")
    code, out, err = await run_cli(
        "replay", table.game_id, "--html", str(page), "--research",
        "--identities", str(names), "--db", db_url,
    )  # fmt: skip
    assert code == 0, err
    assert f"Wrote the replay of game {table.game_id}" in out

    browser.get(page.as_uri())
    assert browser.title == f"Mafia game {table.game_id}: replay"
    # nothing was fetched from anywhere: the page is self-contained
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
    # the roles, and the AI revealed
    assert browser.find_element(By.ID, "ai").text == table.agent_name
    rows = browser.find_elements(By.CSS_SELECTOR, "#roles tr")[1:]
    assert len(rows) == 6
    cells = {r.find_elements(By.TAG_NAME, "td")[0].text: r for r in rows}
    ai_row = next(r for name, r in cells.items() if name.startswith(table.agent_name))
    assert "AI" in ai_row.text and "an AI agent" in ai_row.text
    assert ai_row.value_of_css_property("background-color") == "rgba(255, 225, 225, 1)"
    assert sum("an AI agent" in r.text for r in rows) == 1
    # the phases as bands on the time line, left to right, each visible
    bands = browser.find_elements(By.CSS_SELECTOR, "#timeline .band")
    sections = browser.find_elements(By.CSS_SELECTOR, "section.phase")
    assert len(bands) == len(sections) >= 2
    lefts = [b.location["x"] for b in bands]
    assert lefts == sorted(lefts)
    assert all(b.size["width"] > 0 and b.size["height"] > 0 for b in bands)
    assert bands[0].value_of_css_property("background-color") == "rgba(246, 215, 122, 1)"
    # the stage lane has the lines, the agent's in its own colour; the vote and who went out
    ticks = browser.find_elements(By.CSS_SELECTOR, "#timeline .lane-stage .tick")
    assert len(ticks) >= 6
    assert browser.find_elements(By.CSS_SELECTOR, "#timeline .lane-stage .tick.agent")
    vote = browser.find_element(By.CSS_SELECTOR, "table.vote-table")
    assert len(vote.find_elements(By.TAG_NAME, "tr")) == 1 + 6
    mafia = next(n for u, n in table.name_of.items() if table.seat_of[u] == table.mafia_seat)
    assert f"{mafia} is out" in browser.find_element(By.CSS_SELECTOR, ".out").text
    decisions = browser.find_elements(By.CSS_SELECTOR, ".lane.decisions .decision")
    assert decisions and table.agent_name in decisions[0].text
    text = browser.find_element(By.TAG_NAME, "body").text
    for uid, known in PEOPLE.items():  # character names only
        assert uid not in text and all(n not in text for n in known)

    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "replay.png"
    assert browser.save_screenshot(str(shot))
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
