"""MAFIABOT_PERSONAS_FILE: the operator's personas, checked when the settings are read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.settings import Settings, SettingsError, load_env
from bot.table.personas import PersonaError, choose_persona, configured_personas


def test_an_empty_setting_is_no_file() -> None:
    assert Settings(_env_file=None, personas_file="").personas_file is None


def test_operator_personas_are_chosen_by_key(tmp_path: Path) -> None:
    path = tmp_path / "personas.json"
    path.write_text(json.dumps({"pirate": "You talk like a pirate."}))
    settings = Settings(_env_file=None, personas_file=str(path))
    extra = configured_personas(settings)
    assert choose_persona("pirate", extra) == "pirate"
    with pytest.raises(PersonaError, match="pirate"):
        choose_persona("You talk like a pirate.", extra)


@pytest.mark.parametrize(
    ("content", "said"),
    [(None, "can't read"), ("[1, 2]", "JSON object"), ('{"skeptic": "x"}', "built-in")],
)
def test_a_bad_file_is_one_clear_line_at_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str | None, said: str
) -> None:
    path = tmp_path / "personas.json"
    if content is not None:
        path.write_text(content)
    monkeypatch.setenv("MAFIABOT_PERSONAS_FILE", str(path))
    with pytest.raises(SettingsError, match="MAFIABOT_PERSONAS_FILE") as err:
        load_env(Settings)
    assert said in str(err.value)
