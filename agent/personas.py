"""Personalities for LLM seats, one set per side, after the persona component of AmongAgents
(Chi et al., 2024): a few lines of behaviour appended to the static prompt make seats play
differently from one another, and from game to game.

Each persona also carries a *talkativeness*: the factor on the seat's fair share of the chat
(1/N of a phase's messages) above which the scheduler prompt tells it to listen rather than
talk. That is what makes a quiet observer actually quieter, whatever the model makes of the
words.

A seat's persona is picked per game from its side's set with a seeded RNG, or configured: a
seat whose persona string is a persona's key ("skeptic") or title ("the skeptic") gets that
persona for its side; any other non-empty string is used as written.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["MAFIA_PERSONAS", "TOWN_PERSONAS", "Persona", "persona_for", "personas_for"]


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


def persona_for(side: str | None, rng: random.Random, configured: str | None = None) -> Persona:
    """The persona of a seat on ``side``: the ``configured`` one when given (a key or title of
    the side's set, else the string itself), otherwise one picked with ``rng``."""
    choices = personas_for(side)
    wanted = " ".join((configured or "").split())
    if wanted:
        folded = wanted.casefold()
        for persona in choices:
            if folded in (persona.key, persona.title, persona.title.removeprefix("the ")):
                return persona
        return Persona("custom", "any", "", wanted, 1.0)
    return rng.choice(choices)
