"""Per-server player statistics and the leaderboard (``/mafia stats``, ``/mafia leaderboard``).

For each person on one server (a Discord guild, a Slack workspace): games played and won, per
side and per role, how often they survived, their spot-the-AI score (how many of their survey
guesses named the AI, beside what guessing at random at those tables would have given), and a
skill rating from the `openskill` package (the Plackett-Luce model, as UltiMafia's hall of
fame uses): in each game every person plays one-on-one against the average rating of the other
side (the sides are of very unequal size, so rated as two teams the larger one would be the
favourite by numbers alone), the winner ranked first.

Incremental. The numbers live in ``player_ratings``, one row per person and server, and each
revealed game is counted once (``rated_games``), in the order they ended: at start-up every
server's games not counted yet (:func:`catch_up_all`, after an upgrade the whole history, off
the event loop) and each game when it is revealed (:func:`count_revealed`), so a query reads a
few rows instead of re-rating the server's whole history (it counts a bounded batch at
most). Agents play in the rating as anonymous newcomers (so a win against the AI counts); the
server's AI players share one row (``AI``: games, wins, how often they were named), which has
no rating.

The board ranks by the rating's estimate of skill (mu), not by the model's conservative
*ordinal* (mu - 3 sigma, which climbs with every game played, so it rewarded volume), among
people with at least `MIN_GAMES` games (the others are listed as not ranked yet); equal ratings
share a rank. Ratings are said in plain words (`skill_words`); the numbers on request.

Who appears: only people whose latest answer to the consent notice on this server is a "yes"
not withdrawn. A withdrawal (`bot.protection.privacy`) marks their seats withdrawn (they are never
counted
again) and deletes their row (`forget_ratings`; else the next catch-up drops it), so games
from before the withdrawal never count for them again, even if they agree later. A game
counts once its reveal has been given (``games.revealed_at``, `bot.players.reveal`): until then the
stats would tell who sat on which side, and so which character was a person.

This is about players, not research: the research's spot-the-AI *rate* is `mafiabot report`'s.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from openskill.models import PlackettLuce
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.players import seat_story, survey
from bot.protection.privacy import WITHDRAWAL_HOOKS
from bot.store.models import (
    Consent,
    Game,
    PlayerRating,
    RatedGame,
    Seat,
    Server,
    SurveyResponse,
    utcnow,
)
from games.roles import get_role

log = logging.getLogger(__name__)

#: rows of the leaderboard a page
PAGE = 15
#: kept for callers that ask for the old top ten
TOP = PAGE
#: games a person needs before their rating is ranked
MIN_GAMES = 3
#: the server's AI players' row in ``player_ratings``
AI = "@ai"
#: revealed games counted in one transaction
BATCH = 500
#: revealed games a stats or board query counts at most before it answers (the games are
#: counted at start-up and when each is revealed, so a query normally finds none left)
QUERY_BATCH = 50
#: revealed games the start-up count counts in one transaction (short ones: the games being
#: played meanwhile write to the same database)
START_BATCH = 100

MU, SIGMA = 25.0, 25.0 / 3


@dataclass
class PlayerStats:
    user_id: str
    games: int = 0
    wins: int = 0
    games_bystanders: int = 0
    wins_bystanders: int = 0
    games_mafia: int = 0
    wins_mafia: int = 0
    survived: int = 0
    #: role -> (games, wins)
    roles: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: survey guesses made (games whose survey asked whom they suspected)
    guesses: int = 0
    #: of those, how many named the AI
    spotted: int = 0
    #: how many random guesses at the same tables would have named it (the sum of the chances)
    chance: float = 0.0
    mu: float = MU
    sigma: float = SIGMA
    #: the board's number: the estimate of skill (mu)
    rating: float = MU

    @property
    def accuracy(self) -> float | None:
        return self.spotted / self.guesses if self.guesses else None

    @property
    def ordinal(self) -> float:
        """The model's conservative rating (mu - 3 sigma)."""
        return self.mu - 3 * self.sigma

    @property
    def ranked(self) -> bool:
        return self.games >= MIN_GAMES

    @property
    def spot_skill(self) -> float | None:
        """How much better than chance their guesses were: (rate - chance) / (1 - chance),
        1 for always right, 0 for no better than guessing, below 0 for worse."""
        if not self.guesses:
            return None
        rate, luck = self.spotted / self.guesses, self.chance / self.guesses
        return (rate - luck) / (1 - luck) if luck < 1 else 0.0


@dataclass
class AIStats:
    games: int = 0
    wins: int = 0
    #: guesses at its games, and how many named one of its players
    guesses: int = 0
    named: int = 0
    chance: float = 0.0


def _side(role: str | None) -> str | None:
    if role is None:
        return None
    try:
        return get_role(role).team
    except KeyError:
        return None


def consenting(session: Session, platform: str, server: str) -> set[str]:
    """The people whose latest consent answer on this server agrees and is not withdrawn."""
    rows = session.exec(
        select(Consent)
        .where(Consent.platform == platform, Consent.server_external_id == server)
        .order_by(col(Consent.t), col(Consent.id))
    ).all()
    latest: dict[str, Consent] = {}
    for row in rows:
        latest[row.user_id] = row
    return {u for u, row in latest.items() if row.agreed and row.withdrawn_at is None}


def _withdrawals(session: Session, platform: str, server: str) -> dict[str, datetime]:
    """Each person's latest withdrawal on this server."""
    rows = session.exec(
        select(Consent.user_id, Consent.withdrawn_at).where(
            Consent.platform == platform,
            Consent.server_external_id == server,
            col(Consent.withdrawn_at).is_not(None),
        )
    ).all()
    out: dict[str, datetime] = {}
    for user, t in rows:
        if t is not None and (user not in out or t > out[user]):
            out[user] = t
    return out


# --- counting the revealed games, once each ----------------------------------------------------


def catch_up(
    engine: Engine,
    platform: str,
    server: str,
    *,
    limit: int | None = None,
    stop: Callable[[], bool] | None = None,
    batch: int = BATCH,
) -> int:
    """Count the server's revealed games not counted yet (oldest first), at most ``limit``
    (None: all), and drop the rows of people who withdrew since their row began. Returns the
    games counted, ``batch`` in each transaction. ``stop()`` true: no further batch is begun.
    Safe to run from several processes at once: a game is counted by whoever records it in
    ``rated_games`` first; the others' transaction rolls back and they read the result. After
    three failed tries it stops (the next catch-up tries again) and the answer is what is
    kept."""
    counted = 0
    failures = 0
    while failures < 3:
        size = batch if limit is None else min(batch, limit - counted)
        if size <= 0 or (stop is not None and stop()):
            break
        try:
            done = _catch_up_batch(engine, platform, server, size)
        except sa.exc.IntegrityError:
            failures += 1  # another process counted the same games first: read again
            continue
        except sa.exc.OperationalError as err:  # (a busy database: answer from what is kept)
            failures += 1
            log.warning("stats: counting the new games failed (%s); will try again", err)
            continue
        counted += done
        if done < size:
            break
    return counted


#: a revealed game not counted yet (joined: ``servers`` and ``rated_games``)
_UNCOUNTED = (
    Game.status == "finished",
    col(Game.winner).is_not(None),
    col(Game.revealed_at).is_not(None),
    col(RatedGame.game_id).is_(None),
)


def servers_behind(engine: Engine) -> list[tuple[str, str]]:
    """Every (platform, server) with revealed games not counted yet."""
    with Session(engine) as session:
        rows = session.exec(
            select(Server.platform, Server.external_id)
            .join(Game, col(Game.server_id) == col(Server.id))
            .outerjoin(RatedGame, col(RatedGame.game_id) == col(Game.id))
            .where(*_UNCOUNTED)
            .distinct()
        ).all()
    return sorted((p, s) for p, s in rows)


def catch_up_all(engine: Engine, stop: Callable[[], bool] | None = None) -> int:
    """Start-up (after the migrations, off the event loop): count the revealed games not
    counted yet on every server (after an upgrade that added the ratings, the whole history),
    so no query has to. ``stop()`` true: ends after the batch under way. Returns the games
    counted."""
    counted = 0
    for platform, server in servers_behind(engine):
        if stop is not None and stop():
            break
        try:
            counted += catch_up(engine, platform, server, stop=stop, batch=START_BATCH)
        except sa.exc.SQLAlchemyError:
            log.exception("stats: counting the games of %s %s failed", platform, server)
    if counted:
        log.info("stats: counted %d revealed games at start-up", counted)
    return counted


def count_revealed(engine: Engine, game_id: str) -> int:
    """A game was just revealed: count it (and any older revealed game of its server not
    counted yet, oldest first), so the next query reads the rows as they are."""
    with Session(engine) as session:
        where = session.exec(
            select(Server.platform, Server.external_id)
            .join(Game, col(Game.server_id) == col(Server.id))
            .where(col(Game.id) == game_id)
        ).first()
    if where is None:
        return 0
    return catch_up(engine, where[0], where[1])


def _catch_up_batch(engine: Engine, platform: str, server: str, size: int = BATCH) -> int:
    with Session(engine) as session:
        games = session.exec(
            select(Game)
            .join(Server, col(Server.id) == col(Game.server_id))
            .outerjoin(RatedGame, col(RatedGame.game_id) == col(Game.id))
            .where(Server.platform == platform, Server.external_id == server, *_UNCOUNTED)
            .order_by(col(Game.ended_at), col(Game.id))
            .limit(size)
        ).all()
        if not games:
            return 0  # (nothing new: a query reads no more; a withdrawal's row went at once)
        withdrew = _withdrawals(session, platform, server)
        rows = {
            r.user_id: r
            for r in session.exec(
                select(PlayerRating).where(
                    PlayerRating.platform == platform, PlayerRating.server_external_id == server
                )
            ).all()
        }
        for user, row in list(rows.items()):
            if user in withdrew and withdrew[user] >= row.created_at:
                session.delete(row)
                del rows[user]
        ids = [g.id for g in games]
        seats = session.exec(select(Seat).where(col(Seat.game_id).in_(ids))).all()
        answers = session.exec(
            select(SurveyResponse).where(
                col(SurveyResponse.game_id).in_(ids),
                col(SurveyResponse.identified_ai).is_not(None),
            )
        ).all()
        by_game: dict[str, list[Seat]] = {}
        for seat in seats:
            by_game.setdefault(seat.game_id, []).append(seat)
        guessed = {(a.game_id, a.seat_index): a for a in answers}
        model = PlackettLuce()
        now = utcnow()

        def row_of(user: str) -> PlayerRating:
            row = rows.get(user)
            if row is None:
                row = PlayerRating(
                    platform=platform, server_external_id=server, user_id=user, mu=MU, sigma=SIGMA
                )
                session.add(row)
                rows[user] = row
            return row

        for game in games:
            session.add(RatedGame(game_id=game.id, rated_at=now))
            _count_game(game, by_game.get(game.id, []), guessed, row_of, model, withdrew)
        for row in rows.values():
            row.updated_at = now
        session.commit()
        return len(games)


def _count_game(
    game: Game,
    seats: Sequence[Seat],
    guessed: dict[tuple[str, int], SurveyResponse],
    row_of: Callable[[str], PlayerRating],
    model: PlackettLuce,
    withdrew: dict[str, datetime],
) -> None:
    teams: dict[bool, list[tuple[PlayerRating | None, Any]]] = {True: [], False: []}
    # "The AI" is a seat an agent played from start to end (a seat taken over from a person is
    # not: docs/spot-the-ai.md); chance counts only those seats
    the_ai = seat_story.the_ai(seats)
    agents = len(the_ai)
    chance = min(1.0, agents / (len(seats) - 1)) if len(seats) > 1 else 0.0
    ai = row_of(AI) if agents else None
    if ai is not None:
        ai.games += 1
        ai.wins += any(game.winner in (_side(s.role), s.role) for s in the_ai)
    for seat in seats:
        side = _side(seat.role)
        if side is None:
            continue
        won = side == game.winner or seat.role == game.winner  # (a solo killer)
        person = seat.user_id
        late = person in withdrew and game.started_at and withdrew[person] >= game.started_at
        if seat.is_agent or seat.withdrawn or person is None or late:
            teams[won].append((None, model.rating()))  # agent or gone: a newcomer
            continue
        mine = row_of(person)
        mine.games += 1
        mine.wins += won
        mine.survived += seat.alive
        role = seat.role or "?"
        before = list(mine.roles.get(role, [0, 0]))
        mine.roles = {**mine.roles, role: [before[0] + 1, before[1] + int(won)]}
        answer = guessed.get((game.id, seat.index))
        # only a guess given before the reveal counts (one rule: bot.players.survey)
        if answer is not None and survey.guess_counts(answer, game.revealed_at):
            mine.guesses += 1
            mine.spotted += bool(answer.identified_ai)
            mine.chance += chance
            if ai is not None:
                ai.guesses += 1
                ai.named += bool(answer.identified_ai)
                ai.chance += chance
        teams[won].append((mine, model.rating(mu=mine.mu, sigma=mine.sigma)))
    if not teams[True] or not teams[False]:
        return
    # The sides are of unequal size (a mafia of 1 against 5): rated as teams, the large side
    # would be the favourite by its numbers alone. So each person plays one-on-one against the
    # other side's average, all from the ratings before this game.
    updated: list[tuple[PlayerRating, Any]] = []
    for won, team in teams.items():
        opponent = _average(model, [r for _, r in teams[not won]])
        for row, rating in team:
            if row is None:
                continue
            ranks: list[float] = [1.0, 2.0] if won else [2.0, 1.0]
            [[new], _] = model.rate([[rating], [opponent]], ranks=ranks)
            updated.append((row, new))
    for row, new in updated:
        row.mu, row.sigma = float(new.mu), float(new.sigma)


def _average(model: PlackettLuce, side: Sequence[Any]) -> Any:
    mu = sum(r.mu for r in side) / len(side)
    sigma = (sum(r.sigma**2 for r in side) / len(side)) ** 0.5
    return model.rating(mu=mu, sigma=sigma)


def forget_ratings(session: Session, game_id: str, seat_index: int) -> int:
    """Withdrawal hook: the person of this seat loses their row on the game's server at once
    (`catch_up` would drop it at the next query; this leaves nothing until then)."""
    seat = session.exec(
        select(Seat).where(Seat.game_id == game_id, Seat.index == seat_index)
    ).first()
    game = session.get(Game, game_id)
    if seat is None or seat.user_id is None or game is None or game.server_id is None:
        return 0
    server = session.get(Server, game.server_id)
    if server is None:
        return 0
    rows = session.exec(
        select(PlayerRating).where(
            PlayerRating.platform == server.platform,
            PlayerRating.server_external_id == server.external_id,
            PlayerRating.user_id == seat.user_id,
        )
    ).all()
    for row in rows:
        session.delete(row)
    return len(rows)


if forget_ratings not in WITHDRAWAL_HOOKS:
    WITHDRAWAL_HOOKS.append(forget_ratings)


# --- reading -----------------------------------------------------------------------------------


def _stats(row: PlayerRating) -> PlayerStats:
    roles = {str(k): (int(v[0]), int(v[1])) for k, v in (row.roles or {}).items()}
    out = PlayerStats(
        row.user_id,
        games=row.games,
        wins=row.wins,
        survived=row.survived,
        roles=roles,
        guesses=row.guesses,
        spotted=row.spotted,
        chance=row.chance,
        mu=row.mu,
        sigma=row.sigma,
        rating=row.mu,
    )
    for role, (games, wins) in roles.items():
        if _side(role) == "mafia":
            out.games_mafia += games
            out.wins_mafia += wins
        else:
            out.games_bystanders += games
            out.wins_bystanders += wins
    return out


@dataclass
class Board:
    """The server's people (consenting ones), ranked, and the AI's row."""

    ranked: list[tuple[int, PlayerStats]]
    unranked: list[PlayerStats]
    ai: AIStats | None
    #: people ranked by how much better than chance they spotted the AI
    spotters: list[tuple[int, PlayerStats]] = field(default_factory=list)

    def rank_of(self, user: str) -> int | None:
        return next((rank for rank, s in self.ranked if s.user_id == user), None)

    def of(self, user: str) -> PlayerStats | None:
        return next(
            (s for _, s in self.ranked if s.user_id == user),
            next((s for s in self.unranked if s.user_id == user), None),
        )


def server_stats(
    engine: Engine, platform: str, server: str, *, catch_up_limit: int | None = QUERY_BATCH
) -> dict[str, PlayerStats]:
    """Every person who may appear, by user id, with their numbers and rating. The games are
    counted at start-up (`catch_up_all`) and at each reveal (`count_revealed`); a revealed
    game still not counted (a reveal given by another process a moment ago) is counted
    first, at most ``catch_up_limit`` of them (the answer stays quick; the rest count at the
    next query or start-up)."""
    catch_up(engine, platform, server, limit=catch_up_limit)
    with Session(engine) as session:
        shown = consenting(session, platform, server)
        rows = session.exec(
            select(PlayerRating).where(
                PlayerRating.platform == platform, PlayerRating.server_external_id == server
            )
        ).all()
    return {r.user_id: _stats(r) for r in rows if r.user_id in shown and r.games > 0}


def board(
    engine: Engine, platform: str, server: str, *, catch_up_limit: int | None = QUERY_BATCH
) -> Board:
    """The board: counts a bounded batch of new revealed games (`server_stats`), then ranks."""
    stats = server_stats(engine, platform, server, catch_up_limit=catch_up_limit)
    with Session(engine) as session:
        ai_row = session.exec(
            select(PlayerRating).where(
                PlayerRating.platform == platform,
                PlayerRating.server_external_id == server,
                PlayerRating.user_id == AI,
            )
        ).first()
    ai = (
        AIStats(ai_row.games, ai_row.wins, ai_row.guesses, ai_row.named, ai_row.chance)
        if ai_row is not None and ai_row.games
        else None
    )
    return make_board(stats, ai)


def make_board(stats: dict[str, PlayerStats], ai: AIStats | None = None) -> Board:
    ranked = leaderboard(stats, top=len(stats))
    spotters = sorted(
        (s for s in stats.values() if s.guesses >= MIN_GAMES and s.spot_skill is not None),
        key=lambda s: (-(s.spot_skill or 0.0), -s.guesses, s.user_id),
    )
    return Board(
        ranked=_shared_ranks(ranked, lambda s: round(s.rating, 1)),
        unranked=sorted(
            (s for s in stats.values() if not s.ranked), key=lambda s: (-s.games, s.user_id)
        ),
        ai=ai,
        spotters=_shared_ranks(spotters, lambda s: round(s.spot_skill or 0.0, 2)),
    )


def _shared_ranks(
    rows: Sequence[PlayerStats], key: Callable[[PlayerStats], float]
) -> list[tuple[int, PlayerStats]]:
    """Standard competition ranks: equal keys share a rank ("1, 2, 2, 4")."""
    out: list[tuple[int, PlayerStats]] = []
    for i, row in enumerate(rows):
        same = out and key(out[-1][1]) == key(row)
        out.append((out[-1][0] if same else i + 1, row))
    return out


def leaderboard(stats: dict[str, PlayerStats], top: int = TOP) -> list[PlayerStats]:
    """The ranked people (at least `MIN_GAMES` games), best first by rating (ties: more
    games, then more spotted), at most ``top``."""
    ranked = sorted(
        (s for s in stats.values() if s.ranked),
        key=lambda s: (-round(s.rating, 1), -s.games, -s.spotted, s.user_id),
    )
    return ranked[:top]


# --- the words, the same on every platform ---------------------------------------------------


def _pct(part: int, whole: int) -> str:
    return f"{part} of {whole} ({round(100 * part / whole)}%)" if whole else "none yet"


def _games(n: int) -> str:
    return f"{n} game{'s' if n != 1 else ''}"


def skill_words(s: PlayerStats) -> str:
    """The rating in plain words: how the estimate compares with a newcomer's (25)."""
    d = s.mu - MU
    if d >= 4:
        words = "one of the strongest"
    elif d >= 1.5:
        words = "above average"
    elif d > -1.5:
        words = "about average"
    elif d > -4:
        words = "below average"
    else:
        words = "finding their feet"
    sure = "a first impression" if s.sigma > 6 else "fairly sure" if s.sigma > 4 else "sure"
    return f"{words} ({sure})"


def _numbers(s: PlayerStats) -> str:
    return f"mu {s.mu:.1f}, sigma {s.sigma:.1f}, mu - 3 sigma {s.ordinal:.1f}"


def _spot(s: PlayerStats) -> str:
    if not s.guesses:
        return "no guesses yet"
    luck = round(100 * s.chance / s.guesses)
    return f"{_pct(s.spotted, s.guesses)}; guessing at random: about {luck}%"


def record_lines(s: PlayerStats) -> list[str]:
    """Wins per side and per role, only the sides and roles they have played."""
    out: list[str] = []
    for side, games, wins in (
        ("bystanders", s.games_bystanders, s.wins_bystanders),
        ("mafia", s.games_mafia, s.wins_mafia),
    ):
        if not games:
            continue
        roles = sorted(
            (r for r in s.roles if (_side(r) == "mafia") == (side == "mafia")),
            key=lambda r: (-s.roles[r][0], r),
        )
        per_role = ", ".join(f"{r} {s.roles[r][1]}/{s.roles[r][0]}" for r in roles)
        detail = f" (won/played: {per_role})" if len(roles) > 1 or roles != [side] else ""
        label = "a bystander (town)" if side == "bystanders" else "mafia"
        out.append(f"As {label}: won {_pct(wins, games)}{detail}.")
    return out


def stats_text(
    mine: PlayerStats | None,
    who: str,
    *,
    rank: tuple[int, int] | None = None,
    numbers: bool = False,
) -> str:
    """``/mafia stats``: one person's numbers on this server (``who``: how to name them;
    ``rank``: (their rank, people ranked); ``numbers``: the rating's numbers too)."""
    if mine is None or mine.games == 0:
        return (
            f"No games counted for {who} on this server yet. (Only people who agreed to the "
            "notice appear; a game counts once its AI has been revealed.)"
        )
    if rank is not None:
        standing = f"#{rank[0]} of {rank[1]} on the leaderboard"
    else:
        left = MIN_GAMES - mine.games
        standing = f"not ranked yet ({left} more game{'s' if left != 1 else ''} to go)"
    lines = [
        f"**{who}** on this server: {standing}.",
        f"Games: {mine.games}, won {_pct(mine.wins, mine.games)}.",
        *record_lines(mine),
        f"Survived: {_pct(mine.survived, mine.games)}.",
        f"Spotted the AI: {_spot(mine)}.",
        f"Skill: {skill_words(mine)}" + (f"; {_numbers(mine)}." if numbers else "."),
    ]
    return "\n".join(lines)


def leaderboard_text(
    rows: Sequence[PlayerStats] | Board,
    name: Callable[[str], str],
    *,
    page: int = 1,
    me: str | None = None,
    numbers: bool = False,
) -> str:
    """``/mafia leaderboard``: one page of the ranked people (shared ranks shown "=2."), the
    asker's own place, those not ranked yet, the best spotters of the AI and the AI's row."""
    b = rows if isinstance(rows, Board) else make_board({r.user_id: r for r in rows})
    if not b.ranked and not b.unranked:
        return (
            "No one on the leaderboard yet: it lists people who agreed to the notice, once a "
            "game they played has revealed its AI."
        )
    pages = max(1, -(-len(b.ranked) // PAGE))
    page = min(max(1, page), pages)
    shown = b.ranked[(page - 1) * PAGE : page * PAGE]
    counts = [rank for rank, _ in b.ranked]
    lines = [
        f"**Leaderboard** (skill rating; {len(b.ranked)} ranked, at least {MIN_GAMES} games"
        + (f"; page {page} of {pages}" if pages > 1 else "")
        + ")"
    ]
    for rank, row in shown:
        tie = "=" if counts.count(rank) > 1 else ""
        rating = _numbers(row) if numbers else skill_words(row)
        spot = f"{row.spotted}/{row.guesses}" if row.guesses else "-"
        lines.append(
            f"{tie}{rank}. {name(row.user_id)}: {rating}; {_games(row.games)}, "
            f"{row.wins} won; spot-the-AI {spot}"
        )
    if page < pages:
        lines.append(f"(more: page {page + 1})")
    if me is not None:
        mine = b.rank_of(me)
        if mine is not None:
            lines.append(f"You: #{mine} of {len(b.ranked)}.")
        else:
            have = b.of(me)
            games = have.games if have is not None else 0
            lines.append(f"You: not ranked yet ({games} of {MIN_GAMES} games).")
    if b.unranked:
        names = ", ".join(f"{name(s.user_id)} ({s.games})" for s in b.unranked[:PAGE])
        more = f" and {len(b.unranked) - PAGE} more" if len(b.unranked) > PAGE else ""
        lines.append(f"Not ranked yet (games so far): {names}{more}.")
    if b.spotters:
        ranks = [r for r, _ in b.spotters]
        best = ", ".join(
            f"{'=' if ranks.count(rank) > 1 else ''}{rank}. {name(s.user_id)} "
            f"{s.spotted}/{s.guesses} (chance {round(100 * s.chance / s.guesses)}%)"
            for rank, s in b.spotters[:5]
        )
        lines.append(f"Best at spotting the AI (beyond chance at their tables): {best}.")
    if b.ai is not None:
        ai = b.ai
        named = (
            f"named by {ai.named} of {ai.guesses} guesses at its games "
            f"({round(100 * ai.named / ai.guesses)}%; guessing at random: about "
            f"{round(100 * ai.chance / ai.guesses)}%)"
            if ai.guesses
            else "no guesses at its games yet"
        )
        lines.append(f"The AI: {_games(ai.games)}, won {_pct(ai.wins, ai.games)}; {named}.")
    return "\n".join(lines)
