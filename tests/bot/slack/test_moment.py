"""Slack actions carry the moment Slack says they were made and their id: a line typed in the
last instant of a night stays in the den whatever overtakes it, and a replayed signed request
never undoes a later choice."""

from __future__ import annotations

from bot.service.live import seating
from bot.slack.actions import ALREADY
from games.engine import assign_roles
from tests.bot.slack.conftest import (
    DEN_CONFIG,
    SlackHarness,
    line_posts,
    roles_of,
    seed_where,
    vote_out_a_bystander,
)


async def test_replayed_vote_request_does_not_undo_a_changed_vote(harness: SlackHarness) -> None:
    fake = harness.fake
    game_id = await harness.running_game(settings="day=1 vote=3600 night=3600 night_vote=3600")
    game = harness.live(game_id)
    bob, carol, dave = harness.users[1], harness.users[2], harness.users[3]
    await fake.wait_until(
        lambda: any("mafia_vote" in str(m.blocks) for m in fake.messages_in(fake.dm(bob))),
        within=10,
        what="bob's vote menu",
    )
    first, second = harness.character(game_id, carol), harness.character(game_id, dave)
    bob_seat = game.seat_of_user(bob.id)
    assert bob_seat is not None and game.state is not None
    seat_of = {s.name: s.index for s in game.state.seats}

    async def choose(name: str) -> None:
        before = len(fake.responses)
        await fake.select(user=bob, action_id="mafia_vote", value=name, channel=fake.dm(bob))
        await fake.wait_for_responses(before + 1)

    await choose(first)
    [(clicked, _)] = [
        (d, r) for d, r in fake.deliveries if d.kind == "block_actions" and first in d.body
    ]
    await choose(second)
    assert game.state.votes[bob_seat.index] == seat_of[second]

    before = len(fake.responses)
    replay = await fake.send(None, clicked)  # the same signed body, re-signed now: Bolt takes it
    assert replay.status == 200
    [answer] = (await fake.wait_for_responses(before + 1))[before:]
    assert answer.text == ALREADY
    await harness.adapter.drain()  # type: ignore[union-attr]
    assert game.state.votes[bob_seat.index] == seat_of[second]


async def test_den_line_overtaken_by_the_last_kill_vote_stays_in_the_den(
    harness: SlackHarness,
) -> None:
    """Ann types in her booth in the night vote's last instant; her own kill vote, clicked a
    moment later, reaches the app first and ends the night. Her line is still a den line; a
    bystander's line typed then is still a night line (refused), not a day line."""
    fake = harness.fake
    seed = seed_where(  # 6 people and the agent (seat 6 in the lobby), 2 mafia, all human
        lambda s: assign_roles(DEN_CONFIG, 7, s)[seating(s, 7).index(6)] == "bystander"
    )
    game_id, users = await harness.running_game_of(
        harness.people(6), f"day=10 vote=30 night=10 night_vote=6000 mafia=2 speed=10 seed={seed}"
    )
    role = roles_of(harness, game_id, users)
    ann, ben = [u for u in users if role[u.id] == "mafia"]
    game = harness.live(game_id)
    await vote_out_a_bystander(harness, game_id, users, role)
    assert game.state is not None
    alive = {s.name for s in game.state.seats if s.alive}
    victim = next(
        n for u in users if role[u.id] != "mafia" and (n := harness.character(game_id, u)) in alive
    )
    for u in (ann, ben):
        await fake.wait_until(
            lambda u=u: any(  # type: ignore[misc]
                "who do the mafia kill" in str(m.blocks) for m in fake.messages_in(fake.dm(u))
            ),
            within=15,
            what="the night vote menus",
        )
    await fake.select(user=ben, action_id="mafia_vote", value=victim, channel=fake.dm(ben))
    await fake.wait_until(lambda: len(game.state.votes) == 1, what="ben's kill vote")  # type: ignore[union-attr]

    text, stray = "last words of the night", "can't sleep, who is it?"
    typed, _ = fake.builder.user_message(
        event_type="message", user=ann, text=text, channel=None, thread_ts=None
    )
    sleeper = next(u for u in users if role[u.id] != "mafia")
    awake, _ = fake.builder.user_message(
        event_type="message", user=sleeper, text=stray, channel=None, thread_ts=None
    )
    await fake.select(user=ann, action_id="mafia_vote", value=victim, channel=fake.dm(ann))
    await fake.wait_until(
        lambda: game.state is not None and game.state.phase.kind.value == "day",
        what="the night ended by the last kill vote",
    )
    await fake.event(None, typed)  # Ann's line arrives after the click
    await fake.event(None, awake)  # and so does a bystander's, typed at night too
    ann_name = harness.character(game_id, ann)
    await fake.wait_until(
        lambda: (ann_name, text) in harness.persona_lines(fake.dm(ben)),
        what="the line in her partner's booth",
    )
    await harness.adapter.drain()  # type: ignore[union-attr]
    # A bystander's night line is refused, to its writer only, though it arrived by day.
    await fake.wait_until(
        lambda: any("not passed on" in t for t in harness.dm_texts(sleeper)),
        what="the bystander told",
    )
    shown = [t for _, t in harness.persona_lines()]
    assert text not in shown and stray not in shown  # neither is ever on the stage
    for u in users:
        if u not in (ann, ben):
            assert not any(a.get("text") == text for a in line_posts(harness, fake.dm(u)))
