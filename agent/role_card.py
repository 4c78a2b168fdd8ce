"""A role's card for the LLM seat, from the registry (:mod:`games.roles`): its name, faction,
goal, night ability (how often, on whom) and passives, and each night's question in the
ability's own words with the uses it has left."""

from __future__ import annotations

from agent.knowledge import SeatKnowledge
from games.roles import get_role

__all__ = ["night_question", "role_card"]

#: a role's goal on its card, by win condition
_GOALS: dict[str, str] = {
    "town": "the town wins when every mafia member (and any serial killer) is out",
    "mafia": "the mafia win once they are at least as many as everyone else",
    "jester": "you win if the town votes you out by day",
    "solo_killer": "you win as the last killer standing, at least as many as the rest",
    "survivor": "you win if you are alive when the game ends, whoever else wins",
    "executioner": "you win if the town votes your assigned target out by day",
}

#: each night ability's question, said to the seat that has it
_ABILITY_ASK: dict[str, str] = {
    "alert": "Go on alert tonight (choose yourself): nobody can kill you tonight and you shoot "
    "everyone who visits you, friend or foe.",
    "vest": "Put on your vest tonight (choose yourself): night attacks can't kill you tonight.",
    "block": "Pick a player to block tonight: their night action does nothing tonight.",
    "redirect": "Pick a player to swap places with tonight: whatever is aimed at them lands on "
    "you, and the reverse.",
    "frame": "Pick a player to frame tonight: any investigation of them tonight says mafia.",
    "guard": "Pick a player to guard tonight: if they are attacked, you die in their place and "
    "take their attacker with you.",
    "protect": "Pick a player to protect tonight: if they are attacked, they survive.",
    "kill": "Pick a player to kill tonight.",
    "investigate": "Pick a player to investigate tonight: at dawn you learn privately whether "
    "they are mafia.",
    "investigate_role": "Pick a player to investigate tonight: at dawn you learn privately "
    "their exact role.",
    "track": "Pick a player to follow tonight: at dawn you learn privately whom they visited.",
    "watch": "Pick a player whose house to watch tonight: at dawn you learn privately who "
    "visited them.",
    "clean": "Pick a player to clean tonight: if they die tonight, nobody else learns their "
    "role (you do).",
}


def role_card(name: str) -> str:
    """The role's card from the registry: name, faction, goal, its night ability (how often,
    on whom) and its passives. Static for the whole game (it goes in the system prompt); the
    uses left are said with each night's question (:func:`night_question`)."""
    role = get_role(name)
    parts = [f"Role card: {role.name} ({role.faction}). Goal: {_GOALS[role.win]}."]
    if role.team == "mafia":
        parts.append("Each night you vote with the mafia on whom to kill.")
    if role.ability is not None:
        how = "each night" if role.uses is None else f"on up to {role.uses} nights in the game"
        whom = {
            "never": "one other player",
            "allowed": "one player (yourself allowed)",
            "only": "yourself only",
        }[role.self_target]
        parts.append(f"Night ability: {role.night_verb} ({role.ability}), {how}, on {whom}.")
    else:
        parts.append("Night ability: none.")
    passives = [
        text
        for on, text in (
            (role.bulletproof, "night attacks can't kill you"),
            (role.appears is not None, f"investigations say you are {role.appears}"),
            (role.hidden_on_death, "your role is not revealed when you die"),
            (role.votes > 1, f"your day vote counts {role.votes} times"),
        )
        if on
    ]
    if passives:
        parts.append(f"Passives: {'; '.join(passives)}.")
    return " ".join(parts)


def night_question(k: SeatKnowledge) -> str:
    """Tonight's question for a role beyond LLMafia's: its ability's own words, and the uses
    it has left when they are limited."""
    role = get_role(k.role) if k.role is not None else None
    if role is None or role.ability is None:
        return f"Pick a player to {k.night_verb or 'act on'} tonight."
    ask = _ABILITY_ASK.get(role.ability, f"Pick a player to {role.night_verb} tonight.")
    left = k.uses_left()
    if role.uses is not None and left is not None:
        ask += f" Uses left: {left} of {role.uses}, this one included."
    return ask
