"""Everything Slack sends the app, wired to `SlackAdapter`: ``/mafia``, buttons, menus,
modals and message events. Each listener acknowledges first (Slack gives 3 seconds) and then
does the work; replies the user alone should see are ephemeral (``respond``) or go to the
booth.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.errors import SlackApiError, SlackClientError
from sqlmodel import Session, col, select

from bot.consent import CONSENT_VERSION, consent_status, consent_text
from bot.platform_common import (
    RATING_QUESTIONS,
    SETTINGS_HELP,
    SurveyAnswer,
    save_survey,
    seat_infos,
    status_text,
    survey_answered,
    survey_choices,
    survey_response,
)
from bot.privacy import withdraw
from bot.service import ServiceError
from bot.slack import blocks as B
from bot.slack.adapter import PLATFORM, Ctx, SlackAdapter
from bot.slack.problems import explain
from bot.slack.text import to_slack
from bot.store.models import Seat
from games.errors import RuleError

log = logging.getLogger(__name__)

Reply = str | tuple[str, list[B.Block]] | None

HELP = f"""\
*Mafia with a hidden AI player.* Commands:
`/mafia new [settings]`: open a game in this channel (you are the host)
`/mafia start`: deal the roles and begin (host)
`/mafia status`: phase, time left, who is alive (and, privately, your role)
`/mafia config [settings]`: show or change the settings before the start (host)
`/mafia end`: stop the game (host)
`/mafia kick @someone`: take someone out; an AI plays their character on (host)
`/mafia consent [withdraw]`: your consent, or withdraw it and your data
`/mafia export`: anonymised research export of finished games (workspace admins)
Settings: `{SETTINGS_HELP}`
Join and leave with the lobby's buttons. During the game you talk, vote and act from your \
direct messages with me (your booth)."""

_USER = re.compile(r"<@([UW][A-Z0-9]+)(?:\|[^>]*)?>|^([UW][A-Z0-9]{6,})$")


def register(app: AsyncApp, adapter: SlackAdapter) -> None:
    """Attach every listener the game needs to ``app``."""

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

    @app.action(B.JOIN)
    async def join(ack: Any, body: dict[str, Any], action: dict[str, Any], respond: Any) -> None:
        await ack()
        await _respond(respond, await adapter.join(_ctx(adapter, body), str(action["value"])))

    @app.action(B.LEAVE)
    async def leave(ack: Any, body: dict[str, Any], action: dict[str, Any], respond: Any) -> None:
        await ack()
        await _respond(respond, await adapter.leave(_ctx(adapter, body), str(action["value"])))

    @app.action(B.START)
    async def start(ack: Any, body: dict[str, Any], action: dict[str, Any], respond: Any) -> None:
        await ack()
        sg = await adapter._known(str(action["value"]))
        if sg is None or sg.done:
            await _respond(respond, "This game is closed.")
            return
        await _respond(respond, await adapter.start_game(_ctx(adapter, body), sg))

    @app.action(B.VOTE)
    async def vote(ack: Any, body: dict[str, Any], action: dict[str, Any], respond: Any) -> None:
        await ack()
        value = str((action.get("selected_option") or {}).get("value") or "")
        await _respond(
            respond,
            await cast_vote(adapter, _ctx(adapter, body), str(action.get("block_id")), value),
        )

    @app.action(B.NIGHT_ACT)
    async def night(ack: Any, body: dict[str, Any], action: dict[str, Any], respond: Any) -> None:
        await ack()
        value = str((action.get("selected_option") or {}).get("value") or "")
        await _respond(
            respond,
            await night_act(adapter, _ctx(adapter, body), str(action.get("block_id")), value),
        )

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
            await adapter.open_consent(
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
        await adapter.consent_given(_ctx(adapter, body), meta if isinstance(meta, dict) else {})

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
    async def message(event: dict[str, Any]) -> None:
        subtype = event.get("subtype")
        user = event.get("user")
        if event.get("bot_id") or not user or user == adapter.bot_user_id:
            return
        if subtype not in (None, "thread_broadcast", "file_share"):
            return  # edits, deletions, joins: not speech
        channel = str(event.get("channel") or "")
        text = str(event.get("text") or "")
        if event.get("channel_type") == "im":
            if subtype == "file_share":
                adapter.post(channel, "Files aren't passed on, only text.", report=False)
                if not text.strip():
                    return
            await adapter.on_dm(str(user), channel, str(event["ts"]), text)
            return
        await adapter.on_channel_message(str(user), channel)

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


# --- /mafia -----------------------------------------------------------------------------------


async def run_command(adapter: SlackAdapter, ctx: Ctx, text: str) -> Reply:
    sub, _, rest = text.strip().partition(" ")
    sub = sub.lower()
    rest = rest.strip()
    if sub in ("", "help"):
        return HELP
    if sub == "new":
        return await adapter.new_game(ctx, rest)
    if sub == "consent":
        return await consent_command(adapter, ctx, rest)
    if sub == "export":
        return await export_command(adapter, ctx, rest)
    if sub == "status":
        return status_command(adapter, ctx)
    sg = adapter.game_in_channel(ctx.channel)
    if sg is None:
        return "There is no open game in this channel. `/mafia new` opens one."
    if sub == "start":
        return await adapter.start_game(ctx, sg)
    if sub == "join":
        return await adapter.join(ctx, sg.id)
    if sub == "leave":
        return await adapter.leave(ctx, sg.id)
    if sub == "end":
        return await adapter.end_game(ctx, sg)
    if sub == "config":
        return await adapter.configure(ctx, sg, rest)
    if sub == "kick":
        m = _USER.search(rest)
        if m is None:
            return "Say who: `/mafia kick @someone`."
        return await adapter.kick(ctx, sg, m.group(1) or m.group(2))
    return f"Unknown command `{sub}`.\n{HELP}"


def status_command(adapter: SlackAdapter, ctx: Ctx) -> str:
    sg = adapter.game_in_channel(ctx.channel)
    pairs = []
    if sg is not None and adapter.live(sg) is not None:
        game = adapter.live(sg)
        assert game is not None
        pairs = [(sg, game)]
    else:
        pairs = adapter.games_of(ctx.user)
    if not pairs:
        return "No game here, and you are not in a running game."
    out = []
    for _sg, game in pairs:
        seat = game.seat_of_user(ctx.user)
        out.append(status_text(game, seat.index if seat is not None else None))
    return to_slack("\n\n".join(out))


# --- votes and night actions --------------------------------------------------------------------


def _menu_id(block_id: str) -> tuple[str, int] | None:
    parts = block_id.split(":")
    if len(parts) != 3 or not parts[2].isdigit():
        return None
    return parts[1], int(parts[2])


async def cast_vote(adapter: SlackAdapter, ctx: Ctx, block_id: str, value: str) -> str:
    parsed = _menu_id(block_id)
    if parsed is None:
        return "That menu is out of date."
    game_id, seq = parsed
    game = adapter.service.games.get(game_id)
    state = game.state if game is not None else None
    seat = game.seat_of_user(ctx.user) if game is not None else None
    if game is None or state is None or state.over:
        return "That game is over."
    if seat is None:
        return "You have no seat in this game."
    if state.phase.seq != seq:
        return "That vote is closed."
    target = None if value == B.ABSTAIN else value
    try:
        await adapter.service.vote(game_id, seat.index, target)
    except (RuleError, ServiceError) as err:
        return f"Not counted: {err}"
    if target is None:
        return "You abstain. You can still change your mind until the deadline."
    return f"Your vote: {target}. You can change it until the deadline."


async def night_act(adapter: SlackAdapter, ctx: Ctx, block_id: str, value: str) -> str:
    parsed = _menu_id(block_id)
    if parsed is None:
        return "That menu is out of date."
    game_id, number = parsed
    game = adapter.service.games.get(game_id)
    state = game.state if game is not None else None
    seat = game.seat_of_user(ctx.user) if game is not None else None
    if game is None or state is None or state.over:
        return "That game is over."
    if seat is None:
        return "You have no seat in this game."
    if not state.phase.kind.is_night or state.phase.number != number:
        return "That night is over."
    try:
        await adapter.service.night_act(game_id, seat.index, value)
    except (RuleError, ServiceError) as err:
        return f"Not done: {err}"
    return f"Noted: {value}. You can change your choice until the night ends."


# --- the survey ---------------------------------------------------------------------------------


async def open_survey(adapter: SlackAdapter, ctx: Ctx, game_id: str) -> str | None:
    seats = await adapter.store.run(lambda: seat_infos(adapter.service.engine, game_id))
    mine = next((s for s in seats if s.user_id == ctx.user and not s.is_agent), None)
    if mine is None:
        return "You didn't play in that game."
    engine = adapter.service.engine
    if await adapter.store.run(lambda: survey_answered(engine, game_id, mine.index)):
        return "You have already answered this survey. Thank you!"
    if ctx.trigger_id is None:
        return "Click the button again, please."
    try:
        await adapter.client.views_open(
            trigger_id=ctx.trigger_id,
            view=B.survey_modal(game_id, survey_choices(seats, mine.index)),
        )
    except SlackApiError as err:
        log.warning("survey modal failed: %s", err.response.get("error"))
        return "I couldn't open the survey; please click again."
    return None


async def submit_survey(
    adapter: SlackAdapter, ctx: Ctx, game_id: str, values: dict[str, Any]
) -> tuple[dict[str, str], Any]:
    """(errors by block id, a follow-up to await after the ack)."""
    engine = adapter.service.engine
    seats = await adapter.store.run(lambda: seat_infos(engine, game_id))
    mine = next((s for s in seats if s.user_id == ctx.user and not s.is_agent), None)
    if mine is None:
        return {"guess": "You didn't play in this game."}, None
    guess = B.selected(values, "guess", "guess") or ""
    ratings: dict[str, int] = {}
    errors: dict[str, str] = {}
    for key, _question in RATING_QUESTIONS:
        raw = B.selected(values, key, key)
        if raw is None or not raw.isdigit() or not 1 <= int(raw) <= 5:
            errors[key] = "Pick 1 to 5."
        else:
            ratings[key] = int(raw)
    if guess not in survey_choices(seats, mine.index):
        errors["guess"] = "Pick one of the other players."
    if errors:
        return errors, None
    answer = SurveyAnswer(
        guess,
        ratings["similarity"],
        ratings["timing"],
        ratings["relevance"],
        B.selected(values, "comments", "comments"),
    )
    row = survey_response(game_id, seats, mine.index, answer, PLATFORM)
    stored = await adapter.store.run(lambda: save_survey(engine, row))
    agents = [s.name for s in seats if s.is_agent]

    async def thank() -> None:
        dm = await adapter.open_dm(ctx.user, report=False)
        if dm is None:
            return
        if not stored:
            adapter.post(
                dm, "You had already answered this survey; the first answer counts.", report=False
            )
            return
        reveal = f" The AI was {', '.join(agents)}." if agents else ""
        adapter.post(dm, to_slack("Thank you, your answers are saved." + reveal), report=False)

    return {}, thank()


# --- consent and export ---------------------------------------------------------------------------


async def consent_command(adapter: SlackAdapter, ctx: Ctx, args: str) -> Reply:
    engine = adapter.service.engine
    if args.lower().startswith("withdraw"):
        report = await adapter.store.run(lambda: withdraw(engine, PLATFORM, ctx.team, ctx.user))
        for game_id in report.lobby:
            sg = adapter.games.get(game_id)
            try:
                await adapter.service.leave(game_id, ctx.user)
            except ServiceError:
                continue
            if sg is not None:
                adapter.refresh_lobby(sg)
        lines = report.summary()
        lines.append("Your consent is withdrawn: to play again you will be asked to agree again.")
        return to_slack("\n".join(lines))
    status = await adapter.store.run(lambda: consent_status(engine, PLATFORM, ctx.team, ctx.user))
    text = f"Your consent on this workspace: {status.describe()}"
    return text, B.consent_prompt(text)


async def export_command(adapter: SlackAdapter, ctx: Ctx, args: str) -> str:
    from bot.research.export import export_zip

    if not await adapter.is_admin(ctx.user):
        return "Only workspace admins can export games (the export is anonymised research data)."
    engine = adapter.service.engine
    ended = await adapter.store.ended_games(ctx.team)
    wanted = [g for g in args.replace(",", " ").split() if g.lower() != "all"]
    ids = [g for g in ended if g in wanted] if wanted else ended
    if not ids:
        return "There is no finished game of this workspace to export yet."
    identities = await _identities(adapter, ids)
    data, report = await adapter.store.run(lambda: export_zip(engine, ids, identities=identities))
    dm = await adapter.open_dm(ctx.user)
    if dm is None:
        return "I couldn't open a direct message with you to send the file."
    summary = "\n".join(report.summary())
    try:
        await adapter.client.files_upload_v2(
            channel=dm,
            file=data,
            filename=f"mafia-export-{ctx.team}.zip",
            title="Mafia research export",
            initial_comment=to_slack(summary),
        )
    except SlackApiError as err:
        return explain(
            str(err.response.get("error")),
            what="send you the export file",
            needed=str(err.response.get("needed") or ""),
        )
    except SlackClientError as err:
        log.warning("export upload failed: %s", err)
        return "I couldn't upload the export file to Slack; please try again later."
    return f"Export of {len(report.exported)} game(s) sent to our direct messages.\n" + to_slack(
        summary
    )


async def _identities(adapter: SlackAdapter, game_ids: list[str]) -> dict[str, list[str]]:
    """Account names of the people who played, so the export can scrub them from text."""
    engine = adapter.service.engine

    def users() -> list[str]:
        with Session(engine) as s:
            rows = s.exec(
                select(Seat.user_id).where(
                    col(Seat.game_id).in_(game_ids), col(Seat.user_id).is_not(None)
                )
            ).all()
        return sorted({str(u) for u in rows if u})

    out: dict[str, list[str]] = {}
    for user in (await adapter.store.run(users))[:200]:
        try:
            info = (await adapter.client.users_info(user=user))["user"]
        except SlackApiError:
            break  # no users:read: the export still removes ids and mentions
        profile = info.get("profile") or {}
        names = {
            info.get("name"),
            info.get("real_name"),
            profile.get("display_name"),
            profile.get("real_name"),
        }
        out[user] = sorted(n for n in names if n)
    return out
