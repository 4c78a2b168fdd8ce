"""Doctor: each night protects one player from the kill, never the same player twice running."""

from collections.abc import Mapping

from games.roles.base import Role, register


class Doctor(Role):
    name = "doctor"
    team = "bystanders"
    night_verb = "protect"
    ability = "protect"
    self_target = "allowed"
    priority = 10
    source = "LLMafia (Town of Salem, Mafia Universe)"
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


DOCTOR = register(Doctor())
