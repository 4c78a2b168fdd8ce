"""A real Bolt AsyncApp (request verification on) receiving the fake's signed requests."""

from __future__ import annotations

import time
from typing import Any

import pytest
from slack_bolt.async_app import AsyncApp
from slack_sdk.signature import SignatureVerifier
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack import FakeSlack

VOTE_BLOCKS: list[dict[str, Any]] = [
    {
        "type": "section",
        "block_id": "vote",
        "text": {"type": "mrkdwn", "text": "Who do you vote to eliminate?"},
        "accessory": {
            "type": "static_select",
            "action_id": "mafia_vote",
            "placeholder": {"type": "plain_text", "text": "Pick a player"},
            "options": [
                {"text": {"type": "plain_text", "text": "Bob"}, "value": "bob"},
                {"text": {"type": "plain_text", "text": "Carol"}, "value": "carol"},
            ],
        },
    },
    {
        "type": "actions",
        "block_id": "join",
        "elements": [
            {
                "type": "button",
                "action_id": "mafia_join",
                "value": "game-7",
                "text": {"type": "plain_text", "text": "Join"},
            },
        ],
    },
]

CONSENT_MODAL = {
    "type": "modal",
    "callback_id": "mafia_consent",
    "private_metadata": "game-7",
    "title": {"type": "plain_text", "text": "Before you play"},
    "submit": {"type": "plain_text", "text": "Agree"},
    "blocks": [
        {
            "type": "input",
            "block_id": "ai_ok",
            "label": {"type": "plain_text", "text": "Play with an AI?"},
            "element": {
                "type": "radio_buttons",
                "action_id": "choice",
                "options": [
                    {"text": {"type": "plain_text", "text": "Yes"}, "value": "yes"},
                    {"text": {"type": "plain_text", "text": "No"}, "value": "no"},
                ],
            },
        },
        {
            "type": "input",
            "block_id": "nick",
            "optional": True,
            "label": {"type": "plain_text", "text": "Nickname"},
            "element": {"type": "plain_text_input", "action_id": "value"},
        },
    ],
}


async def test_slash_command_acked_and_respond_recorded(
    fake_slack: FakeSlack, slack_app: AsyncApp
) -> None:
    seen: list[dict[str, Any]] = []

    @slack_app.command("/mafia")
    async def mafia(ack: Any, respond: Any, command: dict[str, Any]) -> None:
        await ack()
        seen.append(command)
        await respond(f"Starting a game: {command['text']}")

    alice = fake_slack.add_user("alice")
    game = fake_slack.add_channel("mafia-1", members=[alice])
    result = await fake_slack.slash(user=alice, channel=game, command="/mafia", text="new")
    assert result.status == 200 and not result.late
    [reply] = await fake_slack.wait_for_responses(1)
    assert reply.text == "Starting a game: new" and reply.ephemeral
    assert (reply.user, reply.channel) == (alice.id, game.id)
    [ephemeral] = fake_slack.ephemerals(alice, game)
    assert ephemeral.source == "response_url"
    assert seen[0]["user_id"] == alice.id and seen[0]["channel_id"] == game.id
    assert fake_slack.messages_in(game) == []  # ephemeral: not in the channel


async def test_say_with_character_identity(fake_slack: FakeSlack, slack_app: AsyncApp) -> None:
    @slack_app.command("/mafia")
    async def mafia(ack: Any, client: AsyncWebClient, command: dict[str, Any]) -> None:
        await ack()
        await client.chat_postMessage(
            channel=command["channel_id"],
            text="I'm innocent!",
            username="Old Marley",
            icon_url="https://x.invalid/m.png",
        )

    alice = fake_slack.add_user("alice")
    game = fake_slack.add_channel("mafia-1", members=[alice])
    await fake_slack.slash(user=alice, channel=game, text="say")
    [message] = await fake_slack.wait_for_messages(game, 1)
    assert (message.username, message.icon_url) == ("Old Marley", "https://x.invalid/m.png")
    [call] = fake_slack.calls("chat.postMessage")
    assert call.args["username"] == "Old Marley"
    assert call.args["icon_url"] == "https://x.invalid/m.png"


async def test_block_actions_static_select_and_button(
    fake_slack: FakeSlack, slack_app: AsyncApp, slack_client: AsyncWebClient
) -> None:
    votes: list[dict[str, Any]] = []
    joins: list[dict[str, Any]] = []

    @slack_app.action("mafia_vote")
    async def vote(ack: Any, body: dict[str, Any], action: dict[str, Any]) -> None:
        await ack()
        votes.append({"body": body, "action": action})

    @slack_app.action("mafia_join")
    async def join(ack: Any, action: dict[str, Any], respond: Any) -> None:
        await ack()
        joins.append(action)
        await respond(text="You joined", replace_original=True)

    alice = fake_slack.add_user("alice")
    game = fake_slack.add_channel("mafia-1", members=[alice])
    posted = await slack_client.chat_postMessage(channel=game.id, text="Vote!", blocks=VOTE_BLOCKS)
    result = await fake_slack.select(user=alice, action_id="mafia_vote", value="carol")
    assert result.status == 200
    await fake_slack.wait_until(lambda: votes, what="the vote handler")
    action = votes[0]["action"]
    assert action["type"] == "static_select"
    assert action["selected_option"] == {
        "text": {"type": "plain_text", "text": "Carol"},
        "value": "carol",
    }
    assert action["block_id"] == "vote"
    assert votes[0]["body"]["container"]["message_ts"] == posted["ts"]
    assert (
        votes[0]["body"]["state"]["values"]["vote"]["mafia_vote"]["selected_option"]["value"]
        == "carol"
    )
    with pytest.raises(ValueError, match="no option 'dave'"):
        await fake_slack.select(user=alice, action_id="mafia_vote", value="dave")

    await fake_slack.click(user=alice, action_id="mafia_join")
    await fake_slack.wait_for_responses(1)
    assert joins[0]["value"] == "game-7"
    assert fake_slack.messages_in(game)[0].text == "You joined"  # replace_original applied


async def test_view_submission_delivers_values(fake_slack: FakeSlack, slack_app: AsyncApp) -> None:
    submitted: list[dict[str, Any]] = []

    @slack_app.command("/mafia")
    async def mafia(ack: Any, client: AsyncWebClient, body: dict[str, Any]) -> None:
        await ack()
        await client.views_open(trigger_id=body["trigger_id"], view=CONSENT_MODAL)

    @slack_app.view("mafia_consent")
    async def consent(ack: Any, view: dict[str, Any]) -> None:
        await ack()
        submitted.append(view)

    alice = fake_slack.add_user("alice")
    await fake_slack.slash(user=alice, text="join")
    await fake_slack.wait_until(lambda: fake_slack.open_views(alice), what="the modal")
    with pytest.raises(ValueError, match="ai_ok/choice is empty"):
        await fake_slack.submit_view(user=alice, values={"nick": {"value": "Al"}})
    result = await fake_slack.submit_view(
        user=alice, callback_id="mafia_consent", values={"choice": "yes"}
    )
    assert result.status == 200
    [view] = submitted
    assert view["private_metadata"] == "game-7"
    assert view["state"]["values"]["ai_ok"]["choice"]["selected_option"]["value"] == "yes"
    assert view["state"]["values"]["nick"]["value"] == {"type": "plain_text_input", "value": None}
    assert fake_slack.open_views(alice) == []  # an empty ack closes the modal


async def test_view_submission_errors_keep_modal_open(
    fake_slack: FakeSlack, slack_app: AsyncApp
) -> None:
    @slack_app.view("mafia_consent")
    async def consent(ack: Any) -> None:
        await ack(response_action="errors", errors={"ai_ok": "You must agree"})

    alice = fake_slack.add_user("alice")
    view = fake_slack.add_view(alice, CONSENT_MODAL)
    result = await fake_slack.submit_view(user=alice, view=view, values={"choice": "no"})
    assert result.json() == {"response_action": "errors", "errors": {"ai_ok": "You must agree"}}
    assert fake_slack.open_views(alice) == [view]


async def test_dm_message_event_delivered(fake_slack: FakeSlack, slack_app: AsyncApp) -> None:
    events: list[dict[str, Any]] = []

    @slack_app.event("message")
    async def on_message(event: dict[str, Any]) -> None:
        events.append(event)

    alice = fake_slack.add_user("alice")
    result = await fake_slack.message_event(user=alice, text="I suspect Bob")
    assert result.status == 200
    await fake_slack.wait_until(lambda: events, what="the message handler")
    assert events[0]["channel_type"] == "im"
    assert events[0]["channel"] == fake_slack.dm(alice).id
    assert events[0]["text"] == "I suspect Bob" and events[0]["user"] == alice.id
    [stored] = fake_slack.messages_in(fake_slack.dm(alice))
    assert stored.source == "user"

    outside = fake_slack.add_channel("random", members=[alice], bot_member=False)
    with pytest.raises(ValueError, match="bot is not in"):
        await fake_slack.message_event(user=alice, text="hi", channel=outside)


async def test_channel_events_mention_join_delete(
    fake_slack: FakeSlack, slack_app: AsyncApp
) -> None:
    got: list[str] = []

    @slack_app.event("app_mention")
    async def mention(event: dict[str, Any]) -> None:
        got.append(f"mention:{event['text']}")

    @slack_app.event("member_joined_channel")
    async def joined(event: dict[str, Any]) -> None:
        got.append(f"joined:{event['user']}")

    @slack_app.event("group_deleted")
    async def deleted(event: dict[str, Any]) -> None:
        got.append(f"deleted:{event['channel']}")

    alice, bob = fake_slack.add_user("alice"), fake_slack.add_user("bob")
    game = fake_slack.add_channel("mafia-1", private=True, members=[alice])
    await fake_slack.app_mention(user=alice, channel=game, text="start")
    await fake_slack.member_joined(user=bob, channel=game, inviter=alice)
    await fake_slack.channel_deleted(channel=game)
    await fake_slack.wait_until(lambda: len(got) == 3, what="three events")
    assert sorted(got) == sorted(
        [f"mention:<@{fake_slack.bot.id}> start", f"joined:{bob.id}", f"deleted:{game.id}"]
    )
    assert game.id not in fake_slack.workspace.channels


async def test_forged_or_stale_signature_rejected(
    fake_slack: FakeSlack, slack_app: AsyncApp, slack_signing_secret: str
) -> None:
    called: list[str] = []

    @slack_app.command("/mafia")
    async def mafia(ack: Any) -> None:
        called.append("slash")
        await ack()

    @slack_app.event("message")
    async def on_message() -> None:
        called.append("message")

    alice = fake_slack.add_user("alice")
    forged = await fake_slack.slash(user=alice, text="new", forge=True)
    assert forged.status == 401
    stale = await fake_slack.message_event(user=alice, text="x", timestamp=int(time.time()) - 600)
    assert stale.status == 401
    # Straight into async_dispatch: verification still applies.
    direct = await fake_slack.slash(slack_app, user=alice, text="new", forge=True)
    assert direct.status == 401
    assert called == []
    assert fake_slack.calls("auth.test") == []  # rejected before authorization

    # The same request, correctly signed, passes the SDK's own verifier and the app.
    delivery = fake_slack.builder.slash(user=alice, channel=None, command="/mafia", text="ok")
    headers = fake_slack.sign(delivery.body)
    assert SignatureVerifier(slack_signing_secret).is_valid_request(delivery.body, headers)
    good = await fake_slack.send(None, delivery)
    assert good.status == 200 and called == ["slash"]


async def test_url_verification(fake_slack: FakeSlack, slack_app: AsyncApp) -> None:
    result = await fake_slack.url_verification(challenge="abc123")
    assert result.status == 200 and result.json() == {"challenge": "abc123"}


async def test_rate_limited_burst_arrives_once_in_order(
    fake_slack: FakeSlack, slack_app: AsyncApp
) -> None:
    done: list[bool] = []

    @slack_app.command("/mafia")
    async def mafia(ack: Any, say: Any) -> None:
        await ack()
        for i in range(10):
            await say(f"line {i}")
        done.append(True)

    alice = fake_slack.add_user("alice")
    game = fake_slack.add_channel("mafia-1", members=[alice])
    fake_slack.rate_limit("chat.postMessage", times=2, retry_after=0, after=3)
    await fake_slack.slash(user=alice, channel=game, text="narrate")
    await fake_slack.wait_until(lambda: done, within=10, what="the burst")
    assert [m.text for m in fake_slack.messages_in(game)] == [f"line {i}" for i in range(10)]
    statuses = [c.status for c in fake_slack.calls("chat.postMessage")]
    assert statuses.count(429) == 2 and statuses.count(200) == 10
    assert statuses[3:5] == [429, 429]


async def test_select_in_modal_and_click_on_ephemeral(
    fake_slack: FakeSlack, slack_app: AsyncApp
) -> None:
    picked: list[dict[str, Any]] = []

    @slack_app.action("mafia_vote")
    async def vote(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        picked.append(body)

    @slack_app.command("/mafia")
    async def mafia(ack: Any, respond: Any) -> None:
        await ack()
        await respond(text="Ready?", blocks=[VOTE_BLOCKS[1]])

    @slack_app.action("mafia_join")
    async def join(ack: Any, respond: Any) -> None:
        await ack()
        await respond(text="Joined", replace_original=True)

    alice = fake_slack.add_user("alice")
    modal = {**CONSENT_MODAL, "blocks": [*CONSENT_MODAL["blocks"], VOTE_BLOCKS[0]]}
    view = fake_slack.add_view(alice, modal)
    await fake_slack.select(user=alice, action_id="mafia_vote", value="bob")
    await fake_slack.wait_until(lambda: picked, what="the modal select")
    assert picked[0]["container"] == {"type": "view", "view_id": view.id}
    assert (
        picked[0]["view"]["state"]["values"]["vote"]["mafia_vote"]["selected_option"]["value"]
        == "bob"
    )
    assert "response_url" not in picked[0]  # modals have none

    game = fake_slack.add_channel("mafia-1", members=[alice])
    await fake_slack.slash(user=alice, channel=game)
    await fake_slack.wait_until(lambda: fake_slack.ephemerals(alice, game), what="ephemeral")
    await fake_slack.click(user=alice, action_id="mafia_join", channel=game)
    await fake_slack.wait_for_responses(2)
    click = fake_slack.deliveries[-1][0].payload
    assert click["container"]["is_ephemeral"] is True and "message" not in click
    assert [e.text for e in fake_slack.ephemerals(alice, game)] == ["Joined"]


async def test_failed_auth_test_answers_users_not_handlers(
    fake_slack: FakeSlack, slack_app: AsyncApp
) -> None:
    called: list[str] = []

    @slack_app.command("/mafia")
    async def mafia(ack: Any) -> None:
        called.append("slash")
        await ack()

    # AsyncApp has no token_verification_enabled: it calls auth.test lazily on the first
    # request, and on failure answers 200 with a user-facing text instead of running handlers.
    fake_slack.fail("auth.test", "invalid_auth")
    alice = fake_slack.add_user("alice")
    result = await fake_slack.slash(user=alice, text="new")
    assert result.status == 200 and "reinstall" in result.body
    assert called == []
    await fake_slack.slash(user=alice, text="new")
    assert called == ["slash"]
    assert len(fake_slack.calls("auth.test")) == 2  # then cached for the app's lifetime
    await fake_slack.slash(user=alice, text="new")
    assert len(fake_slack.calls("auth.test")) == 2
