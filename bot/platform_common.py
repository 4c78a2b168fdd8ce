"""What every chat adapter (Slack, Discord) shares and that has nothing to do with one SDK.

Kept here so the platforms say the same thing the same way: the lobby roster, the settings a
host may type (``day=90 vote=30 roles=detective``), the status text, the post-game survey and
how its answers are stored, character avatars, and the rule that no relayed line may ping a
whole channel. Platform syntax (Slack's ``<@U…>``, Discord's ``<@123>``) is each adapter's
business; this module only sees plain text. Where anyone sits is the service's business
(`bot.service.seating`), not an adapter's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot import survey
from bot.service import LiveGame, SeatInfo
from games.config import MAX_PLAYERS, MIN_PLAYERS, GameConfig
from games.names import display_list
from games.narration import duration
from games.roles import registered_roles
from games.state import PhaseKind

__all__ = [
    "AVATAR_URL_TEMPLATE",
    "MASS_MENTIONS",
    "RATING_LABELS",
    "RATING_QUESTIONS",
    "SETTINGS_HELP",
    "SURVEY_GUESS_QUESTION",
    "SURVEY_INTRO",
    "WORD_JOINER",
    "LobbySettings",
    "SettingsTextError",
    "SurveyAnswer",
    "apply_settings",
    "avatar_url",
    "config_summary",
    "defuse_mass_mentions",
    "lobby_text",
    "parse_settings",
    "save_survey",
    "seat_infos",
    "seconds_left",
    "status_text",
    "survey_answered",
    "survey_choices",
    "survey_response",
]

# --- relayed text -------------------------------------------------------------------------------

#: invisible, keeps "@here" from being read as a mention by any client or server
WORD_JOINER = "\u2060"
MASS_MENTIONS = ("everyone", "here", "channel")
_MASS = re.compile(r"(?<![\w.])@(" + "|".join(MASS_MENTIONS) + r")\b", re.IGNORECASE)


def defuse_mass_mentions(text: str) -> str:
    """Show "@everyone", "@here", "@channel" as typed but unable to notify anybody: a player
    (or the agent) must never be able to ping a whole workspace through the relay."""
    return _MASS.sub(lambda m: "@" + WORD_JOINER + m.group(1), text)


#: Character avatars: one picture per character name, the same for humans and agents, so an
#: icon never tells them apart. ``{seed}`` is the URL-quoted name.
AVATAR_URL_TEMPLATE = "https://api.dicebear.com/9.x/thumbs/png?seed={seed}&size=128"


def avatar_url(name: str, template: str = AVATAR_URL_TEMPLATE) -> str:
    return template.format(seed=quote(name, safe=""))


# --- settings a host types ----------------------------------------------------------------------


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
MAX_AGENTS = 3
SETTINGS_HELP = (
    "day=2m vote=45s night=45s night_vote=30s mafia=auto|N roles=detective,doctor|none "
    "tie=none|random night_tie=none|random agents=1"
)


def _seconds(key: str, value: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(s|sec|secs|seconds?|m|min|mins|minutes?)?", value.lower())
    if not m:
        raise SettingsTextError(f"{key}={value}: give a duration like 90, 90s or 2m.")
    amount = float(m.group(1))
    return amount * 60 if (m.group(2) or "s").startswith("m") else amount


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
        elif key in _TIES:
            if value.lower() not in ("none", "random"):
                raise SettingsTextError(f"{key}={value}: ties are none or random.")
            out.config[_TIES[key]] = value.lower()
        elif key == "agents":
            if not value.isdigit() or not 1 <= int(value) <= MAX_AGENTS:
                raise SettingsTextError(f"agents={value}: between 1 and {MAX_AGENTS} AI players.")
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


def apply_settings(config: GameConfig, changes: dict[str, Any]) -> GameConfig:
    """``config`` with ``changes``; raises `games.errors.ConfigError` on an impossible value."""
    data = config.to_dict()
    data.update(changes)
    new = GameConfig.from_dict(data)
    for name in ("day_seconds", "vote_seconds", "night_seconds", "night_vote_seconds"):
        if not getattr(new, name) > 0:
            from games.errors import ConfigError

            raise ConfigError(f"{name.replace('_', ' ')} must be positive.")
    return new


def config_summary(config: GameConfig, agents: int = 1) -> str:
    mafia = "set by the player count" if config.mafia is None else str(config.mafia)
    roles = display_list(list(config.roles)) if config.roles else "none"
    ties = "nobody is out" if config.tie_rule == "none" else "chance decides"
    return (
        f"Day {duration(config.day_seconds)}, vote {duration(config.vote_seconds)}, "
        f"night {duration(config.night_seconds)}, night vote "
        f"{duration(config.night_vote_seconds)}. Mafia: {mafia}. Extra roles: {roles}. "
        f"Tied day vote: {ties}. AI players: {agents}."
    )


def lobby_text(humans: Sequence[str], agents: int, config: GameConfig, *, host: str) -> str:
    """The lobby roster: who joined (as the platform shows people), how many AI players will
    be seated, and what is still missing. The AI's seat is never among the names."""
    total = len(humans) + agents
    lines = [
        f"Host: {host}",
        f"Players ({len(humans)} joined + {agents} AI): "
        + (", ".join(humans) if humans else "nobody yet"),
    ]
    if total < MIN_PLAYERS:
        missing = MIN_PLAYERS - total
        lines.append(f"{missing} more {'player is' if missing == 1 else 'players are'} needed.")
    elif total > MAX_PLAYERS:
        lines.append(f"At most {MAX_PLAYERS} players in all; {total - MAX_PLAYERS} too many.")
    else:
        lines.append("Ready: the host can start the game.")
    lines.append(config_summary(config, agents))
    lines.append(
        "Everyone plays under a character name. One or more players are an AI agent; "
        "nobody is told which."
    )
    return "\n".join(lines)


# --- status -------------------------------------------------------------------------------------

PHASE_NAMES = {
    PhaseKind.DAY: "Day {n}: discussion",
    PhaseKind.VOTE: "Day {n}: vote",
    PhaseKind.NIGHT: "Night {n}: the mafia talk",
    PhaseKind.NIGHT_VOTE: "Night {n}: the mafia vote",
    PhaseKind.OVER: "Game over",
}


def seconds_left(game: LiveGame) -> float | None:
    """Real seconds until the phase deadline (what people experience, whatever the speed)."""
    state = game.state
    if state is None or state.phase.deadline is None:
        return None
    return game.clock.real_delay_until(state.phase.deadline)


def status_text(game: LiveGame, seat: int | None) -> str:
    """Phase, time left, who is alive and out; the asker's own character and role when
    ``seat`` is theirs (show it privately only)."""
    state = game.state
    if state is None:
        humans = sum(not s.is_agent for s in game.seats)
        return f"Game {game.id} is in the lobby ({humans} joined), status: {game.status}."
    lines = [f"Game {game.id}: " + PHASE_NAMES[state.phase.kind].format(n=state.phase.number)]
    left = seconds_left(game)
    if left is not None:
        lines[0] += f", {int(left) // 60}:{int(left) % 60:02d} left"
    alive = [s.name for s in state.seats if s.alive]
    lines.append(f"Alive ({len(alive)}): {display_list(alive)}")
    out = [f"{s.name} ({s.role})" for s in state.seats if not s.alive]
    if out:
        lines.append("Out: " + ", ".join(out))
    if state.phase.kind is PhaseKind.VOTE and state.votes:
        votes = [
            f"{state.seats[v].name} -> {state.seats[t].name if t is not None else 'abstain'}"
            for v, t in state.votes.items()
        ]
        lines.append("Votes so far: " + ", ".join(votes))
    if seat is not None and 0 <= seat < len(state.seats):
        me = state.seats[seat]
        mine = f"You are {me.name}, {me.role}" + ("" if me.alive else " (out, watching)")
        if me.is_mafia:
            partners = [s.name for s in state.seats if s.is_mafia and s.index != seat]
            if partners:
                mine += f"; fellow mafia: {display_list(partners)}"
        lines.append(mine + ".")
    if state.over:
        lines.append("Winner: " + (state.winner or "nobody (stopped)") + ".")
    return "\n".join(lines)


# --- the post-game survey: bot.survey (these names stay for the adapters that use them) ---------

SURVEY_INTRO = survey.INTRO
SURVEY_GUESS_QUESTION = survey.GUESS.text
#: (SurveyResponse field, question), all answered on 1-5
RATING_QUESTIONS: tuple[tuple[str, str], ...] = tuple((q.key, q.text) for q in survey.RATINGS)
RATING_LABELS = survey.RATING_LABELS
SurveyAnswer = survey.SurveyAnswer
survey_choices = survey.choices
survey_response = survey.response
survey_answered = survey.answered
save_survey = survey.save


def seat_infos(engine: Engine, game_id: str) -> list[SeatInfo]:
    """A game's seats from the store, for a game no longer held in memory (the survey after a
    restart, for instance)."""
    from bot.store.models import Seat

    with Session(engine) as session:
        rows = session.exec(
            select(Seat).where(Seat.game_id == game_id).order_by(col(Seat.index))
        ).all()
    return [
        SeatInfo(r.index, r.character_name, r.user_id, r.is_agent, r.agent_kind, r.persona)
        for r in rows
    ]
