"""Mafia: knows the partners, talks in the den at night, votes on the night kill."""

from games.roles.base import Role, register


class Mafia(Role):
    name = "mafia"
    team = "mafia"
    win = "mafia"
    description = (
        "You are mafia. At night you talk with your partners in secret and vote on a bystander "
        "to kill. By day, blend in. You win when the mafia are at least as many as the rest."
    )


MAFIA = register(Mafia())
