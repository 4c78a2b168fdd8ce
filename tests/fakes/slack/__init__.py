"""A loopback fake of Slack for testing the Slack adapter with the real SDKs.

The real `slack_bolt.async_app.AsyncApp` and `slack_sdk.web.async_client.AsyncWebClient` run
unmodified: the client talks to the fake's Web API over HTTP on 127.0.0.1, and the fake sends
the app correctly signed requests (HTTP) or Socket Mode envelopes, as Slack would.  Nothing
leaves the machine.

    async with FakeSlack(signing_secret="s3cret") as fake:
        alice = fake.add_user("alice")
        game = fake.add_channel("mafia-1", members=[alice])       # bot is a member by default
        client = AsyncWebClient(token=fake.bot_token, base_url=fake.base_url)
        app = AsyncApp(client=client, signing_secret="s3cret")   # token goes in the client
        ...register listeners...
        await fake.serve(app)                                     # HTTP endpoint = default target
        result = await fake.slash(user=alice, channel=game, command="/mafia", text="new")
        assert result.status == 200
        await fake.wait_for_responses(1)                          # respond() runs after ack
        await fake.click(user=alice, action_id="mafia_join")      # finds the newest button
        await fake.select(user=alice, action_id="mafia_vote", value=bob.id)
        await fake.submit_view(user=alice, callback_id="mafia_consent", values={"agree": "yes"})
        await fake.message_event(user=alice, text="hi")           # DM (channel_type "im")
        assert [m.text for m in fake.messages_in(game)] == [...]

Driving API (all inbound helpers: first positional arg = target, optional):
    target: a URL (your HTTP endpoint), an object with `async_dispatch` (an AsyncApp: the
        request still goes through signature verification), or `fake.socket` (Socket Mode);
        default `fake.target`, which `serve(app)` sets.
    every inbound helper also takes forge=, timestamp=, headers=, timeout= (`SendOptions`)
    and returns `InboundResult(status, body, headers, elapsed, acked)` (`.json()`, `.late`).

    slash(target, *, user, channel=None, command="/mafia", text="")
    click(target, *, user, action_id, value=None, message=None, channel=None, view=None)
    select(target, *, user, action_id, value, message=None, channel=None, view=None)
    submit_view(target, *, user, view=None, callback_id=None, values=None)
    close_view(target, *, user, view=None)
    message_event(target, *, user, text, channel=None, thread_ts=None, subtype=None, event_id=None)
    app_mention(target, *, user, text, channel, thread_ts=None)
    member_joined(target, *, user, channel, inviter=None)
    channel_deleted(target, *, channel, actor=None)       # group_deleted for private channels
    event(target, event_dict, *, event_id=None, retry_num=None, retry_reason="http_timeout")
    url_verification(target, challenge=None)
    send(target, delivery, **opts); sign(body, timestamp=None) -> headers

    State: add_user(name, ...), add_channel(name, private=, members=, bot_member=True),
    dm(user), channel(ref), archive(channel), delete_channel(channel), add_view(user, view),
    bot / bot_token / app_token / team_id / base_url / workspace.

    Recordings: calls(method=None, ok=None) -> [ApiCall(method, args, token, status, response)],
    messages_in(channel, replies=True) -> [Message], ephemerals(user, channel), responses
    (response_url posts), open_views(user), home_view(user), socket_acks, deliveries.

    Faults: rate_limit(method, times=1, retry_after=1, after=0) (HTTP 429 + Retry-After),
    post_limit = (burst, per_second) (Slack's chat.postMessage allowance per channel: over
    it a 429 + Retry-After; rate_limited_posts() counts them),
    server_error(method, status=503, times=1, body=..., content_type="text/plain") (a 5xx
    page, nothing done), stall(method, seconds, times=1) (answers late: the client times out),
    fail(method, error, times=1, after=0, **extra), deny_scope(method, scope),
    revoke_scope(scope), grant_scope(scope), clear_faults().

    Waiting (listeners run after ack): wait_until(pred, within=5), wait_for_calls(method, n),
    wait_for_messages(channel, n), wait_for_responses(n), wait_socket_connected().

    Many workspaces ("Add to Slack"): `FakeSlackOAuth` (tests/fakes/slack/oauth.py) answers
    oauth.v2.access (codes, refresh_token grants) in front of one FakeSlack per workspace.

    Socket Mode: `AsyncSocketModeHandler(app, fake.app_token)` with the app's client on
    `fake.base_url` connects through apps.connections.open; then send with
    target=fake.socket; socket_disconnect(reason) triggers the SDK's reconnect.
"""

from tests.fakes.slack.inbound import Delivery, signature, signed_headers
from tests.fakes.slack.model import (
    DEFAULT_BOT_SCOPES,
    ApiCall,
    Ephemeral,
    FakeChannel,
    FakeUser,
    FakeView,
    InboundResult,
    Message,
    ResponseUrlPost,
    SocketAck,
)
from tests.fakes.slack.oauth import FakeSlackOAuth, Grant
from tests.fakes.slack.server import FakeSlack, SendOptions, SocketModeTarget, Target

__all__ = [
    "DEFAULT_BOT_SCOPES",
    "ApiCall",
    "Delivery",
    "Ephemeral",
    "FakeChannel",
    "FakeSlack",
    "FakeSlackOAuth",
    "FakeUser",
    "FakeView",
    "Grant",
    "InboundResult",
    "Message",
    "ResponseUrlPost",
    "SendOptions",
    "SocketAck",
    "SocketModeTarget",
    "Target",
    "signature",
    "signed_headers",
]
