"""A whole Slack game with a custom setup of six roles (5 humans and 1 baseline agent): the
jester's win, an investigator's private result at dawn in their booth, the town's win."""

from __future__ import annotations

import threading

import pytest

from bot.service.live import seating
from bot.table.balance_estimate import ESTIMATING
from games.config import GameConfig
from games.engine import assign_roles
from tests.bot.balance_helpers import SHOWN, heartbeat, install, release_after_beats
from tests.bot.slack.conftest import SlackHarness, seed_where
from tests.fakes.slack.model import FakeUser as User
from tests.fakes.slack.server import FakeSlack

ROLES = ("godfather", "investigator", "tracker", "jester", "doctor", "bystander")
CONFIG = GameConfig(role_list=ROLES)


def _deal_fits(seed: int) -> bool:
    """The godfather, the investigator and the jester are people (the agent joins last)."""
    return assign_roles(CONFIG, 6, seed)[seating(seed, 6).index(5)] in ROLES[2:3] + ROLES[4:]


async def _menu(fake: FakeSlack, user: User, action: str, what: str, words: str = "") -> None:
    """Wait for a menu in ``user``'s booth (one whose post says ``words``, if given)."""
    await fake.wait_until(
        lambda: any(
            b.get("accessory", {}).get("action_id") == action and words in str(m.blocks)
            for m in fake.messages_in(fake.dm(user))
            for b in (m.blocks or [])
        ),
        within=10,
        what=what,
    )


async def test_a_custom_setup_plays_to_the_end_on_slack(harness: SlackHarness) -> None:
    fake = harness.fake
    users = harness.people(5)
    assert harness.channel is not None
    seed = seed_where(_deal_fits)
    setup = ",".join(ROLES)
    game_id = await harness.new_game(
        users[0], f"setup={setup} day=30 vote=60 night=30 night_vote=60 speed=10 seed={seed}"
    )
    for u in users:
        await fake.click(user=u, action_id="mafia_join", channel=harness.channel)
        [view] = await fake.wait_until(lambda u=u: fake.open_views(u), what="consent modal")  # type: ignore[misc]
        assert (await fake.submit_view(user=u, view=view)).status == 200
        await fake.wait_until(
            lambda u=u: any("You're in" in e.text for e in fake.ephemerals(u, harness.channel)),  # type: ignore[misc]
            what="join confirmation",
        )
    await fake.click(user=users[0], action_id="mafia_start", channel=harness.channel)
    await harness.wait_stage(
        lambda: any("The game begins with 6 players" in m.text for m in harness.stage()),
        what="the start",
    )
    game = harness.live(game_id)
    assert game.state is not None
    assert sorted(s.role for s in game.state.seats) == sorted(ROLES)
    role = {u.id: game.state.seats[game.seat_of_user(u.id).index].role for u in users}  # type: ignore[union-attr]
    name = {u.id: game.seat_of_user(u.id).name for u in users}  # type: ignore[union-attr]
    by_role = {r: u for u in users for r in [role[u.id]]}
    godfather, investigator, jester = (
        by_role["godfather"],
        by_role["investigator"],
        by_role["jester"],
    )
    others = [u for u in users if u not in (godfather, investigator, jester)]
    for u in users:  # each role card from the registry, in the booth
        await fake.wait_until(
            lambda u=u: any(f"Your role: {role[u.id]}." in t for t in harness.dm_texts(u)),  # type: ignore[misc]
            what="role card",
        )

    # Day 1: four people vote the jester out; the jester wins and the game goes on.
    for u in users:
        await _menu(fake, u, "mafia_vote", "vote menu")
    for u in users:
        target = name[godfather.id] if u is jester else name[jester.id]
        await fake.select(user=u, action_id="mafia_vote", value=target)
    await harness.wait_stage(
        lambda: any(f"{name[jester.id]} (jester) wins" in m.text for m in harness.stage()),
        within=15,
        what="the jester's win",
    )

    # Night 1: the investigator looks at the godfather (who shows as a bystander); the lone
    # godfather kills one of the others.
    await _menu(fake, investigator, "mafia_act", "night menu")
    await fake.select(user=investigator, action_id="mafia_act", value=name[godfather.id])
    await _menu(fake, godfather, "mafia_vote", "kill menu", "who do the mafia kill")
    await fake.select(user=godfather, action_id="mafia_vote", value=name[others[0].id])
    result = f"Your investigation: {name[godfather.id]}'s role is bystander."
    await fake.wait_until(
        lambda: any(result in t for t in harness.dm_texts(investigator)),
        within=15,
        what="the investigation at dawn",
    )
    assert not any(result in t for u in users if u is not investigator for t in harness.dm_texts(u))
    assert not any(result in m.text for m in harness.stage())

    # Day 2: the three people left who aren't the godfather vote the godfather out.
    await harness.wait_stage(
        lambda: sum(m.text.startswith("Voting is open") for m in harness.stage()) >= 2,
        within=20,
        what="the day 2 vote",
    )
    for u in (investigator, *others[1:]):
        await fake.select(user=u, action_id="mafia_vote", value=name[godfather.id])
    await harness.wait_stage(
        lambda: any("Bystanders win!" in m.text for m in harness.stage()), within=20, what="the end"
    )


async def test_a_custom_setups_balance_estimate_reaches_the_slack_lobby(
    harness: SlackHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Set with /mafia config: measured in an executor while the loop keeps beating, drawn
    into the lobby when it comes in; a second lobby with the same setup shows it at once."""
    slow, estimates = install(monkeypatch)
    fake = harness.fake
    users = harness.people(5)
    assert harness.channel is not None
    setup = ",".join(ROLES)
    async with heartbeat(slow.beats):
        await harness.new_game(users[0], "day=30")
        assert not slow.calls  # the default game: no estimate asked for
        reply = await harness.slash(users[0], f"config setup={setup}")
        assert reply.startswith("Settings updated") and ESTIMATING in reply, reply
        await release_after_beats(slow)
        await fake.wait_until(
            lambda: any(SHOWN in str(m.blocks) for m in harness.stage()), what="the estimate"
        )
    assert slow.beats_during[0] >= 10  # the loop kept running while it was measured
    assert slow.threads[0] != threading.get_ident()
    assert [players for _, players in slow.calls] == [6]
    assert await harness.slash(users[0], "config") and SHOWN in await harness.slash(
        users[0], f"config setup={setup}"
    )

    elsewhere = fake.add_channel("mafia-too", members=users)
    reply = await harness.slash(users[1], f"new setup={setup}", channel=elsewhere)
    assert "is open" in reply, reply
    lobby = await fake.wait_until(
        lambda: [m for m in fake.messages_in(elsewhere) if m.blocks], what="the second lobby"
    )
    assert SHOWN in str(lobby[0].blocks)
    assert len(slow.calls) == 1 and estimates.measured == 1  # the cache's figure
