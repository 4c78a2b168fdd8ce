"""The server-settings rules `/mafia setup` and `/mafia config` apply (bot.table.server_settings),
apart from the Discord commands that ask for them."""

from __future__ import annotations

from typing import Any

from bot.table.personas import PERSONA_NOTE
from bot.table.server_settings import bind_channel, set_defaults


def test_binding_and_unbinding_a_channel() -> None:
    settings: dict[str, Any] = {"channels": {"1": {"by": "7"}}}
    assert bind_channel(settings, "2", "8")["channels"] == {"1": {"by": "7"}, "2": {"by": "8"}}
    assert bind_channel(settings, "1", "8", remove=True)["channels"] == {"2": {"by": "8"}}
    assert bind_channel({}, "3", "9", remove=True)["channels"] == {}


def test_defaults_personas_and_moderator_roles() -> None:
    settings: dict[str, Any] = {"agents": 1, "persona": "old", PERSONA_NOTE: "x"}
    out = set_defaults(settings, {"agents": 2, "tie_rule": None}, add_moderator_role=5)
    assert out["agents"] == 2 and "tie_rule" not in out
    assert out["persona"] == "old" and out[PERSONA_NOTE] == "x"  # no persona given: kept
    assert out["moderator_roles"] == ["5"]
    out = set_defaults(out, {}, add_moderator_role=5)
    assert out["moderator_roles"] == ["5"]  # not twice
    out = set_defaults(out, {}, persona_given=True, persona="calm", add_moderator_role=6)
    assert out["persona"] == "calm" and PERSONA_NOTE not in out
    assert out["moderator_roles"] == ["5", "6"]
    out = set_defaults(out, {}, persona_given=True, persona=None, clear_moderator_roles=True)
    assert "persona" not in out and out["moderator_roles"] == []
