"""Game setup: player counts, role mix, phase lengths and the tie rules."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

from games.errors import ConfigError
from games.roles import get_role, registered_roles
from games.setups import DEFAULT_SETUP, get_setup
from games.setups import default_mafia_count as default_mafia_count

TieRule = Literal["none", "random"]
TIE_RULES: tuple[TieRule, ...] = ("none", "random")

MIN_PLAYERS = 5
MAX_PLAYERS = 30
MAX_PHASE_SECONDS = 24 * 3600.0
MAX_MESSAGE_CHARS = 1000
DRAW_AFTER_QUIET_DAYS = 3
MAX_QUIET_DAYS = 100


@dataclass(frozen=True)
class GameConfig:
    """Everything that shapes a game. Durations are seconds of game time."""

    #: number of mafia; None picks :func:`default_mafia_count`
    mafia: int | None = None
    #: extra town roles in play, e.g. ("detective", "doctor"); off by default
    roles: tuple[str, ...] = ()
    day_seconds: float = 120.0
    vote_seconds: float = 45.0
    night_seconds: float = 45.0
    night_vote_seconds: float = 30.0
    #: day vote tie: "none" eliminates nobody, "random" picks among the tied (seeded)
    tie_rule: TieRule = "none"
    #: night vote tie among the mafia, same meaning
    night_tie_rule: TieRule = "none"
    #: with a single mafia alive there is nobody to talk to: go straight to the night vote
    skip_night_talk_single_mafia: bool = True
    max_message_chars: int = MAX_MESSAGE_CHARS
    #: the game ends in a draw after this many days in a row (a day and its night) in which
    #: nobody was voted out or killed, so every game ends
    draw_after_quiet_days: int = DRAW_AFTER_QUIET_DAYS
    #: a fixed deal, role by seat (replays of recorded games, tests); empty deals by seed
    deal: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    #: a named setup (:mod:`games.setups`); "" or "llmafia" is the LLMafia game above
    setup: str = ""
    #: a custom setup: every seat's role, dealt by seed (overrides mafia, roles and setup)
    role_list: tuple[str, ...] = ()

    def dealt_roles(self, players: int) -> tuple[str, ...] | None:
        """The roles a setup or custom list deals at ``players`` seats, or None for the
        LLMafia deal (mafia count, extra roles, bystanders)."""
        if self.role_list:
            return self.role_list
        if self.setup and self.setup != DEFAULT_SETUP:
            return get_setup(self.setup).roles_for(players)
        return None

    def mafia_count(self, players: int) -> int:
        if self.deal:
            return sum(get_role(r).team == "mafia" for r in self.deal if r in registered_roles())
        dealt = self.dealt_roles(players) if self.role_list or self.setup else None
        if dealt is not None:
            return sum(get_role(r).team == "mafia" for r in dealt if r in registered_roles())
        return self.mafia if self.mafia is not None else default_mafia_count(players)

    def validate(self, players: int) -> None:
        """Raise :class:`ConfigError` with one clear sentence when the setup is impossible."""
        if players < MIN_PLAYERS:
            raise ConfigError(
                f"Mafia needs at least {MIN_PLAYERS} players; this game has {players}."
            )
        if players > MAX_PLAYERS:
            raise ConfigError(f"At most {MAX_PLAYERS} players per game; this game has {players}.")
        if self.setup:
            get_setup(self.setup).roles_for(players)  # (raises on an unknown setup or size)
        custom = bool(self.role_list or (self.setup and self.setup != DEFAULT_SETUP))
        if custom:
            self._validate_setup(players)
        elif self.deal:
            self._validate_deal(players)
        if not custom:
            mafia = self.mafia_count(players)
            if mafia < 1:
                raise ConfigError("A game needs at least 1 mafia.")
            if 2 * mafia >= players:
                raise ConfigError(
                    f"{mafia} mafia among {players} players is too many: the mafia would already "
                    f"win. Use at most {(players - 1) // 2}."
                )
            known = registered_roles()
            seen: set[str] = set()
            for role in self.roles:
                if role not in known or role in ("mafia", "bystander"):
                    extras = ", ".join(
                        r for r in known if r != "bystander" and get_role(r).team == "bystanders"
                    )
                    raise ConfigError(f"Unknown extra role {role!r}. Available: {extras}.")
                if role in seen:
                    raise ConfigError(f"The role {role!r} is listed twice.")
                seen.add(role)
                if get_role(role).team != "bystanders":
                    raise ConfigError(f"Extra roles must be on the bystanders' side: {role!r}.")
            if mafia + len(self.roles) > players:
                raise ConfigError(
                    f"{mafia} mafia and {len(self.roles)} extra roles don't fit in {players} seats."
                )
        for name in ("day_seconds", "vote_seconds", "night_seconds", "night_vote_seconds"):
            value = getattr(self, name)
            if not (0 < value <= MAX_PHASE_SECONDS):
                raise ConfigError(
                    f"{name.replace('_', ' ')} must be more than 0 and at most "
                    f"{MAX_PHASE_SECONDS:.0f} (a day); got {value:g}."
                )
        for name in ("tie_rule", "night_tie_rule"):
            if getattr(self, name) not in TIE_RULES:
                raise ConfigError(
                    f"{name.replace('_', ' ')} must be one of {', '.join(TIE_RULES)}; "
                    f"got {getattr(self, name)!r}."
                )
        if not 1 <= self.max_message_chars <= 10_000:
            raise ConfigError("max message chars must be between 1 and 10000.")
        if not 1 <= self.draw_after_quiet_days <= MAX_QUIET_DAYS:
            raise ConfigError(
                f"draw after quiet days must be between 1 and {MAX_QUIET_DAYS}; "
                f"got {self.draw_after_quiet_days!r}."
            )

    def _validate_setup(self, players: int) -> None:
        """A named or custom setup: one clear sentence for what can't work."""
        if self.roles or self.mafia is not None:
            raise ConfigError(
                "Choose either a setup (or a role list) or a mafia count and extra roles, not both."
            )
        dealt = self.dealt_roles(players)
        assert dealt is not None
        known = registered_roles()
        for role in dealt:
            if role not in known:
                raise ConfigError(f"Unknown role {role!r}. Known roles: {', '.join(known)}.")
        if len(dealt) != players:
            raise ConfigError(f"The setup lists {len(dealt)} roles for {players} players.")
        if self.deal and sorted(self.deal) != sorted(dealt):
            raise ConfigError("The fixed deal must deal the setup's roles.")
        roles = [get_role(r) for r in dealt]
        if not any(r.kills for r in roles):
            raise ConfigError(
                "Nobody in this setup can kill at night (no mafia or serial killer): "
                "add at least one."
            )
        if not any(r.faction == "town" for r in roles):
            raise ConfigError(
                "Nobody in this setup plays for the town: no side could win a fair game."
            )
        killers = sum(r.kills for r in roles)
        if 2 * killers >= players:
            raise ConfigError(
                f"{killers} killers (mafia and serial killers) among {players} players is too "
                "many: the town could never win a vote."
            )

    def _validate_deal(self, players: int) -> None:
        if len(self.deal) != players:
            raise ConfigError(f"The fixed deal lists {len(self.deal)} roles for {players} players.")
        known = registered_roles()
        for role in self.deal:
            if role not in known:
                raise ConfigError(f"Unknown role {role!r} in the fixed deal.")
        extras = tuple(r for r in self.deal if r not in ("mafia", "bystander"))
        if sorted(extras) != sorted(self.roles):
            raise ConfigError("The fixed deal's special roles must match the roles in play.")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in _OMITTED_WHEN_EMPTY and not value:
                continue  # (stored and exported configs of the LLMafia game stay as they were)
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameConfig:
        names = {f.name for f in fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise ConfigError(f"Unknown game settings: {', '.join(sorted(unknown))}.")
        kwargs = dict(data)
        for key in ("roles", "deal", "role_list"):
            if key in kwargs:
                kwargs[key] = tuple(kwargs[key])
        return cls(**kwargs)


#: settings added with setups: left out of :meth:`GameConfig.to_dict` while unset
_OMITTED_WHEN_EMPTY = frozenset({"setup", "role_list"})
