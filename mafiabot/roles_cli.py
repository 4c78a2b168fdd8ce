"""``mafiabot roles``, ``mafiabot setups`` and ``mafiabot balance``: the role registry and the
shipped setups as text or JSON, and a setup's balance measured by simulation."""

from __future__ import annotations

import json
from typing import Any

from games.config import GameConfig
from games.roles import get_role, registered_roles
from games.setups import SETUPS, get_setup


def role_rows() -> list[dict[str, Any]]:
    rows = []
    for name in registered_roles():
        r = get_role(name)
        rows.append(
            {
                "name": name,
                "faction": r.faction,
                "description": r.description,
                "abilities": r.abilities_text(),
                "night_action": r.night_verb,
                "uses": r.uses,
                "win": r.win,
                "source": r.source,
            }
        )
    order = {"town": 0, "mafia": 1, "neutral": 2}
    return sorted(rows, key=lambda row: (order[row["faction"]], row["name"]))


def setup_rows() -> list[dict[str, Any]]:
    rows = []
    for s in SETUPS.values():
        by_size = {str(n): list(s.roles_for(n)) for n in range(s.min_players, s.max_players + 1)}
        rows.append(
            {
                "name": s.name,
                "description": s.description,
                "min_players": s.min_players,
                "max_players": s.max_players,
                "balance_players": s.balance_players,
                "source": s.source,
                "roles_by_players": by_size,
            }
        )
    return rows


def setup_config(value: str) -> dict[str, Any]:
    """``--setup`` as GameConfig fields: a setup's name, or a custom list of role names
    separated by commas (``godfather,doctor,detective,jester,bystander,bystander``)."""
    if "," in value or (value not in SETUPS and value in registered_roles()):
        return {"role_list": tuple(r.strip() for r in value.split(",") if r.strip())}
    return {"setup": value}


def print_roles(as_json: bool) -> str:
    rows = role_rows()
    if as_json:
        return json.dumps(rows, indent=2)
    lines = []
    for row in rows:
        lines.append(f"{row['name']:14} {row['faction']:8} {row['abilities']}")
        lines.append(f"{'':24}{row['description']}")
    return "\n".join(lines)


def print_setups(as_json: bool) -> str:
    rows = setup_rows()
    if as_json:
        return json.dumps(rows, indent=2)
    lines = []
    for row in rows:
        lines.append(f"{row['name']} ({row['min_players']}-{row['max_players']} players)")
        lines.append(f"  {row['description']}")
        n = row["balance_players"]
        lines.append(f"  at {n}: {', '.join(row['roles_by_players'][str(n)])}")
    return "\n".join(lines)


def balance_text(data: dict[str, Any]) -> str:
    head = f"{data['setup']} at {data['players']} players, {data['games']} baseline games:"
    lines = [head]
    for key, value in data.items():
        if isinstance(value, dict):
            lines.append(
                f"  {key:14} {value['rate']:6.1%}  (95% interval {value['low']:.1%}"
                f"-{value['high']:.1%}, {value['wins']} wins)"
            )
    return "\n".join(lines)


def balance_config(setup: str, players: int | None) -> tuple[GameConfig, int]:
    fields = setup_config(setup)
    config = GameConfig(**fields)
    if players is None:
        if "setup" in fields:
            players = get_setup(setup).balance_players
        else:
            players = len(fields["role_list"])
    return config, players
