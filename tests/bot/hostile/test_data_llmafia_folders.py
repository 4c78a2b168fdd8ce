"""Hostile LLMafia game folders (issue 12, items 4, 10 and 16).

- Item 10: every game is imported, or skipped with its file and the reason while the others
  go on: a config that is a list, not JSON, a player without a name, duplicate names, a
  missing chat file, a file given instead of a folder; a 10 MB line is cut and said so.
- Item 4: character names are file names (``<Name>_vote.txt``): a name that would read or
  write outside the game folder is refused on import, a link out of the folder is not
  followed, and the export never writes outside ``--out``.
- Item 16: account names players typed in the chat (the config's ``real_name`` values and
  real_names.txt) are not in the store nor in any exported file, checked on synthetic games
  and on copies of the real release games given account names.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from rich.console import Console
from sqlalchemy.engine import Engine
from sqlmodel import Session, select
from typer.testing import CliRunner

from bot.protection.dataset.export import export_games
from bot.protection.dataset.llmafia_write import write_game
from bot.protection.dataset.names import UnsafePath
from bot.protection.dataset.stored import store_game_id
from bot.store import models as m
from bot.store.db import make_engine, session_scope
from bot.store.migrate import upgrade
from mafiabot.cli import app
from research.commands import run_import
from research.importer import import_llmafia
from research.llmafia import MAX_LINE_CHARS, read_game
from research.paths import llmafia_games_dir
from tests.research.test_llmafia_synthetic import make_game

REAL = llmafia_games_dir()
real_data = pytest.mark.skipif(not REAL.is_dir(), reason="LLMafia data not present")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[tuple[str, Engine]]:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    upgrade(url)
    engine = make_engine(url)
    yield url, engine
    engine.dispose()


def edit_config(folder: Path, change) -> None:  # type: ignore[no-untyped-def]
    path = folder / "config.json"
    config = json.loads(path.read_text())
    new = change(config)
    path.write_text(json.dumps(config if new is None else new))


def games_in_store(engine: Engine) -> set[str]:
    with Session(engine) as s:
        return set(s.exec(select(m.Game.id)).all())


def stored_text(engine: Engine) -> str:
    with Session(engine) as s:
        rows = s.exec(select(m.Message)).all()
        comments = s.exec(select(m.SurveyResponse)).all()
        games = s.exec(select(m.Game)).all()
    return "\n".join(
        [*(r.text for r in rows), *(c.comments or "" for c in comments)]
        + [json.dumps(g.config) for g in games]
    )


def bundle(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text(encoding="utf-8")
        for p in root.rglob("*")
        if p.is_file()
    }


# --- item 10: one bad game skips itself only --------------------------------------------------


def hostile_folder(root: Path, outside: Path) -> dict[str, str]:
    """A folder of games, one good and the rest each broken one way; returns folder -> what
    its skip reason must say."""
    make_game(root / "0001")  # the good one
    expected: dict[str, str] = {}

    def bad(name: str, reason: str) -> Path:
        expected[name] = reason
        return make_game(root / name)

    edit_config(bad("0002", "config.json: holds a list"), lambda c: c["players"])
    (bad("0003", "config.json: not JSON") / "config.json").write_text("{players: [")
    edit_config(bad("0004", "player 2 has no name"), lambda c: c["players"][1].__delitem__("name"))
    edit_config(
        bad("0005", "the name 'Ann' is used twice"),
        lambda c: c["players"][1].update(name="Ann"),
    )
    (bad("0006", "public_nighttime_chat.txt: missing") / "public_nighttime_chat.txt").unlink()
    (bad("0007", "public_manager_chat.txt: missing") / "public_manager_chat.txt").unlink()
    edit_config(bad("0008", "'players' is not a list"), lambda c: c.update(players="Ann"))
    edit_config(bad("0009", "daytime_minutes"), lambda c: c.update(daytime_minutes="three"))
    # item 4: names that would leave the folder; and a vote file that is a link out of it
    escape = "../" + outside.name.removesuffix("_vote.txt")
    edit_config(
        bad("0010", "starts with '.' or contains '..'"),
        lambda c: c["players"][3].update(name=escape),
    )
    edit_config(bad("0011", "contains '/'"), lambda c: c["players"][3].update(name="a/b"))
    edit_config(bad("0012", "U+0000"), lambda c: c["players"][3].update(name="Dan\x00x"))
    edit_config(bad("0013", "contains '\\\\'"), lambda c: c["players"][3].update(name="a\\x"))
    link = bad("0014", "outside") / "Cat_vote.txt"
    link.unlink()
    link.symlink_to(outside)
    edit_config(bad("0015", "is empty"), lambda c: c["players"][0].update(name=""))
    elsewhere = make_game(outside.parent / "elsewhere" / "0016")  # a game outside the folder
    (root / "0016").symlink_to(elsewhere, target_is_directory=True)
    expected["0016"] = "a link to a folder outside"
    return expected


def test_each_bad_game_is_skipped_with_its_file_and_reason(
    store: tuple[str, Engine], tmp_path: Path
) -> None:
    url, engine = store
    outside = tmp_path / "secret_vote.txt"
    outside.write_text("OUTSIDE-SECRET\n")
    expected = hostile_folder(tmp_path / "games", outside)
    console = Console(record=True, width=400)
    results = run_import(url, tmp_path / "games", console)
    text = console.export_text()
    assert [r.source_id for r in results] == ["0001"]
    assert games_in_store(engine) == {store_game_id("0001")}
    lines = text.splitlines()
    for folder, reason in expected.items():
        skipped = [line for line in lines if line.startswith(f"{folder}: skipped, ")]
        assert len(skipped) == 1, (folder, text)
        assert reason in skipped[0], skipped[0]
        assert str(tmp_path / "games" / folder) in skipped[0]  # names the file
    assert f"1 games imported (0 replaced an earlier import); {len(expected)} skipped." in text
    assert "OUTSIDE-SECRET" not in stored_text(engine)
    assert "Traceback" not in text


def test_a_10_mb_line_is_cut_and_said_so(store: tuple[str, Engine], tmp_path: Path) -> None:
    url, engine = store
    folder = make_game(tmp_path / "g" / "0001")
    chat = folder / "public_daytime_chat.txt"
    huge = "x" * (10 * 1024 * 1024)
    chat.write_text(chat.read_text() + f"[00:00:30] Cat: {huge}\n")
    console = Console(record=True, width=400)
    run_import(url, folder, console)
    text = console.export_text()
    assert f"lines longer than {MAX_LINE_CHARS} characters were cut" in text
    with Session(engine) as s:
        longest = max(len(r.text) for r in s.exec(select(m.Message)).all())
    assert longest <= MAX_LINE_CHARS


@pytest.mark.parametrize("case", ["a file", "only bad games", "missing"])
def test_import_cli_bad_paths_are_one_line(
    store: tuple[str, Engine], tmp_path: Path, case: str
) -> None:
    url, engine = store
    if case == "a file":
        path = make_game(tmp_path / "g") / "config.json"
        why = "is a file"
    elif case == "only bad games":
        path = make_game(tmp_path / "g" / "0001").parent
        (path / "0001" / "public_daytime_chat.txt").unlink()
        why = "every game folder was skipped"
    else:
        path = tmp_path / "nowhere"
        why = "no such folder"
    result = CliRunner().invoke(app, ["import-llmafia", str(path), "--db", url])
    assert result.exit_code == 2, result.output
    err = result.stderr.strip().splitlines()
    assert len(err) == 1 and why in err[0], result.stderr
    assert "Traceback" not in result.output
    assert games_in_store(engine) == set()


# --- item 4: nothing written outside the export folder ------------------------------------------


def test_writer_refuses_names_that_leave_the_folder(tmp_path: Path) -> None:
    game = read_game(make_game(tmp_path / "src"))
    out = tmp_path / "deep" / "out"
    for name in ("../../escaped", "a/b", "..", "x\x00y"):
        bad = type(game)(**{**vars(game), "vote_files": {name: ["Bob"]}})
        with pytest.raises(UnsafePath):
            write_game(bad, out)
    assert (
        not list(tmp_path.glob("escaped*"))
        and not (tmp_path / "deep" / "escaped_vote.txt").exists()
    )


def test_export_of_a_stored_game_with_an_unsafe_name_writes_nothing_outside(
    store: tuple[str, Engine], tmp_path: Path
) -> None:
    """A game imported by an older version, before names were checked."""
    _, engine = store
    import_llmafia(engine, make_game(tmp_path / "src" / "0001"))
    gid = store_game_id("0001")
    with session_scope(engine) as s:
        seat = s.exec(select(m.Seat).where(m.Seat.game_id == gid, m.Seat.index == 2)).one()
        seat.character_name = "../../../escaped"
        game = s.get(m.Game, gid)
        assert game is not None
        config = dict(game.config)
        extra = dict(config["llmafia"])
        extra["vote_files"] = {"../../../escaped": ["Bob"]}
        config["llmafia"] = extra
        game.config = config
    out = tmp_path / "a" / "b" / "out"
    with pytest.raises(UnsafePath):
        export_games(engine, [gid], out, formats=["llmafia"])
    assert not list(tmp_path.rglob("escaped*"))
    assert not out.exists() or [p.name for p in out.iterdir()] == []


# --- item 16: account names never reach an export ----------------------------------------------


def test_account_names_in_chat_are_scrubbed_on_import(
    store: tuple[str, Engine], tmp_path: Path
) -> None:
    _, engine = store
    folder = make_game(tmp_path / "src" / "0001", real_name="Zelda Quixote")
    chat = folder / "public_daytime_chat.txt"
    chat.write_text(
        chat.read_text()
        + "[00:00:40] Ann: zelda is that you? Zelda Quixote from work lol\n"
        + "[00:00:41] Cat: @Quixote hi\n"
    )
    survey = folder / "Cat_survey.txt"
    survey.write_text(survey.read_text().replace("fine", "fine, Zelda was great"))
    import_llmafia(engine, folder)
    assert games_in_store(engine) == {store_game_id("0001")}
    assert not re.search("zelda|quixote", stored_text(engine), re.IGNORECASE)
    out = tmp_path / "out"
    export_games(engine, [store_game_id("0001")], out)
    for path, text in bundle(out).items():
        assert not re.search("zelda|quixote", text, re.IGNORECASE), path
    chat_out = bundle(out)["llmafia/0001/public_daytime_chat.txt"]  # the release's number
    assert "Ann: Bob is that you? Bob from work lol" in chat_out


@real_data
def test_real_games_given_account_names_export_none_of_them(
    store: tuple[str, Engine], tmp_path: Path
) -> None:
    """Each real game copied, each player given an account name (real_name in config.json and
    real_names.txt) that other players then use in the chat; none survives the export."""
    _, engine = store
    accounts: list[str] = []
    for source in sorted(p for p in REAL.iterdir() if (p / "config.json").is_file()):
        folder = tmp_path / "games" / source.name
        shutil.copytree(source, folder)
        for f in folder.iterdir():
            f.chmod(0o644)
        config = json.loads((folder / "config.json").read_text())
        names = [p["name"] for p in config["players"]]
        mine = {n: f"Acct{source.name}{n}x Surname{source.name}{i}" for i, n in enumerate(names)}
        accounts += [w for a in mine.values() for w in a.split()]
        for p in config["players"]:
            p["real_name"] = mine[p["name"]]
        (folder / "config.json").write_text(json.dumps(config))
        (folder / "real_names.txt").write_text("\n".join(f"{a}: {n}" for n, a in mine.items()))
        chat = folder / "public_daytime_chat.txt"
        lines = chat.read_text(encoding="utf-8").split("\n")
        for k in range(0, len(lines), 7):  # players call each other by account name
            if lines[k] and ": " in lines[k] and "Game-Manager" not in lines[k]:
                who = names[k % len(names)]
                lines[k] += f" {mine[who]} @{mine[who].split()[0]}"
        chat.write_text("\n".join(lines), encoding="utf-8")
    import_llmafia(engine, tmp_path / "games")
    ids = sorted(games_in_store(engine))
    assert len(ids) == 15
    out = tmp_path / "out"
    export_games(engine, ids, out)
    everything = "\n".join(bundle(out).values()) + stored_text(engine)
    leaked = [a for a in accounts if a.casefold() in everything.casefold()]
    assert leaked == []


@real_data
def test_real_games_import_clean(store: tuple[str, Engine], tmp_path: Path) -> None:
    """The release itself: every game imported, none skipped, no real_name value exported."""
    _, engine = store
    report = import_llmafia(engine, REAL)
    assert report.skipped == [] and len(report.imported) == 15
    values = set()
    for folder in REAL.iterdir():
        if (folder / "config.json").is_file():
            config = json.loads((folder / "config.json").read_text())
            values |= {str(p.get("real_name")) for p in config["players"]}
    out = tmp_path / "out"
    export_games(engine, [r.game_id for r in report.imported], out)
    text = "\n".join(bundle(out).values())
    assert values == {"ANONYMIZED"} and "ANONYMIZED" not in text
