"""The mafia's den on Slack lives in the mafia humans' booths, never in a channel: a channel's
member list would show a human whose partner is the agent that they are the only person in it.
These tests check that no channel is made, that every den line reaches the other mafia humans'
booths in the same shape whoever said it (agent or human) and never comes back to its speaker,
and that the night vote works from a booth."""

from __future__ import annotations

from bot.table.text import avatar_url
from tests.bot.slack.conftest import (
    LINE_KEYS,
    SlackHarness,
    agent_role,
    line_posts,
    roles_of,
    seed_where,
    start,
    vote_out_a_bystander,
)


async def test_agent_partner_den_lines_reach_the_booth_like_a_human_partners(
    harness: SlackHarness,
) -> None:
    fake = harness.fake
    fake.revoke_scope("groups:write")  # the den needs no channel permissions any more
    seed = seed_where(lambda s: agent_role(s) == "mafia")
    users = harness.people(5)
    harness.consent_all(users)
    reply = await harness.slash(
        users[0], f"new day=10 vote=30 night=600 night_vote=600 mafia=2 speed=10 seed={seed}"
    )
    assert "is open" in reply and "missing permissions" not in reply
    game_id = reply.split("`")[1]
    await harness.join_all(users)
    assert "has started" in await harness.slash(users[0], "start")
    for u in users:
        await fake.wait_until(
            lambda u=u: any("You are" in t for t in harness.dm_texts(u)),  # type: ignore[misc]
            what="role card",
        )
    game = harness.live(game_id)
    agent = next(s for s in game.seats if s.is_agent)
    role = roles_of(harness, game_id, users)
    [human] = [u for u in users if role[u.id] == "mafia"]
    others = [u for u in users if u is not human]
    booth = fake.dm(human)
    me = harness.character(game_id, human)
    assert any(agent.name in t for t in harness.dm_texts(human))  # the role card names them

    await vote_out_a_bystander(harness, game_id, users, role)
    await fake.message_event(user=human, text="who do we take tonight?")
    await fake.wait_until(
        lambda: any(n == agent.name for n, _ in harness.persona_lines(booth)),
        within=20,
        what="the agent's den line in the human's booth",
    )
    await harness.adapter.drain()  # type: ignore[union-attr]

    # No channel was made, nobody was invited: only the booths carry the den.
    assert not fake.calls("conversations.create") and not fake.calls("conversations.invite")
    assert not any(c.is_private and not c.is_im for c in fake.workspace.channels.values())
    # The agent's den lines came the stage's way: its name and picture, the same fields a
    # human's line has (on the stage, and in a booth: see the two-human test).
    den = line_posts(harness, booth)
    assert den and {a["username"] for a in den} == {agent.name}
    for args in den:
        assert frozenset(args) == LINE_KEYS
        assert args["icon_url"] == avatar_url(agent.name)
    assert {frozenset(a) for a in line_posts(harness, harness.channel)} <= {LINE_KEYS}
    # The human's own line is in the game's den, not echoed to them, not on the stage, and no
    # town booth hears the den.
    assert (me, "who do we take tonight?") not in harness.persona_lines(booth)
    assert all(t != "who do we take tonight?" for _, t in harness.persona_lines())
    for u in others:
        assert not line_posts(harness, fake.dm(u))
    history = await harness.service.history(game_id)  # type: ignore[union-attr]
    assert any(
        e["kind"] == "message" and e["place"] == "den" and e["text"] == "who do we take tonight?"
        for e in history
    )


async def test_two_human_mafia_hear_each_other_and_vote_from_their_booths(
    harness: SlackHarness,
) -> None:
    fake = harness.fake
    seed = seed_where(lambda s: agent_role(s) == "bystander")
    game_id, users = await start(
        harness, f"day=10 vote=30 night=60 night_vote=600 mafia=2 speed=10 seed={seed}"
    )
    role = roles_of(harness, game_id, users)
    mafia = [u for u in users if role[u.id] == "mafia"]
    town = [u for u in users if role[u.id] != "mafia"]
    name = {u.id: harness.character(game_id, u) for u in users}
    agent = next(s for s in harness.live(game_id).seats if s.is_agent)
    await vote_out_a_bystander(harness, game_id, users, role)

    for u in mafia:
        await fake.message_event(user=u, text=f"{name[u.id]} thinks we strike now")
    for u, partner in zip(mafia, mafia[::-1], strict=True):
        line = (name[partner.id], f"{name[partner.id]} thinks we strike now")
        await fake.wait_until(
            lambda u=u, line=line: line in harness.persona_lines(fake.dm(u)),  # type: ignore[misc]
            what="the partner's den line",
        )
    await harness.adapter.drain()  # type: ignore[union-attr]
    for u in mafia:
        booth = fake.dm(u)
        assert all(n != name[u.id] for n, _ in harness.persona_lines(booth))  # no echo
        posts = line_posts(harness, booth)
        assert posts and {frozenset(a) for a in posts} == {LINE_KEYS}
    for u in town:
        assert not line_posts(harness, fake.dm(u))

    # The night vote: each mafia picks from the menu in their own booth.
    for u in mafia:
        await fake.wait_until(
            lambda u=u: any(  # type: ignore[misc]
                "who do the mafia kill" in str(m.blocks) for m in fake.messages_in(fake.dm(u))
            ),
            within=15,
            what="the night vote menu in the booth",
        )
    before = len(fake.responses)
    await fake.select(
        user=mafia[0], action_id="mafia_vote", value=agent.name, channel=fake.dm(mafia[0])
    )
    await fake.wait_for_responses(before + 1)
    assert f"Your vote: {agent.name}" in fake.responses[before].text
    await fake.select(
        user=mafia[1], action_id="mafia_vote", value=agent.name, channel=fake.dm(mafia[1])
    )
    await harness.wait_stage(
        lambda: any(f"{agent.name} was killed during the night" in m.text for m in harness.stage()),
        within=15,
        what="the night's result",
    )
    await harness.adapter.drain()  # type: ignore[union-attr]
    for u in mafia:  # each vote line reached both booths (the voter's too), as the den did
        for voter in mafia:
            assert any(f"{name[voter.id]} voted for {agent.name}" in t for t in harness.dm_texts(u))
    for u in town:
        assert not any("voted for" in t for t in harness.dm_texts(u))
