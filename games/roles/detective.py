"""Detective: each night learns whether one other living player is mafia."""

from collections.abc import Mapping

from games.roles.base import NightContext, Role, Team, register


class Detective(Role):
    name = "detective"
    team = "bystanders"
    night_verb = "investigate"
    priority = 50
    description = (
        "You are the detective, on the bystanders' side. Each night, choose one player to "
        "investigate: at dawn you learn privately whether they are mafia."
    )

    def check_target(
        self, actor: int, target: int, alive: frozenset[int], last_targets: Mapping[int, int]
    ) -> str | None:
        if target == actor:
            return "You can't investigate yourself."
        return None

    def resolve(
        self, actor: int, target: int, ctx: NightContext, teams: Mapping[int, Team]
    ) -> None:
        ctx.inspections[actor] = (target, teams[target] == "mafia")


DETECTIVE = register(Detective())
