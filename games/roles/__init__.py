"""The role registry: a role is one small module that registers a :class:`Role`.

Town roles with a night action (detective, doctor) plug into the night resolution through
:meth:`Role.check_target` and :meth:`Role.resolve`; the mafia kill itself is the night vote,
handled by the engine.
"""

from games.roles import bystander, detective, doctor, mafia  # noqa: F401  (registration)
from games.roles.base import NightContext, Role, Team, get_role, register, registered_roles

__all__ = ["NightContext", "Role", "Team", "get_role", "register", "registered_roles"]
