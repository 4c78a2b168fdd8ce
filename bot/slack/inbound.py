"""Everything Slack sends the app, wired to the adapter: ``/mafia``, buttons, menus, modals and
message events. Each listener acknowledges first (Slack gives 3 seconds), then translates the
request into a call (`bot.slack.commands`, `bot.slack.actions`, `bot.slack.survey`, the
adapter's `lobby` and `relay`); replies the user alone should see are ephemeral
(``respond``) or go to the booth.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from slack_bolt.async_app import AsyncApp

from bot.limits import CoolingDown
from bot.protection.consent import CONSENT_VERSION, consent_status, consent_text
from bot.slack import blocks as B
from bot.slack.actions import NIGHT_ACT, VOTE, Menu, choose
from bot.slack.adapter import PLATFORM, Ctx, SlackAdapter
from bot.slack.commands import Reply, run_command
from bot.slack.oauth import Departures
from bot.slack.survey import open_survey, submit_survey

log = logging.getLogger(__name__)


def register(app: AsyncApp, adapter: SlackAdapter, departures: Departures | None = None) -> None:
    """Attach every listener the game needs to ``app``. ``departures``: what leaving a
    workspace deletes besides its games (Add to Slack: its installation)."""

    @app.command("/mafia")
    async def mafia(ack: Any, command: dict[str, Any], respond: Any) -> None:
        await ack()
        ctx = Ctx(
            team=str(command.get("team_id") or adapter.team_id or ""),
            user=str(command["user_id"]),
            channel=command.get("channel_id"),
            trigger_id=command.get("trigger_id"),
        )
        try:
            reply = await run_command(adapter, ctx, str(command.get("text") or ""))
        except Exception:
            log.exception("/mafia failed")
            reply = "Something went wrong on my side; the host can try again."
        await _respond(respond, reply)

    def slow_down(ctx: Ctx) -> str | None:
        """Each person's commands are rate-limited (`bot.limits.CommandLimiter`)."""
        try:
            adapter.service.commands.check(PLATFORM, ctx.team, ctx.user)
        except CoolingDown as slow:
            return str(slow)
        return None

    @app.action(B.JOIN)
    async def join(ack: Any, body: dict[str, Any], action: dict[str, Any], respond: Any) -> None:
        await ack()
        ctx = _ctx(adapter, body)
        if (refused := slow_down(ctx)) is not None:
            await _respond(respond, refused)
            return
        await _respond(
            respond, await adapter.lobby.join(ctx.user, str(action["value"]), ctx.trigger_id)
        )

    @app.action(B.LEAVE)
    async def leave(ack: Any, body: dict[str, Any], action: dict[str, Any], respond: Any) -> None:
        await ack()
        ctx = _ctx(adapter, body)
        if (refused := slow_down(ctx)) is not None:
            await _respond(respond, refused)
            return
        await _respond(respond, await adapter.lobby.leave(ctx.user, str(action["value"])))

    @app.action(B.START)
    async def start(ack: Any, body: dict[str, Any], action: dict[str, Any], respond: Any) -> None:
        await ack()
        if (refused := slow_down(_ctx(adapter, body))) is not None:
            await _respond(respond, refused)
            return
        sg = await adapter.games.known(str(action["value"]))
        if sg is None or sg.done:
            await _respond(respond, "This game is closed.")
            return
        await _respond(respond, await adapter.lobby.start(_ctx(adapter, body).user, sg))

    def menu_listener(menu: Menu) -> Any:
        async def picked(
            ack: Any, body: dict[str, Any], action: dict[str, Any], respond: Any
        ) -> None:
            await ack()
            value = str((action.get("selected_option") or {}).get("value") or "")
            block_id = str(action.get("block_id"))
            answer = await choose(menu, adapter.service, _user(body), block_id, value, _ts(action))
            await _respond(respond, answer)

        return picked

    app.action(B.VOTE)(menu_listener(VOTE))
    app.action(B.NIGHT_ACT)(menu_listener(NIGHT_ACT))

    @app.action(B.SURVEY_OPEN)
    async def survey(ack: Any, body: dict[str, Any], action: dict[str, Any], respond: Any) -> None:
        await ack()
        await _respond(
            respond, await open_survey(adapter, _ctx(adapter, body), str(action["value"]))
        )

    @app.action(B.CONSENT_OPEN)
    async def consent_open(ack: Any, body: dict[str, Any]) -> None:
        await ack()
        ctx = _ctx(adapter, body)
        status = await adapter.store.run(
            lambda: consent_status(adapter.service.engine, PLATFORM, ctx.team, ctx.user)
        )
        research = status.logging_enabled
        if ctx.trigger_id:
            await adapter.lobby.open_consent(
                ctx.team,
                ctx.trigger_id,
                consent_text(CONSENT_VERSION, research=research),
                version=CONSENT_VERSION,
                research=research,
                game_id=None,
            )

    @app.view(B.CONSENT_VIEW)
    async def consent_submitted(ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        await ack()
        try:
            meta = json.loads(view.get("private_metadata") or "{}")
        except ValueError:
            meta = {}
        ctx = _ctx(adapter, body)
        await adapter.lobby.consent_given(
            ctx.team, ctx.user, meta if isinstance(meta, dict) else {}
        )

    @app.view(B.SURVEY_VIEW)
    async def survey_submitted(ack: Any, body: dict[str, Any], view: dict[str, Any]) -> None:
        ctx = _ctx(adapter, body)
        game_id = str(view.get("private_metadata") or "")
        values = (view.get("state") or {}).get("values") or {}
        errors, done = await submit_survey(adapter, ctx, game_id, values)
        if errors:
            await ack(response_action="errors", errors=errors)
            return
        await ack()
        if done is not None:
            await done

    @app.event("message")
    async def message(event: dict[str, Any], context: Any) -> None:
        subtype = event.get("subtype")
        user = event.get("user")
        if event.get("bot_id") or not user or user in (adapter.bot_user_id, context.bot_user_id):
            return
        team = str(context.team_id or adapter.team_id or "")
        if subtype not in (None, "thread_broadcast", "file_share"):
            return  # edits, deletions, joins: not speech
        channel = str(event.get("channel") or "")
        text = str(event.get("text") or "")
        if event.get("channel_type") == "im":
            if subtype == "file_share":
                adapter.out.post(
                    channel, "Files aren't passed on, only text.", team=team, report=False
                )
                if not text.strip():
                    return
            await adapter.relay.on_dm(team, str(user), channel, str(event["ts"]), text)
            return
        await adapter.relay.on_channel_message(team, str(user), channel)

    leaving = departures or Departures(lambda team, why: adapter.leave_workspace(team, why))
    app.event("app_uninstalled")(leaving.app_uninstalled)
    app.event("tokens_revoked")(leaving.tokens_revoked)

    for name, how in (
        ("channel_deleted", "deleted"),
        ("group_deleted", "deleted"),
        ("channel_archive", "archived"),
        ("group_archive", "archived"),
    ):
        app.event(name)(_on_gone(adapter, how))


def _on_gone(adapter: SlackAdapter, how: str) -> Any:
    async def gone(event: dict[str, Any]) -> None:
        await adapter.on_channel_gone(str(event.get("channel") or ""), how)

    return gone


def _user(body: dict[str, Any]) -> str:
    return str(body["user"]["id"])


def _ts(action: dict[str, Any]) -> str:
    """When the choice was made (Slack's ``action_ts``)."""
    return str(action.get("action_ts") or "")


def _ctx(adapter: SlackAdapter, body: dict[str, Any]) -> Ctx:
    team = (body.get("team") or {}).get("id") or body.get("team_id") or adapter.team_id or ""
    channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get(
        "channel_id"
    )
    return Ctx(str(team), str(body["user"]["id"]), channel, body.get("trigger_id"))


async def _respond(respond: Any, reply: Reply) -> None:
    if reply is None:
        return
    text, blocks = (reply, None) if isinstance(reply, str) else reply
    try:
        await respond(text=text, blocks=blocks, response_type="ephemeral", replace_original=False)
    except Exception:
        log.exception("could not answer through the response_url")
