"""A person's own games (``/mafia history``, ``mafiabot history``) and who may see a replay.

`player_history` lists someone's last games on one server (a Discord guild, a Slack
workspace, the terminal): the character they played, their role and side, whether they won,
and, once the game's AI has been revealed, who the AI was and whom they guessed. Before the
reveal neither is shown (the AI's name is the survey's question; a person's own guess is shown
only beside the answer, so a list of guesses can't be read as a hint). Their role and result
are their own and known to them from the game.

`may_replay`: the replay page of a finished, revealed game is for everyone who played in it
(the moderators can ask for any game of their server, as before): a seat of theirs in it that
is not withdrawn. Seats given up by a withdrawal carry no account any more, so a withdrawn
person's games are gone from their history too (at once: the seats taken before their latest
withdrawal are left out while the cleaning is still under way).

The words (`history_text`) are the same on every platform; each adapter only says how to ask
for a replay there (``replay``: the command with ``{game}`` in it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.engine import Engine
from sqlmodel import Session, col, select

from bot.players import seat_story, survey
from bot.store.models import Consent, Game, Seat, Server, SurveyResponse
from games.names import display_list
from games.roles import get_role

#: games listed by default, and at most
SHOWN, MOST = 10, 25
#: the games that are over
ENDED = ("finished", "aborted")


@dataclass(frozen=True)
class HistoryEntry:
    game_id: str
    ended_at: datetime | None
    character: str
    role: str | None
    side: str | None
    #: "won", "lost", "stopped" (an aborted game, or one with no winner)
    result: str
    survived: bool
    revealed: bool
    #: the AI players' characters (only once revealed; empty before)
    ais: tuple[str, ...]
    #: whom they named in the survey (only once revealed; None: no guess)
    guess: str | None
    guess_right: bool | None

    @property
    def replay(self) -> bool:
        """Whether its replay can be asked for now."""
        return self.revealed and self.result != "stopped"


def side_of(role: str | None) -> str | None:
    if role is None:
        return None
    try:
        return get_role(role).team
    except KeyError:
        return None


def player_history(
    engine: Engine, platform: str, server: str, user_id: str, *, limit: int = SHOWN
) -> list[HistoryEntry]:
    """``user_id``'s last ``limit`` ended games on this server, newest first."""
    limit = max(1, min(limit, MOST))
    with Session(engine) as session:
        rows = session.exec(
            select(Game, Seat)
            .join(Seat, col(Seat.game_id) == col(Game.id))
            .join(Server, col(Server.id) == col(Game.server_id))
            .where(
                Server.platform == platform,
                Server.external_id == str(server),
                Seat.user_id == user_id,
                col(Seat.withdrawn).is_(False),
                col(Game.status).in_(ENDED),
            )
            .order_by(col(Game.ended_at).desc(), col(Game.id).desc())
            .limit(limit)
        ).all()
        ids = [g.id for g, _ in rows]
        agents = session.exec(
            select(Seat)
            .where(col(Seat.game_id).in_(ids), col(Seat.is_agent).is_(True))
            .order_by(col(Seat.index))
        ).all()
        answers = session.exec(
            select(SurveyResponse).where(col(SurveyResponse.game_id).in_(ids))
        ).all()
        last_withdrawal = _withdrew(session, platform, server, user_id)
    if last_withdrawal is not None:  # (the cleaning may still be under way)
        rows = [(g, s) for g, s in rows if s.joined_at > last_withdrawal]
    ai_of: dict[str, list[str]] = {}
    for agent in seat_story.the_ai(agents):  # (a seat taken over from a person is not the AI)
        ai_of.setdefault(agent.game_id, []).append(agent.character_name)
    answer_of = {(a.game_id, a.seat_index): a for a in answers}
    out: list[HistoryEntry] = []
    for game, seat in rows:
        side = side_of(seat.role)
        if game.status != "finished" or game.winner is None or side is None:
            result = "stopped"
        else:
            result = "won" if side == game.winner else "lost"
        revealed = game.revealed_at is not None
        answer = answer_of.get((game.id, seat.index))
        # only a guess given before the reveal is one (the survey's rule: bot.players.survey)
        counts = answer is not None and survey.guess_counts(answer, game.revealed_at)
        guess = answer.guessed_name if (answer is not None and counts) else None
        out.append(
            HistoryEntry(
                game_id=game.id,
                ended_at=game.ended_at,
                character=seat.character_name,
                role=seat.role,
                side=side,
                result=result,
                survived=seat.alive,
                revealed=revealed,
                ais=tuple(ai_of.get(game.id, [])) if revealed else (),
                guess=guess,
                guess_right=(guess in ai_of.get(game.id, [])) if guess is not None else None,
            )
        )
    return out


def _withdrew(session: Session, platform: str, server: str, user_id: str) -> datetime | None:
    """When ``user_id`` last withdrew on this server (None: never)."""
    stamps = session.exec(
        select(Consent.withdrawn_at).where(
            Consent.platform == platform,
            Consent.server_external_id == str(server),
            Consent.user_id == user_id,
            col(Consent.withdrawn_at).is_not(None),
        )
    ).all()
    return max((t for t in stamps if t is not None), default=None)


def may_replay(engine: Engine, platform: str, server: str, game_id: str, user_id: str) -> bool:
    """Whether ``user_id`` played in ``game_id`` (a seat of theirs, not withdrawn)."""
    with Session(engine) as session:
        seat = session.exec(
            select(Seat).where(
                Seat.game_id == game_id,
                Seat.user_id == user_id,
                col(Seat.withdrawn).is_(False),
                col(Seat.is_agent).is_(False),
            )
        ).first()
        withdrew = _withdrew(session, platform, server, user_id)
    return seat is not None and (withdrew is None or seat.joined_at > withdrew)


# --- the words, the same on every platform ---------------------------------------------------

RESULT = {"won": "won", "lost": "lost", "stopped": "stopped before the end"}


def entry_line(entry: HistoryEntry, replay: str) -> str:
    """One game: "`abc123` (2026-11-28): Hayden, doctor (bystanders): won, survived. The AI
    was Rowan; you named Rowan (right). Replay: `/mafia replay abc123`"."""
    when = f" ({entry.ended_at:%Y-%m-%d})" if entry.ended_at else ""
    side = f" ({entry.side})" if entry.side else ""
    fate = ", survived" if entry.survived else ", was out"
    parts = [
        f"`{entry.game_id}`{when}: {entry.character}, {entry.role or 'no role'}{side}: "
        f"{RESULT[entry.result]}{fate if entry.result != 'stopped' else ''}."
    ]
    if entry.revealed and entry.ais:
        who = display_list(list(entry.ais))
        parts.append(f"The AI was {who};" if len(entry.ais) == 1 else f"The AIs were {who};")
        if entry.guess is None:
            parts.append("you named no one.")
        else:
            mark = "right" if entry.guess_right else "wrong"
            parts.append(f"you named {entry.guess} ({mark}).")
    elif entry.revealed:
        parts.append("No AI played.")
    else:
        parts.append("Who the AI was is not revealed yet.")
    if entry.replay:
        parts.append(f"Replay: `{replay.format(game=entry.game_id)}`")
    return " ".join(parts)


def history_text(
    entries: Sequence[HistoryEntry], who: str, replay: str, *, whose: str | None = None
) -> str:
    """``/mafia history``: ``who``'s games (newest first; ``whose``: "Your" instead of
    "<who>'s"), each with how to get its replay (``replay``: the command, with ``{game}`` for
    the game's id)."""
    if not entries:
        return (
            f"No finished games for {who} here yet. (A game you played appears once it has "
            "ended; who the AI was, once it has been revealed.)"
        )
    won = sum(e.result == "won" for e in entries)
    played = sum(e.result != "stopped" for e in entries)
    named = [e for e in entries if e.guess is not None]
    right = sum(bool(e.guess_right) for e in named)
    owner = whose or f"{who}'s"
    head = f"**{owner} last {len(entries)} game{'s' if len(entries) != 1 else ''}**"
    summary = f"won {won} of {played}" + (
        f", named the AI in {right} of {len(named)} guesses" if named else ""
    )
    return "\n".join([f"{head} ({summary}):", *(f"- {entry_line(e, replay)}" for e in entries)])
