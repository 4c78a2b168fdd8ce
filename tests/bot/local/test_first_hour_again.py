"""The first hour again (issue 34): what a new user and an operator still tripped over, as they
meet it (real subprocesses, loopback fakes only)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path

import pytest

from tests.bot.test_cli import QUICK
from tests.bot.test_llm_agents import Table
from tests.fakes.llm_servers import FakeOpenAIServer
from tests.fakes.slack import FakeSlack

ROOT = Path(__file__).resolve().parents[3]
#: the model providers' variables (`bot.settings.PROVIDER_ENV`)
PROVIDER_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")


async def run_in(
    cwd: Path, *args: str, env: dict[str, str] | None = None, stdin: bytes | None = None
) -> tuple[int, str, str]:
    """``mafiabot ARGS`` run from ``cwd`` (where its ``.env`` is read), with the provider
    variables and MAFIABOT_LLM taken out of the environment unless ``env`` gives them."""
    base = {k: v for k, v in os.environ.items() if k not in PROVIDER_ENV}
    base.pop("MAFIABOT_LLM", None)
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mafiabot.cli", *args,
        cwd=cwd,
        env={**base, "PYTHONPATH": str(ROOT), "COLUMNS": "200", **(env or {})},
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = await asyncio.wait_for(proc.communicate(stdin), 180)
    except TimeoutError:
        proc.kill()
        await proc.wait()
        raise
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


# --- 2. the model's settings are read from .env ----------------------------------------------


@pytest.mark.slow
async def test_model_settings_in_dotenv_are_used_and_never_shown(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.responder = Table(seed=5)
    key = "sk-from-dotenv-0123456789"
    (tmp_path / ".env").write_text(
        "MAFIABOT_LLM=openai:gpt-4o-mini\n"
        f"OPENAI_BASE_URL={fake_openai.base_url}\n"
        f"OPENAI_API_KEY={key}\n"
        "MAFIABOT_LOG_LEVEL=DEBUG\n",
        encoding="utf-8",
    )
    code, out, err = await run_in(
        tmp_path, "simulate", "--players", "5", "--seed", "4", "--speed", "20", *QUICK,
        "--db", f"sqlite:///{tmp_path / 'g.db'}",
    )  # fmt: skip
    assert code == 0, err[-3000:]
    assert "the LLM agent (openai:gpt-4o-mini)" in out
    assert fake_openai.requests, "the model server named in .env was never asked"
    assert all(r.headers.get("Authorization") == f"Bearer {key}" for r in fake_openai.requests)
    assert key not in out and key not in err
    # after the game the LLM seats learn from it, a line a step (item 8)
    assert "Learning from the game: " in err and " done" in err, err[-2000:]


def test_the_environment_wins_over_dotenv(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.settings import provider_env_from_dotenv

    env = tmp_path / ".env"
    env.write_text(
        "OPENAI_API_KEY=from-file\nANTHROPIC_BASE_URL=http://127.0.0.1:1/\nOTHER=x\n", "utf-8"
    )
    monkeypatch.setenv("OPENAI_API_KEY", "from-env")
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)
    monkeypatch.delenv("OTHER", raising=False)
    assert provider_env_from_dotenv(env) == ["ANTHROPIC_BASE_URL"]
    assert os.environ["OPENAI_API_KEY"] == "from-env"
    assert os.environ["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:1/"
    assert "OTHER" not in os.environ  # only the providers' variables


# --- 9. texts that pointed to what is not there -----------------------------------------------


def _docs_named(text: str) -> list[str]:
    return re.findall(r"docs/[\w-]+\.md", text)


def test_the_missing_token_line_points_to_a_page_that_exists() -> None:
    from bot.discord.startup import check_token
    from bot.settings import SettingsError, load_settings

    with pytest.raises(SettingsError) as refused:
        check_token(load_settings(discord_token=None))
    line = str(refused.value)
    assert "README" not in line and ".env" in line
    assert _docs_named(line) and all((ROOT / d).is_file() for d in _docs_named(line))


def test_env_example_points_to_sections_that_exist() -> None:
    text = (ROOT / ".env.example").read_text("utf-8")
    for page, section in re.findall(r'(docs/[\w-]+\.md|README): "([^"]+)"', text):
        target = ROOT / ("README.md" if page == "README" else page)
        headings = [h for h in target.read_text("utf-8").splitlines() if h.startswith("#")]
        assert any(section in h for h in headings), (page, section)


def test_the_configuration_reference_calls_a_file_a_file() -> None:
    rows = (ROOT / "docs" / "configuration.md").read_text("utf-8").splitlines()
    for row in rows:
        if re.match(r"\| `MAFIABOT_\w+_FILE` \|", row):
            assert row.split("|")[2].strip() == "a file", row


def test_commands_in_the_docs_run_inside_the_project_environment() -> None:
    """``python -c "from cryptography ..."`` fails outside the venv; ``uv run python`` works."""
    for page in (ROOT / "docs").glob("*.md"):
        for line in page.read_text("utf-8").splitlines():
            if re.match(r"\s*python3? -c ", line):
                pytest.fail(f"{page.name}: {line.strip()}")


# --- 5. play --role ROLE: your own role, the rest dealt at random ------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("role", ["mafia", "detective", "doctor", "bystander"])
async def test_play_deals_you_the_role_you_ask_for(role: str, tmp_path: Path) -> None:
    db = f"sqlite:///{tmp_path / 'r.db'}"
    for seed in ("1", "2"):
        code, out, err = await run_in(
            ROOT, "play", "--role", role, "--seed", seed, "--players", "7", "--db", db,
            stdin=b"/quit\n",
        )  # fmt: skip
        assert code == 0, err
        assert f"Your role: {role}." in out, out


def test_your_role_leaves_the_rest_to_the_seed() -> None:
    from bot.local.terminal import deal_with_role
    from games.config import GameConfig
    from games.engine import assign_roles

    config = GameConfig(roles=("detective", "doctor"))
    dealt = set(assign_roles(config, 8, 0))  # the roles this game deals (not every registered one)
    assert dealt == {"mafia", "bystander", "detective", "doctor"}
    for role in sorted(dealt):
        places = set()
        for seed in range(40):
            fixed, place = deal_with_role(config, 8, seed, role)
            assert fixed.deal[place] == role
            assert list(fixed.deal) == assign_roles(config, 8, seed)  # the seed's own deal
            fixed.validate(8)
            places.add(place)
        assert len(places) > 3  # the person's seat is not always the same one


@pytest.mark.parametrize("args", [["play", "--role", "wizard"], ["simulate", "--role", "x"]])
async def test_an_unknown_role_is_one_line(args: list[str], tmp_path: Path) -> None:
    code, _, err = await run_in(ROOT, *args, "--db", f"sqlite:///{tmp_path / 'u.db'}")
    assert code == 2 and err.strip().count("\n") == 0, err
    assert "wizard" in err or "'x'" in err


@pytest.mark.slow
async def test_simulate_still_takes_the_old_role_spelling(tmp_path: Path) -> None:
    code, out, err = await run_in(
        ROOT, "simulate", "--role", "doctor", "--with-role", "detective", "--players", "7",
        "--speed", "1000", "--seed", "3", "--db", f"sqlite:///{tmp_path / 's.db'}", "--json",
    )  # fmt: skip
    assert code == 0, err
    roles = {p["role"] for p in json.loads(out)["players"]}
    assert {"doctor", "detective"} <= roles


# --- 4. run --slack: one line when Slack can't be reached or refuses a token ------------------


async def run_slack(tmp_path: Path, api_url: str, *extra: str, **tokens: str) -> tuple[int, str]:
    env = {
        "MAFIABOT_SLACK_BOT_TOKEN": "xoxb-1-2-3",
        "MAFIABOT_SLACK_APP_TOKEN": "xapp-1-2-3",
        "MAFIABOT_SLACK_SIGNING_SECRET": "s3cret",
        "MAFIABOT_SLACK_API_URL": api_url,
        "MAFIABOT_HTTP_ADDR": "",
        "MAFIABOT_DATA_DIR": str(tmp_path),
        "MAFIABOT_DATABASE_URL": f"sqlite:///{tmp_path / 'd.db'}",
        **tokens,
    }
    code, _, err = await run_in(tmp_path, "run", "--slack", *extra, env=env)
    return code, err


def one_line(err: str, starts: str) -> str:
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.startswith("mafiabot run:")]
    assert len(lines) == 1 and lines[0].startswith(f"mafiabot run: {starts}"), err
    said = [line for line in err.strip().splitlines() if " WARNING " not in line]
    assert len(said) <= 2, err  # that line, and slack-sdk's retry notice
    return lines[0]


@pytest.mark.parametrize("mode", [[], ["--http", "0"]], ids=["socket", "http"])
async def test_unreachable_slack_is_one_line(mode: list[str], tmp_path: Path) -> None:
    code, err = await run_slack(tmp_path, "http://127.0.0.1:9/", *mode)  # (refused)
    assert code == 1, err
    one_line(err, "Can't reach Slack")


async def test_a_refused_bot_token_is_one_line(fake_slack: FakeSlack, tmp_path: Path) -> None:
    code, err = await run_slack(tmp_path, fake_slack.base_url)  # not the fake's token
    assert code == 2, err
    line = one_line(err, "Slack refused MAFIABOT_SLACK_BOT_TOKEN (invalid_auth)")
    assert "xoxb-1-2-3" not in line


async def test_a_refused_app_token_is_one_line(fake_slack: FakeSlack, tmp_path: Path) -> None:
    code, err = await run_slack(
        tmp_path, fake_slack.base_url, MAFIABOT_SLACK_BOT_TOKEN=fake_slack.bot_token
    )
    assert code == 2, err
    one_line(err, "Slack refused MAFIABOT_SLACK_APP_TOKEN (invalid_auth)")


# --- 7. a model server that can't be reached: said once, at start; the baseline plays ----------


@pytest.mark.slow
async def test_an_unreachable_model_is_one_line_at_start(tmp_path: Path) -> None:
    env = {
        "MAFIABOT_LLM": "openai:gpt-4o-mini",
        "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",  # (the discard port: refused)
        "OPENAI_API_KEY": "sk-test",
        "MAFIABOT_DATA_DIR": str(tmp_path / "data"),
    }
    code, out, err = await run_in(
        tmp_path, "play", "--players", "5", "--seed", "1",
        "--db", f"sqlite:///{tmp_path / 'm.db'}", env=env, stdin=b"/quit\n",
    )  # fmt: skip
    screen = out + err
    assert code == 0, screen
    said = [line for line in screen.splitlines() if "can't be reached" in line]
    assert len(said) == 1, screen
    assert "http://127.0.0.1:9/v1" in said[0] and "baseline agent plays" in said[0]
    assert "the offline baseline agent" in out  # the banner says who plays
    assert "WARNING" not in screen and "Traceback" not in screen and "retry" not in screen


# --- 8. long steps say how far they are; Ctrl-C skips the learning step ------------------------


@pytest.mark.slow
async def test_replay_says_each_phase_as_it_goes(tmp_path: Path) -> None:
    from research.paths import llmafia_games_dir

    game = llmafia_games_dir() / "0001"
    if not game.exists():
        pytest.skip("the LLMafia games are not beside the repository")
    code, _, err = await run_in(ROOT, "replay", str(game), "--speed", "200", "--seed", "1")
    assert code == 0, err[-3000:]
    steps = [line for line in err.splitlines() if line.startswith("Replaying: ")]
    assert len(steps) >= 3, err
    assert "phase 1 of" in steps[0] and "s so far" in steps[-1]


class Debriefs:
    """Two end-of-game debriefs, each ending when told (`bot.runtime.Learning`)."""

    def __init__(self) -> None:
        self.go = [asyncio.Event(), asyncio.Event()]
        self.tasks = {asyncio.create_task(self._debrief(g)) for g in self.go}
        self.skipped = False

    @staticmethod
    async def _debrief(go: asyncio.Event) -> None:
        await go.wait()

    def learning_pending(self) -> set[asyncio.Task[None]]:
        return {t for t in self.tasks if not t.done()}

    async def skip_learning(self) -> None:
        self.skipped = True
        for t in self.tasks:
            t.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


async def test_learning_says_a_line_a_step() -> None:
    from bot.runtime import learn_with_progress

    debriefs, said = Debriefs(), list[str]()
    waiting = asyncio.create_task(learn_with_progress(debriefs, said.append))
    for g in debriefs.go:
        await asyncio.sleep(0)
        g.set()
    await asyncio.wait_for(waiting, 10)
    assert said[0].startswith("Learning from the game: 2 debriefs (Ctrl-C skips")
    assert said[-1] == "Learning from the game: 2/2 done"


async def test_ctrl_c_skips_the_learning_and_shutting_down_goes_on() -> None:
    from bot.runtime import learn_with_progress

    debriefs, said = Debriefs(), list[str]()
    closed: list[bool] = []
    begun = asyncio.Event()

    def say(line: str) -> None:
        said.append(line)
        begun.set()

    async def shutting_down() -> str:  # (running_service's finally: learning, then closing)
        await learn_with_progress(debriefs, say)
        closed.append(True)
        return "ended as usual"

    task = asyncio.create_task(shutting_down())
    await asyncio.wait_for(begun.wait(), 10)
    task.cancel()  # Ctrl-C: asyncio.run cancels the command's task
    assert await asyncio.wait_for(task, 10) == "ended as usual"
    assert debriefs.skipped and closed == [True]
    assert said[-1] == "Learning from the game: skipped."
    assert all(t.cancelled() for t in debriefs.tasks)


# --- 10. help texts: no <bool>, no raw ranges, -h, --version, where the token goes -------------


def _help(*args: str) -> str:
    from typer.testing import CliRunner

    from mafiabot.cli import app

    done = CliRunner().invoke(app, [*args], env={"COLUMNS": "100"}, prog_name="mafiabot")
    assert done.exit_code == 0, done.output
    return done.output


@pytest.mark.parametrize(
    "command",
    [[], ["play"], ["simulate"], ["run"], ["replay"], ["report"], ["export"], ["db", "upgrade"]],
)
def test_help_says_types_in_words(command: list[str]) -> None:
    text = _help(*command, "--help")
    assert "<bool>" not in text and "range>" not in text, text
    assert "9223372036854775807" not in text and "<=x<=" not in text, text
    assert _help(*command, "-h") == text


def test_version_and_where_the_token_goes() -> None:
    from importlib.metadata import version

    assert _help("--version").strip() == f"mafiabot {version('mafiabot')}"
    run = " ".join(_help("run", "--help").split())
    assert ".env" in run and "MAFIABOT_DISCORD_TOKEN" in run and "MAFIABOT_SLACK_BOT_TOKEN" in run
