"""A host is told when Slack refuses a post, but never which player's booth it was: no
channel id, no owner, no role (a bystander host must not learn who is a person or mafia)."""

from __future__ import annotations

from typing import Any

from bot.slack.delivery import MAX_TRANSIENT_RETRIES
from bot.slack.render import Renderer
from tests.bot.slack.conftest import SlackHarness


async def test_a_booth_that_fails_is_not_named_to_the_host(harness: SlackHarness) -> None:
    fake = harness.fake
    await harness.running_game()
    assert harness.adapter is not None
    harness.adapter.out.delivery.backoff = 0.01
    host, bob, carol = harness.users[0], harness.users[1], harness.users[2]

    def told() -> list[str]:
        return [t for t in harness.dm_texts(host) if "couldn't" in t]

    # a line too long to pass on gets a note in its writer's booth: Slack keeps failing it
    for user, text in ((bob, "x" * 1500), (carol, "y" * 1500)):
        booth = fake.dm(user)
        fake.server_error(
            "chat.postMessage", status=500, times=MAX_TRANSIENT_RETRIES + 1, channel=booth
        )
        await fake.message_event(user=user, text=text)

        def given_up(booth: Any = booth) -> list[Any]:
            calls = fake.calls("chat.postMessage")
            failed = [c for c in calls if c.status == 500 and c.args.get("channel") == booth.id]
            return failed[MAX_TRANSIENT_RETRIES:]

        await fake.wait_until(given_up, what="the note given up")
        await fake.wait_until(told, what="the host is told")
        await harness.adapter.drain()
    [problem] = told()  # once, for both booths alike: how many booths failed is not told
    assert "player's booth" in problem
    for user in (bob, carol):
        assert fake.dm(user).id not in problem
    for word in ("mafia", "partner", bob.name, carol.name):
        assert word not in problem


def test_no_alert_names_a_mafia_or_partner_booth() -> None:
    """What the renderer says it was doing, for the host's alert, on every kind of post."""
    import inspect

    source = inspect.getsource(Renderer)
    for said in ("mafia booth", "partner's booth"):
        assert said not in source


async def test_slack_lobby_has_no_persona_setting(harness: SlackHarness) -> None:
    """Slack's lobby never took a persona; a written one is refused like any unknown setting."""
    host = harness.people(3)[0]
    reply = await harness.slash(host, "new persona=pineapple")
    assert "Unknown setting 'persona'" in reply and "is open" not in reply


async def test_relay_latency_times_the_agents_stage_lines_too(harness: SlackHarness) -> None:
    """End to end on Slack: every stage line, the agent's included, is one relay figure."""
    timed: list[float] = []
    game_id = await harness.running_game(settings="day=3600 vote=3600 speed=50")
    assert harness.adapter is not None
    harness.adapter.latency.observe = timed.append
    agent = next(s for s in harness.live(game_id).seats if s.is_agent).name
    before = len(harness.persona_lines())
    await harness.fake.message_event(user=harness.users[1], text="so who is it")
    await harness.wait_stage(
        lambda: {n == agent for n, _ in harness.persona_lines()[before:]} == {True, False},
        within=30,
        what="the agent's line and the person's",
    )
    await harness.adapter.drain()
    lines = harness.persona_lines()[before:]
    assert any(n != agent for n, _ in lines)
    await harness.fake.wait_until(lambda: len(timed) >= len(lines), what="every line timed")
    assert len(timed) == len(lines)
