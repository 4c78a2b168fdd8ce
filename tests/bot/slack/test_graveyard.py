"""The graveyard on Slack (`bot.slack.graveyard`, on with ``slack_graveyard``): the agent is
voted out on day 1, a person on day 2; the person greets the graveyard from their booth and
the dead agent answers there, under its character's name, within a person's latency; nothing
it says reaches the living (their booths or the stage)."""

from __future__ import annotations

import time

from bot.service.live import seating
from games.config import GameConfig
from games.engine import assign_roles
from tests.bot.slack.conftest import SlackHarness, roles_of, seed_where

SPEED = 10.0


def _agent_bystander(seed: int) -> bool:
    return assign_roles(GameConfig(mafia=1), 6, seed)[seating(seed, 6).index(5)] == "bystander"


async def _vote_out(harness: SlackHarness, game_id: str, name: str, day: int) -> None:
    assert harness.service is not None
    game = harness.live(game_id)
    await harness.fake.wait_until(
        lambda: (
            game.state is not None
            and game.state.phase.kind.value == "vote"
            and game.state.phase.number == day
        ),
        within=30,
        what=f"day {day}'s vote",
    )
    state = game.state
    assert state is not None
    for seat in game.seats:
        if not seat.is_agent and seat.index in state.alive():
            target = (
                name
                if seat.name != name
                else next(s.name for s in game.seats if s.name != name and s.index in state.alive())
            )
            await harness.service.vote(game_id, seat.index, target)
    await harness.fake.wait_until(
        lambda: game.state is not None and game.state.phase.kind.value != "vote",
        within=30,
        what="the vote's end",
    )


async def test_a_dead_agent_answers_a_greeting_in_the_slack_graveyard(
    harness: SlackHarness,
) -> None:
    assert harness.adapter is not None
    harness.adapter.graveyard.on = True
    fake = harness.fake
    seed = seed_where(_agent_bystander)
    game_id, users = await harness.running_game_of(
        harness.people(5),
        f"day=30 vote=3600 night=30 night_vote=30 mafia=1 speed={SPEED:g} seed={seed}",
    )
    game = harness.live(game_id)
    agent = next(s.name for s in game.seats if s.is_agent)
    await _vote_out(harness, game_id, agent, 1)
    stage_before = len(harness.persona_lines())
    booths_before = {u.id: len(harness.persona_lines(harness.fake.dm(u))) for u in users}
    role = roles_of(harness, game_id, users)
    dead = next(u for u in users if role[u.id] != "mafia")
    await _vote_out(harness, game_id, harness.character(game_id, dead), 2)
    assert game.state is not None and not game.state.over
    booth = fake.dm(dead)
    await fake.wait_until(
        lambda: any("graveyard now" in t for t in harness.dm_texts(dead)), what="the note"
    )

    def answers() -> list[str]:
        return [t for n, t in harness.persona_lines(booth) if n == agent]

    answered = False
    for greeting in ("hey anyone here?", "hello??", f"{agent} you here?", "hi"):
        await fake.message_event(user=dead, text=greeting, channel=booth)
        sent = time.monotonic()
        try:
            await fake.wait_until(lambda: bool(answers()), within=90.0 / SPEED + 3.0)
        except (TimeoutError, AssertionError):
            continue
        assert time.monotonic() - sent >= 1.0 / SPEED  # an answer's latency, not at once
        answered = True
        break
    assert answered, "the dead agent never answered a greeting in the graveyard"

    # never to the living: no line of the agent's since its death in a living person's booth
    # or on the stage
    said = set(answers())
    for u in users:
        if u is not dead:
            later = harness.persona_lines(fake.dm(u))[booths_before[u.id] :]
            assert not [t for n, t in later if n == agent or t in said]
    assert not [n for n, _ in harness.persona_lines()[stage_before:] if n == agent]
