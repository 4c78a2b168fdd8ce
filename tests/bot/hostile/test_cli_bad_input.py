"""Every subcommand fuzzed with bad values: one line on stderr, exit 2, no traceback, and the
database and data folder exactly as they were (issue 12, items 8, 12, 14 and the rest)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.bot.hostile.harness import (
    assert_one_line_refusal,
    migrated_database,
    run_main,
    snapshot,
)

TOKEN = {"MAFIABOT_DISCORD_TOKEN": "not-a-real-token"}

#: (argv, extra environment, what the one line must mention); OUT is replaced by a folder
CASES: list[tuple[list[str], dict[str, str], str]] = [
    # simulate: numbers out of range (item 8), setups that cannot be played
    (["simulate", "--speed", "nan"], {}, "--speed"),
    (["simulate", "--speed", "inf"], {}, "--speed"),
    (["simulate", "--speed", "1e308"], {}, "--speed"),
    (["simulate", "--speed", "0"], {}, "--speed"),
    (["simulate", "--speed", "-2"], {}, "--speed"),
    (["simulate", "--seed", "1e30"], {}, "--seed"),
    (["simulate", "--seed", "1" + "0" * 30], {}, "--seed"),
    (["simulate", "--seed", "-1"], {}, "--seed"),
    (["simulate", "--day-seconds", "1e-300"], {}, "--day-seconds"),
    (["simulate", "--vote-seconds", "nan"], {}, "--vote-seconds"),
    (["simulate", "--night-seconds", "inf"], {}, "--night-seconds"),
    (["simulate", "--night-vote-seconds", "86401"], {}, "--night-vote-seconds"),
    (["simulate", "--day-seconds", "0.5"], {}, "--day-seconds"),
    (["simulate", "--players", "4"], {}, "at least 5 players"),
    (["simulate", "--players", "many"], {}, "--players"),
    (["simulate", "--mafia", "99"], {}, "mafia"),
    (["simulate", "--role", "wizard"], {}, "wizard"),
    (["simulate", "--agent", "gpt"], {}, "--agent"),
    (["simulate", "--resume", "gnothere"], {}, "no game"),
    (["simulate", "--bogus"], {}, "--bogus"),
    # play
    (["play", "--day-seconds", "1e-300"], {}, "--day-seconds"),
    (["play", "--seed", "1e30"], {}, "--seed"),
    (["play", "--players", "31"], {}, "players"),
    (["play", "--resume", "gnothere"], {}, "no game"),
    # replay
    (["replay", "OUT", "--speed", "nan"], {}, "--speed"),
    (["replay", "OUT", "--speed", "1e308"], {}, "--speed"),
    (["replay", "OUT", "--agent", "gpt"], {}, "--agent"),
    (["replay", "OUT/missing"], {}, "missing"),
    # import, export, report
    (["import-llmafia", "OUT/missing"], {}, "missing"),
    (["export", "--out", "OUT/bundle"], {}, "--all"),
    (["export", "--game", "nope", "--out", "OUT/bundle"], {}, "nope"),
    (["report", "--games", "nope", "--out", "OUT/report"], {}, "nope"),
    (["report"], {}, "--out"),
    # consent: known platforms and real ids only, nothing stored (item 14)
    (["consent", "withdraw", "--platform", "xx", "--server", "", "--user", ""], {}, "platform"),
    (
        ["consent", "withdraw", "--platform", "discord", "--server", "", "--user", "5"],
        {},
        "--server",
    ),
    (["consent", "withdraw", "--platform", "slack", "--server", "T1", "--user", " "], {}, "--user"),
    (
        ["consent", "withdraw", "--platform", "discord", "--server", "1", "--user", "a\x1bb"],
        {},
        "--user",
    ),
    (["consent", "status", "--platform", "irc", "--server", "1", "--user", "1"], {}, "platform"),
    # run
    (["run"], {}, "--discord"),
    (["run", "--discord", "--http", "3000"], {}, "--http"),
    (["run", "--discord"], {"MAFIABOT_DISCORD_TOKEN": ""}, "MAFIABOT_DISCORD_TOKEN"),
    # sharding: a reversed range, a shard that does not exist, no count, no Discord
    (["run", "--discord", "--shards", "5-3", "--shard-count", "8"], TOKEN, "runs backwards"),
    (["run", "--discord", "--shards", "0-8", "--shard-count", "8"], TOKEN, "shard 8"),
    (["run", "--discord", "--shards", "2", "--shard-count", "2"], TOKEN, "0 to 1"),
    (["run", "--discord", "--shards", "0-3"], TOKEN, "shard count"),
    (["run", "--discord", "--shards", "one", "--shard-count", "2"], TOKEN, "--shards"),
    (["run", "--discord", "--shards", "0-", "--shard-count", "2"], TOKEN, "--shards"),
    (["run", "--discord", "--shard-count", "0"], TOKEN, "--shard-count"),
    (["run", "--discord", "--shard-count", "-1"], TOKEN, "--shard-count"),
    (["run", "--slack", "--shards", "0-3", "--shard-count", "8"], {}, "--discord"),
    (["run", "--slack", "--shard-count", "8"], {}, "--discord"),
    (
        ["run", "--discord"],
        {**TOKEN, "MAFIABOT_DISCORD_SHARDS": "0-3", "MAFIABOT_DISCORD_SHARD_COUNT": "2"},
        "MAFIABOT_DISCORD_SHARDS",
    ),
    (["run", "--discord"], {**TOKEN, "MAFIABOT_DISCORD_SHARDS": "1"}, "MAFIABOT_DISCORD_SHARDS"),
    (
        ["run", "--discord", "--shards", "3"],
        {**TOKEN, "MAFIABOT_DISCORD_SHARD_COUNT": "2"},
        "0 to 1",
    ),
    # settings: each bad MAFIABOT_* value names its variable (item 12)
    (
        ["run", "--discord"],
        {**TOKEN, "MAFIABOT_DISCORD_GUILD_IDS": "abc"},
        "MAFIABOT_DISCORD_GUILD_IDS",
    ),
    (
        ["run", "--discord"],
        {**TOKEN, "MAFIABOT_DISCORD_GUILD_IDS": "123,456"},
        "MAFIABOT_DISCORD_GUILD_IDS",
    ),
    (
        ["run", "--discord"],
        {**TOKEN, "MAFIABOT_DISCORD_GUILD_IDS": '[1,"x"]'},
        "MAFIABOT_DISCORD_GUILD_IDS",
    ),
    (
        ["run", "--discord"],
        {**TOKEN, "MAFIABOT_DISCORD_SHARD_COUNT": "0"},
        "MAFIABOT_DISCORD_SHARD_COUNT",
    ),
    (
        ["run", "--discord"],
        {**TOKEN, "MAFIABOT_DISCORD_AGENT_KIND": "gpt"},
        "MAFIABOT_DISCORD_AGENT_KIND",
    ),
    (["simulate"], {"MAFIABOT_LLM_TIMEOUT": "abc"}, "MAFIABOT_LLM_TIMEOUT"),
    (["simulate"], {"MAFIABOT_DAY_SECONDS": "1e-300"}, "MAFIABOT_DAY_SECONDS"),
    (["simulate"], {"MAFIABOT_NIGHT_SECONDS": "nan"}, "MAFIABOT_NIGHT_SECONDS"),
    (["export", "--all", "--out", "OUT/b"], {"MAFIABOT_LOG_LEVEL": "LOUD"}, "MAFIABOT_LOG_LEVEL"),
    (["db", "upgrade"], {"MAFIABOT_LLM": "gpt4"}, "MAFIABOT_LLM"),
    (["db", "upgrade"], {"MAFIABOT_EXPERIENCE_SCOPE": "everyone"}, "MAFIABOT_EXPERIENCE_SCOPE"),
    # not a command at all
    (["nosuchcommand"], {}, "nosuchcommand"),
    (["db", "downgrade"], {}, "downgrade"),
]


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A data folder holding a current database, the only place anything could be written;
    the process works in it (no stray .env is read)."""
    data = tmp_path / "data"
    data.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MAFIABOT_DATA_DIR", str(data))
    monkeypatch.setenv("MAFIABOT_DATABASE_URL", migrated_database(data / "mafiabot.db"))
    monkeypatch.setenv("MAFIABOT_LLM", "")
    return data


@pytest.mark.parametrize(
    ("argv", "env", "fragment"),
    CASES,
    ids=[" ".join([*a, *(f"{k}={v}" for k, v in e.items())])[:70] for a, e, _ in CASES],
)
def test_bad_input_gets_one_line_and_changes_nothing(
    workdir: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    env: dict[str, str],
    fragment: str,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    before = snapshot(workdir.parent)
    argv = [a.replace("OUT", str(workdir.parent)) for a in argv]
    code, err = run_main(argv, capsys)
    assert_one_line_refusal(code, err, fragment)
    assert snapshot(workdir.parent) == before


def test_the_help_states_the_ranges(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from mafiabot.cli import main

    monkeypatch.setenv("COLUMNS", "250")  # one option a line
    monkeypatch.setattr("sys.argv", ["mafiabot", "simulate", "--help"])
    with pytest.raises(SystemExit) as stopped:
        main()
    shown = " ".join(capsys.readouterr().out.split())
    assert stopped.value.code in (0, None)
    for text in ("(game seconds, 1-86400)", "(more than 0, at most 10000)", "(0 to 2^63-1)"):
        assert text in shown, shown
