"""The role registry: a role is one small module or data entry that registers a :class:`Role`.

The LLMafia roles (bystander, mafia, detective, doctor) have a module each; the others are data
entries in :mod:`games.roles.town`, :mod:`games.roles.mafia_team` and
:mod:`games.roles.neutral`. Night resolution reads their abilities (:mod:`games.night`).
"""

from games.roles import (  # noqa: F401  (registration)
    bystander,
    detective,
    doctor,
    mafia,
    mafia_team,
    neutral,
    town,
)
from games.roles.base import (
    Ability,
    Faction,
    Role,
    Team,
    WinCondition,
    get_role,
    register,
    registered_roles,
)

__all__ = [
    "Ability",
    "Faction",
    "Role",
    "Team",
    "WinCondition",
    "get_role",
    "register",
    "registered_roles",
]
