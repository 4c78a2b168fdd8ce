"""The settings a host types (``day=90 vote=30s mafia=2 roles=detective agents=2``), their
defaults and how they read back, for every platform.

Slack takes the words as typed; Discord takes the same settings as slash-command options. Both
read them back with `config_summary`. Whether the whole setup works (player counts) is
`GameConfig.validate`'s job at the start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from games.config import GameConfig
from games.errors import ConfigError
from games.names import display_list
from games.narration import duration
from games.roles import registered_roles

if TYPE_CHECKING:
    from bot.settings import Settings


def default_config(settings: Settings | None) -> GameConfig:
    """A new game's config: the operator's phase lengths (``MAFIABOT_DAY_SECONDS``...), the
    engine's defaults for the rest."""
    if settings is None:
        return GameConfig()
    return GameConfig(
        day_seconds=settings.day_seconds,
        vote_seconds=settings.vote_seconds,
        night_seconds=settings.night_seconds,
        night_vote_seconds=settings.night_vote_seconds,
    )


class SettingsTextError(ValueError):
    """A setting the host typed that we cannot use; the message says which and why."""


@dataclass
class LobbySettings:
    """Parsed ``key=value`` words: game config changes plus adapter-level options."""

    config: dict[str, Any] = field(default_factory=dict)
    agents: int | None = None
    #: test-only options (``speed``, ``seed``), accepted only when the adapter allows them
    hidden: dict[str, float | int] = field(default_factory=dict)


_DURATIONS = {
    "day": "day_seconds",
    "vote": "vote_seconds",
    "night": "night_seconds",
    "night_vote": "night_vote_seconds",
    "nightvote": "night_vote_seconds",
}
_TIES = {"tie": "tie_rule", "night_tie": "night_tie_rule", "nighttie": "night_tie_rule"}
#: how many of the players are AI agents: at least one (the point of the game), at most three
MIN_AGENTS = 1
MAX_AGENTS = 3
SETTINGS_HELP = (
    "day=2m vote=45s night=45s night_vote=30s mafia=auto|N roles=detective,doctor|none "
    "tie=none|random night_tie=none|random agents=1 setup=NAME|role,role,..."
)


#: what a phase may last when set in a chat (the command line's range too)
MIN_PHASE_SECONDS, MAX_PHASE_SECONDS = 1.0, 86400.0


def _seconds(key: str, value: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?)?", value.lower())
    if not m:
        raise SettingsTextError(f"{key}={value}: give a duration like 90, 90s or 2m.")
    amount = float(m.group(1))
    seconds = amount * 60 if (m.group(2) or "s").startswith("m") else amount
    if not MIN_PHASE_SECONDS <= seconds <= MAX_PHASE_SECONDS:
        raise SettingsTextError(
            f"{key}={value}: a phase lasts from {MIN_PHASE_SECONDS:g} second to "
            f"{MAX_PHASE_SECONDS // 3600:g} hours."
        )
    return seconds


def parse_settings(text: str, *, allow_hidden: bool = False) -> LobbySettings:
    """``day=90 vote=30s mafia=2 roles=detective tie=random agents=1`` -> LobbySettings.

    Checks each value's form here; whether the whole setup works (player counts) is
    `GameConfig.validate`'s job at the start."""
    out = LobbySettings()
    for word in text.split():
        key, sep, value = word.partition("=")
        key = key.strip().lower().replace("-", "_")
        value = value.strip()
        if not sep or not value:
            raise SettingsTextError(f"{word!r}: settings look like key=value ({SETTINGS_HELP}).")
        if key in _DURATIONS:
            out.config[_DURATIONS[key]] = _seconds(key, value)
        elif key == "mafia":
            if value.lower() == "auto":
                out.config["mafia"] = None
            elif value.isdigit() and int(value) >= 1:
                out.config["mafia"] = int(value)
            else:
                raise SettingsTextError(f"mafia={value}: give a whole number of mafia, or auto.")
        elif key in ("roles", "role"):
            roles = (
                ()
                if value.lower() == "none"
                else tuple(r.strip().lower() for r in value.split(",") if r.strip())
            )
            known = [r for r in registered_roles() if r not in ("mafia", "bystander")]
            for role in roles:
                if role not in known:
                    raise SettingsTextError(
                        f"Unknown role {role!r}; choose from {', '.join(known)}."
                    )
            out.config["roles"] = roles
        elif key == "setup":
            out.config.update(setup_fields(value))
        elif key in _TIES:
            if value.lower() not in ("none", "random"):
                raise SettingsTextError(f"{key}={value}: ties are none or random.")
            out.config[_TIES[key]] = value.lower()
        elif key == "agents":
            if not value.isdigit() or not MIN_AGENTS <= int(value) <= MAX_AGENTS:
                raise SettingsTextError(
                    f"agents={value}: between {MIN_AGENTS} and {MAX_AGENTS} AI players."
                )
            out.agents = int(value)
        elif allow_hidden and key == "speed":
            try:
                speed = float(value)
            except ValueError:
                raise SettingsTextError(f"speed={value}: a positive number.") from None
            if speed <= 0:
                raise SettingsTextError(f"speed={value}: a positive number.")
            out.hidden["speed"] = speed
        elif allow_hidden and key == "seed" and value.isdigit():
            out.hidden["seed"] = int(value)
        else:
            raise SettingsTextError(f"Unknown setting {key!r}. Settings: {SETTINGS_HELP}.")
    return out


def setup_fields(value: str) -> dict[str, Any]:
    """``setup=classic`` or ``setup=godfather,doctor,...`` (one role a seat) as config fields;
    a setup replaces the mafia count and extra roles."""
    from games.setups import SETUPS

    value = value.strip().lower()
    if "," not in value:
        if value not in SETUPS:
            raise SettingsTextError(
                f"setup={value}: choose a setup ({', '.join(SETUPS)}) or list one role a seat, "
                "comma-separated."
            )
        return {"setup": "" if value == "llmafia" else value, "role_list": (), "mafia": None,
                "roles": ()}  # fmt: skip
    roles = tuple(r.strip() for r in value.split(",") if r.strip())
    known = registered_roles()
    for role in roles:
        if role not in known:
            raise SettingsTextError(f"Unknown role {role!r}; choose from {', '.join(known)}.")
    return {"setup": "", "role_list": roles, "mafia": None, "roles": ()}


def setup_names(current: str) -> list[str]:
    """What a setup box suggests for ``current``: the setups whose name contains it, or the
    typed role list itself (at most 25, Discord's limit)."""
    from games.setups import SETUPS

    typed = current.strip().lower()
    if "," in typed:
        return [typed[:100]]
    return [name for name in SETUPS if typed in name][:25]


def apply_settings(config: GameConfig, changes: dict[str, Any]) -> GameConfig:
    """``config`` with ``changes``; raises `games.errors.ConfigError` on an impossible value."""
    data = config.to_dict()
    data.update(changes)
    new = GameConfig.from_dict(data)
    for name in ("day_seconds", "vote_seconds", "night_seconds", "night_vote_seconds"):
        if not getattr(new, name) > 0:
            raise ConfigError(f"{name.replace('_', ' ')} must be positive.")
    return new


def config_summary(config: GameConfig, agents: int | None = None) -> str:
    """The settings in one paragraph; ``agents`` (the AI seats asked for) when known."""
    mafia = "set by the player count" if config.mafia is None else str(config.mafia)
    roles = display_list(list(config.roles)) if config.roles else "none"
    if config.role_list:
        mafia, roles = "as listed", display_list(list(config.role_list))
    elif config.setup and config.setup != "llmafia":
        mafia, roles = f"as the {config.setup} setup deals", f"the {config.setup} setup's"
    ties = "nobody is out" if config.tie_rule == "none" else "chance decides"
    text = (
        f"Day {duration(config.day_seconds)}, vote {duration(config.vote_seconds)}, "
        f"night {duration(config.night_seconds)}, night vote "
        f"{duration(config.night_vote_seconds)}. Mafia: {mafia}. Special roles: {roles}. "
        f"Tied day vote: {ties}."
    )
    return text if agents is None else f"{text} AI players: {agents}."
