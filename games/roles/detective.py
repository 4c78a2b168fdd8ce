"""Detective: each night learns whether one other living player is mafia."""

from games.roles.base import Role, register


class Detective(Role):
    name = "detective"
    team = "bystanders"
    night_verb = "investigate"
    ability = "investigate"
    priority = 50
    source = "LLMafia (the cop of Mafia Universe, the sheriff of Town of Salem)"
    description = (
        "You are the detective, on the bystanders' side. Each night, choose one player to "
        "investigate: at dawn you learn privately whether they are mafia."
    )


DETECTIVE = register(Detective())
