"""Withdrawal: take a person out of every stored game on a server, for good.

What `withdraw` does, for each game on the server where the person had a seat:

- Deleted: their message rows, the Game-Manager lines announcing their votes ("X voted for Y",
  "X changed their vote to Y", "X abstains."), their vote rows, their survey answers, and their
  own entries in the event and action logs (their lines, votes, night choices and private
  inspection results). Timing goes with the rows: when they spoke is their data too.
- Redacted: copies of their lines elsewhere (other players quoting them, the agent's prompts,
  outputs and decisions in ``llm_calls``) become "[withdrawn]", and so does their platform id
  wherever it was typed or mentioned. Whole rows of others are kept.
- Registered hooks run (`WITHDRAWAL_FILE_HOOKS`: agent memories; `WITHDRAWAL_HOOKS`: the
  experience pool, ...).
- Their seat keeps its character name, role and fate (other players' lines and votes refer to
  it) but loses its user id, is marked ``withdrawn`` (exports show it as withheld, the
  experience pool skips it) and gets ``scrubbed_at``. The character no longer leads back to
  anyone.
- Their consent answers on that server are stamped ``withdrawn_at`` (a stamp-only row is added
  if they never answered), so no earlier "yes" counts for any game; they must agree again to
  join a new one.

Games still in the lobby or running cannot be cleaned yet: resuming a running game replays its
action log, which must stay whole. Their seat is marked ``withdrawn`` now (so nothing exports
or learns from it) and the cleaning runs when the game ends: `apply_pending_withdrawals`
(wired to game end by `PendingWithdrawals`, and worth calling at start-up) cleans every seat of
an ended game that is marked withdrawn, or whose person withdrew after taking it, and has no
``scrubbed_at`` yet. Until then they may keep playing; whatever they say is removed with the
rest. If the seat is handed to an agent meanwhile, the seat's lines are removed whoever said
them (the store cannot tell them apart). Lobby games are listed in ``report.lobby``: the
adapter should take them out with `GameService.leave`. Their id as the host of any game on the
server is cleared at once.

Everything is idempotent: running `withdraw` again finds nothing left and changes nothing.
Their id typed into a running game where they had no seat is removed from its messages and
events at once, and from its action log when the game ends (`apply_pending_withdrawals`).
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import sqlalchemy as sa
from rich.console import Console
from sqlalchemy.engine import Engine
from sqlmodel import Session, SQLModel, col, select

from bot.protection.consent import CONSENT_VERSION
from bot.protection.dataset.scrub import WITHDRAWN, redact_lines, remove_user_id
from bot.protection.plan_check import REPLANS, StalePlan, check_fresh, replannable
from bot.service.live import LiveGame
from bot.store.db import make_engine, session_scope
from bot.store.migrate import upgrade
from bot.store.models import (
    GAME_MANAGER,
    Action,
    Consent,
    Event,
    Game,
    LLMCall,
    Message,
    Seat,
    Server,
    SurveyResponse,
    Vote,
    WithdrawalJob,
    utcnow,
)
from games.events import Event as GameEvent
from games.events import GameOver

__all__ = [
    "ENDED",
    "WITHDRAWAL_FILE_HOOKS",
    "WITHDRAWAL_HOOKS",
    "FirstStep",
    "PendingWithdrawals",
    "Plan",
    "StalePlan",
    "WithdrawalFileHook",
    "WithdrawalHook",
    "WithdrawalReport",
    "apply_pending_withdrawals",
    "apply_plan",
    "first_step",
    "plan_game",
    "plan_open_game",
    "plan_seat",
    "run_file_hooks",
    "run_withdraw",
    "steps_left",
    "withdraw",
    "withdraw_gently",
    "withdrawal_steps",
]

WithdrawalHook = Callable[[Session, str, int], int]
"""(session, game_id, seat_index) -> rows removed or changed. Runs inside the withdrawal's
transaction, after the seat's own rows are gone and before the seat loses its user id."""

WITHDRAWAL_HOOKS: list[WithdrawalHook] = []
"""Modules that keep rows derived from a seat (the experience pool) append here."""

WithdrawalFileHook = Callable[[str, int], int]
"""(game_id, seat_index) -> files or folders removed. Runs before the withdrawal's transaction
(never inside it: a write lock is not held for disk work)."""

WITHDRAWAL_FILE_HOOKS: list[WithdrawalFileHook] = []
"""Modules that keep files derived from a seat (agent memories) append here."""

ENDED = ("finished", "aborted")

# Event kinds that are the seat's own input or private output, by the payload key naming it.
_OWN_EVENTS = {
    "message": "seat",
    "vote_cast": "voter",
    "night_action": "seat",
    "inspection_result": "seat",
}
_OWN_ACTIONS = ("say", "vote", "night_act")


@dataclass
class WithdrawalReport:
    """What a withdrawal did; ``pending`` games are cleaned when they end."""

    platform: str
    server: str
    user_id: str
    scrubbed: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    lobby: list[str] = field(default_factory=list)  # of ``pending``: games not started yet
    counts: Counter[str] = field(default_factory=Counter)

    def summary(self) -> list[str]:
        who = f"{self.platform} server {self.server}, user {self.user_id}"
        if not self.scrubbed and not self.pending and not any(self.counts.values()):
            return [f"Withdrawal ({who}): nothing left to remove."]
        out = [f"Withdrawal ({who}):"]
        if self.scrubbed:
            out.append(f"  removed from {len(self.scrubbed)} game(s): {', '.join(self.scrubbed)}")
        if self.pending:
            out.append(
                f"  {len(self.pending)} game(s) still open, cleaned when they end: "
                + ", ".join(self.pending)
            )
        counted = ", ".join(f"{v} {k.replace('_', ' ')}" for k, v in sorted(self.counts.items()))
        if counted:
            out.append(f"  {counted}")
        return out


def withdraw(engine: Engine, platform: str, server: str, user_id: str) -> WithdrawalReport:
    """Withdraw ``user_id`` from everything stored for ``platform``/``server`` (module doc),
    in small transactions (`withdrawal_steps`), one after another."""
    report = WithdrawalReport(platform, server, user_id)
    for _ in withdrawal_steps(engine, report):
        pass
    return report


async def withdraw_gently(
    engine: Engine, platform: str, server: str, user_id: str, *, pause: float = 0.0
) -> WithdrawalReport:
    """`withdraw` off the event loop, one small transaction at a time with ``pause`` seconds
    (and a turn of the loop) between them, so the games' own writes are never held up for
    longer than one step (`bot.protection.withdrawals` runs it as a background job)."""
    report = WithdrawalReport(platform, server, user_id)
    steps = withdrawal_steps(engine, report)
    while True:
        if await asyncio.to_thread(next, steps, False) is False:
            return report
        await asyncio.sleep(pause)


def withdrawal_steps(engine: Engine, report: WithdrawalReport) -> Generator[bool, None, None]:
    """The withdrawal of ``report``'s person, one transaction per step (yields True after
    each): first their consent, the games they host and the seats of open games; then one
    ended game at a time. Every step is idempotent, so an interrupted withdrawal is finished
    by running it again (or, for seats, by `apply_pending_withdrawals`)."""
    user_id = report.user_id
    with session_scope(engine) as session:
        first = first_step(session, report.platform, report.server, user_id)
    steps_left(engine, first, report.platform, report.server, user_id)
    first.into(report)
    yield True
    for game_id, seat_id in first.ended_seats:
        _applied(engine, partial(plan_seat, engine, user_id, game_id, seat_id), report.counts)
        report.scrubbed.append(game_id)
        yield True
    for game_id in first.ended_games:
        _applied(engine, partial(plan_game, engine, user_id, game_id), report.counts)
        yield True
    for game_id in first.open_games:
        _applied(engine, partial(plan_open_game, engine, user_id, game_id), report.counts)
        yield True
    with session_scope(engine) as session:
        job_done(session, report.platform, report.server, user_id)


def job_done(session: Session, platform: str, server: str, user_id: str) -> None:
    """The withdrawal of ``user_id`` is over: nothing to take up again at the next start."""
    job = session.get(WithdrawalJob, (platform, server, user_id))
    if job is not None:
        session.delete(job)


@dataclass
class FirstStep:
    """What the first step of a withdrawal did, and the steps left (`withdrawal_steps`)."""

    counts: Counter[str] = field(default_factory=Counter)
    pending: list[str] = field(default_factory=list)
    lobby: list[str] = field(default_factory=list)
    #: (game id, seat id) of the person's seats in ended games
    ended_seats: list[tuple[str, int]] = field(default_factory=list)
    ended_games: list[str] = field(default_factory=list)
    open_games: list[str] = field(default_factory=list)

    def into(self, report: WithdrawalReport) -> None:
        report.counts.update(self.counts)
        report.pending.extend(self.pending)
        report.lobby.extend(self.lobby)


def first_step(session: Session, platform: str, server: str, user_id: str) -> FirstStep:
    """Their consent answers, the games they host and their seats in open games, in
    ``session``'s transaction: set-wise writes only (the write lock is held for milliseconds
    whatever the server's size). Touches nothing but the session, so it may be run again (a
    group commit retried). What is left to do is read afterwards: `steps_left`."""
    out = FirstStep()
    now = utcnow()
    if session.get(WithdrawalJob, (platform, server, user_id)) is None:  # under way till done
        session.add(WithdrawalJob(platform=platform, server_external_id=server, user_id=user_id))
    mine = (
        col(Consent.platform) == platform,
        col(Consent.server_external_id) == server,
        col(Consent.user_id) == user_id,
    )
    stamped = session.execute(
        sa.update(Consent)
        .where(*mine, col(Consent.withdrawn_at).is_(None))
        .values(withdrawn_at=now)
    )
    out.counts["consent_answers_withdrawn"] += int(getattr(stamped, "rowcount", 0) or 0)
    if not session.exec(select(sa.func.count()).select_from(Consent).where(*mine)).one():
        session.add(
            Consent(
                platform=platform,
                server_external_id=server,
                user_id=user_id,
                version=CONSENT_VERSION,
                agreed=False,
                research=False,
                t=now,
                withdrawn_at=now,
            )
        )
        out.counts["consent_answers_withdrawn"] += 1
    server_games = (
        select(Game.id)
        .join(Server, col(Server.id) == col(Game.server_id))
        .where(Server.platform == platform, Server.external_id == server)
    )
    hosted = session.execute(
        sa.update(Game)
        .where(col(Game.id).in_(server_games.scalar_subquery()), col(Game.host_user_id) == user_id)
        .values(host_user_id=None)
    )
    out.counts["games_hosted_cleared"] += int(getattr(hosted, "rowcount", 0) or 0)
    # their seats in games not over yet (a game that ends meanwhile is cleaned at its end,
    # `apply_pending_withdrawals`, or by the steps read after this one)
    session.execute(
        sa.update(Seat)
        .where(
            col(Seat.user_id) == user_id,
            col(Seat.game_id).in_(
                server_games.where(col(Game.status).not_in(ENDED)).scalar_subquery()
            ),
        )
        .values(withdrawn=True)
    )
    session.flush()
    return out


def steps_left(engine: Engine, first: FirstStep, platform: str, server: str, user_id: str) -> None:
    """Read (no write transaction) what is left after `first_step`: the person's seats in
    ended games, the server's ended and open games; and the open games they sit in (``pending``,
    ``lobby``)."""
    with Session(engine) as session:
        srv = session.exec(
            select(Server).where(Server.platform == platform, Server.external_id == server)
        ).first()
        if srv is None:
            return
        games = {
            gid: status
            for gid, status in session.exec(
                select(Game.id, Game.status).where(Game.server_id == srv.id)
            )
        }
        seats = [
            (int(sid or 0), str(gid))
            for sid, gid in session.exec(
                select(Seat.id, Seat.game_id).where(
                    col(Seat.game_id).in_(list(games)), Seat.user_id == user_id
                )
            )
        ]
    for seat_id, game_id in sorted(seats, key=lambda s: s[1]):
        if games[game_id] in ENDED:
            first.ended_seats.append((game_id, seat_id))
        else:
            first.pending.append(game_id)
            if games[game_id] == "lobby":
                first.lobby.append(game_id)
    first.open_games = [g for g in games if games[g] not in ENDED]
    first.ended_games = [g for g in games if games[g] in ENDED]


def plan_seat(engine: Engine, user_id: str, game_id: str, seat_id: int) -> Plan:
    """The cleaning of the person's seat in an ended game, worked out on a read-only snapshot."""

    def scrub(session: Session) -> None:
        found = session.get(Seat, seat_id)
        if found is not None:
            _scrub_seat(session, game_id, found, user_id, session.info[_COUNTS])

    return _plan(engine, scrub)


def plan_game(engine: Engine, user_id: str, game_id: str) -> Plan:
    """The person's platform id removed from an ended game's texts, worked out likewise."""

    def remove(session: Session) -> None:
        _remove_id(session, [game_id], user_id, session.info[_COUNTS], actions=True)

    return _plan(engine, remove)


def plan_open_game(engine: Engine, user_id: str, game_id: str) -> Plan:
    """The person's platform id removed from a lobby's or running game's messages and events
    (not its action log: the game replays it), worked out likewise. (A running game only
    adds rows; the rows it adds after this was read are as they would be after a withdrawal
    that ran a moment earlier.)"""

    def remove(session: Session) -> None:
        _remove_id(session, [game_id], user_id, session.info[_COUNTS], actions=False)

    return _plan(engine, remove)


def apply_pending_withdrawals(engine: Engine, game_id: str | None = None) -> list[WithdrawalReport]:
    """Clean seats withdrawn while their game was open, now that it has ended (one game, or
    every ended game with such seats). Returns one report per person."""
    reports: dict[tuple[str, str, str], WithdrawalReport] = {}
    with session_scope(engine) as session:
        # also catches a withdrawal whose seat flag was lost (a lobby seat rewritten by leave)
        withdrew_since_joining = (
            sa.exists()
            .where(
                col(Consent.platform) == col(Server.platform),
                col(Consent.server_external_id) == col(Server.external_id),
                col(Consent.user_id) == col(Seat.user_id),
                col(Consent.withdrawn_at) >= col(Seat.joined_at),
            )
            .correlate(Seat, Server)
        )
        query = (
            select(Seat, Game, Server)
            .join(Game, col(Game.id) == col(Seat.game_id))
            .join(Server, col(Server.id) == col(Game.server_id), isouter=True)
            .where(
                col(Seat.scrubbed_at).is_(None),
                col(Game.status).in_(ENDED),
                sa.or_(col(Seat.withdrawn).is_(True), withdrew_since_joining),
            )
            .order_by(col(Game.id), col(Seat.index))
        )
        if game_id is not None:
            query = query.where(Game.id == game_id)
        for seat, game, srv in session.exec(query).all():
            user_id = seat.user_id
            platform = srv.platform if srv is not None else "?"
            server = srv.external_id if srv is not None else "?"
            key = (platform, server, user_id or "(seat handed over)")
            report = reports.setdefault(key, WithdrawalReport(*key))
            _scrub_seat(session, game.id, seat, user_id, report.counts)
            if user_id is not None:
                _remove_id(session, [game.id], user_id, report.counts, actions=True)
            report.scrubbed.append(game.id)
        if game_id is not None:
            _mentions_of_withdrawn(session, game_id, reports)
    return list(reports.values())


def _mentions_of_withdrawn(session: Session, game_id: str, reports: dict[Any, Any]) -> None:
    """The ids of people who withdrew while ``game_id`` was open, without a seat in it, out of
    its action log too (their withdrawal left it alone: the game was replaying it)."""
    same = (col(Server.platform) == col(Consent.platform)) & (
        col(Server.external_id) == col(Consent.server_external_id)
    )
    for key in session.exec(
        select(Consent.platform, Consent.server_external_id, Consent.user_id)
        .join(Server, same)
        .join(Game, col(Game.server_id) == col(Server.id))
        .where(Game.id == game_id, col(Game.status).in_(ENDED))
        .where(col(Consent.withdrawn_at) >= col(Game.created_at))
        .distinct()
    ).all():
        report = reports.get(tuple(key))  # (no report of its own: no seat was cleaned)
        _remove_id(session, [game_id], key[2], report.counts if report else Counter(), actions=True)


class PendingWithdrawals:
    """A `GameListener` that runs `apply_pending_withdrawals` for each game once it is over.

    It waits for ``game.finished`` (agents closed, their decision logs flushed) in a task of
    its own: the service drains listeners before it sets that event, so waiting inline would
    deadlock.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._tasks: set[asyncio.Task[None]] = set()

    async def on_events(self, game: LiveGame, events: Sequence[GameEvent]) -> None:
        if any(isinstance(e, GameOver) for e in events):
            task = asyncio.create_task(self._after(game), name=f"withdrawals:{game.id}")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _after(self, game: LiveGame) -> None:
        await game.finished.wait()
        await asyncio.to_thread(apply_pending_withdrawals, self.engine, game.id)

    async def wait(self) -> None:
        """Wait for every cleaning started so far (tests, shutdown)."""
        if self._tasks:
            await asyncio.gather(*list(self._tasks))


# --- the cleaning itself ------------------------------------------------------------------------


def _vote_line(name: str) -> re.Pattern[str]:
    n = re.escape(name)
    return re.compile(rf"^{n} (?:voted for|changed their vote to) .+$|^{n} abstains\.$")


def _scrub_seat(
    session: Session, game_id: str, seat: Seat, user_id: str | None, counts: Counter[str]
) -> None:
    index, name = seat.index, seat.character_name
    lines: set[str] = set()
    for msg in session.exec(
        select(Message).where(Message.game_id == game_id, Message.seat_index == index)
    ).all():
        lines.add(msg.text)
        session.delete(msg)
        counts["messages"] += 1
    vote_line = _vote_line(name)
    for msg in session.exec(
        select(Message).where(Message.game_id == game_id, Message.speaker == GAME_MANAGER)
    ).all():
        if vote_line.match(msg.text):
            session.delete(msg)
            counts["manager_vote_lines"] += 1
    counts["votes"] += _delete(session, Vote, game_id, col(Vote.voter_index) == index)
    counts["survey_responses"] += _delete(
        session, SurveyResponse, game_id, col(SurveyResponse.seat_index) == index
    )
    for event in session.exec(select(Event).where(Event.game_id == game_id)).all():
        key = _OWN_EVENTS.get(event.kind)
        if key is not None and event.payload.get(key) == index:
            if event.kind == "message":
                lines.add(str(event.payload.get("text", "")))
            session.delete(event)
            counts["events"] += 1
    for action in session.exec(
        select(Action).where(Action.game_id == game_id, col(Action.kind).in_(_OWN_ACTIONS))
    ).all():
        if action.payload.get("seat") == index:
            if action.kind == "say":
                lines.add(str(action.payload.get("text", "")))
            session.delete(action)
            counts["actions"] += 1
    _flush(session)
    _rewrite(session, game_id, [(name, line) for line in lines], user_id, counts, actions=True)
    if _planning(session):
        # the hooks write; they run when the plan is applied (`_apply`), before the seat's
        # own change, as here
        session.info[_HOOKS] = (game_id, index)
    else:
        for file_hook in WITHDRAWAL_FILE_HOOKS:
            counts["hook_rows"] += int(file_hook(game_id, index))
        for hook in WITHDRAWAL_HOOKS:
            counts["hook_rows"] += int(hook(session, game_id, index))
    seat.user_id = None
    seat.withdrawn = True
    seat.scrubbed_at = utcnow()
    session.add(seat)
    _flush(session)


def _delete(session: Session, model: Any, game_id: str, where: Any) -> int:
    if _planning(session):
        found = session.exec(select(model).where(model.game_id == game_id, where)).all()
        for row in found:
            session.delete(row)
        return len(found)
    result = session.execute(sa.delete(model).where(model.game_id == game_id, where))
    return int(getattr(result, "rowcount", 0) or 0)


# --- plan, then apply ---------------------------------------------------------------------------
# An ended game's rows no longer change, so a withdrawal step can work out everything it will do
# on a read-only snapshot (no write lock held while it reads and rewrites text: SQLite has one
# writer, the games' own writes wait for it) and then write it all in one short transaction.

_PLAN, _HOOKS = "mafiabot.withdraw.plan", "mafiabot.withdraw.hooks"
_COUNTS = "mafiabot.withdraw.counts"


def _planning(session: Session) -> bool:
    return bool(session.info.get(_PLAN))


def _flush(session: Session) -> None:
    if not _planning(session):
        session.flush()


@dataclass
class Plan:
    """What one withdrawal step writes, worked out on a read-only snapshot (`_plan`): plain
    data (table names, ids, values), so a process of its own can work it out and the bot's one
    writer apply it (`apply_plan`) in a transaction of a few milliseconds."""

    #: table name -> ids of the rows to delete
    gone: dict[str, list[Any]] = field(default_factory=dict)
    #: (table name, columns) -> [{"_id": id, column: value, ...}]
    updates: dict[tuple[str, tuple[str, ...]], list[dict[str, Any]]] = field(default_factory=dict)
    #: (table name, primary key, values) of the seat itself, written after the hooks
    seats: list[tuple[str, dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    #: (game id, seat index) the withdrawal hooks run for, if any
    hooks: tuple[str, int] | None = None
    #: what the plan removes and redacts (the report's counts)
    counts: Counter[str] = field(default_factory=Counter)
    #: (table name, row id) -> the columns it changes, as the snapshot had them: the plan is
    #: written only over those very values (`apply_plan`)
    before: dict[tuple[str, Any], dict[str, Any]] = field(default_factory=dict)

    def writes(self) -> bool:
        return bool(self.gone or self.updates or self.seats or self.hooks is not None)


def _plan(engine: Engine, work: Callable[[Session], None]) -> Plan:
    """Run ``work`` on a session that writes nothing (its changes are only recorded: deleted
    and changed rows, and the hooks to run) and return them as a `Plan`."""
    plan = Plan()
    session = Session(engine, expire_on_commit=False, autoflush=False)
    session.info[_PLAN] = True
    session.info[_COUNTS] = plan.counts
    try:
        work(session)
        for obj in session.deleted:
            table, key = _row_key(obj)
            plan.gone.setdefault(table.name, []).append(_single_id(key))
        for obj in session.dirty:
            state = sa.inspect(obj)
            values = {
                attr.key: attr.value
                for attr in state.attrs
                if attr.history.has_changes() and attr.key in state.mapper.columns
            }
            if not values:
                continue
            table, key = _row_key(obj)
            old = {
                attr.key: attr.history.deleted[0]
                for attr in state.attrs
                if attr.key in values and attr.history.deleted
            }
            if old and list(key) == ["id"]:
                plan.before[(table.name, key["id"])] = old
            if isinstance(obj, Seat):
                plan.seats.append((table.name, key, values))
            else:
                cols = tuple(sorted(values))
                plan.updates.setdefault((table.name, cols), []).append(
                    {"_id": _single_id(key), **values}
                )
        plan.hooks = session.info.get(_HOOKS)
    finally:
        session.rollback()
        session.close()
    return plan


def run_file_hooks(plan: Plan) -> int:
    """The plan's `WITHDRAWAL_FILE_HOOKS` (files on disk: no transaction is held meanwhile).
    Run before the plan is applied, so a withdrawal stopped in between redoes them."""
    if plan.hooks is None:
        return 0
    return sum(int(hook(*plan.hooks)) for hook in WITHDRAWAL_FILE_HOOKS)


def apply_plan(where: Session | sa.Connection, plan: Plan) -> int:
    """Write ``plan`` in the transaction of ``where``, set-wise: one DELETE per table, one
    executemany UPDATE per table and set of columns, the hooks, the seat last. Returns the
    rows the hooks changed. Touches nothing but the transaction, so it may be run again.
    Raises `StalePlan` (before writing anything) when a row it rewrites is no longer as the
    plan read it."""
    tables = SQLModel.metadata.tables
    conn = where.connection() if isinstance(where, Session) else where
    check_fresh(conn, plan.before)
    hook_rows = 0
    for name, ids in plan.gone.items():
        table = tables[name]
        conn.execute(sa.delete(table).where(table.c.id.in_(ids)))
    for (name, cols), params in plan.updates.items():
        table = tables[name]
        stmt = (
            sa.update(table)
            .where(table.c.id == sa.bindparam("_id"))
            .values({c: sa.bindparam(c) for c in cols})
        )
        conn.execute(stmt, params)
    if plan.hooks is not None and WITHDRAWAL_HOOKS:
        if isinstance(where, Session):
            for hook in WITHDRAWAL_HOOKS:
                hook_rows += int(hook(where, *plan.hooks))
            where.flush()
        else:
            with Session(bind=conn) as session:
                for hook in WITHDRAWAL_HOOKS:
                    hook_rows += int(hook(session, *plan.hooks))
                session.flush()
    for name, key, values in plan.seats:
        table = tables[name]
        conn.execute(
            sa.update(table).where(*(table.c[k] == v for k, v in key.items())).values(**values)
        )
    return hook_rows


def _applied(engine: Engine, make: Callable[[], Plan], counts: Counter[str]) -> None:
    """The plan ``make`` works out, applied in a transaction of its own on ``engine`` (the
    operator command, tests; the bot applies plans through its writer:
    `bot.protection.withdrawals`);
    worked out again if another withdrawal changed its rows meanwhile."""
    for attempt in range(REPLANS + 1):
        plan = make()
        hook_rows = run_file_hooks(plan)
        if plan.writes():
            try:
                with engine.begin() as conn:
                    hook_rows += apply_plan(conn, plan)
            except Exception as err:
                if not replannable(err):
                    raise
                if attempt == REPLANS:
                    raise
                continue
        counts.update(plan.counts)
        counts["hook_rows"] += hook_rows
        break
    if engine.dialect.name == "sqlite":
        # Copy what was just written from the write-ahead log into the database here, so the
        # games' own commits do not find a long log to checkpoint (SQLite checkpoints on the
        # commit that crosses its threshold, with an fsync); PASSIVE never waits on a writer.
        with engine.connect() as conn:
            conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")


def _single_id(key: dict[str, Any]) -> Any:
    assert list(key) == ["id"], key
    return key["id"]


def _row_key(obj: Any) -> tuple[sa.Table, dict[str, Any]]:
    mapper = sa.inspect(obj).mapper
    return mapper.local_table, {c.key: getattr(obj, c.key) for c in mapper.primary_key}


def _remove_id(
    session: Session, game_ids: Iterable[str], user_id: str, counts: Counter[str], *, actions: bool
) -> None:
    """Their platform id typed or mentioned anywhere in these games becomes "[withdrawn]"."""
    for game_id in game_ids:
        _rewrite(session, game_id, [], user_id, counts, actions=actions, only_matching=True)


# Free-text fields inside event and action payloads, by kind. Other payload strings are names
# and enums that the engine must be able to read back; they are never rewritten.
_EVENT_TEXT = {"message": "text", "game_over": "reason"}
_ACTION_TEXT = {"say": "text", "abort": "reason"}


def _rewrite(
    session: Session,
    game_id: str,
    lines: list[tuple[str, str]],
    user_id: str | None,
    counts: Counter[str],
    *,
    actions: bool,
    only_matching: bool = False,
) -> None:
    """Redact ``lines`` (speaker, text) and ``user_id`` in every free text of a game.

    Game-Manager lines never quote players, so only the id is removed from them (a bare-line
    match there could only be a false one). ``only_matching`` reads just the rows whose text
    contains the id (filtered in SQL), for the id-only pass over a whole server.
    """

    def id_only(text: str) -> str:
        return text if user_id is None else remove_user_id(text, user_id, WITHDRAWN)

    def player_text(text: str) -> str:
        return id_only(redact_lines(text, lines, WITHDRAWN))

    def rows(model: Any, *columns: Any) -> Sequence[Any]:
        query = select(model).where(model.game_id == game_id)
        if only_matching and user_id is not None:
            query = query.where(
                sa.or_(*(sa.cast(c, sa.Text).contains(user_id, autoescape=True) for c in columns))
            )
        found = session.exec(query).all()
        if _planning(session):  # rows deleted in this plan are gone already
            found = [r for r in found if r not in session.deleted]
        return found

    for msg in rows(Message, Message.text):
        new = (id_only if msg.speaker == GAME_MANAGER else player_text)(msg.text)
        if new != msg.text:
            msg.text = new
            counts["messages_redacted"] += 1
    json_models: list[tuple[Any, dict[str, str], str]] = [(Event, _EVENT_TEXT, "events_redacted")]
    if actions:
        json_models.append((Action, _ACTION_TEXT, "actions_redacted"))
    for model, text_key, label in json_models:
        for row in rows(model, model.payload):
            key = text_key.get(row.kind)
            old = row.payload.get(key) if key is not None else None
            if not isinstance(old, str):
                continue
            new = (player_text if key == "text" else id_only)(old)
            if new != old:
                row.payload = {**row.payload, key: new}
                counts[label] += 1
    text_cols = ("prompt", "output", "decision", "error")
    for call in rows(LLMCall, *(getattr(LLMCall, c) for c in text_cols)):
        changed = False
        for attr in text_cols:
            old = getattr(call, attr)
            if old:
                new = player_text(old)
                if new != old:
                    setattr(call, attr, new)
                    changed = True
        if changed:
            counts["llm_calls_redacted"] += 1
    for survey in rows(SurveyResponse, SurveyResponse.comments):
        if survey.comments:
            new = player_text(survey.comments)
            if new != survey.comments:
                survey.comments = new
                counts["survey_comments_redacted"] += 1
    game = session.get(Game, game_id)
    if game is not None and game.end_reason:
        game.end_reason = id_only(game.end_reason)
    _flush(session)


# --- operator command ---------------------------------------------------------------------------


def run_withdraw(
    db_url: str, platform: str, server: str, user_id: str, console: Console
) -> WithdrawalReport:
    """``mafiabot consent withdraw``: migrate, withdraw, apply any pending withdrawals of ended
    games, print what was done."""
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        report = withdraw(engine, platform, server, user_id)
        apply_pending_withdrawals(engine)
    finally:
        engine.dispose()
    for line in report.summary():
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    return report
