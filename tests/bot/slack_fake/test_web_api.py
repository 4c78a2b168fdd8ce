"""The fake Web API, driven by the real slack_sdk AsyncWebClient."""

from __future__ import annotations

from typing import Any

import pytest
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_async_handlers import AsyncRateLimitErrorRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from tests.fakes.slack import FakeSlack

MODAL = {
    "type": "modal",
    "callback_id": "mafia_consent",
    "title": {"type": "plain_text", "text": "Consent"},
    "submit": {"type": "plain_text", "text": "Agree"},
    "blocks": [
        {
            "type": "input",
            "block_id": "consent",
            "label": {"type": "plain_text", "text": "Play with an AI?"},
            "element": {"type": "plain_text_input", "action_id": "answer"},
        }
    ],
}


async def test_auth_test_answers_like_slack(
    fake_slack: FakeSlack, slack_client: AsyncWebClient
) -> None:
    assert fake_slack.base_url.endswith("/api/")
    resp = await slack_client.auth_test()
    assert resp["user_id"] == fake_slack.bot.id
    assert resp["bot_id"] == fake_slack.workspace.bot_id
    assert resp.headers["Content-Type"] == "application/json; charset=utf-8"
    assert "chat:write" in resp.headers["X-OAuth-Scopes"].split(",")
    # slack_sdk appends the "/" itself, so a base_url without it reaches the same place.
    bare = AsyncWebClient(token=fake_slack.bot_token, base_url=fake_slack.base_url.rstrip("/"))
    assert (await bare.auth_test())["ok"] is True


async def test_bad_tokens_are_rejected(fake_slack: FakeSlack) -> None:
    wrong = AsyncWebClient(token="xoxb-not-issued", base_url=fake_slack.base_url)
    with pytest.raises(SlackApiError) as err:
        await wrong.auth_test()
    assert err.value.response["error"] == "invalid_auth"
    bot = AsyncWebClient(token=fake_slack.bot_token, base_url=fake_slack.base_url)
    with pytest.raises(SlackApiError) as err:
        await bot.apps_connections_open(app_token=fake_slack.bot_token)
    assert err.value.response["error"] == "not_allowed_token_type"


async def test_post_as_character_records_username_and_icon(
    fake_slack: FakeSlack, slack_client: AsyncWebClient
) -> None:
    alice = fake_slack.add_user("alice")
    game = fake_slack.add_channel("mafia-1", members=[alice])
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "*Night falls*"}}]
    resp = await slack_client.chat_postMessage(
        channel=game.id,
        text="Night falls",
        blocks=blocks,
        username="Detective Rook",
        icon_url="https://example.invalid/rook.png",
    )
    assert resp["channel"] == game.id
    assert resp["message"]["username"] == "Detective Rook"
    [call] = fake_slack.calls("chat.postMessage")
    assert call.token == fake_slack.bot_token
    assert call.content_type == "application/json"  # slack_sdk sends chat.* as JSON
    assert call.args["username"] == "Detective Rook"
    assert call.args["icon_url"] == "https://example.invalid/rook.png"
    [message] = fake_slack.messages_in(game)
    assert (message.text, message.username, message.ts) == (
        "Night falls",
        "Detective Rook",
        resp["ts"],
    )
    assert message.blocks is not None and message.blocks[0]["block_id"]  # Slack fills it in

    reply = await slack_client.chat_postMessage(
        channel=game.id, text="in thread", thread_ts=resp["ts"], icon_emoji=":ghost:"
    )
    assert fake_slack.messages_in(game)[-1].thread_ts == resp["ts"]
    history = await slack_client.conversations_history(channel=game.id)
    assert [m["ts"] for m in history["messages"]] == [resp["ts"]]  # replies stay in thread
    assert history["messages"][0]["reply_count"] == 1
    assert reply["message"]["icons"] == {"emoji": ":ghost:"}


async def test_form_encoded_and_query_args_are_parsed(
    fake_slack: FakeSlack, slack_client: AsyncWebClient
) -> None:
    game = fake_slack.add_channel("mafia-1")
    # Arbitrary form-encoded call: blocks arrive as a JSON string and are decoded.
    resp = await slack_client.api_call(
        "chat.postMessage",
        data={"channel": game.id, "text": "x", "blocks": '[{"type": "divider", "block_id": "d1"}]'},
    )
    call = fake_slack.calls("chat.postMessage")[-1]
    assert call.content_type == "application/x-www-form-urlencoded"
    assert call.args["blocks"] == [{"type": "divider", "block_id": "d1"}]
    # chat.delete sends params (query string on a POST), conversations.info is a GET.
    await slack_client.chat_delete(channel=game.id, ts=resp["ts"])
    assert fake_slack.messages_in(game) == []
    info = await slack_client.conversations_info(channel=game.id, include_num_members=True)
    assert fake_slack.calls("conversations.info")[-1].http_verb == "GET"
    assert info["channel"]["num_members"] == 1 and info["channel"]["is_member"] is True


async def test_missing_scope_surfaces_needed(
    fake_slack: FakeSlack, slack_client: AsyncWebClient
) -> None:
    game = fake_slack.add_channel("mafia-1")
    fake_slack.deny_scope("chat.postMessage", "chat:write.customize")
    with pytest.raises(SlackApiError) as err:
        await slack_client.chat_postMessage(channel=game.id, text="hi", username="Rook")
    assert err.value.response["error"] == "missing_scope"
    assert err.value.response["needed"] == "chat:write.customize"
    assert "chat:write" in err.value.response["provided"].split(",")
    fake_slack.clear_faults()

    fake_slack.revoke_scope("chat:write.customize")
    with pytest.raises(SlackApiError) as err:
        await slack_client.chat_postMessage(channel=game.id, text="hi", username="Rook")
    assert err.value.response["needed"] == "chat:write.customize"
    await slack_client.chat_postMessage(channel=game.id, text="plain")  # no customization: ok
    assert [m.text for m in fake_slack.messages_in(game)] == ["plain"]


async def test_channel_errors(fake_slack: FakeSlack, slack_client: AsyncWebClient) -> None:
    public_elsewhere = fake_slack.add_channel("lobby", bot_member=False)
    secret = fake_slack.add_channel("mafia-wolves", private=True, bot_member=False)
    game = fake_slack.add_channel("mafia-1")

    async def error_of(**kwargs: Any) -> str:
        with pytest.raises(SlackApiError) as err:
            await slack_client.chat_postMessage(text="x", **kwargs)
        return str(err.value.response["error"])

    assert await error_of(channel="C0NOPE") == "channel_not_found"
    assert await error_of(channel=secret.id) == "channel_not_found"  # invisible to the bot
    assert await error_of(channel=public_elsewhere.id) == "not_in_channel"
    fake_slack.archive(game)
    assert await error_of(channel=game.id) == "is_archived"
    fake_slack.grant_scope("chat:write.public")
    await slack_client.chat_postMessage(channel=public_elsewhere.id, text="x")
    fake_slack.fail("chat.postMessage", "fatal_error")
    assert await error_of(channel=public_elsewhere.id) == "fatal_error"


async def test_conversation_lifecycle(fake_slack: FakeSlack, slack_client: AsyncWebClient) -> None:
    alice, bob = fake_slack.add_user("alice"), fake_slack.add_user("bob")
    created = await slack_client.conversations_create(name="mafia-night-2", is_private=True)
    cid = created["channel"]["id"]
    assert created["channel"]["is_private"] is True
    with pytest.raises(SlackApiError) as err:
        await slack_client.conversations_create(name="mafia-night-2")
    assert err.value.response["error"] == "name_taken"
    with pytest.raises(SlackApiError) as err:
        await slack_client.conversations_create(name="Bad Name!")
    assert err.value.response["error"] == "invalid_name_specials"

    await slack_client.conversations_invite(channel=cid, users=[alice.id, bob.id])
    with pytest.raises(SlackApiError) as err:
        await slack_client.conversations_invite(channel=cid, users=alice.id)
    assert err.value.response["error"] == "already_in_channel"
    await slack_client.conversations_kick(channel=cid, user=bob.id)
    members = await slack_client.conversations_members(channel=cid)
    assert set(members["members"]) == {fake_slack.bot.id, alice.id}

    await slack_client.conversations_archive(channel=cid)
    with pytest.raises(SlackApiError) as err:
        await slack_client.conversations_invite(channel=cid, users=bob.id)
    assert err.value.response["error"] == "is_archived"
    info = await slack_client.conversations_info(channel=cid)
    assert info["channel"]["is_archived"] is True


async def test_dm_open_and_user_lookup(fake_slack: FakeSlack, slack_client: AsyncWebClient) -> None:
    alice = fake_slack.add_user("alice", real_name="Alice Liddell")
    first = await slack_client.conversations_open(users=alice.id)
    again = await slack_client.conversations_open(users=[alice.id])
    assert first["channel"]["id"] == again["channel"]["id"] == fake_slack.dm(alice).id
    assert "already_open" not in first and again["already_open"] is True
    await slack_client.chat_postMessage(channel=alice.id, text="your role: villager")
    assert [m.text for m in fake_slack.messages_in(fake_slack.dm(alice))] == ["your role: villager"]
    user = await slack_client.users_info(user=alice.id)
    assert user["user"]["real_name"] == "Alice Liddell"
    with pytest.raises(SlackApiError) as err:
        await slack_client.users_info(user="U0NOBODY")
    assert err.value.response["error"] == "user_not_found"


async def test_ephemeral_update_and_history_paging(
    fake_slack: FakeSlack, slack_client: AsyncWebClient
) -> None:
    alice, carol = fake_slack.add_user("alice"), fake_slack.add_user("carol")
    game = fake_slack.add_channel("mafia-1", members=[alice])
    await slack_client.chat_postEphemeral(channel=game.id, user=alice.id, text="psst")
    assert [e.text for e in fake_slack.ephemerals(alice, game)] == ["psst"]
    with pytest.raises(SlackApiError) as err:
        await slack_client.chat_postEphemeral(channel=game.id, user=carol.id, text="psst")
    assert err.value.response["error"] == "user_not_in_channel"

    posted = [await slack_client.chat_postMessage(channel=game.id, text=f"m{i}") for i in range(5)]
    await slack_client.chat_update(channel=game.id, ts=posted[0]["ts"], text="m0 (edited)")
    pages = []
    async for page in await slack_client.conversations_history(channel=game.id, limit=2):
        pages.append([m["text"] for m in page["messages"]])
    assert pages == [["m4", "m3"], ["m2", "m1"], ["m0 (edited)"]]


async def test_rate_limit_retried_by_sdk_handler(fake_slack: FakeSlack) -> None:
    game = fake_slack.add_channel("mafia-1")
    plain = AsyncWebClient(token=fake_slack.bot_token, base_url=fake_slack.base_url)
    fake_slack.rate_limit("chat.postMessage", times=1, retry_after=7)
    with pytest.raises(SlackApiError) as err:  # no 429 retry handler by default
        await plain.chat_postMessage(channel=game.id, text="lost")
    assert err.value.response.status_code == 429
    assert err.value.response["error"] == "ratelimited"
    assert err.value.response.headers["Retry-After"] == "7"
    assert fake_slack.messages_in(game) == []

    retrying = AsyncWebClient(
        token=fake_slack.bot_token,
        base_url=fake_slack.base_url,
        retry_handlers=[AsyncRateLimitErrorRetryHandler(max_retry_count=2)],
    )
    fake_slack.rate_limit("chat.postMessage", times=1, retry_after=0)
    await retrying.chat_postMessage(channel=game.id, text="kept")
    assert [c.status for c in fake_slack.calls("chat.postMessage")] == [429, 429, 200]
    assert [m.text for m in fake_slack.messages_in(game)] == ["kept"]


async def test_views_need_a_fresh_trigger(
    fake_slack: FakeSlack, slack_client: AsyncWebClient
) -> None:
    alice = fake_slack.add_user("alice")
    with pytest.raises(SlackApiError) as err:
        await slack_client.views_open(trigger_id="123.456.abc", view=MODAL)
    assert err.value.response["error"] == "invalid_trigger_id"
    trigger = fake_slack.workspace.issue_trigger(alice.id)
    bad = {**MODAL, "title": {"type": "plain_text", "text": "A title far too long for Slack"}}
    with pytest.raises(SlackApiError) as err:
        await slack_client.views_open(trigger_id=trigger, view=bad)
    assert err.value.response["error"] == "invalid_arguments"
    assert "/view/title" in err.value.response["response_metadata"]["messages"][0]
    opened = await slack_client.views_open(trigger_id=trigger, view=MODAL)
    assert opened["view"]["callback_id"] == "mafia_consent"
    assert fake_slack.open_views(alice)[0].id == opened["view"]["id"]
    with pytest.raises(SlackApiError) as err:
        await slack_client.views_open(trigger_id=trigger, view=MODAL)
    assert err.value.response["error"] == "exchanged_trigger_id"
    with pytest.raises(SlackApiError) as err:
        await slack_client.views_update(view_id=opened["view"]["id"], hash="stale", view=MODAL)
    assert err.value.response["error"] == "hash_conflict"
    home = {
        "type": "home",
        "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "No game"}}],
    }
    await slack_client.views_publish(user_id=alice.id, view=home)
    home_view = fake_slack.home_view(alice)
    assert home_view is not None and home_view.blocks[0]["text"]["text"] == "No game"
