"""Slack misbehaving: rate limits during a burst, a channel removed under the game, missing
permissions, forged requests."""

from __future__ import annotations

from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from sqlmodel import Session, col, select

from bot.service.timers import Backoff
from bot.slack.app import HostAlerts
from bot.store.models import Message as StoredMessage
from games.state import PhaseKind
from tests.bot.db_faults import Faults, action
from tests.bot.slack.conftest import SlackHarness


async def test_rate_limited_burst_loses_and_reorders_nothing(harness: SlackHarness) -> None:
    fake = harness.fake
    game_id = await harness.running_game()
    assert harness.adapter is not None and harness.adapter.client is not None
    # The SDK retries a 429 only once here; the delivery queue must do the rest.
    harness.adapter.client.retry_handlers = [AsyncRateLimitErrorRetryHandler(max_retry_count=1)]
    fake.rate_limit("chat.postMessage", times=3, retry_after=1, after=1)
    bob, carol = harness.users[1], harness.users[2]
    sent = []
    for i in range(10):
        who = bob if i % 3 else carol
        text = f"burst line {i}"
        sent.append((harness.character(game_id, who), text))
        await fake.message_event(user=who, text=text)

    # Each seat's lines in its order; between seats the stage is fair (`bot.limits.FairQueue`:
    # while a backlog waits, the seats take turns), so the two may interleave differently.
    def per_seat(lines: list[tuple[str, str]]) -> dict[str, list[str]]:
        seats: dict[str, list[str]] = {}
        for name, text in lines:
            seats.setdefault(name, []).append(text)
        return seats

    await harness.wait_stage(
        lambda: per_seat([x for x in harness.persona_lines() if x in sent]) == per_seat(sent),
        within=20,
        what="the whole burst, each seat in order",
    )
    await harness.adapter.drain()
    statuses = [c.status for c in fake.calls("chat.postMessage")]
    assert statuses.count(429) == 3
    # The stage shows every line (the agent's included), each seat's in the order the game has
    # them.
    with Session(harness.engine) as s:
        stored = s.exec(
            select(StoredMessage.speaker, StoredMessage.text)
            .where(
                StoredMessage.game_id == game_id,
                StoredMessage.place == "stage",
                col(StoredMessage.seat_index).is_not(None),
            )
            .order_by(col(StoredMessage.id))
        ).all()
    shown = harness.persona_lines()
    assert sorted(shown) == sorted((a, b) for a, b in stored)
    assert per_seat(shown) == per_seat([(a, b) for a, b in stored])


async def test_removed_stage_channel_is_reported_and_stops_the_game(
    harness: SlackHarness,
) -> None:
    fake = harness.fake
    game_id = await harness.running_game()
    host, bob = harness.users[0], harness.users[1]
    assert harness.channel is not None
    fake.delete_channel(harness.channel)  # deleted in the Slack UI, no event reaches us
    await fake.message_event(user=bob, text="is anyone there?")
    await fake.wait_until(
        lambda: any("no longer exists" in t for t in harness.dm_texts(host)),
        what="the host is told",
    )
    [note] = [t for t in harness.dm_texts(host) if "no longer exists" in t]
    assert game_id in note and harness.channel.id in note
    await fake.wait_until(
        lambda: harness.live(game_id).status == "aborted", what="the game is stopped"
    )
    await fake.wait_until(  # the note is queued before the game ends, posted just after
        lambda: any("stopped the game" in t for t in harness.dm_texts(host)),
        what="the host is told the game stopped",
    )
    assert sum("no longer exists" in t for t in harness.dm_texts(host)) == 1  # told once


async def test_deleted_old_den_channel_is_forgotten_quietly(harness: SlackHarness) -> None:
    """A den channel made by an older version for a game still running is deleted: nothing
    depends on it any more, so the game goes on and the host is not bothered."""
    fake = harness.fake
    game_id = await harness.running_game()
    assert harness.adapter is not None
    old_den = fake.add_channel(f"mafia-den-{game_id}", private=True)
    harness.adapter.games.by_id[game_id].den = old_den.id
    await fake.channel_deleted(channel=old_den)
    await fake.wait_until(
        lambda: harness.adapter.games.by_id[game_id].den is None,  # type: ignore[union-attr]
        what="the den forgotten",
    )
    assert harness.live(game_id).status == "running"
    assert not any("private channel" in t for t in harness.dm_texts(harness.users[0]))


async def test_missing_customize_scope_is_reported_and_the_game_goes_on(
    harness: SlackHarness,
) -> None:
    fake = harness.fake
    game_id = await harness.running_game()
    host, bob = harness.users[0], harness.users[1]
    fake.revoke_scope("chat:write.customize")
    await fake.message_event(user=bob, text="my alibi is solid")
    await fake.message_event(user=bob, text="and another line")
    bob_name = harness.character(game_id, bob)
    await harness.wait_stage(
        lambda: (
            [m.text for m in harness.stage()][-2:]
            == [f"*{bob_name}*: my alibi is solid", f"*{bob_name}*: and another line"]
        ),
        what="lines posted without the character's picture",
    )
    await fake.wait_until(
        lambda: any("chat:write.customize" in t for t in harness.dm_texts(host)),
        what="the host is told",
    )
    [note] = [t for t in harness.dm_texts(host) if "chat:write.customize" in t]
    assert "missing the permission" in note and "reinstall" in note
    assert not any(m.username for m in harness.stage()[-2:])


async def test_missing_scope_is_reported_at_new(harness: SlackHarness) -> None:
    fake = harness.fake
    fake.revoke_scope("im:history")
    users = harness.people(5)
    harness.consent_all(users)
    reply = await harness.slash(users[0], "new day=3600")
    assert "missing permissions" in reply and "`im:history`" in reply
    assert "reading what players type in their booth" in reply


async def test_forged_requests_are_rejected_and_do_nothing(harness: SlackHarness) -> None:
    fake = harness.fake
    users = harness.people(5)
    forged = await fake.slash(user=users[0], channel=harness.channel, text="new", forge=True)
    assert forged.status == 401
    stale = await fake.slash(
        user=users[0], channel=harness.channel, text="new", timestamp=1_600_000_000
    )
    assert stale.status == 401
    assert harness.service is not None and harness.service.games == {}
    assert harness.stage() == []
    good = await fake.slash(user=users[0], channel=harness.channel, text="new")
    assert good.status == 200
    await fake.wait_until(lambda: harness.stage(), what="the lobby")


async def test_a_lasting_database_failure_at_a_deadline_reaches_the_host_once(
    harness: SlackHarness,
) -> None:
    assert harness.service is not None and harness.adapter is not None
    assert harness.engine is not None
    harness.service.add_alert_sink(HostAlerts(harness.adapter))  # as SlackRunner does
    harness.service.alert_after = 0.2
    harness.service.tick_backoff = Backoff(first=0.02, cap=0.1)
    faults = Faults(harness.engine)
    faults.refuse("actions", action("tick"), times=float("inf"))
    users = harness.people(5)
    game_id, _ = await harness.running_game_of(
        users, "day=30 vote=3600 night=3600 night_vote=3600 speed=100"
    )
    host = users[0]

    def told() -> list[str]:
        return [t for t in harness.dm_texts(host) if "database refuses" in t]

    await harness.fake.wait_until(told, what="the host is told")
    assert game_id in told()[0]
    faults.lift()

    def voting() -> bool:
        state = harness.live(game_id).state
        return state is not None and state.phase.kind is PhaseKind.VOTE

    await harness.fake.wait_until(voting, what="the vote opens")
    await harness.adapter.drain()
    assert len(told()) == 1


async def test_while_the_bot_restarts_new_joins_and_starts_get_one_clear_refusal(
    harness: SlackHarness,
) -> None:
    """SIGTERM's drain (`bot.ops.serve`) sets ``service.closing``: whoever clicks Join, starts
    the game or opens a new one is told to try again in a minute, and the lobby is unchanged."""
    assert harness.service is not None
    users = harness.people(5)
    harness.consent_all(users)
    game_id = await harness.new_game(users[0], "agents=1")
    await harness.join_all(users[:4])
    seats = len(harness.live(game_id).seats)
    harness.service.closing = True
    before = len(harness.fake.responses)
    await harness.fake.click(user=users[4], action_id="mafia_join", channel=harness.channel)
    [joined] = (await harness.fake.wait_for_responses(before + 1))[before:]
    assert joined.text == "The bot is restarting; join again in a minute."
    assert await harness.slash(users[0], "start") == (
        "Can't start: The bot is restarting; start it again in a minute."
    )
    elsewhere = harness.fake.add_channel("mafia-too", members=users)
    assert await harness.slash(users[1], "new", elsewhere) == (
        "The bot is restarting; open the game again in a minute."
    )
    game = harness.live(game_id)
    assert game.status == "lobby" and len(game.seats) == seats
