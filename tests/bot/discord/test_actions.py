"""Whose click it is, without Discord: `click_seat` finds the seat or says why not."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

from bot.discord.actions import CLOSED, ELIMINATED, NOT_A_PLAYER, NOT_RUNNING, OVER, click_seat
from bot.service.clock import GameClock
from bot.service.live import LiveGame, SeatInfo
from bot.service.timers import SchedulerTimers
from games.config import GameConfig
from games.engine import new_game
from games.state import PhaseKind

T0 = datetime(2026, 1, 1, tzinfo=UTC)
NAMES = ["Ash", "Bo", "Cy", "Di", "Ed"]


def game() -> LiveGame:
    config = GameConfig()
    state, _ = new_game(config, NAMES, 7, T0)
    clock = GameClock(start=T0)
    seats = [SeatInfo(i, n, str(100 + i), is_agent=False) for i, n in enumerate(NAMES)]
    seats[4] = SeatInfo(4, "Ed", None, is_agent=True)
    return LiveGame(
        id="g1",
        config=config,
        seed=7,
        status="running",
        clock=clock,
        timers=SchedulerTimers(None, clock),
        seats=seats,
        state=state,
    )


def test_a_player_of_the_current_phase_gets_their_seat() -> None:
    g = game()
    assert g.state is not None
    assert click_seat(g, 102, g.state.phase.seq) == 2


def test_why_a_click_is_not_taken() -> None:
    g = game()
    assert g.state is not None
    seq = g.state.phase.seq
    assert click_seat(None, 102, seq) == NOT_RUNNING
    assert click_seat(g, 999, seq) == NOT_A_PLAYER
    assert click_seat(g, 102, seq - 1) == CLOSED  # a menu of a phase that is over
    seats = tuple(replace(s, alive=False) if s.index == 2 else s for s in g.state.seats)
    g.state = replace(g.state, seats=seats)
    assert click_seat(g, 102, seq) == ELIMINATED
    g.state = replace(g.state, phase=replace(g.state.phase, kind=PhaseKind.OVER))
    assert click_seat(g, 101, seq) == OVER
