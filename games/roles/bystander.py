"""Bystander: no night action; finds the mafia by talking and voting."""

from games.roles.base import Role, register


class Bystander(Role):
    name = "bystander"
    team = "bystanders"
    description = (
        "You are a bystander. Talk, find the mafia and vote them out by day. "
        "You win when no mafia is left."
    )


BYSTANDER = register(Bystander())
