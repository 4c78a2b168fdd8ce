"""Doctor: each night protects one player from the kill, never the same player twice running."""

from collections.abc import Mapping

from games.roles.base import NightContext, Role, Team, register


class Doctor(Role):
    name = "doctor"
    team = "bystanders"
    night_verb = "protect"
    priority = 10
    description = (
        "You are the doctor, on the bystanders' side. Each night, choose one player to protect "
        "(yourself allowed): if the mafia pick them, nobody dies. You can't protect the same "
        "player two nights running."
    )

    def check_target(
        self, actor: int, target: int, alive: frozenset[int], last_targets: Mapping[int, int]
    ) -> str | None:
        if last_targets.get(actor) == target:
            return "You protected that player last night; choose someone else tonight."
        return None

    def resolve(
        self, actor: int, target: int, ctx: NightContext, teams: Mapping[int, Team]
    ) -> None:
        ctx.protected.add(target)


DOCTOR = register(Doctor())
