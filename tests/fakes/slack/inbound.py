"""Requests Slack sends *to* the app: signing, and payloads in Slack's wire shapes.

Every builder returns a `Delivery` holding both renderings of one request: the HTTP body
(form-encoded for slash commands and interactivity, JSON for the Events API) and the Socket
Mode envelope payload, so one test can drive an app over either transport.

Payloads reference what the fake workspace holds: a click is built from the stored message
that carries the button (so `block_id`, `message`, `container` are what Slack would send), a
view submission from the modal the app opened with `views.open` (so `callback_id`,
`private_metadata`, the input block ids and the element types come from the app's own view).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from tests.fakes.slack.model import (
    JSON,
    Ephemeral,
    FakeChannel,
    FakeUser,
    FakeView,
    Message,
    find_element,
    find_option,
    iter_elements,
    plain_text,
)
from tests.fakes.slack.workspace import ChannelRef, UserRef, Workspace

FORM = "application/x-www-form-urlencoded"
JSON_TYPE = "application/json"

TEXT_INPUTS = {
    "plain_text_input",
    "number_input",
    "email_text_input",
    "url_text_input",
    "rich_text_input",
}
SINGLE_OPTION = {"static_select", "radio_buttons", "external_select", "overflow"}
MULTI_OPTION = {"multi_static_select", "checkboxes", "multi_external_select"}
SELECTED_KEY = {
    "users_select": "selected_user",
    "multi_users_select": "selected_users",
    "conversations_select": "selected_conversation",
    "multi_conversations_select": "selected_conversations",
    "channels_select": "selected_channel",
    "multi_channels_select": "selected_channels",
    "datepicker": "selected_date",
    "timepicker": "selected_time",
    "datetimepicker": "selected_date_time",
}
INITIAL_KEY = {
    "users_select": "initial_user",
    "multi_users_select": "initial_users",
    "conversations_select": "initial_conversation",
    "multi_conversations_select": "initial_conversations",
    "channels_select": "initial_channel",
    "multi_channels_select": "initial_channels",
    "datepicker": "initial_date",
    "timepicker": "initial_time",
    "datetimepicker": "initial_date_time",
}


def signature(secret: str, timestamp: int | str, body: str) -> str:
    """`v0=` + hex HMAC-SHA256 of `v0:{timestamp}:{body}` keyed by the signing secret."""
    base = f"v0:{timestamp}:{body}".encode()
    return "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()


def signed_headers(secret: str, body: str, timestamp: int | None = None) -> dict[str, str]:
    ts = int(time.time()) if timestamp is None else timestamp
    return {
        "X-Slack-Request-Timestamp": str(ts),
        "X-Slack-Signature": signature(secret, ts, body),
    }


@dataclass
class Delivery:
    kind: str  # "slash" | "block_actions" | "view_submission" | "event" | "url_verification"
    body: str
    content_type: str
    envelope_type: str | None  # Socket Mode: "slash_commands" | "interactive" | "events_api"
    payload: JSON
    accepts_response_payload: bool = False
    headers: dict[str, str] = field(default_factory=dict)
    view: FakeView | None = None


@dataclass
class ResponseUrl:
    kind: str  # "commands" | "actions"
    user: str
    channel: str | None
    original_ts: str | None = None
    original_ephemeral: bool = False
    uses: int = 0


class Builder:
    def __init__(self, ws: Workspace, verification_token: str) -> None:
        self.ws = ws
        self.verification_token = verification_token
        self.origin = ""
        self.response_urls: dict[str, ResponseUrl] = {}

    # -- shared pieces ---------------------------------------------------------------------

    def response_url(self, info: ResponseUrl) -> str:
        key = secrets.token_hex(12)
        self.response_urls[key] = info
        return f"{self.origin}/response/{info.kind}/{self.ws.team_id}/{key}"

    def _user_obj(self, user: FakeUser) -> JSON:
        return {"id": user.id, "username": user.name, "name": user.name, "team_id": self.ws.team_id}

    def _team(self) -> JSON:
        team: JSON = {"id": self.ws.team_id, "domain": self.ws.team_domain}
        if self.ws.enterprise_id is not None:
            team["enterprise_id"] = self.ws.enterprise_id
        return team

    def _channel_name(self, channel: FakeChannel) -> str:
        if channel.is_im:
            return "directmessage"
        if channel.is_private:
            return "privategroup" if self.ws.bot.id not in channel.members else channel.name
        return channel.name

    def _interactive(self, payload: JSON, accepts: bool, kind: str) -> Delivery:
        body = urlencode({"payload": json.dumps(payload)})
        return Delivery(kind, body, FORM, "interactive", payload, accepts)

    # -- slash commands --------------------------------------------------------------------

    def slash(
        self, *, user: UserRef, channel: ChannelRef | None, command: str, text: str
    ) -> Delivery:
        u = self.ws.user(user)
        ch = self.ws.dm(u) if channel is None else self.ws.channel(channel)
        fields = {
            "token": self.verification_token,
            "team_id": self.ws.team_id,
            "team_domain": self.ws.team_domain,
            "channel_id": ch.id,
            "channel_name": self._channel_name(ch),
            "user_id": u.id,
            "user_name": u.name,
            "command": command,
            "text": text,
            "api_app_id": self.ws.app_id,
            "is_enterprise_install": "false",
            "response_url": self.response_url(ResponseUrl("commands", u.id, ch.id)),
            "trigger_id": self.ws.issue_trigger(u.id),
        }
        enterprise = self.ws.enterprise
        if enterprise is not None:
            fields["enterprise_id"] = enterprise["id"]
            fields["enterprise_name"] = enterprise["name"]
        return Delivery("slash", urlencode(fields), FORM, "slash_commands", dict(fields), True)

    # -- block actions ---------------------------------------------------------------------

    def locate(
        self,
        user: FakeUser,
        action_id: str,
        *,
        message: Message | Ephemeral | str | None,
        channel: ChannelRef | None,
        view: FakeView | str | None,
    ) -> tuple[Message | Ephemeral | FakeView, JSON, JSON]:
        """The surface carrying `action_id` that `user` can see: (surface, block, element).

        Without a hint, the user's open modals are searched first (a modal sits on top of
        everything), then messages and ephemerals in conversations the user is in, newest
        first."""
        if isinstance(view, str):
            view = self.ws.views[view]
        if isinstance(message, str):
            found = self.ws.find_message(message) or next(
                (e for e in self.ws.ephemerals if e.ts == message), None
            )
            if found is None:
                raise LookupError(f"no message with ts {message}")
            message = found
        surfaces: list[Message | Ephemeral | FakeView] = []
        if view is not None:
            surfaces = [view]
        elif message is not None:
            surfaces = [message]
        else:
            if channel is None:
                surfaces += [
                    v
                    for v in reversed(list(self.ws.views.values()))
                    if v.user == user.id and not v.closed
                ]
            channels = (
                [self.ws.channel(channel)]
                if channel is not None
                else [c for c in self.ws.channels.values() if user.id in c.members]
            )
            ids = {c.id for c in channels}
            candidates: list[Message | Ephemeral] = [m for c in channels for m in c.messages]
            candidates += [e for e in self.ws.ephemerals if e.user == user.id and e.channel in ids]
            candidates.sort(key=lambda m: float(m.ts), reverse=True)
            surfaces.extend(candidates)
        for surface in surfaces:
            blocks = surface.blocks if surface.blocks is not None else []
            hit = find_element(blocks, action_id)
            if hit is not None:
                return surface, hit[0], hit[1]
        raise LookupError(f"nothing visible to {user.name} offers action_id {action_id!r}")

    def block_action(
        self,
        *,
        user: UserRef,
        action_id: str,
        value: Any,
        message: Message | Ephemeral | str | None = None,
        channel: ChannelRef | None = None,
        view: FakeView | str | None = None,
        expect: set[str] | None = None,
    ) -> Delivery:
        u = self.ws.user(user)
        surface, block, element = self.locate(
            u, action_id, message=message, channel=channel, view=view
        )
        kind = str(element.get("type"))
        if expect is not None and kind not in expect:
            raise ValueError(f"action {action_id!r} is a {kind}, not one of {sorted(expect)}")
        action = self._action(block, element, value)
        state: JSON = {}
        if kind != "button":
            state = {str(block["block_id"]): {action_id: _state_value(element, action)}}
        payload: JSON = {
            "type": "block_actions",
            "user": self._user_obj(u),
            "api_app_id": self.ws.app_id,
            "token": self.verification_token,
            "trigger_id": self.ws.issue_trigger(u.id),
            "team": self._team(),
            "enterprise": self.ws.enterprise,
            "is_enterprise_install": False,
        }
        if isinstance(surface, FakeView):
            values = {**surface.state_values}
            for bid, entries in state.items():
                values[bid] = {**values.get(bid, {}), **entries}
            surface.state_values = values
            payload["container"] = {"type": "view", "view_id": surface.id}
            payload["view"] = surface.to_api()
        else:
            ch = self.ws.channels.get(surface.channel) or self.ws.deleted_channels[surface.channel]
            ephemeral = isinstance(surface, Ephemeral)
            payload["container"] = {
                "type": "message",
                "message_ts": surface.ts,
                "channel_id": ch.id,
                "is_ephemeral": ephemeral,
            }
            payload["channel"] = {"id": ch.id, "name": self._channel_name(ch)}
            if isinstance(surface, Message):
                payload["message"] = surface.to_api()
            payload["state"] = {"values": state}
            payload["response_url"] = self.response_url(
                ResponseUrl("actions", u.id, ch.id, surface.ts, ephemeral)
            )
        payload["actions"] = [action]
        return self._interactive(payload, False, "block_actions")

    def _action(self, block: JSON, element: JSON, value: Any) -> JSON:
        kind = str(element.get("type"))
        action: JSON = {
            "type": kind,
            "action_id": element["action_id"],
            "block_id": block["block_id"],
            "action_ts": f"{time.time():.6f}",
        }
        if kind == "button":
            action["text"] = element.get("text") or plain_text("")
            chosen = element.get("value") if value is None else value
            if chosen is not None:
                action["value"] = chosen
            if element.get("style"):
                action["style"] = element["style"]
            return action
        if element.get("placeholder"):
            action["placeholder"] = element["placeholder"]
        action.update(_selected(element, value))
        return action

    # -- view submissions ------------------------------------------------------------------

    def view_submission(self, *, user: UserRef, view: FakeView, values: JSON | None) -> Delivery:
        u = self.ws.user(user)
        view.state_values = build_view_state(view.blocks, values or {}, view.state_values)
        payload: JSON = {
            "type": "view_submission",
            "team": self._team(),
            "user": self._user_obj(u),
            "api_app_id": self.ws.app_id,
            "token": self.verification_token,
            "trigger_id": self.ws.issue_trigger(u.id),
            "view": view.to_api(),
            "response_urls": [],
            "is_enterprise_install": False,
            "enterprise": self.ws.enterprise,
        }
        delivery = self._interactive(payload, True, "view_submission")
        delivery.view = view
        return delivery

    def view_closed(self, *, user: UserRef, view: FakeView) -> Delivery:
        u = self.ws.user(user)
        payload: JSON = {
            "type": "view_closed",
            "team": self._team(),
            "user": self._user_obj(u),
            "api_app_id": self.ws.app_id,
            "token": self.verification_token,
            "view": view.to_api(),
            "is_cleared": False,
            "is_enterprise_install": False,
            "enterprise": self.ws.enterprise,
        }
        return self._interactive(payload, False, "view_closed")

    # -- Events API ------------------------------------------------------------------------

    def event(self, event: JSON, *, event_id: str | None = None) -> Delivery:
        envelope: JSON = {
            "token": self.verification_token,
            "team_id": self.ws.team_id,
            "context_team_id": self.ws.team_id,
            "context_enterprise_id": self.ws.enterprise_id,
            "api_app_id": self.ws.app_id,
            "event": event,
            "type": "event_callback",
            "event_id": event_id or self.ws.ids.new("Ev"),
            "event_time": int(time.time()),
            "authorizations": [
                {
                    "enterprise_id": self.ws.enterprise_id,
                    "team_id": self.ws.team_id,
                    "user_id": self.ws.bot.id,
                    "is_bot": True,
                    "is_enterprise_install": False,
                }
            ],
            "is_ext_shared_channel": False,
            "event_context": f"4-{secrets.token_urlsafe(24)}",
        }
        if self.ws.enterprise_id is not None:
            envelope["enterprise_id"] = self.ws.enterprise_id
        return Delivery("event", json.dumps(envelope), JSON_TYPE, "events_api", envelope)

    def url_verification(self, challenge: str) -> Delivery:
        body = {
            "token": self.verification_token,
            "challenge": challenge,
            "type": "url_verification",
        }
        return Delivery("url_verification", json.dumps(body), JSON_TYPE, None, body)

    def _delivered_to(self, channel: FakeChannel, what: str) -> None:
        if self.ws.bot.id not in channel.members:
            raise ValueError(
                f"Slack delivers {what} only from conversations the bot is in; "
                f"the bot is not in {channel.id} ({channel.name})"
            )

    def user_message(
        self,
        *,
        event_type: str,
        user: UserRef,
        text: str,
        channel: ChannelRef | None,
        thread_ts: str | None,
        subtype: str | None = None,
    ) -> tuple[JSON, Message]:
        u = self.ws.user(user)
        ch = self.ws.dm(u) if channel is None else self.ws.channel(channel)
        self._delivered_to(ch, f"{event_type} events")
        message = self.ws.post(
            ch, user=u.id, text=text, thread_ts=thread_ts, source="user", blocks=[_rich_text(text)]
        )
        event: JSON = {
            "client_msg_id": str(uuid.uuid4()),
            "type": event_type,
            "text": text,
            "user": u.id,
            "ts": message.ts,
            "blocks": message.blocks,
            "team": self.ws.team_id,
            "channel": ch.id,
            "event_ts": message.ts,
        }
        if event_type == "message":
            event["channel_type"] = ch.channel_type
        if subtype:
            event["subtype"] = subtype
        if thread_ts:
            event["thread_ts"] = thread_ts
            parent = ch.find(thread_ts)
            if parent is not None and parent.user:
                event["parent_user_id"] = parent.user
        return event, message

    def member_joined(self, *, user: UserRef, channel: ChannelRef, inviter: UserRef | None) -> JSON:
        u = self.ws.user(user)
        ch = self.ws.channel(channel)
        if u.id not in ch.members:
            ch.members.append(u.id)
        self._delivered_to(ch, "member_joined_channel events")
        event: JSON = {
            "type": "member_joined_channel",
            "user": u.id,
            "channel": ch.id,
            "channel_type": "G" if ch.is_private else "C",
            "team": self.ws.team_id,
            "event_ts": self.ws.clock.next(),
        }
        if inviter is not None:
            event["inviter"] = self.ws.user_id(inviter)
        return event

    def channel_deleted(self, *, channel: ChannelRef, actor: UserRef | None) -> JSON:
        ch = self.ws.channel(channel)
        if ch.is_private:
            self._delivered_to(ch, "group_deleted events")
        self.ws.delete_channel(ch)
        if ch.is_private:
            return {
                "type": "group_deleted",
                "channel": ch.id,
                "date_deleted": int(time.time()),
                "actor_id": self.ws.user_id(actor) if actor is not None else None,
                "event_ts": self.ws.clock.next(),
            }
        return {"type": "channel_deleted", "channel": ch.id, "event_ts": self.ws.clock.next()}


# -- element values -----------------------------------------------------------------------


def _rich_text(text: str) -> JSON:
    return {
        "type": "rich_text",
        "block_id": secrets.token_hex(2),
        "elements": [{"type": "rich_text_section", "elements": [{"type": "text", "text": text}]}],
    }


def _option(element: JSON, value: Any) -> JSON:
    if isinstance(value, dict):
        return value
    option = find_option(element, str(value))
    if option is None:
        if "external" in str(element.get("type")):
            return {"text": plain_text(str(value)), "value": str(value)}
        offered = [o.get("value") for o in element.get("options") or []]
        raise ValueError(
            f"{element.get('action_id')!r} offers no option {value!r} (options: {offered})"
        )
    return {"text": option.get("text"), "value": option.get("value")}


def _selected(element: JSON, value: Any) -> JSON:
    """The `selected_*` / `value` part of an action or state entry for `value`."""
    kind = str(element.get("type"))
    if kind in TEXT_INPUTS:
        return {"value": None if value is None else str(value)}
    if kind in SINGLE_OPTION:
        return {"selected_option": None if value is None else _option(element, value)}
    if kind in MULTI_OPTION:
        return {"selected_options": [_option(element, v) for v in (value or [])]}
    if kind in SELECTED_KEY:
        return {SELECTED_KEY[kind]: value}
    return {"value": value}


def _state_value(element: JSON, action: JSON) -> JSON:
    keys = {"value", "selected_option", "selected_options", *SELECTED_KEY.values()}
    return {"type": element.get("type"), **{k: v for k, v in action.items() if k in keys}}


def _initial(element: JSON) -> Any:
    kind = str(element.get("type"))
    if kind in TEXT_INPUTS:
        return element.get("initial_value")
    if kind in SINGLE_OPTION:
        initial = element.get("initial_option")
        return initial.get("value") if isinstance(initial, dict) else None
    if kind in MULTI_OPTION:
        return [o.get("value") for o in element.get("initial_options") or []]
    if kind in INITIAL_KEY:
        return element.get(INITIAL_KEY[kind])
    return None


def _is_empty(entry: JSON) -> bool:
    return all(v in (None, [], "") for k, v in entry.items() if k != "type")


def build_view_state(blocks: list[JSON], values: JSON, previous: JSON) -> JSON:
    """`view.state.values` for a submission: every input block, filled from `values`.

    `values` maps block_id -> {action_id: value} or, shorter, action_id -> value.  A value is
    what the user picked (an option's value, a user id, text); a dict with a "type" is taken
    as the raw state entry.  Unfilled inputs keep their initial value (or earlier state);
    a required input left empty raises, since Slack's client would not let the user submit.
    """
    inputs = [(b, e) for b, e in iter_elements(blocks) if b.get("type") == "input"]
    by_action = {str(e.get("action_id")): (b, e) for b, e in inputs}
    block_ids = {str(b.get("block_id")) for b, _ in inputs}
    chosen: dict[tuple[str, str], Any] = {}
    for key, value in values.items():
        if key in block_ids and isinstance(value, dict) and "type" not in value:
            for action_id, inner in value.items():
                chosen[(key, action_id)] = inner
        elif key in by_action:
            chosen[(str(by_action[key][0]["block_id"]), key)] = value
        else:
            raise KeyError(
                f"the view has no input block or action_id {key!r} (inputs: {sorted(by_action)})"
            )
    state: JSON = {}
    for block, element in inputs:
        bid, aid = str(block["block_id"]), str(element.get("action_id"))
        if (bid, aid) in chosen:
            value = chosen[(bid, aid)]
            entry = (
                value
                if isinstance(value, dict) and "type" in value
                else {"type": element.get("type"), **_selected(element, value)}
            )
        elif aid in previous.get(bid, {}):
            entry = previous[bid][aid]
        else:
            entry = {"type": element.get("type"), **_selected(element, _initial(element))}
        if _is_empty(entry) and not block.get("optional"):
            raise ValueError(f"required input {bid}/{aid} is empty; Slack would not submit")
        state.setdefault(bid, {})[aid] = entry
    return state
