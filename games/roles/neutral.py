"""Neutral roles: on nobody's side, each with a win condition of their own (Town of Salem)."""

from games.roles.base import Role, register


class Jester(Role):
    name = "jester"
    team = "neutral"
    win = "jester"
    source = "Town of Salem"
    description = (
        "You are the jester, on nobody's side. You win if the town votes you out by day: look "
        "suspicious, but not too obviously. The game goes on after your win."
    )


class SerialKiller(Role):
    name = "serial_killer"
    team = "neutral"
    win = "solo_killer"
    night_verb = "attack"  # (not "kill": that is the mafia's night vote)
    ability = "kill"
    bulletproof = True
    source = "Town of Salem"
    description = (
        "You are the serial killer, on nobody's side. Each night, kill one player; night "
        "attacks can't kill you. You win when you are the last killer standing and at least as "
        "many as the rest. Investigations say you are guilty."
    )


class Survivor(Role):
    name = "survivor"
    team = "neutral"
    win = "survivor"
    night_verb = "vest"
    ability = "vest"
    self_target = "only"
    uses = 3
    source = "Town of Salem"
    description = (
        "You are the survivor, on nobody's side. You win if you are alive when the game ends, "
        "whoever else wins. On up to 3 nights, put on a vest (choose yourself): night attacks "
        "can't kill you then."
    )


class Executioner(Role):
    name = "executioner"
    team = "neutral"
    win = "executioner"
    source = "Town of Salem"
    description = (
        "You are the executioner, on nobody's side. At the start you are told one bystander: "
        "you win if the town votes them out by day. If they die another way, you become a "
        "jester."
    )


JESTER = register(Jester())
SERIAL_KILLER = register(SerialKiller())
SURVIVOR = register(Survivor())
EXECUTIONER = register(Executioner())
