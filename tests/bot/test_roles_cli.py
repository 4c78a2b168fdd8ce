"""``mafiabot roles``, ``setups``, ``balance`` and ``--setup``: what a host sees on the command
line."""

from __future__ import annotations

import json

import pytest

from agent.balance import wilson
from games.setups import SETUPS
from mafiabot.cli import main


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capsys.readouterr()
    return int(info.value.code or 0), out, err


def test_roles_json_lists_25_roles_in_3_factions(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "roles", "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) >= 25
    assert {r["faction"] for r in rows} == {"town", "mafia", "neutral"}
    assert all(r["description"] and r["abilities"] for r in rows)
    godfather = next(r for r in rows if r["name"] == "godfather")
    assert "appears innocent" in godfather["abilities"]


def test_setups_json_lists_every_setup_by_table_size(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "setups", "--json")
    rows = json.loads(out)
    assert code == 0 and len(rows) >= 5 and [r["name"] for r in rows] == list(SETUPS)
    salem = next(r for r in rows if r["name"] == "salem")
    assert "jester" in salem["roles_by_players"]["9"] and len(salem["roles_by_players"]["9"]) == 9


def test_balance_json_has_a_rate_and_interval_per_faction(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "balance", "salem", "--games", "12", "--json")
    data = json.loads(out)
    assert code == 0 and data["games"] == 12 and data["players"] == 9
    for key in ("town", "mafia", "jester"):
        assert 0.0 <= data[key]["low"] <= data[key]["rate"] <= data[key]["high"] <= 1.0
    # every game has exactly one outcome: town, mafia, a solo killer or a draw
    ends = sum(data[k]["wins"] for k in ("town", "mafia", "serial_killer", "draw") if k in data)
    assert ends == 12


def test_balance_of_a_custom_role_list(capsys: pytest.CaptureFixture[str]) -> None:
    roles = "godfather,doctor,detective,survivor,bystander,bystander"
    code, out, _ = run(capsys, "balance", roles, "--games", "5", "--json")
    data = json.loads(out)
    assert code == 0 and data["setup"] == "custom" and data["players"] == 6
    assert set(data) >= {"town", "mafia", "survivor"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["balance", "nosuch"], "Unknown setup 'nosuch'"),
        (["balance", "mafia,doctor,bystander,bystander,bystander", "--players", "6"], "lists 5"),
        (["balance", "doctor,detective,bystander,bystander,bystander"], "can kill"),
        (["simulate", "--setup", "salem", "--players", "6"], "'salem' is for 9 to 15"),
        (["simulate", "--setup", "classic", "--mafia", "2"], "either a setup"),
    ],
)
def test_a_bad_setup_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    code, _, err = run(capsys, *args)
    assert code == 2 and message in err and err.count("\n") == 1


def test_wilson_interval() -> None:
    low, high = wilson(50, 100)
    assert 0.40 < low < 0.41 and 0.59 < high < 0.60
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == pytest.approx(1.0)


def test_chat_settings_choose_a_setup_or_a_role_list() -> None:
    from bot.table.config import SettingsTextError, apply_settings, config_summary, parse_settings
    from games.config import GameConfig

    named = apply_settings(GameConfig(mafia=2), parse_settings("setup=salem").config)
    assert (named.setup, named.mafia, named.roles) == ("salem", None, ())
    named.validate(9)
    assert "the salem setup's" in config_summary(named)
    listed = apply_settings(GameConfig(), parse_settings("setup=godfather,doctor,jester").config)
    assert listed.role_list == ("godfather", "doctor", "jester")
    with pytest.raises(SettingsTextError, match="setup=nosuch: choose a setup"):
        parse_settings("setup=nosuch")
    with pytest.raises(SettingsTextError, match="Unknown role 'wizard'"):
        parse_settings("setup=mafia,wizard")


def test_the_llmafia_export_says_when_a_setup_cannot_be_expressed() -> None:
    from bot.protection.dataset.llmafia_fit import setup_problem

    assert setup_problem(["mafia", "bystander", "detective", "doctor", None]) is None
    why = setup_problem(["godfather", "jester", "bystander", "jester"])
    assert why is not None and "can't express (godfather, jester)" in why


def test_the_chat_roles_command_lists_every_role_and_setup_in_one_message() -> None:
    from bot.table.help import catalog_text
    from games.roles import registered_roles

    for text in (catalog_text("discord"), catalog_text("slack")):
        assert len(text) < 2000  # one Discord message
        assert all(role in text for role in registered_roles())
        assert all(name in text for name in SETUPS)
    assert "*Neutral*:" in catalog_text("slack")


def test_discord_offers_a_menu_for_every_roles_night_action() -> None:
    from bot.discord.posts import MENU_KINDS, NIGHT_VERBS
    from games.roles import get_role, registered_roles

    verbs = {v for v in (get_role(r).night_verb for r in registered_roles()) if v is not None}
    assert verbs == NIGHT_VERBS and len(verbs) >= 10
    assert not verbs & {"vote", "kill"}  # a role's action never reads as a vote menu
    assert all(MENU_KINDS.get(v, "act") == "act" for v in verbs)
