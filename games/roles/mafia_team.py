"""Mafia roles beyond the plain mafia: each votes on the night kill with the others and talks
in the den; some also have a night action of their own (taken in the same night)."""

from games.roles.base import Role, register

_VOTE = "You talk with your partners in the den and vote on the kill with them."


class Godfather(Role):
    name = "godfather"
    team = "mafia"
    win = "mafia"
    appears = "innocent"
    source = "Town of Salem, Mafia Universe"
    description = (
        f"You are the godfather of the mafia. {_VOTE} Investigations say you are not mafia "
        "(a framer's frame aside)."
    )


class Consort(Role):
    name = "consort"
    team = "mafia"
    win = "mafia"
    night_verb = "block"
    ability = "block"
    source = "Town of Salem (Mafia Universe's mafia roleblocker)"
    description = (
        f"You are the consort, with the mafia. {_VOTE} Each night you also visit one player: "
        "their night action does nothing tonight."
    )


class Framer(Role):
    name = "framer"
    team = "mafia"
    win = "mafia"
    night_verb = "frame"
    ability = "frame"
    source = "Town of Salem"
    description = (
        f"You are the framer, with the mafia. {_VOTE} Each night you also frame one player: "
        "tonight any investigation of them says mafia."
    )


class Janitor(Role):
    name = "janitor"
    team = "mafia"
    win = "mafia"
    night_verb = "clean"
    ability = "clean"
    uses = 2
    source = "Town of Salem"
    description = (
        f"You are the janitor, with the mafia. {_VOTE} On up to 2 nights, clean one player: if "
        "they die tonight, nobody else learns their role (you do)."
    )


class Consigliere(Role):
    name = "consigliere"
    team = "mafia"
    win = "mafia"
    night_verb = "investigate"
    ability = "investigate_role"
    source = "Town of Salem"
    description = (
        f"You are the consigliere, with the mafia. {_VOTE} Each night you also investigate one "
        "player: at dawn you learn their exact role."
    )


class Phantom(Role):
    name = "phantom"
    team = "mafia"
    win = "mafia"
    hidden_on_death = True
    source = "UltiMafia-style hidden role (no Town of Salem equivalent)"
    description = (
        f"You are the phantom, with the mafia. {_VOTE} If you die, your role is not revealed."
    )


GODFATHER = register(Godfather())
CONSORT = register(Consort())
FRAMER = register(Framer())
JANITOR = register(Janitor())
CONSIGLIERE = register(Consigliere())
PHANTOM = register(Phantom())
