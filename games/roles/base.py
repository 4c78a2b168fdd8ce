"""Role protocol and registry."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Team = Literal["mafia", "bystanders"]


@dataclass
class NightContext:
    """What night resolution accumulates; roles read and write it in priority order."""

    kill_target: int | None
    protected: set[int] = field(default_factory=set)
    #: seat -> (target, is_mafia) for inspections, delivered privately at dawn
    inspections: dict[int, tuple[int, bool]] = field(default_factory=dict)


class Role:
    """A role. Subclasses set the class attributes and override the hooks they need."""

    name: str = ""
    team: Team = "bystanders"
    #: verb shown to the player for the night action, or None when the role has none
    night_verb: str | None = None
    #: lower resolves first (protection before inspection)
    priority: int = 100
    description: str = ""

    def check_target(
        self,
        actor: int,
        target: int,
        alive: frozenset[int],
        last_targets: Mapping[int, int],
    ) -> str | None:
        """Return an error message when ``target`` is not allowed for ``actor``, else None."""
        return None

    def resolve(
        self, actor: int, target: int, ctx: NightContext, teams: Mapping[int, Team]
    ) -> None:
        """Apply this role's night action to the night context."""


_REGISTRY: dict[str, Role] = {}


def register(role: Role) -> Role:
    if not role.name or role.name in _REGISTRY:
        raise ValueError(f"role name missing or registered twice: {role.name!r}")
    _REGISTRY[role.name] = role
    return role


def get_role(name: str) -> Role:
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise KeyError(f"unknown role {name!r} (known roles: {known})") from None


def registered_roles() -> tuple[str, ...]:
    return tuple(sorted(_REGISTRY))
