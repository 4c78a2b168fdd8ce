"""The service's games, move for move: a digest of fixed, scripted games played through
`GameService` (the lobby, lines, votes, night actions, refusals, deadlines, the journal and
the delivery to listeners). A refactoring of the service, its parts (`bot.service.live`,
`bot.service.moments`, `bot.service.journal`, `bot.service.ownership`, `bot.service.recovery`) or
its delivery lanes must leave
it equal; a change meant to alter what a game does updates ``DIGEST`` in the same commit, and
says so.

Only what the script decides is in the digest, never when it happened: each game waits on the
service's own events (a talk phase ends at its deadline, a vote phase when everyone has
voted), and every moment in an event is replaced by a mark.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
from collections.abc import Sequence
from typing import Any

from sqlalchemy.engine import Engine
from sqlmodel import Session, select

from bot.service.live import LiveGame
from bot.service.port import GameService, ServiceError
from bot.store import models as m
from games.config import GameConfig
from games.errors import RuleError
from games.events import Event, event_to_dict
from games.state import PhaseKind

#: sha256 of the games below: the same on the service before it was split into its parts
#: (561769b) and after
DIGEST = "1f3551f942ef2e2d17ad9dcf1a33d13ef2c8c9359d20db5965099d635a667725"

_MOMENT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d")

#: talk phases end at their deadline (0.1 s at speed 20); votes end when everyone has voted
CONFIG = dict(day_seconds=2, vote_seconds=3600, night_seconds=2, night_vote_seconds=3600)
GAMES = [
    (players, roles, seed)
    for players, roles in (
        (5, ()),
        (6, ("detective",)),
        (7, ("detective", "doctor")),
        (8, ()),
        (9, ("doctor",)),
    )
    for seed in (1, 2)
]


def _plain(value: Any) -> Any:
    """``value`` with every moment replaced by a mark (what was done, not when)."""
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, str) and _MOMENT.match(value):
        return "<t>"
    return value


class Batches:
    """A listener: every committed batch, in order, and a wake-up for the script."""

    def __init__(self) -> None:
        self.batches: list[tuple[str, list[Any]]] = []
        self.news = asyncio.Event()

    async def on_events(self, game: LiveGame, events: Sequence[Event]) -> None:
        self.batches.append((game.id, [_plain(event_to_dict(e)) for e in events]))
        self.news.set()


async def _refused(log: list[Any], call: Any) -> None:
    """Run an action expected to be refused; its refusal (kind and words) goes in the log."""
    try:
        log.append(["accepted", await call])
    except (RuleError, ServiceError) as exc:
        log.append([type(exc).__name__, str(exc)])


async def play(svc: GameService, listener: Batches, players: int, roles: Any, seed: int) -> Any:
    log: list[Any] = []
    game_id = await svc.create_game(GameConfig(roles=roles, **CONFIG), seed=seed, speed=20)  # type: ignore[arg-type]
    for i in range(players):
        await svc.join(game_id, f"user{i}")
    await _refused(log, svc.join(game_id, "user0"))
    await svc.start(game_id)
    game = svc.games[game_id]
    log.append([s.name for s in game.seats])
    rng = random.Random(seed)
    done: set[int] = set()
    while True:
        state = game.state
        assert state is not None
        if state.over:
            break
        phase = state.phase
        if phase.seq not in done and phase.kind in (PhaseKind.VOTE, PhaseKind.NIGHT_VOTE):
            done.add(phase.seq)
            night = phase.kind is PhaseKind.NIGHT_VOTE
            alive = sorted(state.alive())
            dead = [s.index for s in state.seats if not s.alive]
            for seat in alive:
                if night and seat not in state.alive_mafia():
                    await _refused(log, svc.say(game_id, seat, "is anyone awake?"))
                    continue
                await svc.say(game_id, seat, f"seat {seat}, phase {phase.seq}: hear me out")
            if dead:
                await _refused(log, svc.say(game_id, dead[0], "from beyond"))
                await _refused(log, svc.vote(game_id, dead[0], state.seats[alive[0]].name))
            await _refused(log, svc.vote(game_id, alive[0], "Nobody At All"))
            for seat in sorted(state.night_actors()) if night else ():
                targets = state.night_targets(seat)
                target = state.seats[rng.choice(targets)].name
                await svc.night_act(game_id, seat, target, platform_id=f"act:{phase.seq}:{seat}")
            voters = sorted(state.eligible_voters())
            for n, seat in enumerate(voters):
                current = game.state
                assert current is not None
                if current.phase.seq != phase.seq:
                    break
                targets = current.vote_targets(seat)
                pick = None if (not night and rng.random() < 0.15) else rng.choice(targets)
                name = None if pick is None else current.seats[pick].name
                click = f"vote:{phase.seq}:{seat}"
                first = await svc.vote(game_id, seat, name, platform_id=click)
                if n < len(voters) - 1:  # the same click again changes nothing
                    log.append([first, await svc.vote(game_id, seat, name, platform_id=click)])
            continue
        listener.news.clear()
        if game.state is state:
            await asyncio.wait_for(listener.news.wait(), 30)
    await svc.drain(game_id)
    log.append(await svc.history(game_id))
    return _plain(log)


async def fingerprint(svc: GameService, engine: Engine) -> str:
    listener = Batches()
    svc.subscribe(listener)
    digest = hashlib.sha256()
    for players, roles, seed in GAMES:
        log = await play(svc, listener, players, roles, seed)
        digest.update(json.dumps(log, sort_keys=True).encode())
    await svc.drain()
    order = dict.fromkeys(game_id for game_id, _ in listener.batches)
    names = {game_id: f"game{n}" for n, game_id in enumerate(order)}
    with Session(engine) as s:
        rows = s.exec(select(m.Game)).all()
        digest.update(json.dumps(sorted((r.status, r.winner) for r in rows)).encode())
    for game_id, batch in listener.batches:
        digest.update(json.dumps([names[game_id], batch], sort_keys=True).encode())
    return digest.hexdigest()


async def test_the_service_plays_the_same_games_move_for_move(
    service: GameService, engine: Engine
) -> None:
    assert await fingerprint(service, engine) == DIGEST
