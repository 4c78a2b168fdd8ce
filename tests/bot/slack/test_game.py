"""A whole game on Slack: 5 humans (simulated through signed Slack requests) and 1 baseline
agent, from `/mafia new` to the survey, with a fast clock."""

from __future__ import annotations

import re

from sqlmodel import Session, col, select

from bot.protection.consent import CONSENT_VERSION
from bot.service.live import seating
from bot.store.models import Consent, SurveyResponse
from bot.table.text import avatar_url
from games.config import GameConfig
from games.engine import assign_roles
from tests.bot.slack.conftest import SlackHarness, seed_where

CONFIG = GameConfig(mafia=2, roles=("detective",))


def _deal_fits(seed: int) -> bool:
    """The agent is a plain bystander and both mafia and the detective are human."""
    roles = assign_roles(CONFIG, 6, seed)
    return roles[seating(seed, 6).index(5)] == "bystander"  # the agent joins last


async def test_full_game_from_lobby_to_survey(harness: SlackHarness) -> None:
    fake = harness.fake
    users = harness.people(5)
    assert harness.channel is not None
    alice = users[0]
    seed = seed_where(_deal_fits)
    game_id = await harness.new_game(
        alice,
        f"day=30 vote=60 night=30 night_vote=60 mafia=2 roles=detective speed=10 seed={seed}",
    )
    [lobby] = harness.stage()
    assert lobby.blocks is not None
    assert [e["action_id"] for e in lobby.blocks[-1]["elements"]] == [
        "mafia_join",
        "mafia_leave",
        "mafia_start",
    ]

    # Joining without consent opens the notice in a modal; agreeing records it and joins.
    for u in users:
        await fake.click(user=u, action_id="mafia_join", channel=harness.channel)
        [view] = await fake.wait_until(lambda u=u: fake.open_views(u), what="consent modal")  # type: ignore[misc]
        assert view.callback_id == "mafia_consent"
        assert "One of the players at this table is an AI agent" in str(view.blocks)
        result = await fake.submit_view(user=u, view=view)
        assert result.status == 200
        await fake.wait_until(
            lambda u=u: any("You're in" in e.text for e in fake.ephemerals(u, harness.channel)),  # type: ignore[misc]
            what="join confirmation",
        )
    with Session(harness.engine) as s:
        consents = s.exec(select(Consent)).all()
    assert sorted(c.user_id for c in consents) == sorted(u.id for u in users)
    assert {(c.version, c.agreed, c.platform) for c in consents} == {
        (CONSENT_VERSION, True, "slack")
    }
    roster_post = fake.messages_in(harness.channel)[0]
    assert roster_post.blocks is not None
    roster = roster_post.blocks[0]["text"]["text"]
    assert all(f"<@{u.id}>" in roster for u in users)  # people, never their characters

    await fake.click(user=alice, action_id="mafia_start", channel=harness.channel)
    await harness.wait_stage(
        lambda: any("The game begins with 6 players" in m.text for m in harness.stage()),
        what="the start",
    )
    game = harness.live(game_id)
    assert game.state is not None
    agent = next(s for s in game.seats if s.is_agent)
    role = {s.index: s.role for s in game.state.seats}
    assert role[agent.index] == "bystander"
    by_user = {u.id: game.seat_of_user(u.id) for u in users}
    mafia = [u for u in users if role[by_user[u.id].index] == "mafia"]  # type: ignore[union-attr]
    detective = next(u for u in users if role[by_user[u.id].index] == "detective")  # type: ignore[union-attr]
    plain = [u for u in users if role[by_user[u.id].index] == "bystander"]  # type: ignore[union-attr]
    name = {u.id: by_user[u.id].name for u in users}  # type: ignore[union-attr]
    assert len(mafia) == 2 and len(plain) == 2

    # Role cards in every booth; no channel is made for the den (its member list would tell).
    for u in users:
        await fake.wait_until(
            lambda u=u: any(f"You are {name[u.id]}." in t for t in harness.dm_texts(u)),  # type: ignore[misc]
            what="role card",
        )
    assert not fake.calls("conversations.create") and not fake.calls("conversations.invite")
    assert not any(c.is_private and not c.is_im for c in fake.workspace.channels.values())

    # Day 1: every human talks from their booth.
    for u in users:
        await fake.message_event(user=u, text=f"good evening from {name[u.id]} <!here>")
    await harness.wait_stage(
        lambda: {n for n, _ in harness.persona_lines()} >= set(name.values()), what="day talk"
    )
    # Someone types in the stage directly: only they get a reminder.
    await fake.message_event(user=plain[0], text="hi all", channel=harness.channel)
    await fake.wait_until(
        lambda: any("Speak from your booth" in e.text for e in fake.ephemerals(plain[0])),
        what="the reminder",
    )

    # Day vote: menus (alive names + Abstain) in every booth; 4 votes for one bystander.
    victim = plain[0]
    for u in users:
        await fake.wait_until(
            lambda u=u: any(  # type: ignore[misc]
                b.get("accessory", {}).get("action_id") == "mafia_vote"
                for m in fake.messages_in(fake.dm(u))
                for b in (m.blocks or [])
            ),
            within=10,
            what="vote menu",
        )
    menu = next(
        b["accessory"]
        for m in fake.messages_in(fake.dm(alice))
        for b in (m.blocks or [])
        if b.get("accessory", {}).get("action_id") == "mafia_vote"
    )
    offered = [o["value"] for o in menu["options"]]
    assert offered[-1] == "__abstain__" and name[alice.id] not in offered
    assert sorted(offered[:-1]) == sorted(s.name for s in game.seats if s.user_id != alice.id)
    first = next(u for u in users if u is not victim)
    await fake.select(user=first, action_id="mafia_vote", value="__abstain__")
    await fake.wait_until(
        lambda: any("You abstain" in e.text for e in fake.ephemerals(first)), what="abstain"
    )
    for u in users:
        target = name[mafia[0].id] if u is victim else name[victim.id]
        await fake.select(user=u, action_id="mafia_vote", value=target)  # first changes vote
    await harness.wait_stage(
        lambda: any(f"{name[victim.id]} was voted out" in m.text for m in harness.stage()),
        within=15,
        what="the elimination",
    )
    assert any(
        f"{name[first.id]} changed their vote to {name[victim.id]}" in m.text
        for m in harness.stage()
    )

    # Night: the mafia talk from their booths, each line reaching the partner's booth; the
    # detective investigates.
    await harness.wait_stage(lambda: any("Nighttime" in m.text for m in harness.stage()))
    for u in mafia:
        await fake.message_event(user=u, text=f"{name[u.id]} here, let's pick someone")
    for u, partner in zip(mafia, mafia[::-1], strict=True):
        await fake.wait_until(
            lambda u=u, p=partner: (  # type: ignore[misc]
                (name[p.id], f"{name[p.id]} here, let's pick someone")
                in harness.persona_lines(fake.dm(u))
            ),
            what="den talk in the partner's booth",
        )
    await fake.wait_until(
        lambda: any(
            b.get("accessory", {}).get("action_id") == "mafia_act"
            for m in fake.messages_in(fake.dm(detective))
            for b in (m.blocks or [])
        ),
        what="night menu",
    )
    await fake.select(user=detective, action_id="mafia_act", value=name[mafia[0].id])
    await fake.wait_until(
        lambda: any("You chose to investigate" in t for t in harness.dm_texts(detective)),
        what="night action confirmation",
    )
    for u in mafia:
        await fake.wait_until(
            lambda u=u: (  # type: ignore[misc]
                sum(
                    b.get("accessory", {}).get("action_id") == "mafia_vote"
                    for m in fake.messages_in(fake.dm(u))
                    for b in (m.blocks or [])
                )
                >= 1
                and any(
                    "who do the mafia kill" in str(m.blocks) for m in fake.messages_in(fake.dm(u))
                )
            ),
            within=10,
            what="night vote menu",
        )
        await fake.select(user=u, action_id="mafia_vote", value=agent.name)

    # Mafia 2, detective 1: the mafia win; the stage says who was what.
    await harness.wait_stage(
        lambda: any("Mafia wins!" in m.text for m in harness.stage()), within=15, what="the end"
    )
    assert any(f"{name[mafia[0].id]} IS mafia" in t for t in harness.dm_texts(detective))
    assert any(f"{agent.name} was killed during the night" in m.text for m in harness.stage())
    for u in mafia:  # the den's vote lines reached both mafia booths, and nobody else's
        assert any(f"voted for {agent.name}" in t for t in harness.dm_texts(u))
    assert not any("voted for" in t for u in (detective, *plain) for t in harness.dm_texts(u))
    for u in users:  # no one's own den line came back to them
        assert not any(n == name[u.id] for n, _ in harness.persona_lines(fake.dm(u)))

    # The survey, in every booth: which player was the AI, and three ratings.
    for i, u in enumerate(users):
        await fake.wait_until(
            lambda u=u: any("survey" in t.lower() for t in harness.dm_texts(u)),  # type: ignore[misc]
            what="survey",
        )
        await fake.click(user=u, action_id="mafia_survey_open", channel=fake.dm(u))
        [view] = await fake.wait_until(lambda u=u: fake.open_views(u), what="survey modal")  # type: ignore[misc]
        guess = agent.name if i % 2 == 0 else name[next(x for x in users if x is not u).id]
        await fake.submit_view(
            user=u,
            view=view,
            values={
                "guessed_name": guess,
                "similarity": "4",
                "timing": str(1 + i % 5),
                "relevance": "3",
                "comments": "fun",
            },
        )
    await fake.wait_until(
        lambda: all(any("Thank you" in t for t in harness.dm_texts(u)) for u in users),
        what="thanks",
    )
    with Session(harness.engine) as s:
        rows = s.exec(select(SurveyResponse).order_by(col(SurveyResponse.seat_index))).all()
    assert len(rows) == 5 and {r.source for r in rows} == {"slack"}
    assert {r.seat_index for r in rows} == {by_user[u.id].index for u in users}  # type: ignore[union-attr]
    for r in rows:
        assert r.identified_ai == (r.guessed_name == agent.name)
        assert r.about_seat_index == agent.index and r.similarity == 4.0
        assert r.original_scale == "1-5" and r.comments == "fun"

    # Agent and humans look the same on the stage: a character name and its picture.
    posts = [c for c in fake.calls("chat.postMessage", ok=True) if c.args.get("username")]
    speakers = {c.args["username"] for c in posts}
    assert agent.name in speakers, "the agent said nothing on day 1"
    assert speakers <= {s.name for s in game.seats}
    for c in posts:
        assert c.args["icon_url"] == avatar_url(c.args["username"])
    assert len({frozenset(c.args) for c in posts}) == 1  # same fields for everybody
    texts = " ".join(m.text for m in fake.messages_in(harness.channel) if m.source != "user")
    for u in users:
        assert u.id not in texts and not re.search(rf"\b{u.name}\b", texts, re.IGNORECASE)
    assert "<!here>" not in texts and "@\u2060here" in texts
