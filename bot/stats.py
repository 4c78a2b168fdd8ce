"""Per-server player statistics and the leaderboard (``/mafia stats``, ``/mafia leaderboard``).

For each person on one server (a Discord guild, a Slack workspace): games played, wins by side
(bystanders, mafia), how often they survived, and their spot-the-AI score (how many of their
survey guesses named the AI). The leaderboard ranks people by a skill rating from the
`openskill` package (the Plackett-Luce model, as UltiMafia's hall of fame uses): in each game
every person plays one-on-one against the average rating of the other side (the sides are of
very unequal size, so rated as two teams the larger one would be the favourite by numbers
alone), the winner ranked first; the rating shown is the model's *ordinal* (mu - 3 sigma),
which rises as the model grows sure of a player.

Who appears: only people whose latest answer to the consent notice on this server is a "yes"
not withdrawn. A withdrawal (`bot.privacy`) marks their seats withdrawn, and those seats never
count again; agents never appear (their seats play in the rating as anonymous newcomers, so a
win against the AI still counts). A game counts once its reveal has been given
(``games.revealed_at``, `bot.reveal`): until then the stats would tell who sat on which side,
and so which character was a person.

This is about players, not research: the research's spot-the-AI *rate* is `mafiabot report`'s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from openskill.models import PlackettLuce
from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.store.models import Consent, Game, Seat, Server, SurveyResponse
from games.roles import get_role

#: players listed on the leaderboard
TOP = 10


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
    #: survey guesses made (games whose survey asked whom they suspected)
    guesses: int = 0
    #: of those, how many named the AI
    spotted: int = 0
    mu: float = 25.0
    sigma: float = 25.0 / 3
    rating: float = 0.0

    @property
    def accuracy(self) -> float | None:
        return self.spotted / self.guesses if self.guesses else None


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


def server_stats(engine: Engine, platform: str, server: str) -> dict[str, PlayerStats]:
    """Every person who may appear, by user id, with their numbers and rating."""
    model = PlackettLuce()
    with Session(engine) as session:
        shown = consenting(session, platform, server)
        games = session.exec(
            select(Game)
            .join(Server, col(Server.id) == Game.server_id)
            .where(
                Server.platform == platform,
                Server.external_id == server,
                Game.status == "finished",
                col(Game.winner).is_not(None),
                col(Game.revealed_at).is_not(None),
            )
            .order_by(col(Game.ended_at), col(Game.id))
        ).all()
        ids = [g.id for g in games]
        seats = session.exec(select(Seat).where(col(Seat.game_id).in_(ids))).all() if ids else []
        answers = (
            session.exec(select(SurveyResponse).where(col(SurveyResponse.game_id).in_(ids))).all()
            if ids
            else []
        )
    by_game: dict[str, list[Seat]] = {}
    for seat in seats:
        by_game.setdefault(seat.game_id, []).append(seat)
    guesses: dict[tuple[str, int], bool] = {}
    for answer in answers:
        if answer.identified_ai is not None:
            key = (answer.game_id, answer.seat_index)
            guesses[key] = guesses.get(key, False) or answer.identified_ai

    stats: dict[str, PlayerStats] = {}
    ratings: dict[str, Any] = {}
    for game in games:
        teams: dict[bool, list[tuple[str | None, Any]]] = {True: [], False: []}
        for seat in by_game.get(game.id, []):
            side = _side(seat.role)
            if side is None:
                continue
            won = side == game.winner or seat.role == game.winner  # (a solo killer)
            person = seat.user_id if _counts(seat, shown) else None
            if person is None:
                teams[won].append((None, model.rating()))  # agent or not shown: a newcomer
                continue
            assert seat.user_id is not None
            mine = stats.setdefault(seat.user_id, PlayerStats(seat.user_id))
            mine.games += 1
            mine.wins += won
            if side == "mafia":
                mine.games_mafia += 1
                mine.wins_mafia += won
            else:
                mine.games_bystanders += 1
                mine.wins_bystanders += won
            mine.survived += seat.alive
            guess = guesses.get((game.id, seat.index))
            if guess is not None:
                mine.guesses += 1
                mine.spotted += guess
            teams[won].append((seat.user_id, _rating(ratings, seat.user_id, model)))
        if not teams[True] or not teams[False]:
            continue
        # The sides are of unequal size (a mafia of 1 against 5): rated as teams, the large
        # side would be the favourite by its numbers alone. So each person plays one-on-one
        # against the other side's average, all from the ratings before this game.
        updated: dict[str, Any] = {}
        for won, team in teams.items():
            opponent = _average(model, [r for _, r in teams[not won]])
            for user, rating in team:
                if user is None:
                    continue
                ranks: list[float] = [1.0, 2.0] if won else [2.0, 1.0]
                [[new], _] = model.rate([[rating], [opponent]], ranks=ranks)
                updated[user] = new
        ratings.update(updated)
    for user, mine in stats.items():
        final = _rating(ratings, user, model)
        mine.mu, mine.sigma, mine.rating = final.mu, final.sigma, final.ordinal()
    return stats


def _counts(seat: Seat, shown: set[str]) -> bool:
    return (
        not seat.is_agent and not seat.withdrawn and seat.user_id is not None
    ) and seat.user_id in shown


def leaderboard(stats: dict[str, PlayerStats], top: int = TOP) -> list[PlayerStats]:
    """The best ``top`` by rating (ties: more games, then more spotted)."""
    ranked = sorted(stats.values(), key=lambda s: (-s.rating, -s.games, -s.spotted, s.user_id))
    return ranked[:top]


# --- the words, the same on every platform ---------------------------------------------------


def _pct(part: int, whole: int) -> str:
    return f"{part} of {whole} ({round(100 * part / whole)}%)" if whole else "none yet"


def stats_text(mine: PlayerStats | None, who: str) -> str:
    """``/mafia stats``: one person's numbers on this server (``who``: how to name them)."""
    if mine is None or mine.games == 0:
        return (
            f"No games counted for {who} on this server yet. (Only people who agreed to the "
            "notice appear; a game counts once its AI has been revealed.)"
        )
    return "\n".join(
        [
            f"**{who}** on this server:",
            f"Games: {mine.games}, won {_pct(mine.wins, mine.games)}.",
            f"As a bystander: won {_pct(mine.wins_bystanders, mine.games_bystanders)}. "
            f"As mafia: won {_pct(mine.wins_mafia, mine.games_mafia)}.",
            f"Survived: {_pct(mine.survived, mine.games)}.",
            f"Spotted the AI: {_pct(mine.spotted, mine.guesses)}.",
            f"Skill rating: {mine.rating:.1f} (openskill ordinal; mu {mine.mu:.1f}, "
            f"sigma {mine.sigma:.1f}).",
        ]
    )


def leaderboard_text(rows: Sequence[PlayerStats], name: Callable[[str], str]) -> str:
    """``/mafia leaderboard``: rank, person (``name(user_id)``), rating, games, wins and the
    spot-the-AI score."""
    if not rows:
        return (
            "No one on the leaderboard yet: it lists people who agreed to the notice, once a "
            "game they played has revealed its AI."
        )
    lines = ["**Leaderboard** (skill rating; spot-the-AI: survey guesses that named the AI)"]
    for rank, row in enumerate(rows, 1):
        spot = f"{row.spotted}/{row.guesses}" if row.guesses else "-"
        lines.append(
            f"{rank}. {name(row.user_id)}: rating {row.rating:.1f}, {row.games} game(s), "
            f"{row.wins} win(s), spot-the-AI {spot}"
        )
    return "\n".join(lines)


def _average(model: PlackettLuce, side: Sequence[Any]) -> Any:
    mu = sum(r.mu for r in side) / len(side)
    sigma = (sum(r.sigma**2 for r in side) / len(side)) ** 0.5
    return model.rating(mu=mu, sigma=sigma)


def _rating(ratings: dict[str, Any], user: str, model: PlackettLuce) -> Any:
    found = ratings.get(user)
    return model.rating() if found is None else found
