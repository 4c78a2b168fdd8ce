"""Role protocol and registry.

A role is data: its faction, at most one night ability built from a small set of primitives
(:data:`Ability`), how many times it may use it, and passives (bulletproof, how it appears to
investigators, whether its role is hidden when it dies, extra votes). Night resolution
(:mod:`games.night`) reads these attributes; a role overrides :meth:`Role.check_target` only
for a targeting rule of its own (the doctor's "not the same player twice running").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

#: the side a role plays for: "bystanders" is the town (the LLMafia name, kept in events,
#: exports and results); neutrals each have a win condition of their own
Team = Literal["mafia", "bystanders", "neutral"]
#: the name players use for a side: town, mafia, neutral
Faction = Literal["town", "mafia", "neutral"]

#: the night ability primitives, resolved in this order by :mod:`games.night`
Ability = Literal[
    "alert",  # veteran: on alert, bulletproof and kills every visitor (self-target)
    "vest",  # survivor: bulletproof tonight (self-target)
    "block",  # the target's action tonight does nothing
    "redirect",  # actions aimed at the target land on the actor and the reverse
    "frame",  # the target appears guilty to investigators tonight
    "guard",  # bodyguard: dies in the target's place and kills the attacker
    "protect",  # doctor: the target survives every attack tonight
    "kill",  # an attack on the target
    "investigate",  # learn whether the target appears guilty
    "investigate_role",  # learn the target's exact role (as it appears)
    "track",  # learn whom the target visited
    "watch",  # learn who visited the target
    "clean",  # janitor: if the target dies tonight, its role is hidden from everyone else
]

#: how a role wins: its faction's goal, or a neutral's own
WinCondition = Literal[
    "town",  # no mafia and no serial killer left
    "mafia",  # the mafia are at least as many as the rest, no other killer left
    "jester",  # voted out by day
    "solo_killer",  # the last killer standing, at least as many as the rest
    "survivor",  # alive when the game ends
    "executioner",  # their assigned target is voted out by day
]


class Role:
    """A role. Subclasses set the class attributes; most need nothing else."""

    name: str = ""
    team: Team = "bystanders"
    #: verb shown to the player for the night action, or None when the role has none
    night_verb: str | None = None
    #: the primitive behind the night action (None: no night action)
    ability: Ability | None = None
    #: how many nights the ability can be used (None: every night)
    uses: int | None = None
    #: the action may (only) target the actor itself
    self_target: Literal["never", "allowed", "only"] = "never"
    #: lower resolves first among actions of the same ability (kept for ordering ties)
    priority: int = 100
    description: str = ""
    #: passive: survives night attacks (a doctor is not needed)
    bulletproof: bool = False
    #: passive: what a faction investigation says ("innocent" for a godfather); None: the truth
    appears: Literal["innocent", "guilty"] | None = None
    #: passive: the role is not revealed when this player dies
    hidden_on_death: bool = False
    #: weight of this player's day vote
    votes: int = 1
    #: a serial killer's kill is theirs alone, not the mafia's night vote
    win: WinCondition = "town"
    #: the convention the name and rules come from (Town of Salem, Mafia Universe...)
    source: str = "LLMafia"

    @property
    def faction(self) -> Faction:
        return "town" if self.team == "bystanders" else self.team

    @property
    def kills(self) -> bool:
        """Whether this role's side can kill at night (mafia's vote, a serial killer)."""
        return self.team == "mafia" or self.win == "solo_killer"

    def check_target(
        self,
        actor: int,
        target: int,
        alive: frozenset[int],
        last_targets: Mapping[int, int],
    ) -> str | None:
        """Return an error message when ``target`` is not allowed for ``actor``, else None."""
        if self.self_target == "only" and target != actor:
            return f"You can only {self.night_verb} yourself."
        if self.self_target == "never" and target == actor:
            return f"You can't {self.night_verb} yourself."
        return None

    def abilities_text(self) -> str:
        """One line naming the night ability, its limit and the passives (for docs and lists)."""
        parts: list[str] = []
        if self.ability is not None:
            limit = f" ({self.uses}x)" if self.uses is not None else ""
            parts.append(f"{self.ability}{limit}")
        if self.team == "mafia":
            parts.append("night kill vote")
        if self.bulletproof:
            parts.append("bulletproof")
        if self.appears is not None:
            parts.append(f"appears {self.appears}")
        if self.hidden_on_death:
            parts.append("role hidden on death")
        if self.votes > 1:
            parts.append(f"{self.votes} votes")
        return ", ".join(parts) or "none"


_REGISTRY: dict[str, Role] = {}


def register(role: Role) -> Role:
    if not role.name or role.name in _REGISTRY:
        raise ValueError(f"role name missing or registered twice: {role.name!r}")
    if (role.ability is None) != (role.night_verb is None):
        raise ValueError(f"role {role.name!r}: a night verb needs an ability and the reverse")
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
