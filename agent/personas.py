"""Personalities for LLM seats, one set per side, after the persona component of AmongAgents
(Chi et al., 2024): a few lines of behaviour appended to the static prompt make seats play
differently from one another, and from game to game.

Each persona also carries a *talkativeness*: the factor on the seat's fair share of the chat
(1/N of a phase's messages) above which the scheduler prompt tells it to listen rather than
talk. That is what makes a quiet observer actually quieter, whatever the model makes of the
words.

A seat's persona is picked per game from its side's set with a seeded RNG, or chosen by key:
a seat whose persona string is a persona's key ("skeptic") or title ("the skeptic") gets that
persona for its side. Free text is never used as a persona: only the operator's own personas
(:func:`operator_personas`, from the bot's configuration) add keys to choose from. A key the
seat's side does not have (a stale or unknown one) gets a drawn persona.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = [
    "MAFIA_PERSONAS",
    "PERSONA_KEYS",
    "TOWN_PERSONAS",
    "Persona",
    "nearest_key",
    "operator_personas",
    "persona_for",
    "persona_key",
    "personas_for",
]


@dataclass(frozen=True)
class Persona:
    key: str
    side: str  # "bystanders" | "mafia" | "any"
    title: str
    behaviour: str
    talkativeness: float = 1.0

    @property
    def text(self) -> str:
        """What goes into the prompt after "Your personality:"."""
        if not self.title:
            return self.behaviour
        return f"{self.title[0].upper()}{self.title[1:]}. {self.behaviour}"


TOWN_PERSONAS: tuple[Persona, ...] = (
    Persona(
        "observer",
        "bystanders",
        "the quiet observer",
        "You are on the quiet side: you read more than you write and speak up when you have "
        "noticed something concrete, like a vote that doesn't fit what someone said. When you "
        "do talk, it is short and to the point.",
        0.7,
    ),
    Persona(
        "skeptic",
        "bystanders",
        "the skeptic",
        "You doubt claims until they are backed up. You ask people why they suspect who they "
        "suspect, you poke holes in stories, and you won't vote on a hunch alone.",
        1.0,
    ),
    Persona(
        "leader",
        "bystanders",
        "the leader",
        "You are outgoing and like to organise the table: you sum up where things stand, "
        "propose whom to vote for and ask the quiet ones to speak. You commit to a choice and "
        "say why.",
        1.3,
    ),
    Persona(
        "charmer",
        "bystanders",
        "the charmer",
        "You are warm and friendly, joke a little and make people feel heard, so they tell you "
        "things. Under the friendliness you keep track of who is steering the votes.",
        1.1,
    ),
    Persona(
        "analyst",
        "bystanders",
        "the analyst",
        "You keep track of who voted for whom and who said what, and you point out "
        "contradictions calmly, with the facts rather than feelings.",
        0.9,
    ),
)

MAFIA_PERSONAS: tuple[Persona, ...] = (
    Persona(
        "observer",
        "mafia",
        "the quiet observer",
        "You stay quiet and blend in: you rarely start an accusation, you agree with whoever "
        "sounds convincing when it suits your team, and you speak mostly when spoken to.",
        0.7,
    ),
    Persona(
        "skeptic",
        "mafia",
        "the skeptic",
        "You question everything, which gives you cover: you cast doubt on claims that "
        "threaten your team (a detective claim above all) and ask for proof nobody can give.",
        1.0,
    ),
    Persona(
        "leader",
        "mafia",
        "the leader",
        "You are outgoing and take charge: you sum up the day, propose whom to vote for and "
        "steer the table toward a bystander, while looking like the most helpful player there.",
        1.3,
    ),
    Persona(
        "charmer",
        "mafia",
        "the charmer",
        "You are friendly and easy to like; you build trust early, agree warmly with others, "
        "and quietly nudge suspicion away from your team without ever defending them too hard.",
        1.1,
    ),
    Persona(
        "deflector",
        "mafia",
        "the deflector",
        "When pressure comes your way or your team's, you answer briefly and turn the "
        "conversation to someone else's odd vote or silence, with a plausible reason.",
        0.9,
    ),
)


def personas_for(side: str | None) -> tuple[Persona, ...]:
    """The personas of a side ("mafia" or "bystanders"; None: the bystanders' set)."""
    return MAFIA_PERSONAS if side == "mafia" else TOWN_PERSONAS


def persona_for(
    side: str | None,
    rng: random.Random,
    configured: str | None = None,
    extra: Sequence[Persona] = (),
) -> Persona:
    """The persona of a seat on ``side``: the ``configured`` key's (a key or title of the
    side's set, or of the operator's ``extra`` personas), otherwise one picked with ``rng``.
    Text that names no persona is never used as one."""
    choices = personas_for(side)
    wanted = " ".join((configured or "").split()).casefold()
    if wanted:
        for persona in (*choices, *extra):
            if persona.side in ("any", side or "bystanders") and wanted in _names(persona):
                return persona
    return rng.choice(choices)


def _names(persona: Persona) -> tuple[str, ...]:
    title = persona.title.casefold()
    return (persona.key.casefold(), title, title.removeprefix("the "))


#: every built-in persona's key, in the order a menu lists them
PERSONA_KEYS: tuple[str, ...] = tuple(
    dict.fromkeys(p.key for p in (*TOWN_PERSONAS, *MAFIA_PERSONAS))
)


def persona_key(value: str, extra: Sequence[Persona] = ()) -> str | None:
    """The key ``value`` names (a key or a title, any case), or None when it names none."""
    wanted = " ".join(value.split()).casefold()
    for persona in (*TOWN_PERSONAS, *MAFIA_PERSONAS, *extra):
        if wanted in _names(persona):
            return persona.key
    return None


#: words of a free description and the built-in persona they are nearest to
_HINTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("observer", ("quiet", "observ", "shy", "listen", "calm", "reserved", "silent", "few words")),
    ("skeptic", ("skeptic", "sceptic", "doubt", "suspicious", "question", "cynic", "paranoid")),
    ("leader", ("lead", "outgoing", "organis", "organiz", "bold", "loud", "confident", "boss")),
    ("charmer", ("charm", "friendly", "warm", "funny", "joke", "nice", "kind", "cheerful")),
    ("analyst", ("analy", "logic", "fact", "careful", "detail", "methodical", "rational")),
    ("deflector", ("deflect", "evasive", "sneaky", "dodg", "slippery")),
)


def nearest_key(text: str, extra: Sequence[Persona] = ()) -> str | None:
    """The persona a free description is nearest to: a key or title it names, else the first
    built-in whose hint words it uses, else None."""
    named = persona_key(text, extra)
    if named is not None:
        return named
    folded = text.casefold()
    for key, hints in _HINTS:
        if any(h in folded for h in hints):
            return key
    return None


def operator_personas(raw: Mapping[str, object]) -> tuple[Persona, ...]:
    """The operator's own personas from their configuration: key -> text, or key ->
    ``{"text": ..., "talkativeness": ..., "title": ...}``. Raises ValueError with one clear
    line on a bad entry (a key that is not one lowercase word, a built-in's key, no text)."""
    out: list[Persona] = []
    for key, value in raw.items():
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise ValueError(f"persona key {key!r} must be one lowercase word (a-z, 0-9, -, _)")
        if key in PERSONA_KEYS:
            raise ValueError(f"persona key {key!r} is a built-in persona's; choose another")
        fields: Mapping[str, object] = value if isinstance(value, Mapping) else {"text": value}
        text = fields.get("text")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"persona {key!r} has no text")
        talk = fields.get("talkativeness", 1.0)
        if not isinstance(talk, int | float) or not 0.1 <= float(talk) <= 3.0:
            raise ValueError(f"persona {key!r}: talkativeness must be a number from 0.1 to 3")
        title = fields.get("title", "")
        out.append(Persona(key, "any", str(title or ""), " ".join(text.split())[:600], float(talk)))
    return tuple(out)


_KEY = re.compile(r"[a-z0-9][a-z0-9_-]{0,31}")
