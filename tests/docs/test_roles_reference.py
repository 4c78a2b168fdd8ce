"""docs/roles.md is generated from the role registry, the night order and the setups, and is
kept in step with them."""

from __future__ import annotations

from bot import roles_reference
from games.night import ORDER
from games.roles import registered_roles
from games.setups import SETUPS


def test_docs_roles_md_is_up_to_date() -> None:
    assert roles_reference.main(["--check"]) == 0, "run: python -m bot.roles_reference"


def test_it_names_every_role_every_setup_and_the_night_order() -> None:
    text = roles_reference.render()
    for role in registered_roles():
        assert f"| `{role}` |" in text
    for name in SETUPS:
        assert f"### `{name}`" in text
    for i, (step, _) in enumerate(ORDER, 1):
        assert f"{i}. **{step}**" in text
    assert "Town of Salem" in text and "Mafia Universe" in text
