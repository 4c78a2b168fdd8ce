"""Town roles beyond the LLMafia three: each one data entry over the ability primitives.

Names and rules follow Town of Salem (ToS) and Mafia Universe (MU); where a rule is simplified
the description says how it plays here (docs/roles.md lists the sources).
"""

from games.roles.base import Role, register


class Bodyguard(Role):
    name = "bodyguard"
    night_verb = "guard"
    ability = "guard"
    source = "Town of Salem"
    description = (
        "You are the bodyguard, on the bystanders' side. Each night, guard one other player: "
        "if they are attacked, you die in their place and take their attacker with you."
    )


class Vigilante(Role):
    name = "vigilante"
    night_verb = "shoot"
    ability = "kill"
    uses = 2
    source = "Town of Salem, Mafia Universe"
    description = (
        "You are the vigilante, on the bystanders' side. You have 2 bullets: on a night of your "
        "choice, shoot one player. Choose well: a bystander you shoot is lost to your side."
    )


class Escort(Role):
    name = "escort"
    night_verb = "block"
    ability = "block"
    source = "Town of Salem (the roleblocker of Mafia Universe)"
    description = (
        "You are the escort, on the bystanders' side. Each night, visit one player: their "
        "night action does nothing tonight. A mafia you block still votes, but cannot be the "
        "one who kills."
    )


class Tracker(Role):
    name = "tracker"
    night_verb = "track"
    ability = "track"
    source = "Town of Salem, Mafia Universe"
    description = (
        "You are the tracker, on the bystanders' side. Each night, follow one player: at dawn "
        "you learn privately whom they visited (the mafia's killer visits the victim)."
    )


class Lookout(Role):
    name = "lookout"
    night_verb = "watch"
    ability = "watch"
    source = "Town of Salem (the watcher of Mafia Universe)"
    description = (
        "You are the lookout, on the bystanders' side. Each night, watch one player's house: "
        "at dawn you learn privately who visited them."
    )


class Mayor(Role):
    name = "mayor"
    votes = 2
    source = "Mafia Universe's double voter (Town of Salem's mayor, always revealed)"
    description = (
        "You are the mayor, on the bystanders' side. Your day vote counts twice. You have no "
        "night action."
    )


class Veteran(Role):
    name = "veteran"
    night_verb = "alert"
    ability = "alert"
    self_target = "only"
    uses = 3
    source = "Town of Salem"
    description = (
        "You are the veteran, on the bystanders' side. On up to 3 nights, go on alert (choose "
        "yourself): you can't be killed that night and you shoot everyone who visits you, "
        "friend or foe."
    )


class Bulletproof(Role):
    name = "bulletproof"
    bulletproof = True
    source = "Mafia Universe (bulletproof townie)"
    description = (
        "You are bulletproof, on the bystanders' side: night attacks can't kill you (a vote "
        "can). You have no night action."
    )


class Investigator(Role):
    name = "investigator"
    night_verb = "investigate"
    ability = "investigate_role"
    source = "Mafia Universe's role cop (Town of Salem's investigator, with an exact answer)"
    description = (
        "You are the investigator, on the bystanders' side. Each night, investigate one player: "
        "at dawn you learn their exact role. A godfather shows as a bystander, a framed player "
        "as mafia."
    )


class BusDriver(Role):
    name = "bus_driver"
    night_verb = "swap with"
    ability = "redirect"
    source = "Town of Salem's bus driver, simplified to swap with the driver"
    description = (
        "You are the bus driver, on the bystanders' side. Each night, swap places with one "
        "other player: whatever was aimed at them tonight lands on you, and the reverse."
    )


class Miller(Role):
    name = "miller"
    appears = "guilty"
    source = "Mafia Universe"
    description = (
        "You are the miller, on the bystanders' side, but you look guilty: an investigation "
        "says you are mafia. You have no night action."
    )


BODYGUARD = register(Bodyguard())
VIGILANTE = register(Vigilante())
ESCORT = register(Escort())
TRACKER = register(Tracker())
LOOKOUT = register(Lookout())
MAYOR = register(Mayor())
VETERAN = register(Veteran())
BULLETPROOF = register(Bulletproof())
INVESTIGATOR = register(Investigator())
BUS_DRIVER = register(BusDriver())
MILLER = register(Miller())
