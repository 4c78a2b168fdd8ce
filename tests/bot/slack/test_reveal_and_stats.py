"""On the fake Slack: ``/mafia help``, the reveal in the game channel once the survey closes
(never privately, never before), ``/mafia stats``, ``leaderboard`` and ``replay``."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from bot.service.live import seating
from bot.store.models import RatedGame
from games.config import GameConfig
from games.engine import assign_roles
from tests.bot.slack.conftest import SlackHarness, seed_where
from tests.bot.slack.test_commands import upload_server  # noqa: F401  (fixture)
from tests.fakes.slack import FakeUser

REVEAL = "The AI was"


def rated(engine: Any, game_id: str) -> bool:
    with Session(engine) as session:
        return session.get(RatedGame, game_id) is not None


def _agent_is_bystander(seed: int) -> bool:
    roles = assign_roles(GameConfig(mafia=1), 6, seed)
    return roles[seating(seed, 6).index(5)] == "bystander"


def seen(harness: SlackHarness, users: list[FakeUser]) -> str:
    """The channel, every booth, every ephemeral answer so far."""
    fake = harness.fake
    texts = [m.text for m in harness.stage()]
    for u in users:
        texts += harness.dm_texts(u)
        texts += [e.text for e in fake.ephemerals(u)]
    texts += [r.text for r in fake.responses]
    return "\n".join(texts)


async def answer_survey(harness: SlackHarness, u: FakeUser, guess: str) -> None:
    fake = harness.fake
    await fake.wait_until(
        lambda: any("survey" in t.lower() for t in harness.dm_texts(u)), what="survey"
    )
    await fake.click(user=u, action_id="mafia_survey_open", channel=fake.dm(u))
    [view] = await fake.wait_until(lambda: fake.open_views(u), what="survey modal")
    values = {"guessed_name": guess, "similarity": "4", "timing": "3", "relevance": "3"}
    if "guessed_name" not in {b.get("block_id") for b in view.view["blocks"]}:
        del values["guessed_name"]  # a form opened after the reveal asks no guess
    await fake.submit_view(user=u, view=view, values=values)
    await fake.wait_until(lambda: any("Thank you" in t for t in harness.dm_texts(u)), what="thanks")


async def won_game(harness: SlackHarness, users: list[FakeUser]) -> tuple[str, str, str]:
    """A game everyone wins on day 1 by voting the mafia out: (game id, agent, mafia)."""
    seed = seed_where(_agent_is_bystander)
    game_id, _ = await harness.running_game_of(
        users, f"day=1 vote=3600 night=3600 night_vote=3600 mafia=1 roles=doctor seed={seed}"
    )
    helped = await harness.slash(users[1], "help")
    assert "*doctor*" in helped  # the roles of the game in this channel
    game = harness.live(game_id)
    assert game.state is not None and harness.service is not None
    agent = next(s for s in game.seats if s.is_agent).name
    mafia = next(s.name for s in game.state.seats if s.is_mafia)
    await harness.fake.wait_until(
        lambda: game.state is not None and game.state.phase.kind.value == "vote",
        what="the vote",
    )
    for s in game.state.seats:
        await harness.service.vote(game_id, s.index, mafia if s.name != mafia else agent)
    await harness.wait_stage(
        lambda: any("win" in m.text for m in harness.stage()), within=15, what="the end"
    )
    return game_id, agent, mafia


async def test_the_reveal_comes_when_the_window_closes(harness: SlackHarness) -> None:
    assert harness.adapter is not None
    harness.adapter.reveals.window = 1.5  # MAFIABOT_REVEAL_AFTER_SECONDS
    users = harness.people(5)
    _, agent, _ = await won_game(harness, users)
    await harness.adapter.drain()
    assert REVEAL not in seen(harness, users)
    expected = f"{REVEAL} {agent}. 0 of 5 of you named them."
    await harness.wait_stage(
        lambda: any(m.text == expected for m in harness.stage()), what="the reveal"
    )
    await answer_survey(harness, users[0], agent)  # late: nothing more is said
    await harness.adapter.drain()
    assert seen(harness, users).count(REVEAL) == 1


async def test_help_reveal_stats_leaderboard_replay(
    harness: SlackHarness,
    upload_server: dict[str, Any],  # noqa: F811
) -> None:
    fake = harness.fake
    users = harness.people(5)
    host = users[0]
    helped = await harness.slash(users[1], "help")
    assert "*mafia*" in helped and "*doctor*" not in helped and "direct messages" in helped
    assert "`/mafia leaderboard [page]`" in helped and "`/mafia history [N]`" in helped

    game_id, agent, mafia = await won_game(harness, users)

    wrong = next(u for u in users if harness.character(game_id, u) != mafia)
    for n, u in enumerate(users):
        guess = mafia if u is wrong else agent
        if guess == harness.character(game_id, u):
            guess = agent
        await answer_survey(harness, u, guess)
        if n < len(users) - 1:
            await harness.adapter.drain()  # type: ignore[union-attr]
            assert REVEAL not in seen(harness, users)  # nobody, not even who answered
            if n == 0:  # a player asks for the replay (it shows the AI): not before the reveal
                early = await harness.slash(u, f"replay {game_id}")
                assert "no replay yet" in early and not upload_server, early
                assert "Who the AI was is not revealed yet" in await harness.slash(u, "history")
        assert any("announced in the game channel" in t for t in harness.dm_texts(u))
    expected = f"{REVEAL} {agent}. 4 of 5 of you named them."
    await harness.wait_stage(
        lambda: any(m.text == expected for m in harness.stage()), what="the reveal"
    )
    await harness.adapter.drain()  # type: ignore[union-attr]
    assert seen(harness, users).count(REVEAL) == 1
    # the game is counted on the board at its reveal, not inside the next query
    assert harness.engine is not None
    await harness.fake.wait_until(
        lambda: rated(harness.engine, game_id), within=10, what="the game counted"
    )

    mine = await harness.slash(users[1], "stats")
    assert f"<@{users[1].id}>" in mine and "Games: 1" in mine
    theirs = await harness.slash(users[1], f"stats <@{wrong.id}>")
    assert "Spotted the AI: 0 of 1 (0%)" in theirs
    board = await harness.slash(users[1], "leaderboard")
    assert all(f"<@{u.id}>" in board for u in users) and agent not in board
    assert "The AI: 1 game" in board and "named by 4 of 5 guesses" in board
    assert "page" in await harness.slash(users[1], "leaderboard next")

    assert "withdrawn" in (await harness.slash(users[2], "consent withdraw")).lower()
    board = await harness.slash(users[1], "leaderboard")
    assert f"<@{users[2].id}>" not in board and f"<@{users[1].id}>" in board

    history = await harness.slash(users[1], "history")
    assert f"`{game_id}`" in history and f"The AI was {agent}" in history
    assert f"you named {agent} (right)" in history and f"/mafia replay {game_id}" in history
    assert "No finished games" in await harness.slash(users[2], "history")  # withdrawn
    assert "how many" in await harness.slash(users[1], "history lots")
    # the replay: for the game's players (not a withdrawn one) and the admins
    assert "played in it" in await harness.slash(users[2], f"replay {game_id}")
    outsider = fake.add_user("zed")  # never played in it, not an admin
    assert "played in it" in await harness.slash(outsider, f"replay {game_id}")
    assert "data" not in upload_server  # no page went to either
    reply = await harness.slash(users[1], f"replay {game_id}")
    assert "is in our direct messages" in reply, reply
    assert upload_server["channel"] == fake.dm(users[1]).id
    assert "no finished game" in await harness.slash(host, "replay nosuch")
    reply = await harness.slash(host, f"replay {game_id}")
    assert "is in our direct messages" in reply, reply
    assert upload_server["channel"] == fake.dm(host).id
    assert upload_server["filename"] == f"mafia-replay-{game_id}.html"
    page = upload_server["data"].decode()
    assert f"<b id='ai'>{agent}</b>" in page
    for u in users:
        assert u.id not in page
