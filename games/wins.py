"""Who has won: the factions' goals and the neutrals' own (pure functions over the state).

- Town ("bystanders"): no mafia and no serial killer alive.
- Mafia: no serial killer alive, and the mafia are at least as many as the rest.
- Serial killer: the only killer alive, and at least as many as the rest (one against one).
- Nobody alive: a draw (no winner, the reason starts with "draw:"). Days in a row with nobody
  voted out or killed also end the game in a draw (``GameConfig.draw_after_quiet_days``, in the
  engine).
- Jester: voted out by day (the game goes on). Executioner: their target voted out by day
  while they live (the game goes on); if the target dies another way they become a jester.
  Survivor: alive when the game ends, whoever else wins.
"""

from __future__ import annotations

from games.events import DRAW
from games.roles import get_role
from games.state import GameState


def winner(state: GameState) -> tuple[str | None, str] | None:
    """(winner, reason) when the game is decided, else None."""
    mafia = len(state.alive_mafia())
    alive = state.alive()
    solo = [i for i in alive if get_role(state.seats[i].role).win == "solo_killer"]
    others = len(alive) - mafia - len(solo)
    if not solo:  # the LLMafia rule
        if mafia == 0:
            return (
                ("bystanders", "no mafia are left") if alive else (None, f"{DRAW}: nobody is left")
            )
        if mafia >= others:
            return "mafia", "the mafia are at least as many as the rest"
    elif mafia == 0 and len(solo) == 1 and others <= 1:
        role = state.seats[solo[0]].role
        return role, f"the {role.replace('_', ' ')} is the last killer standing"
    return None


def win_reason(team: str) -> str:
    if team == "bystanders":
        return "no mafia are left"
    return "the mafia are at least as many as the rest"


def survivors(state: GameState) -> list[int]:
    """Living survivors when the game ends (they win alongside the winner)."""
    return [s.index for s in state.seats if s.alive and get_role(s.role).win == "survivor"]


def lynch_wins(state: GameState, voted_out: int) -> list[tuple[int, str]]:
    """Neutral seats whose goal a day elimination of ``voted_out`` meets: (seat, reason)."""
    out: list[tuple[int, str]] = []
    role = get_role(state.seats[voted_out].role)
    if role.win == "jester":
        out.append((voted_out, "the jester was voted out"))
    for exe, target in sorted(state.executions.items()):
        if target == voted_out and state.seats[exe].alive and exe not in state.solo_won:
            out.append((exe, f"the executioner's target {state.seats[target].name} was voted out"))
    return out
